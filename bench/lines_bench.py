"""The line samplers side by side: each workload of ``bench/workloads/`` under ``memgauge run`` with
the lines read from outside (py-spy, the default) and with the in-process sampler
(``MEMGAUGE_LINE_SAMPLER=inside``), in pairs whose order alternates, so that the machine's drift
lands on both. Per workload: the median wall time of ``memgauge run`` and the CPU time of the
measured program's processes (from the profile), the program's own wall time (its main process's
start to end), and the CPU time of everything (the program, memgauge, py-spy:
this process's children's rusage), each as the median per-pair ratio outside / inside.

    .venv/bin/python bench/lines_bench.py --reps 3 --workloads noop,calls,allocs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOADS = Path(__file__).resolve().parent / "workloads"
MODES = ("outside", "inside")


def run_once(script: Path, mode: str, tmp: Path) -> dict[str, float | str]:
    out = tmp / "profile.json"
    env = {**os.environ, "MEMGAUGE_LINE_SAMPLER": "auto" if mode == "outside" else "inside"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "--json", str(out), str(script)],
        env=env,
        check=True,
        capture_output=True,
        cwd=tmp,
    )
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    profile = json.loads(out.read_text())
    program_cpu = sum(
        p.get("cpu_user_seconds", 0) + p.get("cpu_system_seconds", 0) for p in profile["processes"]
    )
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sampler = profile["environment"]["measurement"].get("line_sampler", "")
    main = profile["processes"][0]
    program_wall = main["end_seconds"] - main["start_seconds"]
    return {
        "wall": wall,
        "program_wall": program_wall,
        "program_cpu": program_cpu,
        "total_cpu": total,
        "sampler": sampler,
    }


def ratio(runs: dict[str, list[dict[str, float | str]]], key: str) -> float:
    """The median per-pair ratio outside / inside."""
    pairs = zip(runs["outside"], runs["inside"], strict=True)
    return statistics.median(float(o[key]) / max(float(i[key]), 1e-9) for o, i in pairs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--workloads", default="noop,known_peak,allocs,calls,cubes,pyobjects,sleep_compute,training_loop"
    )
    args = ap.parse_args()
    print("| workload | program wall in (s) | program wall out/in | run wall | program CPU | all CPU |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in args.workloads.split(","):
            script = WORKLOADS / f"{name}.py"
            runs: dict[str, list[dict[str, float | str]]] = {m: [] for m in MODES}
            for rep in range(args.reps):
                for mode in MODES if rep % 2 == 0 else MODES[::-1]:
                    runs[mode].append(run_once(script, mode, tmp))
            assert all(str(r["sampler"]).startswith("py-spy") for r in runs["outside"]), runs["outside"]

            inside_wall = statistics.median(float(r["program_wall"]) for r in runs["inside"])
            cells = " | ".join(
                f"{ratio(runs, key):.3f}" for key in ("program_wall", "wall", "program_cpu", "total_cpu")
            )
            print(f"| {name} | {inside_wall:.2f} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
