"""The tools the benchmark compares: how to run a script under each, and how to read its peak.

Every tool runs the workload with the benchmark's own interpreter (the peers are found next to it
first), in a fresh output folder that is also the working directory, so stray default files
(``scalene-profile.json``, ``mprofile_*.dat``) never land in the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIB = 1 << 20
HWM_SCRIPT = Path(__file__).resolve().parent / "_hwm.py"
HWM_ENV = "MEMGAUGE_BENCH_HWM_FILE"  # keep in sync with _hwm.ENV_VAR


@dataclass
class Reading:
    """What a tool said about one run. ``peak_bytes`` is None when it said nothing usable; then
    ``note`` says why."""

    peak_bytes: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = None


@dataclass(frozen=True)
class Tool:
    """``argv(exe, script, out)`` builds the command; ``read(exe, out)`` reads the tool's peak after the
    run (untimed). ``exe`` is None for tools that need no executable of their own."""

    name: str
    executable: str | None
    argv: Callable[[str | None, Path, Path], list[str]]
    read: Callable[[str | None, Path], Reading]
    env: Callable[[Path], dict[str, str]] = lambda _out: {}
    peak_kind: str = ""
    # a module the tool needs in this interpreter besides its executable (memgauge --alloc: memray)
    needs_module: str | None = None


def find_executable(name: str) -> str | None:
    """The tool installed beside this interpreter (the venv), else the first one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)


# --- plain: the baseline for wall time ---------------------------------------------------------


def _plain_argv(_exe: str | None, script: Path, _out: Path) -> list[str]:
    return [sys.executable, str(script)]


def _no_reading(_exe: str | None, _out: Path) -> Reading:
    return Reading()


# --- kernel: VmHWM of the plain run, via bench/_hwm.py -----------------------------------------


def _kernel_argv(_exe: str | None, script: Path, _out: Path) -> list[str]:
    return [sys.executable, str(HWM_SCRIPT), str(script)]


def _kernel_env(out: Path) -> dict[str, str]:
    return {HWM_ENV: str(out / "hwm.txt")}


def _kernel_read(_exe: str | None, out: Path) -> Reading:
    path = out / "hwm.txt"
    if not path.is_file():
        return Reading(note="the wrapper wrote no VmHWM")
    return Reading(peak_bytes=int(path.read_text().strip()))


# --- memgauge ----------------------------------------------------------------------------------


def _memgauge_argv(exe: str | None, script: Path, out: Path) -> list[str]:
    return [str(exe), "run", "-q", "--json", str(out / "memgauge.json"), str(script)]


def _memgauge_alloc_argv(exe: str | None, script: Path, out: Path) -> list[str]:
    # allocation tracking with memray inside the program's process, on top of the default mode
    return [str(exe), "run", "-q", "--alloc", "--json", str(out / "memgauge.json"), str(script)]


def _memgauge_read(_exe: str | None, out: Path) -> Reading:
    path = out / "memgauge.json"
    if not path.is_file():
        return Reading(note="memgauge wrote no profile")
    data = json.loads(path.read_text())
    peak = data["peak"]
    return Reading(
        peak_bytes=int(peak["resident_bytes"]),
        extra={
            "largest_process_bytes": int(peak["largest_process_bytes"]),
            "method": peak.get("method", ""),
            # memgauge's own view of the program's wall time: the gap to the outside wall time is
            # memgauge's start-up and shutdown
            "tool_wall_seconds": float(data["wall_seconds"]),
        },
    )


def _memgauge_alloc_read(exe: str | None, out: Path) -> Reading:
    """The same resident peak as the memgauge tool; the allocation peak (memray's figure, summed
    over the processes) goes beside it."""
    reading = _memgauge_read(exe, out)
    if reading.peak_bytes is None:
        return reading
    alloc = json.loads((out / "memgauge.json").read_text()).get("allocation_peak")
    if alloc is None:
        reading.note = "memgauge --alloc wrote no allocation_peak"
    else:
        reading.extra["allocation_peak_bytes"] = int(alloc["bytes"])
    return reading


# --- memray ------------------------------------------------------------------------------------


def _memray_argv(exe: str | None, script: Path, out: Path) -> list[str]:
    # default mode, as a user runs it: no --native, no --trace-python-allocators
    return [str(exe), "run", "-q", "-f", "-o", str(out / "memray.bin"), str(script)]


