"""The wait the kernel makes the measured program's first process pay to join its cgroup, paid
earlier, beside memgauge's own set-up.

Moving a process into a cgroup (writing ``cgroup.procs``) takes the kernel's one cgroup-wide
threadgroup lock for writing, and the first writer after a quiet while waits for an RCU grace
period to switch the lock's readers to their slow path: 7-16 ms measured on a 2-CPU VM (Linux
6.18, cgroup v1), where a second write within a few tens of milliseconds takes 0.1 ms. The child
joins its group before it execs (the spawn's preexec hook), so the whole wait was the program's.
A process writing its own pid to the ``cgroup.procs`` of the cgroup it is in moves nothing and pays
that wait: done on a thread once the run's group is made (a ``mkdir`` waits behind it, for the
cgroup mutex), while the main thread parses the options and prepares the run (``runner``'s
``make_group_ahead``), it leaves the child's join less of it (the spawn took 16-21 ms with a new
group, 2 ms without one; the bootstrap step went from 30 to 16 ms).
"""

from __future__ import annotations

import os

from memgauge.watcher._cgroup_host import CgroupHost

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading

# the thread writing, until ``settle`` has waited for it
_pending: list[threading.Thread] = []


def _own_procs_files() -> list[str]:
    """The ``cgroup.procs`` of the cgroups this process is in now, v2's then the v1 memory
    controller's, as the kernel says (``/proc/self``; never an injected root: a laid-out tree has
    no lock to take, and a real one given as root may hold memgauge in a leaf below it)."""
    host = CgroupHost()
    mounts, own = host.mounts(), host.own_paths()
    found: list[str] = []
    for controller in ("v2", "memory"):
        if controller not in mounts or controller not in own:
            continue
        mount_point, root = mounts[controller]
        path = own[controller]
        if root != "/" and not (path == root or path.startswith(root + "/")):
            continue  # outside what this mount shows
        if root != "/":
            path = path[len(root) :]
        found.append(os.path.join(mount_point, path.lstrip("/"), "cgroup.procs"))
    return found


def _write_own_pid(candidates: list[str]) -> None:
    for procs in candidates:
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
            return
        except OSError:
            pass  # not ours to write (a container's cgroup, no delegation): the next, or none


def hasten_join() -> threading.Thread | None:
    """Start paying the join's wait for the groups the next spawn puts its child in; the thread
    doing it, or None where this process's cgroup is unknown. The lock is one for every
    hierarchy: the first of this process's own cgroups (v2's, then the v1 memory controller's)
    it may write to will do."""
    candidates = _own_procs_files()
    if not candidates:
        return None
    import threading

    thread = threading.Thread(
        target=_write_own_pid, args=(candidates,), name="memgauge-cgroup-join", daemon=True
    )
    thread.start()
    _pending.append(thread)
    return thread


def settle(timeout: float = 5.0) -> None:
    """Wait for a ``hasten_join`` still writing: before memgauge moves itself to another cgroup
    (``_cgroup_delegate``), which that write, landing later, would undo. Its wait is one the
    kernel would make the move pay anyway."""
    while _pending:
        _pending.pop().join(timeout)
