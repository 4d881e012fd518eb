"""The web UI (placeholder until the UI lands)."""

from __future__ import annotations

from fastapi import APIRouter

ui_router = APIRouter(include_in_schema=False)
