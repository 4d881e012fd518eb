"""The report's sections built on the document (``_document``), in report order: the terminal,
Markdown and HTML reports of a run render these, one after the other, at the same place. A new
section is a function from a ``Profile`` to a ``Section`` registered here; a section folder's
(``memgauge.sections``) come first, from its "report" part, in the sections' order."""

from __future__ import annotations

from memgauge.model import Profile
from memgauge.render._document_registry import Entry, Registry
from memgauge.sections import SECTIONS as FOLDERS


def _folders(profile: Profile | None) -> list[Entry]:
    """The folders' report sections; for a ``profile``, only those of folders that say they may
    have something for it: most runs have no torch, GPU or training loop, and the builders of
    those sections import their analyses and records (~30 ms of a report's ~60)."""
    return [
        Entry(id, nav, build)
        for spec in FOLDERS
        if profile is None or spec.shows(profile)
        for id, nav, build in spec.part("report") or ()
    ]


SECTIONS = Registry(_folders)
