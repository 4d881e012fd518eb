"""Upload validation and extraction (``memgauge.isolation``, its ``_upload`` modules): hostile
archives are refused with nothing left behind, good ones unpack identically whatever their format."""

from __future__ import annotations

import gzip
import io
import os
import random
import stat
import struct
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memgauge._errors import OutputError, UsageError
from memgauge.isolation import UploadError, UploadLimits, inspect_upload, resolve_entry, safe_py_name
from memgauge.isolation._upload import extract_upload
from memgauge.isolation._upload_rules import UploadInfo, upload_kind

MIB = 2**20

# (path, content, executable); directories are implied by the paths, plus one empty one
PROJECT: list[tuple[str, bytes, bool]] = [
    ("main.py", b"from pkg import util\nutil.run()\n", False),
    ("pkg/__init__.py", b"", False),
    ("pkg/util.py", b"def run() -> None:\n    print('hi')\n", False),
    ("pkg/data/table.csv", b"a,b\n1,2\n" * 500, False),
    ("scripts/run.sh", b"#!/bin/sh\nexec python main.py\n", True),
]
EMPTY_DIR = "pkg/empty"


# -- archive builders ------------------------------------------------------------------------------


def make_zip(
    entries: Sequence[tuple[str | zipfile.ZipInfo, bytes]], compression: int = zipfile.ZIP_DEFLATED
) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, content in entries:
            zf.writestr(name, content)
    return buf.getvalue()


def zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def tar_member(
    name: str, kind: bytes = tarfile.REGTYPE, *, mode: int = 0o644, **attrs: object
) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.mode = mode
    for key, value in attrs.items():
        setattr(member, key, value)
    return member


def make_tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for member, content in members:
            if content is None:
                tf.addfile(member)
            else:
                member.size = len(content)
                tf.addfile(member, io.BytesIO(content))
    return buf.getvalue()


def make_tgz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    return gzip.compress(make_tar(members), mtime=0)


def project_zip() -> bytes:
    entries: list[tuple[str | zipfile.ZipInfo, bytes]] = [
        (zip_info(path, stat.S_IFREG | (0o755 if ex else 0o644)), content) for path, content, ex in PROJECT
    ]
    entries.append((zip_info(EMPTY_DIR + "/", stat.S_IFDIR | 0o755), b""))
    return make_zip(entries)


def project_tgz() -> bytes:
    members: list[tuple[tarfile.TarInfo, bytes | None]] = [
        (tar_member(".", tarfile.DIRTYPE, mode=0o755), None),  # what `tar -C dir -czf x.tgz .` writes
        (tar_member("./pkg", tarfile.DIRTYPE, mode=0o700), None),
    ]
    members += [(tar_member("./" + p, mode=0o755 if ex else 0o600), c) for p, c, ex in PROJECT]
    members.append((tar_member(EMPTY_DIR, tarfile.DIRTYPE, mode=0o700), None))
    return make_tgz(members)


class _Zeros(io.RawIOBase):
    """n zero bytes without holding them in memory."""

    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


