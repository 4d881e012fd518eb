"""A dedicated memory cgroup for the measured process tree: the kernel's own, exact tree peak.

cgroup v2 first (``memory.peak``, needs the memory controller delegated to our cgroup), then the v1
memory controller (``memory.max_usage_in_bytes``), which our CI machines have. Each group is created
as a child of the cgroup memgauge itself runs in, and removed afterwards; groups left behind by a
memgauge that was killed are removed on the next start once their owner is gone.

Both versions charge page cache from file I/O to the group; the profile says so.
"""

from __future__ import annotations

import contextlib
import os
import time

from memgauge.capture import PAGE_SIZE, OpenFiles, orphaned_entries
from memgauge.watcher._cgroup_delegate import Delegation, enable
from memgauge.watcher._cgroup_host import PREFIX, CgroupHost, current_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# os.path, not pathlib, and no dataclass: this module is imported before the program starts, and
# every millisecond spent importing is added to the run's wall time

# memcg charges the page counter in batches of 64 pages per CPU (MEMCG_CHARGE_BATCH), so the peak
# counter can run ahead of the pages actually in use by up to one batch per CPU
_CHARGE_BATCH_PAGES = 64


def _own_dirs(host: CgroupHost | None = None) -> dict[str, tuple[str, str]]:
    """(directory of this process's own cgroup, mount point) per hierarchy, 'v2' and 'v1'."""
    return (host or current_host()).own_dirs()


def memory_limit(host: CgroupHost | None = None) -> int | None:
    """The memory limit that applies to memgauge's own process: the smallest limit of its memory
    cgroup and that cgroup's ancestors (a container's limit is often set on an ancestor), v2
    ``memory.max`` or v1 ``memory.limit_in_bytes``; None when nothing is limited."""
    dirs = _own_dirs(host)
    limits: list[int] = []
    for key, name in (("v2", "memory.max"), ("v1", "memory.limit_in_bytes")):
        if key not in dirs:
            continue
        path, root = dirs[key]
        while path.startswith(root):
            try:
                with open(os.path.join(path, name)) as f:
                    raw = f.read().strip()
            except OSError:
                raw = "max"
            # v1 writes "no limit" as a huge page-aligned number
            if raw.isdigit() and int(raw) < (1 << 62):
                limits.append(int(raw))
            if path == root:
                break
            path = os.path.dirname(path)
    return min(limits) if limits else None


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


