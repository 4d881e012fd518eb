"""The walk over a ``.tar.gz`` upload. Members are validated and written by hand rather than
with ``tarfile``'s extraction filters, which Python 3.11 only has from 3.11.4 on; the gzip stream
is decompressed here (:class:`_Gunzip`), bounded per call and in all, with its trailer checked."""

from __future__ import annotations

import io
import tarfile
import zlib
from typing import TYPE_CHECKING, TypeVar

from memgauge.isolation._upload_rules import CHUNK, CORRUPT, GZIP_MAGIC, UploadError, normalise, size_text

if TYPE_CHECKING:
    from memgauge.isolation._upload_rules import Tally
    from memgauge.isolation._upload_sinks import Sink

# tar headers, PAX records and block padding are decompressed too but are not file content; they
# get this much room per entry on top of max_bytes, so a header-sized bomb (a PAX record claiming
# gigabytes, which tarfile reads into memory whole) is cut off at a bounded size
_TAR_ENTRY_OVERHEAD = 8 * 1024
_TAR_SLACK = 2**20

_TAR_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
_TAR_REFUSED_TYPES = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
    tarfile.GNUTYPE_SPARSE: "a sparse file",
}
# tarfile ends an archive silently on these; anything else mid-archive is corruption, which
# TarFile.next would also swallow (it treats a bad header after the first as the end)
_TAR_END_ERRORS: tuple[type[Exception], ...] = tuple(
    getattr(tarfile, name) for name in ("EOFHeaderError", "EmptyHeaderError") if hasattr(tarfile, name)
)


_T = TypeVar("_T", bound="_StrictTarInfo")
# the override keeps the base class's parameter name, `tarfile`, which hides the module inside it
_TarFile = tarfile.TarFile
_HeaderError = tarfile.HeaderError


class _StrictTarInfo(tarfile.TarInfo):
    """Turns a damaged header after the first into an error; TarFile.next would end the archive
    there, silently accepting whatever came before."""

    @classmethod
    def fromtarfile(cls: type[_T], tarfile: _TarFile) -> _T:
        try:
            return super().fromtarfile(tarfile)
        except _TAR_END_ERRORS:
            raise
        except _HeaderError as e:
            raise UploadError(f"corrupt tar archive: {e}") from None


class _Gunzip:
    """The decompressed tar stream, handed to ``tarfile`` in stream mode (``r|``).

    Decompressing here rather than with ``r|gz`` bounds each inflate call's output, caps the whole
    stream (headers included), and checks what ``tarfile``'s own gzip reader skips: the CRC and length
    in the gzip trailer, truncation, and trailing garbage.
    """

    def __init__(self, data: bytes, cap: int) -> None:
        self._data = memoryview(data)
        self._pos = 0  # input consumed so far; the decompressor's pending input always ends here
        self._inflater = zlib.decompressobj(wbits=31)
        self._cap = cap
        self._out = 0
        self._eof = False

    def read(self, size: int = -1, /) -> bytes:
        pieces: list[bytes] = []
        want = size if size >= 0 else self._cap + 1
        while want > 0 and not self._eof:
            piece = self._inflate(min(want, CHUNK))
            pieces.append(piece)
            want -= len(piece)
        return b"".join(pieces)

    def drain(self) -> None:
        """Read to the end, so that a damaged or truncated tail is noticed even past the tar's end."""
        while self.read(CHUNK):
            pass

    def _inflate(self, limit: int) -> bytes:
        inflater = self._inflater
        pending: bytes | memoryview = inflater.unconsumed_tail
        if not pending and self._pos < len(self._data):
            pending = self._data[self._pos : self._pos + CHUNK]
            self._pos += len(pending)
        try:
            # with all input consumed, zlib may still hold output back (the output limit cut a long
            # match short), so an empty call is made rather than declaring the data truncated
            out = inflater.decompress(pending, limit)
        except zlib.error as e:
            raise UploadError(f"corrupt gzip data: {e}") from None
        if not out and not inflater.eof and not inflater.unconsumed_tail and self._pos >= len(self._data):
            raise UploadError("truncated gzip data: the archive ends early")
        self._out += len(out)
        if self._out > self._cap:
            raise UploadError(
                f"the tar stream unpacks to more than {size_text(self._cap)} (a compression bomb?)"
            )
        if inflater.eof:
            self._next_member()
        return out

    def _next_member(self) -> None:
        self._pos -= len(self._inflater.unused_data)
        rest = self._data[self._pos :]
        if rest[:2] == GZIP_MAGIC:
            # concatenated gzip members are one stream, as gzip(1) reads them
            self._inflater = zlib.decompressobj(wbits=31)
        elif rest.tobytes().strip(b"\x00"):
            raise UploadError("corrupt gzip data: trailing bytes after the compressed stream")
        else:
            self._eof = True  # zero padding after the stream, as some writers add

    # the rest of the file object tarfile's stream mode is typed to want; it never calls them
    def write(self, b: bytes, /) -> int:
        raise io.UnsupportedOperation("write")

    def tell(self) -> int:
        return self._out

    def seek(self, pos: int, /) -> int:
        raise io.UnsupportedOperation("seek")

    def close(self) -> None:
        pass


def _extract(archive: tarfile.TarFile, member: tarfile.TarInfo, tally: Tally, sink: Sink) -> None:
    """A member that is no directory: a regular file, written to ``sink``, or refused."""
    raw = member.name
    if member.type not in _TAR_FILE_TYPES:
        raise UploadError(
            f"{raw!r}: tar member type {member.type!r} is not accepted; only files and directories are"
        )
    if raw.endswith("/"):
        raise UploadError(f"{raw!r}: a regular file whose name ends in '/'")
    path = normalise(raw, is_dir=False)
    tally.add(raw, path, is_dir=False)
    content = archive.extractfile(member)
    if content is None:  # only for links and devices, refused before
        raise UploadError(f"{raw!r}: no content to read")
    with content:
        sink.file(path, bool(member.mode & 0o111), tally.chunks(raw, content))


def walk_tar(data: bytes, tally: Tally, sink: Sink) -> None:
    limits = tally.limits
    stream = _Gunzip(data, limits.max_bytes + 2 * limits.max_files * _TAR_ENTRY_OVERHEAD + _TAR_SLACK)
    raw = ""
    try:
        with tarfile.open(
            fileobj=stream, mode="r|", tarinfo=_StrictTarInfo, encoding="utf-8", errors="strict"
        ) as archive:
            for member in archive:
                raw = member.name
                if member.type in _TAR_REFUSED_TYPES:
                    link = f" to {member.linkname!r}" if member.issym() or member.islnk() else ""
                    raise UploadError(
                        f"{raw!r}: {_TAR_REFUSED_TYPES[member.type]}{link}; "
                        "only files and directories are accepted"
                    )
                if member.isdir():
                    path = normalise(raw, is_dir=True)
                    if path:
                        tally.add(raw, path, is_dir=True)
                        sink.directory(path)
                    continue
                _extract(archive, member, tally, sink)
            stream.drain()
    except UploadError:
        raise
    except UnicodeError:
        raise UploadError(f"a member after {raw!r}: name is not valid UTF-8") from None
    except CORRUPT as e:
        where = f" after member {raw!r}" if raw else ""
        raise UploadError(f"corrupt tar archive{where}: {e}") from None
