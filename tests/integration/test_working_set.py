"""The file working set the need counts (``watcher._working_set``), on a real child process:
clearing the referenced bits leaves only the file pages used since, and leaves ``VmHWM`` alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memgauge.watcher._working_set import FileWorkingSet, clear_referenced, read_file_referenced

MIB = 1 << 20


def _child(data: Path) -> subprocess.Popen[str]:
    code = (
        "import mmap, sys\n"
        f"f = open({str(data)!r}, 'rb')\n"
        "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
        "for line in sys.stdin:\n"
        "    total = sum(m[i] for i in range(0, len(m), mmap.PAGESIZE))\n"
        "    print(total, flush=True)\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _mapping(pid: int, data: Path) -> dict[str, int]:
    """The kernel's own figures (kB) for the one mapping of ``data``: what a failure reports."""
    lines = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith(str(data)))
    fields = {}
    for line in lines[at + 1 :]:
        key, _, rest = line.partition(":")
        if not rest.strip().endswith("kB"):
            break
        fields[key] = int(rest.split()[0])
    return {k: fields[k] for k in ("Rss", "Referenced", "FilePmdMapped") if k in fields}


def _vmstat() -> dict[str, int]:
    pairs = (line.split() for line in Path("/proc/vmstat").read_text().splitlines())
    return {k: int(v) for k, v in pairs if k.startswith(("pgscan", "pgsteal", "pgmigrate", "thp_"))}


def _touched(child: subprocess.Popen[str], data: Path) -> int:
    """Touch every page of ``data`` in the child and read the file bytes it referenced since.

    The kernel's own aging may take bits or whole pages away between the two (reclaim, migration,
    a DAMON-style monitor, which this kind of VM runs as ``kdamond``: seen once on CI, 24.5 MiB of
    the 32 read back), so a short read is tried again, at most three times; a defect of the
    clearing or the reading is short every time and still fails, with the kernel's figures."""
    assert child.stdin is not None and child.stdout is not None
    tries = []
    for _ in range(3):
        before = _vmstat()
        child.stdin.write("touch\n")
        child.stdin.flush()
        child.stdout.readline()
        used = read_file_referenced(child.pid)
        assert used is not None
        if used >= 32 * MIB:
            return used
        after = _vmstat()
        moved = {k: after[k] - v for k, v in before.items() if after.get(k, v) != v}
        tries.append((used, _mapping(child.pid, data), moved))
    raise AssertionError(f"fewer than 32 MiB referenced after each touch: {tries}")


def _hwm(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


def test_the_referenced_file_pages_are_those_used_since_the_bits_were_cleared(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x01" * (32 * MIB))
    child = _child(data)
    try:
        _touched(child, data)
        hwm = _hwm(child.pid)
        assert clear_referenced(child.pid)
        # idle since: only the few pages it ran on waiting for input
        idle = read_file_referenced(child.pid)
        assert idle is not None and idle < 8 * MIB, idle
        # the bits only: the process's high-water mark (which phases reset with 5) is untouched
        assert _hwm(child.pid) >= hwm
        _touched(child, data)
        # a window over it: its largest sample's anonymous bytes plus the file pages used, at most
        # the file RSS; its VmHWM, first seen, offers that less the file pages not used
        ws = FileWorkingSet()
        ws.note(10 * MIB, 0, 40 * MIB, 0.1, {child.pid: 40 * MIB})
        anon, file, shmem, _ = ws.close({child.pid: (_hwm(child.pid), 40 * MIB)}, 0.6) or (0, 0, 0, 0.0)
        assert 32 * MIB <= file <= 40 * MIB and anon >= 10 * MIB and shmem == 0, (anon, file)
        assert ws.windows == 1 and ws.last_file is not None and ws.last_file >= 32 * MIB
    finally:
        child.kill()
        child.wait()
    assert read_file_referenced(child.pid) is None and not clear_referenced(child.pid)
