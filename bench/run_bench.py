"""Benchmark memgauge against running plain and against peer profilers (memray, scalene, mprof).

Runs every workload in ``bench/workloads/`` plain, through ``bench/_hwm.py`` (the kernel's VmHWM, the
reference peak), and under each installed tool: each repetition runs every tool once per workload, in a
seeded random order per workload and repetition, so slow drift of the machine (page cache, thermal,
other load) spreads over all tools instead of landing on one. Prints markdown tables and writes the raw runs
and the summary as JSON to ``bench/results/``.

    .venv/bin/python bench/run_bench.py              # full: 5 repetitions
    .venv/bin/python bench/run_bench.py --quick      # smoke test: 2 repetitions
    .venv/bin/python bench/run_bench.py --tools memgauge,mprof --workloads noop,known_peak --reps 3
    .venv/bin/python bench/run_bench.py --memgauge-rev HEAD   # one commit, not the edited tree
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import hashlib
import importlib
import importlib.util
import io
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from _report import RunRecord, markdown, summarize
from _tools import BASELINES, PEERS, Reading, Tool, find_executable, get_tool

BENCH_DIR = Path(__file__).resolve().parent
WORKLOAD_DIR = BENCH_DIR / "workloads"
RESULTS_DIR = BENCH_DIR / "results"
# the order of the tables: the known answer first, the empty program last
DEFAULT_WORKLOADS = ("known_peak", "pyobjects", "allocs", "calls", "cubes", "sleep_compute", "noop")
PACKAGES = ("memgauge", "memray", "scalene", "memory-profiler", "numpy", "psutil")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="run_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="repetitions per tool and workload (default 5)")
    p.add_argument("--quick", action="store_true", help="smoke test: 2 repetitions")
    p.add_argument(
        "--tools",
        default=",".join(PEERS),
        help=f"comma-separated tools besides the plain and kernel baselines (default {','.join(PEERS)})",
    )
    p.add_argument(
        "--workloads",
        default=",".join(DEFAULT_WORKLOADS),
        help="comma-separated names in bench/workloads/ or paths to .py files (default: all)",
    )
    p.add_argument(
        "--warmup", type=int, default=1, help="untimed plain runs before each round of a workload (default 1)"
    )
    p.add_argument(
        "--timeout", type=float, default=300.0, help="seconds before one run is killed (default 300)"
    )
    p.add_argument(
        "--memgauge-rev",
        metavar="REV",
        help="benchmark a compiled export of this commit of memgauge instead of the installed one",
    )
    p.add_argument("--json", metavar="PATH", help="results file (default bench/results/bench-TIME.json)")
    args = p.parse_args(argv)
    if args.quick:
        args.reps = 2
    if args.reps < 1:
        p.error("--reps must be at least 1")
    return args


def _resolve_workloads(spec: str) -> dict[str, Path]:
    workloads: dict[str, Path] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        path = Path(item) if item.endswith(".py") else WORKLOAD_DIR / f"{item}.py"
        if not path.is_file():
            sys.exit(f"run_bench.py: no workload {item!r} (looked for {path})")
        workloads[path.stem] = path.resolve()
    return workloads


def _resolve_tools(spec: str) -> tuple[list[tuple[Tool, str | None]], dict[str, str]]:
    """The baselines always, then each requested peer that is installed; the others are skipped
    with the reason, so the benchmark still runs on a machine without some peer."""
    names = [s.strip() for s in spec.split(",") if s.strip() and s.strip() not in BASELINES]
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        sys.exit(f"run_bench.py: unknown tool(s) {', '.join(unknown)} (known: {', '.join(PEERS)})")
    tools: list[tuple[Tool, str | None]] = [(get_tool(b), None) for b in BASELINES]
    skipped: dict[str, str] = {}
    for name in dict.fromkeys(names):
        tool = get_tool(name)
        exe = find_executable(tool.executable or name)
        if exe is None:
            skipped[name] = f"not installed: no '{tool.executable}' beside {sys.executable} or on PATH"
        elif tool.needs_module and importlib.util.find_spec(tool.needs_module) is None:
            skipped[name] = f"not installed: {sys.executable} cannot import {tool.needs_module}"
        else:
            tools.append((tool, exe))
    return tools, skipped


def _stderr_tail(path: Path, limit: int = 300) -> str:
    try:
        # one line, so it fits a markdown list item
        return " ".join(path.read_text(errors="replace").split())[-limit:]
    except OSError:
        return ""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_or_stop(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """The exit status, or 124 after stopping the whole process group: a tool's own child (the
    program) must not outlive it. SIGTERM first, so a tool can clean up (memgauge removes its cgroup);
    SIGKILL to whatever is left of the group after 5 s, even when the tool itself has exited (scalene
    exits on SIGTERM and leaves its profiling child running). Processes left in the group after a
    normal exit are killed too: nothing may run on into the next measurement."""
    try:
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return returncode
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and (proc.poll() is None or _group_alive(proc.pid)):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return 124


def _run_once(
    tool: Tool, exe: str | None, script: Path, out: Path, timeout: float
) -> tuple[float, int, Reading]:
    """Run one command in its own folder; time it from outside, then read what the tool wrote."""
    out.mkdir(parents=True)
    env = {**os.environ, **tool.env(out)}
    argv = tool.argv(exe, script, out)
    # the program's stdout is discarded (its printing is not what we measure); stderr is kept in a
    # file, not a pipe, so a chatty tool can never block on a full pipe
    with open(out / "stderr.txt", "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=out,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # its own process group, so a timeout can stop the whole tree
        )
        rc = _wait_or_stop(proc, timeout)
        wall = time.perf_counter() - start
    if rc == 124:
        return wall, rc, Reading(note=f"stopped after {timeout:.0f} s")
    if rc != 0:
        return wall, rc, Reading(note=f"exit {rc}: {_stderr_tail(out / 'stderr.txt')}")
    return wall, rc, tool.read(exe, out)


def _warm_up(script: Path, rounds: int) -> None:
    """Untimed plain runs right before each round. The first run of a program pays for a cold page
    cache, and on this VM also for memory freed a few seconds ago: faulting it in again cost known_peak
    ~1 s of extra system time (measured, see docs/benchmarks.md). Without a warm-up that cost lands on
    whichever tool runs first in the round; runs back to back do not pay it."""
    for _ in range(rounds):
        subprocess.run([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _run_all(
    workloads: dict[str, Path],
    tools: list[tuple[Tool, str | None]],
    reps: int,
    warmup: int,
    tmp: Path,
    timeout: float,
) -> list[RunRecord]:
    records: list[RunRecord] = []
    shuffler = random.Random(20261121)
    for rep in range(reps):
        for name, script in workloads.items():
            # a fresh random tool order for every workload of every repetition (seeded, so a run
            # can be repeated): no tool always runs first, or right after a tool that leaves the
            # machine in some state (freed memory slow to fault in again, dirty page cache)
            order = list(tools)
            shuffler.shuffle(order)
            _warm_up(script, warmup)
            for position, (tool, exe) in enumerate(order):
                out = tmp / f"{rep}-{name}-{tool.name}"
                wall, rc, reading = _run_once(tool, exe, script, out, timeout)
                shutil.rmtree(out, ignore_errors=True)  # memray captures can be large
                records.append(
                    RunRecord(
                        rep,
                        position,
                        name,
                        tool.name,
                        wall,
                        rc,
                        reading.peak_bytes,
                        reading.extra,
                        reading.note,
                    )
                )
                status = "" if rc == 0 else f"  (failed: exit {rc})"
                print(
                    f"[rep {rep + 1}/{reps}] {name:<14} {tool.name:<14} {wall:7.3f} s{status}",
                    file=sys.stderr,
                )
    return records


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _memgauge_source(exported_commit: str | None = None) -> dict[str, Any]:
    """Which memgauge the runs used, and a hash of its source: the numbers belong to that code. The
    tools' processes inherit this process's sys.path (PYTHONPATH), so they import the same package."""
    spec = importlib.util.find_spec("memgauge")
    if spec is None or spec.origin is None:
        return {}
    package = Path(spec.origin).parent
    modules = sorted(package.rglob("*.py"))
    digest = hashlib.sha256()
    for path in modules:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    commit = exported_commit or _git("rev-parse", "HEAD", cwd=package) or None
    dirty = None if exported_commit or not commit else bool(_git("status", "--porcelain", ".", cwd=package))
    return {
        "path": str(package),
        "sha256": digest.hexdigest(),
        "git_commit": commit,
        "git_dirty": dirty,
        "exported": exported_commit is not None,
        # without bytecode every run compiles memgauge from source, which inflates its start-up cost
        "has_bytecode": all(Path(importlib.util.cache_from_source(str(m))).is_file() for m in modules),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
    }


def _use_memgauge_export(rev: str, dest: Path) -> str:
    """Export commit ``rev`` of this repository's src/ to ``dest``, compile it (as pip does on
    install) and put it first on the path of this process and of every tool's process. The numbers
    then belong to one commit even while the working tree is being edited."""
    repo = BENCH_DIR.parent
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}", cwd=repo)
    if not commit:
        sys.exit(f"run_bench.py: --memgauge-rev {rev!r} is not a commit of {repo}")
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "src"], capture_output=True
    )
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        # our own repository's archive; the "data" filter exists from Python 3.10.12 / 3.11.4
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    src = dest / "src"
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src)], stdout=subprocess.DEVNULL, check=True
    )
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    sys.path.insert(0, str(src))
    importlib.invalidate_caches()
    return commit


def _warn_about_source(source: dict[str, Any]) -> None:
    if source and not source["has_bytecode"] and source["PYTHONDONTWRITEBYTECODE"]:
        print(
            "warning: memgauge has no compiled bytecode and PYTHONDONTWRITEBYTECODE is set: every run "
            "compiles it from source (use --memgauge-rev to benchmark a compiled export)",
            file=sys.stderr,
        )
    if source.get("git_dirty"):
        print("warning: memgauge's source has uncommitted changes", file=sys.stderr)


def _warm_up_tools(tools: list[tuple[Tool, str | None]], tmp: Path, timeout: float) -> None:
    """One untimed run of each tool on the empty program: first-run costs (bytecode compilation,
    cold caches of the tool's own files) must not land on the first repetition."""
    for tool, exe in tools:
        out = tmp / f"warm-up-{tool.name}"
        _run_once(tool, exe, WORKLOAD_DIR / "noop.py", out, timeout)
        shutil.rmtree(out, ignore_errors=True)


def _describe_machine(tools: list[tuple[Tool, str | None]]) -> dict[str, Any]:
    nproc = (
        subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
        if shutil.which("nproc")
        else ""
    )
    return {
        "nproc": nproc or str(len(os.sched_getaffinity(0))),
        "cpu_model": _cpu_model(),
        "mem_total_bytes": _mem_total_bytes(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "packages": {p: _version(p) for p in PACKAGES},
        "executables": {tool.name: exe for tool, exe in tools if exe is not None},
    }


def _write_results(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1))


def _measure(
    args: argparse.Namespace, workloads: dict[str, Path], tools: list[tuple[Tool, str | None]]
) -> tuple[list[RunRecord], dict[str, Any]]:
    """All timed runs, with the memgauge they used (checked again at the end: a tree edited during
    the run gives numbers that mix versions)."""
    with tempfile.TemporaryDirectory(prefix="memgauge-bench-") as tmp_name:
        tmp = Path(tmp_name)
        commit = (
            _use_memgauge_export(args.memgauge_rev, tmp / "memgauge-export") if args.memgauge_rev else None
        )
        source = _memgauge_source(commit)
        _warn_about_source(source)
        _warm_up_tools(tools, tmp, args.timeout)
        records = _run_all(workloads, tools, args.reps, args.warmup, tmp, args.timeout)
        changed = source.get("sha256") != _memgauge_source(commit).get("sha256")
    if changed:
        print("warning: memgauge's source changed during the run; its numbers mix versions", file=sys.stderr)
    return records, {**source, "changed_during_run": changed}


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    workloads = _resolve_workloads(args.workloads)
    tools, skipped = _resolve_tools(args.tools)
    for name, reason in skipped.items():
        print(f"skipping {name}: {reason}", file=sys.stderr)
    started = _dt.datetime.now()
    records, source = _measure(args, workloads, tools)
    names = [tool.name for tool, _ in tools]
    summary = summarize(records, list(workloads), names)
    print(markdown(summary, list(workloads), names, args.reps), end="")
    if skipped:
        print("\nSkipped: " + "; ".join(f"{n} ({r})" for n, r in skipped.items()))
    out = Path(args.json) if args.json else RESULTS_DIR / f"bench-{started:%Y%m%d-%H%M%S}.json"
    payload = {
        "command": [sys.executable, *sys.argv],
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": (_dt.datetime.now() - started).total_seconds(),
        "config": {"reps": args.reps, "warmup": args.warmup, "timeout_s": args.timeout, "tools": names},
        "workloads": {name: str(path) for name, path in workloads.items()},
        "skipped_tools": skipped,
        "machine": _describe_machine(tools),
        "memgauge_source": source,
        "summary": summary,
        "runs": [vars(r) for r in records],
    }
    _write_results(out, payload)
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
