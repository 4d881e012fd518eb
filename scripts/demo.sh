#!/usr/bin/env bash
# Installs memgauge into .venv (created if missing) and profiles the bundled example pipeline:
# the report on stderr, the profile in memgauge-demo.json, the HTML report in memgauge-demo.html.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/memgauge run --json memgauge-demo.json --html memgauge-demo.html examples/pipeline.py "$@"
