"""The GPU section's budget part (the registry's "budget"): the figure a ``gpu=`` limit judges, and
a ``gpu=`` limit judged under ``--enforce``: torch's reserve was capped at the limit in the
measured process (``_capture_cap``); a run that ran out of GPU memory under the cap fails the
limit whatever its figure (the program did not fit), one that survived says so in the note."""

from __future__ import annotations

import dataclasses

from memgauge._units import format_bytes
from memgauge.gate import FAIL, CheckResult
from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def under_gpu_cap(result: CheckResult, runs: Sequence[Profile]) -> CheckResult:
    capped = [(i, d) for i, run in enumerate(runs) for d in run.gpu if d.cap_bytes is not None]
    if not capped:
        return result
    failed = [(i, d) for i, d in capped if d.cap_outcome == "out of memory"]
    i, d = (failed or capped)[0]
    where = f" (run {i + 1})" if len(runs) > 1 else ""
    cap = format_bytes(d.cap_bytes or 0)
    if failed:
        note = f"out of memory under --enforce{where}: torch's reserve capped at {cap} on device {d.index}"
        result = dataclasses.replace(result, status=FAIL)
    else:
        note = f"survived --enforce: torch's reserve capped at {cap} (the CUDA context comes on top)"
    return dataclasses.replace(result, note="; ".join(n for n in (note, result.note) if n))


METRICS = frozenset({"gpu"})


def figure(profile: Profile, metric: str, phase: str | None) -> tuple[float | None, str]:
    """The figure a ``gpu=`` limit judges in ``profile`` (of ``phase``, None for the whole run) and
    a note: why it is None, or what to know about it."""
    from memgauge.sections.gpu._analysis import gpu_budget_figure, gpu_phase_figure

    gpu, note = gpu_budget_figure(profile) if phase is None else gpu_phase_figure(profile, phase)
    return (None if gpu is None else float(gpu)), note


def judged(result: CheckResult, runs: Sequence[Profile]) -> CheckResult:
    """A whole-run ``gpu=`` limit's result after what ``--enforce`` did to torch's reserve."""
    return under_gpu_cap(result, runs) if result.limit.phase is None else result
