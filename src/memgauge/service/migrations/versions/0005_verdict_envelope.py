"""stored verdicts in the records' envelope: ``submissions.verdict_json`` written before it (no
``format``) gets the header ``{"format": "memgauge-verdict", "version": 2}``; its fields were
already version 2's

Revision ID: 0005_verdict_envelope
Revises: 0004_machines
Create Date: 2026-12-06
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0005_verdict_envelope"
down_revision = "0004_machines"
branch_labels = None
depends_on = None

# spelled out, not imported: a migration stays what it was when later code changes
HEADER = {"format": "memgauge-verdict", "version": 2}
_SUBMISSIONS = sa.table("submissions", sa.column("id", sa.String), sa.column("verdict_json", sa.Text))


def _rewrite(change: str) -> None:
    conn = op.get_bind()
    t = _SUBMISSIONS
    rows = conn.execute(sa.select(t.c.id, t.c.verdict_json).where(t.c.verdict_json.is_not(None))).all()
    for sub_id, text in rows:
        try:
            data = json.loads(text)
        except ValueError:
            continue  # not a verdict (the pages show such a row without one): left as it is
        if not isinstance(data, dict):
            continue
        fields = {k: v for k, v in data.items() if k not in HEADER}
        new = {**HEADER, **fields} if change == "up" else fields
        if new != data:
            conn.execute(t.update().where(t.c.id == sub_id).values(verdict_json=json.dumps(new)))


def upgrade() -> None:
    _rewrite("up")


def downgrade() -> None:
    _rewrite("down")
