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


def _hwm(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


def test_the_referenced_file_pages_are_those_used_since_the_bits_were_cleared(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x01" * (32 * MIB))
    child = _child(data)
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("touch\n")
        child.stdin.flush()
        child.stdout.readline()
        used = read_file_referenced(child.pid)
        assert used is not None and used >= 32 * MIB, used
        hwm = _hwm(child.pid)
        assert clear_referenced(child.pid)
        # idle since: only the few pages it ran on waiting for input
        idle = read_file_referenced(child.pid)
        assert idle is not None and idle < 8 * MIB, idle
        # the bits only: the process's high-water mark (which phases reset with 5) is untouched
        assert _hwm(child.pid) >= hwm
        child.stdin.write("touch\n")
        child.stdin.flush()
        child.stdout.readline()
        again = read_file_referenced(child.pid)
        assert again is not None and again >= 32 * MIB, again
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
