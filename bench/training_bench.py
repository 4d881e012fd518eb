"""The cost of the training-throughput figures on a CPU loop fed by a DataLoader: the loop's own
wall time (every step included) under plain ``python``, under ``memgauge run`` with FLOP counting
off (``MEMGAUGE_FLOP_STEP=off``: step times, data waits and samples only) and with it on one step
(the default), and under ``memgauge run --torch=off`` (no torch hooks at all: memgauge's other
costs, for reference).

    python bench/training_bench.py [--repeat 5] [--steps 300]

Runs are interleaved so that a busy machine slows each mode alike; prints the median loop time of
each and its ratio to plain. The CPU's peak benchmark (at exit, once per machine: cached) is
outside the loop's time and not counted here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOAD = Path(__file__).parent / "workloads" / "training_loop.py"
MODES = ("plain", "torch-off", "no-flops", "flops")


def loop_seconds(mode: str, steps: int) -> float:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "plain":
            cmd = [sys.executable, str(WORKLOAD), str(steps)]
        else:
            cmd = [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(Path(tmp) / "p.json")]
            if mode == "torch-off":
                cmd.append("--torch=off")
            if mode == "no-flops":
                env["MEMGAUGE_FLOP_STEP"] = "off"
            cmd += [str(WORKLOAD), str(steps)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return float(json.loads(out.strip().splitlines()[-1])["loop_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(args.repeat):
        for mode in MODES:
            times[mode].append(loop_seconds(mode, args.steps))
    median = {m: statistics.median(v) for m, v in times.items()}
    least = {m: min(v) for m, v in times.items()}
    # the fastest run of each mode is the one a busy machine disturbed least
    print(f"{'mode':<10} {'median s':>9} {'min-max':>15} {'/ plain':>8} {'min / plain min':>16}")
    for mode in MODES:
        lo, hi = least[mode], max(times[mode])
        print(
            f"{mode:<10} {median[mode]:9.3f} {lo:7.3f}-{hi:<7.3f} {median[mode] / median['plain']:8.3f}"
            f" {lo / least['plain']:16.3f}"
        )
    print(micro(args.steps))


def micro(steps: int, calls: int = 200_000) -> str:
    """The capture's own cost, timed in this process: one step end plus one batch fetch of the
    throughput loop (no torch), and the extra time of the FLOP-counted step of a real run (its
    time over the steady median), both as a share of the workload's plain loop."""
    import time

    from memgauge.capture._training import Loop

    loop = Loop()
    t0 = time.perf_counter()
    for _ in range(calls):
        loop.fetched(0.0, 0.0, 64)
        loop.end_step("optimizer")
        if len(loop.rows) > 10_000:
            loop.rows.clear()
    per_step = (time.perf_counter() - t0) / calls
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "p.json"
        cmd = [
            sys.executable,
            "-m",
            "memgauge",
            "run",
            "-q",
            "--json",
            str(profile),
            str(WORKLOAD),
            str(steps),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        loop_s = float(json.loads(out.strip().splitlines()[-1])["loop_seconds"])
        t = json.loads(profile.read_text())["training"]
    counted = next(r["seconds"] for r in t["rows"] if r["flops_counted"])
    extra = counted - t["step_seconds"]["median"]
    return (
        f"per step (end + one fetch): {per_step * 1e6:.2f} us = {per_step * steps / loop_s:.3%} of the loop; "
        f"FLOP-counted step: {counted * 1e3:.1f} ms"
        f" against a median {t['step_seconds']['median'] * 1e3:.1f} ms, "
        f"+{extra * 1e3:.1f} ms = {extra / loop_s:.2%} of the {loop_s:.2f} s loop"
    )


if __name__ == "__main__":
    main()
