"""Golden files: exact expected output of the text renderers, in tests/golden/.

``MEMGAUGE_UPDATE_GOLDEN=1`` rewrites them, and the test then fails on purpose, so that a rewrite
can never pass unseen: review ``git diff tests/golden`` and run again."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("MEMGAUGE_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        pytest.fail(
            f"rewrote {path}: review `git diff {path}`, then run again without MEMGAUGE_UPDATE_GOLDEN",
            pytrace=False,
        )
    if not path.exists():
        pytest.fail(f"no golden file {path}: create it with MEMGAUGE_UPDATE_GOLDEN=1", pytrace=False)
    # bytes, not read_text: no newline translation may hide a difference
    expected = path.read_bytes().decode("utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"tests/golden/{name} (expected)",
                tofile=f"{name} (rendered now)",
            )
        )
        pytest.fail(
            f"{name} differs from its golden file (MEMGAUGE_UPDATE_GOLDEN=1 rewrites it):\n{diff}",
            pytrace=False,
        )


def as_another_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: str) -> None:
    """Another home directory, working directory and terminal: a golden file must not notice."""
    if os.environ.get("MEMGAUGE_UPDATE_GOLDEN") == "1":
        pytest.skip("golden files are being rewritten")
    monkeypatch.chdir(tmp_path)
    for var, value in {
        "HOME": home,
        "COLUMNS": "20",
        "LINES": "5",
        "TERM": "dumb",
        "FORCE_COLOR": "1",
        "TTY_COMPATIBLE": "1",
        "NO_COLOR": "1",
        "LANG": "C",
    }.items():
        monkeypatch.setenv(var, value)
