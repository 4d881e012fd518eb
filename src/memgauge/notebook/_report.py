"""The inline report of ``%%mgprofile``: memgauge's HTML report, shown in the cell's output.

The report is a whole page (its own stylesheet, Chart.js and script, all inline, nothing fetched),
so it goes into an ``<iframe srcdoc>``: its styles and ids cannot clash with the notebook's or with
another report's, and its script runs as it does in a file. The output is plain HTML stored in the
notebook, so it survives saving and reopening (Jupyter shows HTML outputs of a trusted notebook,
which a notebook you ran yourself is). A one-line summary precedes it, and the text/plain part of
the output is the terminal report, for plain IPython and for viewers that show no HTML.
"""

from __future__ import annotations

import html

from memgauge._units import format_bytes, format_seconds
from memgauge.model import Profile
from memgauge.notebook._gpu import GpuPeak
from memgauge.notebook._measure import describe_method
from memgauge.render import HtmlRenderer, MarkdownRenderer

# fragment links (the report's navigation) in a srcdoc document resolve against the notebook's own
# address unless the base is about:srcdoc; with it, they scroll within the report
_BASE = '<base href="about:srcdoc">'
# shown before the script sizes the frame to its content, and the most it grows to
_HEIGHT = 720
# the script that fits the frame to the report when it has drawn (the report's script marks body
# with data-rendered); inline handlers only, so the saved notebook needs no script of its own
_FIT = (
    "var d=this.contentDocument;if(!d)return;var f=this;"
    "function fit(){f.style.height=Math.min(d.documentElement.scrollHeight+4,%d)+'px';}"
    "fit();setTimeout(fit,300);"
)


def summary(p: Profile, start_resident_bytes: int, gpu: GpuPeak | None) -> str:
    """One line: the peak, what the block added, its time, how the peak was measured."""
    added = p.peak.resident_bytes - start_resident_bytes
    parts = [
        f"peak {format_bytes(p.peak.resident_bytes)} ({format_bytes(added, signed=True)})",
        format_seconds(p.wall_seconds),
    ]
    if gpu is not None:
        parts.append(gpu.describe())
    return f"memgauge: {' · '.join(parts)} ({describe_method(p)})"


def report_page(p: Profile, cwd: str | None = None) -> str:
    """The report as a standalone page, as ``memgauge run --html`` writes it."""
    return HtmlRenderer(cwd=cwd).render(p)


def inline_bundle(
    p: Profile, start_resident_bytes: int, gpu: GpuPeak | None, cwd: str | None = None
) -> dict[str, str]:
    """The mime bundle for ``IPython.display.display(bundle, raw=True)``."""
    page = report_page(p, cwd)
    head = page.find("<head>")
    page = page[: head + 6] + _BASE + page[head + 6 :] if head >= 0 else _BASE + page
    line = summary(p, start_resident_bytes, gpu)
    frame = (
        f'<iframe class="memgauge-report" title="memgauge report" srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{_HEIGHT}px;border:1px solid #d0d7de;border-radius:4px" '
        f'onload="{html.escape(_FIT % (2 * _HEIGHT), quote=True)}"></iframe>'
    )
    return {
        "text/html": f'<div class="memgauge-inline"><p><code>{html.escape(line)}</code></p>{frame}</div>',
        "text/plain": line + "\n\n" + MarkdownRenderer(cwd=cwd).render(p),
    }


def text_bundle(
    p: Profile, start_resident_bytes: int, gpu: GpuPeak | None, cwd: str | None = None
) -> dict[str, str]:
    """The report as text: markdown, which Jupyter shows formatted and a terminal as it is.

    Not the terminal renderer's: rich, under it, recognises a Jupyter kernel and sends its output to
    the notebook itself instead of returning it as text."""
    text = summary(p, start_resident_bytes, gpu) + "\n\n" + MarkdownRenderer(cwd=cwd).render(p)
    return {"text/markdown": text, "text/plain": text}
