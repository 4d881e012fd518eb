"""The training bench's workload: a CPU loop fed by a DataLoader (in-memory TensorDataset), 4 x
(Linear 512 -> ReLU), Adam, batch 64, one thread. Prints, as JSON on its last line, the wall time of
the whole loop (every step, the first ones and memgauge's FLOP-counted step included: that is what
a user waits for) and the minor page faults it took per step (the allocator giving memory back to
the kernel and taking it again: the loop's speed moves with it)."""

import json
import resource
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())])
opt = torch.optim.Adam(model.parameters())
data = TensorDataset(torch.randn(64 * steps, 512))
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
start = time.perf_counter()
for (x,) in DataLoader(data, batch_size=64):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
loop_seconds = time.perf_counter() - start
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
print(json.dumps({"loop_seconds": loop_seconds, "steps": steps, "faults_per_step": faults / steps}))
