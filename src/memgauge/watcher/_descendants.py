"""The descendants of the current process, sampled from ``/proc`` for
``memgauge.profile(children=True)``.

Descendants are found by walking ``/proc/PID/task/*/children`` from this process down (children of
every thread, not only the main one), at every timeline sample. A process orphaned by its parent's
exit is re-parented outside the tree and no longer found; one that lives less than a sampling
interval can be missed entirely.

What a descendant adds to the tree's figure at a sample:

* an exec'd program (``subprocess``): its resident size (``/proc/PID/stat``);
* a fork that has not exec'd (same program image and command line as its parent): seen for the
  first time, nothing: it is most likely ``subprocess``'s fork on its way to ``exec``, whose resident
  size is the parent's own pages (a ``vfork`` child shares the parent's memory outright). Seen again
  (a ``multiprocessing`` fork worker, an ``os.fork``), its private memory (``smaps_rollup``): the
  pages it shares copy-on-write with its parent are already in the parent's figure.
"""

from __future__ import annotations

import os

from memgauge import capture
from memgauge.watcher._cmdline import CmdlineBudget, bounded_cmdline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import ProcessRecord

_PRIVATE_FIELDS = (b"Private_Clean:", b"Private_Dirty:", b"Private_Hugetlb:")


def parse_private(raw: bytes) -> int:
    """Private bytes of a ``smaps_rollup``: pages this process alone maps."""
    total = 0
    for name in _PRIVATE_FIELDS:
        i = raw.find(name)
        if i >= 0:
            total += int(raw[i + len(name) : raw.index(b"kB", i)]) * 1024
    return total


def read_all_children(pid: int) -> list[int]:
    """Children forked by any thread of ``pid`` (``CONFIG_PROC_CHILDREN``)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return out


class Descendant:
    """One program image of one descendant (a pid that exec'd has one before and one after)."""

    __slots__ = (
        "cmdline",
        "counted",
        "cpu0",
        "first_seen",
        "forked",
        "image",
        "last_seen",
        "peak",
        "pid",
        "ppid",
        "samples",
        "system",
        "user",
    )

    def __init__(
        self, pid: int, ppid: int, image: tuple[int, int], cmdline: list[str], t: float, forked: bool
    ) -> None:
        self.pid, self.ppid, self.image, self.cmdline = pid, ppid, image, cmdline
        self.first_seen = self.last_seen = t
        self.forked = forked
        self.samples = 0
        self.counted = False  # in the tree's figure at least once: a process of the profile
        self.peak = 0
        self.user = self.system = 0.0
        self.cpu0 = (0.0, 0.0)  # CPU it had used before the block, for one running when it began


class Descendants:
    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        st = capture.read_stat(self.root)
        self._root_image = st.image if st is not None else (0, 0)
        self._root_cmdline = bounded_cmdline(capture.read_cmdline(self.root) or [])
        self.records: list[Descendant] = []
        self._live: dict[int, Descendant] = {}
        self._files = capture.OpenFiles()
        self._samples = 0
        self._cmdlines = CmdlineBudget()

    def sample(self, t: float) -> dict[int, int]:
        """pid -> bytes each descendant adds to the tree's figure now (see the module's doc); a
        zombie, and a fork seen for the first time, are left out."""
        first = self._samples == 0
        self._samples += 1
        out: dict[int, int] = {}
        images = {self.root: (self._root_image, self._root_cmdline)}
        todo = [self.root]
        while todo:
            parent = todo.pop()
            for pid in read_all_children(parent):
                if pid in images:
                    continue
                raw = self._files.read(f"/proc/{pid}/stat")
                st = capture.parse_stat(raw) if raw else None
                if st is None:
                    continue
                rec = self._live.get(pid)
                if rec is None or rec.image != st.image:
                    if st.image == (0, 0):
                        # a zombie: no memory left, only its final CPU times for a record we know
                        if rec is not None:
                            rec.user, rec.system, rec.last_seen = st.user_seconds, st.system_seconds, t
                        images[pid] = (st.image, [])
                        continue
                    rec = self._new_image(pid, parent, st, rec, images[parent], t, first)
                images[pid] = (st.image, rec.cmdline)
                todo.append(pid)
                rec.samples += 1
                rec.last_seen = t
                rec.user, rec.system = st.user_seconds, st.system_seconds
                counted = self._counted(rec, st, first)
                if counted is not None:
                    out[pid] = counted
                    rec.counted = True
        for pid in [p for p in self._live if p not in images]:
            del self._live[pid]
            self._files.close_prefix(f"/proc/{pid}/")
        return out

    def _new_image(
        self,
        pid: int,
        parent: int,
        st: capture.StatSample,
        old: Descendant | None,
        parent_seen: tuple[tuple[int, int], list[str]],
        t: float,
        first: bool,
    ) -> Descendant:
        """The record of a process seen first, or of a new program in a pid (an exec)."""
        cmdline = capture.read_cmdline(pid) or [f"[{st.comm}]"]
        if old is not None:
            self._replaced(old)
        # compared and kept bounded (see CmdlineBudget)
        parent_image, parent_cmdline = parent_seen
        forked = st.image == parent_image and bounded_cmdline(cmdline) == parent_cmdline
        rec = Descendant(pid, parent, st.image, self._cmdlines.keep(cmdline), t, forked)
        if first:
            rec.cpu0 = (st.user_seconds, st.system_seconds)
        self._live[pid] = rec
        self.records.append(rec)
        return rec

    def _counted(self, rec: Descendant, st: capture.StatSample, first: bool) -> int | None:
        """What the process adds to the tree's figure now (its peak raised to it), None for a fork
        seen for the first time: the block's first sample counts a fork already running (a pool's
        worker) at once (counted as nothing there, it would make the block's start too low); later,
        it is not in the timeline either: it may never be a process of its own."""
        if rec.forked:
            if rec.samples == 1 and not first:
                return None
            smaps = self._files.read(f"/proc/{rec.pid}/smaps_rollup")
            counted = parse_private(smaps) if smaps else 0
            rec.peak = max(rec.peak, counted)
            return counted
        status = self._files.read(f"/proc/{rec.pid}/status")
        hwm = capture.parse_high_water(status) if status else 0
        rec.peak = max(rec.peak, hwm, st.resident_bytes)
        return st.resident_bytes

    def _replaced(self, rec: Descendant) -> None:
        # the pid exec'd: a fork seen only on its way to exec is no program of its own
        if not rec.counted:
            self.records.remove(rec)

    def cpu_seconds(self) -> tuple[float, float]:
        """User and system CPU time the descendants running now have used since the block began
        (those reaped meanwhile are in ``os.times()``'s children times)."""
        live = self._live.values()
        return sum(r.user - r.cpu0[0] for r in live), sum(r.system - r.cpu0[1] for r in live)

    def process_records(self, t0: float) -> list[ProcessRecord]:
        from memgauge.model import ProcessRecord

        return [
            ProcessRecord(
                pid=r.pid,
                ppid=r.ppid,
                cmdline=list(r.cmdline),
                start_seconds=max(0.0, r.first_seen - t0),
                end_seconds=r.last_seen - t0,
                peak_resident_bytes=r.peak,
                cpu_user_seconds=r.user,
                cpu_system_seconds=r.system,
                peak_exact=False,
            )
            for r in self.records
            if r.counted
        ]

    def close(self) -> None:
        self._files.close_all()
