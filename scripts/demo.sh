#!/usr/bin/env bash
# Installs memgauge into .venv (created if missing) and profiles the bundled example pipeline.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/memgauge run --json memgauge-demo.json examples/pipeline.py "$@"