def _memray_read(exe: str | None, out: Path) -> Reading:
    capture, stats = out / "memray.bin", out / "memray-stats.json"
    if not capture.is_file():
        return Reading(note="memray wrote no capture file")
    # `memray stats --json` (memray >= 1.11) puts the allocation high-water mark in metadata.peak_memory
    proc = subprocess.run(
        [str(exe), "stats", "--json", "-f", "-o", str(stats), str(capture)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if proc.returncode != 0 or not stats.is_file():
        return Reading(note=f"memray stats failed: {proc.stderr.strip()[-200:]}")
    peak = json.loads(stats.read_text()).get("metadata", {}).get("peak_memory")
    if peak is None:
        return Reading(note="memray stats JSON has no metadata.peak_memory")
    return Reading(peak_bytes=int(peak))


# --- scalene -----------------------------------------------------------------------------------


def _scalene_argv(exe: str | None, script: Path, out: Path) -> list[str]:
    # scalene 2.x: `run` profiles CPU and memory and saves JSON; it opens no browser. --memory: CPU
    # and memory only, no GPU. Its default also profiles the GPU, which starts torch.profiler
    # (with_stack=True) whenever torch can be imported: every Python call is then recorded, and a
    # 2 s pure-Python workload took minutes and GiBs (scalene 2.4.0, torch 2.13 in the venv).
    # Without torch and without a GPU, --memory measures what the default measures. (scalene still
    # imports torch when it can, at start-up: that cost stays in its numbers.)
    return [str(exe), "run", "--memory", "-o", str(out / "scalene.json"), str(script)]


def _scalene_read(_exe: str | None, out: Path) -> Reading:
    path = out / "scalene.json"
    if not path.is_file():
        return Reading(note="scalene wrote no profile")
    data = json.loads(path.read_text() or "{}")
    footprint = data.get("max_footprint_mb")
    if footprint is None:
        # scalene writes `{}` when the program ran too briefly to be sampled
        return Reading(note="scalene's JSON has no max_footprint_mb (nothing sampled)")
    # scalene's "MB" is MiB (BYTES_PER_MB = 1024 * 1024 in its source)
    where = f"{Path(data.get('max_footprint_fname') or '?').name}:{data.get('max_footprint_lineno')}"
    return Reading(peak_bytes=round(float(footprint) * MIB), extra={"peak_line": where})


# --- mprof (memory_profiler) -------------------------------------------------------------------


def _mprof_argv(exe: str | None, script: Path, out: Path) -> list[str]:
    # default 0.1 s sampling, as a user runs it; -E passes the program's exit status on (without it
    # mprof exits 0 even when the program failed)
    return [str(exe), "run", "-E", "-o", str(out / "mprof.dat"), str(script)]


def _mprof_read(_exe: str | None, out: Path) -> Reading:
    path = out / "mprof.dat"
    if not path.is_file():
        return Reading(note="mprof wrote no data file")
    # lines "MEM <MiB> <timestamp>": RSS samples of the process (psutil, divided by 2**20)
    samples = [float(line.split()[1]) for line in path.read_text().splitlines() if line.startswith("MEM ")]
    if not samples:
        return Reading(note="mprof recorded no sample")
    return Reading(peak_bytes=round(max(samples) * MIB), extra={"samples": len(samples)})


BASELINES = ("plain", "kernel")
PEERS = ("memgauge", "memgauge-alloc", "memray", "scalene", "mprof")

_TOOLS = {
    "plain": Tool("plain", None, _plain_argv, _no_reading),
    "kernel": Tool("kernel", None, _kernel_argv, _kernel_read, _kernel_env, "resident (VmHWM)"),
    "memgauge": Tool("memgauge", "memgauge", _memgauge_argv, _memgauge_read, peak_kind="resident (tree)"),
    "memgauge-alloc": Tool(
        "memgauge-alloc",
        "memgauge",
        _memgauge_alloc_argv,
        _memgauge_alloc_read,
        peak_kind="resident (tree)",
        needs_module="memray",
    ),
    "memray": Tool("memray", "memray", _memray_argv, _memray_read, peak_kind="allocation"),
    "scalene": Tool("scalene", "scalene", _scalene_argv, _scalene_read, peak_kind="allocation (sampled)"),
    "mprof": Tool("mprof", "mprof", _mprof_argv, _mprof_read, peak_kind="resident (polled 0.1 s)"),
}


def get_tool(name: str) -> Tool:
    return _TOOLS[name]
