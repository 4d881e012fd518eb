"""Summaries of the raw runs and the markdown tables printed by ``run_bench.py``.

Everything here is computed from measured runs only: a cell with no measurement says ``n/a`` or
``failed``, never a guess.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
NOOP = "noop"
# the targets from the issue
OVERHEAD_TARGET = 1.05  # default mode, against plain: each workload, and the median over workloads
OVERHEAD_WORST_TARGET = 1.3  # default mode, against plain: the worst workload
STARTUP_TARGET_SECONDS = 0.3
ALLOC_TOOL, ALLOC_BASE = "memgauge-alloc", "memray"
ALLOC_TARGET = 1.05  # memgauge run --alloc against memray run alone, on the same workload


@dataclass
class RunRecord:
    """One timed run. ``wall_seconds`` is measured from outside: fork, exec, the tool's start-up,
    the program, and the tool's shutdown (writing its profile) included; reading the profile back
    afterwards is not."""

    rep: int
    position: int  # place of this run within its repetition: order effects can be checked
    workload: str
    tool: str
    wall_seconds: float
    returncode: int
    peak_bytes: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _paired_ratios(records: list[RunRecord], workload: str, tool: str, base: str = "plain") -> list[float]:
    """tool / base (plain unless told) wall time within each repetition: pairing cancels drift
    between repetitions."""
    by_rep = {(r.rep, r.tool): r for r in records if r.workload == workload and r.ok}
    ratios = []
    for (rep, name), run in by_rep.items():
        other = by_rep.get((rep, base))
        if name == tool and other is not None and other.wall_seconds > 0:
            ratios.append(run.wall_seconds / other.wall_seconds)
    return ratios


def _cell_summary(records: list[RunRecord], workload: str, tool: str) -> dict[str, Any]:
    runs = [r for r in records if r.workload == workload and r.tool == tool]
    ok = [r for r in runs if r.ok]
    walls = [r.wall_seconds for r in ok]
    peaks = [r.peak_bytes for r in ok if r.peak_bytes is not None]
    notes = sorted({r.note for r in runs if r.note})
    summary: dict[str, Any] = {
        "runs": len(runs),
        "failed": len(runs) - len(ok),
        "wall_median_s": _median(walls),
        "wall_min_s": min(walls, default=None),
        "wall_max_s": max(walls, default=None),
        "ratio_median": _median(_paired_ratios(records, workload, tool)),
        "peak_median_bytes": _median([float(p) for p in peaks]),
        "peak_min_bytes": min(peaks, default=None),
        "peak_max_bytes": max(peaks, default=None),
        "notes": notes,
    }
    lines = sorted({str(r.extra["peak_line"]) for r in ok if "peak_line" in r.extra})
    if lines:
        summary["peak_lines"] = lines  # where the tool says the peak happened
    for key in ("largest_process_bytes", "tool_wall_seconds", "allocation_peak_bytes"):
        values = [float(r.extra[key]) for r in ok if key in r.extra]
        if values:
            summary[f"{key}_median"] = _median(values)
    return summary


def summarize(records: list[RunRecord], workloads: list[str], tools: list[str]) -> dict[str, Any]:
    cells = {w: {t: _cell_summary(records, w, t) for t in tools} for w in workloads}
    for w in workloads:
        kernel = cells[w].get("kernel", {}).get("peak_median_bytes")
        for cell in cells[w].values():
            peak = cell["peak_median_bytes"]
            cell["peak_vs_kernel"] = peak / kernel if peak is not None and kernel else None
            for key in ("largest_process", "allocation_peak"):
                value = cell.get(f"{key}_bytes_median")
                if value is not None and kernel:
                    cell[f"{key}_vs_kernel"] = value / kernel
    targets = _targets(cells)
    if ALLOC_TOOL in tools and ALLOC_BASE in tools:
        targets.update(_alloc_targets(records, workloads))
    return {"cells": cells, "startup_seconds": _startup_costs(cells, tools), "targets": targets}


def _startup_costs(cells: dict[str, dict[str, Any]], tools: list[str]) -> dict[str, float | None]:
    """Fixed cost of each tool: its median wall time on the empty program minus plain's."""
    noop = cells.get(NOOP)
    if noop is None:
        return {}
    plain = noop["plain"]["wall_median_s"]
    costs: dict[str, float | None] = {}
    for tool in tools:
        median = noop[tool]["wall_median_s"]
        costs[tool] = median - plain if median is not None and plain is not None else None
    return costs


