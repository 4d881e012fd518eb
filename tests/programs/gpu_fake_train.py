"""Five training steps on the CPU: under the GPU tests' fakes (MEMGAUGE_TEST_FAKE_CUDA in this
process, MEMGAUGE_TEST_FAKE_NVML in the runner) each step's end reads a scripted allocator."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 64)
for _ in range(5):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
