"""The memory of processes whose line samples do not describe their peak, charged to the line of
the process that started them.

A child killed before its sampler wrote anything (an OOM kill in its first half second) or ended
between its last write and its peak (a pool worker terminated right after its task) has a peak
(the watcher's, or its own exit record) and no lines for it. The in-process mode charges such
children to the line running at the tree's peak; a run in a child process knows better: the line
that started each child (``capture``'s ``started_by``). Without it the memory would be dropped
from the attribution, and the largest consumer could be missing from the report (issue 16).
"""

from __future__ import annotations

from memgauge._units import format_bytes
from memgauge.model import Attribution, ProcessRecord

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from memgauge.capture import LineData

# what a process's line samples must miss of its peak before the rest is charged to its starter:
# half of it, and at least this much (the interpreter's own start-up is never worth a row)
MIN_UNSAMPLED = 16 << 20


def charge_unsampled(data: LineData, processes: list[ProcessRecord]) -> tuple[list[Attribution], list[str]]:
    """Attribution entries (one per such process: its pid, the starting line), largest first, and
    the notes that say so."""
    from memgauge.capture import source_line

    entries: list[Attribution] = []
    notes: list[str] = []
    for record in processes:
        starter = data.started_by.get(record.pid)
        if starter is None:
            continue
        sampled = data.sampled_peaks.get(record.pid, 0)
        missing = record.peak_resident_bytes - sampled
        if missing < MIN_UNSAMPLED or sampled >= 0.5 * record.peak_resident_bytes:
            continue
        parent, (file, line, function) = starter
        entries.append(
            Attribution(
                pid=record.pid,
                file=file,
                line=line,
                function=function,
                bytes=missing,
                source=source_line(file, line),
            )
        )
        notes.append(
            f"process {record.pid}: {format_bytes(missing)} of its peak has no line samples (it ended or "
            f"was killed before its sampler wrote them); charged to the line of process {parent} "
            f"that started it, {file}:{line}"
        )
    entries.sort(key=lambda a: -a.bytes)
    return entries, notes
