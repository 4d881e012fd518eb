"""The page's cell forms: what a cell of a ``Table`` (its ``forms``) is drawn as on the page, a
heat bar, a split bar, a call stack or a tree's indent; the text reports show the cell's text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Heat:
    """The cell's figure over a bar as long as ``value``'s share of ``top`` (its column's
    largest); ``negative``: a fall, in the bar's other colour."""

    value: float
    top: float
    negative: bool = False


@dataclass(frozen=True)
class Split:
    """A line's time as one bar of its parts (Python, native, waiting, queued for a CPU), the
    cell's text (their shares) under it."""

    python: float
    native: float
    wait: float
    contention: float = 0.0


@dataclass(frozen=True)
class Stack:
    """The cell (a line), opened on the page to the list of its callers' ``frames``."""

    frames: tuple[str, ...]


@dataclass(frozen=True)
class Indent:
    """The cell indented ``depth`` levels (a tree's row: the page's own indent, where a table's
    ``depths`` are spaces), then ``remark`` as a caution (a phase "(unfinished)")."""

    depth: int
    remark: str = ""


CellForm = Heat | Split | Stack | Indent
