"""The tree's peak (``Peak``) and a line's share of a peak (``Attribution``): part of the
``Profile`` record (``_profile``), kept in a module of their own for room."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Attribution", "Peak"]


@dataclass
class Attribution:
    """A line's share of a peak: ``bytes`` of process ``pid``'s peak are charged to ``file:line``.
    ``stack`` holds its callers, outermost first, as ``file:line`` strings."""

    pid: int
    file: str
    line: int
    function: str
    bytes: int
    stack: list[str] = field(default_factory=list)
    source: str = ""


@dataclass
class Peak:
    """The resident peak of the whole measured process tree.

    ``method`` names how it was measured (see docs/measurement.md). The true peak is within
    ``error_bound_bytes`` of ``resident_bytes``: below it for the cgroup methods (the kernel's counter
    runs ahead by its charge batch), above it for the sampled ones.
    """

    resident_bytes: int = 0
    method: str = ""
    error_bound_bytes: int = 0
    at_seconds: float | None = None
    includes_page_cache: bool = False
    largest_process_bytes: int = 0
    sampled_tree_bytes: int = 0
    # what a container needs (docs/measurement.md "What a container needs"): the largest sampled
    # tree need, its file pages those in use (a working set); in-process, the block's peak; 0 in
    # profiles written before it
    needs_bytes: int = 0
    needs_method: str = ""
    # in needs_bytes, on top of the pages in use: room the kernel's reclaim needs under a limit (it
    # cannot keep exactly the pages in use: docs/measurement.md); 0 where every mapped page counts
    needs_headroom_bytes: int = 0
    # the tree need's parts at its largest sample: anonymous, file-backed (libraries, mapped
    # files: those in use where needs_method is "sampled working set") and shmem bytes, and when
    # that was (None in-process)
    needs_anon_bytes: int = 0
    needs_file_bytes: int = 0
    needs_shmem_bytes: int = 0
    needs_at_seconds: float | None = None
    # the page cache charged to the run's cgroup, read at the end of the run; None: no cgroup
    page_cache_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    # the lines holding each process's resident peak, largest first (see docs/measurement.md)
    attribution: list[Attribution] = field(default_factory=list)

    @property
    def headline_bytes(self) -> int:
        """The one memory figure of a run: what a container needs (``needs_bytes``), else (a
        profile written before it) the tree's resident peak. Every report leads with it, a
        whole-run ``rss`` budget judges it, in ``check``, ``fit``, ``sweep`` and the service alike."""
        return self.needs_bytes or self.resident_bytes
