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

from memgauge.capture import PAGE_SIZE, OpenFiles, kill_until_gone, orphaned_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# os.path, not pathlib, and no dataclass: this module is imported before the program starts, and
# every millisecond spent importing is added to the run's wall time

PREFIX = "memgauge-"
# memcg charges the page counter in batches of 64 pages per CPU (MEMCG_CHARGE_BATCH), so the peak
# counter can run ahead of the pages actually in use by up to one batch per CPU
_CHARGE_BATCH_PAGES = 64


def _mounts() -> dict[str, tuple[str, str]]:
    """(mount point, root of the hierarchy mounted there) of the cgroup2 hierarchy (key 'v2') and
    of the v1 memory controller ('v1'). The root is '/' unless a container mounted a subtree."""
    found: dict[str, tuple[str, str]] = {}
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fstype, _source, options = [*right.split(), "", ""][:3]
        fields = left.split()
        root, mount_point = fields[3], fields[4]
        if fstype == "cgroup2" and "v2" not in found:
            found["v2"] = (mount_point, root)
        elif fstype == "cgroup" and "memory" in options.split(","):
            found["v1"] = (mount_point, root)
    return found


def _own_dirs() -> dict[str, tuple[str, str]]:
    """(directory of this process's own cgroup, mount point) per hierarchy, 'v2' and 'v1'."""
    mounts, own = _mounts(), _own_paths()
    dirs: dict[str, tuple[str, str]] = {}
    for key, (mount_point, root) in mounts.items():
        if key not in own:
            continue
        path = own[key]
        if root != "/" and (path == root or path.startswith(root + "/")):
            path = path[len(root) :]
        dirs[key] = (mount_point.rstrip("/") + path.rstrip("/"), mount_point.rstrip("/"))
    return dirs


def _own_paths() -> dict[str, str]:
    """This process's cgroup path in the v2 hierarchy ('v2') and the v1 memory hierarchy ('v1')."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            paths["v2"] = path
        elif "memory" in controllers.split(","):
            paths["v1"] = path
    return paths


def memory_limit() -> int | None:
    """The memory limit that applies to memgauge's own process: the smallest limit of its memory
    cgroup and that cgroup's ancestors (a container's limit is often set on an ancestor), v2
    ``memory.max`` or v1 ``memory.limit_in_bytes``; None when nothing is limited."""
    dirs = _own_dirs()
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
            if raw != "max" and int(raw) < (1 << 62):
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

    def __init__(self, path: str, version: int) -> None:
        self.path = path
        self.version = version

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
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(pause)

    def pids(self) -> list[int]:
        # opened afresh each time: cgroup v1 builds the pid list once per open file
        try:
            with open(self.procs_file, "rb") as f:
                return [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            return []


class MemoryGroup(_Group):
    def __init__(self, path: str, version: int) -> None:
        super().__init__(path, version)
        self._files = OpenFiles()
        self.limit_bytes: int | None = None  # the limit set_limit set

    @property
    def method(self) -> str:
        return "cgroup-v2 memory.peak" if self.version == 2 else "cgroup-v1 memory.max_usage_in_bytes"

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
        return self._read_int("memory.current" if self.version == 2 else "memory.usage_in_bytes")

    def peak(self) -> int:
        return self._read_int("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")

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
        """Move processes still in the group (daemons the program left) to the parent group, then
        remove the group. Memory still charged to it is handed to the parent by the kernel."""
        parent_procs = os.path.join(os.path.dirname(self.path), "cgroup.procs")

        def move_out() -> None:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    _write(parent_procs, str(pid))
            self._files.close_all()

        self._remove(timeout, 0.02, move_out)


def _remove_stale(parent: str) -> None:
    for path in orphaned_entries(parent, PREFIX):
        with contextlib.suppress(OSError):
            os.rmdir(path)


def create_memory_group(prefer: str = "auto") -> tuple[MemoryGroup | None, str]:
    """A new, empty memory cgroup for one run, or None and the reason none could be made.

    ``prefer``: "auto" (v2, else v1), "v2" or "v1".
    """
    dirs = _own_dirs()
    reasons: list[str] = []
    name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    for version in (2, 1):
        key = f"v{version}"
        if prefer not in ("auto", key):
            continue
        if key not in dirs:
            reasons.append(f"no cgroup {key} memory hierarchy")
            continue
        parent = dirs[key][0]
        if version == 2:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                    delegated = "memory" in f.read().split()
            except OSError:
                delegated = False
            if not delegated:
                reasons.append("cgroup v2 memory controller not delegated to memgauge's cgroup")
                continue
        _remove_stale(parent)
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
        except OSError as e:
            reasons.append(f"cannot create a cgroup {key} group in {parent}: {e.strerror}")
            continue
        group = MemoryGroup(path, version)
        if not os.path.exists(
            os.path.join(path, "memory.peak" if version == 2 else "memory.max_usage_in_bytes")
        ):
            group.close()
            reasons.append(f"cgroup {key} has no peak counter (kernel too old)")
            continue
        return group, ""
    return None, "; ".join(reasons) or "no cgroup support"


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


def _v1_controller_dir(controller: str) -> str | None:
    """This process's own cgroup directory in the v1 hierarchy that holds ``controller``."""
    mount: tuple[str, str] | None = None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fstype, _source, options = [*right.split(), "", ""][:3]
                if fstype == "cgroup" and controller in options.split(","):
                    fields = left.split()
                    mount = (fields[4], fields[3])
                    break
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    if mount is None:
        return None
    mount_point, root = mount
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            if root != "/" and (path == root or path.startswith(root + "/")):
                path = path[len(root) :]
            return mount_point.rstrip("/") + path.rstrip("/")
    return None


def create_pids_group(limit: int) -> tuple[PidsGroup | None, str]:
    """A new pids cgroup with ``pids.max`` = ``limit`` (v2 where the pids controller is delegated
    to memgauge's cgroup, else v1), or None and the reason none could be made."""
    reasons: list[str] = []
    name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
    candidates: list[tuple[int, str]] = []
    v2 = _own_dirs().get("v2")
    if v2 is not None:
        try:
            with open(os.path.join(v2[0], "cgroup.subtree_control")) as f:
                delegated = "pids" in f.read().split()
        except OSError:
            delegated = False
        if delegated:
            candidates.append((2, v2[0]))
        else:
            reasons.append("cgroup v2 pids controller not delegated to memgauge's cgroup")
    else:
        reasons.append("no cgroup v2 hierarchy")
    v1 = _v1_controller_dir("pids")
    if v1 is not None:
        candidates.append((1, v1))
    else:
        reasons.append("no cgroup v1 pids hierarchy")
    for version, parent in candidates:
        for stale in orphaned_entries(parent, PREFIX):
            PidsGroup(stale, version).close(0.5)  # a fork bomb a killed memgauge left behind
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
        except OSError as e:
            reasons.append(f"cannot create a cgroup v{version} pids group in {parent}: {e.strerror}")
            continue
        group = PidsGroup(path, version)
        try:
            _write(os.path.join(path, "pids.max"), str(limit))
        except OSError as e:
            group.close()
            reasons.append(f"cannot set pids.max in cgroup v{version}: {e.strerror}")
            continue
        return group, ""
    return None, "; ".join(reasons) or "no cgroup support"
