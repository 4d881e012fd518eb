"""What a scaling sweep costs and how well it predicts: `memgauge sweep` against a bare loop of
`python PROG` runs and against the loops people write today around mprof and `/usr/bin/time -v`.

    .venv/bin/python bench/sweep_bench.py                       # 3 repetitions, ~3 min on 2 cores
    .venv/bin/python bench/sweep_bench.py --memgauge-rev HEAD   # one commit, not the edited tree
    .venv/bin/python bench/sweep_bench.py --reps 5 --workloads sweep_growth
    .venv/bin/python bench/sweep_bench.py --tools memgauge,mprof,time-v      # also /usr/bin/time -v
    .venv/bin/python bench/sweep_bench.py --no-check            # skip the runs at 10x (the slow part)

For each workload (a program, the environment variable that sizes it, four sizes) every repetition
runs the whole sweep once per tool, in a seeded random tool order:

- ``bare``: a Python loop, ``python PROG`` per size with the variable set; the peak is the kernel's
  ``ru_maxrss`` of the child (``os.wait4``), the largest single process (these programs are one).
- ``memgauge``: ``python -m memgauge sweep PROG --param VAR=... --json REC -q -o /dev/null``; the peak
  per size is the record's ``points[i].runs[0].rss_bytes`` (the run's whole-tree resident peak).
- ``mprof``: a loop of ``mprof run -E --python -o F.dat PROG``; the peak is the largest ``MEM`` sample
  of the .dat file (MiB, polled every 0.1 s). Skipped when mprof is not installed.
- ``time-v`` (only with ``--tools``: it reads the same kernel figure as bare): a loop of
  ``/usr/bin/time -v python PROG``; its "Maximum resident set size". Skipped without /usr/bin/time.

Each tool's time is the wall time of its whole sweep, measured from outside (memgauge's analysis
and report included). After memgauge's sweep, ``memgauge sweep --load REC --predict VAR=10x
--format json`` (untimed) gives the law chosen for the resident peak and wall time and the
prediction at 10x the largest size; once per workload, a bare run at that size gives the real
figures to check it against. Medians over repetitions; the raw runs go to
``bench/results/sweep-TIME.json``.

The memgauge used by every process (memgauge's, and the programs', which import it) is a
byte-compiled snapshot of this checkout's ``src/`` (or of commit ``--memgauge-rev``), first on
``PYTHONPATH``: with ``PYTHONDONTWRITEBYTECODE`` set, an editable install would recompile memgauge
in every process, and edits to the tree during the run cannot mix versions. The results file
records the commit, whether ``src/`` had uncommitted changes, and a hash of the source used.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from _tools import find_executable

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
MIB = 1 << 20
KIB = 1024
TOOLS = ("bare", "memgauge", "mprof", "time-v")
# time-v reads the same kernel figure as bare (wait4's ru_maxrss): opt in, it adds a whole sweep
DEFAULT_TOOLS = ("bare", "memgauge", "mprof")
TIME_V = "/usr/bin/time"


@dataclass(frozen=True)
class Workload:
    name: str
    path: Path
    var: str
    sizes: tuple[int, ...]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def check_size(self) -> int:
        return 10 * max(self.sizes)


WORKLOADS = {
    w.name: w
    for w in (
        Workload(
            "sweep_growth",
            REPO / "tests/programs/sweep_growth.py",
            "N",
            (50, 100, 200, 400),
            {"GROWTH": "linear"},
        ),
        Workload("scaling", REPO / "examples/scaling.py", "N_ROWS", (100_000, 200_000, 400_000, 800_000)),
    )
}


@dataclass
class SweepRun:
    """One tool's whole sweep of one workload in one repetition. ``peaks``: bytes per size, in the
    order of ``Workload.sizes`` (None where the tool gave no figure)."""

    rep: int
    workload: str
    tool: str
    wall: float
    peaks: list[int | None]
    ok: bool = True
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --- running one command ------------------------------------------------------------------------


def _spawn(
    argv: list[str], env: dict[str, str], cwd: Path, stderr: Path
) -> tuple[int, resource.struct_rusage]:
    """Run ``argv`` to completion; its exit status and its rusage (``os.wait4``: the child and the
    descendants it waited for; ``ru_maxrss`` is the largest single one, in KiB)."""
    with open(stderr, "wb") as err:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait for it again
    return proc.returncode, usage


def _tail(path: Path, limit: int = 300) -> str:
    try:
        return " ".join(path.read_text(errors="replace").split())[-limit:]
    except OSError:
        return ""


def _point_env(w: Workload, size: int) -> dict[str, str]:
    return {**os.environ, **w.env, w.var: str(size)}


# --- the tools ----------------------------------------------------------------------------------


def _bare(w: Workload, rep: int, tmp: Path) -> SweepRun:
    peaks: list[int | None] = []
    cpu: list[float] = []
    walls: list[float] = []
    notes: list[str] = []
    start = time.perf_counter()
    for size in w.sizes:
        t0 = time.perf_counter()
        rc, usage = _spawn([sys.executable, str(w.path)], _point_env(w, size), tmp, tmp / "stderr.txt")
        walls.append(time.perf_counter() - t0)
        peaks.append(usage.ru_maxrss * KIB if rc == 0 else None)
        cpu.append(usage.ru_utime + usage.ru_stime)
        if rc != 0:
            notes.append(f"{w.var}={size}: exit {rc}: {_tail(tmp / 'stderr.txt')}")
    wall = time.perf_counter() - start
    return SweepRun(
        rep, w.name, "bare", wall, peaks, not notes, "; ".join(notes), {"walls": walls, "cpu": cpu}
    )


def _memgauge(w: Workload, rep: int, tmp: Path) -> SweepRun:
    record = tmp / "rec.json"
    argv = [
        sys.executable,
        "-m",
        "memgauge",
        "sweep",
        str(w.path),
        "--param",
        f"{w.var}={','.join(str(s) for s in w.sizes)}",
        "--json",
        str(record),
        "-q",
        "-o",
        os.devnull,
    ]
    env = {**os.environ, **w.env}
    start = time.perf_counter()
    rc, _ = _spawn(argv, env, tmp, tmp / "stderr.txt")
    wall = time.perf_counter() - start
    if not record.is_file():
        return SweepRun(
            rep, w.name, "memgauge", wall, [None] * len(w.sizes), False, _tail(tmp / "stderr.txt")
        )
    data = json.loads(record.read_text())
    by_size = {p["params"][w.var]: p["runs"][0] for p in data["points"]}
    runs = [by_size.get(s) for s in w.sizes]
    measured = [r if r and r["error"] is None else None for r in runs]
    peaks = [r["rss_bytes"] if r else None for r in measured]
    extra = {
        "walls": [r["wall_seconds"] if r else None for r in measured],
        "cpu": [r["cpu_seconds"] if r else None for r in measured],
        "prediction": _predict(record, w, tmp),
    }
    note = ""
    if rc != 0:
        # why: the first run that failed says more than the sweep's own last lines
        bad = next((r for r in runs if r is None or not r["ok"]), None)
        why = "no run" if bad is None else f"{bad['exit']}; {bad['error']}; {bad['output_tail'][-300:]}"
        note = f"exit {rc}: {_tail(tmp / 'stderr.txt')}; first failed run: {why}"
    return SweepRun(rep, w.name, "memgauge", wall, peaks, rc == 0, note, extra)


def _predict(record: Path, w: Workload, tmp: Path) -> dict[str, Any]:
    """The law and the prediction at 10x, per metric (rss, wall), from memgauge's own analysis of
    the record (untimed)."""
    out = tmp / "pred.json"
    argv = [sys.executable, "-m", "memgauge", "sweep", "--load", str(record)]
    argv += ["--predict", f"{w.var}={w.check_size}", "--format", "json", "-o", str(out)]
    proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
    if proc.returncode != 0 or not out.is_file():
        return {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
    analysis = json.loads(out.read_text())["analysis"]
    found: dict[str, Any] = {}
    for metric in ("rss", "wall"):
        law = next((x for x in analysis["laws"] if x["metric"] == metric and x["param"] == w.var), None)
        pred = next(
            (x for x in analysis["predictions"] if x["metric"] == metric and x["param"] == w.var), None
        )
        found[metric] = {
            "law": law and law["law"],
            "formula": law and law["formula"],
            "r2": law and law["r2"],
            "rms_relative": law and law["rms_relative"],
            **{k: pred and pred[k] for k in ("x", "value", "low", "high", "supported", "reason")},
        }
    return found


def _mprof(exe: str, w: Workload, rep: int, tmp: Path) -> SweepRun:
    peaks: list[int | None] = []
    notes: list[str] = []
    start = time.perf_counter()
    for i, size in enumerate(w.sizes):
        dat = tmp / f"mprof-{i}.dat"
        argv = [exe, "run", "-E", "--python", "-o", str(dat), str(w.path)]
        rc, _ = _spawn(argv, _point_env(w, size), tmp, tmp / "stderr.txt")
        if rc != 0:
            notes.append(f"{w.var}={size}: exit {rc}: {_tail(tmp / 'stderr.txt')}")
        peaks.append(None)  # read after the loop: parsing is not part of the tool's time
    wall = time.perf_counter() - start
    for i in range(len(w.sizes)):
        dat = tmp / f"mprof-{i}.dat"
        lines = dat.read_text().splitlines() if dat.is_file() else []
        # lines "MEM <MiB> <timestamp>": RSS samples (psutil) divided by 2**20
        samples = [float(line.split()[1]) for line in lines if line.startswith("MEM ")]
        peaks[i] = round(max(samples) * MIB) if samples else None
    return SweepRun(rep, w.name, "mprof", wall, peaks, not notes, "; ".join(notes))


def _time_v(w: Workload, rep: int, tmp: Path) -> SweepRun:
    notes: list[str] = []
    start = time.perf_counter()
    for i, size in enumerate(w.sizes):
        argv = [TIME_V, "-v", "-o", str(tmp / f"time-{i}.txt"), sys.executable, str(w.path)]
        rc, _ = _spawn(argv, _point_env(w, size), tmp, tmp / "stderr.txt")
        if rc != 0:
            notes.append(f"{w.var}={size}: exit {rc}: {_tail(tmp / 'stderr.txt')}")
    wall = time.perf_counter() - start
    peaks: list[int | None] = []
    for i in range(len(w.sizes)):
        path = tmp / f"time-{i}.txt"
        text = path.read_text() if path.is_file() else ""
        kib = [
            int(line.rsplit(":", 1)[1]) for line in text.splitlines() if "Maximum resident set size" in line
        ]
        peaks.append(kib[0] * KIB if kib else None)
    return SweepRun(rep, w.name, "time-v", wall, peaks, not notes, "; ".join(notes))


def _check_run(w: Workload, tmp: Path) -> dict[str, Any]:
    """The program run bare at 10x the largest size: the truth the prediction is checked against."""
    start = time.perf_counter()
    rc, usage = _spawn([sys.executable, str(w.path)], _point_env(w, w.check_size), tmp, tmp / "stderr.txt")
    wall = time.perf_counter() - start
    return {
        "size": w.check_size,
        "exit": rc,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "ru_maxrss_bytes": usage.ru_maxrss * KIB,
        "note": "" if rc == 0 else _tail(tmp / "stderr.txt"),
    }


# --- the memgauge every process uses ------------------------------------------------------------


def _git(*args: str) -> str:
    proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _source_hash(package: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _snapshot_memgauge(rev: str | None, dest: Path) -> dict[str, Any]:
    """Copy memgauge (this checkout's src/, or commit ``rev``'s) to ``dest``, byte-compile it as pip
    would, and put it first on the path of every process started from here."""
    src = dest / "src"
    if rev is None:
        shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        commit = _git("rev-parse", "HEAD")
        dirty = bool(_git("status", "--porcelain", "src"))
    else:
        commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
        if not commit:
            sys.exit(f"sweep_bench.py: --memgauge-rev {rev!r} is not a commit")
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        dirty = False
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src)], stdout=subprocess.DEVNULL, check=True
    )
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    return {
        "git_commit": commit,
        "working_tree": rev is None,
        "src_dirty": dirty,
        "sha256": _source_hash(src / "memgauge"),
    }


# --- summary ------------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def _summarize(runs: list[SweepRun], workloads: list[Workload], tools: list[str]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for w in workloads:
        mine = [r for r in runs if r.workload == w.name]
        bare_wall = {r.rep: r.wall for r in mine if r.tool == "bare"}
        per_tool: dict[str, Any] = {}
        for tool in tools:
            rs = [r for r in mine if r.tool == tool]
            if not rs:
                continue
            walls = [r.wall for r in rs]
            ratios = [r.wall / bare_wall[r.rep] for r in rs if r.rep in bare_wall]
            extra = [(r.wall - bare_wall[r.rep]) / len(w.sizes) for r in rs if r.rep in bare_wall]
            per_tool[tool] = {
                "wall": statistics.median(walls),
                "wall_min": min(walls),
                "wall_max": max(walls),
                "ratio": _median(list(ratios)),
                "per_point_over_bare": _median(list(extra)),
                # the programs' own time: bare's timed from outside per size, memgauge's as its
                # record has it (each run's wall_seconds); the rest of a sweep is the runner's
                "programs": _median(
                    [sum(r.extra["walls"]) for r in rs if None not in r.extra.get("walls", [None])]
                ),
                "peaks": [_median([r.peaks[i] for r in rs]) for i in range(len(w.sizes))],
                "peak_ranges": [_range([r.peaks[i] for r in rs]) for i in range(len(w.sizes))],
                "failed": [r.note for r in rs if not r.ok],
            }
        summary[w.name] = per_tool
    return summary


def _range(values: list[int | None]) -> tuple[int, int] | None:
    got = [v for v in values if v is not None]
    return (min(got), max(got)) if got else None


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / MIB:.1f}"


def _pct(value: float | None, truth: float | None) -> str:
    if value is None or not truth:
        return "n/a"
    return f"{(value / truth - 1) * 100:+.1f}%"


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    return f"{value / MIB:.0f} MiB" if unit == "bytes" else f"{value:.2f} s"


def _markdown(
    summary: dict[str, Any],
    predictions: dict[str, list[dict[str, Any]]],
    checks: dict[str, dict[str, Any]],
    workloads: list[Workload],
    tools: list[str],
    reps: int,
) -> str:
    out = [f"{reps} repetitions, medians\n"]
    out.append(
        "### Whole sweep: wall time (median s, min-max; ratio = median of tool / bare per repetition)\n"
    )
    out.append("| workload | sizes | tool | sweep s | ratio to bare | extra s per point | programs s |")
    out.append("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for w in workloads:
        sizes = f"{w.var}={','.join(str(s) for s in w.sizes)}"
        for tool in tools:
            s = summary[w.name].get(tool)
            if s is None:
                continue
            ratio = "1.00x" if tool == "bare" else f"{s['ratio']:.2f}x"
            extra = "" if tool == "bare" else f"{s['per_point_over_bare']:+.2f}"
            programs = "" if s["programs"] is None else f"{s['programs']:.2f}"
            out.append(
                f"| {w.name} | {sizes} | {tool} | {s['wall']:.2f} ({s['wall_min']:.2f}-{s['wall_max']:.2f}) "
                f"| {ratio} | {extra} | {programs} |"
            )
    out.append(
        "\n`extra s per point`: (tool - bare) / sizes. `programs s`: the programs' own wall time summed "
        "over the sizes (bare: each run timed from outside; memgauge: each run's `wall_seconds` "
        "in its record)."
    )
    peak_tools = [t for t in tools if t != "bare"]
    out.append(
        "\n### Peak per size (median MiB; % = against bare's ru_maxrss; [min-max] where the repetitions "
        "differ by more than 2%)\n"
    )
    out.append("| workload | size | bare ru_maxrss | " + " | ".join(peak_tools) + " |")
    out.append("| --- | ---: | ---: | " + " | ".join("---:" for _ in peak_tools) + " |")
    for w in workloads:
        bare = summary[w.name]["bare"]["peaks"]
        for i, size in enumerate(w.sizes):
            cells = []
            for tool in peak_tools:
                s = summary[w.name].get(tool)
                value = s["peaks"][i] if s else None
                spread = s["peak_ranges"][i] if s else None
                cell = "n/a" if value is None else f"{_mib(value)} ({_pct(value, bare[i])})"
                if value and spread and spread[1] - spread[0] > 0.02 * value:
                    # the repetitions disagree by more than 2%: show how much
                    cell += f" [{_mib(spread[0])}-{_mib(spread[1])}]"
                cells.append(cell)
            out.append(f"| {w.name} | {w.var}={size} | {_mib(bare[i])} | " + " | ".join(cells) + " |")
    if predictions:
        out.append(
            "\n### memgauge's prediction at 10x the largest size (each repetition's sweep), against one bare "
            "run there\n"
        )
        out.append(
            "| workload | metric | rep | law chosen | predicted (95% interval) | supported | measured "
            "| error |"
        )
        out.append("| --- | --- | ---: | --- | ---: | --- | ---: | ---: |")
        reasons: list[str] = []
        for w in workloads:
            check = checks.get(w.name)
            for metric, unit, truth_key in (("rss", "bytes", "ru_maxrss_bytes"), ("wall", "s", "wall")):
                truth = check[truth_key] if check and check["exit"] == 0 else None
                source = "ru_maxrss" if metric == "rss" else "bare wall"
                measured = f"{_num(truth, unit)} ({source})" if truth is not None else "not run"
                for rep, pred in enumerate(predictions.get(w.name) or []):
                    p = pred.get(metric)
                    if p is None:
                        out.append(
                            f"| {w.name} {w.var}={w.check_size} | {metric} | {rep + 1} | n/a: {pred} |"
                        )
                        continue
                    supported = "yes" if p["supported"] else "no"
                    if not p["supported"]:
                        reasons.append(f"{w.name} {metric} rep {rep + 1}: {p['reason']}")
                    where = f"{w.name} {w.var}={w.check_size}"
                    out.append(
                        f"| {where} | {metric} | {rep + 1} | {p['law']} ({p['formula']}) "
                        f"| {_num(p['value'], unit)} ({_num(p['low'], unit)}-{_num(p['high'], unit)}) "
                        f"| {supported} | {measured} | {_pct(p['value'], truth)} |"
                    )
        out.extend(["", *(f"- not supported: {r}" for r in reasons)])
    return "\n".join(out) + "\n"


# --- main ---------------------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="sweep_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3, help="repetitions of the whole comparison (default 3)")
    p.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        help=f"comma-separated, of {', '.join(WORKLOADS)} (default: all)",
    )
    p.add_argument(
        "--tools",
        default=",".join(DEFAULT_TOOLS),
        help=f"comma-separated, of {', '.join(TOOLS)} (default {','.join(DEFAULT_TOOLS)}; bare always runs)",
    )
    p.add_argument("--no-check", action="store_true", help="no bare run at 10x the largest size")
    p.add_argument("--memgauge-rev", metavar="REV", help="use this commit's memgauge, not the working tree's")
    p.add_argument("--json", metavar="PATH", help="results file (default bench/results/sweep-TIME.json)")
    args = p.parse_args(argv)
    if args.reps < 1:
        p.error("--reps must be at least 1")
    return args


def _resolve_tools(spec: str) -> tuple[list[str], dict[str, str]]:
    names = ["bare", *(t.strip() for t in spec.split(",") if t.strip() and t.strip() != "bare")]
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        sys.exit(f"sweep_bench.py: unknown tool(s) {', '.join(unknown)} (known: {', '.join(TOOLS)})")
    skipped: dict[str, str] = {}
    if "mprof" in names and find_executable("mprof") is None:
        skipped["mprof"] = "not installed (pip install 'memory-profiler>=0.61')"
    if "time-v" in names and not os.access(TIME_V, os.X_OK):
        skipped["time-v"] = f"no {TIME_V}"
    return [n for n in dict.fromkeys(names) if n not in skipped], skipped


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    names = [s.strip() for s in args.workloads.split(",") if s.strip()]
    if unknown := [n for n in names if n not in WORKLOADS]:
        sys.exit(f"sweep_bench.py: unknown workload(s) {', '.join(unknown)} (known: {', '.join(WORKLOADS)})")
    workloads = [WORKLOADS[n] for n in names]
    tools, skipped = _resolve_tools(args.tools)
    for name, reason in skipped.items():
        print(f"skipping {name}: {reason}", file=sys.stderr)
    mprof = find_executable("mprof") or ""
    runners: dict[str, Callable[[Workload, int, Path], SweepRun]] = {
        "bare": _bare,
        "memgauge": _memgauge,
        "mprof": lambda w, rep, tmp: _mprof(mprof, w, rep, tmp),
        "time-v": _time_v,
    }
    started = _dt.datetime.now()
    runs: list[SweepRun] = []
    checks: dict[str, dict[str, Any]] = {}
    shuffler = random.Random(20261123)
    with tempfile.TemporaryDirectory(prefix="memgauge-sweep-bench-") as tmp_name:
        tmp = Path(tmp_name)
        source = _snapshot_memgauge(args.memgauge_rev, tmp / "memgauge")
        for rep in range(args.reps):
            for w in workloads:
                order = list(tools)
                shuffler.shuffle(order)
                # one untimed run of the smallest size: a cold page cache lands on no tool
                _spawn([sys.executable, str(w.path)], _point_env(w, w.sizes[0]), tmp, tmp / "stderr.txt")
                for tool in order:
                    folder = tmp / f"{rep}-{w.name}-{tool}"
                    folder.mkdir()
                    run = runners[tool](w, rep, folder)
                    shutil.rmtree(folder, ignore_errors=True)
                    runs.append(run)
                    status = "" if run.ok else f"  (failed: {run.note[:200]})"
                    print(
                        f"[rep {rep + 1}/{args.reps}] {w.name:<13} {tool:<9} {run.wall:7.2f} s{status}",
                        file=sys.stderr,
                    )
        if not args.no_check:
            for w in workloads:
                folder = tmp / f"check-{w.name}"
                folder.mkdir()
                checks[w.name] = _check_run(w, folder)
                print(
                    f"[check] {w.name:<13} {w.var}={w.check_size} {checks[w.name]['wall']:7.2f} s",
                    file=sys.stderr,
                )
    summary = _summarize(runs, workloads, tools)
    predictions = {
        w.name: [r.extra["prediction"] for r in runs if r.workload == w.name and r.tool == "memgauge"]
        for w in workloads
        if "memgauge" in tools
    }
    print(_markdown(summary, predictions, checks, workloads, tools, args.reps), end="")
    if skipped:
        print("\nSkipped: " + "; ".join(f"{n} ({r})" for n, r in skipped.items()))
    for w in workloads:
        for tool, s in summary[w.name].items():
            for note in s["failed"]:
                print(f"\nfailed: {w.name} {tool}: {note}")
    out = Path(args.json) if args.json else RESULTS_DIR / f"sweep-{started:%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": [sys.executable, *sys.argv],
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": (_dt.datetime.now() - started).total_seconds(),
        "config": {"reps": args.reps, "tools": tools, "skipped": skipped},
        "workloads": {w.name: {**asdict(w), "path": str(w.path)} for w in workloads},
        "machine": {
            "nproc": len(os.sched_getaffinity(0)),
            "kernel": platform.release(),
            "python": platform.python_version(),
            "packages": {p: _version(p) for p in ("memgauge", "memory-profiler", "psutil")},
        },
        "memgauge_source": source,
        "summary": summary,
        "checks": checks,
        "runs": [asdict(r) for r in runs],
    }
    out.write_text(json.dumps(payload, indent=1))
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
