"""Which rows of a comparison are worth showing."""

from __future__ import annotations

from memgauge.analysis._compare import ComparisonRow


def has_values(row: ComparisonRow) -> bool:
    """Some profile has the figure (no profile has an allocation peak without ``--alloc``)."""
    return any(v is not None for v in row.values)


def ran_repeatedly(row: ComparisonRow) -> bool:
    """A phase's number of runs is only worth a row when some profile ran it more than once."""
    return any(v is not None and v != 1 for v in row.values)
