"""Two or more profiles side by side: the first is the baseline, every other one gets a signed delta
and a ratio against it.

``None`` means "not in this profile": an allocation peak without ``--alloc``, a phase the program
did not open, a line that is not among those recorded as holding the resident peak (it held less
than the smallest one listed, or nothing). Deltas and ratios involving a ``None`` are ``None``, and
so is a ratio against a baseline of 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memgauge.analysis._lines import short_path
from memgauge.analysis._summary import PhaseTotal, exit_text, phase_totals
from memgauge.model import UNBOUNDED_NOTE, Attribution, Profile


@dataclass(frozen=True)
class ComparisonRow:
    """One figure across profiles. ``unit`` is "bytes", "seconds" or "count"; ``lower_bounds[i]``
    says value ``i`` is a lower bound of the true figure (empty: none is)."""

    key: str
    label: str
    unit: str
    values: tuple[float | None, ...]
    lower_bounds: tuple[bool, ...] = ()

    @property
    def deltas(self) -> tuple[float | None, ...]:
        """``value - baseline`` for each non-baseline profile."""
        base = self.values[0]
        return tuple(None if v is None or base is None else v - base for v in self.values[1:])

    @property
    def ratios(self) -> tuple[float | None, ...]:
        """``value / baseline`` for each non-baseline profile."""
        base = self.values[0]
        return tuple(None if v is None or base is None or base == 0 else v / base for v in self.values[1:])

    def is_lower_bound(self, i: int) -> bool:
        return bool(self.lower_bounds) and self.lower_bounds[i]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "values": list(self.values),
            "deltas": list(self.deltas),
            "ratios": list(self.ratios),
            "lower_bounds": [self.is_lower_bound(i) for i in range(len(self.values))],
        }


@dataclass(frozen=True)
class PhaseComparison:
    """All the spans of one phase name, per profile: how many, the highest peak, the total time.
    ``depth`` is the nesting of its first appearance, for indentation only."""

    name: str
    depth: int
    count: ComparisonRow
    peak: ComparisonRow
    duration: ComparisonRow

    @property
    def rows(self) -> tuple[ComparisonRow, ComparisonRow, ComparisonRow]:
        return self.peak, self.duration, self.count

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "depth": self.depth,
            "count": self.count.to_dict(),
            "peak": self.peak.to_dict(),
            "duration": self.duration.to_dict(),
        }


@dataclass(frozen=True)
class LineComparison:
    """A line holding part of the resident peak, matched across profiles. ``lines`` holds its line
    number in each profile (None where absent): it may differ from one version of a file to the
    next."""

    file: str
    function: str
    source: str
    lines: tuple[int | None, ...]
    held: ComparisonRow

    @property
    def location(self) -> str:
        """``file:line``, or ``file:12→15`` when the line moved; a pseudo-file alone."""
        numbers: list[int] = []
        for n in self.lines:
            if n is not None and n not in numbers:
                numbers.append(n)
        if not any(numbers):
            return self.file
        return f"{self.file}:{'→'.join(map(str, numbers))}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "function": self.function,
            "source": self.source,
            "lines": list(self.lines),
            "held": self.held.to_dict(),
        }


@dataclass(frozen=True)
class Comparison:
    names: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]
    exit: tuple[str, ...]
    summary: tuple[ComparisonRow, ...]
    phases: tuple[PhaseComparison, ...]
    lines: tuple[LineComparison, ...]
    notes: tuple[str, ...] = ()
    # each section's part (its "compare" part's answer, with a ``to_dict()``), by section name, in
    # the registry's order; a section no run has figures of has none (torch: tensor bytes by role
    # at each run's torch peak; training: steady figures and speed-ups, docs/training.md)
    sections: dict[str, Any] = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        return self.names[0]

    def section(self, name: str) -> Any:
        """The part of section ``name``; None where no run has its figures."""
        return self.sections.get(name)

    @property
    def headline_row(self) -> ComparisonRow:
        """The memory figure a pair is summed up by: what a container needs where every run has
        it (the headline of `memgauge run`), else the resident peak."""
        for r in self.summary:
            if r.key == "container_needs" and all(v is not None for v in r.values):
                return r
        return self.row("resident_peak")

    def row(self, key: str) -> ComparisonRow:
        """A summary row by key: container_needs (where a run has it), resident_peak,
        largest_process, allocation_peak, wall, cpu."""
        for r in self.summary:
            if r.key == key:
                return r
        raise KeyError(key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "baseline": self.baseline,
            "commands": [list(c) for c in self.commands],
            "exit": list(self.exit),
            "summary": [r.to_dict() for r in self.summary],
            "phases": [p.to_dict() for p in self.phases],
            "lines": [line.to_dict() for line in self.lines],
            "notes": list(self.notes),
            # only the sections a run has figures of: other comparisons' JSON stays as it was
            **{name: part.to_dict() for name, part in self.sections.items()},
        }


def compare(
    profiles: Sequence[Profile], names: Sequence[str], *, cwd: str | None = None, max_lines: int = 10
) -> Comparison:
    """Compare ``profiles`` (named ``names``) against the first. ``cwd`` shortens paths in line
    locations (see ``short_path``); ``max_lines`` caps the lines, ranked by their largest share."""
    if len(profiles) < 2:
        raise ValueError(f"compare needs at least 2 profiles, got {len(profiles)}")
    if len(names) != len(profiles):
        raise ValueError(f"{len(names)} names for {len(profiles)} profiles")
    if max_lines < 0:
        raise ValueError(f"max_lines must be >= 0, got {max_lines}")
    return Comparison(
        names=tuple(names),
        commands=tuple(tuple(p.command) for p in profiles),
        exit=tuple(exit_text(p)[0] for p in profiles),
        summary=_summary(profiles),
        phases=_phases(profiles),
        lines=_lines(profiles, cwd, max_lines),
        notes=_notes(profiles, names),
        sections=_sections(profiles, names),
    )


def _sections(profiles: Sequence[Profile], names: Sequence[str]) -> dict[str, Any]:
    """Each section's "compare" part's answer where it has one (``memgauge.sections``)."""
    from memgauge.sections import SECTIONS

    out = {}
    for spec in SECTIONS:
        compare_part = spec.part("compare")
        part = compare_part(profiles, names) if compare_part is not None else None
        if part is not None:
            out[spec.name] = part
    return out


def _summary(profiles: Sequence[Profile]) -> tuple[ComparisonRow, ...]:
    # what a container needs, the headline of `memgauge run`, first where any run measured it
    # (profiles before schema 6 have none: 0)
    needs = tuple(p.peak.needs_bytes or None for p in profiles)
    first = (ComparisonRow("container_needs", "container needs", "bytes", needs),) if any(needs) else ()
    return (
        *first,
        ComparisonRow(
            "resident_peak",
            "resident peak",
            "bytes",
            tuple(p.peak.resident_bytes for p in profiles),
            tuple(UNBOUNDED_NOTE in p.peak.notes for p in profiles),
        ),
        ComparisonRow(
            "largest_process",
            "largest process",
            "bytes",
            tuple(p.peak.largest_process_bytes for p in profiles),
        ),
        ComparisonRow(
            "allocation_peak",
            "allocation peak",
            "bytes",
            tuple(None if p.allocation_peak is None else p.allocation_peak.bytes for p in profiles),
        ),
        ComparisonRow("wall", "wall time", "seconds", tuple(p.wall_seconds for p in profiles)),
        ComparisonRow(
            "cpu", "CPU time", "seconds", tuple(p.cpu.user_seconds + p.cpu.system_seconds for p in profiles)
        ),
    )


def _phases(profiles: Sequence[Profile]) -> tuple[PhaseComparison, ...]:
    order: dict[str, int] = {}  # name -> depth of its first appearance, in first-appearance order
    totals: list[dict[str, PhaseTotal]] = []
    for p in profiles:
        for ph in sorted(p.phases, key=lambda ph: ph.start_seconds):
            order.setdefault(ph.name, ph.depth)
        totals.append({t.name: t for t in phase_totals(p)})
    result = []
    for name, depth in order.items():
        per = [t.get(name) for t in totals]
        result.append(
            PhaseComparison(
                name=name,
                depth=depth,
                count=ComparisonRow(
                    f"phase:{name}:count", "runs", "count", tuple(None if t is None else t.count for t in per)
                ),
                peak=ComparisonRow(
                    f"phase:{name}:peak",
                    "peak",
                    "bytes",
                    tuple(None if t is None else t.peak_bytes for t in per),
                    tuple(t is not None and t.lower_bound for t in per),
                ),
                duration=ComparisonRow(
                    f"phase:{name}:duration",
                    "time",
                    "seconds",
                    tuple(None if t is None else t.seconds for t in per),
                ),
            )
        )
    return tuple(result)


_LineKey = tuple[str, ...]


def _line_key(a: Attribution, cwd: str | None) -> tuple[_LineKey, str]:
    """The key matching a line across profiles, and its short path. Line numbers shift between two
    versions of a file, so a line with known source is matched by its text within its function;
    the line number is the fallback (pseudo-files such as ``<startup>``, unreadable sources)."""
    path = short_path(a.file, cwd)
    source = a.source.strip()
    if source:
        return ("source", path, a.function, source), path
    return ("line", path, str(a.line)), path


@dataclass
class _LineTotal:
    bytes: int
    line: int
    top: int  # bytes of the entry whose line number is shown: the largest


def _lines(profiles: Sequence[Profile], cwd: str | None, max_lines: int) -> tuple[LineComparison, ...]:
    info: dict[_LineKey, tuple[str, str, str]] = {}  # key -> (path, function, source), first seen
    totals: list[dict[_LineKey, _LineTotal]] = []
    for p in profiles:
        mine: dict[_LineKey, _LineTotal] = {}
        # the same key in several processes (a pool's workers) or twice in one function: one row
        for a in p.peak.attribution:
            key, path = _line_key(a, cwd)
            info.setdefault(key, (path, a.function, a.source.strip()))
            t = mine.get(key)
            if t is None:
                mine[key] = _LineTotal(a.bytes, a.line, a.bytes)
            else:
                t.bytes += a.bytes
                if a.bytes > t.top:
                    t.line, t.top = a.line, a.bytes
        totals.append(mine)

    def largest(key: _LineKey) -> int:
        return max(t[key].bytes for t in totals if key in t)

    # sorted is stable: ties keep first-appearance order, baseline first
    ranked = sorted(info, key=largest, reverse=True)[:max_lines]
    result = []
    for key in ranked:
        path, function, source = info[key]
        per = [t.get(key) for t in totals]
        result.append(
            LineComparison(
                file=path,
                function=function,
                source=source,
                lines=tuple(None if t is None else t.line for t in per),
                held=ComparisonRow(
                    "line:" + ":".join(key),
                    "held at the resident peak",
                    "bytes",
                    tuple(None if t is None else t.bytes for t in per),
                ),
            )
        )
    return tuple(result)


def _notes(profiles: Sequence[Profile], names: Sequence[str]) -> tuple[str, ...]:
    notes: list[str] = []
    methods = [p.peak.method for p in profiles]
    if len(set(methods)) > 1:
        how = "; ".join(f"{n}: {m or 'unknown'}" for n, m in zip(names, methods, strict=True))
        notes.append(
            f"the resident peaks were measured differently ({how}): some of the difference may come from that"
        )
    if any(p.peak.attribution for p in profiles):
        for n, p in zip(names, profiles, strict=True):
            if not p.peak.attribution:
                notes.append(f"{n} has no lines holding its resident peak (recorded with --no-lines?)")
    if any(p.allocation_peak is not None for p in profiles):
        for n, p in zip(names, profiles, strict=True):
            if p.allocation_peak is None:
                notes.append(f"{n} has no allocation peak (recorded without --alloc)")
    return tuple(notes)
