"""The walk over a zip upload: every member's name and type checked before anything is
decompressed, then each decompressed in bounded chunks, counted as it goes. Only *stored* and
*deflate* members: their decompression can be bounded chunk by chunk (``zipfile`` inflates bzip2 /
lzma input in one unbounded call)."""

from __future__ import annotations

import io
import stat
import zipfile
from typing import TYPE_CHECKING

from memgauge.isolation._upload_rules import CORRUPT, UploadError, normalise, size_text

if TYPE_CHECKING:
    from memgauge.isolation._upload_rules import Tally
    from memgauge.isolation._upload_sinks import Sink

_ZIP_CENTRAL_SIGNATURE = b"PK\x01\x02"


def walk_zip(data: bytes, tally: Tally, sink: Sink) -> None:
    limits = tally.limits
    # zipfile parses the whole central directory up front (about a second per 100k entries), so a
    # directory stuffed with entries is refused before that, by counting their signatures
    if data.count(_ZIP_CENTRAL_SIGNATURE) > 4 * limits.max_files + 64:
        raise UploadError(f"zip archive: too many entries, the limit is {limits.max_files} files")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except CORRUPT as e:
        raise UploadError(f"corrupt zip archive: {e}") from None
    with archive:
        # every name and type is checked before anything is decompressed or written
        plan: list[tuple[zipfile.ZipInfo, str, str, bool, bool]] = []
        claimed = 0
        for member in archive.infolist():
            raw = member.orig_filename  # .filename is cut at a NUL byte, hiding it
            mode = member.external_attr >> 16
            is_dir = _checked_kind(member, raw, mode)
            path = normalise(raw, is_dir=is_dir)
            if member.flag_bits & 0x1:
                raise UploadError(f"{raw!r}: encrypted; encrypted archives are not accepted")
            if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise UploadError(
                    f"{raw!r}: compression method {member.compress_type} is not accepted; "
                    "use deflate or store"
                )
            if path:
                tally.add(raw, path, is_dir=is_dir)
                plan.append((member, raw, path, is_dir, bool(mode & 0o111)))
                claimed += 0 if is_dir else member.file_size
        # honest headers let an honest bomb be refused without inflating it; lying ones are caught
        # by the counting below, which is what actually decides (and zipfile stops inflating at the
        # claimed size, where a too-small claim then fails the CRC check)
        if claimed > limits.max_bytes:
            raise UploadError(
                f"zip archive: its entries claim {size_text(claimed)}, "
                f"over the limit of {size_text(limits.max_bytes)}"
            )
        for member, raw, path, is_dir, executable in plan:
            if is_dir:
                sink.directory(path)
            else:
                _extract(archive, member, raw, path, executable, tally, sink)


def _checked_kind(member: zipfile.ZipInfo, raw: str, mode: int) -> bool:
    """Whether ``member`` is a directory; an error for a link or a special file."""
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise UploadError(f"{raw!r}: a symbolic link; links are not accepted")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UploadError(f"{raw!r}: a special file (mode {mode:o}); only files and directories are accepted")
    return raw.endswith("/") or kind == stat.S_IFDIR


def _extract(
    archive: zipfile.ZipFile,
    member: zipfile.ZipInfo,
    raw: str,
    path: str,
    executable: bool,
    tally: Tally,
    sink: Sink,
) -> None:
    try:
        stream = archive.open(member)
    except CORRUPT as e:
        raise UploadError(f"{raw!r}: corrupt archive data: {e}") from None
    with stream:
        sink.file(path, executable, tally.chunks(raw, stream))
