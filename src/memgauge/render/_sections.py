"""The report's sections built on the document (``_document``), in report order: the terminal,
Markdown and HTML reports of a run render these, one after the other, at the same place. A new
section is a function from a ``Profile`` to a ``Section`` registered here; a section folder's
(``memgauge.sections``) come first, from its "report" part, in the sections' order."""

from __future__ import annotations

from memgauge.render._document import Entry, Registry
from memgauge.sections import SECTIONS as FOLDERS


def _folders() -> list[Entry]:
    return [Entry(id, nav, build) for spec in FOLDERS for id, nav, build in spec.part("report") or ()]


SECTIONS = Registry(_folders)
