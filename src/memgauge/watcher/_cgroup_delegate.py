"""A cgroup v2 controller (memory, pids) enabled for the children of memgauge's own cgroup, where
the host made it available to that cgroup but left it off: what a container, a pod or a systemd
unit with ``Delegate=yes`` looks like (its cgroup writable, the controller in
``cgroup.controllers``, ``cgroup.subtree_control`` empty).

v2 forbids processes in a cgroup whose children have a controller (the "no internal processes"
rule), so when memgauge is alone in its cgroup it first moves itself into a leaf of its own
(``memgauge-PID-self``), then enables the controller; ``Delegation.undo`` puts both back once the
run's group is gone, so nothing that later joins the cgroup (``docker exec``) is refused. Not
alone (a shell, a server beside it), it cannot, and the reason says so.
"""

from __future__ import annotations

import contextlib
import errno
import os

from memgauge.watcher._cgroup_host import CgroupHost, self_leaf_name
from memgauge.watcher._cgroup_warm import settle

# os.path, no dataclass: imported before the program starts

SUBTREE = "cgroup.subtree_control"


def _words(path: str) -> list[str]:
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []


class Delegation:
    """The ``controller`` memgauge enabled in its own cgroup ``parent`` (moving itself into its
    leaf, ``self_leaf_name()``, where it had to)."""

    def __init__(self, host: CgroupHost, parent: str, controller: str) -> None:
        self.host, self.parent, self.controller = host, parent, controller
        self.leaf = os.path.join(parent, self_leaf_name())

    def undo(self) -> None:
        """Disable the controller again; once none is left enabled, move memgauge back out of its
        leaf. Left as is where the kernel refuses (another group still uses the controller: its
        own undo finishes the work)."""
        try:
            self.host.write(os.path.join(self.parent, SUBTREE), f"-{self.controller}")
        except OSError:
            return
        if _words(os.path.join(self.parent, SUBTREE)) or not os.path.isdir(self.leaf):
            return
        with contextlib.suppress(OSError):
            self.host.write(os.path.join(self.parent, "cgroup.procs"), str(os.getpid()))
            self.host.remove_group_dir(self.leaf)


def enable(host: CgroupHost, parent: str, controller: str) -> tuple[Delegation | None, str]:
    """Enable ``controller`` for the children of memgauge's own cgroup ``parent``: the
    ``Delegation`` to undo, or None and why it cannot, in one line."""
    name = f"cgroup v2 {controller} controller not delegated to memgauge's cgroup {parent}"
    settle()  # memgauge may move itself below: not before its own no-op move has landed
    if controller not in _words(os.path.join(parent, "cgroup.controllers")):
        return None, f"cgroup v2 {controller} controller not available to memgauge's cgroup {parent}"
    subtree = os.path.join(parent, SUBTREE)
    delegation = Delegation(host, parent, controller)
    try:
        host.write(subtree, f"+{controller}")
        return delegation, ""
    except OSError as e:
        if e.errno != errno.EBUSY:
            return None, f"{name}, which cannot enable it ({e.strerror})"
    pid = os.getpid()
    others = [p for p in _words(os.path.join(parent, "cgroup.procs")) if p != str(pid)]
    if others:
        return None, (
            f"{name}, which cannot enable it while {len(others)} other process(es) share that "
            "cgroup: run memgauge in a cgroup of its own"
        )
    leaf = delegation.leaf
    try:
        host.make_group_dir(leaf)
    except OSError as e:
        return None, f"{name}, which cannot enable it (a leaf for itself: {e.strerror})"
    try:
        host.write(os.path.join(leaf, "cgroup.procs"), str(pid))
        host.write(subtree, f"+{controller}")
    except OSError as e:
        with contextlib.suppress(OSError):
            host.write(os.path.join(parent, "cgroup.procs"), str(pid))
            host.remove_group_dir(leaf)
        return None, f"{name}, which cannot enable it ({e.strerror})"
    return delegation, ""
