"""The disk piece of a sandboxed run: every place the program may write (its working directory,
``HOME``, ``TMPDIR``, ``/tmp``, ``/var/tmp``, ``/dev/shm``) on one size-limited tmpfs of its own,
mounted in the runner's mount namespace, so that what the program writes in all of them together is
bounded by the filesystem itself (a write past it fails with ENOSPC) and measured (its peak, sampled
by the watchdog). The upload is copied onto it first; the figure is what the program added.

The measurement directory gets a small tmpfs of its own (``EVENTS_BYTES``): the program writes it,
and it must not be a way around the limit onto the host's disk.

A tmpfs lives in memory: the kernel charges its pages to the memory cgroup of the process that
wrote them, so files the program keeps there also count in its cgroup's memory (as page cache of a
disk would, until reclaimed).
"""

from __future__ import annotations

import os
import shutil

from memgauge._units import format_bytes
from memgauge.isolation._libc import MS_BIND, MS_NODEV, MS_NOSUID, MS_REMOUNT, Mounts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.isolation._libc import Libc
    from memgauge.isolation._sandbox import SandboxRun

PAGE = 4096
# the measurement files the runner reads are at most 16 MiB together (_sandboxed.py); the rest is
# room for what it drops
EVENTS_BYTES = 64 << 20


def _used(path: str) -> int:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class Scratch:
    """The run's scratch filesystem, once ``mount`` made it: ``limit`` bytes for the program's own
    files; ``peak`` the most it held beyond the upload (``sample`` on every watchdog tick)."""

    def __init__(self, plan: SandboxRun, libc: Libc, limit: int) -> None:
        self.plan = plan
        self.limit = limit
        self.path = os.path.join(plan.private, "scratch")
        self.base = 0
        self.peak = 0
        self.full = False
        self.covered: list[str] = []
        self._mounts = Mounts(libc)

    def prepare(self) -> None:
        """Before the filesystem piece: mount it and copy the upload onto it. Raises OSError with
        everything undone."""
        try:
            os.makedirs(self.path, 0o700, exist_ok=True)
            # room for the upload (64 MiB unpacked at most) first; the exact size once it is in
            room = self.limit + (128 << 20)
            self._mounts.mount("tmpfs", self.path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0711,size={room}")
            shutil.copytree(self.plan.workdir, os.path.join(self.path, "work"), symlinks=True)
            self.base = _used(self.path)
            # one page more than the limit: a program that wanted more than the limit is measured
            # over it (a limit is inclusive: filling it exactly would pass)
            size = -(-(self.base + self.limit) // PAGE) * PAGE + PAGE
            self._mounts.mount(None, self.path, None, MS_REMOUNT | MS_NOSUID | MS_NODEV, f"size={size}")
        except OSError:
            self.undo()
            raise

    def private_dir(self, path: str) -> str:
        """The directory of the scratch space that covers the system's ``path`` (/tmp, /var/tmp,
        /dev/shm, the directory holding the run's): the filesystem piece binds it there."""
        source = os.path.join(self.path, "_" + path.strip("/").replace("/", "_"))
        os.makedirs(source, exist_ok=True)
        os.chmod(source, 0o1777)
        self.covered.append(path)
        return source

    def bind(self, uid: int | None) -> str:
        """After the filesystem piece: the run's own directories (the working directory with the
        upload, HOME, TMPDIR) bound from the scratch space, owned by ``uid``; the record's detail.
        Raises OSError with everything undone."""
        plan = self.plan
        try:
            for target, name in ((plan.workdir, "work"), (plan.home, "home"), (plan.tmp, "tmp")):
                source = os.path.join(self.path, name)
                os.makedirs(source, 0o700, exist_ok=True)
                if uid is not None:
                    _chown_tree(source, uid)
                self._mounts.mount(source, target, None, MS_BIND, None)
        except OSError:
            self.undo()
            raise
        shown = ", ".join([plan.workdir, "HOME", "TMPDIR", *self.covered])
        return (
            f"at most {format_bytes(self.limit)} written in all, beyond the upload: one tmpfs (size=) "
            f"in the run's mount namespace holds {shown}; a write past it fails (ENOSPC); the peak "
            "is sampled by the watchdog"
        )

    def undo(self) -> None:
        self._mounts.undo()

    def sample(self) -> int:
        try:
            used = max(0, _used(self.path) - self.base)
        except OSError:
            return self.peak
        self.peak = max(self.peak, used)
        if used > self.limit:
            self.full = True
        return used

    def figures(self) -> dict[str, int]:
        return {"limit_bytes": self.limit, "peak_bytes": self.peak}


def mount_events(path: str, libc: Libc, uid: int | None) -> None:
    """A small tmpfs for the measurement files at ``path`` (made already, owned by ``uid``)."""
    libc.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,size={EVENTS_BYTES}")
    if uid is not None:
        os.chown(path, uid, uid)


def _chown_tree(path: str, uid: int) -> None:
    os.chown(path, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
