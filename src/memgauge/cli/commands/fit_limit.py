"""``memgauge fit-limit``: the container memory limit a program needs, found on real runs.

    memgauge fit-limit train.py                   # smallest surviving and full-speed limits, caches cold
    memgauge fit-limit --prove 300MiB train.py    # one run under 300 MiB: survived? how much slower?

Each run is in a fresh memory cgroup under the limit as a hard limit, with the program's files
evicted from page cache first (``--warm`` keeps them). The search and ``--prove`` stop a limited
run after ``--stall`` times the unlimited run's wall time (at least 20 s) and count it ``stalled``.
Exit status: 0 found (``--prove``: survived), 1 (``--prove``) OOM-killed, stalled or failed under
the limit,
memgauge's own codes otherwise.
"""

from __future__ import annotations

import argparse

from memgauge._errors import LimitError, UsageError
from memgauge.cli._common import OVER_BUDGET, PASSED, Program, say
from memgauge.cli._parser import Parser


class FitLimitCommand:
    name = "fit-limit"
    summary = "find the smallest memory limit a program survives and runs at full speed under"
    usage: str | None = "memgauge fit-limit [options] (script.py | -m module | -- command) [args ...]"
    description = (
        "Bisect over real runs, each in a fresh memory cgroup under a hard limit with the program's "
        "files evicted from page cache, for the smallest limit the program survives and the smallest "
        "it runs at full speed under; or, with --prove SIZE, run it once under SIZE and say whether it "
        "survived, how much slower it ran than unlimited, and how often it hit the limit."
    )
    examples: tuple[str, ...] = (
        "memgauge fit-limit train.py  # smallest surviving and full-speed limits, caches cold",
        "memgauge fit-limit --prove 300MiB train.py  # one run under 300 MiB: survived? how much slower?",
    )
    program: Program = "target"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument(
            "--prove", metavar="SIZE", help="run once under SIZE (e.g. 300MiB) instead of searching"
        )
        parser.add_argument(
            "--warm", action="store_true", help="keep the page cache (default: evict it before each run)"
        )
        parser.add_argument(
            "--tolerance",
            default="10%",
            metavar="PCT",
            help="full speed: wall time at most this much over the unlimited run's (default 10%%)",
        )
        parser.add_argument(
            "--evict",
            action="append",
            default=[],
            metavar="PATH",
            help="also evict the files under PATH before each run (data the program reads); repeatable",
        )
        parser.add_argument(
            "--stall",
            default=5.0,
            type=float,
            metavar="X",
            help="stop a limited run after X times the unlimited run's wall time, at least 20 s, and "
            "count it as stalled (default 5; 0: never)",
        )

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        from memgauge._units import format_bytes, parse_bytes
        from memgauge.cli._values import percent_option
        from memgauge.runner import default_roots, fit_limit, parse_target, prove_limit

        if not program:
            raise UsageError("give a program to run (see 'memgauge fit-limit --help')")
        target = parse_target(program)
        target.check()
        tolerance = percent_option(args.tolerance, "--tolerance")
        if args.stall < 0:
            raise UsageError(f"--stall takes a factor of 0 or more, not {args.stall}")
        roots = default_roots(target) + list(args.evict)
        cold = not args.warm
        state = "cold" if cold else "warm"
        if args.prove is not None:
            try:
                limit = parse_bytes(args.prove)
            except ValueError:
                raise UsageError(f"--prove takes a size such as 300MiB, not {args.prove!r}") from None
            base, t = prove_limit(target, limit, cold=cold, roots=roots, stall=args.stall or None)
            _no_group(base)
            slowdown = t.wall_seconds / base.wall_seconds if base.wall_seconds else float("nan")
            outcome = t.outcome if t.outcome != "failed" else f"failed (exit {t.exit_code})"
            say(
                f"under {format_bytes(limit)} ({state}): {outcome}; wall {t.wall_seconds:.2f} s vs "
                f"{base.wall_seconds:.2f} s unlimited ({slowdown:.2f}x); limit hit {t.limit_hits} times "
                f"(failcnt); cgroup peak {format_bytes(t.peak_bytes)} "
                f"(unlimited {format_bytes(base.peak_bytes)})\n"
            )
            return PASSED if t.survived else OVER_BUDGET

        def progress(t: object) -> None:
            from memgauge.runner import Trial

            assert isinstance(t, Trial) and t.limit_bytes is not None
            say(f"  {format_bytes(t.limit_bytes):>10}: {t.outcome}, {t.wall_seconds:.2f} s\n")

        stall = args.stall or None
        result = fit_limit(
            target, cold=cold, tolerance=tolerance, roots=roots, progress=progress, stall=stall
        )
        base = result.baseline
        _no_group(base)
        assert result.smallest_surviving_bytes is not None and result.full_speed_bytes is not None
        say(
            f"unlimited ({state}): wall {base.wall_seconds:.2f} s, "
            f"cgroup peak {format_bytes(base.peak_bytes)}, "
            f"largest process VmHWM {format_bytes(base.largest_process_bytes)}, "
            f"container needs {format_bytes(base.needs_bytes)}\n"
            f"smallest surviving limit: {format_bytes(result.smallest_surviving_bytes)}"
            f" (killed at {format_bytes(result.largest_failing_bytes or 0)})\n"
            f"smallest full-speed limit (within {args.tolerance} of unlimited): "
            f"{format_bytes(result.full_speed_bytes)}\n"
        )
        return PASSED


def _no_group(base: object) -> None:
    from memgauge.runner import Trial

    assert isinstance(base, Trial)
    if base.peak_bytes == 0:
        raise LimitError("no memory cgroup could be made: fit-limit needs one (root, or a delegated cgroup)")
