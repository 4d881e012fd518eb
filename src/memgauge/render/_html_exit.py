"""The HTML report's section on what a run still held when it ended: the lines whose growth was
still resident at exit, and the leak note (a run too short to judge growth). The terminal and
Markdown reports show the same rows under the same title (``_text.exit_title``)."""

from __future__ import annotations

from memgauge.render._format import esc
from memgauge.render._html_page import Part, code, nbytes, table, text
from memgauge.render._html_tables import ProfileView
from memgauge.render._text import exit_title


def held_at_exit(v: ProfileView) -> Part | None:
    p = v.profile
    # both absent from profiles without line samples: their pages are unchanged
    if not p.held_at_exit and not p.leak_note:
        return None
    parts = []
    if p.held_at_exit:
        body = [
            [nbytes(h.bytes), text(h.pid), code(v.where(h.file, h.line)), code(h.source)]
            for h in p.held_at_exit[: v.max_lines]
        ]
        headers = [("held", True), ("pid", True), ("line", False), ("source", False)]
        parts.append(table(headers, body))
    if p.leak_note:
        parts.append(f'<p class="bad">note: {esc(p.leak_note)}</p>')
    return Part(
        "".join(parts),
        exit_title(p),
        "Lines whose growth was still resident when the run ended: what a script keeps until exit, "
        "whether or not it grew long enough to be judged a leak.",
    )
