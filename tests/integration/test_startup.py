"""What ``memgauge run`` costs around the program, on real runs: the profile's timed steps lie
outside the program's own time (a program that sleeps a known time), memgauge's own CPU is
reported apart from the program's, and a run loads only what it uses (no other command, no sweep
or fit record, no NVML without a driver)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_memgauge

SLEEP = 1.0
SLEEPER = f"""
import time
t = time.process_time()
while time.process_time() - t < 0.3:  # CPU of the program's own, on its main thread
    pass
time.sleep({SLEEP})
"""


def test_the_steps_are_outside_the_programs_time(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    profile_path = tmp_path / "p.json"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "--json", str(profile_path), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    outside = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    overhead = json.loads(profile_path.read_text())["overhead"]
    steps = overhead["steps"]
    assert list(steps) == ["start-up", "set-up", "bootstrap", "shutdown", "assembly"]
    assert all(seconds >= 0 for seconds in steps.values())
    # by construction: the program ran at least 1.3 s between its first line and its last, in no
    # step; the steps and the program fit in the wall time seen from outside (the start-up's start
    # is read to the kernel's 10 ms tick)
    assert sum(steps.values()) + SLEEP + 0.3 <= outside + 0.02
    assert steps["bootstrap"] > 0 and steps["assembly"] > 0
    cpu = {c["what"]: c for c in overhead["cpu"]}
    assert cpu["memgauge process"]["pid"] != cpu["line sampler thread"]["pid"]
    # the program's 0.3 s of CPU is its own, not memgauge's
    assert cpu["line sampler thread"]["cpu_seconds"] < 0.3
    assert "memgauge's own cost:" in proc.stderr


# memgauge's command line as the console script runs it, then the modules it had loaded by its end
LOADED = """
import json, sys
from memgauge.cli import main
sys.argv = ["memgauge", *sys.argv[1:]]
code = main()
print(json.dumps(sorted(sys.modules)))
"""


# the same, with the modules loaded when the program is started (the first process made)
LOADED_AT_SPAWN = """
import subprocess, sys
at_spawn = []
popen = subprocess.Popen.__init__
def spawn(self, *args, **kwargs):
    at_spawn.append(sorted(sys.modules)) if not at_spawn else None
    popen(self, *args, **kwargs)
