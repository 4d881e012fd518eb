"""Human-readable sizes and durations: written in binary units (``format_bytes``: 512 MiB is
512 * 2**20), read in the units people type (``parse_bytes``, ``parse_seconds``)."""

from __future__ import annotations

# not `from fractions import Fraction`: every report imports this module, few parse a budget
TYPE_CHECKING = False
if TYPE_CHECKING:
    from fractions import Fraction

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(n: float, *, signed: bool = False) -> str:
    sign = "-" if n < 0 else ("+" if signed and n > 0 else "")
    value = abs(float(n))
    for unit in _BYTE_UNITS:
        # compare what will be printed, so 1048575 B reads "1.0 MiB", not "1024 KiB"
        shown = round(value) if value >= 100 or unit == "B" else round(value, 1)
        if shown < 1024 or unit == _BYTE_UNITS[-1]:
            if unit == "B":
                return f"{sign}{int(shown)} B"
            return f"{sign}{value:.1f} {unit}" if value < 100 else f"{sign}{value:.0f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_seconds(s: float) -> str:
    if s < 0:  # a span whose clock ran backwards: "-500 ms", not "-500000 µs"
        return "-" + format_seconds(-s)
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.0f} ms"
    if s < 60:
        return f"{s:.2f} s"
    if s < 3599.5:
        whole = round(s)
        return f"{whole // 60} min {whole % 60} s"
    minutes = round(s / 60)
    return f"{minutes // 60} h {minutes % 60} min"


# Parsing. Units are case-insensitive ("512mib", "1gb", "30S"): nobody means millibytes by "mb", and
# a budget typed in a hurry should not fail on case. The decimal prefixes (KB, MB, GB, TB) are powers
# of 1000 and the binary ones (KiB, MiB, GiB, TiB) powers of 1024, as IEC says and as format_bytes
# prints. A bare prefix ("512M", "2g") is refused: docker and ps read it as binary, disk vendors as
# decimal, so either guess would be wrong for someone.
_BYTE_FACTORS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "kib": 1 << 10,
    "mb": 1000**2,
    "mib": 1 << 20,
    "gb": 1000**3,
    "gib": 1 << 30,
    "tb": 1000**4,
    "tib": 1 << 40,
}
_AMBIGUOUS_BYTES = {"k": "KB or KiB", "m": "MB or MiB", "g": "GB or GiB", "t": "TB or TiB"}
BYTE_UNITS_TEXT = "B, KB, KiB, MB, MiB, GB, GiB, TB, TiB"
# in microseconds, so that every factor is an int; "µs" is how format_seconds writes them, and both
# micro signs (U+00B5, U+03BC) and "us" read
_MICROSECONDS = 10**6
_SECOND_FACTORS = {
    "": _MICROSECONDS,
    "s": _MICROSECONDS,
    "sec": _MICROSECONDS,
    "ms": 1000,
    "us": 1,
    "\u00b5s": 1,
    "\u03bcs": 1,
    "min": 60 * _MICROSECONDS,
    "h": 3600 * _MICROSECONDS,
}
_AMBIGUOUS_SECONDS = {"m": "min or ms"}
SECOND_UNITS_TEXT = "s, ms, min, h"
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# a number, then a unit: anything up to the next space, digit, point or sign
_QUANTITY = rf"\s*({_NUMBER})\s*([^\s0-9.+-]*)\s*"
# beyond this a figure is a typo, and 1e999999999 would take minutes to turn into an int
_MAX_EXPONENT = 30


def parse_bytes(text: str) -> int:
    """Bytes from a size such as ``"512MiB"``, ``"1.5 GB"``, ``"300 kib"`` or ``"4096"`` (a bare
    number is bytes). Units are case-insensitive; KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB
    powers of 1024; a bare prefix (``"512M"``) is ambiguous and refused. A fraction of a byte rounds
    half up. Raises ValueError with a short reason: "empty", "not a number", "unknown unit 'MX'",
    "ambiguous unit 'M' (MB or MiB?)", "negative", "out of range"."""
    import math
    from fractions import Fraction

    # exact until the end: "1.1GB" is 1100000000 bytes, not 1100000000.0000002
    total = sum(value * factor for value, factor in _quantities(text, _BYTE_FACTORS, _AMBIGUOUS_BYTES))
    return math.floor(total + Fraction(1, 2))


def parse_seconds(text: str) -> float:
    """Seconds from a duration such as ``"60s"``, ``"250 ms"``, ``"10min"``, ``"1.5h"`` or ``"30"``
    (a bare number is seconds). Compounds, as format_seconds writes them (``"2 min 5 s"``,
    ``"1h30min"``), add up. Units are case-insensitive: s (sec), ms, us (µs), min, h; a bare "m" is
    refused (minutes or milliseconds?). Raises ValueError with a short reason, as parse_bytes."""
    pairs = _quantities(text, _SECOND_FACTORS, _AMBIGUOUS_SECONDS, compound=True)
    return float(sum(value * factor for value, factor in pairs) / _MICROSECONDS)


def _quantities(
    text: str, factors: dict[str, int], ambiguous: dict[str, str], *, compound: bool = False
) -> list[tuple[Fraction, int]]:
    """``text`` as (number, unit factor) pairs: one pair, or several when ``compound``."""
    import re

    body = text.strip()
    if not body:
        raise ValueError("empty")
    negative = body.startswith("-")
    body = body[1:] if body[:1] in "+-" else body
    pairs: list[tuple[Fraction, int]] = []
    units: list[str] = []
    pos = 0
    while pos < len(body):
        m = re.compile(_QUANTITY).match(body, pos)
        if m is None or (units and not units[-1]):
            # "1.5.3", "1 2", "MiB", "inf": no number where one must be, or a number after a number
            raise ValueError("not a number")
        unit = m.group(2)
        if not compound and m.end() < len(body) and unit:
            unit = body[m.start(2) :].strip()  # "5 MiB 3": all of it is the (unknown) unit
        key = unit.lower()
        if key not in factors:
            if key in ambiguous:
                raise ValueError(f"ambiguous unit {unit!r} ({ambiguous[key]}?)")
            raise ValueError(f"unknown unit {unit!r}")
        pairs.append((_exact(m.group(1)), factors[key]))
        units.append(unit)
        pos = m.end()
    if len(units) > 1 and not all(units):
        raise ValueError("a unit after every number of a compound (1h 30min)")
    if negative and any(value for value, _ in pairs):
        raise ValueError("negative")
    return pairs


def _exact(number: str) -> Fraction:
    from decimal import Decimal
    from fractions import Fraction

    value = Decimal(number)
    # the exponent is checked before anything is computed: 1e999999999 would take minutes
    if value and not -_MAX_EXPONENT <= value.adjusted() <= _MAX_EXPONENT:
        raise ValueError("out of range")
    return Fraction(value)


def parse_percent(text: str) -> float:
    """``"10%"`` as the fraction 0.1. A bare number is refused (is 0.1 ten percent or a tenth of
    one?), and so is a negative one. Raises ValueError."""
    import math

    text = text.strip()
    if not text.endswith("%"):
        raise ValueError("not a percentage")
    try:
        fraction = float(text.removesuffix("%")) / 100
    except ValueError:
        raise ValueError("not a percentage") from None
    if not math.isfinite(fraction) or fraction < 0:
        raise ValueError("not a percentage")
    return fraction
