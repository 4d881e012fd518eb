"""Proving a memory budget on real runs: the program under the budget as a hard limit in a fresh
memory cgroup, caches cold (``prove_limit``), and the bisection for the smallest limit it survives
and the smallest it runs at full speed under (``fit_limit``).

Why real runs: no counter read from one unlimited run says what a container needs. The cgroup's
peak counts page cache the kernel would reclaim under a limit (and only the cache this group read
first: it moves with what ran before); the processes' RSS counts library pages the kernel can drop;
the working set leaves out what stays mapped. A run under the limit itself, with the program's
files evicted from page cache (a fresh container's state), answers for the kernel: survived or
OOM-killed, how much slower, how often usage hit the limit (``failcnt``).

Cold: before each run every regular file under the given roots (by default the Python installation
memgauge runs with, its ``sys.prefix`` and ``sys.base_prefix``, and the program's directory) is
evicted from page cache with ``posix_fadvise(POSIX_FADV_DONTNEED)``: only pages no process maps are
dropped, so other programs on the machine keep theirs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field

from memgauge.isolation import HardLimits
from memgauge.runner._options import RunOptions
from memgauge.runner._runner import run_program
from memgauge.runner._target import Target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from memgauge.model import Profile

__all__ = [
    "FitResult",
    "Proof",
    "Trial",
    "default_roots",
    "evict_page_cache",
    "fit_limit",
    "prove_limit",
    "trial_of",
]

_MIB = 1 << 20
# a limited run of ``fit_limit`` is stopped after this many times the unlimited run's wall time,
# and at least ``MIN_STALL_SECONDS``: near its limit a program can stall for minutes, the kernel
# reclaiming and re-reading its library pages over and over, rather than die
STALL_FACTOR = 5.0
MIN_STALL_SECONDS = 20.0


@dataclass(frozen=True)
class Trial:
    """One run: under ``limit_bytes`` (None: no limit), ``cold`` or not. ``survived``: it ended as
    the unlimited run did and the OOM killer killed none of its processes; ``peak_bytes``: the
    cgroup's high-water mark; ``limit_hits``: how often usage hit the limit (v1 ``failcnt``)."""

    limit_bytes: int | None
    cold: bool
    survived: bool
    exit_code: int | None
    oom_kills: int
    limit_hits: int
    wall_seconds: float
    peak_bytes: int
    largest_process_bytes: int
    # what a container needs by the run's own figures (``Peak.needs_bytes``)
    needs_bytes: int = 0
    # stopped at the wall-time cap (``fit_limit``'s ``stall``): not surviving, at full speed or not
    stalled: bool = False

    @property
    def outcome(self) -> str:
        """``survived``, ``OOM-killed`` (a process of the run was), ``stalled`` (stopped at the
        wall-time cap: the kernel kept it alive re-reading pages) or ``failed`` (it ended otherwise
        than the unlimited run)."""
        if self.survived:
            return "survived"
        return "OOM-killed" if self.oom_kills else "stalled" if self.stalled else "failed"


@dataclass
class FitResult:
    """``baseline``: the unlimited run; ``smallest_surviving_bytes``: the smallest limit tried that
    the program survived (None when not searched); ``largest_failing_bytes``: the largest it did not
    survive (the answer lies between); ``full_speed_bytes``: the smallest surviving limit whose run
    took at most ``1 + tolerance`` times the baseline's wall time; ``trials``: every run, in order."""

    baseline: Trial
    tolerance: float
    smallest_surviving_bytes: int | None = None
    largest_failing_bytes: int | None = None
    full_speed_bytes: int | None = None
    trials: list[Trial] = field(default_factory=list)


def default_roots(target: Target) -> list[str]:
    """Where the files a Python program maps come from: the interpreter's installation and the
    program's own directory (a module or command: the working directory)."""
    roots = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    if target.kind == "script":
        roots.add(os.path.dirname(os.path.realpath(target.value)))
    else:
        roots.add(os.getcwd())
    return sorted(roots)


def evict_page_cache(roots: Sequence[str]) -> int:
    """Drop every regular file under ``roots`` from page cache (pages no process maps); returns
    how many files were advised."""
    count = 0
    for root in roots:
        for path in _files(root):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    return count


