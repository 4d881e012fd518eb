"""policies that prove a pass: ``policies.prove``, ``submissions.prove`` and ``submissions.proof``

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # existing rows: policies and submissions that never asked for a proof
    with op.batch_alter_table("policies") as batch:
        batch.add_column(sa.Column("prove", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("prove", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("proof", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("proof")
        batch.drop_column("prove")
    with op.batch_alter_table("policies") as batch:
        batch.drop_column("prove")
