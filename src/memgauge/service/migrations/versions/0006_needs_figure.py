"""one memory figure: ``submissions.peak_rss_bytes`` is what the run's container needs, the figure
its verdict's rss limit judged (the stored profile's ``peak.needs_bytes``, its resident peak where
that is 0); rows judged before held the resident peak, and get the stored profile's figure

Revision ID: 0006_needs_figure
Revises: 0005_verdict_envelope
Create Date: 2026-12-06
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0006_needs_figure"
down_revision = "0005_verdict_envelope"
branch_labels = None
depends_on = None

_SUBMISSIONS = sa.table(
    "submissions",
    sa.column("id", sa.String),
    sa.column("profile", sa.Text),
    sa.column("peak_rss_bytes", sa.BigInteger),
)


def _rewrite(key: str) -> None:
    """``peak_rss_bytes`` from each stored profile: ``key`` ``needs_bytes`` (falling back to the
    resident peak) or ``resident_bytes``."""
    conn = op.get_bind()
    t = _SUBMISSIONS
    rows = conn.execute(
        sa.select(t.c.id, t.c.profile, t.c.peak_rss_bytes).where(t.c.profile.is_not(None))
    ).all()
    for sub_id, text, stored in rows:
        try:
            peak = json.loads(text)["peak"]
            figure = int(peak.get(key) or peak["resident_bytes"])
        except (ValueError, KeyError, TypeError):
            continue  # a profile this cannot read keeps its figure
        if figure != stored:
            conn.execute(t.update().where(t.c.id == sub_id).values(peak_rss_bytes=figure))


def upgrade() -> None:
    _rewrite("needs_bytes")


def downgrade() -> None:
    _rewrite("resident_bytes")
