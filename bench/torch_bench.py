"""The torch tracker's cost on a CPU training loop: the loop's own wall time under
``memgauge run --torch=off`` (the baseline: everything else memgauge does is the same),
``--torch=summary`` and ``--torch=full``, and under plain ``python``.

    python bench/torch_bench.py [--repeat 5] [--steps 300]

Runs are interleaved (plain, off, summary, full, plain, ...) so that a busy machine slows each
mode alike; prints the median loop time of each and the ratios to ``--torch=off`` and to plain.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOAD = Path(__file__).parent / "workloads" / "torch_train.py"
MODES = ("plain", "off", "summary", "full")


def loop_seconds(mode: str, steps: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "plain":
            cmd = [sys.executable, str(WORKLOAD), str(steps)]
        else:
            profile = str(Path(tmp) / "p.json")
            cmd = [sys.executable, "-m", "memgauge", "run", "-q", "--json", profile, f"--torch={mode}"]
            cmd += [str(WORKLOAD), str(steps)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
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
    print(f"{'mode':<8} {'median s':>9} {'min-max':>15} {'/ off':>7} {'/ plain':>8}")
    for mode in MODES:
        lo, hi = min(times[mode]), max(times[mode])
        print(
            f"{mode:<8} {median[mode]:9.3f} {lo:7.3f}-{hi:<7.3f} {median[mode] / median['off']:7.3f}"
            f" {median[mode] / median['plain']:8.3f}"
        )


if __name__ == "__main__":
    main()
