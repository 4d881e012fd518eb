"""What an upload may be: its kind (the name's suffix, and data that agrees), its member names
(relative POSIX paths that cannot reach outside), and its limits, counted while decompressing
(:class:`Tally`: every byte, file and directory, where each limit and each collision is decided).
Shared by the zip and tar walks (``_upload_zip``, ``_upload_tar``) and the API (``_upload``)."""

from __future__ import annotations

import re
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from memgauge._errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

CHUNK = 64 * 1024
# below this the ratio says nothing: a small file of repeated bytes legitimately compresses 1000:1
_RATIO_FLOOR = 2**20
# a member's name is one path; longer ones are not a project layout, and capping them keeps the
# per-file directory walk in extract_upload (one open per component) cheap
_MAX_PATH_BYTES = 1024
_MAX_COMPONENT_BYTES = 255

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
GZIP_MAGIC = b"\x1f\x8b"
_DRIVE = re.compile(r"^[A-Za-z]:")
_PY_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.py")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# what the standard library raises on damaged or hostile archive data; all become UploadError
CORRUPT: tuple[type[Exception], ...] = (
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
                f"{name}: expected a zip archive (data starting PK\\x03\\x04), {looks_like(data)}"
            )
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        if not data.startswith(GZIP_MAGIC):
            raise UploadError(
                f"{name}: expected a gzip-compressed tar (data starting 1f 8b), {looks_like(data)}"
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


class Tally:
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
                f"{raw!r}: the upload unpacks to more than the limit of {size_text(limits.max_bytes)}"
            )
        if self.total > _RATIO_FLOOR and self.total > limits.max_ratio * self.upload_bytes:
            raise UploadError(
                f"{raw!r}: the upload unpacks to more than {limits.max_ratio:g} times its "
                f"{size_text(self.upload_bytes)} (a compression bomb?)"
            )

    def chunks(self, raw: str, stream: IO[bytes]) -> Iterator[bytes]:
        """The member's content in bounded chunks, each counted before anyone sees it."""
        while True:
            try:
                block = stream.read(CHUNK)
            except CORRUPT as e:
                raise UploadError(f"{raw!r}: corrupt archive data: {e}") from None
            if not block:
                return
            self.count(raw, len(block))
            yield block

    def info(self, kind: str) -> UploadInfo:
        return UploadInfo(kind, tuple(sorted(self.files)), self.total)


def normalise(raw: str, *, is_dir: bool, what: str = "member") -> str:
    """The member's path as POSIX components with ``.`` and empty ones dropped; ``""`` only for a
    directory entry naming the top itself (``./``, which ``tar -C dir .`` writes). Anything that
    could reach outside, or that means something else on another system, is refused."""
    refused = _refused_name(raw)
    if refused is not None:
        raise UploadError(f"{what} {raw!r}: {refused}")
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


def _refused_name(raw: str) -> str | None:
    """What makes ``raw`` no name an upload may hold as it is written, or None."""
    for refused, why in (
        ("\x00" in raw, "NUL byte in the name"),
        (not raw, "empty name"),
        (_CONTROL.search(raw) is not None, "control character in the name"),
        ("\\" in raw, "backslash in the name (a Windows path?); use '/'"),
        (_DRIVE.match(raw) is not None, "a Windows drive path"),
        (raw.startswith("/"), "an absolute path"),
    ):
        if refused:
            return why
    return None


def looks_like(data: bytes) -> str:
    if not data:
        return "but the upload is empty"
    if data.startswith(_ZIP_MAGIC):
        return "but the data is a zip archive"
    if data.startswith(GZIP_MAGIC):
        return "but the data is gzip-compressed"
    if b"\x00" not in data[:512]:
        try:
            data[:512].decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return "but the data is text"
    return f"but the data starts {data[:4].hex(' ')}"


def size_text(n: float) -> str:
    from memgauge._units import format_bytes

    return f"{format_bytes(n)} ({int(n)} bytes)" if n >= 1024 else f"{int(n)} bytes"
