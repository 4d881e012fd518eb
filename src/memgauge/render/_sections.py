"""The report's sections built on the document (``_document``), in report order: the terminal,
Markdown and HTML reports of a run render these, one after the other, at the same place. A new
section is a function from a ``Profile`` to a ``Section`` registered here; a section folder's
(``memgauge.sections``) come from its "report" part, in the sections' order."""

from __future__ import annotations

from memgauge.render._document import Registry
from memgauge.sections import SECTIONS as FOLDERS

SECTIONS = Registry()
for _spec in FOLDERS:
    for _id, _nav, _build in _spec.part("report") or ():
        SECTIONS.register(_id, _nav, _build)
