"""What ``memgauge run`` costs around an empty program: plain ``python noop.py`` and
``memgauge run -q --json`` on it (with the default line sampler, with the lines read from outside,
and without ``-q``: the terminal report rendered, to a stderr that is no terminal),
interleaved, each repetition running every variant once, so slow drift of the machine (other
load, page cache) spreads over all of them. Wall time per run (median,
min), CPU seconds of the whole process tree (mean, min, from ``RUSAGE_CHILDREN``), and the
profile's own record of memgauge's steps and CPU (``Profile.overhead``, medians).

    .venv/bin/python bench/startup_bench.py                       # 10 repetitions
    .venv/bin/python bench/startup_bench.py --reps 20 --baseline /tmp/main/src

``--baseline SRC``: also time the memgauge whose package lies under ``SRC`` (a checkout's ``src``,
compiled: ``python -m compileall -f SRC``), for a paired comparison on the same machine state.
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

import memgauge


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # the report (where a variant shows it) rendered as for a terminal-less stderr, not shown
    report = subprocess.DEVNULL if "-q" not in argv else None
    subprocess.run(argv, env=env, check=True, stderr=report)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _compiled(src: str) -> bool:
    """Whether every module of the memgauge under ``src`` has bytecode the import system takes: a
    ``.pyc`` whose recorded source mtime and size match (``compileall`` compares the mtime alone,
    so a file changed within the second it was compiled in keeps a ``.pyc`` that imports reject)."""
    import importlib.util
    import struct

    for top, _, files in os.walk(os.path.join(src, "memgauge")):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(top, name)
            try:
                with open(importlib.util.cache_from_source(path), "rb") as f:
                    _, flags, mtime, size = struct.unpack("<4sIII", f.read(16))
            except (OSError, struct.error):
                return False
            st = os.stat(path)
            if flags == 0 and (mtime != int(st.st_mtime) & 0xFFFFFFFF or size != st.st_size & 0xFFFFFFFF):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=10, help="repetitions (default 10)")
    p.add_argument("--baseline", metavar="SRC", help="another memgauge's src directory to time beside")
    args = p.parse_args(argv)
    for src in [os.path.dirname(os.path.dirname(memgauge.__file__ or "")), args.baseline]:
        if src and not _compiled(src):
            # an install has its bytecode; a tree without it (PYTHONDONTWRITEBYTECODE, as some
            # shells set) compiles every module on every run: 0.15 s more, not memgauge's cost
            print(f"warning: {src} lacks up-to-date bytecode: run python -m compileall -q -f {src}")
    work = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    noop = work / "noop.py"
    noop.write_text("pass\n")
    profile = work / "p.json"
    base_env = dict(os.environ)
    # as a user types it: the console script (`python -m memgauge` adds runpy, ~4 ms), where the
    # interpreter's environment has one
    script = Path(sys.executable).with_name("memgauge")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "memgauge"]
    variants: dict[str, tuple[list[str], dict[str, str]]] = {
        "plain": ([sys.executable, str(noop)], base_env),
        "memgauge": ([*command, "run", "-q", "--json", str(profile), str(noop)], base_env),
    }
    # the lines read from outside (py-spy, where ptrace allows) beside the default in-process sampler
    variants["memgauge, lines outside"] = (
        [*command, "run", "-q", "--json", str(work / "o.json"), str(noop)],
        {**base_env, "MEMGAUGE_LINE_SAMPLER": "auto"},
    )
    # as most runs are made: the terminal report shown (rendered to a stderr that is no terminal)
    variants["memgauge, report shown"] = (
        [*command, "run", "--json", str(work / "r.json"), str(noop)],
        base_env,
    )
    if args.baseline:
        # the console script imports memgauge from PYTHONPATH first: the baseline's
        variants["baseline"] = (
            [*command, "run", "-q", "--json", str(work / "b.json"), str(noop)],
            {**base_env, "PYTHONPATH": args.baseline},
        )
        variants["baseline, report shown"] = (
            [*command, "run", "--json", str(work / "br.json"), str(noop)],
            {**base_env, "PYTHONPATH": args.baseline},
        )
    walls: dict[str, list[float]] = {k: [] for k in variants}
    cpus: dict[str, list[float]] = {k: [] for k in variants}
    # each tree's own record of its steps and CPU, read from the profile it wrote
    recorded = {"memgauge": profile, "baseline": work / "b.json"}
    steps: dict[str, dict[str, list[float]]] = {name: {} for name in recorded}
    own: dict[str, dict[str, list[float]]] = {name: {} for name in recorded}
    for _ in range(args.reps):
        for name, (command, env) in variants.items():
            wall, cpu = _timed(command, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name in recorded:
                overhead = json.loads(recorded[name].read_text()).get("overhead") or {}
                for step, seconds in (overhead.get("steps") or {}).items():
                    steps[name].setdefault(step, []).append(seconds)
                for part in overhead.get("cpu") or []:
                    own[name].setdefault(part["what"], []).append(part["cpu_seconds"])
    print(f"{args.reps} repetitions, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| variant | wall median s | wall min s | tree CPU mean s | tree CPU min s |")
    print("|---|---:|---:|---:|---:|")
    for name in variants:
        w, c = walls[name], cpus[name]
        cells = [statistics.median(w), min(w), statistics.mean(c), min(c)]
        print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in cells) + " |")
    print()
    for name in recorded:
        if not steps[name]:
            continue
        print(
            f"{name}'s own record (medians, s): "
            + ", ".join(f"{k} {statistics.median(v):.4f}" for k, v in steps[name].items())
        )
        print(
            f"{name}'s own CPU (medians, s): "
            + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in own[name].items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
