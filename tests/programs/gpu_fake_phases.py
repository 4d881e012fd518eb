"""Two phases and an explicit step: under MEMGAUGE_TEST_FAKE_CUDA each phase boundary and the step's
end read (and reset) a scripted allocator (tests/integration/test_gpu_phases_run.py)."""

import torch

import memgauge

with memgauge.phase("load"):
    data = torch.ones(1000)
with memgauge.phase("fit"):
    memgauge.step()
    total = float(data.sum())
