"""Validating and unpacking uploads for the validation service's sandboxed runs.

An upload comes from someone we do not trust: a single ``.py`` file, or a ``.zip`` / ``.tar.gz``
project. Before anything runs it must be unpacked into a fresh directory, and the unpacking itself is
the first attack surface: paths that climb out of the directory (``../``, absolute, Windows drive
paths), links that point elsewhere, device files, and archives whose headers lie about their sizes
so that a few hundred KiB expand into gigabytes (a "zip bomb").

So nothing here trusts a header. Every byte is counted as it is decompressed, and the walk stops as
soon as a limit is crossed; ``inspect_upload`` (no disk) and ``extract_upload`` (disk) share that one
walk, so they accept and refuse exactly the same uploads. Tar members are validated and written by
hand rather than with ``tarfile``'s extraction filters, which Python 3.11 only has from 3.11.4 on;
zip members are limited to *stored* and *deflate*, whose decompression can be bounded chunk by chunk
(``zipfile`` inflates bzip2 / lzma input in one unbounded call). Files are created through directory
file descriptors with ``O_NOFOLLOW`` / ``O_EXCL``, so even a link that appeared in the destination
behind our back could not redirect a write.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Protocol, TypeVar

from memgauge._errors import OutputError, UsageError

__all__ = [
    "UploadError",
    "UploadInfo",
    "UploadLimits",
    "extract_upload",
    "inspect_upload",
    "resolve_entry",
    "safe_py_name",
    "upload_kind",
]

_CHUNK = 64 * 1024
# below this the ratio says nothing: a small file of repeated bytes legitimately compresses 1000:1
_RATIO_FLOOR = 2**20
# a member's name is one path; longer ones are not a project layout, and capping them keeps the
# per-file directory walk in extract_upload (one open per component) cheap
_MAX_PATH_BYTES = 1024
_MAX_COMPONENT_BYTES = 255
# tar headers, PAX records and block padding are decompressed too but are not file content; they
# get this much room per entry on top of max_bytes, so a header-sized bomb (a PAX record claiming
# gigabytes, which tarfile reads into memory whole) is cut off at a bounded size
_TAR_ENTRY_OVERHEAD = 8 * 1024
_TAR_SLACK = 2**20

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_CENTRAL_SIGNATURE = b"PK\x01\x02"
_DRIVE = re.compile(r"^[A-Za-z]:")
_PY_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.py")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

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
# what the standard library raises on damaged or hostile archive data; all become UploadError
_CORRUPT: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    EOFError,
    ValueError,  # includes UnicodeDecodeError from member names
    NotImplementedError,
    RuntimeError,
    KeyError,
    IndexError,
    OverflowError,
)


class UploadError(UsageError):
    """An upload that cannot be accepted; the message names the member and what is wrong."""


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may unpack to. ``max_ratio`` (unpacked total over upload size) is checked only
    once the unpacked total passes 1 MiB."""

    max_bytes: int = 64 * 2**20
    max_files: int = 2000
    max_ratio: float = 200.0
    max_upload_bytes: int = 16 * 2**20


@dataclass(frozen=True)
class UploadInfo:
    """``kind`` py | zip | tar.gz; ``files`` the regular files as sorted POSIX relative paths;
    ``total_bytes`` their unpacked size."""

    kind: str
    files: tuple[str, ...]
    total_bytes: int


def upload_kind(name: str, data: bytes) -> str:
    """``py``, ``zip`` or ``tar.gz``: the name's suffix says which, and the data must agree."""
    lower = name.lower()
    if lower.endswith(".py"):
        if b"\x00" in data:
            raise UploadError(f"{name}: expected Python source text, found a NUL byte (binary data?)")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UploadError(
                f"{name}: expected Python source as UTF-8 text, invalid byte at offset {e.start}"
            ) from None
        return "py"
    if lower.endswith(".zip"):
        if not data.startswith(_ZIP_MAGIC):
            raise UploadError(
                f"{name}: expected a zip archive (data starting PK\\x03\\x04), {_looks_like(data)}"
            )
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        if not data.startswith(_GZIP_MAGIC):
            raise UploadError(
                f"{name}: expected a gzip-compressed tar (data starting 1f 8b), {_looks_like(data)}"
            )
        return "tar.gz"
    raise UploadError(
        f"{name}: not an accepted upload; expected a .py file, or a .zip, .tar.gz or .tgz archive"
    )


