"""Where memgauge's time goes inside a real run of the training bench's loop, part by part: the
direct account beside ``training_bench.py``'s wall clock, which on a shared VM moves by more than
memgauge's whole cost from one run to the next.

    python bench/training_account.py [--steps 300] [--repeat 3]

Runs ``workloads/training_loop_timed.py`` (the bench loop, each step timed) plain and under
``memgauge run`` in turn, glibc's thresholds pinned as ``training_bench.py --malloc pinned`` does,
and reports, median over the repetitions:

- an unfollowed step: the time inside memgauge's hooks (optimizer pre and post, the backward and
  DataLoader wrappers without what they wrap), timed in place;
- a step followed tensor by tensor after the first ones: its time over the median of the four
  unfollowed steps around it (the machine's drift over a few steps is small; over a run it is not);
- the FLOP-counted step: over the plain run's same step (or, past the first steps, as a followed one);
- the first steps (followed, the modules scanned, the FLOP-counted step 3): their time over the same
  steps of the plain run beside it, each counted in its own run's steady step (the machine's speed
  moves +-10% between runs, which the first steps' ~30 ms drowned in);
- the line sampler: in a third run it samples at 10 ms from step 20, its samples skipped every
  other block of 4 steps, and each block's mean step is set against the block before it (its
  samples land anywhere in a step); the median of those differences per sample, times the samples
  a steady step gets at the steady interval (100 ms);
- what those add up to for the loop, against the plain loop's time;
- beside it, the CPU that memgauge's own process (the watcher) and the line sampler's thread used
  over the loop, as a share of one core: the loop's thread does not pay it where another core is
  free (the bench loop runs one thread), a loop using every core does.

Not in the account: what the watcher's reads do to the loop beyond taking a core (its ``smaps``
reads hold the program's memory map for 10-20 ms); ``training_bench.py``'s ``torch-off`` mode shows
the watcher with the line sampler, within its noise.

``--memgauge-src DIR`` runs another memgauge tree (``DIR/src``) in the measured runs: a change's
before and after in one session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOAD = Path(__file__).parent / "workloads" / "training_loop_timed.py"
PINNED_MALLOC = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(64 << 20)}
FIRST = 10  # the tracker's first followed steps (sections/torch/_capture_sampling.py)
TICKS = os.sysconf("SC_CLK_TCK")
MEASURED_ENV: dict[str, str] = {}  # added to the measured runs' environment (--memgauge-src)


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU seconds of process ``pid`` so far (its threads, not its children)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def run(measured: bool, steps: int, *extra: str) -> dict:
    """One run of the workload; measured, also memgauge's own process's CPU seconds over the loop
    (``runner_cpu``: the watcher, read from its /proc stat every 20 ms against the loop's start
    and end on the system's monotonic clock)."""
    env = {**os.environ, **PINNED_MALLOC}
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, str(WORKLOAD), str(steps), *extra]
        if measured:
            cmd[1:1] = ["-m", "memgauge", "run", "-q", "--json", str(Path(tmp) / "p.json")]
            env.update(MEASURED_ENV)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        readings: list[tuple[float, float]] = []
        while proc.poll() is None:
            cpu = cpu_seconds(proc.pid) if measured else None
            if cpu is not None:
                readings.append((time.monotonic(), cpu))
            time.sleep(0.02)
        out, _ = proc.communicate()
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, cmd)
    result = json.loads(out.strip().splitlines()[-1])
    if measured:
        result["runner_cpu"] = cpu_between(readings, result["loop_start"], result["loop_end"])
    return result


def cpu_between(readings: list[tuple[float, float]], begin: float, end: float) -> float:
    """CPU seconds between ``begin`` and ``end`` from (time, CPU seconds) readings: the last reading
    at or before each (ticks of 10 ms: within about 20 ms over a loop of seconds)."""
    before = [cpu for t, cpu in readings if t <= begin]
    upto = [cpu for t, cpu in readings if t <= end]
    return upto[-1] - before[-1] if before and upto else 0.0


def extra_over_neighbours(times: list[float], index: int, skip: set[int]) -> float | None:
    """Step ``index``'s time over the median of the two unfollowed steps on each side."""
    near = (index - 2, index - 1, index + 1, index + 2)
    around = [i for i in near if 0 <= i < len(times) and i not in skip]
    return times[index] - statistics.median(times[i] for i in around) if len(around) >= 2 else None


