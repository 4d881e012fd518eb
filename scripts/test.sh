#!/usr/bin/env bash
# Installs memgauge with its test tools into .venv (created if missing) and runs lint, types and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# torch tests (a peak made of CPU tensors) run where torch is installed; CI installs the CPU build
if [ "${MEMGAUGE_TEST_TORCH:-0}" = 1 ]; then
    # with the framework matrix's libraries, in one resolve so that they keep the pinned torch
    .venv/bin/python -m pip install -q --disable-pip-version-check "torch==${MEMGAUGE_TORCH_VERSION:-2.13.0}" \
        -e '.[frameworks]'
fi
.venv/bin/ruff check src tests bench examples scripts
.venv/bin/ruff format --check src tests bench examples scripts
.venv/bin/mypy
# in this process, or on MEMGAUGE_TEST_WORKERS workers: a test that measures then runs alone
# (tests/_turns.py), the service's, the reports' and the pages' tests beside each other
.venv/bin/python -m pytest -n "${MEMGAUGE_TEST_WORKERS:-0}" --dist loadfile --no-loadscope-reorder "$@"