def safe_py_name(name: str) -> str:
    """The stored name of a single ``.py`` upload: the client's directories dropped (a browser may
    send a full Windows path), and the rest limited to a plain, portable file name."""
    base = re.split(r"[/\\]", name)[-1]
    if len(base) > _MAX_COMPONENT_BYTES or not _PY_NAME.fullmatch(base):  # ASCII only, so chars are bytes
        raise UploadError(
            f"{name!r}: not an accepted script name; use letters, digits, '_', '.' and '-', "
            "not starting with '.' or '-', ending in .py"
        )
    return base


def inspect_upload(name: str, data: bytes, limits: UploadLimits = UploadLimits()) -> UploadInfo:
    """Everything ``extract_upload`` checks, decompressing for real but writing nothing."""
    return _walk(name, data, limits, _Discard())


def extract_upload(name: str, data: bytes, dest: str, limits: UploadLimits = UploadLimits()) -> UploadInfo:
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
            return _walk(name, data, limits, _DiskWriter(root_fd))
        except BaseException as failure:
            try:
                _empty_directory(root_fd)
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
        if entry is None or _normalise(entry, is_dir=False, what="entry point") == script:
            return script
        raise UploadError(f"entry point {entry!r}: a single-file upload can only run {script!r}")
    if entry is not None:
        path = _normalise(entry, is_dir=False, what="entry point")
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


# -- the walk shared by inspect_upload and extract_upload ------------------------------------------


class _Sink(Protocol):
    def directory(self, path: str) -> None: ...

    def file(self, path: str, executable: bool, chunks: Iterable[bytes]) -> None: ...


class _Discard:
    """inspect_upload's sink: the chunks are still pulled, because pulling them is what decompresses
    and counts."""

    def directory(self, path: str) -> None:
        pass

    def file(self, path: str, executable: bool, chunks: Iterable[bytes]) -> None:
        for _ in chunks:
            pass


class _DiskWriter:
    """extract_upload's sink. Every path is opened component by component from the destination's
    descriptor with O_NOFOLLOW, so no symlink, whoever made it, is ever followed."""

    def __init__(self, root_fd: int) -> None:
        self._root_fd = root_fd

    def directory(self, path: str) -> None:
        try:
            os.close(self._open_dir(path.split("/")))
        except OSError as e:
            raise UploadError(f"{path!r}: cannot create the directory: {e.strerror}") from None

    def file(self, path: str, executable: bool, chunks: Iterable[bytes]) -> None:
        *parents, leaf = path.split("/")
        try:
            parent_fd = self._open_dir(parents)
            try:
                fd = os.open(
                    leaf,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o600,
                    dir_fd=parent_fd,
                )
            finally:
                os.close(parent_fd)
            with os.fdopen(fd, "wb") as out:
                # set explicitly: the creation mode is filtered by whatever umask the service runs with
                os.fchmod(out.fileno(), 0o755 if executable else 0o644)
                for chunk in chunks:
                    out.write(chunk)
        except OSError as e:
            raise UploadError(f"{path!r}: cannot write the file: {e.strerror}") from None

    def _open_dir(self, parts: list[str]) -> int:
        fd = os.dup(self._root_fd)
        try:
            for part in parts:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                    created = True
                except FileExistsError:
                    created = False
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = child
                if created:
                    os.fchmod(fd, 0o755)
        except BaseException:
            os.close(fd)
            raise
        return fd


def _empty_directory(root_fd: int) -> None:
    """Remove everything under the (formerly empty) destination; the directory itself stays."""
    for entry in os.scandir(root_fd):
        _remove(root_fd, entry.name, entry.is_dir(follow_symlinks=False))


def _remove(parent_fd: int, name: str, is_dir: bool) -> None:
    # by descriptors, like the writing, so a swapped-in symlink cannot lead the removal outside
    # (shutil.rmtree takes dir_fd only from Python 3.11)
    try:
        if not is_dir:
            os.unlink(name, dir_fd=parent_fd)
            return
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            for entry in os.scandir(fd):
                _remove(fd, entry.name, entry.is_dir(follow_symlinks=False))
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=parent_fd)
    except FileNotFoundError:
        pass


