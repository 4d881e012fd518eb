"""How every report writes a figure and escapes a string: one rule per thing, shared by the
terminal, Markdown and HTML renderers (the terminal's table layout is in ``_layout``).

Figures: a value in its unit, a signed difference, a ratio, a share, a peak that may be only a
lower bound. Markdown: text and code spans that show a string as written, and table rows that a
``|`` cannot split. HTML: text and attribute escaping, and JSON that cannot end its script
element early.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from memgauge._units import format_bytes, format_seconds
from memgauge.model import UNBOUNDED_NOTE, Profile

MISSING = "—"
# an en dash between the ends of a range ("1.1 to 1.3 GiB"): a hyphen would read as a minus sign
DASH = "\u2013"
# a minified or generated line would make a row thousands of characters wide
MAX_SOURCE = 120

# -- figures ------------------------------------------------------------------------------------------


def format_count(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def format_number(value: float) -> str:
    """A program's own figure: whole numbers with thousands separators, others to 4 digits."""
    if not math.isfinite(value):
        return "∞" if value > 0 else "-∞" if value < 0 else MISSING
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1000 and abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def format_figure(value: float | None, unit: str, lower_bound: bool = False) -> str:
    """A figure in its unit ("bytes", "seconds" or "count"); "≥" after a lower bound."""
    if value is None:
        return MISSING
    if unit == "bytes":
        text = format_bytes(value)
    elif unit == "seconds":
        text = format_seconds(value) if value else "0 s"  # as a delta of 0 reads
    else:
        text = format_count(value)
    return text + " ≥" if lower_bound else text


def format_delta(delta: float | None, unit: str) -> str:
    """A signed difference: +100 MiB, -1.20 s, +2."""
    if delta is None:
        return MISSING
    if unit == "bytes":
        return format_bytes(delta, signed=True)
    if delta == 0:
        return "0 s" if unit == "seconds" else "0"
    sign = "+" if delta > 0 else "-"
    if unit == "seconds":
        return sign + format_seconds(abs(delta))
    return sign + format_count(abs(delta))


def format_ratio(ratio: float | None) -> str:
    return MISSING if ratio is None else f"{ratio:.2f}x"


def percent(fraction: float) -> str:
    """A share to two significant digits below 10%, whole percents above: "0.35%", "7.1%", "40%"."""
    value = 100 * fraction
    if 0 < abs(value) < 0.01:
        return "<0.01%"
    return f"{value:.0f}%" if abs(value) >= 10 or value == 0 else f"{value:.2g}%"


def format_peak(n: float, exact: bool = True) -> str:
    """A peak; "≥" after one that is only a lower bound (it fell between samples)."""
    return format_bytes(n) + ("" if exact else " ≥")


def format_rate(bytes_per_second: float) -> str:
    return f"{format_bytes(round(bytes_per_second))}/s"


def peak_bound(profile: Profile) -> str:
    """How far the resident peak may be off: "a lower bound", "±256.0 KiB" or "exact"."""
    peak = profile.peak
    if UNBOUNDED_NOTE in peak.notes:
        return "a lower bound"
    if peak.error_bound_bytes:
        return f"±{format_bytes(peak.error_bound_bytes)}"
    return "exact"


def core_share(profile: Profile) -> str:
    """The CPU time as a share of one core over the wall time ("" for a run of no duration)."""
    if profile.wall_seconds <= 0:
        return ""
    cpu = profile.cpu.user_seconds + profile.cpu.system_seconds
    return f"{cpu / profile.wall_seconds:.0%} of one core"


def clip(text: str, most: int = MAX_SOURCE) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


# -- Markdown (GitHub-flavoured) ----------------------------------------------------------------------

# Characters that start inline markup (emphasis, links, HTML, entities, strikethrough); '|' is left
# to md_row: only a table row splits at it, and a '\|' elsewhere would be one more character to read.
_MD_SPECIALS = re.compile(r"([\\`*_\[\]<>~&])")
_BACKTICK_RUN = re.compile(r"`+")


def one_line(text: str) -> str:
    # a newline would end a table row, a heading or a list item
    return " ".join(text.splitlines())


def md_text(text: str) -> str:
    """Plain text that shows as written: inline Markdown punctuation escaped, on one line."""
    return _MD_SPECIALS.sub(r"\\\1", one_line(text))


def md_code(text: str) -> str:
    """A code span showing ``text`` verbatim, whatever backticks it holds: the fence is one
    backtick longer than its longest run, padded with a space where the content starts or ends
    with a backtick or a space (GFM strips one space from each side when both are there)."""
    text = one_line(text)
    if not text:
        return ""
    fence = "`" * (max((len(m) for m in _BACKTICK_RUN.findall(text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_row(cells: Sequence[str]) -> str:
    # GFM splits a row at every unescaped '|', inside code spans too; '\|' is turned back into '|'
    # before the cell's inline content is parsed, code spans included.
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def md_table(headers: Sequence[str], aligns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GFM table; ``aligns`` holds each column's delimiter cell ("---", ":---", "---:")."""
    return [md_row(headers), md_row(aligns), *(md_row(cells) for cells in rows)]


# -- HTML -----------------------------------------------------------------------------------------------


def esc(text: object) -> str:
    """Text or an attribute value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def script_json(data: Any) -> str:
    """JSON that cannot end its <script> element early, whatever strings it holds."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
