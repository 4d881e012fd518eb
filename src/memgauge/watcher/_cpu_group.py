"""A CPU cgroup that gives a run the CPU time of a smaller machine: ``cores`` x the period per
period (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``). How ``memgauge plan
--emulate`` runs a catalogue's shape on a larger host. The quota caps CPU time, not which CPUs: a
1-core shape's two threads may run on two CPUs at half the time each."""

from __future__ import annotations

import contextlib
import os
import time

from memgauge.watcher._cgroup import _delegated, _Group, _write
from memgauge.watcher._cgroup_host import PREFIX, CgroupHost, current_host

__all__ = ["CpuGroup", "create_cpu_group"]

_PERIOD_US = 100_000


class CpuGroup(_Group):
    def set_cores(self, cores: float) -> None:
        """At most ``cores`` CPUs' worth of time per period."""
        quota = max(1000, round(cores * _PERIOD_US))
        if self.version == 2:
            _write(os.path.join(self.path, "cpu.max"), f"{quota} {_PERIOD_US}")
        else:
            _write(os.path.join(self.path, "cpu.cfs_period_us"), str(_PERIOD_US))
            _write(os.path.join(self.path, "cpu.cfs_quota_us"), str(quota))

    def close(self, timeout: float = 2.0) -> None:
        """Move what is left to the parent group, then remove this one."""
        parent_procs = os.path.join(os.path.dirname(self.path), "cgroup.procs")

        def move_out() -> None:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    _write(parent_procs, str(pid))

        self._remove(timeout, 0.02, move_out)


def create_cpu_group(cores: float, host: CgroupHost | None = None) -> tuple[CpuGroup | None, str]:
    """A new CPU group limited to ``cores`` (v2 where the cpu controller is delegated to
    memgauge's cgroup, else v1), or None and the reason none could be made."""
    host = host or current_host()
    missing = host.missing()
    if missing:
        return None, missing
    reasons: list[str] = []
    candidates: list[tuple[int, str]] = []
    v2 = host.own_dir("v2")
    if v2 is not None and _delegated(v2[0], "cpu"):
        candidates.append((2, v2[0]))
    v1 = host.own_dir("cpu")
    if v1 is not None:
        candidates.append((1, v1[0]))
    if not candidates:
        reasons.append("no cpu controller (cgroup v2 delegated or v1 mounted)")
    name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    for version, parent in candidates:
        path = os.path.join(parent, name)
        try:
            host.make_group_dir(path)
        except OSError as e:
            reasons.append(f"cannot create a cgroup v{version} cpu group in {parent}: {e.strerror}")
            continue
        group = CpuGroup(path, version, host)
        try:
            group.set_cores(cores)
        except OSError as e:
            group.close()
            reasons.append(f"cannot set the cpu quota in cgroup v{version}: {e.strerror}")
            continue
        return group, ""
    return None, "; ".join(reasons)
