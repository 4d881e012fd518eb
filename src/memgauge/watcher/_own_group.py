"""The OOM kills of the memory cgroups this process runs in (its own and their ancestors): what
the pytest plugin reads around a test, which runs in pytest's process, not in a group memgauge
made. A kill counted there while a test ran, under the limit those groups enforce (a container's,
a CI job's), is a test whose tree did not fit (docs/measurement.md)."""

from __future__ import annotations

import os

from memgauge.watcher._cgroup_host import CgroupHost, current_host

__all__ = ["own_oom_kills"]


def own_oom_kills(host: CgroupHost | None = None) -> int:
    """The sum of the ``oom_kill`` counters (v2 ``memory.events``, v1 ``memory.oom_control``) of
    this process's memory cgroup and its ancestors: a kill is counted in the group whose limit
    was hit, which for a container is often an ancestor. 0 where none can be read."""
    total = 0
    dirs = (host or current_host()).own_dirs()
    for key, name in (("v2", "memory.events"), ("v1", "memory.oom_control")):
        path, root = dirs.get(key, ("", "/nonexistent"))
        while path.startswith(root):
            try:
                with open(os.path.join(path, name)) as f:
                    for line in f:
                        field, _, value = line.partition(" ")
                        if field == "oom_kill":
                            total += int(value)
            except (OSError, ValueError):
                pass
            if path == root:
                break
            path = os.path.dirname(path)
    return total
