"""Choosing an engine by name: the local process pool, or Ray (loaded only when asked for)."""

from __future__ import annotations

from memgauge._errors import UsageError
from memgauge.sweep._engine import Engine, LocalEngine


def make_engine(name: str, *, concurrency: int | None = None, address: str | None = None) -> Engine:
    """The engine ``--engine NAME`` asks for."""
    if name == "local":
        if address is not None:
            raise UsageError("--address is for --engine ray")
        return LocalEngine(1 if concurrency is None else concurrency)
    if name == "ray":
        from memgauge.sweep._ray import RayEngine

        return RayEngine(address=address, concurrency=concurrency)
    raise UsageError(f"unknown engine {name!r} (local or ray)")
