"""Where an upload's members go as the walk yields them: nowhere (:class:`Discard`, for
``inspect_upload``: the content is still decompressed and counted), or into a directory
(:class:`DiskWriter`), through directory descriptors with ``O_NOFOLLOW`` / ``O_EXCL``, so even a
link that appeared in the destination behind our back could not redirect a write."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from memgauge.isolation._upload_rules import UploadError

if TYPE_CHECKING:
    from collections.abc import Iterable


class Sink(Protocol):
    def directory(self, path: str) -> None: ...

    def file(self, path: str, executable: bool, chunks: Iterable[bytes]) -> None: ...


class Discard:
    """inspect_upload's sink: the chunks are still pulled, because pulling them is what decompresses
    and counts."""

    def directory(self, path: str) -> None:
        pass

    def file(self, path: str, executable: bool, chunks: Iterable[bytes]) -> None:
        for _ in chunks:
            pass


class DiskWriter:
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


def empty_directory(root_fd: int) -> None:
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
