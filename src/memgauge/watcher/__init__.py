"""The watcher: what memgauge observes from outside the measured process.

The process tree (``TreeWatcher``, ``Descendants``), cgroups (``MemoryGroup``, ``PidsGroup``),
the memory timeline (``TimelineBuilder``) and the machine's environment. Lazy, so ``memgauge run``
starts the program before it loads what it needs only afterwards.
"""

from __future__ import annotations

from memgauge._lazy import attach

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.watcher._cgroup import (
        PREFIX,
        MemoryGroup,
        PidsGroup,
        create_memory_group,
        create_pids_group,
    )
    from memgauge.watcher._descendants import Descendants
    from memgauge.watcher._environment import machine_environment
    from memgauge.watcher._nvml import (
        ENV_FAKE_NVML,
        NvmlDevice,
        NvmlReading,
        NvmlSource,
        PynvmlSource,
        ScriptedNvmlSource,
        open_nvml,
    )
    from memgauge.watcher._nvml_sampler import NvmlDeviceSamples, NvmlSampler, NvmlSamples, start_nvml_sampler
    from memgauge.watcher._own_group import own_oom_kills
    from memgauge.watcher._timeline import TimelineBuilder
    from memgauge.watcher._watcher import (
        TreeNeeds,
        TreeWatcher,
        WatchedProcess,
        group_page_cache,
        user_cmdline,
    )

_NAMES = {
    "create_memory_group": "_cgroup",
    "create_pids_group": "_cgroup",
    "Descendants": "_descendants",
    "machine_environment": "_environment",
    "ENV_FAKE_NVML": "_nvml",
    "NvmlDevice": "_nvml",
    "NvmlReading": "_nvml",
    "NvmlSource": "_nvml",
    "PynvmlSource": "_nvml",
    "ScriptedNvmlSource": "_nvml",
    "open_nvml": "_nvml",
    "NvmlDeviceSamples": "_nvml_sampler",
    "NvmlSampler": "_nvml_sampler",
    "NvmlSamples": "_nvml_sampler",
    "start_nvml_sampler": "_nvml_sampler",
    "MemoryGroup": "_cgroup",
    "PidsGroup": "_cgroup",
    "PREFIX": "_cgroup",
    "own_oom_kills": "_own_group",
    "TimelineBuilder": "_timeline",
    "TreeNeeds": "_watcher",
    "TreeWatcher": "_watcher",
    "group_page_cache": "_watcher",
    "user_cmdline": "_watcher",
    "WatchedProcess": "_watcher",
}
__all__ = [
    "ENV_FAKE_NVML",
    "PREFIX",
    "Descendants",
    "MemoryGroup",
    "NvmlDevice",
    "NvmlDeviceSamples",
    "NvmlReading",
    "NvmlSampler",
    "NvmlSamples",
    "NvmlSource",
    "PidsGroup",
    "PynvmlSource",
    "ScriptedNvmlSource",
    "TimelineBuilder",
    "TreeNeeds",
    "TreeWatcher",
    "WatchedProcess",
    "create_memory_group",
    "create_pids_group",
    "group_page_cache",
    "machine_environment",
    "open_nvml",
    "own_oom_kills",
    "start_nvml_sampler",
    "user_cmdline",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
