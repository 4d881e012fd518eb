"""Each C-call line's share of its own bytes: ``tests/programs/lines_c_calls.py`` (list repeat and
concat, ``np.ones``, pickle dumps and loads, ``b"x" * n``, a pandas CSV read, a joblib load; each
one C call holding the GIL on its own line, sleeps between) in the main thread, a worker thread and
a spawned child, under ``memgauge run --line-sampler auto`` (py-spy from outside), idle and with both cores
kept busy by other processes. A line's share is the resident growth charged to it over the bytes
its objects hold (the program writes them). Prints, per load and mode, each line's smallest and
median share over the runs, and the sampler that ran.

    .venv/bin/python bench/lines_share.py --reps 3
    .venv/bin/python bench/lines_share.py --reps 3 --python .venv-313/bin/python --loads idle,busy
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "programs" / "lines_c_calls.py"
MODES = ("main", "thread", "spawn")
HOG = "while True:\n    pass\n"


def make_data(python: str, directory: Path) -> None:
    """The CSV and the joblib file the program reads, as the integration test makes them."""
    code = (
        "import sys, numpy as np, pandas as pd, joblib\n"
        "d = sys.argv[1]\n"
        "pd.DataFrame(np.random.default_rng(0).random((500_000, 6))).to_csv(d + '/data.csv', index=False)\n"
        "joblib.dump(np.ones(36_000_000), d + '/array.joblib')\n"
    )
    subprocess.run([python, "-c", code, str(directory)], check=True)


@contextlib.contextmanager
def load(kind: str, python: str) -> Iterator[None]:
    """``busy``: one spinning process per core beside the run."""
    hogs = []
    if kind == "busy":
        hogs = [subprocess.Popen([python, "-c", HOG]) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def marker_lines() -> dict[str, int]:
    """The program's ``# LINE: tag`` markers: tag -> line number."""
    out = {}
    for number, text in enumerate(PROGRAM.read_text().splitlines(), start=1):
        if "# LINE: " in text:
            out[text.rsplit("# LINE: ", 1)[1].strip()] = number
    return out


def shares(python: str, mode: str, directory: Path) -> tuple[dict[str, float], str]:
    out = directory / "profile.json"
    args = [str(PROGRAM), mode, str(directory)]
    subprocess.run(
        [python, "-m", "memgauge", "run", "-q", "--json", str(out), "--line-sampler", "auto", *args],
        check=True,
        cwd=directory,
    )
    profile: dict[str, Any] = json.loads(out.read_text())
    truth: dict[str, int] = json.loads((directory / f"truth.{mode}.json").read_text())
    lines = marker_lines()
    got = {}
    for tag, size in truth.items():
        if size <= 0:
            continue  # calloc'd zero pages: nothing resident to charge
        growth = sum(
            s["resident_growth_bytes"]
            for s in profile["lines"]
            if s["file"] == str(PROGRAM) and s["line"] == lines[tag]
        )
        got[tag] = growth / size
    return got, str(profile["environment"]["measurement"].get("line_sampler", ""))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the interpreter memgauge runs under")
    ap.add_argument("--loads", default="idle,busy")
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args()
    # the runs' working directory is a temporary one: a relative path would not be found from it
    args.python = os.path.abspath(args.python) if os.sep in args.python else args.python
    with tempfile.TemporaryDirectory() as d:
        directory = Path(d)
        make_data(args.python, directory)
        print("| load | mode | sampler | line: smallest share (median) |")
        print("|---|---|---|---|")
        for kind in args.loads.split(","):
            for mode in args.modes.split(","):
                runs: list[dict[str, float]] = []
                samplers = set()
                with load(kind, args.python):
                    for _ in range(args.reps):
                        got, sampler = shares(args.python, mode, directory)
                        runs.append(got)
                        samplers.add(sampler)
                cells = ", ".join(
                    f"{tag} {min(r[tag] for r in runs):.2f} ({statistics.median(r[tag] for r in runs):.2f})"
                    for tag in runs[0]
                )
                print(f"| {kind} | {mode} | {'; '.join(sorted(samplers))} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
