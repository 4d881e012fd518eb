"""Validating and unpacking uploads for the validation service's sandboxed runs.

An upload comes from someone we do not trust: a single ``.py`` file, or a ``.zip`` / ``.tar.gz``
project. Before anything runs it must be unpacked into a fresh directory, and the unpacking itself is
the first attack surface: paths that climb out of the directory (``../``, absolute, Windows drive
paths), links that point elsewhere, device files, and archives whose headers lie about their sizes
so that a few hundred KiB expand into gigabytes (a "zip bomb").

So nothing here trusts a header. Every byte is counted as it is decompressed, and the walk stops as
soon as a limit is crossed; ``inspect_upload`` (no disk) and ``extract_upload`` (disk) share that one
walk, so they accept and refuse exactly the same uploads. The walk's parts: ``_upload_rules`` (what
an upload, its names and its sizes may be), ``_upload_zip`` and ``_upload_tar`` (the two archive
formats), ``_upload_sinks`` (where the members go: nowhere, or a directory, never through a link).
"""

from __future__ import annotations

import os

from memgauge._errors import OutputError
from memgauge.isolation._upload_rules import (
    Tally,
    UploadError,
    UploadInfo,
    UploadLimits,
    normalise,
    safe_py_name,
    size_text,
    upload_kind,
)
from memgauge.isolation._upload_sinks import Discard, DiskWriter, Sink, empty_directory
from memgauge.isolation._upload_tar import walk_tar
from memgauge.isolation._upload_zip import walk_zip

_DEFAULT_LIMITS = UploadLimits()


def inspect_upload(name: str, data: bytes, limits: UploadLimits = _DEFAULT_LIMITS) -> UploadInfo:
    """Everything ``extract_upload`` checks, decompressing for real but writing nothing."""
    return _walk(name, data, limits, Discard())


def extract_upload(name: str, data: bytes, dest: str, limits: UploadLimits = _DEFAULT_LIMITS) -> UploadInfo:
    """Unpack into ``dest``, an existing empty directory; on any error it is left empty again.

    Raises ``UploadError`` for anything wrong with the upload, ``OutputError`` when ``dest`` is not an
    empty directory (a caller's mistake, not the uploader's).
    """
    try:
        root_fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise OutputError(f"{dest}: cannot unpack an upload here: {e.strerror}") from None
    try:
        # emptiness is what makes cleanup safe: everything in dest afterwards is ours to remove
        if os.listdir(root_fd):
            raise OutputError(f"{dest}: cannot unpack an upload here: the directory is not empty")
        try:
            return _walk(name, data, limits, DiskWriter(root_fd))
        except BaseException as failure:
            try:
                empty_directory(root_fd)
            except OSError as e:
                raise OutputError(f"{dest}: cannot remove a refused upload: {e}") from failure
            raise
    finally:
        os.close(root_fd)


def resolve_entry(info: UploadInfo, entry: str | None) -> str:
    """The file to run, as a relative POSIX path in ``info.files``.

    A single script runs itself. An archive runs ``entry`` if given, else ``main.py``, else its only
    top-level ``.py`` file; anything more ambiguous must be named.
    """
    if info.kind == "py":
        script = info.files[0]
        if entry is None or normalise(entry, is_dir=False, what="entry point") == script:
            return script
        raise UploadError(f"entry point {entry!r}: a single-file upload can only run {script!r}")
    if entry is not None:
        path = normalise(entry, is_dir=False, what="entry point")
        if not path.endswith(".py"):
            raise UploadError(f"entry point {entry!r}: not a .py file")
        if path not in info.files:
            raise UploadError(f"entry point {entry!r}: no such file in the upload")
        return path
    if "main.py" in info.files:
        return "main.py"
    scripts = [f for f in info.files if f.endswith(".py")]
    top = [f for f in scripts if "/" not in f]
    if len(top) == 1:
        return top[0]
    if not scripts:
        raise UploadError("name the entry point: the upload holds no .py file to run")
    candidates = top or scripts
    shown = ", ".join(candidates[:5]) + (f" and {len(candidates) - 5} more" if len(candidates) > 5 else "")
    where = "at the top level" if top else "below the top level"
    raise UploadError(f"name the entry point: no main.py, and {len(candidates)} .py files {where}: {shown}")


def _walk(name: str, data: bytes, limits: UploadLimits, sink: Sink) -> UploadInfo:
    if len(data) > limits.max_upload_bytes:
        raise UploadError(
            f"{name}: the upload is {size_text(len(data))}, "
            f"over the limit of {size_text(limits.max_upload_bytes)}"
        )
    kind = upload_kind(name, data)
    tally = Tally(limits, len(data))
    if kind == "py":
        stored = safe_py_name(name)
        tally.add(stored, stored, is_dir=False)
        if len(data) > limits.max_bytes:
            raise UploadError(
                f"{stored!r}: {size_text(len(data))}, over the limit of {size_text(limits.max_bytes)}"
            )
        tally.total = len(data)
        sink.file(stored, False, [data])
    elif kind == "zip":
        walk_zip(data, tally, sink)
    else:
        walk_tar(data, tally, sink)
    return tally.info(kind)