class _Tally:
    """The counts and the path tree of one walk: where each limit and each collision is decided."""

    def __init__(self, limits: UploadLimits, upload_bytes: int) -> None:
        self.limits = limits
        self.upload_bytes = upload_bytes
        self.total = 0
        self.files: dict[str, str] = {}  # normalised path -> name as the archive spells it
        self.dirs: dict[str, str] = {}

    def add(self, raw: str, path: str, *, is_dir: bool) -> None:
        parts = path.split("/")
        for i in range(1, len(parts)):
            self._add_dir("/".join(parts[:i]), raw)
        if is_dir:
            self._add_dir(path, raw)
            return
        if path in self.files:
            raise UploadError(f"{raw!r}: same path as member {self.files[path]!r}")
        if path in self.dirs:
            raise UploadError(f"{raw!r}: a file where member {self.dirs[path]!r} needs a directory")
        self.files[path] = raw
        if len(self.files) > self.limits.max_files:
            raise UploadError(f"{raw!r}: too many files, the limit is {self.limits.max_files}")

    def _add_dir(self, path: str, raw: str) -> None:
        if path in self.files:
            raise UploadError(
                f"{raw!r}: needs {path!r} to be a directory, but member {self.files[path]!r} is a file"
            )
        if path in self.dirs:
            return  # a repeated directory entry is harmless
        self.dirs[path] = raw
        # directories cost inodes and a walk step each, like files; same cap, counted apart
        if len(self.dirs) > self.limits.max_files:
            raise UploadError(f"{raw!r}: too many directories, the limit is {self.limits.max_files}")

    def count(self, raw: str, n: int) -> None:
        self.total += n
        limits = self.limits
        if self.total > limits.max_bytes:
            raise UploadError(
                f"{raw!r}: the upload unpacks to more than the limit of {_size(limits.max_bytes)}"
            )
        if self.total > _RATIO_FLOOR and self.total > limits.max_ratio * self.upload_bytes:
            raise UploadError(
                f"{raw!r}: the upload unpacks to more than {limits.max_ratio:g} times its "
                f"{_size(self.upload_bytes)} (a compression bomb?)"
            )

    def chunks(self, raw: str, stream: IO[bytes]) -> Iterator[bytes]:
        """The member's content in bounded chunks, each counted before anyone sees it."""
        while True:
            try:
                block = stream.read(_CHUNK)
            except _CORRUPT as e:
                raise UploadError(f"{raw!r}: corrupt archive data: {e}") from None
            if not block:
                return
            self.count(raw, len(block))
            yield block

    def info(self, kind: str) -> UploadInfo:
        return UploadInfo(kind, tuple(sorted(self.files)), self.total)


def _walk(name: str, data: bytes, limits: UploadLimits, sink: _Sink) -> UploadInfo:
    if len(data) > limits.max_upload_bytes:
        raise UploadError(
            f"{name}: the upload is {_size(len(data))}, over the limit of {_size(limits.max_upload_bytes)}"
        )
    kind = upload_kind(name, data)
    tally = _Tally(limits, len(data))
    if kind == "py":
        stored = safe_py_name(name)
        tally.add(stored, stored, is_dir=False)
        if len(data) > limits.max_bytes:
            raise UploadError(f"{stored!r}: {_size(len(data))}, over the limit of {_size(limits.max_bytes)}")
        tally.total = len(data)
        sink.file(stored, False, [data])
    elif kind == "zip":
        _walk_zip(data, tally, sink)
    else:
        _walk_tar(data, tally, sink)
    return tally.info(kind)


def _walk_zip(data: bytes, tally: _Tally, sink: _Sink) -> None:
    limits = tally.limits
    # zipfile parses the whole central directory up front (about a second per 100k entries), so a
    # directory stuffed with entries is refused before that, by counting their signatures
    if data.count(_ZIP_CENTRAL_SIGNATURE) > 4 * limits.max_files + 64:
        raise UploadError(f"zip archive: too many entries, the limit is {limits.max_files} files")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _CORRUPT as e:
        raise UploadError(f"corrupt zip archive: {e}") from None
    with archive:
        # every name and type is checked before anything is decompressed or written
        plan: list[tuple[zipfile.ZipInfo, str, str, bool, bool]] = []
        claimed = 0
        for member in archive.infolist():
            raw = member.orig_filename  # .filename is cut at a NUL byte, hiding it
            mode = member.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise UploadError(f"{raw!r}: a symbolic link; links are not accepted")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise UploadError(
                    f"{raw!r}: a special file (mode {mode:o}); only files and directories are accepted"
                )
            is_dir = raw.endswith("/") or kind == stat.S_IFDIR
            path = _normalise(raw, is_dir=is_dir)
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
                f"zip archive: its entries claim {_size(claimed)}, "
                f"over the limit of {_size(limits.max_bytes)}"
            )
        for member, raw, path, is_dir, executable in plan:
            if is_dir:
                sink.directory(path)
                continue
            try:
                stream = archive.open(member)
            except _CORRUPT as e:
                raise UploadError(f"{raw!r}: corrupt archive data: {e}") from None
            with stream:
                sink.file(path, executable, tally.chunks(raw, stream))


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
            piece = self._inflate(min(want, _CHUNK))
            pieces.append(piece)
            want -= len(piece)
        return b"".join(pieces)

    def drain(self) -> None:
        """Read to the end, so that a damaged or truncated tail is noticed even past the tar's end."""
        while self.read(_CHUNK):
            pass

    def _inflate(self, limit: int) -> bytes:
        inflater = self._inflater
        pending: bytes | memoryview = inflater.unconsumed_tail
        if not pending and self._pos < len(self._data):
            pending = self._data[self._pos : self._pos + _CHUNK]
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
            raise UploadError(f"the tar stream unpacks to more than {_size(self._cap)} (a compression bomb?)")
        if inflater.eof:
            self._next_member()
        return out

    def _next_member(self) -> None:
        self._pos -= len(self._inflater.unused_data)
        rest = self._data[self._pos :]
        if rest[:2] == _GZIP_MAGIC:
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


