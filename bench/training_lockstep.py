"""The training bench's cost in lockstep: a plain run of the bench loop and a run under
``memgauge run`` at the same time, taking turns in blocks of a few steps, so that the machine's
speed, which on the 2-vCPU VM moves +-9% from one second to the next within one process (100-step
blocks of 7.4 to 8.9 ms a step), is the same for both: each measured block is set against the plain
block of the same steps run just before or after it.

    python bench/training_lockstep.py [--repeat 10] [--steps 300] [--block 10] [--modes flops]
    python bench/training_lockstep.py --modes flops,before --before DIR   # DIR: another memgauge tree

Each pair: the two runs of ``workloads/training_loop.py`` (``BENCH_LOCKSTEP``: a Unix socket this
script serves) wait for each other at their loop's start, then run block 1 plain, block 1 measured,
block 2 measured, block 2 plain, ... (the order turned each round), each main thread on CPU 0.
A run's loop time is the sum of its blocks (every step, the first ones and the FLOP-counted step
included, as in ``training_bench.py``); glibc's thresholds pinned for both (``--malloc pinned``
there). Prints per mode the ratios of the measured run's loop to the plain one's (geometric mean,
95% interval over the pairs), and the steady blocks' median ratio (past the first ``FIRST_BLOCKS``).

What lockstep changes: the measured run's wall time is twice its loop's, and memgauge's periodic
work keeps the wall clock. What runs on its own thread or process (the line sampler's samples and
writes, the watcher's reads) meets the loop's blocks at the rate it would alone (half of it lands
in the other run's turns, where it costs neither run: the watcher's CPU on the other core does not
slow the loop, measured: a process busy on CPU 1 0.4 s of every 0.8 s changed CPU 0's steps by
-1.6 to -0.5%). What a step's end starts by the clock (the records' writes, once a second at most)
runs about twice as often per step as alone: lockstep counts that part high, ~1 ms a write.
The first step after each turn runs with caches the other run left cold, in both runs alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from _lockstep import listen, results
from training_bench import MODES, command, interval

FIRST_BLOCKS = 2  # the blocks holding memgauge's first, followed steps and the FLOP-counted one


def pair(mode: str, steps: int, block: int, before: str | None = None) -> tuple[dict, dict]:
    """One plain run and one run in ``mode``, in lockstep: their results (``blocks``: seconds).
    ``before``: mode ``before`` is ``flops`` with the memgauge tree ``before/src``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "turns")
        server = listen(path)
        procs = {}
        for name in ("plain", mode):
            cmd, env = command("flops" if name == "before" else name, steps, tmp, "pinned")
            if name == "before" and before:
                env["PYTHONPATH"] = str(Path(before).resolve() / "src")
            env.update(BENCH_LOCKSTEP=path, BENCH_BLOCK=str(block))
            procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        got = results(server, procs, "plain", "training_lockstep")
    return got["plain"], got[mode]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--block", type=int, default=10, help="steps a turn")
    parser.add_argument("--modes", default="flops", help=f"of {', '.join(MODES[1:])}, before")
    parser.add_argument("--before", help="mode before: flops with the memgauge tree DIR/src")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m in (*MODES, "before") and m != "plain"]
    if "before" in modes and not args.before:
        parser.error("mode before needs --before DIR")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    totals: dict[str, list[float]] = {m: [] for m in modes}
    steady: dict[str, list[float]] = {m: [] for m in modes}
    first: dict[str, list[float]] = {m: [] for m in modes}
    for i in range(args.repeat):
        for mode in modes if i % 2 == 0 else modes[::-1]:
            plain, measured = pair(mode, args.steps, args.block, args.before)
            ours, theirs = measured["blocks"], plain["blocks"]
            totals[mode].append(sum(ours) / sum(theirs))
            ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
            steady[mode].append(statistics.median(ratios[FIRST_BLOCKS:]))
            first[mode].append((sum(ours[:FIRST_BLOCKS]) - sum(theirs[:FIRST_BLOCKS])) * 1e3)
            print(
                f"  {mode:<10} {sum(theirs):.3f} s -> {sum(ours):.3f} s  ratio {totals[mode][-1]:.4f}"
                f"  steady blocks {steady[mode][-1]:.4f}  first blocks {first[mode][-1]:+.1f} ms",
                flush=True,
            )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{args.steps} steps in blocks of {args.block}, {args.repeat} pairs a mode\n"
        f"{'mode':<10} {'loop / plain: mean [95% interval]':>34} {'min-max':>14}"
        f" {'steady blocks: median [min-max]':>32} {'first blocks ms':>16}"
    )
    for mode in modes:
        t, s = sorted(totals[mode]), sorted(steady[mode])
        print(
            f"{mode:<10} {interval(t):>34} {t[0]:.3f}-{t[-1]:.3f}"
            f" {statistics.median(s):17.4f} [{s[0]:.3f}-{s[-1]:.3f}] {statistics.median(first[mode]):16.1f}"
        )


if __name__ == "__main__":
    main()
