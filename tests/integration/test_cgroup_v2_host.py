"""cgroup v2 for real, on a host whose /sys/fs/cgroup is cgroup2 (current distributions,
Kubernetes nodes, the device machines): the tree peak from ``memory.peak`` against a program whose
peak is known, and an OOM kill at an enforced ``memory.max``.

memgauge runs, as in a container or a ``Delegate=yes`` unit, alone in a cgroup of its own whose
parent made the memory controller available to it: the test makes that cgroup (root) under the
hierarchy's top, starts memgauge in it and points ``MEMGAUGE_CGROUP_ROOT`` at it, so memgauge
enables the controller for its run's group itself (``_cgroup_delegate``) and puts it back after.
Skipped elsewhere, with the reason; the same code over a laid-out v2 tree runs everywhere in
tests/unit/test_cgroup_v2.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgauge._env import ENV_CGROUP_ROOT
from memgauge.watcher import PREFIX, CgroupHost
from tests.conftest import MIB, PROGRAMS

TOP = "/sys/fs/cgroup"


def _why_not_v2() -> str:
    if sys.platform != "linux":
        return "not Linux"
    if not os.path.exists(os.path.join(TOP, "cgroup.controllers")):
        return f"{TOP} is not cgroup2 here (cgroup v1 or hybrid): a v2 host runs this"
    if os.geteuid() != 0:
        return "making a cgroup for memgauge under the hierarchy's top needs root"
    return ""


WHY_NOT = _why_not_v2()
pytestmark = [pytest.mark.cgroup_v2, pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT)]
SPIKE = PROGRAMS / "spike.py"  # a spike of SPIKE_MIB, freed, then 100 MiB kept


@pytest.fixture(scope="module")
def own_cgroup() -> Iterator[Path]:
    """An empty cgroup under the hierarchy's top with the memory controller available to it
    (not enabled for its children: memgauge does that), removed afterwards."""
    path = Path(TOP) / f"{PREFIX}{os.getpid()}-v2test"
    try:
        path.mkdir()
    except OSError as e:
        pytest.skip(f"cannot make a cgroup under {TOP}: {e.strerror}")
    try:
        if "memory" not in (path / "cgroup.controllers").read_text().split():
            pytest.skip(f"{TOP} does not enable the memory controller for its children")
        yield path
    finally:
        for child in sorted(path.glob(f"{PREFIX}*"), reverse=True):
            if child.is_dir():
                child.rmdir()
        path.rmdir()


def memgauge(*args: str, cwd: Path, cgroup: Path, spike_mib: int) -> subprocess.CompletedProcess[str]:
    # memgauge joins its cgroup before it starts: alone there, as a container's main process
    join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
    return subprocess.run(
        ["sh", "-c", join, str(cgroup), sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "SPIKE_MIB": str(spike_mib), ENV_CGROUP_ROOT: str(cgroup)},
        timeout=180,
    )


def put_back(cgroup: Path) -> None:
    """What memgauge enabled is disabled again, its leaf gone, the cgroup empty."""
    assert (cgroup / "cgroup.subtree_control").read_text().split() == []
    assert [p.name for p in cgroup.iterdir() if p.is_dir()] == []
    assert CgroupHost(root=str(cgroup)).own_dirs()["v2"][0] == str(cgroup)


def test_the_tree_peak_is_memory_peak(tmp_path: Path, own_cgroup: Path) -> None:
    kernel = subprocess.run(["stat", "-fc", "%T", TOP], capture_output=True, text=True).stdout.strip()
    print(f"stat -fc %T {TOP}: {kernel}; uname -r: {os.uname().release}")
    r = memgauge("run", "--json", "p.json", str(SPIKE), cwd=tmp_path, cgroup=own_cgroup, spike_mib=300)
    assert r.returncode == 0, r.stderr
    profile = json.loads((tmp_path / "p.json").read_text())
    peak = profile["peak"]
    print(f"method {peak['method']}, peak {peak['resident_bytes'] / MIB:.1f} MiB")
    assert peak["method"] in ("cgroup-v2 memory.peak", "cgroup-v2 memory.current (sampled)")
    assert profile["environment"]["measurement"]["cgroup"].startswith(str(own_cgroup) + "/")
    # the spike's pages, every one written, plus an interpreter; page cache may add some
    assert 300 * MIB < peak["resident_bytes"] < (300 + 100 + 150) * MIB
    put_back(own_cgroup)


def test_an_oom_kill_at_the_enforced_memory_max(tmp_path: Path, own_cgroup: Path) -> None:
    args = ("check", "--enforce", "--budget", "rss=150MiB", "--json", "p.json", str(SPIKE))
    r = memgauge(*args, cwd=tmp_path, cgroup=own_cgroup, spike_mib=400)
    assert r.returncode == 1, r.stderr  # over budget
    profile = json.loads((tmp_path / "p.json").read_text())
    measurement = profile["environment"]["measurement"]
    print(f"stopped_by {profile['exit']['stopped_by']!r}, oom_kills {measurement['oom_kills']}")
    assert measurement["enforced"]["memory_by"] == "cgroup and watchdog"
    assert measurement["cgroup_limit"] == {"bytes": 150 * MIB, "reached": True}
    # the kernel (memory.events oom_kill) or the watchdog stopped it; it never ran to the end
    assert profile["exit"]["code"] != 0
    assert measurement["oom_kills"] >= 1 or profile["exit"]["stopped_by"]
    put_back(own_cgroup)
