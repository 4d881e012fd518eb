"""The cost of the training-throughput figures on a CPU loop fed by a DataLoader: the loop's own
wall time (every step included) under plain ``python``, under ``memgauge run`` with FLOP counting
off (``MEMGAUGE_FLOP_STEP=off``: step times, data waits and samples only) and with it on one step
(the default), under ``memgauge run --torch=off`` (no torch hooks at all: memgauge's other
costs, for reference), as shipped without the line sampler (``--no-lines``), and with neither
(``bare``: the watcher alone). Runs one after another: on a VM whose speed moves within seconds,
``training_lockstep.py`` (the same modes, the two runs taking turns) resolves far more.

    python bench/training_bench.py [--repeat 5] [--steps 300] [--modes plain,flops] [--malloc pinned]

Runs are interleaved so that a busy machine slows each mode alike (each repetition runs the modes
in turn, the order reversed every other repetition: plain, flops, flops, plain, ...); prints the
median loop time of each, its ratio to plain, and the median of the per-repetition ratios (each
mode against the plain run beside it), with the load average before and after. The CPU's peak
benchmark (at exit, once per machine: cached) is outside the loop's time and not counted here.

``--malloc pinned`` runs every mode with glibc's trim and mmap thresholds fixed
(``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``; plain runs too). With glibc's dynamic
thresholds (the default) this loop gives memory back to the kernel and faults it in again each step
in some processes and not in others (0 to ~700 minor faults a step), and its steady step moves
+-10% from process to process with it; anything that changes the heap's layout early (a step run
under a dispatch mode) moves it too, either way. Pinned, it takes 5-21 faults a step and its speed
holds: memgauge's own cost is what is left. The faults per step are printed per mode.

Then the hooks' own cost, timed in this process (``hook_costs``): one ``Tensor.to`` call with the
copy hooks on against off (the same-device call a loop makes per batch, and a real host copy), and
one ``ForkingPickler.dumps`` of a batch with the pickle hook on against off.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOAD = Path(__file__).parent / "workloads" / "training_loop.py"
# no-lines: as shipped (FLOPs on one step) without the line sampler (``--no-lines``); bare: neither
# torch hooks nor line sampler (the watcher outside, memgauge's import hooks inside)
MODES = ("plain", "torch-off", "no-flops", "flops", "no-lines", "bare")


# fixed glibc thresholds: no memory handed back to the kernel and faulted in again each step
PINNED_MALLOC = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(64 << 20)}


def command(mode: str, steps: int, tmp: str, malloc: str = "default") -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one run of the workload in ``mode`` (its profile, if
    any, written under ``tmp``)."""
    env = dict(os.environ)
    if malloc == "pinned":
        env.update(PINNED_MALLOC)
    if mode == "plain":
        return [sys.executable, str(WORKLOAD), str(steps)], env
    cmd = [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(Path(tmp) / "p.json")]
    if mode in ("torch-off", "bare"):
        cmd.append("--torch=off")
    if mode in ("no-lines", "bare"):
        cmd.append("--no-lines")
    if mode == "no-flops":
        env["MEMGAUGE_FLOP_STEP"] = "off"
    return [*cmd, str(WORKLOAD), str(steps)], env


def loop_seconds(mode: str, steps: int, malloc: str = "default") -> tuple[float, float]:
    """The loop's seconds and its minor page faults per step."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd, env = command(mode, steps, tmp, malloc)
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return float(result["loop_seconds"]), float(result["faults_per_step"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)}; plain first")
    parser.add_argument("--no-micro", action="store_true", help="wall-clock runs only")
    parser.add_argument(
        "--malloc", choices=("default", "pinned"), default="default", help="glibc thresholds, every mode"
    )
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m in MODES]
    if modes[:1] != ["plain"]:
        modes = ["plain", *(m for m in modes if m != "plain")]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; malloc {args.malloc}")
    times: dict[str, list[float]] = {m: [] for m in modes}
    faults: dict[str, list[float]] = {m: [] for m in modes}
    for i in range(args.repeat):
        for mode in modes if i % 2 == 0 else modes[::-1]:
            seconds, per_step = loop_seconds(mode, args.steps, args.malloc)
            times[mode].append(seconds)
            faults[mode].append(per_step)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    median = {m: statistics.median(v) for m, v in times.items()}
    least = {m: min(v) for m, v in times.items()}
    # the fastest run of each mode is the one a busy machine disturbed least; the paired ratio
    # compares each run with the plain run of its own repetition (the same minutes of load)
    print(
        f"{'mode':<10} {'median s':>9} {'min-max':>15} {'/ plain':>8} {'min / plain min':>16}"
        f" {'paired ratios: median [min-max]':>33} {'mean [95% interval]':>22} {'faults/step [min-max]':>22}"
    )
    for mode in modes:
        lo, hi = least[mode], max(times[mode])
        paired = sorted(t / p for t, p in zip(times[mode], times["plain"], strict=True))
        spread = f"[{paired[0]:.3f}-{paired[-1]:.3f}]"
        print(
            f"{mode:<10} {median[mode]:9.3f} {lo:7.3f}-{hi:<7.3f} {median[mode] / median['plain']:8.3f}"
            f" {lo / least['plain']:16.3f} {statistics.median(paired):17.3f} {spread}"
            f" {interval(paired):>22}"
            f" {statistics.median(faults[mode]):8.1f} [{min(faults[mode]):.0f}-{max(faults[mode]):.0f}]"
        )
    if not args.no_micro:
        print(micro(args.steps))
        print(hook_costs(median["plain"] / args.steps))


def interval(ratios: list[float]) -> str:
    """The paired ratios' geometric mean and its 95% interval (from the log ratios' standard error,
    with the t distribution's point): what the repetitions resolve. On the 2-vCPU VM a paired log
    ratio's deviation was ~0.09: 30 pairs gave +-3.3%, and +-1.5% takes ~140."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return f"{math.exp(mean):.3f}"
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return f"{math.exp(mean):.3f} [{math.exp(mean - half):.3f}-{math.exp(mean + half):.3f}]"


