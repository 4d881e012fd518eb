"""The main commands on hosts that give memgauge less: run as an unprivileged user (an unused uid,
through ``setpriv``), without cgroup delegation (the cgroup root pointed, through
``MEMGAUGE_CGROUP_ROOT``, at a tree the user cannot write, a missing one, or a read-only mount).
Each feature works, or its report says in one line what it could not do and which figure replaced
it (docs/hosts.md). The peaks are checked against programs whose peak is known by construction."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge._env import ENV_CGROUP_ROOT
from tests.conftest import MIB, PROGRAMS

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="cgroups and uids as on Linux"),
    pytest.mark.skipif(
        sys.platform != "linux" or os.geteuid() != 0,
        reason="running as another uid needs root (setpriv); run as a user, the suite itself is that case",
    ),
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is not installed"),
]

SPIKE = PROGRAMS / "spike.py"  # a spike of SPIKE_MIB, freed, then 100 MiB kept
SAMPLED = "sampled tree sum + per-process VmHWM"


def _unused_uid() -> int:
    for uid in range(61000, 62000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("no unused uid in 61000-61999")


UID = _unused_uid() if sys.platform == "linux" else 0


def _closed_dir(path: str) -> tuple[str, str] | None:
    """The first directory above ``path`` that other users cannot pass (root's home, 0700, holds
    the interpreters on some machines) and the entry under it on the way to ``path``."""
    parts = Path(path).parts
    for i in range(1, len(parts) - 1):
        here = os.path.join(*parts[: i + 1])
        if not os.stat(here).st_mode & stat.S_IXOTH:
            return here, os.path.join(here, parts[i + 1])
    return None


def as_user(argv: list[str]) -> list[str]:
    """``argv`` run as the unused uid, no supplementary groups, no capabilities. Where the
    interpreter lies under a directory that uid cannot pass, a private mount namespace shows
    that directory's one entry on the way (over an empty tmpfs): the host is not changed."""
    user = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--inh-caps=-all", *argv]
    closed = _closed_dir(os.path.realpath(sys.base_prefix))
    if closed is None:
        return user
    top, entry = closed
    script = (
        'set -e; d=$(mktemp -d); mount --bind "$1" "$d"; '
        'mount -t tmpfs -o mode=0755 tmpfs "$1"; mkdir -p "$2"; '
        'mount --bind "$d/${2#"$1"/}" "$2"; umount -l "$d"; rmdir "$d"; shift 2; exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", top, entry, *user]


@pytest.fixture
def home() -> Iterator[Path]:
    """A directory the uid can write (pytest's own tmp_path is root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="memgauge-degraded-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def memgauge(
    *args: str, home: Path, env: dict[str, str] | None = None, user: bool = True, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "memgauge", *args]
    return subprocess.run(
        as_user(argv) if user else argv,
        capture_output=True,
        text=True,
        cwd=home,
        env={**os.environ, "HOME": str(home), "TMPDIR": str(home), **(env or {})},
        timeout=timeout,
    )


def unwritable_tree(home: Path) -> Path:
    """A cgroup v2 directory (root's, 0555) with the memory and pids controllers delegated: what
    a non-root user sees of a cgroup nobody delegated to it."""
    tree = home / "cgroup"
    tree.mkdir()
    (tree / "cgroup.controllers").write_text("cpu io memory pids\n")
    (tree / "cgroup.subtree_control").write_text("memory pids\n")
    (tree / "cgroup.procs").write_text("")
    (tree / "memory.max").write_text("max\n")
    tree.chmod(0o555)
    return tree


def profile_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def assert_sampled_peak(profile: dict[str, Any], reason: str, spike_mib: int) -> None:
    """The degraded figure, named, and still right: the spike is resident at once."""
    peak = profile["peak"]
    assert peak["method"] == SAMPLED
    assert profile["environment"]["measurement"]["cgroup_unavailable_reason"] == reason
    assert peak["notes"][0].startswith(
        f"no memory cgroup ({reason}): the tree peak is the largest sampled sum"
    )
    # ground truth: the interpreter (>= 5 MiB) plus the spike, every page written; at most the
    # spike, the 100 MiB kept after it and a generous interpreter
    assert spike_mib * MIB < peak["resident_bytes"] < (spike_mib + 100 + 80) * MIB


def test_run_as_a_user_without_a_cgroup_names_the_sampled_peak(home: Path) -> None:
    tree = unwritable_tree(home)
    r = memgauge(
        "run", "--json", "p.json", str(SPIKE), home=home, env={"SPIKE_MIB": "200", ENV_CGROUP_ROOT: str(tree)}
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "100"  # the program's own output, unchanged
    reason = f"cannot create a cgroup v2 group in {tree}: Permission denied"
    assert_sampled_peak(profile_of(home / "p.json"), reason, 200)
    assert f"note: no memory cgroup ({reason[:40]}" in r.stderr.replace("\n", " ")
    assert not [p for p in os.listdir(tree) if p.startswith("memgauge-")]


def test_run_as_a_user_on_this_host_works_or_says_why(home: Path) -> None:
    # the host as it is: a cgroup the user may write (delegated v2) or none (the v1 CI machines)
    r = memgauge("run", "--json", "p.json", str(SPIKE), home=home, env={"SPIKE_MIB": "200"})
    assert r.returncode == 0, r.stderr
    profile = profile_of(home / "p.json")
    if profile["peak"]["method"].startswith("cgroup-"):
        assert profile["peak"]["resident_bytes"] > 200 * MIB
    else:
        reason = profile["environment"]["measurement"]["cgroup_unavailable_reason"]
        assert reason
        assert_sampled_peak(profile, reason, 200)


def test_check_enforce_as_a_user_falls_back_to_the_watchdog_and_says_so(home: Path) -> None:
    tree = unwritable_tree(home)
    r = memgauge(
        "check",
        "--enforce",
        "--budget",
        "rss=200MiB",
        "--json",
        "p.json",
        str(SPIKE),
        home=home,
        env={"SPIKE_MIB": "400", ENV_CGROUP_ROOT: str(tree)},
    )
    assert r.returncode == 1, r.stderr  # over budget
    assert "(watchdog)" in r.stdout + r.stderr
    profile = profile_of(home / "p.json")
    assert profile["exit"]["stopped_by"].endswith("(watchdog)")
    assert profile["environment"]["measurement"]["enforced"]["memory_by"] == "watchdog"
    why = f"cannot create a cgroup v2 group in {tree}: Permission denied"
    assert (
        f"no cgroup memory limit ({why}): the memory limit 200 MiB was kept by the watchdog alone"
        in " ".join(profile["peak"]["notes"])
    )


def test_fit_limit_as_a_user_says_it_needs_a_cgroup_and_why(home: Path) -> None:
    tree = unwritable_tree(home)
    r = memgauge("fit-limit", str(SPIKE), home=home, env={"SPIKE_MIB": "50", ENV_CGROUP_ROOT: str(tree)})
    assert r.returncode == 69, r.stderr  # LimitError
    last = r.stderr.strip().splitlines()[-1]
    assert last == (
        "memgauge: error: cannot enforce a memory limit without a cgroup: "
        f"cannot create a cgroup v2 group in {tree}: Permission denied"
    )


def test_sweep_as_a_user_measures_each_run_and_its_profiles_say_how(home: Path) -> None:
    tree = unwritable_tree(home)
    r = memgauge(
        "sweep",
        str(SPIKE),
        "--param",
        "SPIKE_MIB=50,200",
        "--json",
        "sweep.json",
        "--save",
        "runs",
        home=home,
        env={ENV_CGROUP_ROOT: str(tree)},
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    record = profile_of(home / "sweep.json")
    rss = {p["params"]["SPIKE_MIB"]: p["runs"][0]["rss_bytes"] for p in record["points"]}
    # 100 MiB kept after the spike: the larger of the two, plus an interpreter
    assert 100 * MIB < rss[50] < 180 * MIB and 200 * MIB < rss[200] < 280 * MIB
    reason = f"cannot create a cgroup v2 group in {tree}: Permission denied"
    saved = sorted((home / "runs").glob("*.json"))
    assert len(saved) == 2
    for path in saved:
        assert profile_of(path)["peak"]["notes"][0].startswith(f"no memory cgroup ({reason})")


def test_a_sandboxed_job_as_a_user_records_what_it_could_not_apply(home: Path) -> None:
    driver = home / "driver.py"
    driver.write_text(
        "import json, sys\n"
        "from memgauge.isolation import Sandbox, Upload\n"
        "from memgauge.sweep import Job, execute_job\n"
        f"upload = Upload('main.py', open({str(SPIKE)!r}, 'rb').read())\n"
        "sandbox = Sandbox(memory_bytes=600 << 20, max_processes=64, wall_seconds=60, network=False)\n"
        "result = execute_job(Job('degraded', ('main.py',), env={'SPIKE_MIB': '200'}, sandbox=sandbox,"
        " upload=upload))\n"
        "json.dump({'sandbox': result.sandbox, 'profile': result.profile, 'error': result.error,"
        " 'exit': result.exit_code}, sys.stdout)\n"
    )
    tree = unwritable_tree(home)
    done = subprocess.run(
        as_user([sys.executable, str(driver)]),
        capture_output=True,
        text=True,
        cwd=home,
        env={**os.environ, "HOME": str(home), "TMPDIR": str(home), ENV_CGROUP_ROOT: str(tree)},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["error"] is None and out["exit"] == 0, out
    record = out["sandbox"]
    from memgauge.isolation import PIECES

    for piece in PIECES:
        said = record["applied"].get(piece) or record["not_applied"].get(piece)
        assert said, f"{piece}: neither applied nor said why not"
    assert record["not_applied"]["user"] == f"memgauge runs as uid {UID}, not root: it cannot switch users"
    assert record["applied"]["memory"].startswith("600 MiB: watchdog only")
    assert "cannot create a cgroup v2 group" in record["applied"]["memory"]
    assert_sampled_peak(out["profile"], f"cannot create a cgroup v2 group in {tree}: Permission denied", 200)


HIDDEN_CHILD = """
import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
block = bytearray(200 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
time.sleep(1.0)
"""


def test_a_child_that_hides_its_memory_map_is_still_measured(home: Path) -> None:
    # without ptrace rights over a process (it made itself non-dumpable, as setuid programs and
    # some sandboxes are) another uid reads its /proc/PID/stat with the memory map's fields
    # zeroed, as a zombie's are: it is alive, and its resident memory still counts
    program = home / "hidden.py"
    program.write_text(
        "import subprocess, sys\n"
        f"child = {HIDDEN_CHILD!r}\n"
        "# -S: no site, so no memgauge in the child; only the watcher sees it\n"
        "subprocess.run([sys.executable, '-S', '-c', child], check=True)\n"
    )
    program.chmod(0o644)
    tree = unwritable_tree(home)
    r = memgauge("run", "--json", "p.json", str(program), home=home, env={ENV_CGROUP_ROOT: str(tree)})
    assert r.returncode == 0, r.stderr
    profile = profile_of(home / "p.json")
    assert profile["peak"]["method"] == SAMPLED
    assert profile["peak"]["resident_bytes"] > 200 * MIB
    pids = [p["pid"] for p in profile["processes"]]
    assert len(pids) == 2 == len(set(pids)), profile["processes"]  # the parent and the child, each once
    child = max(profile["processes"], key=lambda p: p["peak_resident_bytes"])
    assert 200 * MIB < child["peak_resident_bytes"] < 240 * MIB


def test_a_missing_cgroup_tree_is_named(home: Path) -> None:
    missing = home / "no-such-cgroup"
    env = {"SPIKE_MIB": "200", ENV_CGROUP_ROOT: str(missing)}
    r = memgauge("run", "--json", "p.json", str(SPIKE), home=home, env=env, user=False)
    assert r.returncode == 0, r.stderr
    assert_sampled_peak(profile_of(home / "p.json"), f"no cgroup tree at {missing}", 200)
    r = memgauge("fit-limit", str(SPIKE), home=home, env=env, user=False)
    assert r.returncode == 69
    assert r.stderr.strip().splitlines()[-1].endswith(f"without a cgroup: no cgroup tree at {missing}")


@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) is not installed")
def test_a_read_only_cgroup_tree_is_named_even_for_root(home: Path) -> None:
    # a container's /sys/fs/cgroup is mounted read-only: root cannot make a group there either
    tree = unwritable_tree(home)
    tree.chmod(0o755)  # root passes modes; only the mount stops it
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    argv = [sys.executable, "-m", "memgauge", "run", "--json", "p.json", str(SPIKE)]
    r = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(tree), *argv],
        capture_output=True,
        text=True,
        cwd=home,
        env={**os.environ, "SPIKE_MIB": "200", ENV_CGROUP_ROOT: str(tree)},
        timeout=180,
    )
    if r.returncode != 0 and "mount" in r.stderr and not (home / "p.json").exists():
        pytest.skip(f"no read-only bind mount here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    reason = f"cannot create a cgroup v2 group in {tree}: Read-only file system"
    assert_sampled_peak(profile_of(home / "p.json"), reason, 200)
