"""Sweep parameters from the command line: ``--param NAME=V1,V2,...``, ``--arg TEMPLATE``,
``--predict NAME=V``, and the grid of points they make.

Values are numbers where they read as numbers (``1e4`` is the integer 10000, ``0.5`` a float) and
text otherwise (``MODEL=linear,mlp``). A parameter reaches the program as an environment variable of
its name, and through ``{NAME}`` in argument templates; numbers are written plainly (``10000``, not
``1e4``) so that ``int(os.environ["N"])`` works.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections.abc import Sequence

from memgauge._errors import UsageError
from memgauge.model import Value

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# only a name in braces is a reference: "{}" or '{"k": 1}' in a program argument is the program's
# own text (a format string, JSON), passed as it is rather than refused as an unknown parameter
_TEMPLATE_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def parse_value(text: str) -> Value:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    # 1e4 and 2.5e3 are sizes: integers when they are whole
    if number.is_integer() and ("e" in text.lower()) and abs(number) < 2**63:
        return int(number)
    return number


def format_value(value: Value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def parse_param(spec: str, option: str = "--param") -> tuple[str, list[Value]]:
    name, sep, values = spec.partition("=")
    name = name.strip()
    if not sep or not name:
        raise UsageError(f"{option} {spec!r}: expected NAME=VALUE[,VALUE...]")
    if not _NAME.match(name):
        raise UsageError(f"{option} {spec!r}: {name!r} is not a valid environment variable name")
    parts = [v for v in values.split(",")]
    if any(not v.strip() for v in parts):
        raise UsageError(f"{option} {spec!r}: empty value")
    parsed = [parse_value(v) for v in parts]
    if len(set(map(repr, parsed))) != len(parsed):
        raise UsageError(f"{option} {spec!r}: a value is given twice")
    return name, parsed


def parse_params(specs: Sequence[str]) -> dict[str, list[Value]]:
    params: dict[str, list[Value]] = {}
    for spec in specs:
        name, values = parse_param(spec)
        if name in params:
            raise UsageError(f"--param {name} is given twice")
        params[name] = values
    if not params:
        raise UsageError("nothing to sweep: give at least one --param NAME=V1,V2,...")
    return params


def grid(params: dict[str, list[Value]]) -> list[dict[str, Value]]:
    """Every combination, the first parameter varying slowest."""
    names = list(params)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*params.values())]


def check_templates(templates: Sequence[str], params: dict[str, list[Value]]) -> None:
    for template in templates:
        for field in _TEMPLATE_FIELD.findall(template):
            if field not in params:
                known = ", ".join(params) or "none"
                raise UsageError(
                    f"argument template {template!r} names {{{field}}}, which is no --param ({known})"
                )


def expand(templates: Sequence[str], point: dict[str, Value]) -> list[str]:
    """Each template with ``{NAME}`` replaced, then split as a shell would (``--arg "--rows {N}"``
    gives two arguments)."""

    def sub(m: re.Match[str]) -> str:
        return format_value(point[m.group(1)])

    out: list[str] = []
    for template in templates:
        try:
            out += shlex.split(_TEMPLATE_FIELD.sub(sub, template))
        except ValueError as e:
            raise UsageError(f"argument template {template!r}: {e}") from e
    return out


def substitute(args: Sequence[str], point: dict[str, Value]) -> list[str]:
    """``{NAME}`` replaced in each argument, without splitting (the program's own arguments)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        return format_value(point[name]) if name in point else m.group(0)

    return [_TEMPLATE_FIELD.sub(sub, a) for a in args]


def environment(point: dict[str, Value]) -> dict[str, str]:
    return {name: format_value(value) for name, value in point.items()}


def parse_predict(
    specs: Sequence[str], params: dict[str, list[Value]]
) -> tuple[str, float, dict[str, Value]]:
    """``--predict N=1e7 [--predict F=100]``: the one size to extrapolate, and measured values
    for other parameters (restricting the prediction to those)."""
    target: tuple[str, float] | None = None
    fixed: dict[str, Value] = {}
    for spec in specs:
        name, values = parse_param(spec, "--predict")
        if name not in params:
            raise UsageError(f"--predict {name}: no --param {name} was swept")
        if len(values) != 1:
            raise UsageError(f"--predict {spec!r}: give one value")
        value = values[0]
        if value in params[name] and len(params[name]) > 1:
            fixed[name] = value
            continue
        if isinstance(value, str) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in params[name]
        ):
            raise UsageError(f"--predict {spec!r}: only a numeric parameter can be extrapolated")
        if len(params[name]) < 2:
            raise UsageError(f"--predict {name}: it was not varied (one value), so nothing says how it grows")
        if target is not None:
            raise UsageError(
                "--predict extrapolates one parameter at a time; give the others a value that was measured"
            )
        target = (name, float(value))
    if target is None:
        raise UsageError("--predict: every value given was measured; give a size to extrapolate to")
    return target[0], target[1], fixed
