"""What the run report's renderers say alike: its titles and the cells of its CPU table, so the
terminal, Markdown and HTML reports use the same words for the same figures."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import ImportTotals, contention_share, cpu_lines, short_path
from memgauge.model import Profile, Reconciliation
from memgauge.render._format import format_rate, peak_bound

CPU_FIGURES = ["cpu", "python", "native", "wait", "memory"]
# with CPU contention (``cpu_figures``): the share of a line's time queued for a CPU, before "wait"
CONTENTION = "contention"
# a column of its own from this share of all sampled time: below it, profiles read as before
CONTENTION_SHOWN = 0.01
# last, where a GPU was sampled while lines ran (``LineStats.gpu_seconds``): the device-seconds a
# kernel ran while the line ran, and the mean share of the time it did
GPU_FIGURES = ["gpu", "gpu busy"]
HELD_TITLE = "resident peak held by (sampled)"
CPU_TITLE = "CPU time by line (sampled)"
WAITING_TITLE = "waiting (I/O, sleep, locks)"
LEAKS_TITLE = "leak suspects (retained memory still growing at the end)"
EXIT_TITLE = "still held at exit (sampled)"


def exit_title(profile: Profile) -> str:
    """The held-at-exit table's title: with ``--alloc`` its lines are memray's (the allocations
    live at exit, by the line that made them), not the resident samples' guess."""
    measurement = profile.environment.get("measurement") or {}
    if isinstance(measurement, dict) and measurement.get("held_at_exit"):
        return f"still held at exit ({measurement['held_at_exit']})"
    return EXIT_TITLE


# (figures, pid, file, line, source, function): the function only where two rows share a line
CpuRow = tuple[list[str], int, str, int, str, str]


def cpu_figures(profile: Profile) -> list[str]:
    """``CPU_FIGURES``, with ``contention`` before ``wait`` where the run's threads spent at least
    ``CONTENTION_SHOWN`` of their time queued for a CPU, and ``GPU_FIGURES`` last where a GPU's
    utilisation was joined with the lines."""
    gpu = GPU_FIGURES if any(s.gpu_seconds is not None for s in profile.lines) else []
    if contention_share(profile) < CONTENTION_SHOWN:
        return [*CPU_FIGURES, *gpu]
    return [*CPU_FIGURES[:3], CONTENTION, *CPU_FIGURES[3:], *gpu]


def gpu_cells(seconds: float | None, busy: float | None) -> list[str]:
    """A line's ``GPU_FIGURES``: "-" where it has none (it ran only while no GPU was sampled)."""
    if seconds is None or busy is None:
        return ["-", "-"]
    return [format_seconds(seconds), f"{busy:.0f}%"]


def cpu_rows(profile: Profile, n: int) -> list[CpuRow]:
    """The ``n`` lines with most CPU time, with their figures formatted as ``cpu_figures``. A line
    with two rows (a comprehension and the function around it) shows their function names."""
    contended = CONTENTION in cpu_figures(profile)
    gpu = GPU_FIGURES[0] in cpu_figures(profile)
    out: list[CpuRow] = []
    for row, shared in cpu_lines(profile, n):
        s = row.stats
        figures = [
            format_seconds(s.cpu_python_seconds + s.cpu_native_seconds),
            f"{row.python_share:.0%}",
            f"{row.native_share:.0%}",
            *([f"{row.contention_share:.0%}"] if contended else []),
            f"{row.wait_share:.0%}",
            format_bytes(s.resident_growth_bytes, signed=True),
            *(gpu_cells(s.gpu_seconds, s.gpu_busy) if gpu else []),
        ]
        out.append((figures, s.pid, s.file, s.line, s.source, s.function if shared else ""))
    return out


def leak_figures(rate_bytes_per_second: float, retained_bytes: int) -> list[str]:
    return [format_rate(rate_bytes_per_second), format_bytes(retained_bytes)]


def where(file: str, line: int, cwd: str | None, function: str = "") -> str:
    """``path:line``, and the function where two rows share the line; a pseudo-file as it is."""
    shown = f"{short_path(file, cwd)}:{line}" if line else file
    return f"{shown} {function}" if function else shown


def peak_note(profile: Profile) -> str:
    """After the resident peak: "(a lower bound)", "±256.0 KiB" or "(exact)"."""
    bound = peak_bound(profile)
    return bound if bound.startswith("±") else f"({bound})"


def allocation_title(peak_bytes: int) -> str:
    return f"allocation peak {format_bytes(peak_bytes)}, live at it (memray)"


def reconciliation_parts(r: Reconciliation) -> list[str]:
    """What a process's peak is the sum of, one term (a sign, a name, a figure) each."""
    return [
        f"= baseline {format_bytes(r.baseline_bytes)}",
        f"+ allocations {format_bytes(r.allocation_peak_bytes)}",
        f"- never written {format_bytes(r.untouched_bytes)}",
        f"+ other {format_bytes(r.other_bytes)}",
    ]


def phase_totals_title(records: int, shown: int, names: int) -> str:
    title = f"phases ({records} records, summed by name"
    return title + (f"; the {shown} of {names} names with the most time)" if shown < names else ")")


def processes_title(shown: int, total: int) -> str:
    return f"processes ({shown} of {total}, by peak)"


def imports_title(totals: ImportTotals) -> str:
    memory = format_bytes(totals.resident_bytes, signed=True)
    return f"imports: {format_seconds(totals.seconds)}, {memory} in all"


def needs_lines(profile: Profile) -> tuple[str, str, list[str]] | None:
    """The report's headline where the profile has it: "container needs X", how it was found, and
    the lines that reconcile it with the figures users compare it with (the group's spike-exact
    peak and its page cache, the largest process's max RSS, the parts of the tree's largest
    sample). None for a profile without it (written before it)."""
    peak = profile.peak
    if not peak.needs_bytes:
        return None
    resident = f"resident peak {format_bytes(peak.resident_bytes)} {peak_note(profile)}"
    if peak.at_seconds is not None:
        resident += f" at {format_seconds(peak.at_seconds)}"
    if peak.includes_page_cache:
        resident += f": the group's, spike-exact, by {peak.method}, page cache included"
        if peak.page_cache_bytes is not None:
            resident += f" ({format_bytes(peak.page_cache_bytes)} of it at the end)"
    else:
        resident += f": the tree's, by {peak.method}"
    rows = [
        resident,
        f"max RSS of the largest process {format_bytes(peak.largest_process_bytes)}"
        " (what /usr/bin/time prints)",
    ]
    if peak.needs_at_seconds is not None:
        rows.append(
            f"at the need's largest sample ({format_seconds(peak.needs_at_seconds)}): "
            f"anonymous {format_bytes(peak.needs_anon_bytes)} · "
            f"libraries and mapped files{' in use' if 'working set' in peak.needs_method else ''} "
            f"{format_bytes(peak.needs_file_bytes)} · "
            f"shmem {format_bytes(peak.needs_shmem_bytes)}"
            + (
                f" · + {format_bytes(peak.needs_headroom_bytes)} (5%) headroom for the kernel's reclaim"
                if peak.needs_headroom_bytes
                else ""
            )
        )
    return f"container needs {format_bytes(peak.needs_bytes)}", f"({peak.needs_method})", rows
