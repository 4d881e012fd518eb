"""The filesystem piece of a sandboxed run: in the runner's own mount namespace, private scratch
directories, empty home and runtime directories, the sandbox's ``hidden_paths`` hidden, what the
program needs (the interpreter, memgauge, the run's directory) bound back, read-only where it lay
under a cover or a closed directory, and a ``/proc`` that shows the program only its own processes.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING

from memgauge.isolation._libc import (
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    Mounts,
)
from memgauge.isolation._sandbox import memgauge_parent

if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.isolation._libc import Libc
    from memgauge.isolation._sandbox import SandboxRun

# scratch directories every program may write to: each run gets its own, empty (tmpfs)
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# directories no run needs and that hold other people's things (home directories, other
# services' unix sockets such as PostgreSQL's in /run/postgresql): covered by an empty tmpfs
_EMPTY_DIRS = ("/home", "/root", "/run")


def make_mounts(plan: SandboxRun, libc: Libc, private: Callable[[str], str] | None = None) -> str:
    """Make the run's mounts; the record's detail of what they are. Raises OSError, with every
    mount made so far undone, when one fails: a half-covered filesystem could leave the program
    without an interpreter."""
    mounts = Mounts(libc)
    try:
        return _mount_all(plan, mounts, private)
    except OSError:
        mounts.undo()
        raise


def _under(path: str, top: str) -> bool:
    """``path`` is ``top`` or inside it."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def _outermost(paths: set[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


def _wanted_paths(run_dir: str) -> set[str]:
    """What the program needs to see: the interpreter, the virtual environment, every directory
    on the runner's ``sys.path`` (the program's Python finds the same ones), the directory memgauge
    is imported from, and the run's own directory; as real paths."""
    candidates = [
        os.path.dirname(os.path.abspath(sys.executable)),
        os.path.dirname(os.path.realpath(sys.executable)),
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        memgauge_parent(),
        run_dir,
        *sys.path,
    ]
    found: set[str] = set()
    for path in candidates:
        if not path or not os.path.isabs(path):
            continue
        real = os.path.realpath(path)
        if os.path.isfile(real):  # python311.zip and the like
            real = os.path.dirname(real)
        if os.path.isdir(real) and real != "/":
            found.add(real)
    return found


def _closed_ancestor(path: str) -> str | None:
    """The outermost directory on the way to ``path`` that others may not pass through (no
    o+x), such as ``/root``: an unprivileged uid cannot reach anything below it."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        ancestor = "/" + "/".join(parts[:i])
        try:
            mode = os.stat(ancestor).st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return ancestor if ancestor != path else None
    return None


def _mount_all(plan: SandboxRun, mounts: Mounts, private: Callable[[str], str] | None) -> str:
    wanted = _wanted_paths(plan.run_dir)
    needed = _outermost(wanted)
    run_dir = os.path.realpath(plan.run_dir)
    covers, hidden_missing, kept_visible = _covers(plan, wanted, needed, run_dir)
    # fds to what is bound back, opened before anything covers it
    fds = {n: os.open(n, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for n in needed}
    try:
        mounts.mount(None, "/", None, MS_REC | MS_PRIVATE, None)
        covered: list[str] = []
        bound: list[str] = []
        report: dict[str, list[str]] = {"private": [], "empty": [], "hidden": []}
        for path in sorted(covers, key=lambda p: (p.count("/"), p)):
            kind = covers[path]
            if not os.path.lexists(path):
                continue
            if any(_under(path, c) for c in covered) and not any(_under(path, b) for b in bound):
                report[kind].append(path)  # already out of sight under a cover
                continue
            if any(n == path for n in needed):
                continue  # the run needs it whole (its own directory, the interpreter)
            if os.path.isdir(path):
                bound += _cover_dir(mounts, path, kind, private, needed, fds, run_dir)
            else:
                mounts.mount("/dev/null", path, None, MS_BIND, None)
            covered.append(path)
            report[kind].append(path)
    finally:
        for fd in fds.values():
            os.close(fd)
    parts = [f"own mount namespace; private, empty /tmp-like directories: {', '.join(report['private'])}"]
    read_only = [b for b in bound if b != run_dir]
    for label, paths in (
        ("emptied", report["empty"]),
        ("hidden", report["hidden"]),
        ("bound back read-only", read_only),
        ("hidden paths that do not exist", hidden_missing),
        ("hidden paths kept because memgauge needs them", kept_visible),
    ):
        if paths:
            parts.append(f"{label}: {', '.join(paths)}")
    parts.append(_own_proc(mounts))
    return "; ".join(parts)


def _covers(
    plan: SandboxRun, wanted: set[str], needed: list[str], run_dir: str
) -> tuple[dict[str, str], list[str], list[str]]:
    """What to cover (path -> private | empty | hidden), the hidden paths that do not exist, and
    those kept visible because the run needs what they hold."""
    covers: dict[str, str] = {}
    for path in (*_PRIVATE_DIRS, os.path.dirname(run_dir)):
        covers.setdefault(os.path.realpath(path), "private")
    for path in _EMPTY_DIRS:
        covers.setdefault(os.path.realpath(path), "empty")
    if plan.uid is not None:
        for path in needed:
            closed = _closed_ancestor(path)
            if closed is not None:
                covers.setdefault(closed, "empty")
    hidden_missing: list[str] = []
    kept_visible: list[str] = []
    for path in plan.sandbox.hidden_paths:
        real = os.path.realpath(path)
        if not os.path.lexists(real):
            hidden_missing.append(path)
        elif any(_under(c, real) for c in wanted) and any(_under(real, n) for n in needed):
            # it is, or lies inside and holds, something the program needs (the interpreter's
            # own files): hiding it would stop every run, and what is needed is not data
            kept_visible.append(path)
        else:
            covers[real] = "hidden"
    return covers, hidden_missing, kept_visible


def _cover_dir(
    mounts: Mounts,
    path: str,
    kind: str,
    private: Callable[[str], str] | None,
    needed: list[str],
    fds: dict[str, int],
    run_dir: str,
) -> list[str]:
    """A directory covered: a tmpfs (or the run's scratch space), with what the run needs under
    it bound back (read-only but the run's own directory); returns those bound back."""
    data = "mode=1777" if kind == "private" else "mode=0755,size=64k"
    if kind == "private" and private is not None:
        # a directory of the run's size-limited scratch space (_scratch.py)
        mounts.mount(private(path), path, None, MS_BIND, None)
    else:
        mounts.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data)
    bound = []
    for n in needed:
        if _under(n, path) and n != path:
            os.makedirs(n, 0o755, exist_ok=True)
            mounts.mount(f"/proc/self/fd/{fds[n]}", n, None, MS_BIND | MS_REC, None)
            flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV
            if n != run_dir:
                flags |= MS_RDONLY
            mounts.mount(None, n, None, flags, None)
            bound.append(n)
    if kind != "private":
        mounts.mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, data)
    return bound


def _own_proc(mounts: Mounts) -> str:
    """A fresh /proc that shows an unprivileged program only its own processes, or why not."""
    try:
        try:
            mounts.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
        except OSError:
            mounts.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
        return "/proc shows the program only its own processes (hidepid)"
    except OSError as e:
        return f"other processes stay visible in /proc ({e.strerror})"
