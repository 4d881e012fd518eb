"""The watcher: what memgauge observes from outside the measured process.

The process tree (``TreeWatcher``, ``Descendants``), cgroups (``MemoryGroup``, ``PidsGroup``, on
the hierarchies a ``CgroupHost`` finds; its root is injectable through ``MEMGAUGE_CGROUP_ROOT``),
the memory timeline (``TimelineBuilder``) and the machine's environment. Lazy, so ``memgauge run``
starts the program before it loads what it needs only afterwards.
"""

from __future__ import annotations

from memgauge._lazy import attach

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.watcher._cgroup import MemoryGroup, create_memory_group, memory_limit
    from memgauge.watcher._cgroup_host import PREFIX, CgroupHost, current_host
    from memgauge.watcher._cgroup_pids import PidsGroup, create_pids_group
    from memgauge.watcher._cgroup_warm import hasten_join
    from memgauge.watcher._cmdline import user_cmdline
    from memgauge.watcher._cpu_group import create_cpu_group
    from memgauge.watcher._descendants import Descendants
    from memgauge.watcher._environment import machine_environment
    from memgauge.watcher._outside import OutsideLines, outside_refusal
    from memgauge.watcher._own_group import own_oom_kills
    from memgauge.watcher._timeline import TimelineBuilder
    from memgauge.watcher._watcher import TreeNeeds, TreeWatcher, WatchedProcess, group_page_cache

_NAMES = {
    "CgroupHost": "_cgroup_host",
    "current_host": "_cgroup_host",
    "memory_limit": "_cgroup",
    "create_cpu_group": "_cpu_group",
    "create_memory_group": "_cgroup",
    "create_pids_group": "_cgroup_pids",
    "hasten_join": "_cgroup_warm",
    "Descendants": "_descendants",
    "machine_environment": "_environment",
    "MemoryGroup": "_cgroup",
    "PidsGroup": "_cgroup_pids",
    "PREFIX": "_cgroup_host",
    "own_oom_kills": "_own_group",
    "OutsideLines": "_outside",
    "outside_refusal": "_outside",
    "TimelineBuilder": "_timeline",
    "TreeNeeds": "_watcher",
    "TreeWatcher": "_watcher",
    "group_page_cache": "_watcher",
    "user_cmdline": "_cmdline",
    "WatchedProcess": "_watcher",
}
__all__ = [
    "PREFIX",
    "CgroupHost",
    "Descendants",
    "MemoryGroup",
    "OutsideLines",
    "PidsGroup",
    "TimelineBuilder",
    "TreeNeeds",
    "TreeWatcher",
    "WatchedProcess",
    "create_cpu_group",
    "create_memory_group",
    "create_pids_group",
    "current_host",
    "group_page_cache",
    "hasten_join",
    "machine_environment",
    "memory_limit",
    "outside_refusal",
    "own_oom_kills",
    "user_cmdline",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
