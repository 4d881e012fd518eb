"""Line sampling must not change what the program does or sees; edge cases found in review, each
reproduced with a real program under `memgauge run`."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from memgauge.capture import _procfs, _sampler
from tests.conftest import run_memgauge

AUTOSTART = Path(_sampler.__file__).parent / "_autostart" / "sitecustomize.py"


def run_ok(args: list[str], tmp_path: Path, **kw: Any) -> tuple[str, dict[str, Any]]:
    r = run_memgauge(args, tmp_path, **kw)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    return r.stdout, r.profile


def test_a_signal_the_program_blocks_and_waits_for_does_not_kill_it(tmp_path: Path) -> None:
    # the kernel gives a process-wide signal to any thread that does not block it: had the
    # sampler's thread not blocked every signal, SIGUSR1's default action would kill the program
    script = tmp_path / "sigwait.py"
    script.write_text(
        "import os, signal, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
        "time.sleep(0.1)\n"
        "os.kill(os.getpid(), signal.SIGUSR1)\n"
        "print('got', signal.sigtimedwait({signal.SIGUSR1}, 5.0) is not None)\n"
    )
    out, _ = run_ok([str(script)], tmp_path)
    assert out == "got True\n"


def test_the_program_sees_no_extra_thread(tmp_path: Path) -> None:
    script = tmp_path / "threads.py"
    script.write_text(
        "import threading, time\ntime.sleep(0.05)\n"
        "print(threading.active_count(), [t.name for t in threading.enumerate()])\n"
    )
    out, profile = run_ok([str(script)], tmp_path)
    assert out == "1 ['MainThread']\n"
    assert profile["lines"], "sampling was on"


def test_cpu_of_a_child_forked_with_os_fork_goes_to_its_line(tmp_path: Path) -> None:
    # after os.fork the Thread object of the forking thread keeps the parent's native id
    script = tmp_path / "forkcpu.py"
    script.write_text(
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    end = time.monotonic() + 1.0\n"
        "    while time.monotonic() < end: pass\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    _, profile = run_ok([str(script)], tmp_path)
    main = profile["processes"][0]["pid"]
    child = [s for s in profile["lines"] if s["pid"] != main and s["line"] == 4]
    assert child, profile["lines"]
    assert sum(s["cpu_python_seconds"] for s in child) >= 0.6, child
    native = sum(s["cpu_native_seconds"] for s in profile["lines"] if s["pid"] != main)
    assert native < 0.2, profile["lines"]


def test_a_changed_switch_interval_does_not_make_python_code_native(tmp_path: Path) -> None:
    script = tmp_path / "switch.py"
    script.write_text(
        # 1.5 s of this thread's own CPU time, not of the wall clock: a loaded machine gives it
        # fewer CPU seconds per wall second, and the assertion is about CPU seconds
        "import sys, time\nsys.setswitchinterval(0.1)\nend = time.thread_time() + 1.5\ns = 0\n"
        "while time.thread_time() < end:\n"
        "    s += sum(i * i for i in range(100))\n"
    )
    _, profile = run_ok([str(script)], tmp_path)
    rows = [s for s in profile["lines"] if s["file"] == str(script) and s["line"] in (5, 6)]
    py = sum(s["cpu_python_seconds"] for s in rows)
    native = sum(s["cpu_native_seconds"] for s in rows)
    # and none of it lost: a sample takes the GIL from the loop several times (up to 100 ms each),
    # and the stretch from the last sample to the program's end was dropped (0.72-1.45 s of 1.5)
    assert py >= 0.8 * (py + native) and py + native >= 1.35, rows


def test_sampling_never_imports_the_programs_own_modules(tmp_path: Path) -> None:
    # a command (not a script) runs past the first flush of the lines file; the program's
    # directory holds a re.py, which the sampler would import if it imported json late
    project = tmp_path / "project"
    project.mkdir()
    (project / "re.py").write_text("import sys\nsys.stderr.write('USER re.py imported\\n')\n")
    (project / "main.py").write_text(
        "import time\nend = time.monotonic() + 1.2\nwhile time.monotonic() < end: pass\nprint('done')\n"
    )
    r = run_memgauge(["--", sys.executable, "project/main.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done\n"
    assert "USER re.py" not in r.stderr and "Exception in thread" not in r.stderr, r.stderr
    assert r.profile is not None
    assert any(s["file"].endswith("main.py") for s in r.profile["lines"])


def test_no_sampler_starts_between_subprocess_fork_and_exec(tmp_path: Path) -> None:
    # a preexec_fn runs in the forked child before exec: long enough here for a sampler started
    # by the fork hook to write the child's lines, under the function's name
    script = tmp_path / "preexec.py"
    script.write_text(
        "import subprocess, time\n"
        "def slow_preexec():\n"
        "    end = time.monotonic() + 0.8\n"
        "    while time.monotonic() < end: pass\n"
        "subprocess.run(['true'], preexec_fn=slow_preexec, check=True)\n"
        "print('ok')\n"
    )
    out, profile = run_ok([str(script)], tmp_path)
    assert out == "ok\n"
    main = profile["processes"][0]["pid"]
    assert not [s for s in profile["lines"] if s["pid"] != main], profile["lines"]


def test_lib_mode_shows_no_memgauge_start_up_and_no_runpy_frames(tmp_path: Path) -> None:
    script = tmp_path / "libt.py"
    script.write_text(
        "import json, time\nend = time.monotonic() + 0.5\n"
        "while time.monotonic() < end:\n    json.dumps({'a': list(range(100))})\n"
    )
    _, profile = run_ok(["--lib", str(script)], tmp_path)
    assert any("json" in s["file"] for s in profile["lines"]), "library frames are kept"
    for a in profile["peak"]["attribution"]:
        assert "runpy" not in a["file"] and not any("runpy" in c for c in a["stack"]), a
        # a library's frame is the program's (its own `import json` loads re, enum, ...: nothing
        # of the bootstrap's is loaded for it), memgauge's never
        assert a["file"] in ("<startup>", "<memgauge>", str(script)) or "memgauge" not in a["file"], a
    assert not any("runpy" in s["file"] or "memgauge" in s["file"] for s in profile["lines"])


def test_the_autostart_file_parses_under_any_python() -> None:
    # every Python a program starts imports it (Python 2 included): no annotations, no f-strings
    tree = ast.parse(AUTOSTART.read_text())
    for node in ast.walk(tree):
        assert not isinstance(node, ast.JoinedStr), ast.dump(node)
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None and all(a.annotation is None for a in node.args.args)
        assert not isinstance(node, ast.AnnAssign)


def test_autostart_runs_the_sitecustomize_it_shadows(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.memgauge_test_marker = __file__\n")
    script = tmp_path / "p.py"
    script.write_text("import subprocess, sys\nprint(getattr(sys, 'memgauge_test_marker', None))\n")
    out, _ = run_ok([str(script)], tmp_path, env={"PYTHONPATH": str(site)})
    assert out == f"{site / 'sitecustomize.py'}\n"


def test_thread_stat_files_kept_open_are_capped(tmp_path: Path) -> None:
    go = threading.Event()
    tids: list[int] = []

    def wait() -> None:
        tids.append(threading.get_native_id())
        go.wait()

    threads = [threading.Thread(target=wait) for _ in range(_procfs.STAT_FDS + 40)]
    for t in threads:
        t.start()
    try:
        sampler = _sampler.Sampler(str(tmp_path))
        before = len(os.listdir("/proc/self/fd"))
        for tid in list(tids):
            sampler.threads.running(sampler.threads.state(tid), tid)
        assert sampler.threads.stat_fds == _procfs.STAT_FDS
        assert len(os.listdir("/proc/self/fd")) - before == _procfs.STAT_FDS
    finally:
        go.set()
        for t in threads:
            t.join()


def test_subprocess_python_of_another_version_is_not_disturbed(tmp_path: Path) -> None:
    # the oldest other CPython on the machine, if any: the autostart must do nothing there
    others = sorted(Path("/root/.pyenv/versions").glob("3.[6-9]*/bin/python3"))
    if not others:
        import pytest

        pytest.skip("no other Python installed")
    script = tmp_path / "other.py"
    script.write_text(
        f"import subprocess\nr = subprocess.run([{str(others[0])!r}, '-c', 'print(1)'], "
        "capture_output=True, text=True)\nprint(r.stdout.strip(), repr(r.stderr))\n"
    )
    direct = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    out, _ = run_ok([str(script)], tmp_path)
    assert out == direct.stdout == "1 ''\n"


def test_a_bad_os_exit_argument_raises_as_usual_and_sampling_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "badexit.py"
    script.write_text(
        "import os, time\n"
        "try:\n    os._exit(3.5)\nexcept TypeError as e:\n    print('TypeError')\n"
        "end = time.monotonic() + 0.5\nwhile time.monotonic() < end: pass\n"
    )
    out, profile = run_ok([str(script)], tmp_path)
    assert out == "TypeError\n"
    busy = [s for s in profile["lines"] if s["file"] == str(script) and s["line"] == 7]
    assert busy and busy[0]["cpu_python_seconds"] > 0.3, profile["lines"]


def test_code_generated_by_libraries_is_folded_but_python_c_is_the_users(tmp_path: Path) -> None:
    # namedtuple's __new__ is exec'd code ("<string>"): its time belongs to the line calling it
    script = tmp_path / "nt.py"
    script.write_text(
        "import collections, time\nP = collections.namedtuple('P', 'a b')\nout = []\n"
        "end = time.monotonic() + 0.5\nwhile time.monotonic() < end:\n    out.append(P(1, 2))\n"
    )
    _, profile = run_ok([str(script)], tmp_path)
    assert not any(s["file"] == "<string>" for s in profile["lines"]), profile["lines"]
    assert any(s["file"] == str(script) and s["line"] == 6 for s in profile["lines"])
    code = "import time\nend = time.monotonic() + 0.5\nwhile time.monotonic() < end: pass\n"
    _, profile = run_ok(["--", sys.executable, "-c", code], tmp_path)
    busy = [s for s in profile["lines"] if s["file"] == "<string>" and s["line"] == 3]
    assert busy and busy[0]["cpu_python_seconds"] > 0.3, profile["lines"]
