"""What every renderer of a profile is: one method, ``render(profile) -> str``."""

from __future__ import annotations

from typing import Protocol

from memgauge.model import Profile


class Renderer(Protocol):
    def render(self, profile: Profile) -> str: ...