def _targets(cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """memgauge against the issue's targets. The noop ratio is excluded: it is all start-up cost,
    which has its own target."""
    ratios = {
        w: c["memgauge"]["ratio_median"]
        for w, c in cells.items()
        if w != NOOP and "memgauge" in c and c["memgauge"]["ratio_median"] is not None
    }
    result: dict[str, Any] = {
        "overhead_target": OVERHEAD_TARGET,
        "overhead_by_workload": ratios,
        "overhead_met_by_workload": {w: r <= OVERHEAD_TARGET for w, r in ratios.items()},
        "startup_target_s": STARTUP_TARGET_SECONDS,
    }
    if ratios:
        median = statistics.median(ratios.values())
        worst = max(ratios, key=lambda w: ratios[w])
        result.update(
            overhead_median=median,
            overhead_median_met=median <= OVERHEAD_TARGET,
            overhead_worst_target=OVERHEAD_WORST_TARGET,
            overhead_worst_workload=worst,
            overhead_worst=ratios[worst],
            overhead_worst_met=ratios[worst] <= OVERHEAD_WORST_TARGET,
        )
    noop = cells.get(NOOP, {})
    if "memgauge" in noop:
        plain, mg = noop["plain"]["wall_median_s"], noop["memgauge"]["wall_median_s"]
        if plain is not None and mg is not None:
            result["startup_s"] = mg - plain
            result["startup_met"] = mg - plain <= STARTUP_TARGET_SECONDS
        inside = noop["memgauge"].get("tool_wall_seconds_median")
        if inside is not None:
            result["noop_wall_reported_by_memgauge_s"] = inside
    return result


def _alloc_targets(records: list[RunRecord], workloads: list[str]) -> dict[str, Any]:
    """memgauge --alloc against memray run alone: per workload, the median of the per-repetition
    ratios of their wall times (both timed from outside, start-up included). noop is listed but not
    held to the target: it compares start-up costs only."""
    ratios: dict[str, float] = {}
    for w in workloads:
        median = _median(_paired_ratios(records, w, ALLOC_TOOL, ALLOC_BASE))
        if median is not None:
            ratios[w] = median
    return {
        "alloc_target": ALLOC_TARGET,
        "alloc_vs_memray_by_workload": ratios,
        "alloc_met_by_workload": {w: r <= ALLOC_TARGET for w, r in ratios.items() if w != NOOP},
    }


# --- markdown ----------------------------------------------------------------------------------


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = [_row(header), _row(["---"] + ["---:"] * (len(header) - 1)), *(_row(r) for r in rows)]
    return "\n".join(lines)


def _wall_cell(cell: dict[str, Any], tool: str) -> str:
    median = cell["wall_median_s"]
    if median is None:
        return "failed" if cell["failed"] else "n/a"
    if tool == "plain":
        return f"{median:.3f} ({cell['wall_min_s']:.3f}-{cell['wall_max_s']:.3f})"
    ratio = cell["ratio_median"]
    return f"{median:.3f} ({ratio:.2f}x)" if ratio is not None else f"{median:.3f}"


def wall_table(summary: dict[str, Any], workloads: list[str], tools: list[str]) -> str:
    header = ["workload", *(f"{t} s" for t in tools)]
    rows = [[w, *(_wall_cell(summary["cells"][w][t], t) for t in tools)] for w in workloads]
    startup = summary["startup_seconds"]
    if startup:
        rows.append(
            ["start-up cost s", *(f"{startup[t]:+.3f}" if startup[t] is not None else "n/a" for t in tools)]
        )
    return _table(header, rows)


def _peak_cell(
    cell: dict[str, Any], key: str = "peak_median_bytes", ratio_key: str = "peak_vs_kernel"
) -> str:
    peak = cell.get(key)
    if peak is None:
        return "failed" if cell["failed"] else "n/a"
    ratio = cell.get(ratio_key)
    mib = f"{peak / MIB:.1f}" if peak < 10 * MIB else f"{peak / MIB:.0f}"  # keep small peaks visible
    return f"{mib} ({ratio:.2f}x)" if ratio is not None else mib


def peak_table(summary: dict[str, Any], workloads: list[str], tools: list[str]) -> str:
    peers = [t for t in tools if t not in ("plain", "kernel")]
    header = ["workload", "kernel VmHWM MiB"]
    for t in peers:
        header.append(f"{t} MiB")
        if t == "memgauge":
            header.append("memgauge largest process MiB")
        if t == ALLOC_TOOL:
            header.append(f"{ALLOC_TOOL} allocation MiB")
    rows = []
    for w in workloads:
        cells = summary["cells"][w]
        row = [w, _peak_cell(cells["kernel"])] if "kernel" in cells else [w, "n/a"]
        for t in peers:
            row.append(_peak_cell(cells[t]))
            if t == "memgauge":
                row.append(_peak_cell(cells[t], "largest_process_bytes_median", "largest_process_vs_kernel"))
            if t == ALLOC_TOOL:
                row.append(_peak_cell(cells[t], "allocation_peak_bytes_median", "allocation_peak_vs_kernel"))
        rows.append(row)
    return _table(header, rows)


def targets_text(summary: dict[str, Any]) -> str:
    targets = summary["targets"]
    lines = []
    for w, ratio in targets["overhead_by_workload"].items():
        met = "met" if targets["overhead_met_by_workload"][w] else "NOT met"
        lines.append(f"- memgauge overhead on {w}: {ratio:.3f}x (target <= {OVERHEAD_TARGET}x: {met})")
    if "overhead_median" in targets:
        median, worst = targets["overhead_median"], targets["overhead_worst"]
        lines.append(
            f"- memgauge overhead over these workloads: median {median:.3f}x (target <= {OVERHEAD_TARGET}x: "
            f"{'met' if targets['overhead_median_met'] else 'NOT met'}), worst {worst:.3f}x on "
            f"{targets['overhead_worst_workload']} (target <= {OVERHEAD_WORST_TARGET}x: "
            f"{'met' if targets['overhead_worst_met'] else 'NOT met'})"
        )
    if "startup_s" in targets:
        cost = targets["startup_s"]
        met = "met" if targets["startup_met"] else "NOT met"
        lines.append(f"- memgauge start-up cost: {cost:.3f} s (target <= {STARTUP_TARGET_SECONDS} s: {met})")
        # a fixed cost c alone gives a ratio of 1 + c / T on a program of T seconds
        lines.append(
            f"- a fixed cost of {cost:.3f} s alone stays within {OVERHEAD_TARGET}x only for programs of "
            f">= {cost / (OVERHEAD_TARGET - 1):.1f} s"
        )
    inside = targets.get("noop_wall_reported_by_memgauge_s")
    if inside is not None:
        lines.append(
            f"- on noop memgauge's own wall_seconds is {inside:.3f} s: the rest of its outside wall time is "
            "spent before the program starts or after it ends"
        )
    return "\n".join(lines)


def alloc_text(summary: dict[str, Any]) -> str:
    targets = summary["targets"]
    lines = []
    for w, ratio in targets.get("alloc_vs_memray_by_workload", {}).items():
        met = targets["alloc_met_by_workload"].get(w)
        verdict = "start-up only, no target" if met is None else "met" if met else "NOT met"
        lines.append(
            f"- {ALLOC_TOOL} / {ALLOC_BASE} on {w}: {ratio:.3f}x (target <= {ALLOC_TARGET}x: {verdict})"
        )
    return "\n".join(lines)


def notes_text(summary: dict[str, Any]) -> str:
    lines = []
    for w, cells in summary["cells"].items():
        for t, cell in cells.items():
            for note in cell["notes"]:
                lines.append(f"- {w} / {t}: {note}")
            if cell.get("peak_lines"):
                lines.append(f"- {w} / {t}: peak attributed to {', '.join(cell['peak_lines'])}")
    return "\n".join(lines)


def markdown(summary: dict[str, Any], workloads: list[str], tools: list[str], reps: int) -> str:
    parts = [
        f"### Wall time (median of {reps}; plain: min-max; others: median per-repetition ratio to plain)",
        "",
        wall_table(summary, workloads, tools),
        "",
        "### Peak memory (median; ratio = reported / kernel VmHWM of the plain run)",
        "",
        peak_table(summary, workloads, tools),
        "",
        "### memgauge against the targets",
        "",
        targets_text(summary) or "- not measured (no successful memgauge run)",
    ]
    if ALLOC_TOOL in tools and ALLOC_BASE in tools:
        parts += [
            "",
            f"### memgauge --alloc against memray run (median of per-repetition {ALLOC_TOOL} / {ALLOC_BASE})",
            "",
            alloc_text(summary) or f"- not measured (no repetition where both {ALLOC_TOOL} and memray ran)",
        ]
    notes = notes_text(summary)
    if notes:
        parts += ["", "### Notes", "", notes]
    return "\n".join(parts) + "\n"
