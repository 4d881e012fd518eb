"""cgroup v2 through the watcher's real code, over a tree laid out as a current kernel lays out
/sys/fs/cgroup (tests/cgroup_tree.py): every figure and verdict the v1 path gives on the CI
machines (the tree peak, an OOM kill under a limit, the limits of ``--enforce``, ``fit-limit`` and
the sandbox) read from v2's files; a kernel without ``memory.peak``, a cgroup not delegated, a
read-only tree and a missing one. The real v2 host: tests/integration/test_cgroup_v2_host.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgauge.gate import judge, parse_budget
from memgauge.runner import trial_of
from memgauge.runner._run_records import record_group_counters
from memgauge.watcher import (
    PREFIX,
    CgroupHost,
    create_memory_group,
    create_pids_group,
    memory_limit,
    own_oom_kills,
)
from memgauge.watcher._cgroup import NO_PEAK_NOTE, SAMPLED_CURRENT
from tests.cgroup_tree import EVENTS, v2_host
from tests.factories import make_profile

MIB = 1 << 20


def write(path: Path, text: str) -> None:
    path.write_text(text)


@pytest.mark.parametrize("container", [False, True], ids=["systemd-host", "container-subtree"])
def test_own_cgroup_found_from_mountinfo_and_proc_cgroup(tmp_path: Path, container: bool) -> None:
    host, own = v2_host(tmp_path, container=container)
    dirs = host.own_dirs()
    assert set(dirs) == {"v2"}
    assert dirs["v2"] == (str(own), str(tmp_path / "sys" / "fs" / "cgroup"))
    assert host.missing() == ""
    assert host.holds(str(own / "memgauge-1-2")) and not host.holds(str(tmp_path))


def test_the_peak_of_a_group_is_its_memory_peak(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason
    try:
        path = Path(group.path)
        assert path.parent == own and path.name.startswith(f"{PREFIX}{os.getpid()}-")
        assert (group.version, group.method, group.note) == (2, "cgroup-v2 memory.peak", None)
        write(path / "memory.current", "41943040\n")
        write(path / "memory.peak", "73400320\n")
        assert (group.usage(), group.peak()) == (40 * MIB, 70 * MIB)
        assert group.procs_file == str(path / "cgroup.procs")
    finally:
        group.close()
    assert not path.exists()


def test_v2_is_preferred_and_v1_asked_for_is_named_missing(tmp_path: Path) -> None:
    host, _ = v2_host(tmp_path)
    group, reason = create_memory_group("v1", host)
    assert group is None and reason == "no cgroup v1 memory hierarchy"


def test_an_oom_kill_under_a_limit_is_a_run_that_did_not_fit(tmp_path: Path) -> None:
    host, _ = v2_host(tmp_path)
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason
    path = Path(group.path)
    try:
        group.set_limit(100 * MIB)  # what --memory-limit, --enforce, fit-limit and the sandbox do
        assert (path / "memory.max").read_text() == str(100 * MIB)
        assert (path / "memory.swap.max").read_text() == "0"  # no swapping past the limit
        # the kernel: usage hit the limit 7 times, reclaim failed once, one process killed
        write(path / "memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n")
        write(path / "memory.peak", f"{100 * MIB}\n")
        assert (group.oom_kills(), group.limit_hits(), group.peak()) == (1, 7, 100 * MIB)
        profile = make_profile(rss=group.peak(), method=group.method)
        record_group_counters(profile, group, 100 * MIB)
    finally:
        group.close()
    measurement = profile.environment["measurement"]
    assert measurement["oom_kills"] == 1 and measurement["limit_hits"] == 7
    assert measurement["cgroup_limit"] == {"bytes": 100 * MIB, "reached": True}
    # fit-limit's and check --prove's trial: killed, so it did not survive the limit
    trial = trial_of(profile, 100 * MIB, cold=True)
    assert (trial.survived, trial.oom_kills, trial.limit_hits) == (False, 1, 7)
    # the gate: at least the limit, over budget
    (rss,) = judge(profile, parse_budget("rss=100MiB")).results
    assert (rss.status, rss.at_least) == ("fail", True)


def test_a_run_under_its_limit_survives(tmp_path: Path) -> None:
    host, _ = v2_host(tmp_path)
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason
    try:
        group.set_limit(100 * MIB)
        write(Path(group.path) / "memory.peak", f"{60 * MIB}\n")
        assert (group.oom_kills(), group.limit_hits()) == (0, 0)
        profile = make_profile(rss=group.peak(), method=group.method)
        record_group_counters(profile, group, 100 * MIB)
    finally:
        group.close()
    assert profile.environment["measurement"]["cgroup_limit"] == {"bytes": 100 * MIB, "reached": False}
    assert trial_of(profile, 100 * MIB, cold=True).survived
    assert judge(profile, parse_budget("rss=100MiB")).ok


def test_a_kernel_without_memory_peak_samples_memory_current_and_says_so(tmp_path: Path) -> None:
    host, _ = v2_host(tmp_path, peak=False)  # Linux before 5.19
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason  # it still limits and counts OOM kills
    path = Path(group.path)
    try:
        assert not (path / "memory.peak").exists()
        assert (group.method, group.note) == (SAMPLED_CURRENT, NO_PEAK_NOTE)
        for mib in (10, 30, 20):  # the watcher's samples
            write(path / "memory.current", f"{mib * MIB}\n")
            group.usage()
        write(path / "memory.current", f"{5 * MIB}\n")
        assert group.peak() == 30 * MIB
        group.set_limit(50 * MIB)
        write(path / "memory.events", EVENTS.replace("oom_kill 0", "oom_kill 2"))
        assert group.oom_kills() == 2
    finally:
        group.close()


def test_alone_in_its_cgroup_memgauge_enables_the_controller_and_puts_it_back(tmp_path: Path) -> None:
    # a container's or a Delegate=yes unit's cgroup: memory available, not enabled, memgauge alone
    host, own = v2_host(tmp_path)
    leaf = own / f"{PREFIX}{os.getpid()}-self"
    pids, _ = create_pids_group(64, host)  # the sandbox makes its pids group first
    group, reason = create_memory_group("auto", host)
    assert pids is not None and group is not None, reason
    # no process in a cgroup whose children have a controller: memgauge moved into its leaf
    assert (own / "cgroup.procs").read_text() == ""
    assert (leaf / "cgroup.procs").read_text() == f"{os.getpid()}\n"
    assert (own / "cgroup.subtree_control").read_text().split() == ["pids", "memory"]
    assert Path(group.path).parent == own and Path(pids.path).parent == own
    pids.close()
    assert leaf.exists()  # memory is still enabled for the memory group: memgauge stays out
    group.close()
    assert (own / "cgroup.subtree_control").read_text().split() == []
    assert (own / "cgroup.procs").read_text() == f"{os.getpid()}\n"
    assert sorted(p for p in os.listdir(own) if p.startswith(PREFIX)) == []


def test_a_cgroup_shared_with_other_processes_is_named(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path, others=(4242, 4343))
    group, reason = create_memory_group("auto", host)
    assert group is None
    assert reason == (
        f"cgroup v2 memory controller not delegated to memgauge's cgroup {own}, which cannot enable it "
        "while 2 other process(es) share that cgroup: run memgauge in a cgroup of its own"
    )
    assert (own / "cgroup.subtree_control").read_text().split() == []
    assert [p for p in os.listdir(own) if p.startswith(PREFIX)] == []
    pids, why = create_pids_group(64, host)
    assert pids is None and "cgroup v2 pids controller not delegated" in why


def test_a_controller_not_available_is_named(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path, available="cpu io")
    assert create_memory_group("auto", host) == (
        None,
        f"cgroup v2 memory controller not available to memgauge's cgroup {own}",
    )
    assert (
        create_pids_group(64, host)[1]
        == f"cgroup v2 pids controller not available to memgauge's cgroup {own}"
    )


def test_a_read_only_tree_is_named(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path, read_only=True)
    group, reason = create_memory_group("auto", host)
    assert group is None
    assert reason == (
        f"cgroup v2 memory controller not delegated to memgauge's cgroup {own}, which cannot enable it "
        "(Read-only file system)"
    )
    # delegated by the host, and still read-only: the group itself cannot be made
    host, own = v2_host(tmp_path / "delegated", read_only=True, delegated="memory pids")
    group, reason = create_memory_group("auto", host)
    assert (group, reason) == (None, f"cannot create a cgroup v2 group in {own}: Read-only file system")
    pids, why = create_pids_group(64, host)
    assert pids is None and f"cannot create a cgroup v2 pids group in {own}: Read-only file system" in why


def test_a_missing_tree_is_named(tmp_path: Path) -> None:
    host = CgroupHost(root=str(tmp_path / "absent"))
    assert create_memory_group("auto", host) == (None, f"no cgroup tree at {tmp_path / 'absent'}")
    assert create_pids_group(64, host)[1] == f"no cgroup tree at {tmp_path / 'absent'}"
    assert memory_limit(host) is None and own_oom_kills(host) == 0


def test_an_injected_root_is_a_v2_hierarchy_with_this_process_at_its_top(tmp_path: Path) -> None:
    _, own = v2_host(tmp_path)
    host = CgroupHost(root=str(own))
    assert host.own_dirs() == {"v2": (str(own), str(own))}
    # the same code, through the injected root: memgauge's own limit, no group made here
    write(own / "memory.max", f"{512 * MIB}\n")
    assert memory_limit(host) == 512 * MIB


def test_memory_limit_is_the_smallest_of_the_group_and_its_ancestors(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    assert memory_limit(host) is None  # "max" everywhere
    write(own.parent / "memory.max", f"{2048 * MIB}\n")  # a slice's limit
    write(own / "memory.max", "max\n")
    assert memory_limit(host) == 2048 * MIB
    write(own / "memory.max", f"{1024 * MIB}\n")
    assert memory_limit(host) == 1024 * MIB


def test_oom_kills_around_this_process_count_its_group_and_ancestors(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    assert own_oom_kills(host) == 0
    write(own / "memory.events", EVENTS.replace("oom_kill 0", "oom_kill 1"))
    write(own.parent / "memory.events", EVENTS.replace("oom_kill 0", "oom_kill 2"))
    assert own_oom_kills(host) == 3


def test_the_sandbox_pids_limit_on_v2(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    group, reason = create_pids_group(64, host)
    assert group is not None, reason
    path = Path(group.path)
    try:
        assert group.version == 2 and path.parent == own
        assert (path / "pids.max").read_text() == "64"
        write(path / "pids.events", "max 3\n")
        assert group.refused() == 3
    finally:
        group.close()
    assert not path.exists()


def test_groups_a_killed_memgauge_left_are_removed(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    stale = own / f"{PREFIX}999999999-1"  # no such pid
    host.make_group_dir(str(stale))
    group, _ = create_memory_group("auto", host)
    assert group is not None
    group.close()
    assert not stale.exists()


def test_a_hybrid_host_names_v1_alone(tmp_path: Path) -> None:
    # systemd's hybrid layout: v2 at /sys/fs/cgroup/unified with no controllers, memory in v1
    host, own = v2_host(tmp_path, available="", read_only=True)
    v1 = tmp_path / "sys" / "fs" / "cgroup" / "memory"
    (v1 / "job.service").mkdir(parents=True)
    proc = Path(host.proc)
    with (proc / "mountinfo").open("a") as f:
        f.write(f"40 25 0:35 / {v1} rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,memory\n")
    with (proc / "cgroup").open("a") as f:
        f.write("9:memory:/job.service\n")
    assert host.own_dirs()["v1"] == (str(v1 / "job.service"), str(v1))
    group, reason = create_memory_group("auto", host)
    assert (group, reason) == (
        None,
        f"cannot create a cgroup v1 group in {v1 / 'job.service'}: Read-only file system",
    )
    # asked for v2 by name, its own reason
    assert (
        create_memory_group("v2", host)[1]
        == f"cgroup v2 memory controller not available to memgauge's cgroup {own}"
    )


def test_a_daemon_left_in_the_group_moves_to_memgauges_leaf(tmp_path: Path) -> None:
    host, own = v2_host(tmp_path)
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason
    leaf = own / f"{PREFIX}{os.getpid()}-self"
    path = Path(group.path)
    (path / "cgroup.procs").write_text("4242\n")  # a daemon the program started and left
    group.close()
    # not into memgauge's cgroup, which may hold no process while its children have memory
    assert not path.exists()
    assert (leaf / "cgroup.procs").read_text() == "4242\n"
    assert (own / "cgroup.subtree_control").read_text().split() == []
    assert (own / "cgroup.procs").read_text() == f"{os.getpid()}\n"


def test_enforce_and_the_sandbox_name_the_v2_limit(tmp_path: Path) -> None:
    from memgauge.isolation import HardLimits, Sandbox, SandboxRun
    from memgauge.isolation._setup import SandboxSetup
    from memgauge.model import ExitStatus
    from memgauge.runner._run_records import record_enforcement
    from memgauge.runner._state import RunState

    host, _ = v2_host(tmp_path)
    group, reason = create_memory_group("auto", host)
    assert group is not None, reason
    try:
        limits = HardLimits(memory_bytes=100 * MIB)
        group.set_limit(100 * MIB)
        # --enforce: the kernel OOM-killed the program at memory.max before the watchdog saw it
        killed = ExitStatus(code=None, signal=9, signal_name="SIGKILL", oom_killed=True)
        profile = make_profile(rss=100 * MIB, method=group.method, exit=killed)
        record_enforcement(profile, limits, RunState(1), True)
        assert profile.exit.stopped_by == "rss reached the limit 100 MiB (cgroup)"
        assert profile.environment["measurement"]["enforced"]["memory_by"] == "cgroup and watchdog"
        # the sandbox's record of the same limit
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        plan = SandboxRun(
            sandbox=Sandbox(memory_bytes=100 * MIB),
            run_dir=str(run_dir),
            workdir=str(run_dir),
            home=str(run_dir),
            tmp=str(run_dir),
            private=str(run_dir),
        )
        setup = SandboxSetup(plan)
        setup.note_memory(group, "", True)
        assert setup.applied["memory"] == (
            "100 MiB: cgroup v2 memory.max (swap closed too), and the watchdog every 0.02 s as a last resort"
        )
    finally:
        group.close()


def test_without_a_group_enforce_names_the_watchdog(tmp_path: Path) -> None:
    from memgauge.isolation import HardLimits
    from memgauge.runner._run_records import record_enforcement
    from memgauge.runner._state import RunState

    host, _ = v2_host(tmp_path, others=(4242,))
    group, reason = create_memory_group("auto", host)
    assert group is None
    profile = make_profile(rss=50 * MIB)
    record_enforcement(profile, HardLimits(memory_bytes=100 * MIB), RunState(1), False, reason)
    assert profile.environment["measurement"]["enforced"]["memory_by"] == "watchdog"
    assert profile.peak.notes == [
        f"no cgroup memory limit ({reason}): the memory limit 100 MiB was kept by the watchdog alone, "
        "every 20 ms; a spike shorter than that can pass it"
    ]
