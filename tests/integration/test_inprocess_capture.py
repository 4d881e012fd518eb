"""``memgauge.profile(lines=True, children=True)``: line sampling and descendants in-process.

Each case runs in a Python process of its own: the line sampler is a thread of the process it
measures, and the descendants are the process's own children, so this test process stays out of
both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema

from tests.integration.test_schema import SCHEMA_PATH, check_timeline

MIB = 1 << 20


def run_python(code: str, tmp_path: Path) -> dict[str, Any]:
    """Runs ``code`` (which prints one JSON object last) in a fresh interpreter."""
    script = tmp_path / "case.py"
    script.write_text(textwrap.dedent(code))
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_lines_attribute_the_block_and_leave_nothing_behind(tmp_path: Path) -> None:
    out = run_python(
        """\
        import json, os, tempfile, time
        import numpy as np
        import memgauge

        MIB = 1 << 20
        with memgauge.profile(lines=True) as prof:
            block = np.ones(200 * MIB, dtype=np.uint8)
            time.sleep(0.1)
        p = prof.profile
        prof.save("profile.json")
        left = [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"memgauge-lines{os.getpid()}-")]
        print(json.dumps({
            "attribution": [[a.file, a.line, a.bytes] for a in p.peak.attribution],
            "lines": len(p.lines),
            "peak": p.peak.resident_bytes,
            "start": prof.start_resident_bytes,
            "left": left,
            "warnings": [w.message for w in p.warnings],
        }))
        """,
        tmp_path,
    )
    # np.ones writes its pages with the GIL released: the sampler sees its line as it grows (the
    # growth of the last interval may go to the next line, docs/measurement.md)
    real = [(f, line, b) for f, line, b in out["attribution"] if not f.startswith("<")]
    assert real[0][0].endswith("case.py") and real[0][1] == 7
    assert 100 * MIB <= real[0][2] <= 230 * MIB
    # what the process held when the block began is the pseudo-line <before>, not a line of it
    before = [b for f, _, b in out["attribution"] if f == "<before>"]
    assert before and abs(before[0] - out["start"]) <= 8 * MIB
    assert 200 * MIB <= out["peak"] - out["start"] <= 230 * MIB
    assert out["lines"] > 0
    assert out["left"] == []
    assert out["warnings"] == []  # the block's own line file read whole


def test_the_sampler_starts_and_stops_200_times_without_leaking(tmp_path: Path) -> None:
    out = run_python(
        """\
        import json, os, time
        import memgauge

        def counts():
            return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))

        with memgauge.profile(lines=True, children=True):  # the first: imports, caches
            pass
        time.sleep(0.05)
        before = counts()
        for i in range(200):
            with memgauge.profile(lines=True, children=True) as prof:
                if i % 50 == 0:
                    time.sleep(0.03)  # some blocks long enough to take samples
        for _ in range(100):  # a thread that has ended can linger in /proc for a moment
            if counts() == before:
                break
            time.sleep(0.01)
        print(json.dumps({"before": before, "after": counts(), "lines": len(prof.profile.lines)}))
        """,
        tmp_path,
    )
    assert out["after"] == out["before"], out


def test_children_count_in_the_tree(tmp_path: Path) -> None:
    out = run_python(
        """\
        import json, subprocess, sys
        import memgauge

        child = "x = b'x' * (300 << 20); import time; time.sleep(0.3)"
        with memgauge.profile(lines=True, children=True) as prof:
            subprocess.run([sys.executable, "-c", child], check=True)  # LINE: run
        with memgauge.profile() as alone:
            subprocess.run([sys.executable, "-c", child], check=True)
        p = prof.profile
        prof.save("profile.json")
        print(json.dumps({
            "peak": p.peak.resident_bytes,
            "method": p.peak.method,
            "bound": p.peak.error_bound_bytes,
            "start": prof.start_resident_bytes,
            "processes": [[r.pid, r.cmdline, r.peak_resident_bytes] for r in p.processes],
            "attribution": [[a.pid, a.file, a.line, a.bytes] for a in p.peak.attribution],
            "cpu": p.cpu.user_seconds + p.cpu.system_seconds,
            "alone": alone.profile.peak.resident_bytes - alone.start_resident_bytes,
            "alone_processes": len(alone.profile.processes),
        }))
        """,
        tmp_path,
    )
    assert out["method"] == "sampled tree sum + per-process VmHWM"
    assert 300 * MIB <= out["peak"] - out["start"] <= 340 * MIB
    children = out["processes"][1:]  # this process first
    assert len(children) == 1
    pid, cmdline, peak = children[0]
    assert cmdline[1] == "-c" and 300 * MIB <= peak <= 340 * MIB
    # the child is charged to the line that ran it
    top_pid, _, top_line, top_bytes = out["attribution"][0]
    assert top_pid == pid and top_line == 6 and top_bytes >= 290 * MIB
    assert out["cpu"] >= 0.05  # the child's own CPU (it writes 300 MiB) is the tree's
    # without children=True, only this process: its growth is small
    assert out["alone"] < 50 * MIB and out["alone_processes"] == 1
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    data = json.loads((tmp_path / "profile.json").read_text())
    validator.validate(data)
    check_timeline(data)


def test_forks_count_their_private_memory_only(tmp_path: Path) -> None:
    # a fork shares the parent's 300 MiB copy-on-write and its RSS counts them: counted by RSS, the
    # tree would hold them twice. A fork on its way to exec (a preexec_fn) is the same until exec.
    out = run_python(
        """\
        import json, os, subprocess, time
        import memgauge

        MIB = 1 << 20
        held = bytearray(300 * MIB)
        held[:: 4096] = b"x" * (300 * MIB // 4096)
        results = {}
        with memgauge.profile(children=True) as prof:
            pid = os.fork()
            if pid == 0:
                time.sleep(0.2)
                os._exit(0)
            os.waitpid(pid, 0)
        results["fork"] = prof.profile.peak.resident_bytes - prof.start_resident_bytes
        with memgauge.profile(children=True) as prof:
            pid = os.fork()
            if pid == 0:
                own = bytearray(100 * MIB)
                own[:: 4096] = b"y" * (100 * MIB // 4096)
                time.sleep(0.2)
                os._exit(0)
            os.waitpid(pid, 0)
        results["fork_writes"] = prof.profile.peak.resident_bytes - prof.start_resident_bytes
        with memgauge.profile(children=True) as prof:
            subprocess.run(["true"], preexec_fn=lambda: time.sleep(0.2))
        results["preexec"] = prof.profile.peak.resident_bytes - prof.start_resident_bytes
        print(json.dumps(results))
        """,
        tmp_path,
    )
    assert out["fork"] < 30 * MIB, out
    assert 90 * MIB <= out["fork_writes"] <= 130 * MIB, out
    assert out["preexec"] < 30 * MIB, out