def _files(root: str) -> Iterator[str]:
    if os.path.isfile(root):
        yield root
        return
    for top, dirs, names in os.walk(root):
        # a checkout's history is never mapped by the program
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            yield os.path.join(top, name)


def trial(
    target: Target,
    limit_bytes: int | None,
    *,
    cold: bool,
    roots: Sequence[str],
    expect: int | None = 0,
    env: dict[str, str] | None = None,
    wall_cap: float | None = None,
) -> Trial:
    """One run of ``target`` in a fresh memory cgroup, under ``limit_bytes``, line sampling off (it
    adds memory of its own), its output discarded; ``env`` (None: memgauge's) is its environment;
    ``wall_cap``: seconds after which it is stopped (then ``stalled``)."""
    if cold:
        evict_page_cache(roots)
    enforce = HardLimits(wall_seconds=wall_cap) if wall_cap is not None else None
    options = RunOptions(cgroup="auto", memory_limit_bytes=limit_bytes, lines="off", env=env, enforce=enforce)
    with quiet_program():
        profile = run_program(target, options)
    return trial_of(profile, limit_bytes, cold=cold, expect=expect)


def trial_of(profile: Profile, limit_bytes: int | None, *, cold: bool, expect: int | None = 0) -> Trial:
    """The ``Trial`` a finished run's profile records: a run here (``trial``) or one the service's
    sandbox made under ``limit_bytes``. ``expect``: the exit status a surviving run ends with (None:
    any; the unlimited run survived when nothing of it was OOM-killed)."""
    measurement = profile.environment.get("measurement") or {}
    kills = int(measurement.get("oom_kills") or 0) or int(profile.exit.oom_killed)
    stalled = (profile.exit.stopped_by or "").startswith("wall time")
    return Trial(
        limit_bytes=limit_bytes,
        cold=cold,
        # the unlimited run (``expect`` None) survived when nothing of it was OOM-killed
        survived=kills == 0 and not stalled and (expect is None or profile.exit.code == expect),
        exit_code=profile.exit.code,
        oom_kills=kills,
        limit_hits=int(measurement.get("limit_hits") or 0),
        wall_seconds=profile.wall_seconds,
        peak_bytes=profile.peak.resident_bytes,
        largest_process_bytes=profile.peak.largest_process_bytes,
        needs_bytes=profile.peak.needs_bytes,
        stalled=stalled,
    )


@dataclass(frozen=True)
class Proof:
    """A budget's proof: ``base`` the unlimited run, ``under`` the run under ``limit_bytes`` as a
    hard limit, both cold (or both warm). One verdict for ``memgauge check --prove`` and the
    service's ``prove`` policies alike: ``survived``, ``outcome``, ``slowdown`` and ``note``."""

    limit_bytes: int
    cold: bool
    base: Trial
    under: Trial

    @property
    def survived(self) -> bool:
        return self.under.survived

    @property
    def outcome(self) -> str:
        """``Trial.outcome`` of the run under the limit: ``survived``, ``OOM-killed``,
        ``stalled`` or ``failed``."""
        return self.under.outcome

    @property
    def slowdown(self) -> float:
        """The limited run's wall time over the unlimited run's (1.0 when that one took no time)."""
        base = self.base.wall_seconds
        return self.under.wall_seconds / base if base > 0 else 1.0

    @property
    def note(self) -> str:
        from memgauge._units import format_bytes

        caches = "cold" if self.cold else "warm"
        return (
            f"proof under {format_bytes(self.limit_bytes)}, {caches}: {self.outcome}, "
            f"{self.slowdown:.2f}x the unlimited wall time, limit hit {self.under.limit_hits} times"
        )

    def to_dict(self) -> dict[str, object]:
        """The proof as plain data (the service's API and pages show it)."""
        return {
            "limit_bytes": self.limit_bytes,
            "cold": self.cold,
            "outcome": self.outcome,
            "survived": self.survived,
            "slowdown": round(self.slowdown, 4),
            "limit_hits": self.under.limit_hits,
            "oom_kills": self.under.oom_kills,
            "exit_code": self.under.exit_code,
            "wall_seconds": self.under.wall_seconds,
            "unlimited_wall_seconds": self.base.wall_seconds,
            "peak_bytes": self.under.peak_bytes,
            "note": self.note,
        }


