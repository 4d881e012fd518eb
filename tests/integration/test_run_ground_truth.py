"""`memgauge run` against programs whose peaks are known by construction and against the kernel's
own figures for the same programs run alone."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgauge.watcher._cgroup import create_memory_group
from tests.conftest import MIB, PROGRAMS, kernel_hwm_alone, run_memgauge


def _cgroup_available() -> bool:
    group, _ = create_memory_group()
    if group is None:
        return False
    group.close()
    return True


HAS_CGROUP = _cgroup_available()
needs_cgroup = pytest.mark.skipif(not HAS_CGROUP, reason="no cgroup memory controller on this host")


@pytest.mark.parametrize("cgroup", ["auto", "off"])
def test_freed_spike_tree_peak_within_3_percent_of_kernel(tmp_path: Path, cgroup: str) -> None:
    script = PROGRAMS / "spike.py"
    alone = kernel_hwm_alone(script, tmp_path)
    r = run_memgauge(["--cgroup", cgroup, str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "100"
    peak = r.profile["peak"]  # type: ignore[index]
    assert abs(peak["resident_bytes"] - alone) / alone <= 0.03, (peak, alone)
    # the spike itself is in the peak: 800 MiB above any plausible interpreter baseline
    assert peak["resident_bytes"] >= 800 * MIB
    if cgroup == "off" or not HAS_CGROUP:
        assert peak["method"].startswith("sampled")
        assert peak["includes_page_cache"] is False
    else:
        assert peak["method"].startswith("cgroup-v")
        assert peak["includes_page_cache"] is True
    # one process: its exact VmHWM, reported by the process itself at exit, is the kernel's figure
    main = r.profile["processes"][0]  # type: ignore[index]
    assert main["peak_exact"] is True
    assert abs(main["peak_resident_bytes"] - alone) / alone <= 0.03


def test_spawned_child_holding_the_peak_counts_parent_and_child(tmp_path: Path) -> None:
    r = run_memgauge([str(PROGRAMS / "spawn_child_peak.py")], tmp_path, env={"TMPDIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["150", "True"]
    p = r.profile
    assert p is not None
    # parent's 150 MiB and child's 400 MiB were resident at the same time
    assert p["peak"]["resident_bytes"] >= 550 * MIB
    assert p["peak"]["resident_bytes"] <= 550 * MIB + 120 * MIB  # two interpreters' baselines at most
    children = [q for q in p["processes"] if "spawn_main" in " ".join(q["cmdline"])]
    assert children, [q["cmdline"] for q in p["processes"]]
    assert max(q["peak_resident_bytes"] for q in children) >= 400 * MIB
    assert len(p["processes"]) >= 2


def test_peak_built_in_a_thread(tmp_path: Path) -> None:
    r = run_memgauge([str(PROGRAMS / "thread_peak.py")], tmp_path)
    assert r.returncode == 0, r.stderr
    peak = r.profile["peak"]["resident_bytes"]  # type: ignore[index]
    assert 500 * MIB <= peak <= 500 * MIB + 60 * MIB


def test_streams_stdin_argv_cwd_and_exit_code_pass_through(tmp_path: Path) -> None:
    script = PROGRAMS / "streams.py"
    direct = subprocess.run(
        [sys.executable, str(script), "a", "--b"], input="hello", capture_output=True, text=True, cwd=tmp_path
    )
    r = run_memgauge([str(script), "a", "--b"], tmp_path, input="hello")
    assert r.returncode == direct.returncode == 3
    # stdout is the program's alone: memgauge's report never goes there
    assert r.stdout == direct.stdout
    assert r.stderr.startswith(direct.stderr)
    assert "resident peak" in r.stderr and "resident peak" not in r.stdout
    assert r.profile is not None
    assert r.profile["exit"] == {
        "code": 3,
        "signal": None,
        "signal_name": None,
        "oom_killed": False,
        "stopped_by": None,
    }


def test_module_target_runs_like_python_dash_m(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "train.py").write_text("import sys\nprint(sys.argv[1:], __name__)\n")
    r = run_memgauge(["-m", "mypkg.train", "--epochs", "3"], tmp_path)
    direct = subprocess.run(
        [sys.executable, "-m", "mypkg.train", "--epochs", "3"], capture_output=True, text=True, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == direct.stdout == "['--epochs', '3'] __main__\n"
    assert r.profile["command"] == ["python", "-m", "mypkg.train", "--epochs", "3"]  # type: ignore[index]


HELD_TO_THE_END = """
import atexit, sys

class Held:
    def __del__(self, write=sys.stdout.write, finalizing=sys.is_finalizing):
        write(f"freed, finalizing={finalizing()}\\n")

def uses_globals():
    return held

