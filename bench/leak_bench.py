"""Precision and recall of the leak flag over the ground-truth programs ``tests/programs/leak_*.py``
(and ``lines_leak.py``), each run several times under ``memgauge run``, idle and with the machine
loaded (one CPU-bound process per core beside each run).

    python bench/leak_bench.py [--repeat 3] [--no-load] [--only leak_short.py ...]

A run of a leaking program counts as found when a suspect is in the program's file; found on the
right line when one is on the line marked ``# LINE: leak`` (the line that allocates what is kept).
A suspect in the file of a program that does not leak is a false alarm. Prints one row per program
and the totals: precision = found / (found + false alarms), recall = found / leaking runs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent.parent / "tests" / "programs"
# name -> leaks?
TRUTH = {
    "leak_loop.py": True,
    "lines_leak.py": True,
    "leak_short_loop.py": True,
    "leak_cache.py": False,
    "leak_child_array.py": False,
    "leak_short.py": False,
    "leak_import.py": False,
}


def marked(path: Path, tag: str) -> int | None:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if f"# LINE: {tag}" in text:
            return number
    return None


def one_run(path: Path) -> list[int]:
    """The suspects' lines in the program's own file."""
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "p.json"
        env = {**os.environ, "TRUTH_OUT": str(Path(tmp) / "truth.json")}
        cmd = [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(profile), str(path)]
        subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=tmp)
        data = json.loads(profile.read_text())
    return [s["line"] for s in data["leaks"] if s["file"] == str(path)]


def _burn() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-load", action="store_true", help="idle runs only")
    parser.add_argument("--only", nargs="+", choices=sorted(TRUTH), help="these programs only")
    args = parser.parse_args()
    programs = {name: TRUTH[name] for name in args.only or TRUTH}
    found = right = leaking = alarms = 0
    for loaded in (False,) if args.no_load else (False, True):
        burners = (
            [mp.Process(target=_burn, daemon=True) for _ in range(os.cpu_count() or 1)] if loaded else []
        )
        for b in burners:
            b.start()
        try:
            for name, leaks in programs.items():
                path = PROGRAMS / name
                line = marked(path, "leak")
                flags = []
                for _ in range(args.repeat):
                    lines = one_run(path)
                    flags.append(lines)
                    if leaks:
                        leaking += 1
                        found += bool(lines)
                        right += line in lines
                    else:
                        alarms += bool(lines)
                state = "loaded" if loaded else "idle"
                print(f"{state:6}  {name:22}  leaks={leaks!s:5}  flagged lines per run: {flags}")
        finally:
            for b in burners:
                b.kill()
                b.join()
    precision = found / (found + alarms) if found + alarms else float("nan")
    recall = found / leaking if leaking else float("nan")
    print(
        f"leaking runs {leaking}, found {found} (on the allocating line {right}), false alarms {alarms}: "
        f"precision {precision:.2f}, recall {recall:.2f}, right line {right}/{leaking}"
    )


if __name__ == "__main__":
    main()
