"""The run's memory cgroup, made as ``memgauge run`` starts, before its options are parsed, so that
the kernel's wait for the program's first process to join it is over by the spawn.

The first move into a cgroup after a quiet while waits an RCU grace period (7-16 ms on a 2-CPU
VM; ``watcher.hasten_join``), and whoever moves a process holds the cgroup mutex meanwhile: a
``mkdir`` of a group behind it waits too. So the group is made first, then memgauge moves itself
to where it is (nothing changes) on a thread, while the main thread parses the options and
prepares the run; ``run_program`` takes the group made for its ``--cgroup`` choice, and the
command removes one no run took (an error in the options, ``--help``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading

    from memgauge.watcher import MemoryGroup

# (the --cgroup choice it was made for, the group or None, why none)
_made: list[tuple[str, MemoryGroup | None, str]] = []
# the thread paying the join's wait (long done by the command's end: joined, so that no thread of
# memgauge's is left to the interpreter's finalization)
_waiting: list[threading.Thread] = []


def make_group_ahead(prefer: str) -> None:
    """Make the next run's memory group for ``--cgroup prefer`` (auto, v2 or v1) now, and start
    paying the wait of its first join."""
    from memgauge.watcher import create_memory_group, hasten_join

    try:
        group, reason = create_memory_group(prefer)
    except OSError:
        return  # the run tries again, and says why it could not
    _made.append((prefer, group, reason))
    thread = hasten_join() if group is not None else None
    if thread is not None:
        _waiting.append(thread)


def take_group_ahead(prefer: str) -> tuple[MemoryGroup | None, str] | None:
    """The group made ahead for ``prefer`` (or None and why none could be made), taken: the
    caller closes it; None where none was made for it (one made for another choice is removed)."""
    while _made:
        made_for, group, reason = _made.pop()
        if made_for == prefer:
            return group, reason
        if group is not None:
            group.close()
    return None


def discard_group_ahead() -> None:
    """Remove a group made ahead that no run took, once the thread paying its wait is done."""
    while _waiting:
        _waiting.pop().join(5.0)
    while _made:
        _, group, _ = _made.pop()
        if group is not None:
            group.close()
