"""What the framework matrix's tests share (tests/integration/test_frameworks_*.py): a program run
plain and under ``memgauge run``, its output and exit code compared, and its last JSON line read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import Result, run_memgauge

# no downloads, no telemetry, no progress bars timing themselves into the output
QUIET = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DISABLE_TQDM": "1",
    "TQDM_DISABLE": "1",
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
}


@dataclass
class Pair:
    plain: subprocess.CompletedProcess[str]
    measured: Result

    @property
    def truth(self) -> dict[str, Any]:
        """The program's own figures: the last stdout line that is a JSON object (of the measured run)."""
        for line in reversed(self.measured.stdout.splitlines()):
            if line.startswith("{"):
                loaded: dict[str, Any] = json.loads(line)
                return loaded
        raise AssertionError(f"no JSON line in the program's output: {self.measured.stdout[-2000:]}")


def run_pair(tmp_path: Path, source: str, *, env: dict[str, str] | None = None, timeout: float = 600) -> Pair:
    """``source`` run plain, then under ``memgauge run -q``, in ``tmp_path``."""
    (tmp_path / "prog.py").write_text(source)
    full = {**os.environ, **QUIET, **(env or {})}
    plain = subprocess.run(
        [sys.executable, "prog.py"], capture_output=True, text=True, env=full, cwd=tmp_path, timeout=timeout
    )
    measured = run_memgauge(
        ["-q", "--no-lines", "prog.py"], tmp_path, env={**QUIET, **(env or {})}, timeout=timeout
    )
    return Pair(plain, measured)


def same_behaviour(pair: Pair, *, volatile: tuple[str, ...] = ()) -> None:
    """The program's stdout, stderr and exit code are the same under memgauge as plain (lines
    holding any of ``volatile``, a program's own timings, left out of the comparison)."""

    def kept(text: str) -> list[str]:
        return [line for line in text.splitlines() if not any(v in line for v in volatile)]

    assert pair.plain.returncode == 0, pair.plain.stderr[-3000:]
    assert pair.measured.returncode == pair.plain.returncode, pair.measured.stderr[-3000:]
    assert kept(pair.measured.stdout) == kept(pair.plain.stdout)
    assert kept(pair.measured.stderr) == kept(pair.plain.stderr)


def rate_of_program(training: dict[str, Any], ends: list[float]) -> float:
    """Steps per second by the program's own clock (``ends``: its time at each step's end, from a
    framework callback) over the steps memgauge calls steady, so that both rates cover one span."""
    steady = [r["index"] for r in training["rows"] if not r["warmup"] and not r["flops_counted"]]
    assert steady and steady[0] > 0 and len(ends) == training["steps"], (len(ends), training["steps"])
    return len(steady) / sum(ends[i] - ends[i - 1] for i in steady)


def assert_steps_roles_flops(pair: Pair, steps: int, batch: int) -> None:
    """The matrix's common claims on a measured run whose program printed its own truth: every step
    counted with its batch, the rate within 2% of the program's own clock, the roles exact and the
    FLOPs within 2% of FlopCounterMode's."""
    truth = pair.truth
    assert pair.measured.profile is not None
    training, torch = pair.measured.profile["training"], pair.measured.profile["torch"]
    assert training["steps"] == steps
    assert [r["samples"] for r in training["rows"]] == [batch] * steps
    own = rate_of_program(training, truth["ends"])
    assert abs(training["steps_per_second"] - own) <= 0.02 * own, (training["steps_per_second"], own)
    assert torch["max_by_role"]["parameters"] == truth["parameters"]
    assert torch["max_by_role"]["gradients"] == truth["parameters"]
    assert torch["max_by_role"]["optimizer_state"] == truth["state"]
    assert abs(training["flops_per_step"] - truth["flops"]) <= 0.02 * truth["flops"]
