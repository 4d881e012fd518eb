"""Renderers: one method, ``render(profile) -> str``."""

from memgauge.render._base import Renderer
from memgauge.render._json import JsonRenderer
from memgauge.render._terminal import TerminalRenderer

__all__ = ["JsonRenderer", "Renderer", "TerminalRenderer"]
