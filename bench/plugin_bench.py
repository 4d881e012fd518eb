"""What the pytest plugin costs: a session of many trivial tests, without memgauge's plugin, with it
and no budget, and with a budget on every test.

    .venv/bin/python bench/plugin_bench.py [--tests 500] [--reps 5]

Each session is a fresh `python -m pytest -q` process, timed from outside; medians of the
repetitions, in a seeded random order per repetition. The per-test cost is
(budgeted - no budget) / tests.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = {
    "plugin off (-p no:memgauge)": ["-p", "no:memgauge"],
    "plugin on, no budget": [],
    "plugin on, rss=1GiB on every test": ["--memgauge-budget", "rss=1GiB"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="memgauge-plugin-bench-") as tmp:
        suite = Path(tmp) / "test_many.py"
        suite.write_text(
            "import pytest\n\n\n"
            f"@pytest.mark.parametrize('i', range({args.tests}))\n"
            "def test_it(i):\n    assert i >= 0\n"
        )
        for _ in range(args.reps):
            order = list(MODES)
            rng.shuffle(order)
            for mode in order:
                argv = [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    *MODES[mode],
                    str(suite),
                ]
                start = time.perf_counter()
                subprocess.run(argv, cwd=tmp, check=True, capture_output=True)
                times[mode].append(time.perf_counter() - start)
    medians = {mode: statistics.median(v) for mode, v in times.items()}
    print(f"{args.tests} trivial tests, {args.reps} repetitions, medians\n")
    print("| session | wall | range |")
    print("|---|---:|---:|")
    for mode, v in times.items():
        print(f"| {mode} | {medians[mode]:.2f} s | {min(v):.2f}-{max(v):.2f} s |")
    budgeted = list(MODES)[2]
    per_test = (medians[budgeted] - medians["plugin on, no budget"]) / args.tests
    print(f"\nper budgeted test: {per_test * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
