"""Option values the commands share, each checked with one error: a percentage in range, the
script or module to run, a timeout."""

from __future__ import annotations

import argparse

from memgauge._errors import UsageError


def percent_option(text: str, option: str, *, example: str = "10%", below: float | None = None) -> float:
    """``text`` (``10%`` or ``0.1``) as a fraction; a usage error naming ``option`` where it is
    no percentage, or where ``below`` is given and it is negative or not below it."""
    from memgauge._units import parse_percent

    try:
        value = parse_percent(text)
    except ValueError:
        raise UsageError(f"{option} takes a percentage such as {example}, not {text!r}") from None
    if below is not None and not 0 <= value < below:
        raise UsageError(f"{option} must be at least 0% and below {below:.0%}")
    return value


def script_target(args: argparse.Namespace, otherwise: str = "") -> list[str]:
    """What ``sweep`` and ``fit`` run: their script or ``-m MODULE`` (one of the two), checked now
    rather than once per run. ``otherwise`` names the other thing the command accepts."""
    from memgauge.runner import parse_target

    if args.script and args.module:
        raise UsageError("give a script or -m MODULE, not both")
    if not args.script and not args.module:
        raise UsageError(f"nothing to run: give a script or -m MODULE{otherwise}")
    target = ["-m", args.module] if args.module else [args.script]
    parse_target(target).check()
    return target


def timeout_option(text: str | None) -> float | None:
    """``--timeout``: a duration (``90s``, ``2m``), positive; None where not given."""
    from memgauge._units import parse_seconds

    if text is None:
        return None
    timeout = parse_seconds(text)
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    return timeout
