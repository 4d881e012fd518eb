"""A small CPU training loop (the torch bench's workload): 4 x (Linear 512 -> ReLU), Adam, batch 64,
one thread. Prints the loop's own wall time (after 10 warm-up steps) as JSON on its last line."""

import json
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())])
opt = torch.optim.Adam(model.parameters())
x = torch.randn(64, 512)


def step() -> None:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()


for _ in range(10):
    step()
start = time.perf_counter()
for _ in range(steps):
    step()
print(json.dumps({"loop_seconds": time.perf_counter() - start, "steps": steps}))