def sampler_cost(toggled: dict) -> float:
    """Seconds a steady step, the line sampler's samples on against off: blocks of 4 steps from step
    20, off first (the workload's ``sampler`` mode, sampling at 10 ms), each on block's mean step
    against the off block's before it, the median of those; the followed and FLOP-counted steps
    left out of both. That is per sample (the samples counted in the on blocks), times the samples
    a steady step gets at the sampler's steady interval (``_sampling.STEADY_INTERVAL``)."""
    times = toggled["times"]
    skip = set(toggled["followed"]) | {toggled["flop_step"]}
    diffs, on_steps = [], 0
    for begin in range(20, len(times) - 7, 8):
        off = [times[i] for i in range(begin, begin + 4) if i not in skip]
        on = [times[i] for i in range(begin + 4, begin + 8) if i not in skip]
        on_steps += 4
        if off and on:
            diffs.append(statistics.fmean(on) - statistics.fmean(off))
    if not diffs or not toggled["samples_on"]:
        return 0.0
    # the median: a drift of the machine within a block moves a few differences by a lot
    per_sample = statistics.median(diffs) * on_steps / toggled["samples_on"]
    return per_sample * statistics.median(times[20:]) / toggled["steady_interval"]


def first_steps_extra(plain: dict, measured: dict, steps: list[int]) -> float:
    """Seconds the measured run's ``steps`` took over the plain run's, each run's counted in its own
    steady step (the median of its steps from ``FIRST``): the machine's speed, which moves +-10%
    from one run to the next, cancels; in the plain run's seconds."""
    ours, theirs = measured["times"], plain["times"]
    steady = statistics.median(ours[FIRST:]), statistics.median(theirs[FIRST:])
    extra = sum(ours[i] for i in steps) / steady[0] - sum(theirs[i] for i in steps) / steady[1]
    return extra * steady[1]


def account(plain: dict, measured: dict, toggled: dict) -> dict[str, float]:
    times = measured["times"]
    followed = set(measured["followed"])
    flop = measured["flop_step"]
    special = followed | ({flop} if flop is not None else set())
    plain_steps = [i for i in range(FIRST, len(times)) if i not in special]
    hooks = {
        name: statistics.median(own[i] for i in plain_steps if i < len(own)) / 1e3
        for name, own in measured["hooks"].items()
    }
    later = [i for i in sorted(followed) if i >= FIRST]
    extras = [e for i in later if (e := extra_over_neighbours(times, i, special)) is not None]
    # the FLOP step among the first steps (the default) is in their extra, not counted again
    first = first_steps_extra(plain, measured, list(range(FIRST)))
    flop_extra, flop_apart = 0.0, 0.0
    if flop is not None and flop < FIRST:
        flop_extra = first_steps_extra(plain, measured, [flop])
    elif flop is not None:
        flop_extra = flop_apart = extra_over_neighbours(times, flop, special) or 0.0
    per_step = sum(hooks.values()) * 1e-6
    followed_extra = statistics.median(extras) if extras else 0.0
    total = (len(times) - FIRST) * per_step + len(later) * followed_extra + first + flop_apart
    sampling = sampler_cost(toggled)
    total += (len(times) - FIRST) * sampling
    return {
        **{f"{name} us": v for name, v in hooks.items()},
        "unfollowed step us": per_step * 1e6,
        "followed steps after the first": float(len(later)),
        "followed step extra us": followed_extra * 1e6,
        "FLOP step extra ms": flop_extra * 1e3,
        "first steps extra ms": first * 1e3,
        "line sampler a steady step us": sampling * 1e6,
        "plain loop s": plain["loop_seconds"],
        "plain steady step ms": statistics.median(plain["times"][FIRST:]) * 1e3,
        "accounted ms": total * 1e3,
        # beside the loop, on another core where there is one: what a loop using every core loses
        "runner CPU % of a core": 100 * measured["runner_cpu"] / measured["loop_seconds"],
        "sampler CPU % of a core": 100 * measured["sampler_cpu"] / measured["loop_seconds"],
        "accounted share %": 100 * total / plain["loop_seconds"],
        "hooks of every step share %": 100 * (len(times) - FIRST) * per_step / plain["loop_seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch's threads in the loop (default 1)")
    parser.add_argument("--memgauge-src", help="a memgauge tree whose src/ the measured runs use")
    args = parser.parse_args()
    os.environ["BENCH_TORCH_THREADS"] = str(args.threads)
    if args.memgauge_src:
        MEASURED_ENV["PYTHONPATH"] = str(Path(args.memgauge_src).resolve() / "src")
    rows = []
    for i in range(args.repeat):
        first, second = (False, True) if i % 2 == 0 else (True, False)
        a, b = run(first, args.steps), run(second, args.steps)
        plain, measured = (a, b) if not first else (b, a)
        rows.append(account(plain, measured, run(True, args.steps, "sampler")))
    print(
        f"{args.steps} steps, torch threads {args.threads}, {args.repeat} repetitions (plain and memgauge"
        " in turn); medians [min-max]"
    )
    for key in rows[0]:
        values = [r[key] for r in rows]
        print(f"  {key:<34} {statistics.median(values):10.2f}   [{min(values):.2f}-{max(values):.2f}]")


if __name__ == "__main__":
    main()
