"""The training bench's workload: a CPU loop fed by a DataLoader (in-memory TensorDataset), 4 x
(Linear 512 -> ReLU), Adam, batch 64, one thread. Prints, as JSON on its last line, the wall time of
the whole loop (every step, the first ones and memgauge's FLOP-counted step included: that is what
a user waits for) and the minor page faults it took per step (the allocator giving memory back to
the kernel and taking it again: the loop's speed moves with it).

With ``BENCH_LOCKSTEP=PATH`` (bench/training_lockstep.py) the loop runs in blocks of
``BENCH_BLOCK`` steps, taking turns with another run of it through the Unix socket at PATH, its
main thread on CPU 0: the loop's time is then its blocks' time, without the waits between them,
and each block's time is printed too. It exits when both runs are done (memgauge's work at exit
would otherwise run beside the other run's last block)."""

import json
import os
import resource
import socket
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
turns = None
block = int(os.environ.get("BENCH_BLOCK", "10"))
blocks: list[float] = []
if os.environ.get("BENCH_LOCKSTEP"):
    os.sched_setaffinity(0, {0})  # this thread only: memgauge's threads go where the scheduler puts them
    turns = socket.socket(socket.AF_UNIX)
    turns.connect(os.environ["BENCH_LOCKSTEP"])


def take_turn() -> None:
    """The previous block's time counted and handed over; back when it is this run's turn again."""
    if resumed:
        blocks.append(time.perf_counter() - resumed[-1])
    turns.sendall(b"d" if resumed else b"r")  # done, or ready for the first turn
    if turns.recv(1) != b"g":
        sys.exit("lockstep: the bench went away")
    resumed.append(time.perf_counter())


resumed: list[float] = []
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
start = time.perf_counter()
if turns is not None:
    take_turn()  # the loader's start and first batch in the first turn, as they are in the loop's time
for i, (x,) in enumerate(DataLoader(data, batch_size=64)):
    if turns is not None and i and i % block == 0:
        take_turn()
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
loop_seconds = time.perf_counter() - start
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
result = {"loop_seconds": loop_seconds, "steps": steps, "faults_per_step": faults / steps}
if turns is not None:
    blocks.append(time.perf_counter() - resumed[-1])
    turns.sendall(b"e")
    turns.recv(1)  # the other run's last block done too: this one's exit work is not in its time
    result.update(loop_seconds=sum(blocks), blocks=blocks)
print(json.dumps(result))
