"""A ``torch.compile`` training loop (inductor, the default backend): an MLP, AdamW."""

import os

import torch
from _clock import Ends

torch.manual_seed(0)
torch.set_num_threads(1)
clock = Ends()
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 8))
compiled = torch.compile(model, backend=os.environ.get("BACKEND", "inductor"))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 512), torch.randint(0, 8, (64,))
for _ in range(int(os.environ.get("STEPS", "500"))):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(compiled(x), y).backward()
    opt.step()
    clock.tick()
clock.report()
