"""The profile itself, as JSON: the record, loadable again."""

from __future__ import annotations

from memgauge.model import Profile


class JsonRenderer:
    def __init__(self, indent: int | None = None) -> None:
        self.indent = indent

    def render(self, profile: Profile) -> str:
        return profile.to_json(indent=self.indent)
