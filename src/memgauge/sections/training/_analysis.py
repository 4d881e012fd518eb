"""Training throughput: warm-up, steady-state figures, what bounds the loop, and the one sentence.

Pure functions over the steps the capture recorded (``TrainingStep`` rows). The steady steps are
those after warm-up, less the FLOP-counted step (slowed by the counting) and a first step whose
start was not seen. Rates are totals over totals (steps or samples over the steady steps' summed
wall time), so that one slow step weighs what it cost; medians and percentiles describe the spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memgauge.model import Profile
from memgauge.sections.training._analysis_peaks import known_peak
from memgauge.sections.training._record import Training, TrainingCounter, TrainingStat, TrainingStep
from memgauge.sections.training._shows import UNFOLLOWED

# a leading step this much slower than the steady median is warm-up (compilation, autotuning,
# lazy allocation); the steady median is taken over the second half of the steps
WARMUP_FACTOR = 1.5
DATA_BOUND_SHARE = 0.5


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between the nearest ranks (``q`` in 0..1); ``values`` not empty."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def stat(values: Sequence[float]) -> TrainingStat | None:
    if not values:
        return None
    return TrainingStat(
        median=round(percentile(values, 0.5), 6),
        p10=round(percentile(values, 0.1), 6),
        p90=round(percentile(values, 0.9), 6),
    )


def warmup_steps(seconds: Sequence[float | None]) -> int:
    """How many leading steps are warm-up: a first step whose start was not seen, then every leading
    step slower than ``WARMUP_FACTOR`` times the median of the second half (never more than half
    the steps). With three steps or more the first is always warm-up: it pays for first calls
    (lazy initialisation, allocator growth) that no later step does."""
    n = len(seconds)
    if n == 0:
        return 0
    known = [s for s in seconds[n // 2 :] if s is not None]
    reference = percentile(known, 0.5) if known else None
    count = 0
    while count < n // 2:
        value = seconds[count]
        if value is None or (reference is not None and value > WARMUP_FACTOR * reference):
            count += 1
            continue
        break
    if n >= 3:
        count = max(count, 1)
    return count


def summarize_training(
    rows: Sequence[TrainingStep],
    *,
    pid: int = 0,
    steps_dropped: int = 0,
    fetches: int = 0,
    counters: Sequence[TrainingCounter] = (),
    flops: int | None = None,
    device: str = "",
    device_name: str = "",
    dtype: str = "",
    measured_peak: float | None = None,
    measured_peak_source: str = "",
) -> Training:
    """The loop's figures from its steps. ``flops``: the FLOPs of the counted step (the row whose
    ``flops_counted`` is set), done mostly on ``device`` ("cpu", "cuda") in ``dtype``;
    ``measured_peak``: a peak measured on the machine (the CPU's), used where the table of known
    accelerators has no figure. ``fetches``: batches seen fetched (0: the data wait is unknown)."""
    warm = warmup_steps([r.seconds for r in rows])
    marked = [replace(r, warmup=i < warm) for i, r in enumerate(rows)]
    steady = [r for r in marked if not r.warmup and not r.flops_counted and r.seconds is not None]
    seconds = sum(r.seconds or 0.0 for r in steady)
    measured = fetches > 0
    out = Training(
        steps=len(rows) + steps_dropped,
        pid=pid,
        steps_dropped=steps_dropped,
        warmup_steps=warm,
        steady_steps=len(steady),
        counters=list(counters),
        rows=marked,
        flops_per_step=flops,
        flops_step=next((r.index for r in rows if r.flops_counted), None),
        device=device_name or device,
        dtype=dtype,
    )
    if seconds > 0:
        _rates(out, steady, seconds)
        if measured:
            _data_wait(out, steady, seconds)
    if flops is not None and out.steps_per_second is not None:
        out.achieved_flops_per_second = flops * out.steps_per_second
        _peak(out, device, device_name, dtype, measured_peak, measured_peak_source)
    if out.data_wait_share is None:
        out.bound = "unknown"
    else:
        out.bound = "data" if out.data_wait_share >= DATA_BOUND_SHARE else "compute"
    out.verdict = training_verdict(out)
    return out


def _rates(out: Training, steady: list[TrainingStep], seconds: float) -> None:
    """Steps, samples and tokens per second over the ``steady`` steps (``seconds`` in all)."""
    out.steps_per_second = round(len(steady) / seconds, 6)
    out.step_seconds = stat([r.seconds or 0.0 for r in steady])
    counted = [r.samples for r in steady if r.samples is not None]
    samples_seconds = sum(r.seconds or 0.0 for r in steady if r.samples is not None)
    if counted and samples_seconds > 0:
        out.samples_per_second = round(sum(counted) / samples_seconds, 6)
        out.samples_per_step = stat([float(n) for n in counted])
    with_tokens = [r for r in steady if r.tokens is not None]
    tokens_seconds = sum(r.seconds or 0.0 for r in with_tokens)
    if with_tokens and tokens_seconds > 0:
        out.tokens_per_second = round(sum(r.tokens or 0 for r in with_tokens) / tokens_seconds, 6)
        out.tokens_per_step = stat([float(r.tokens or 0) for r in with_tokens])
        out.tokens_per_second_per_step = stat([(r.tokens or 0) / r.seconds for r in with_tokens if r.seconds])


def _data_wait(out: Training, steady: list[TrainingStep], seconds: float) -> None:
    """The share of the steady steps spent waiting for data, and the rates without it."""
    wait = sum(r.wait_seconds for r in steady)
    out.data_wait_share = round(min(1.0, wait / seconds), 6)
    out.wait_share_per_step = stat([min(1.0, r.wait_seconds / r.seconds) for r in steady if r.seconds])
    if seconds > wait:
        out.steps_per_second_without_data_wait = round(len(steady) / (seconds - wait), 6)
    if wait > 0:
        out.steps_per_second_if_compute_free = round(len(steady) / wait, 6)


def _peak(
    out: Training,
    device: str,
    device_name: str,
    dtype: str,
    measured_peak: float | None,
    measured_peak_source: str,
) -> None:
    """The device's peak (the known accelerators' table, else the CPU's own measured peak) and the
    MFU of the achieved FLOP rate."""
    peak = known_peak(device_name, dtype) if device == "cuda" else None
    if peak is not None:
        out.peak_flops_per_second, out.peak_source = peak.flops_per_second, peak.source
    elif measured_peak and device == "cpu":  # the CPU's own benchmark, never a GPU's
        out.peak_flops_per_second, out.peak_source = measured_peak, measured_peak_source
    if out.peak_flops_per_second and out.achieved_flops_per_second is not None:
        out.mfu = round(out.achieved_flops_per_second / out.peak_flops_per_second, 6)


def training_verdict(t: Training) -> str:
    """The one sentence saying what matters most for the loop's speed."""
    if t.steps_per_second is None:
        return "Too few steps to tell a steady rate (warm-up and the FLOP-counted step are left out)."
    if t.bound == "unknown":
        return (
            "No batch was seen being fetched (no DataLoader, no memgauge.timed_iter), so whether "
            f"data or compute bounds the loop is unknown; it ran {t.steps_per_second:.3g} steps/s."
        )
    share = t.data_wait_share or 0.0
    gpu = "" if t.gpu_utilization is None else f" (the GPU runs kernels {t.gpu_utilization:.0%} of the time)"
    if t.bound == "data":
        faster = (t.steps_per_second_without_data_wait or 0.0) / t.steps_per_second
        return (
            f"Waiting for data takes {share:.0%} of each step{gpu}: with no wait the loop would run "
            f"{faster:.1f}x faster, so loading (more DataLoader workers, prefetching, faster "
            "decoding) matters most."
        )
    if t.bound == "host":
        return (
            f"The GPU runs kernels only {t.gpu_utilization or 0.0:.0%} of the time and waiting for data "
            f"takes {share:.0%}: the host side (Python, kernel launches, synchronisations, copies) "
            "bounds the loop, so larger batches, fewer synchronisations, CUDA graphs or "
            "torch.compile matter most."
        )
    mfu = "" if t.mfu is None else f" at {t.mfu:.0%} of the device's peak FLOP/s"
    tail = (
        "the model's own speed (kernels, dtype, batch size, fusion) matters most"
        if share < 0.1
        else f"the model's speed matters most, then the {share:.0%} spent waiting for data"
    )
    return f"Compute takes {1 - share:.0%} of each step{mfu}: {tail}."


@dataclass(frozen=True)
class TrainingFigure:
    """One row of the reports' training table: a figure over the steady steps in its ``unit``
    (``count``, ``per_second``, ``seconds``, ``share``, ``flops``, ``flop_rate``), with the per-step
    spread where there is one, and a note (where the figure comes from)."""

    name: str
    value: float | None
    unit: str
    spread: TrainingStat | None = None
    note: str = ""


def training_figures(t: Training) -> tuple[TrainingFigure, ...]:
    """The figures every renderer shows, in order; those the run has no value for are left out."""
    rows = [
        TrainingFigure("steps", t.steps, "count", note=f"{t.warmup_steps} warm-up, {t.steady_steps} steady"),
        TrainingFigure("steps/s", t.steps_per_second, "per_second"),
        TrainingFigure(
            "step time", t.step_seconds.median if t.step_seconds else None, "seconds", t.step_seconds
        ),
        TrainingFigure("samples/s", t.samples_per_second, "per_second"),
        TrainingFigure(
            "samples per step",
            t.samples_per_step.median if t.samples_per_step else None,
            "count",
            t.samples_per_step,
        ),
        TrainingFigure("tokens/s", t.tokens_per_second, "per_second", t.tokens_per_second_per_step),
        TrainingFigure(
            "tokens per step",
            t.tokens_per_step.median if t.tokens_per_step else None,
            "count",
            t.tokens_per_step,
        ),
        TrainingFigure("data wait share", t.data_wait_share, "share", t.wait_share_per_step),
        TrainingFigure("steps/s with no data wait", t.steps_per_second_without_data_wait, "per_second"),
        TrainingFigure("steps/s if compute were free", t.steps_per_second_if_compute_free, "per_second"),
        TrainingFigure(
            "FLOPs per step",
            t.flops_per_step,
            "flops",
            note="" if t.flops_step is None else f"counted on step {t.flops_step}, {t.dtype} on {t.device}",
        ),
        TrainingFigure("achieved FLOP/s", t.achieved_flops_per_second, "flop_rate"),
        TrainingFigure("peak FLOP/s", t.peak_flops_per_second, "flop_rate", note=t.peak_source),
        TrainingFigure("MFU", t.mfu, "share"),
        TrainingFigure("GPU utilisation", t.gpu_utilization, "share", note="NVML: kernels running"),
        TrainingFigure(
            "GPU memory busy", t.gpu_memory_utilization, "share", note="NVML: memory read or written"
        ),
    ]
    rows += [TrainingFigure(f"{c.kind} events", c.count, "count") for c in t.counters]
    rows += [TrainingFigure(f"{c.kind}/s", c.per_second, "per_second") for c in t.counters]
    return tuple(r for r in rows if r.value is not None)


def training_loop(profile: Profile) -> Training | None:
    """The profile's training figures where a loop ran a step; None for a program without one (its
    processes' CPU and I/O may be recorded, but there is no throughput to show or compare)."""
    t = profile.training
    return t if t is not None and t.steps else None


def unfollowed_frameworks(profile: Profile) -> str:
    """One line for a loop in a framework memgauge does not follow (Keras on the TensorFlow or JAX
    backend, JAX, TensorFlow; seen among the program's imports), where no step was seen: said,
    rather than left as an absent section. "" otherwise."""
    if profile.training is not None:
        return ""
    found = sorted({r.package for r in profile.imports if r.package in UNFOLLOWED})
    if not found:
        return ""
    keras = any(r.package == "keras" for r in profile.imports)
    names = " and ".join(("Keras on " if keras else "") + name for name in found)
    return (
        f"{names}: not followed (memgauge hooks torch only): no steps, rates, FLOPs or tensor roles; "
        "the process's memory, CPU and lines above hold, and memgauge.step() in a callback marks steps."
    )
