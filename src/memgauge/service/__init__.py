"""The validation service: accepts programs over HTTP, runs each sandboxed under memgauge, judges
it against a policy, keeps everything in a database (SQLite, or PostgreSQL when shared).

Needs ``memgauge[service]``. Layout: ``_settings`` (what a server is configured with), ``_models``
and ``migrations/`` (the schema), ``_db`` (connecting, migrating), ``_auth`` (token secrets),
``_store`` (reads and writes), ``_dispatch`` (the queue, through the sweep's engines), ``_judge`` (a
run's verdict, stored and read back), ``_rules`` (the validation and access rules the API and the
UI share), ``_schemas`` (the API's documents), ``_api/`` (HTTP), ``_ui/`` (web pages), ``_app`` (the
app), ``_front`` (the connections the server keeps: header deadline, limit per client, idle ones
making room for working ones).
"""

from __future__ import annotations

from memgauge.service._app import create_app, prepare_data_dir
from memgauge.service._db import database_url, open_database
from memgauge.service._front import FrontLimits, run_server
from memgauge.service._settings import Settings

__all__ = [
    "FrontLimits",
    "Settings",
    "create_app",
    "database_url",
    "open_database",
    "prepare_data_dir",
    "run_server",
]