class _Group:
    """A cgroup directory memgauge made: its path, its processes."""

    def __init__(self, path: str, version: int, host: CgroupHost | None = None) -> None:
        self.path = path
        self.version = version
        self.host = host or CgroupHost()
        # the v2 controller memgauge enabled for this group, undone once it is removed
        self.delegation: Delegation | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, v{self.version})"

    @property
    def procs_file(self) -> str:
        return os.path.join(self.path, "cgroup.procs")

    def _remove(self, timeout: float, pause: float, before: Callable[[], None] | None = None) -> None:
        """rmdir the group, retried (after ``before`` each time) while processes still leave it."""
        deadline = time.monotonic() + timeout
        while True:
            if before is not None:
                before()
            try:
                self.host.remove_group_dir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(pause)

    def _undo(self) -> None:
        if self.delegation is not None:
            self.delegation.undo()
            self.delegation = None

    def pids(self) -> list[int]:
        # opened afresh each time: cgroup v1 builds the pid list once per open file
        try:
            with open(self.procs_file, "rb") as f:
                return [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            return []


# the method of a v2 group on a kernel before 5.19, which has no memory.peak
SAMPLED_CURRENT = "cgroup-v2 memory.current (sampled)"
NO_PEAK_NOTE = (
    "no memory.peak in the cgroup (Linux before 5.19): the tree peak is the highest memory.current "
    "sampled; a spike shorter than one sampling interval can be missed"
)


class MemoryGroup(_Group):
    def __init__(self, path: str, version: int, host: CgroupHost | None = None) -> None:
        super().__init__(path, version, host)
        self._files = OpenFiles()
        self.limit_bytes: int | None = None  # the limit set_limit set
        self.has_peak_counter = os.path.exists(os.path.join(path, self._peak_file))
        self._max_usage = 0  # the highest usage read: the peak where the kernel keeps none

    @property
    def _peak_file(self) -> str:
        return "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"

    @property
    def method(self) -> str:
        if not self.has_peak_counter:
            return SAMPLED_CURRENT
        return "cgroup-v2 memory.peak" if self.version == 2 else "cgroup-v1 memory.max_usage_in_bytes"

    @property
    def note(self) -> str | None:
        """What the report must say about this group's figures, or None."""
        return None if self.has_peak_counter else NO_PEAK_NOTE

    @property
    def error_bound_bytes(self) -> int:
        return _CHARGE_BATCH_PAGES * PAGE_SIZE * (os.cpu_count() or 1)

    def _read(self, name: str) -> str:
        raw = self._files.read(os.path.join(self.path, name))
        if raw is None:
            raise OSError(f"cannot read {name} of {self.path}")
        return raw.decode()

    def _read_int(self, name: str) -> int:
        try:
            return int(self._read(name).strip())
        except (OSError, ValueError):
            return 0

    def usage(self) -> int:
        usage = self._read_int("memory.current" if self.version == 2 else "memory.usage_in_bytes")
        self._max_usage = max(self._max_usage, usage)
        return usage

    def peak(self) -> int:
        if not self.has_peak_counter:
            self.usage()
            return self._max_usage
        return self._read_int(self._peak_file)

    def oom_kills(self) -> int:
        try:
            text = self._read("memory.events" if self.version == 2 else "memory.oom_control")
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def limit_hits(self) -> int:
        """How often the group's usage hit its limit (v1 ``memory.failcnt``, v2 ``memory.events``
        ``max``): 0 when it never did, or no limit was set. A hit means the kernel had to reclaim
        (or OOM-kill) to keep the group under its limit: the program wanted at least the limit.

        A lower bound where the kernel does not keep the counter (a v1 group on Linux 6.18 reads
        ``failcnt`` 0 after an OOM kill at its limit): every OOM kill in the group followed a
        charge that failed at the limit, and a high-water mark at the limit itself is a hit."""
        counted = self._counted_hits()
        floor = self.oom_kills()
        if self.limit_bytes is not None and self.peak() >= self.limit_bytes:
            floor = max(floor, 1)
        return max(counted, floor)

    def _counted_hits(self) -> int:
        if self.version == 1:
            # set_limit caps memory+swap at the same value, and that counter is charged first:
            # its failcnt is the one that counts where swap accounting is on
            return max(self._read_int("memory.failcnt"), self._read_int("memory.memsw.failcnt"))
        try:
            text = self._read("memory.events")
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
        return 0

    def set_limit(self, limit_bytes: int) -> None:
        """Enforce a memory limit on the group: past it the kernel reclaims, then OOM-kills. Swap
        is closed too where the host has it: a limit the program could swap past would slow it
        down instead of stopping it."""
        name = "memory.max" if self.version == 2 else "memory.limit_in_bytes"
        _write(os.path.join(self.path, name), str(limit_bytes))
        self.limit_bytes = limit_bytes
        swap = "memory.swap.max" if self.version == 2 else "memory.memsw.limit_in_bytes"
        value = "0" if self.version == 2 else str(limit_bytes)  # v1: memory and swap together
        with contextlib.suppress(OSError):  # no swap accounting on this kernel
            _write(os.path.join(self.path, swap), value)

    def close(self, timeout: float = 2.0) -> None:
        """Move processes still in the group (daemons the program left) to the parent group (to
        memgauge's leaf where it enabled the controller: the parent may hold no process then),
        then remove the group. Memory still charged to it is handed to the parent by the kernel."""
        home = os.path.dirname(self.path)
        if self.delegation is not None and os.path.isdir(self.delegation.leaf):
            home = self.delegation.leaf
        home_procs = os.path.join(home, "cgroup.procs")

        def move_out() -> None:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    self.host.write(home_procs, str(pid))
            self._files.close_all()

        self._remove(timeout, 0.02, move_out)
        self._undo()


def make_group_dir(
    host: CgroupHost, path: str, delegation: Delegation | None, reasons: list[str], what: str
) -> bool:
    """Whether the group's directory ``path`` could be made; where not, the ``delegation`` made
    for it is undone and why is added to ``reasons`` ("cannot create a WHAT in PARENT: ...")."""
    try:
        host.make_group_dir(path)
    except OSError as e:
        if delegation is not None:
            delegation.undo()
        reasons.append(f"cannot create a {what} in {os.path.dirname(path)}: {e.strerror}")
        return False
    return True


def _remove_stale(parent: str, host: CgroupHost) -> None:
    for path in orphaned_entries(parent, PREFIX):
        with contextlib.suppress(OSError):
            host.remove_group_dir(path)


def _delegated(parent: str, controller: str) -> bool:
    """``controller`` is enabled for the children of ``parent`` (its ``cgroup.subtree_control``)."""
    try:
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            return controller in f.read().split()
    except OSError:
        return False


def create_memory_group(
    prefer: str = "auto", host: CgroupHost | None = None
) -> tuple[MemoryGroup | None, str]:
    """A new, empty memory cgroup for one run, or None and the reason none could be made.

    ``prefer``: "auto" (v2, else v1), "v2" or "v1". ``host``: where the hierarchies are (None:
    ``current_host()``).
    """
    host = host or current_host()
    dirs = host.own_dirs()
    missing = "" if dirs else host.missing()  # read only when needed: the program waits
    if missing:
        return None, missing
    reasons: list[str] = []
    name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    for version in (2, 1):
        key = f"v{version}"
        if prefer not in ("auto", key):
            continue
        if key not in dirs:
            if prefer != "auto" or "v2" not in dirs:  # a pure v2 host has no v1 to speak of
                reasons.append(f"no cgroup {key} memory hierarchy")
            continue
        group = _memory_group_in(host, dirs, version, prefer == "auto", name, reasons)
        if group is not None:
            # a v2 group without memory.peak (Linux < 5.19) still limits and counts OOM kills; its
            # peak is memory.current sampled, and the profile says so (``note``)
            return group, ""
    return None, "; ".join(reasons) or "no cgroup support"


def _memory_group_in(
    host: CgroupHost,
    dirs: dict[str, tuple[str, str]],
    version: int,
    auto: bool,
    name: str,
    reasons: list[str],
) -> MemoryGroup | None:
    """The run's group made in memgauge's own cgroup of ``version`` (the memory controller
    delegated to it first, on v2), or None with the reason added to ``reasons``."""
    key = f"v{version}"
    parent = dirs[key][0]
    delegation: Delegation | None = None
    if version == 2 and not _delegated(parent, "memory"):
        delegation, why = enable(host, parent, "memory")
        if delegation is None:
            # a hybrid host: the memory controller is v1's, and v2's lack of it says nothing
            if not auto or "v1" not in dirs or "not available" not in why:
                reasons.append(why)
            return None
    _remove_stale(parent, host)
    path = os.path.join(parent, name)
    if not make_group_dir(host, path, delegation, reasons, f"cgroup {key} group"):
        return None
    group = MemoryGroup(path, version, host)
    group.delegation = delegation
    if not group.has_peak_counter and version == 1:
        # v1 has kept max_usage_in_bytes since it began: a group without it is not a memory group
        group.close()
        reasons.append(f"cgroup {key} group {path} has no memory.max_usage_in_bytes")
        return None
    return group
