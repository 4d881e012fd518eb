"""Writing output files so that a crash or a full disk never leaves half a file behind."""

from __future__ import annotations

import contextlib
import os
import stat

from memgauge._errors import OutputError

# tempfile and pathlib are imported where a file is written: ``memgauge run`` checks its output
# paths before the program starts, and those modules (~5 ms) would delay the program's start
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def write_text_atomic(path: str | os.PathLike[str], text: str, what: str = "file") -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    import tempfile
    from pathlib import Path

    target = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".memgauge-", suffix=target.suffix, dir=target.parent or ".")
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as an ordinary open() would create it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise OutputError(f"cannot write {what} to {target}: {e.strerror or e}") from e
    return target


def check_writable(path: str, what: str = "file") -> None:
    """Fail before a long run, not after it, when ``path`` cannot be written."""
    parent = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise OutputError(f"cannot write {what} to {path}: it is a directory")
    if not os.path.isdir(parent):
        raise OutputError(f"cannot write {what} to {path}: no directory {parent}")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise OutputError(f"cannot write {what} to {path}: permission denied")


def check_output(path: str, what: str) -> None:
    """``check_writable``, but a FIFO, a terminal or ``/dev/stdout`` only has to be writable."""
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise OutputError(f"cannot write {what} to {path}: permission denied")
        return
    check_writable(_through_link(path), what)


def write_output(path: str, text: str, what: str) -> None:
    """Atomically (a temporary file renamed over ``path``), except into a FIFO, a terminal or
    ``/dev/stdout``: the rename would replace the device or pipe with a regular file."""
    if not _is_special(path):
        write_text_atomic(_through_link(path), text, what)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise OutputError(f"cannot write {what} to {path}: {e.strerror or e}") from e


def _is_special(path: str) -> bool:
    """``path`` exists and is neither a regular file nor a directory (following symlinks)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _through_link(path: str) -> str:
    """The file a symlink points to: a rename over the link would replace the link itself
    (``-o /dev/stdout`` with stdout redirected to a file would replace ``/dev/stdout``)."""
    return os.path.realpath(path) if os.path.islink(path) else path


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same inode where both exist, else the same real path."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def read_json_object(path: str) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when it is missing, unreadable, torn (a writer killed
    mid-write) or not an object."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
