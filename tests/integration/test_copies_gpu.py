"""Copies between the host and a real CUDA device (marked ``gpu``: they skip without one): each step
moves a known batch to the device N times (``.cuda()``, ``.to("cuda", non_blocking=True)`` from
pinned memory, ``copy_`` into a device tensor) and its loss back once (``.item()`` is not a tensor
copy: ``.cpu()`` is), so every step's host->device bytes are N x the batch's and its device->host
bytes the loss's four."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_memgauge

pytestmark = pytest.mark.gpu

BATCH, WIDTH, STEPS = 256, 1024, 6
NBYTES = BATCH * WIDTH * 4

LOOP = f"""
import torch
model = torch.nn.Linear({WIDTH}, 1, device="cuda")  # made there: no copy
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn({BATCH}, {WIDTH}).pin_memory()
on_device = torch.empty({BATCH}, {WIDTH}, device="cuda")
for _ in range({STEPS}):
    a = x.cuda()
    b = x.to("cuda", non_blocking=True)
    on_device.copy_(x)
    opt.zero_grad()
    loss = (model(a) + model(b) + model(on_device)).pow(2).mean()
    loss.backward()
    opt.step()
    loss.detach().cpu()
torch.cuda.synchronize()
"""


@pytest.fixture(autouse=True)
def cuda() -> None:
    torch: Any = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")


def test_known_copies_to_and_from_the_device_per_step(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    r = run_memgauge(["-q", "loop.py"], tmp_path, env={"MEMGAUGE_FLOP_STEP": "off"}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    t = r.profile["training"]
    assert t["steps"] == STEPS
    assert [row["h2d_bytes"] for row in t["rows"]] == [3 * NBYTES] * STEPS
    assert [row["d2h_bytes"] for row in t["rows"]] == [4] * STEPS
    c = t["copies"]
    assert (c["h2d_bytes"], c["d2h_bytes"], c["d2d_bytes"]) == (3 * NBYTES * STEPS, 4 * STEPS, 0)
    assert c["copies"] == 4 * STEPS