@contextlib.contextmanager
def quiet_program() -> Iterator[None]:
    """The measured program's stdout and stderr (which it shares with memgauge) to /dev/null: a
    search runs it a dozen times, a plan's verifying runs once per model."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def prove_limit(
    target: Target,
    limit_bytes: int,
    *,
    cold: bool = True,
    roots: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    stall: float | None = STALL_FACTOR,
    min_stall_seconds: float = MIN_STALL_SECONDS,
) -> tuple[Trial, Trial]:
    """The unlimited run and the run under ``limit_bytes``, both cold (or both warm): did it
    survive, how much slower (compare the two ``wall_seconds``), how often it hit the limit.
    ``env``: the program's environment (None: memgauge's). The limited run is stopped after
    ``stall`` times the unlimited run's wall time (at least ``min_stall_seconds``; None: never)
    and is then ``stalled``, not a survivor: under a limit a little too small the kernel can keep a
    program crawling for minutes, re-reading its library pages."""
    roots = default_roots(target) if roots is None else roots
    base = trial(target, None, cold=cold, roots=roots, expect=None, env=env)
    cap = None if stall is None else max(min_stall_seconds, stall * base.wall_seconds)
    limited = trial(target, limit_bytes, cold=cold, roots=roots, expect=base.exit_code, env=env, wall_cap=cap)
    return base, limited


def fit_limit(
    target: Target,
    *,
    cold: bool = True,
    tolerance: float = 0.10,
    roots: Sequence[str] | None = None,
    precision_bytes: int = 2 * _MIB,
    progress: Callable[[Trial], None] | None = None,
    stall: float | None = STALL_FACTOR,
    min_stall_seconds: float = MIN_STALL_SECONDS,
) -> FitResult:
    """Bisect over real runs for the smallest limit ``target`` survives, then for the smallest it
    runs at full speed under (wall time at most ``1 + tolerance`` times the unlimited run's),
    each to within ``precision_bytes``. The unlimited run's cgroup peak bounds the search from
    above: under a limit that high the kernel never had to act; its ``needs_bytes``, where it has
    one, is the first limit tried. A limited run is stopped after ``stall`` times the unlimited
    run's wall time (at least ``min_stall_seconds``; None: never) and counts as ``stalled``."""
    roots = default_roots(target) if roots is None else roots
    base = trial(target, None, cold=cold, roots=roots, expect=None)
    result = FitResult(base, tolerance, trials=[base])
    cap = None if stall is None else max(min_stall_seconds, stall * base.wall_seconds)

    def run(limit: int) -> Trial:
        t = trial(target, limit, cold=cold, roots=roots, expect=base.exit_code, wall_cap=cap)
        result.trials.append(t)
        if progress is not None:
            progress(t)
        return t

    def fast(t: Trial) -> bool:
        return t.survived and t.wall_seconds <= base.wall_seconds * (1 + tolerance)

    top = _page(base.peak_bytes + precision_bytes)
    high, low = top, 0
    if 0 < base.needs_bytes < top:
        # the run's own figure first: where it holds, the search is below it
        first = _page(base.needs_bytes)
        if run(first).survived:
            high = first
        else:
            low = first
    low, high = _bisect(lambda limit: run(limit).survived, low, high, precision_bytes)
    result.smallest_surviving_bytes = high
    result.largest_failing_bytes = low or None
    # full speed: between the smallest surviving limit and the unlimited peak, the limits already
    # tried narrowing it
    slow, quick = high, top
    for t in result.trials[1:]:
        assert t.limit_bytes is not None
        if fast(t) and high <= t.limit_bytes < quick:
            quick = t.limit_bytes
        elif not fast(t) and slow < t.limit_bytes < quick:
            slow = t.limit_bytes
    result.full_speed_bytes = _bisect(lambda limit: fast(run(limit)), slow, quick, precision_bytes)[1]
    return result


def _bisect(good: Callable[[int], bool], bad: int, ok: int, precision: int) -> tuple[int, int]:
    """Between a limit that is not ``good`` (``bad``) and one that is (``ok``), page-aligned halves
    tried until they are ``precision`` apart; the two limits they end at."""
    while ok - bad > precision:
        middle = _page((bad + ok) // 2)
        if good(middle):
            ok = middle
        else:
            bad = middle
    return bad, ok


def _page(n: int) -> int:
    return (n + 4095) // 4096 * 4096
