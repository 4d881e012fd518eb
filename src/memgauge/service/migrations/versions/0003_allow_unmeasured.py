"""policies that accept unmeasured limits: ``policies.allow_unmeasured``, ``submissions.allow_unmeasured``

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # existing rows: an unmeasured limit is not a pass, the rule from this revision on
    for table in ("policies", "submissions"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("allow_unmeasured", sa.Boolean(), nullable=False, server_default=sa.false())
            )


def downgrade() -> None:
    for table in ("submissions", "policies"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("allow_unmeasured")
