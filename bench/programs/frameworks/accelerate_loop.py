"""An accelerate loop written by hand: ``Accelerator.prepare``, ``accelerator.backward``."""

import os

import torch
from _clock import Ends
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
clock = Ends()
accelerator = Accelerator(cpu=True)
steps = int(os.environ.get("STEPS", "400"))
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 8))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = TensorDataset(torch.randn(steps * 64, 512), torch.randint(0, 8, (steps * 64,)))
model, opt, loader = accelerator.prepare(model, opt, DataLoader(data, batch_size=64))
for xb, yb in loader:
    opt.zero_grad()
    accelerator.backward(torch.nn.functional.cross_entropy(model(xb), yb))
    opt.step()
    clock.tick()
clock.report()
