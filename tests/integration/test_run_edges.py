"""Edge cases of `memgauge run` found in review, each reproduced with a real program."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import MIB, run_memgauge


def test_file_is_absolute_and_survives_a_change_of_directory(tmp_path: Path) -> None:
    d = tmp_path / "dir with space"
    d.mkdir()
    script = d / "my script.py"
    script.write_text("import os\nos.chdir('/')\nprint(os.path.exists(__file__), __file__)\n")
    direct = subprocess.run(
        [sys.executable, "dir with space/my script.py"], capture_output=True, text=True, cwd=tmp_path
    )
    r = run_memgauge(["dir with space/my script.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == direct.stdout
    assert r.stdout.startswith("True ")


# what a script sees of how it was started, its module's names and, at exit, its __main__
SEES = """
import atexit, sys
print(sys.argv, __name__, __file__, type(__loader__).__name__, __spec__, __package__)
print(type(__builtins__).__name__, __cached__, __doc__)
atexit.register(lambda: print(sys.modules["__main__"].__dict__ is globals()))
"""


def test_a_script_sees_what_python_gives_it_run_directly(tmp_path: Path) -> None:
    # runpy.run_path gave sys.argv[0] the absolute path, no __loader__, "" as __package__ and a
    # dict as __builtins__, and put the bootstrap back as __main__ before the exit handlers ran
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "sees.py").write_text(SEES)
    argv = ["sub/sees.py", "a", "--b"]
    direct = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=tmp_path)
    r = run_memgauge(["-q", *argv], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == direct.stdout
    assert r.stdout.startswith("['sub/sees.py', 'a', '--b'] __main__ ") and r.stdout.endswith("True\n")


def test_uncaught_exception_traceback_shows_only_the_programs_frames(tmp_path: Path) -> None:
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise ValueError('boom')\nf()\n")
    r = run_memgauge(["-q", str(script)], tmp_path)
    assert r.returncode == 1
    assert "ValueError: boom" in r.stderr
    assert "_child.py" not in r.stderr and "_launch.py" not in r.stderr and "runpy" not in r.stderr
    assert r.stderr.count('File "') == 2  # the module level and f()


def test_import_error_inside_a_module_is_the_programs_not_a_missing_module(tmp_path: Path) -> None:
    pkg = tmp_path / "brokenpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import nonexistent_dep_xyz\n")
    (pkg / "sub.py").write_text("print('never')\n")
    direct = subprocess.run(
        [sys.executable, "-m", "brokenpkg.sub"], capture_output=True, text=True, cwd=tmp_path
    )
    r = run_memgauge(["-q", "-m", "brokenpkg.sub"], tmp_path)
    assert r.returncode == direct.returncode == 1
    assert "No module named 'nonexistent_dep_xyz'" in r.stderr
    assert "memgauge: error" not in r.stderr


def test_package_without_main_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "nomain").mkdir()
    (tmp_path / "nomain" / "__init__.py").write_text("")
    r = run_memgauge(["-m", "nomain"], tmp_path)
    assert r.returncode == 66
    assert r.stderr.strip() == (
        "memgauge: error: No module named nomain.__main__; "
        "'nomain' is a package and cannot be directly executed"
    )


def test_orphaned_grandchild_is_measured_without_a_cgroup(tmp_path: Path) -> None:
    # double fork: the grandchild is orphaned at once, re-parented to memgauge (a subreaper). Without a
    # cgroup the tree's peak is a sampled sum: the hold lasts 2 s, many sampling intervals, so that a loaded
    # machine (two busy loops beside it left a 0.6 s hold unsampled in 5 runs of 8) still samples it
    script = tmp_path / "orphan.py"
    script.write_text(
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        b = b'x' * (300 * 2**20)\n"
        "        time.sleep(2.0)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "time.sleep(2.5)\n"
    )
    r = run_memgauge(["--cgroup", "off", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    p = r.profile
    assert p is not None
    assert p["peak"]["resident_bytes"] >= 300 * MIB
    assert max(q["peak_resident_bytes"] for q in p["processes"]) >= 300 * MIB


def test_a_program_that_execs_keeps_its_record(tmp_path: Path) -> None:
    script = tmp_path / "execs.py"
    script.write_text(
        "import os, time\nb = b'x' * (400 * 2**20)\ntime.sleep(0.3)\nos.execvp('sleep', ['sleep', '0.3'])\n"
    )
    for mode in ("auto", "off"):
        r = run_memgauge(["--cgroup", mode, str(script)], tmp_path)
        assert r.returncode == 0, r.stderr
        p = r.profile
        assert p is not None
        by_cmd = {q["cmdline"][0].rsplit("/", 1)[-1]: q for q in p["processes"]}
        assert by_cmd["sleep"]["peak_resident_bytes"] < 50 * MIB
        python = [q for q in p["processes"] if q["cmdline"][:1] == [sys.executable]]
        assert python and python[0]["peak_resident_bytes"] >= 400 * MIB, mode


def test_closed_stderr_keeps_exit_code_and_profile(tmp_path: Path) -> None:
    script = tmp_path / "three.py"
    script.write_text("import sys\nsys.exit(3)\n")
    out = tmp_path / "p.json"
    cmd = f"{sys.executable} -m memgauge run --json {out} {script} 2>&-"
    r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 3
    assert out.exists()


def test_a_daemon_outliving_memgauge_is_not_broken_by_phases(tmp_path: Path) -> None:
    # the events directory is gone when the daemon writes: its phases must stay no-ops, not raise
    marker = tmp_path / "daemon.txt"
    script = tmp_path / "daemon.py"
    script.write_text(
        "import os, sys, time, memgauge\n"
        "with memgauge.phase('parent'):\n"
        "    pass\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(0.5)\n"
        "    try:\n"
        "        with memgauge.phase('late'):\n"
        "            pass\n"
        f"        open({str(marker)!r}, 'w').write('ok')\n"
        "    except BaseException as e:\n"
        f"        open({str(marker)!r}, 'w').write(repr(e))\n"
        "    os._exit(0)\n"
    )
    r = run_memgauge([str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text() == "ok"


def test_nothing_is_left_behind(tmp_path: Path) -> None:
    from memgauge.watcher._cgroup import _own_dirs

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # left by a memgauge that was SIGKILLed (pid 2**22 + 1 is above any pid_max): removed on the next run
    (tmp / f"memgauge-events-{2**22 + 1}-123").mkdir()
    script = tmp_path / "x.py"
    script.write_text("import memgauge\nwith memgauge.phase('a'):\n    pass\n")
    before = set(os.listdir(_own_dirs()["v1"][0])) if "v1" in _own_dirs() else set()
    r = run_memgauge([str(script)], tmp_path, env={"TMPDIR": "tmp"})  # relative on purpose
    assert r.returncode == 0, r.stderr
    assert [ph["name"] for ph in r.profile["phases"]] == ["a"]  # type: ignore[index]
    assert os.listdir(tmp) == []
    if "v1" in _own_dirs():
        left = {n for n in set(os.listdir(_own_dirs()["v1"][0])) - before if n.startswith("memgauge-")}
        assert not left


def test_phase_peak_survives_a_profile_opened_inside_it(tmp_path: Path) -> None:
    script = tmp_path / "inner_profile.py"
    script.write_text(
        "import memgauge\n"
        "with memgauge.phase('outer'):\n"
        "    b = b'x' * (300 * 2**20)\n"
        "    del b\n"
        "    with memgauge.profile():\n"
        "        pass\n"
    )
    r = run_memgauge([str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    (outer,) = r.profile["phases"]  # type: ignore[index]
    assert outer["peak_resident_bytes"] >= 300 * MIB


def test_a_terminal_of_0_columns_still_gets_the_report_and_the_profile_line(tmp_path: Path) -> None:
    # a fresh pty reports 0 columns and 0 rows, as a serial console does: the report was dropped
    # whole, the `profile:` line with it (a ValueError from the width, swallowed)
    import pty

    script = tmp_path / "hello.py"
    script.write_text("x = bytearray(20 << 20)\nprint('hello')\n")
    master, slave = pty.openpty()
    assert os.get_terminal_size(slave).columns == 0
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memgauge", "run", "--json", str(tmp_path / "p.json"), str(script)],
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=tmp_path,
        )
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the pty
                break
            if not chunk:
                break
            err += chunk
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
    text = err.decode(errors="replace")
    assert proc.returncode == 0 and out == b"hello\n"
    assert "resident peak" in text and f"profile: {tmp_path / 'p.json'}" in text


def test_a_report_that_fails_to_render_still_says_where_the_profile_is(tmp_path: Path) -> None:
    # the renderer is made to fail through a real import hook in the child: the run's exit code
    # stands, the profile is saved, and stderr says why the report is missing
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(
        "import memgauge.render as r\n"
        "def broken(self, profile):\n"
        "    raise RuntimeError('renderer defect')\n"
        "r.TerminalRenderer.render = broken\n"
    )
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    r = run_memgauge([str(script)], tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0 and r.stdout == "hello\n", r.stderr
    assert "memgauge: the report could not be rendered (RuntimeError: renderer defect)" in r.stderr
    assert f"profile: {tmp_path / 'profile.json'}" in r.stderr and r.profile is not None