held = Held()
atexit.register(lambda: sys.stdout.write("the program's exit handler\\n"))
"""


def test_a_scripts_globals_are_freed_after_the_exit_handlers_not_by_the_last_gc(tmp_path: Path) -> None:
    # memgauge keeps a script's globals to the end (its exit handlers read what the program holds),
    # then lets them go by reference counts, as python frees a script's own; left in the cycle
    # through the script's functions, the collector's last pass freed them object by object (0.9 s
    # more on 2 million dicts: bench/workloads/pyobjects.py)
    script = tmp_path / "held.py"
    script.write_text(HELD_TO_THE_END)
    r = run_memgauge([str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "the program's exit handler\nfreed, finalizing=False\n"


def test_any_command_whole_tree(tmp_path: Path) -> None:
    # a shell that starts two Python processes one after the other: both are in the tree
    code = "import sys; b = b'x' * (120 * 2**20); print(len(b) >> 20)"
    r = run_memgauge(
        ["--", "sh", "-c", f'{sys.executable} -c "{code}"; {sys.executable} -c "{code}"'], tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["120", "120"]
    p = r.profile
    assert p is not None
    pythons = [q for q in p["processes"] if q["cmdline"][:1] == [sys.executable]]
    assert len(pythons) == 2, [q["cmdline"] for q in p["processes"]]
    assert all(q["peak_resident_bytes"] >= 120 * MIB for q in pythons)
    assert p["peak"]["resident_bytes"] >= 120 * MIB


def test_the_watcher_samples_without_a_gap_from_the_start(tmp_path: Path) -> None:
    # a program of a fifth of a second: the watcher's samples are its only view of children that
    # live less than that, so none of its own work (imports, first reads) may stall them. Compiled
    # from source (as where PYTHONDONTWRITEBYTECODE is set) memgauge's own imports took 130 ms.
    r = run_memgauge(
        ["--interval", "0.01", "--", sys.executable, "-c", "import time; time.sleep(0.2)"],
        tmp_path,
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert r.returncode == 0, r.stderr
    t = r.profile["timeline"]["t_seconds"]  # type: ignore[index]
    gaps = [b - a for a, b in itertools.pairwise(t)]
    assert len(t) >= 10 and max(gaps) < 0.05, [round(g, 3) for g in gaps]


def test_a_script_over_before_the_first_sample_is_charged_its_bytes(tmp_path: Path) -> None:
    # 20 MiB built and the script done within a sample or two: before the bootstrap named the
    # program, 7 runs of 10 put all of it on `<startup>` (the interpreter's start)
    script = tmp_path / "short.py"
    script.write_text('block = b"\\x01" * (20 << 20)\n')
    # the in-process sampler's case: read from outside, a script over within one of py-spy's
    # sampling periods is not always seen, and part of its bytes stays on `<startup>`
    # (docs/measurement.md, "what is lost reading from outside")
    for _ in range(4):
        r = run_memgauge([str(script)], tmp_path, env={"MEMGAUGE_LINE_SAMPLER": "inside"})
        assert r.returncode == 0 and r.profile is not None, r.stderr
        mine = sum(a["bytes"] for a in r.profile["peak"]["attribution"] if a["file"] == str(script))
        assert mine >= 19 * MIB, r.profile["peak"]["attribution"]


def test_sigkill_keeps_everything_measured(tmp_path: Path) -> None:
    r = run_memgauge([str(PROGRAMS / "killed.py")], tmp_path)
    assert r.returncode == 128 + signal.SIGKILL
    p = r.profile
    assert p is not None
    assert p["exit"]["code"] is None
    assert p["exit"]["signal"] == signal.SIGKILL and p["exit"]["signal_name"] == "SIGKILL"
    assert p["exit"]["oom_killed"] is False
    assert p["peak"]["resident_bytes"] >= 200 * MIB
    (doomed,) = p["phases"]
    assert doomed["name"] == "doomed" and doomed["complete"] is False
    assert "killed by SIGKILL" in r.stderr


@needs_cgroup
def test_oom_kill_is_reported(tmp_path: Path) -> None:
    from memgauge.runner import RunOptions, Target, run_program

    profile = run_program(
        Target("script", str(PROGRAMS / "oom.py")), RunOptions(memory_limit_bytes=300 * MIB)
    )
    assert profile.exit.signal == signal.SIGKILL
    assert profile.exit.oom_killed is True
    assert 250 * MIB <= profile.peak.resident_bytes <= 300 * MIB + profile.peak.error_bound_bytes
    assert any("OOM" in n for n in profile.peak.notes)


def test_phases_have_known_peaks_and_nest(tmp_path: Path) -> None:
    r = run_memgauge([str(PROGRAMS / "phases.py")], tmp_path)
    assert r.returncode == 0, r.stderr
    p = r.profile
    assert p is not None
    by_name = {ph["name"]: ph for ph in p["phases"]}
    assert set(by_name) == {"load", "parse", "fit", "child-work"}
    base = by_name["load"]["start_resident_bytes"]
    # the interpreter's own resident size moves by a few pages between samples
    slack, low = 25 * MIB, 4 * MIB

    def growth(name: str) -> int:
        ph = by_name[name]
        return ph["peak_resident_bytes"] - base

    # load holds 300 MiB and, inside parse, 100 MiB more at once
    assert 400 * MIB - low <= growth("load") <= 400 * MIB + slack
    assert 400 * MIB - low <= growth("parse") <= 400 * MIB + slack
    # fit runs after load's memory is freed: 200 MiB, not load's 400
    assert 200 * MIB - low <= growth("fit") <= 200 * MIB + slack
    assert all(ph["peak_exact"] and ph["complete"] for ph in p["phases"])
    # nesting: parse is a child of load
    phases = p["phases"]
    parse = by_name["parse"]
    assert parse["depth"] == 1 and phases[parse["parent"]]["name"] == "load"
    # the phase in the forked child carries the child's pid and its own 50 MiB
    child = by_name["child-work"]
    assert child["pid"] != by_name["load"]["pid"]
    assert child["peak_resident_bytes"] - child["start_resident_bytes"] >= 50 * MIB - slack
    assert child["start_seconds"] > by_name["fit"]["end_seconds"]
    # the phase table is in the report
    assert "child-work" in r.stderr and "parse" in r.stderr


def test_process_peak_survives_phase_resets(tmp_path: Path) -> None:
    # phases reset VmHWM; the process's own peak (400 MiB + baseline, in load) must not be lost
    r = run_memgauge([str(PROGRAMS / "phases.py")], tmp_path)
    p = r.profile
    assert p is not None
    main = next(q for q in p["processes"] if q["pid"] == p["phases"][0]["pid"])
    assert main["peak_resident_bytes"] >= 400 * MIB
    assert p["peak"]["resident_bytes"] >= 400 * MIB


def _wait_for(path: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("sig", "code", "name"), [(signal.SIGTERM, 7, "SIGTERM"), (signal.SIGINT, 8, "SIGINT")]
)
def test_signals_sent_to_memgauge_reach_the_program_once(
    tmp_path: Path, sig: signal.Signals, code: int, name: str
) -> None:
    marker = tmp_path / "got"
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge", "run", "--no-json", str(PROGRAMS / "signals.py"), str(marker)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    _wait_for(Path(str(marker) + ".ready"))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert marker.read_text() == name


def test_terminal_ctrl_c_reaches_the_program_once(tmp_path: Path) -> None:
    # a real terminal: Ctrl-C makes the kernel send SIGINT to the whole foreground process group,
    # which holds memgauge and the program; memgauge must not forward a second one
    import pty

    marker = tmp_path / "got"
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child execs at once
        os.chdir(tmp_path)
        os.execv(
            sys.executable,
            [sys.executable, "-m", "memgauge", "run", "--no-json", str(PROGRAMS / "signals.py"), str(marker)],
        )
    try:
        _wait_for(Path(str(marker) + ".ready"))
        os.write(master, b"\x03")
        output = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 8, output.decode(errors="replace")
    assert marker.read_text() == "SIGINT"


def test_inprocess_profile_inside_run_does_not_erase_the_process_peak(tmp_path: Path) -> None:
    # memgauge.profile() resets VmHWM; without the runner being told, a 300 MiB peak before it is lost
    script = tmp_path / "nested.py"
    script.write_text(
        "import memgauge\n"
        "b = b'x' * (300 * 2**20)\n"
        "del b\n"
        "with memgauge.profile():\n"
        "    with memgauge.phase('inner'):\n"
        "        pass\n"
    )
    r = run_memgauge(["--cgroup", "off", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    p = r.profile
    assert p is not None
    assert p["processes"][0]["peak_resident_bytes"] >= 300 * MIB
    assert p["peak"]["resident_bytes"] >= 300 * MIB


@needs_cgroup
def test_memory_limit_of_the_enclosing_cgroup_is_found(tmp_path: Path) -> None:
    # the program runs inside a group limited to 512 MiB: the limit memgauge reports for a process
    # is the smallest over its cgroup and that cgroup's ancestors
    from memgauge.runner import RunOptions, Target, run_program

    script = tmp_path / "limit.py"
    out = tmp_path / "limit.txt"
    script.write_text(
        "from memgauge.watcher._cgroup import memory_limit\n"
        f"open({str(out)!r}, 'w').write(str(memory_limit()))\n"
    )
    profile = run_program(Target("script", str(script)), RunOptions(memory_limit_bytes=512 * MIB))
    assert profile.exit.code == 0
    assert out.read_text() == str(512 * MIB)
    assert profile.environment["measurement"]["memory_limit_bytes"] == 512 * MIB
