"""machines as a resource: ``machines``, a policy's ``machine`` and admission ``rule``, and each
submission's admission to its machine (``machine``, ``admit_rule``, ``admission``, ``share_bytes``,
``held``, ``released_at``)

Revision ID: 0004_machines
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_machines"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "machines",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("memory_bytes", sa.BigInteger(), nullable=False),
        sa.Column("cores", sa.Integer(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    # existing policies name no machine and would judge by the worst case
    with op.batch_alter_table("policies") as batch:
        batch.add_column(sa.Column("machine", sa.String(100), nullable=True))
        batch.add_column(sa.Column("rule", sa.String(10), nullable=False, server_default="worst"))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("machine", sa.String(100), nullable=True))
        batch.add_column(sa.Column("admit_rule", sa.String(10), nullable=True))
        batch.add_column(sa.Column("admission", sa.Text(), nullable=True))
        batch.add_column(sa.Column("share_bytes", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("held", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("released_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_submissions_machine_held", "submissions", ["machine", "held"])


def downgrade() -> None:
    op.drop_index("ix_submissions_machine_held", table_name="submissions")
    with op.batch_alter_table("submissions") as batch:
        for column in ("released_at", "held", "share_bytes", "admission", "admit_rule", "machine"):
            batch.drop_column(column)
    with op.batch_alter_table("policies") as batch:
        batch.drop_column("rule")
        batch.drop_column("machine")
    op.drop_table("machines")
