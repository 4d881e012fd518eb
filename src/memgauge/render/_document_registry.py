"""The registry of a run's report sections (``_sections.SECTIONS``): each entry an anchor, a nav
label and a builder from a ``Profile`` to a document ``Section``, in report order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile
    from memgauge.render._document import Section

Build = Callable[["Profile"], "Section | None"]


@dataclass(frozen=True)
class Entry:
    """A registered section: its anchor, its link in the page's nav (None: no link), its builder."""

    id: str
    nav: str | None
    build: Build


class Registry:
    """The report's sections, in report order; every format renders them from here. ``first``
    gives the entries that come before those registered here, read at each report (the section
    folders' report parts: a section registered in ``memgauge.sections`` is in the next report)."""

    def __init__(self, first: Callable[[Profile | None], list[Entry]] | None = None) -> None:
        self._entries: list[Entry] = []
        self._first = first or (lambda _: [])

    def entries(self, profile: Profile | None = None) -> list[Entry]:
        """Every entry; given a ``profile``, ``first`` may leave out those with nothing to say
        about it (a section folder's, without importing its builders)."""
        return [*self._first(profile), *self._entries]

    def register(self, id: str, nav: str | None, build: Build) -> None:
        if any(e.id == id for e in self.entries()):
            raise ValueError(f"two sections with the id {id!r}")
        self._entries.append(Entry(id, nav, build))

    def remove(self, id: str) -> None:
        self._entries = [e for e in self._entries if e.id != id]

    @contextmanager
    def extra(self, id: str, nav: str | None, build: Build) -> Iterator[None]:
        """A section registered for the duration of the block (a plugin's, a test's)."""
        self.register(id, nav, build)
        try:
            yield
        finally:
            self.remove(id)

    def built(self, profile: Profile) -> list[tuple[Entry, Section]]:
        """Each section with something to say about ``profile``, in order."""
        out = []
        for entry in self.entries(profile):
            section = entry.build(profile)
            if section is not None and section.blocks:
                out.append((entry, section))
        return out
