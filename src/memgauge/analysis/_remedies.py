"""The what-if table of memory remedies (``memgauge fit --remedies``): each remedy's run against the
same baseline, as rows every renderer shows alike. Pure: records in, dataclasses out.

A row's figures come from the torch tracker of its run (the tensor peak and its roles at that
moment, the largest activations) and from the run's resident peak (the only figure of the tabular
``dtypes`` remedy, which changes no tensor); its step time is the median of
its steps after the first (the first creates gradients and optimizer state and warms caches).
Gradient accumulation is measured at a micro-batch: its step time is k x the micro-step's, its
effective batch k x the micro-batch, and its tensor peak the micro-batch's with all gradients alive
(they stay through the next micro-batches' forward), each stated as such in its notes.

The largest batch a remedy allows under a budget comes from a straight line through two runs of it
at two batch sizes (``peak = fixed + per_sample x batch``): a law from two points, stated as such.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.torch import TorchMemory


@dataclass
class RemedyMeasure:
    """One remedy's run(s), as the sweep made them. ``profile`` None: not run (``not_applied`` says
    why). ``hooked``: what the run changed in the program, as its hooks listed it. ``batch``: the
    batch it ran at (accumulation: the micro-batch), ``steps_per_update`` the accumulation factor;
    ``half``: the same run at ``half_batch``, for the law of the largest batch."""

    name: str
    profile: Profile | None
    hooked: list[str] = field(default_factory=list)
    not_applied: list[str] = field(default_factory=list)
    batch: int | None = None
    steps_per_update: int = 1
    half: Profile | None = None
    half_batch: int | None = None


@dataclass
class RemedyRow:
    """One line of the table; figures None where not measured. ``largest_batch``: the largest
    (effective) batch whose resident peak the two-point law keeps under the budget."""

    name: str
    applied: bool
    tensor_peak_bytes: int | None = None
    peak_by_role: dict[str, int] = field(default_factory=dict)
    activations_max_bytes: int | None = None
    rss_peak_bytes: int | None = None
    step_seconds: float | None = None
    tensor_delta: float | None = None  # fraction of the baseline's tensor peak (-0.4: 40% less)
    rss_delta: float | None = None  # fraction of the baseline's resident peak
    step_ratio: float | None = None  # step time over the baseline's
    effective_batch: int | None = None
    largest_batch: int | None = None
    hooked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class RemedyTable:
    rows: list[RemedyRow]
    budget_bytes: int | None = None
    law: str = ""  # how ``largest_batch`` was found, in words


def median_step_seconds(profile: Profile) -> float | None:
    """The median step time after the first step (the only one when a run has one)."""
    torch = profile.torch
    if torch is None or not torch.steps:
        return None
    seconds = [s.seconds for s in torch.steps]
    return statistics.median(seconds[1:] if len(seconds) > 1 else seconds)


def remedy_table(measures: list[RemedyMeasure], budget_bytes: int | None = None) -> RemedyTable:
    """The rows, the first measure being the baseline (``name`` "baseline")."""
    base = _row(measures[0], None) if measures else None
    rows = [base] if base is not None else []
    rows += [_row(m, base) for m in measures[1:]]
    for measure, row in zip(measures, rows, strict=True):
        row.largest_batch = _largest(measure, budget_bytes)
    law = ""
    if budget_bytes is not None:
        law = "a straight line through each remedy's resident peaks at two batch sizes (two runs)"
    return RemedyTable(rows, budget_bytes, law)


def _row(measure: RemedyMeasure, base: RemedyRow | None) -> RemedyRow:
    row = RemedyRow(measure.name, measure.profile is not None, hooked=list(measure.hooked))
    row.notes += measure.not_applied
    profile = measure.profile
    if profile is None:
        return row
    if profile.exit.code not in (0, None):
        row.notes.append(f"the run exited with {profile.exit.code}")
    row.rss_peak_bytes = profile.peak.resident_bytes
    _tensors(row, measure, profile.torch)
    step = median_step_seconds(profile)
    k = measure.steps_per_update
    if step is not None:
        row.step_seconds = step * k
    if measure.batch is not None:
        row.effective_batch = measure.batch * k
    if k > 1:
        row.notes.append(
            f"{k} accumulation steps of batch {measure.batch}: effective batch {row.effective_batch}, "
            f"step time = {k} x the measured micro-step"
        )
    if base is not None:
        tensor = _ratio(row.tensor_peak_bytes, base.tensor_peak_bytes)
        rss = _ratio(row.rss_peak_bytes, base.rss_peak_bytes)
        row.tensor_delta = None if tensor is None else tensor - 1
        row.rss_delta = None if rss is None else rss - 1
        row.step_ratio = _ratio(row.step_seconds, base.step_seconds)
    return row


def _ratio(value: float | None, base: float | None) -> float | None:
    """``value`` over ``base``; None where either is unknown (or ``base`` is 0)."""
    return value / base if value is not None and base else None


def _tensors(row: RemedyRow, measure: RemedyMeasure, torch: TorchMemory | None) -> None:
    """The row's tensor peak and peak by role from the run's torch tracker, or why there are none."""
    if torch is None and measure.name == "dtypes":
        row.notes.append("torch roles do not apply: dtypes changes frames, not tensors (see resident peak)")
        return
    if torch is None:
        row.notes.append("torch was not tracked in this run")
        return
    row.tensor_peak_bytes = torch.peak_bytes
    row.peak_by_role = dict(torch.peak_by_role)
    row.activations_max_bytes = torch.max_by_role.get("activations", 0)
    if measure.steps_per_update > 1:
        # accumulating, the gradients stay alive through the next micro-batches' forward,
        # which the micro-batch run (gradients set to None each step) does not show: add them
        grads = torch.max_by_role.get("gradients", 0)
        missing = grads - row.peak_by_role.get("gradients", 0)
        row.tensor_peak_bytes += missing
        row.peak_by_role["gradients"] = grads
        row.notes.append(f"gradients kept across the micro-batches added to the peak: {missing} B")


def largest_under(points: list[tuple[int, int]], budget_bytes: int) -> int | None:
    """The largest batch a straight line through ``(batch, bytes)`` points keeps at or under the
    budget; None when the points do not make a rising line or the budget is below its start."""
    if len(points) < 2:
        return None
    (b1, p1), (b2, p2) = sorted(points)[0], sorted(points)[-1]
    if b2 == b1 or p2 <= p1:
        return None
    per_sample = (p2 - p1) / (b2 - b1)
    fixed = p1 - per_sample * b1
    if budget_bytes < fixed + per_sample:
        return None
    return int((budget_bytes - fixed) // per_sample)


def _largest(measure: RemedyMeasure, budget_bytes: int | None) -> int | None:
    if budget_bytes is None or measure.profile is None or measure.half is None:
        return None
    if measure.batch is None or measure.half_batch is None:
        return None
    points = [
        (measure.batch, measure.profile.peak.resident_bytes),
        (measure.half_batch, measure.half.peak.resident_bytes),
    ]
    found = largest_under(points, budget_bytes)
    return None if found is None else found * measure.steps_per_update


# -- the prediction without the hardware ------------------------------------------------------------
# The prediction counts the torch tracker's tensor peak under fake tensors (summary mode: parameters,
# gradients, optimizer state, saved activations, module outputs), the figure a real run's tracker
# reports. For a GPU it adds the caching allocator's rounding of every request up to 512 B
# (docs/gpu-facts.md section 3), taken from the storages alive after the second step, and the named
# overheads below. Not predicted: fragmentation of the allocator's segments (reserved above what
# tensors hold), cuDNN's workspaces, operator temporaries that are no module's output.

MIB = 1 << 20
CUDA_CONTEXT_BYTES = 750 * MIB
CUBLAS_WORKSPACE_BYTES = 65 * MIB
OVERHEADS = {
    "CUDA context after a training step (lazy loading; docs/gpu-facts.md §1)": CUDA_CONTEXT_BYTES,
    "cuBLAS workspaces (docs/gpu-facts.md §1)": CUBLAS_WORKSPACE_BYTES,
}
OVERHEADS_TOTAL = sum(OVERHEADS.values())


@dataclass
class PredictedStep:
    """One prediction run at ``batch``: the tracker's tensor peak and its roles, and the 512-byte
    rounding of the storages alive after the second step; ``error`` where it could not run."""

    batch: int
    peak_bytes: int = 0
    peak_by_role: dict[str, int] = field(default_factory=dict)
    max_by_role: dict[str, int] = field(default_factory=dict)
    rounding_bytes: int = 0
    storages: int = 0
    error: str | None = None


@dataclass
class GpuPrediction:
    """``steps``: the prediction runs; ``allocated_bytes`` at the first batch: tensor peak plus
    rounding; ``total_bytes``: that plus the named ``overheads``; ``largest_batch``: the largest
    batch the straight line through the runs keeps within ``gpu_bytes`` (None: none fits, or the
    runs failed)."""

    gpu_bytes: int
    steps: list[PredictedStep]
    overheads: dict[str, int]
    allocated_bytes: int | None = None
    total_bytes: int | None = None
    largest_batch: int | None = None
    law: str = (
        "a straight line through the sum of each role's largest figure at two batch sizes (an upper "
        "bound of the peak: the roles' maxima need not coincide, and the peak itself is not linear "
        "where the optimizer step holds it)"
    )


def gpu_prediction(steps: list[PredictedStep], gpu_bytes: int) -> GpuPrediction:
    """The figures for a GPU of ``gpu_bytes`` from prediction runs at two batch sizes (the first
    the batch asked about): tensor peak plus the allocator's rounding, plus the named overheads;
    the largest batch by the straight line through the runs' sums of each role's maximum."""
    prediction = GpuPrediction(gpu_bytes, steps, dict(OVERHEADS))
    if len(steps) < 2 or any(s.error for s in steps):
        return prediction
    fixed = OVERHEADS_TOTAL
    first = steps[0]
    prediction.allocated_bytes = first.peak_bytes + first.rounding_bytes
    prediction.total_bytes = prediction.allocated_bytes + fixed
    points = [(s.batch, sum(s.max_by_role.values()) + s.rounding_bytes) for s in steps]
    prediction.largest_batch = largest_under(points, gpu_bytes - fixed)
    return prediction
