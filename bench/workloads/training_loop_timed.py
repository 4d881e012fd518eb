"""The training bench's loop (workloads/training_loop.py: the same model, data, batch and thread),
timed step by step, and, under ``memgauge run``, with the time spent in each of memgauge's per-step
hooks: the optimizer's pre and post step hooks (the torch tracker's step end and the throughput
row), and the backward and DataLoader wrappers without the call they wrap. Also which steps the
torch tracker followed tensor by tensor and which step's FLOPs were counted. Prints JSON on its
last line. Used by bench/training_account.py; it reaches into memgauge's internals to find its
hooks, which a program never does."""

import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
# "sampler": the line sampler's samples are skipped every other block of 4 steps (from step 20 on),
# so that the steps beside each other tell what its samples cost the loop
toggle_sampler = sys.argv[2:3] == ["sampler"]
# one thread as in the bench loop; training_account.py --threads N for a loop using more cores
torch.set_num_threads(int(os.environ.get("BENCH_TORCH_THREADS", "1")))
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())])
opt = torch.optim.Adam(model.parameters())
data = TensorDataset(torch.randn(64 * steps, 512))
ns = time.perf_counter_ns
spent: dict[str, list[int]] = {}


def timed(name, fn):
    calls = spent.setdefault(name, [])

    def call(*args, **kwargs):
        t0 = ns()
        try:
            return fn(*args, **kwargs)
        finally:
            calls.append(ns() - t0)

    return call


tracker = None
if "memgauge" in sys.modules:
    from memgauge.sections.torch._capture import active_torch_tracker

    tracker = active_torch_tracker()
if tracker is not None:
    import torch.optim.optimizer as optimizer_hooks
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    for hooks, name in (
        (optimizer_hooks._global_optimizer_pre_hooks, "optimizer pre hook"),
        (optimizer_hooks._global_optimizer_post_hooks, "optimizer post hook"),
    ):
        for key in list(hooks):
            hooks[key] = timed(name, hooks[key])
    hooks = tracker.hooks

    def unwrapped(wrapper, name):
        for cell in wrapper.__closure__:  # the wrapped call, timed apart to be taken off
            if cell.cell_contents is wrapper.__wrapped__:
                cell.cell_contents = timed(name + " (wrapped)", wrapper.__wrapped__)
        return timed(name, wrapper)

    # the backward wrapper runs in followed steps only (torch's own between them: 0 there)
    hooks._wrapped_backward = unwrapped(hooks._wrapped_backward, "backward wrapper")
    if torch.autograd.backward is not hooks._backward:
        torch.autograd.backward = hooks._wrapped_backward
    _BaseDataLoaderIter.__next__ = unwrapped(_BaseDataLoaderIter.__next__, "DataLoader wrapper")

sampler = running = None
if "memgauge.capture._sampling" in sys.modules:
    from memgauge.capture._sampling import active_sampler

    running = active_sampler()
samples_on = 0
if toggle_sampler:
    from memgauge.capture._sampler import INTERVAL as FIRST_INTERVAL

    sampler = running
    sample = sampler.sample

    def counted(lateness: float = 0.0) -> None:
        global samples_on
        samples_on += 1
        sample(lateness)


def sampler_cpu() -> float:
    """The line sampler thread's CPU seconds so far (0 without one)."""
    clock = getattr(running, "own_clock", None)
    return time.clock_gettime(clock) if clock is not None and clock != -1 else 0.0


times = []
sampler_before = sampler_cpu()
# on the system-wide monotonic clock: bench/training_account.py reads memgauge's own CPU time over it
loop_start = time.monotonic()
start = last = time.perf_counter()
for i, (x,) in enumerate(DataLoader(data, batch_size=64)):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
    now = time.perf_counter()
    times.append(now - last)
    last = now
    for name in ("backward wrapper", "backward wrapper (wrapped)") if tracker is not None else ():
        calls = spent.setdefault(name, [])
        calls.extend([0] * (len(times) - len(calls)))
    if sampler is not None and i >= 19 and (i - 19) % 4 == 0:
        # at the first interval (10 ms), not the steady one: a sample or so in every step of a
        # block, which the account scales to the steady interval by the samples counted
        sampler.interval = FIRST_INTERVAL
        sampler.sample = counted if (i - 19) % 8 == 4 else (lambda lateness=0.0: None)
loop_end = time.monotonic()
if sampler is not None:
    sampler.sample = sample
out = {
    "loop_seconds": last - start,
    "loop_start": loop_start,
    "loop_end": loop_end,
    "sampler_cpu": sampler_cpu() - sampler_before,
    "samples_on": samples_on,
    "steady_interval": getattr(sys.modules.get("memgauge.capture._sampling"), "STEADY_INTERVAL", None),
    "times": times,
    "followed": [],
    "flop_step": None,
    "hooks": {},
}
if tracker is not None:
    from memgauge.sections.training._capture import current_loop

    loop = current_loop()
    out["followed"] = [s["index"] for s in tracker.steps]
    out["flop_step"] = loop.flops["step"] if loop is not None and loop.flops else None
    for name in ("optimizer pre hook", "optimizer post hook", "backward wrapper", "DataLoader wrapper"):
        inner = spent.get(name + " (wrapped)")
        own = [a - b for a, b in zip(spent[name], inner, strict=True)] if inner else spent[name]
        out["hooks"][name] = own[:steps]  # the DataLoader's last call (its end) left out
print(json.dumps(out))
