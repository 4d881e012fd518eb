"""The cost of ``memgauge plan``'s analysis (issue 34's target: 100 programs of 1,000 samples,
10,000 trials, under 2 s), and what the grid costs in accuracy.

    python bench/plan_bench.py [--reps 3] [--programs 100] [--samples 1000] [--trials 10000]

Members are built by construction (random levels, one 100 MiB spike each at a random time), so no
program runs. Prints, per grid size, the best CPU and wall time of the whole plan over ``--reps``
(worst case, the two exact offset figures, the distribution) and the p99.9 it found: a coarser
grid can only over-state it. CPU time is the figure to compare on a shared machine.
"""

from __future__ import annotations

import argparse
import random
import time

from memgauge.analysis import PlanInput, aligned_offsets, combined_peak, simulate, worst_case
from memgauge.model import PlanMember

MIB = 1 << 20


def members(n: int, samples: int, seed: int = 5) -> list[PlanInput]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = tuple(k * 10.0 / samples for k in range(samples))
        spike = rng.randrange(samples - 30)
        values = tuple(
            (rng.randint(40, 60) + (100 if spike <= k < spike + 30 else 0)) * MIB for k in range(samples)
        )
        out.append(PlanInput(PlanMember(f"m{i}", "m", ["m"], max(values), 0, t[spike], 10.0), t, values))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10_000)
    args = parser.parse_args()
    inputs = members(args.programs, args.samples)
    machine = 8 << 30
    print("| grid bins | CPU s (best) | wall s (best) | p99.9 | worst case |")
    print("|---|---|---|---|---|")
    for bins in (256, 512, 1024, 2048):
        cpu = wall = float("inf")
        p999 = 0
        for _ in range(args.reps):
            c, w = time.process_time(), time.perf_counter()
            worst = worst_case(inputs)
            combined_peak(inputs, [0.0] * len(inputs))
            combined_peak(inputs, aligned_offsets(inputs))
            d = simulate(inputs, machine, trials=args.trials, bins=bins)
            cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
            p999 = d.p999_bytes
        print(f"| {bins} | {cpu:.2f} | {wall:.2f} | {p999 / MIB:,.0f} MiB | {worst / MIB:,.0f} MiB |")


if __name__ == "__main__":
    main()
