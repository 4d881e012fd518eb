"""A CPU training loop of a torch MLP whose batch size is a module-level constant, for
``memgauge fit`` by hand (docs/benchmarks.md): a few steps of SGD on random data."""

import torch

BATCH_SIZE = 256
STEPS = 2

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024),
    torch.nn.ReLU(),
    torch.nn.Linear(1024, 1024),
    torch.nn.ReLU(),
    torch.nn.Linear(1024, 10),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(STEPS):
    x = torch.randn(BATCH_SIZE, 512)
    y = torch.randint(0, 10, (BATCH_SIZE,))
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
