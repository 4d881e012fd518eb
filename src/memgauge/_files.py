"""Writing output files so that a crash or a full disk never leaves half a file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from memgauge._errors import OutputError


def write_text_atomic(path: str | os.PathLike[str], text: str, what: str = "file") -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
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
