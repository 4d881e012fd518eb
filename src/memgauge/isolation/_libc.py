"""The few system calls the runner half makes that Python 3.11's ``os`` lacks: mount(2),
umount2(2), prctl(2) and setfsuid(2), by ctypes (:class:`Libc`), and the undoable set of one run's
mounts (:class:`Mounts`)."""

from __future__ import annotations

import contextlib
import ctypes
import os

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_NO_NEW_PRIVS = 38


class Libc:
    """mount(2), umount2(2) and prctl(2) by ctypes: Python 3.11 has no os.unshare or os.mount, and
    the runner must mount inside its namespace without running a tool per mount."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(None, use_errno=True)
        self._mount = lib.mount
        self._mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        self._umount2 = lib.umount2
        self._umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.prctl = lib.prctl
        # the calling thread's filesystem ids: files are opened with the permissions of these
        self.setfsuid = lib.setfsuid
        self.setfsgid = lib.setfsgid

    def mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        rc = self._mount(
            None if source is None else source.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            flags,
            None if data is None else data.encode(),
        )
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mount {fstype or source or ''} on {target}: {os.strerror(err)}")

    def umount(self, target: str) -> None:
        self._umount2(target.encode(), MNT_DETACH)


class Mounts:
    """The mounts of one run, in the runner's own mount namespace (and undone there if one fails
    half way: a half-covered filesystem could leave the program without an interpreter)."""

    def __init__(self, libc: Libc) -> None:
        self.libc = libc
        self.done: list[str] = []

    def mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        self.libc.mount(source, target, fstype, flags, data)
        # only new mounts are undone: a remount or a propagation change (of "/" itself!) is not
        # a mount of its own, and unmounting its target would take the whole tree away
        if not flags & (MS_REMOUNT | MS_PRIVATE):
            self.done.append(target)

    def undo(self) -> None:
        for target in reversed(self.done):
            with contextlib.suppress(OSError):
                self.libc.umount(target)
        self.done.clear()
