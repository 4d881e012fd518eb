"""Uid leases: each sandboxed run's program gets a uid no account names, no process runs as and
no other run holds, and everything running as it is killed before the uid is handed on.

The lease is an ``flock`` on a lock file in a root-only directory, held for the run's lifetime, so
concurrent runs never share a uid, even across processes (several servers on one host).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import stat
import tempfile
from typing import TYPE_CHECKING

from memgauge.capture import kill_until_gone

if TYPE_CHECKING:
    from collections.abc import Iterator

UID_FIRST = 200_000
UID_LAST = 299_999


class UidLease:
    """A uid held for one run: the ``flock`` on its lock file is the lease. Released by removing
    the file, then closing it (so lock files exist only for runs in progress); a taker checks,
    once it holds a lock, that the file it locked is still the one at the path."""

    def __init__(self, uid: int, fd: int, path: str) -> None:
        self.uid = uid
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(self._fd)
            self._fd = None


def _uid_lock_dir() -> str:
    """A root-only directory for the uid lock files: ``/run/memgauge/uids``, else one in the
    temporary directory. Refused when it is not a real directory owned by root with mode 0700
    (someone could otherwise pre-create it and hold every lock)."""
    reasons = []
    for path in ("/run/memgauge/uids", os.path.join(tempfile.gettempdir(), "memgauge-uids")):
        try:
            os.makedirs(path, 0o700, exist_ok=True)
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0:
                reasons.append(f"{path} is not a directory owned by root")
                continue
            if stat.S_IMODE(st.st_mode) != 0o700:
                os.chmod(path, 0o700)
            return path
        except OSError as e:
            reasons.append(f"{path}: {e.strerror}")
    raise OSError("; ".join(reasons))


def uid_lock_path(uid: int) -> str:
    """The lock file whose ``flock`` leases ``uid`` to a run (there only while a run holds it)."""
    return os.path.join(_uid_lock_dir(), str(uid))


def _proc_uids() -> Iterator[tuple[int, bool, list[int]]]:
    """Every process now: its pid, whether it is still alive (not a zombie: dead already, it waits
    only for its parent to reap it), and its real, effective, saved and filesystem uids."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        alive = True
        try:
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("State:"):
                        alive = line.split()[1] not in ("Z", "X")
                    elif line.startswith("Uid:"):
                        yield int(name), alive, [int(x) for x in line.split()[1:]]
                        break
        except (OSError, ValueError):
            continue


def uids_in_use() -> set[int]:
    """Every uid some process runs as now."""
    return {uid for _, _, uids in _proc_uids() for uid in uids}


def pids_of_uid(uid: int) -> list[int]:
    """The live processes running as ``uid``."""
    return [pid for pid, alive, uids in _proc_uids() if alive and uid in uids]


def kill_uid(uid: int, timeout: float = 3.0) -> None:
    """SIGKILL every process running as ``uid`` until none is left: whatever a run left behind
    (daemons, a fork bomb) dies before its uid is handed to the next run."""
    kill_until_gone(lambda: pids_of_uid(uid), timeout, pause=0.01)


def reap_unleased(timeout: float = 3.0) -> list[int]:
    """Kill everything running as a sandbox uid that no run leases (its lock file is gone, or no
    one holds it): what the runs of a server killed by SIGKILL left, such as a daemon that dropped
    its environment and started a session of its own. The uids it killed."""
    try:
        lock_dir = _uid_lock_dir()
    except OSError:
        return []
    reaped = []
    for uid in sorted(u for u in uids_in_use() if UID_FIRST <= u <= UID_LAST):
        path = os.path.join(lock_dir, str(uid))
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            fd = None
        except OSError:
            continue
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a live run holds it
            kill_uid(uid, timeout)
            reaped.append(uid)
        except OSError:
            continue
        finally:
            if fd is not None:
                os.close(fd)
    return reaped


def lease_uid() -> tuple[UidLease | None, str]:
    """A uid in [UID_FIRST, UID_LAST] that no account names, no process runs as, and no other
    run holds; probing starts at a random point so concurrent servers rarely contend."""
    import pwd

    try:
        lock_dir = _uid_lock_dir()
    except OSError as e:
        return None, f"no directory for uid locks: {e}"
    busy = uids_in_use()
    count = UID_LAST - UID_FIRST + 1
    start = random.randrange(count)
    for i in range(count):
        uid = UID_FIRST + (start + i) % count
        if uid in busy:
            continue
        try:
            pwd.getpwuid(uid)
            continue  # an account: not ours to use
        except KeyError:
            pass
        path = os.path.join(lock_dir, str(uid))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # the holder may have removed the file between our open and our lock: then what we
            # locked is gone, and someone else may hold the file now at the path
            if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                raise OSError("the lock file was replaced")
        except OSError:
            os.close(fd)
            continue
        return UidLease(uid, fd, path), ""
    return None, f"no free uid in {UID_FIRST}-{UID_LAST}"
