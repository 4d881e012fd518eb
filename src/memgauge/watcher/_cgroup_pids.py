"""A pids cgroup for a sandboxed run (``pids.max``): v2 where the pids controller can be delegated
to memgauge's cgroup, else v1; groups a killed memgauge left behind (a fork bomb) are killed and
removed on the next start."""

from __future__ import annotations

import os
import time

from memgauge.capture import kill_until_gone, orphaned_entries
from memgauge.watcher._cgroup import _delegated, _Group, _write, make_group_dir
from memgauge.watcher._cgroup_delegate import Delegation, enable
from memgauge.watcher._cgroup_host import PREFIX, CgroupHost, current_host


class PidsGroup(_Group):
    """A pids cgroup holding one sandboxed run: ``pids.max`` caps the tasks (processes and threads)
    the run can have at once, which stops a fork bomb where a per-uid rlimit cannot (root) or is
    not unique to the run. Every process left in it is killed when it is closed: nothing of a
    sandboxed run may outlive it."""

    def refused(self) -> int:
        """How many forks (or new threads) the limit refused so far."""
        try:
            with open(os.path.join(self.path, "pids.events")) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "max":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill_all(self, timeout: float = 2.0) -> None:
        """SIGKILL every process in the group until it is empty."""
        kill_until_gone(self.pids, timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Kill what is left, then remove the group (retried while the dying leave it)."""
        self.kill_all(timeout)
        self._remove(timeout, 0.01)
        self._undo()


def _pids_parents(host: CgroupHost, reasons: list[str]) -> tuple[list[tuple[int, str]], Delegation | None]:
    """Where a pids group can be made, v2 first (its pids controller delegated to memgauge's
    cgroup, undone by the delegation returned), with why not added to ``reasons``."""
    candidates: list[tuple[int, str]] = []
    v2 = host.own_dir("v2")
    delegation: Delegation | None = None
    if v2 is not None:
        why = ""
        if not _delegated(v2[0], "pids"):
            delegation, why = enable(host, v2[0], "pids")
        if why:
            reasons.append(why)
        else:
            candidates.append((2, v2[0]))
    else:
        reasons.append("no cgroup v2 hierarchy")
    v1 = host.own_dir("pids")
    if v1 is not None:
        candidates.append((1, v1[0]))
    elif v2 is None:
        reasons.append("no cgroup v1 pids hierarchy")
    return candidates, delegation


def create_pids_group(limit: int, host: CgroupHost | None = None) -> tuple[PidsGroup | None, str]:
    """A new pids cgroup with ``pids.max`` = ``limit`` (v2 where the pids controller is delegated
    to memgauge's cgroup, else v1), or None and the reason none could be made."""
    host = host or current_host()
    missing = host.missing()
    if missing:
        return None, missing
    reasons: list[str] = []
    name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    candidates, delegation = _pids_parents(host, reasons)
    for version, parent in candidates:
        for stale in orphaned_entries(parent, PREFIX):
            PidsGroup(stale, version, host).close(0.5)  # a fork bomb a killed memgauge left behind
        path = os.path.join(parent, name)
        ours = delegation if version == 2 else None
        if not make_group_dir(host, path, ours, reasons, f"cgroup v{version} pids group"):
            continue
        group = PidsGroup(path, version, host)
        group.delegation = ours
        try:
            _write(os.path.join(path, "pids.max"), str(limit))
        except OSError as e:
            group.close()
            reasons.append(f"cannot set pids.max in cgroup v{version}: {e.strerror}")
            continue
        return group, ""
    return None, "; ".join(reasons) or "no cgroup support"
