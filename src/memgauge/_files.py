"""Writing output files so that a crash or a full disk never leaves half a file behind."""

from __future__ import annotations

import contextlib
import os
import stat

from memgauge._errors import OutputError

# neither tempfile nor pathlib: every ``memgauge run`` writes its profile after the program ended,
# where their imports (pathlib pulls in urllib.parse and ipaddress: ~5 ms) add to the run's time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def write_text_atomic(path: str | os.PathLike[str], text: str, what: str = "file") -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    target = os.fspath(path)
    tmp = None
    try:
        fd, tmp = _temporary_beside(target)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise OutputError(f"cannot write {what} to {target}: {e.strerror or e}") from e


def _temporary_beside(target: str) -> tuple[int, str]:
    """A new file of ours in ``target``'s directory, open for writing (``O_EXCL``: never another's,
    tried again on a name taken), with the mode an ordinary ``open`` gives (0666 less the umask);
    what ``tempfile.mkstemp`` makes, without its import and its 0600."""
    head, name = os.path.split(target)
    suffix = os.path.splitext(name)[1]
    for _ in range(100):
        tmp = os.path.join(head or ".", f".memgauge-{os.getpid()}-{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


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


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and all it holds, as far as it can (``shutil.rmtree`` with
    ``ignore_errors``, whose import, with zlib, bz2 and lzma, every run would pay after the
    program for its events directory). Links are removed, never followed."""
    for top, dirs, files in os.walk(path, topdown=False):
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(top, name))
        for name in dirs:
            entry = os.path.join(top, name)
            with contextlib.suppress(OSError):
                os.unlink(entry) if os.path.islink(entry) else os.rmdir(entry)
    with contextlib.suppress(OSError):
        os.rmdir(path)