subprocess.Popen.__init__ = spawn
from memgauge.cli import main
sys.argv = ["memgauge", *sys.argv[1:]]
code = main()
import json
print(json.dumps(at_spawn[0]))
"""


# each line sampler: reading the lines from outside starts py-spy and a poller before the program
SAMPLERS = pytest.mark.parametrize("sampler", ["inside", "auto"])


@SAMPLERS
def test_nothing_the_start_does_not_need_is_loaded_before_the_program_starts(
    tmp_path: Path, sampler: str
) -> None:
    # every import before the spawn delays the program's first line: typing costs ~6 ms, shutil
    # (with zlib, bz2 and lzma; argparse reads the terminal's width with it) ~2 ms, and a run
    # without a terminal needs neither; the modules that assemble the profile load after the spawn
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    argv = ["run", "-q", "--line-sampler", sampler, "--json", str(tmp_path / "p.json"), str(script)]
    proc = subprocess.run(
        [sys.executable, "-c", LOADED_AT_SPAWN, *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "memgauge.runner._runner" in loaded
    later = {"typing", "shutil", "dataclasses", "json", "memgauge.model", "memgauge.runner._assemble"}
    assert loaded & later == set()


# the program's first line: what it finds loaded, and what the same python loads running it directly
FIRST_LINE = """
import sys
print(" ".join(sorted(sys.modules)))
"""


def test_the_program_finds_loaded_only_what_python_itself_would_load_and_memgauges_own(
    tmp_path: Path,
) -> None:
    # every module the measured process imports before the program is time added to every run
    # (runpy.run_path's pkgutil and typing ~10 ms, json's re and enum ~5 ms, threading ~5 ms on
    # 3.11) and a module the program finds loaded that it would not have run directly
    script = tmp_path / "first.py"
    script.write_text(FIRST_LINE)
    direct = set(subprocess.run([sys.executable, str(script)], capture_output=True, text=True).stdout.split())
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(tmp_path / "p.json"), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    extra = set(proc.stdout.split()) - direct
    assert {m for m in extra if m.startswith("memgauge.capture._")}, "no capture ran"
    # the bootstrap is run as a file, as python runs the script: not python -m, whose runpy
    # loads importlib.util, contextlib, collections and functools (~4 ms); sitecustomize is
    # memgauge's own, which starts capture in every Python process of the run
    launcher = {
        "importlib",
        "importlib.machinery",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "types",
        "warnings",
        "__future__",
        "atexit",
        "_json",
        "_posixsubprocess",
        "sitecustomize",
    }
    heavy = {"typing", "pkgutil", "json", "re", "enum", "threading", "dataclasses", "inspect", "weakref"}
    heavy |= {"runpy", "importlib.util", "contextlib", "collections", "functools", "operator"}
    assert extra & heavy == set()
    assert {m for m in extra if not m.startswith("memgauge")} <= launcher | heavy


@SAMPLERS
def test_a_run_loads_only_what_it_uses(tmp_path: Path, sampler: str) -> None:
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    argv = ["run", "-q", "--line-sampler", sampler, "--json", str(tmp_path / "p.json"), str(script)]
    proc = subprocess.run(
        [sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert {"memgauge.cli.commands.run", "memgauge.runner._assemble", "memgauge.model._profile"} <= loaded
    never = {
        "memgauge.cli.commands.serve",
        "memgauge.cli.commands.sweep",
        "memgauge.cli.commands.submit",
        "memgauge.model._sweep",
        "memgauge.model._fit",
        "memgauge.analysis._sweep",
        "memgauge.analysis._compare",
        "memgauge.render",
        "platform",
        "socket",
        # what the profile of a run without a loop, a GPU or a report needs none of: each is
        # imported after the program ended, where it adds to the run's time (3-5 ms each)
        "memgauge.analysis._advice",
        "memgauge.sections.training._analysis",
        "memgauge.sections.training._analysis_movement",
        "memgauge.sections.gpu._analysis_lines",
        "memgauge.sections.gpu._analysis_snapshot",
        # the sections' parts of the record and their readers, and NVML's modules without a driver
        # (their dataclasses alone cost ~15 ms after the program)
        "memgauge.sections.torch._record",
        "memgauge.sections.gpu._record",
        "memgauge.sections.training._record",
        "memgauge.sections.gpu._assemble",
        "memgauge.sections.training._assemble",
        "memgauge.sections.torch._read",
        "memgauge.sections.training._read",
        "pickle",
        "statistics",
        "pathlib",
        "tempfile",
        "datetime",
        # typing (~2 ms: only Any, and one Generic base, at run time) and shutil with zlib, bz2
        # and lzma (~2 ms: rmtree for the events directory), each after the program
        "typing",
        "shutil",
        "bz2",
        "lzma",
    }
    if not any(os.path.exists(p) for p in ("/proc/driver/nvidia", "/dev/nvidiactl")):
        never |= {"pynvml", "memgauge.sections.gpu._nvml", "memgauge.sections.gpu._nvml_sampler"}
    assert loaded & never == set()


def _cgroup_calls(trace: Path) -> list[tuple[str, str, str]]:
    """(caller's pid, path, what) of every write to a ``cgroup.procs`` (what: the pid written) and
    every ``mkdir`` of a group memgauge names (what: "mkdir"), in the order they began, from
    ``strace -f -y -e trace=write,mkdir``'s output."""
    calls = []
    for line in trace.read_text().splitlines():
        write = re.match(r'(\d+) +write\(\d+<([^>]*/cgroup\.procs)>, "(\d+)"', line)
        mkdir = re.match(r'(\d+) +mkdir\("([^"]*/memgauge-\d+-\d+)"', line)
        if write:
            calls.append((write[1], write[2], write[3]))
        elif mkdir and not os.path.basename(mkdir[2]).startswith("memgauge-events"):
            calls.append((mkdir[1], mkdir[2], "mkdir"))
    return calls


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_the_kernels_wait_for_a_cgroup_join_is_over_before_the_program_is_spawned(tmp_path: Path) -> None:
    # the first move into a cgroup after a quiet while makes the kernel wait an RCU grace period
    # (7-16 ms on the 2-CPU VM), which the program's first process paid joining its new group:
    # memgauge makes the group as it starts, then writes its own pid to its own cgroup (a move to
    # where it is) on a thread, while it parses the options
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    trace = tmp_path / "trace"
    command = [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(tmp_path / "p.json")]
    strace = ["strace", "-f", "-y", "-e", "trace=write,mkdir", "-e", "signal=none", "-o", str(trace)]
    proc = subprocess.run([*strace, *command, str(script)], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and not trace.exists():
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    profile = json.loads((tmp_path / "p.json").read_text())
    group = profile["environment"]["measurement"].get("cgroup")
    if group is None:
        pytest.skip("no memory cgroup for the run here")
    memgauge_pid = str(next(c["pid"] for c in profile["overhead"]["cpu"] if c["what"] == "memgauge process"))
    program_pid = str(profile["processes"][0]["pid"])
    calls = _cgroup_calls(trace)
    made = [i for i, (_, path, what) in enumerate(calls) if what == "mkdir" and path == group]
    joined = [i for i, (_, path, what) in enumerate(calls) if what == program_pid and path.startswith(group)]
    own = [i for i, (caller, _, what) in enumerate(calls) if what == memgauge_pid and caller != what]
    assert made and joined, calls
    # by one of memgauge's threads, to a group memgauge is in (none it made), after the group is
    # made (the move holds the cgroup mutex a mkdir needs) and before the program joins it
    assert own and made[0] < own[0] < joined[0], calls
    assert f"/memgauge-{memgauge_pid}-" not in calls[own[0]][1]

    # --cgroup off: no group to join, no wait to hasten
    trace.unlink()
    off = [*command[:-2], "--cgroup", "off", "--json", str(tmp_path / "p.json")]
    proc = subprocess.run([*strace, *off, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _cgroup_calls(trace) == []


def test_a_group_made_ahead_that_no_run_takes_is_removed(tmp_path: Path) -> None:
    # the group is made before the options are parsed: a command line they refuse, or --help,
    # leaves none behind
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    from memgauge.watcher import current_host

    dirs = [parent for parent, _ in current_host().own_dirs().values()]
    for argv in (["--interval", "0", str(script)], ["--help"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "memgauge", "run", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 64), err  # --help; a usage error
        left = [name for d in dirs for name in os.listdir(d) if name.startswith(f"memgauge-{proc.pid}-")]
        assert left == []


def test_the_program_sees_itself_started_as_python_would_start_it(tmp_path: Path) -> None:
    # the bootstrap is a file python runs as the script: the program finds the sys.path[0],
    # sys.argv and __main__ of `python script.py` and of `python -m module`, and its process's
    # command line in the profile is the one the user would have typed
    probe = (
        "import json, os, sys\n"
        "main = sys.modules['__main__']\n"
        "seen = [sys.path[0], sys.argv, main.__name__, getattr(main, '__file__', None), os.getcwd()]\n"
        "print(json.dumps(seen))\n"
    )
    (tmp_path / "probe.py").write_text(probe)
    (tmp_path / "pkgprobe").mkdir()
    (tmp_path / "pkgprobe" / "__init__.py").write_text("")
    (tmp_path / "pkgprobe" / "__main__.py").write_text(probe)
    for target in (["probe.py", "a", "-b"], ["-m", "pkgprobe", "a", "-b"]):
        direct = subprocess.run([sys.executable, *target], capture_output=True, text=True, cwd=tmp_path)
        r = run_memgauge(["-q", *target], tmp_path)
        assert r.returncode == direct.returncode == 0, r.stderr
        assert json.loads(r.stdout) == json.loads(direct.stdout)
        assert r.profile is not None
        assert r.profile["processes"][0]["cmdline"] == [sys.executable, *target]


def test_the_terminal_report_loads_its_own_renderer_alone(tmp_path: Path) -> None:
    # the report of every run without -q: the render face loaded every renderer (the comparisons'
    # with their analyses, the HTML pages', the sweeps', fits' and plans'), ~28 ms after the program
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    argv = ["run", "--json", str(tmp_path / "p.json"), str(script)]
    proc = subprocess.run(
        [sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "memgauge's own cost:" in proc.stderr  # the report was shown
    loaded = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "memgauge.render._terminal" in loaded
    others = {
        "memgauge.render._compare",
        "memgauge.render._html",
        "memgauge.render._html_compare",
        "memgauge.render._html_sweep",
        "memgauge.render._fit_html",
        "memgauge.render._fit_text",
        "memgauge.render._plan",
        "memgauge.render._remedies_html",
        "memgauge.render._verdict",
        "memgauge.render._document_report",
        "memgauge.render._sweep_terminal",
        "memgauge.render._json",
        "memgauge.render._markdown",
        # the sweep's records, for summarize() beside the report's figures: pathlib, urllib, ...
        "memgauge.model._sweep",
        "pathlib",
        # the sections' builders with their analyses and records, for a run that has none of
        # them (~30 ms): their folders' "shows" parts say so
        "memgauge.sections.torch._report",
        "memgauge.sections.torch._analysis",
        "memgauge.sections.training._report",
        "memgauge.sections.training._analysis",
        "memgauge.sections.training._record",
        "memgauge.sections.gpu._report",
        "memgauge.sections.gpu._analysis",
    }
    assert loaded & others == set()


MARKER = """
import threading, time
LOADED = (threading.current_thread().name, time.monotonic())
"""


def test_what_the_caller_uses_after_the_run_loads_while_the_program_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the report's renderer (rich, the document) is ~50 ms of imports: loaded on the prewarm
    # thread while the program runs, not after it, where it adds to every run's time
    import compileall
    import importlib.util

    from memgauge.runner import RunOptions, _state, parse_target, run_program

    # the prewarm loads only where memgauge has bytecode (an install has it; a checkout under
    # PYTHONDONTWRITEBYTECODE has none): its stand-in module compiled, as pip would
    compileall.compile_file(_state.__file__, quiet=2)
    if not os.path.exists(importlib.util.cache_from_source(_state.__file__)):
        pytest.skip("no bytecode can be written for memgauge here: the prewarm loads nothing")
    (tmp_path / "report_marker.py").write_text(MARKER)
    monkeypatch.syspath_prepend(str(tmp_path))
    script = tmp_path / "sleeper.py"
    ended = tmp_path / "ended"
    end = f"open({str(ended)!r}, 'w').write(repr(time.monotonic()))"
    script.write_text(f"import time\ntime.sleep(1.0)\n{end}\n")
    options = RunOptions(lines="off")
    options.prewarm = ("report_marker",)
    profile = run_program(parse_target([str(script)]), options)
    assert profile.exit.code == 0
    import report_marker  # type: ignore[import-not-found]  # the file written above

    thread, at = report_marker.LOADED
    assert thread == "memgauge-prewarm"
    assert at < float(ended.read_text())