def t95(df: int) -> float:
    """The t distribution's two-sided 95% point, by its expansion around the normal's (Cornish-Fisher,
    three terms: 2.769 for 2.776 at 4 degrees of freedom, 2.568 for 2.571 at 5; too small below 4)."""
    z = 1.959964
    terms = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
    )
    return z + sum(term / df**k for k, term in enumerate(terms, 1))


def hook_costs(plain_step: float, calls: int = 100_000) -> str:
    """The copy and pickle hooks' extra time per call, on against off, in this process, and as a
    share of a plain step of ``plain_step`` seconds for one call of each per step (a loop that
    moves its batch with ``.to(device)``, a DataLoader worker that sends one batch)."""
    import time
    from multiprocessing.reduction import ForkingPickler

    import torch

    from memgauge.sections.training import _capture_pickles as _pickles
    from memgauge.sections.training._capture_copies import Copies
    from memgauge.sections.training._capture_copies_torch import wrap_copies

    x = torch.randn(64, 512)

    def per_call(fn: object, n: int) -> float:
        best = float("inf")
        for _ in range(5):  # the best of five: the run a busy machine disturbed least
            t0 = time.perf_counter()
            for _ in range(n):
                fn()  # type: ignore[operator]
            best = min(best, time.perf_counter() - t0)
        return best / n

    same = lambda: x.to("cpu")  # noqa: E731  (returns x itself: no copy)
    convert = lambda: x.to(torch.float64)  # noqa: E731  (a real copy, within the host)
    off = per_call(same, calls), per_call(convert, calls // 20)
    wrapped: list[tuple[object, str, object]] = []
    sink = Copies()
    wrap_copies(lambda: sink, lambda: "", wrapped)
    try:
        on = per_call(same, calls), per_call(convert, calls // 20)
    finally:
        while wrapped:
            owner, name, original = wrapped.pop()
            setattr(owner, name, original)
    batch = x.numpy().tobytes()  # 128 KiB, what a worker sends without shared memory
    cls = type(
        "ForkingPickler",
        (ForkingPickler,),
        {"dumps": ForkingPickler.__dict__["dumps"], "_extra_reducers": dict(ForkingPickler._extra_reducers)},
    )
    dumps = lambda: cls.dumps(batch)  # noqa: E731
    pickle_off = per_call(dumps, calls // 20)
    _pickles.hook(type("M", (), {"ForkingPickler": cls}))
    _pickles._counter, _pickles._loop = _pickles.Pickles(), None
    pickle_on = per_call(dumps, calls // 20)
    extra_to = on[0] - off[0]
    extra_pickle = pickle_on - pickle_off
    return (
        f"copy hooks: Tensor.to same device {off[0] * 1e6:.2f} -> {on[0] * 1e6:.2f} us "
        f"(+{extra_to * 1e6:.2f} us = {extra_to / plain_step:.3%} of a {plain_step * 1e3:.1f} ms"
        " plain step); "
        f"to float64 {off[1] * 1e6:.1f} -> {on[1] * 1e6:.1f} us; "
        f"pickle hook: dumps of a 128 KiB batch {pickle_off * 1e6:.1f} -> {pickle_on * 1e6:.1f} us "
        f"(+{extra_pickle * 1e6:.2f} us = {extra_pickle / plain_step:.3%} of a plain step)"
    )


def micro(steps: int, calls: int = 200_000) -> str:
    """The capture's own cost, timed in this process: one step end plus one batch fetch of the
    throughput loop (no torch), and the extra time of the FLOP-counted step of a real run (its
    time over the steady median), both as a share of the workload's plain loop."""
    import time

    from memgauge.sections.training._capture import Loop

    loop = Loop()
    t0 = time.perf_counter()
    for _ in range(calls):
        loop.fetched(0.0, 0.0, 64)
        loop.end_step("optimizer")
        if len(loop.rows) > 10_000:
            loop.rows.clear()
    per_step = (time.perf_counter() - t0) / calls
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "p.json"
        cmd = [
            sys.executable,
            "-m",
            "memgauge",
            "run",
            "-q",
            "--json",
            str(profile),
            str(WORKLOAD),
            str(steps),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        loop_s = float(json.loads(out.strip().splitlines()[-1])["loop_seconds"])
        t = json.loads(profile.read_text())["training"]
    counted = next(r["seconds"] for r in t["rows"] if r["flops_counted"])
    extra = counted - t["step_seconds"]["median"]
    return (
        f"per step (end + one fetch): {per_step * 1e6:.2f} us = {per_step * steps / loop_s:.3%} of the loop; "
        f"FLOP-counted step: {counted * 1e3:.1f} ms"
        f" against a median {t['step_seconds']['median'] * 1e3:.1f} ms, "
        f"+{extra * 1e3:.1f} ms = {extra / loop_s:.2%} of the {loop_s:.2f} s loop"
    )


if __name__ == "__main__":
    main()