def _walk_tar(data: bytes, tally: _Tally, sink: _Sink) -> None:
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
                    path = _normalise(raw, is_dir=True)
                    if path:
                        tally.add(raw, path, is_dir=True)
                        sink.directory(path)
                    continue
                if member.type not in _TAR_FILE_TYPES:
                    raise UploadError(
                        f"{raw!r}: tar member type {member.type!r} is not accepted; "
                        "only files and directories are"
                    )
                if raw.endswith("/"):
                    raise UploadError(f"{raw!r}: a regular file whose name ends in '/'")
                path = _normalise(raw, is_dir=False)
                tally.add(raw, path, is_dir=False)
                content = archive.extractfile(member)
                if content is None:  # only for links and devices, refused above
                    raise UploadError(f"{raw!r}: no content to read")
                with content:
                    sink.file(path, bool(member.mode & 0o111), tally.chunks(raw, content))
            stream.drain()
    except UploadError:
        raise
    except UnicodeError:
        raise UploadError(f"a member after {raw!r}: name is not valid UTF-8") from None
    except _CORRUPT as e:
        where = f" after member {raw!r}" if raw else ""
        raise UploadError(f"corrupt tar archive{where}: {e}") from None


def _normalise(raw: str, *, is_dir: bool, what: str = "member") -> str:
    """The member's path as POSIX components with ``.`` and empty ones dropped; ``""`` only for a
    directory entry naming the top itself (``./``, which ``tar -C dir .`` writes). Anything that
    could reach outside, or that means something else on another system, is refused."""
    if "\x00" in raw:
        raise UploadError(f"{what} {raw!r}: NUL byte in the name")
    if not raw:
        raise UploadError(f"{what} {raw!r}: empty name")
    if _CONTROL.search(raw):
        raise UploadError(f"{what} {raw!r}: control character in the name")
    if "\\" in raw:
        raise UploadError(f"{what} {raw!r}: backslash in the name (a Windows path?); use '/'")
    if _DRIVE.match(raw):
        raise UploadError(f"{what} {raw!r}: a Windows drive path")
    if raw.startswith("/"):
        raise UploadError(f"{what} {raw!r}: an absolute path")
    parts = raw.split("/")
    if ".." in parts:
        raise UploadError(f"{what} {raw!r}: a '..' component, which could reach outside the upload")
    parts = [p for p in parts if p not in ("", ".")]
    if not parts:
        if is_dir:
            return ""
        raise UploadError(f"{what} {raw!r}: no file name, only '.' and '/'")
    try:
        encoded = [p.encode("utf-8") for p in parts]
    except UnicodeEncodeError:
        raise UploadError(f"{what} {raw!r}: name is not valid UTF-8") from None
    if (
        any(len(p) > _MAX_COMPONENT_BYTES for p in encoded)
        or sum(len(p) + 1 for p in encoded) > _MAX_PATH_BYTES
    ):
        raise UploadError(f"{what} {raw!r}: name too long")
    return "/".join(parts)


def _looks_like(data: bytes) -> str:
    if not data:
        return "but the upload is empty"
    if data.startswith(_ZIP_MAGIC):
        return "but the data is a zip archive"
    if data.startswith(_GZIP_MAGIC):
        return "but the data is gzip-compressed"
    if b"\x00" not in data[:512]:
        try:
            data[:512].decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return "but the data is text"
    return f"but the data starts {data[:4].hex(' ')}"


def _size(n: float) -> str:
    from memgauge._units import format_bytes

    return f"{format_bytes(n)} ({int(n)} bytes)" if n >= 1024 else f"{int(n)} bytes"
