"""The line samplers side by side: each workload of ``bench/workloads/`` under ``memgauge run`` with
the lines read from outside (py-spy, ``MEMGAUGE_LINE_SAMPLER=auto``) and with the in-process
sampler (``MEMGAUGE_LINE_SAMPLER=inside``, the default), in pairs whose order alternates, so that
the machine's drift lands on both. Per workload: the median wall time of ``memgauge run`` and the
CPU time of the measured program's processes (from the profile), the program's own wall time (its
main process's start to end), and the CPU time of everything (the program, memgauge, py-spy: this
process's children's rusage), each as the median per-pair ratio outside / inside.

On a 2-vCPU VM the machine's own speed moves 10-25% over seconds (one workload's plain runs took
3.6 to 5.5 s of CPU), more than the difference sought. ``--together`` runs each pair at the same
time instead, both programs pinned to CPU 0 (``-- taskset -c 0 python SCRIPT``), memgauge and
py-spy free to use CPU 1: the two programs take turns on one CPU every few milliseconds, so a
drift lands on both alike. It compares the programs' own CPU time (the in-process sampler's thread
is part of it; py-spy and the runner's poller run beside it) and memgauge's own CPU per run (the
profile's ``overhead``), not wall times, which sharing a CPU makes meaningless.

    .venv/bin/python bench/lines_bench.py --reps 3 --workloads noop,calls,allocs
    .venv/bin/python bench/lines_bench.py --together --reps 5
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
from typing import Any

WORKLOADS = Path(__file__).resolve().parent / "workloads"
MODES = ("outside", "inside")


def command(script: Path, mode: str, out: Path, *, pinned: bool) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "MEMGAUGE_LINE_SAMPLER": "auto" if mode == "outside" else "inside"}
    program = ["--", "taskset", "-c", "0", sys.executable, str(script)] if pinned else [str(script)]
    return [sys.executable, "-m", "memgauge", "run", "--json", str(out), *program], env


def figures(profile: dict[str, Any]) -> dict[str, float | str]:
    """The programs' CPU seconds, memgauge's own, and which sampler ran, from one profile."""
    program_cpu = sum(
        p.get("cpu_user_seconds", 0) + p.get("cpu_system_seconds", 0) for p in profile["processes"]
    )
    own = sum(part["cpu_seconds"] for part in (profile.get("overhead") or {}).get("cpu", []))
    sampler = profile["environment"]["measurement"].get("line_sampler", "")
    return {"program_cpu": program_cpu, "own_cpu": own, "sampler": sampler}


def run_together(script: Path, tmp: Path) -> dict[str, dict[str, float | str]]:
    """Both modes at once, their programs sharing CPU 0."""
    procs = {}
    for mode in MODES:
        argv, env = command(script, mode, tmp / f"{mode}.json", pinned=True)
        procs[mode] = subprocess.Popen(
            argv, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
    for mode, proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{mode} run of {script.name} failed: {err[-2000:]}")
    return {mode: figures(json.loads((tmp / f"{mode}.json").read_text())) for mode in MODES}


def run_once(script: Path, mode: str, tmp: Path) -> dict[str, float | str]:
    out = tmp / "profile.json"
    argv, env = command(script, mode, out, pinned=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True, cwd=tmp)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    profile = json.loads(out.read_text())
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    main = profile["processes"][0]
    program_wall = main["end_seconds"] - main["start_seconds"]
    return {"wall": wall, "program_wall": program_wall, "total_cpu": total, **figures(profile)}


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
    ap.add_argument("--together", action="store_true", help="each pair at once, programs on CPU 0")
    args = ap.parse_args()
    if args.together:
        return together(args.workloads.split(","), args.reps)
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


def together(names: list[str], reps: int) -> int:
    print("| workload | program CPU in (s) | program CPU out/in | memgauge CPU in | memgauge CPU out |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in names:
            script = WORKLOADS / f"{name}.py"
            runs: dict[str, list[dict[str, float | str]]] = {m: [] for m in MODES}
            for _ in range(reps):
                for mode, got in run_together(script, tmp).items():
                    runs[mode].append(got)
            assert all(str(r["sampler"]).startswith("py-spy") for r in runs["outside"]), runs["outside"]
            inside = statistics.median(float(r["program_cpu"]) for r in runs["inside"])
            own = {m: statistics.median(float(r["own_cpu"]) for r in runs[m]) for m in MODES}
            cell = "- (under 0.1 s: clock ticks)"
            if inside >= 0.1:
                spread = sorted(
                    float(o["program_cpu"]) / float(i["program_cpu"])
                    for o, i in zip(runs["outside"], runs["inside"], strict=True)
                )
                cell = f"{ratio(runs, 'program_cpu'):.3f} ({spread[0]:.3f}-{spread[-1]:.3f})"
            mine = f"{own['inside']:.2f} | {own['outside']:.2f}"
            print(f"| {name} | {inside:.2f} | {cell} | {mine} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