@pytest.fixture(scope="module")
def zip_bomb() -> bytes:
    """200 MiB of zeros deflated to about 200 KiB, written in 1 MiB pieces."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("main.py", b"print('hi')\n")
        with zf.open("zeros.bin", "w") as out:
            block = bytes(MIB)
            for _ in range(200):
                out.write(block)
    data = buf.getvalue()
    assert len(data) < 300 * 1024
    return data


@pytest.fixture(scope="module")
def tgz_bomb() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.addfile(tar_member("main.py", size=0), io.BytesIO(b""))
        tf.addfile(tar_member("zeros.bin", size=200 * MIB), io.BufferedReader(_Zeros(200 * MIB)))
    data = buf.getvalue()
    assert len(data) < 300 * 1024
    return data


# -- helpers ---------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path under root: kind, permission bits, content."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), b"")
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    """An empty destination two levels down, so a '../' escape would land inside tmp_path."""
    d = tmp_path / "up" / "dest"
    d.mkdir(parents=True)
    return d


@pytest.fixture
def umask_077() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def refused(name: str, data: bytes, dest: Path, limits: UploadLimits | None = None) -> str:
    """Both entry points refuse the upload, and the whole tmp tree is unchanged afterwards."""
    limits = limits or UploadLimits()
    top = dest.parent.parent
    before = snapshot(top)
    with pytest.raises(UploadError) as inspected:
        inspect_upload(name, data, limits)
    with pytest.raises(UploadError) as extracted:
        extract_upload(name, data, str(dest), limits)
    assert snapshot(top) == before
    assert list(dest.iterdir()) == []
    assert str(inspected.value) == str(extracted.value)
    return str(extracted.value)


# -- good uploads ----------------------------------------------------------------------------------


def test_zip_and_tgz_extract_identically(tmp_path: Path, umask_077: None) -> None:
    results = {}
    for name, data in (("project.zip", project_zip()), ("project.tar.gz", project_tgz())):
        out = tmp_path / name
        out.mkdir()
        info = extract_upload(name, data, str(out))
        assert inspect_upload(name, data) == info
        results[name] = (info, snapshot(out))
    (zinfo, ztree), (tinfo, ttree) = results.values()
    assert ztree == ttree
    assert zinfo.files == tinfo.files
    assert zinfo.files == tuple(sorted(p for p, _, _ in PROJECT))
    assert zinfo.total_bytes == tinfo.total_bytes == sum(len(c) for _, c, _ in PROJECT)
    assert (zinfo.kind, tinfo.kind) == ("zip", "tar.gz")
    # modes are ours, not the archive's nor the umask's: 0o700 / 0o600 in the tar became 0o755 / 0o644
    assert ztree["pkg"] == ("dir", 0o755, b"")
    assert ztree[EMPTY_DIR] == ("dir", 0o755, b"")
    assert ztree["scripts/run.sh"][:2] == ("file", 0o755)
    assert ztree["pkg/util.py"] == ("file", 0o644, PROJECT[2][1])
    assert set(ztree) == {*zinfo.files, "pkg", "pkg/data", EMPTY_DIR, "scripts"}


def test_py_upload(dest: Path, umask_077: None) -> None:
    source = "print('héllo')\n".encode()
    info = extract_upload("client/dir/hello.py", source, str(dest))
    assert info == UploadInfo("py", ("hello.py",), len(source))
    assert inspect_upload("client/dir/hello.py", source) == info
    assert snapshot(dest) == {"hello.py": ("file", 0o644, source)}
    assert resolve_entry(info, None) == "hello.py"


def test_inspect_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inspect_upload("project.zip", project_zip())
    inspect_upload("project.tgz", project_tgz())
    assert list(tmp_path.iterdir()) == []


def test_empty_zip_is_valid_but_has_no_entry_point() -> None:
    data = make_zip([])
    assert data.startswith(b"PK\x05\x06")
    info = inspect_upload("empty.zip", data)
    assert info == UploadInfo("zip", (), 0)
    with pytest.raises(UploadError, match=r"no \.py file"):
        resolve_entry(info, None)


def test_multi_member_gzip_and_zero_padding_accepted() -> None:
    tar = make_tar([(tar_member("a.py"), b"x = 1\n"), (tar_member("b/c.py"), b"y = 2\n" * 1000)])
    half = len(tar) // 2
    for data in (
        gzip.compress(tar[:half]) + gzip.compress(tar[half:]),
        gzip.compress(tar) + bytes(1000),
    ):
        assert inspect_upload("x.tgz", data).files == ("a.py", "b/c.py")


def test_extract_refuses_a_non_empty_or_missing_destination(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("keep me")
    with pytest.raises(OutputError, match="not empty"):
        extract_upload("project.zip", project_zip(), str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["old.txt"]
    with pytest.raises(OutputError):
        extract_upload("project.zip", project_zip(), str(tmp_path / "missing"))


def test_upload_error_is_a_usage_error() -> None:
    assert issubclass(UploadError, UsageError)
    assert UploadError("x").exit_code == 64


# -- names -----------------------------------------------------------------------------------------

BAD_NAMES = [
    ("../x.py", "'..'"),
    ("a/../../x.py", "'..'"),
    ("a/../x.py", "'..'"),  # stays inside, but no archive tool writes it; refused all the same
    ("/etc/x", "absolute"),
    ("//x.py", "absolute"),
    ("C:\\x", "backslash"),
    ("C:x.py", "drive"),
    ("a\\..\\x", "backslash"),
    ("./.", "no file name"),
    ("a\nb.py", "control character"),
    ("d/" + "n" * 300 + ".py", "too long"),
]


@pytest.mark.parametrize(("bad", "why"), BAD_NAMES)
def test_bad_names_refused_in_zip(bad: str, why: str, dest: Path) -> None:
    data = make_zip([("main.py", b"print(1)\n"), (bad, b"owned\n")])
    message = refused("evil.zip", data, dest)
    assert why in message and repr(bad) in message


@pytest.mark.parametrize(("bad", "why"), BAD_NAMES)
def test_bad_names_refused_in_tgz(bad: str, why: str, dest: Path) -> None:
    # the good member comes first and is written before the bad one is seen: it must be removed
    data = make_tgz([(tar_member("main.py"), b"print(1)\n"), (tar_member(bad), b"owned\n")])
    message = refused("evil.tar.gz", data, dest)
    assert why in message and repr(bad) in message


def test_nul_in_names_refused(dest: Path) -> None:
    # zipfile cuts ZipInfo.filename at a NUL, so patch one into the stored name after writing
    data = bytearray(make_zip([("main.py", b"1\n"), ("evilXsh.py", b"2\n")]))
    for at in [i for i in range(len(data)) if data.startswith(b"evilXsh", i)]:
        data[at + 4] = 0
    assert "NUL" in refused("evil.zip", bytes(data), dest)
    # a PAX record (written for the non-ASCII name) carries its length, so the NUL survives reading
    tgz = make_tgz([(tar_member("main.py"), b"1\n"), (tar_member("évil\x00.py"), b"2\n")])
    assert "NUL" in refused("evil.tgz", tgz, dest)


def test_empty_name_refused(dest: Path) -> None:
    data = make_tgz([(tar_member("main.py"), b"1\n"), (tar_member(""), b"2\n")])
    assert "empty name" in refused("evil.tgz", data, dest)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("x.py", "x.py"),
        ("x.py", "./x.py"),
        ("a/x.py", "a//x.py"),
        ("a", "a/b.py"),  # a file where a directory is needed
        ("a/b.py", "a"),
    ],
)
def test_colliding_paths_refused(first: str, second: str, dest: Path) -> None:
    assert repr(second) in refused("dup.zip", make_zip([(first, b"1\n"), (second, b"2\n")]), dest)
    tgz = make_tgz([(tar_member(first), b"1\n"), (tar_member(second), b"2\n")])
    assert repr(second) in refused("dup.tgz", tgz, dest)


def test_file_colliding_with_a_directory_entry_refused(dest: Path) -> None:
    data = make_tgz([(tar_member("a", tarfile.DIRTYPE, mode=0o755), None), (tar_member("a"), b"1\n")])
    assert "directory" in refused("dup.tgz", data, dest)


# -- member types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (tar_member("link.py", tarfile.SYMTYPE, linkname="/etc/passwd"), "symbolic link"),
        (tar_member("inside.py", tarfile.SYMTYPE, linkname="main.py"), "symbolic link"),
        (tar_member("hard.py", tarfile.LNKTYPE, linkname="main.py"), "hard link"),
        (tar_member("fifo", tarfile.FIFOTYPE), "FIFO"),
        (tar_member("tty", tarfile.CHRTYPE, devmajor=5, devminor=0), "character device"),
        (tar_member("disk", tarfile.BLKTYPE, devmajor=8, devminor=0), "block device"),
        (tar_member("contig", b"V"), "not accepted"),  # a volume label: any other type is refused
    ],
)
def test_tar_links_and_special_files_refused(member: tarfile.TarInfo, why: str, dest: Path) -> None:
    data = make_tgz([(tar_member("main.py"), b"print(1)\n"), (member, None)])
    message = refused("evil.tgz", data, dest)
    assert why in message and repr(member.name) in message


def test_zip_symlink_and_special_members_refused(dest: Path) -> None:
    link = zip_info("link.py", stat.S_IFLNK | 0o777)
    assert "symbolic link" in refused(
        "evil.zip", make_zip([("main.py", b"1\n"), (link, b"/etc/passwd")]), dest
    )
    fifo = zip_info("fifo", stat.S_IFIFO | 0o644)
    assert "special file" in refused("evil.zip", make_zip([("main.py", b"1\n"), (fifo, b"")]), dest)


def test_encrypted_zip_member_refused(dest: Path) -> None:
    data = bytearray(make_zip([("main.py", b"print(1)\n")]))
    # set the "encrypted" flag bit in both the local and the central header
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature) + offset
        data[at] |= 0x1
    assert "encrypted archives are not accepted" in refused("secret.zip", bytes(data), dest)


def test_zip_compression_other_than_deflate_refused(dest: Path) -> None:
    data = make_zip([("main.py", b"print(1)\n")], compression=zipfile.ZIP_LZMA)
    assert "compression method" in refused("x.zip", data, dest)


# -- limits and bombs ------------------------------------------------------------------------------


def test_zip_bomb_refused_quickly(zip_bomb: bytes, dest: Path) -> None:
    start = time.monotonic()
    message = refused("bomb.zip", zip_bomb, dest)
    assert time.monotonic() - start < 5
    assert "limit" in message or "times" in message


def test_zip_bomb_under_max_bytes_refused_by_ratio(dest: Path) -> None:
    # 40 MiB of zeros claims less than max_bytes, so only the counted ratio can refuse it
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("zeros.bin", "w") as out:
        for _ in range(40):
            out.write(bytes(MIB))
    start = time.monotonic()
    message = refused("bomb.zip", buf.getvalue(), dest)
    assert time.monotonic() - start < 5
    assert "200 times" in message and "'zeros.bin'" in message


@pytest.mark.parametrize(("claim", "why"), [(60 * MIB, "200 times"), (100, "CRC")])
def test_zip_with_lying_size_header_refused(zip_bomb: bytes, claim: int, why: str, dest: Path) -> None:
    # the central directory says zeros.bin unpacks to less than max_bytes, where it really makes
    # 200 MiB: a checker trusting the header would pass it. At 60 MiB it is the counted ratio that
    # stops it; at 100 bytes zipfile stops inflating there and the CRC no longer matches
    data = bytearray(zip_bomb)
    central = data.rindex(b"zeros.bin") - 46
    assert data[central : central + 4] == b"PK\x01\x02"
    struct.pack_into("<I", data, central + 24, claim)
    start = time.monotonic()
    message = refused("bomb.zip", bytes(data), dest)
    assert time.monotonic() - start < 5
    assert "'zeros.bin'" in message and why in message


def test_tgz_bomb_refused_quickly(tgz_bomb: bytes, dest: Path) -> None:
    start = time.monotonic()
    message = refused("bomb.tar.gz", tgz_bomb, dest)
    assert time.monotonic() - start < 5
    assert "'zeros.bin'" in message and "200 times" in message


def test_tgz_header_bomb_refused(dest: Path) -> None:
    # a PAX header claiming 300 MiB: tarfile would read it into memory whole before any member; 20 MiB
    # of it are present, far more than the stream cap these limits give (about 2 MiB)
    header = bytearray(512)
    header[0:9] = b"PaxHeader"
    header[100:108] = b"0000644\x00"
    header[124:136] = b"%011o\x00" % (300 * MIB)
    header[156:157] = b"x"
    header[257:265] = b"ustar\x0000"
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\x00 " % sum(header)
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    parts = [compressor.compress(bytes(header))]
    block = bytes(MIB)
    for _ in range(20):
        parts.append(compressor.compress(block))
    parts.append(compressor.flush())
    limits = UploadLimits(max_bytes=MIB, max_files=10)
    start = time.monotonic()
    message = refused("bomb.tgz", b"".join(parts), dest, limits)
    assert time.monotonic() - start < 5
    assert "tar stream" in message


def test_too_many_files(dest: Path) -> None:
    limits = UploadLimits(max_files=5)
    files = [(f"m{i}.py", b"x = 1\n") for i in range(6)]
    assert inspect_upload("ok.zip", make_zip(files[:5]), limits).files == tuple(f for f, _ in files[:5])
    assert "too many files" in refused("many.zip", make_zip(list(files)), dest, limits)
    tgz = make_tgz([(tar_member(f), c) for f, c in files])
    assert "too many files" in refused("many.tgz", tgz, dest, limits)


def test_too_many_directories(dest: Path) -> None:
    data = make_zip([(f"d{i}/x{i}/m.py", b"1\n") for i in range(3)])
    assert "too many directories" in refused("deep.zip", data, dest, UploadLimits(max_files=5))


def test_zip_with_absurd_entry_count_refused_before_parsing(dest: Path) -> None:
    data = make_zip([(f"{i}", b"") for i in range(200)], compression=zipfile.ZIP_STORED)
    assert "too many entries" in refused("many.zip", data, dest, UploadLimits(max_files=10))


def test_total_size_limit_counts_real_bytes(dest: Path) -> None:
    # random content: incompressible, so it is max_bytes (not the ratio) that refuses the second file
    rng = random.Random(1)
    first, second = rng.randbytes(600_000), rng.randbytes(600_000)
    limits = UploadLimits(max_bytes=1_000_000)
    assert inspect_upload("ok.zip", make_zip([("a.bin", first)]), limits).total_bytes == 600_000
    # zip headers state the sizes, so an honest one is refused before anything is inflated
    message = refused("big.zip", make_zip([("a.bin", first), ("b.bin", second)]), dest, limits)
    assert "claim" in message and "limit" in message
    tgz = make_tgz([(tar_member("a.bin"), first), (tar_member("b.bin"), second)])
    message = refused("big.tgz", tgz, dest, limits)
    assert "'b.bin'" in message and "limit" in message


def test_upload_size_limit(dest: Path) -> None:
    data = project_zip()
    limits = UploadLimits(max_upload_bytes=len(data) - 1)
    assert "over the limit" in refused("p.zip", data, dest, limits)
    assert "over the limit" in refused("p.py", b"x = 1\n" * 100, dest, UploadLimits(max_upload_bytes=10))


def test_large_py_over_max_bytes(dest: Path) -> None:
    assert "over the limit" in refused("big.py", b"#" * 2000, dest, UploadLimits(max_bytes=1000))


# -- corrupt and truncated archives ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_truncated_archives_refused(kind: str, dest: Path) -> None:
    data = project_zip() if kind == "zip" else project_tgz()
    for cut in sorted({1, 2, 4, 10, 30, 100, len(data) // 2, len(data) - 10, len(data) - 1}):
        refused(f"cut.{kind}", data[:cut], dest)


@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_damaged_archives_raise_only_upload_error(kind: str, tmp_path: Path) -> None:
    data = project_zip() if kind == "zip" else project_tgz()
    rng = random.Random(kind)
    for i in range(150):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(2, len(damaged))] = rng.randrange(256)
        out = tmp_path / str(i)
        out.mkdir()
        try:
            inspected = inspect_upload(f"x.{kind}", bytes(damaged))
        except UploadError:
            inspected = None
        try:
            extracted = extract_upload(f"x.{kind}", bytes(damaged), str(out))
        except UploadError:
            extracted = None
            assert list(out.iterdir()) == []
        assert inspected == extracted  # both accept (a harmless byte, e.g. a timestamp) or both refuse


def test_zip_with_flipped_compressed_byte_refused(dest: Path) -> None:
    data = bytearray(make_zip([("main.py", b"print('hello world')\n" * 200)]))
    data[data.index(b"main.py") + 20] ^= 0xFF
    message = refused("bad.zip", bytes(data), dest)
    assert "'main.py'" in message and "corrupt" in message


def test_tar_with_damaged_header_mid_archive_refused(dest: Path) -> None:
    # tarfile alone ends the archive silently at a bad header after the first, keeping a.py only
    tar = bytearray(make_tar([(tar_member(n), b"x = 1\n") for n in ("a.py", "b.py", "c.py")]))
    at = tar.index(b"b.py")
    tar[at] = ord("z")  # the header checksum no longer matches
    message = refused("bad.tgz", gzip.compress(bytes(tar)), dest)
    assert "corrupt tar" in message


def test_gzip_problems_refused(dest: Path) -> None:
    good = project_tgz()
    assert "trailing" in refused("x.tgz", good + b"garbage", dest)
    assert "corrupt" in refused("x.tgz", gzip.compress(b"not a tar archive at all\n" * 40), dest)
    bad_crc = bytearray(good)
    bad_crc[-8] ^= 0xFF
    assert "corrupt gzip" in refused("x.tgz", bytes(bad_crc), dest)


# -- kinds -----------------------------------------------------------------------------------------


def test_upload_kind_accepts_matching_suffix_and_magic() -> None:
    assert upload_kind("a.py", b"print(1)\n") == "py"
    assert upload_kind("a.py", b"") == "py"
    assert upload_kind("A.ZIP", project_zip()) == "zip"
    assert upload_kind("empty.zip", make_zip([])) == "zip"
    assert upload_kind("a.tar.gz", project_tgz()) == "tar.gz"
    assert upload_kind("a.tgz", project_tgz()) == "tar.gz"


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("a.zip", gzip.compress(b"x"), "is gzip"),
        ("a.tar.gz", make_zip([("a.py", b"")]), "is a zip"),
        ("a.tgz", b"print(1)\n", "is text"),
        ("a.zip", b"", "empty"),
        ("a.py", b"print(1)\x00\n", "NUL"),
        ("a.py", b"print('\xff')\n", "UTF-8"),
        ("a.py", make_zip([("a.py", b"")]), "NUL"),
        ("a.tar", make_tar([]), "not an accepted upload"),
        ("a.rar", b"Rar!", "not an accepted upload"),
        ("noext", b"print(1)", "not an accepted upload"),
    ],
)
def test_upload_kind_refuses_mismatch(name: str, data: bytes, why: str) -> None:
    with pytest.raises(UploadError, match="expected") as err:
        upload_kind(name, data)
    assert why in str(err.value) and name in str(err.value)


# -- resolve_entry ---------------------------------------------------------------------------------


def archive(*files: str) -> UploadInfo:
    return UploadInfo("zip", tuple(sorted(files)), 0)


def test_resolve_entry_single_script() -> None:
    info = UploadInfo("py", ("job.py",), 10)
    assert resolve_entry(info, None) == "job.py"
    assert resolve_entry(info, "job.py") == "job.py"
    with pytest.raises(UploadError, match=r"can only run 'job\.py'"):
        resolve_entry(info, "other.py")


def test_resolve_entry_archive_defaults() -> None:
    assert resolve_entry(archive("main.py", "app.py", "lib/x.py"), None) == "main.py"
    assert resolve_entry(archive("app.py", "lib/x.py", "lib/main.py", "README.md"), None) == "app.py"


def test_resolve_entry_archive_named() -> None:
    info = archive("main.py", "src/app.py", "README.md")
    assert resolve_entry(info, "src/app.py") == "src/app.py"
    assert resolve_entry(info, "./src//app.py") == "src/app.py"
    for entry, why in [
        ("../app.py", "'..'"),
        ("src/../main.py", "'..'"),
        ("/src/app.py", "absolute"),
        ("src\\app.py", "backslash"),
        ("README.md", "not a .py"),
        ("src/missing.py", "no such file"),
        ("src", "not a .py"),
        ("", "empty"),
        ("x\x00.py", "NUL"),
    ]:
        with pytest.raises(UploadError, match="entry point") as err:
            resolve_entry(info, entry)
        assert why in str(err.value), entry


def test_resolve_entry_ambiguous() -> None:
    with pytest.raises(UploadError, match=r"^name the entry point: .*a\.py, b\.py$"):
        resolve_entry(archive("a.py", "b.py", "lib/c.py"), None)
    many = archive(*(f"s{i}.py" for i in range(7)))
    with pytest.raises(UploadError, match=r"s0\.py, s1\.py, s2\.py, s3\.py, s4\.py and 2 more$") as err:
        resolve_entry(many, None)
    assert "s5.py" not in str(err.value)
    with pytest.raises(
        UploadError, match=r"^name the entry point: .*below the top level: pkg/a\.py, pkg/b\.py"
    ):
        resolve_entry(archive("pkg/a.py", "pkg/b.py", "data.csv"), None)
    with pytest.raises(UploadError, match=r"no \.py file"):
        resolve_entry(archive("README.md"), None)


# -- safe_py_name ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("script.py", "script.py"),
        ("_x.py", "_x.py"),
        ("9lives.py", "9lives.py"),
        ("my-job.v2.py", "my-job.v2.py"),
        ("some/dir/job.py", "job.py"),
        ("C:\\Users\\me\\job.py", "job.py"),
        ("../../job.py", "job.py"),
    ],
)
def test_safe_py_name_accepts(name: str, stored: str) -> None:
    assert safe_py_name(name) == stored


@pytest.mark.parametrize(
    "name",
    [".py", ".hidden.py", "-x.py", "x.txt", "x.PY", "x.pyc", "sp ace.py", "ünï.py", "", "x.py/",
     "a" * 300 + ".py", "x\x00.py", "x.py\n"],
)  # fmt: skip
def test_safe_py_name_refuses(name: str) -> None:
    with pytest.raises(UploadError, match="not an accepted script name"):
        safe_py_name(name)
