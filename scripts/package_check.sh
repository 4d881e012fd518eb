#!/usr/bin/env bash
# Builds memgauge's wheel and sdist (python -m build) and checks them as a user gets them: the wheel
# installed alone into a fresh venv of PYTHON (no dev dependencies) runs `memgauge run` on the
# bundled example, and the sdist installs with every integration (`memgauge[all]`) on python3.
# Usage: bash scripts/package_check.sh [PYTHON [WORKDIR]]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
WORK=$(realpath -m "${2:-build/package-check}")
PIP=(-m pip install -q --disable-pip-version-check)
rm -rf "$WORK" && mkdir -p "$WORK"
python3 -m venv "$WORK/build-env"
"$WORK/build-env/bin/python" "${PIP[@]}" build
"$WORK/build-env/bin/python" -m build --outdir "$WORK/dist" . >"$WORK/build.log"
wheel=$(ls "$WORK"/dist/memgauge-*.whl)
sdist=$(ls "$WORK"/dist/memgauge-*.tar.gz)
echo "built: $(basename "$wheel") $(basename "$sdist")"

# the wheel alone: memgauge's own dependencies, nothing of the dev extra
"$PY" -m venv "$WORK/wheel-env"
"$WORK/wheel-env/bin/python" "${PIP[@]}" "$wheel"
if "$WORK/wheel-env/bin/python" -c "import pytest" 2>/dev/null; then
    echo "the wheel's venv has pytest: a dev dependency leaked into the install" >&2
    exit 1
fi
# from a directory outside the clone, so that the installed package is the one imported
(cd "$WORK" && "$WORK/wheel-env/bin/memgauge" run -q --json example.json "$OLDPWD/examples/pipeline.py")
"$WORK/wheel-env/bin/python" - "$WORK/example.json" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
assert profile["exit"]["code"] == 0, profile["exit"]
assert profile["peak"]["resident_bytes"] > 50 * 2**20, profile["peak"]
print("wheel: memgauge run on examples/pipeline.py:", profile["peak"]["resident_bytes"] >> 20, "MiB peak")
PY

# the sdist with every integration
python3 -m venv "$WORK/all-env"
"$WORK/all-env/bin/python" "${PIP[@]}" "memgauge[all] @ file://$sdist"
"$WORK/all-env/bin/python" -c "import memray, pynvml, tensorboard, ray, fastapi, IPython, memgauge; print('sdist[all]: memgauge', memgauge.__version__)"
