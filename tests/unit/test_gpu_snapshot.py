"""``--gpu-snapshot``: torch's memory history replayed to its peak and charged to the user's lines,
on a handwritten snapshot in torch's shape whose answer is known; the file read back as plain data
only; and the history started in the program through a fake ``torch.cuda`` with the functions the
real one has (the real one: tests/integration/test_gpu_real.py)."""

from __future__ import annotations

import atexit
import os
import pickle
import types
from pathlib import Path
from typing import Any

import pytest

from memgauge._env import ENV_GPU_SNAPSHOT, ENV_GPU_SNAPSHOT_ENTRIES
from memgauge.cli import main
from memgauge.sections.gpu import gpu_snapshot_peak, install_snapshot, read_gpu_snapshot
from memgauge.sections.gpu._capture_snapshot import _dump

TRAIN, TORCH = "/w/train.py", "/venv/lib/python3.11/site-packages/torch/nn/functional.py"


def user(filename: str) -> bool:
    return filename.startswith("/w/")


def at(filename: str, line: int, name: str = "f") -> dict[str, Any]:
    return {"filename": filename, "line": line, "name": name}


def snapshot(*, requests: bool = True) -> dict[str, Any]:
    """Before the history: P (1000 B, train.py:3, live at the dump) and Q (300 B, freed in it)."""
    forward = [at(TORCH, 99, "linear"), at(TRAIN, 10, "forward"), at(TRAIN, 20, "<module>")]
    events = [
        {"action": "alloc", "addr": 30, "size": 2000, "frames": forward},
        {"action": "alloc", "addr": 40, "size": 500, "frames": [at(TRAIN, 11, "forward"), at(TRAIN, 20)]},
        {"action": "free_requested", "addr": 20, "size": 300, "frames": []},
        {"action": "free_completed", "addr": 20, "size": 300, "frames": []},
        {"action": "alloc", "addr": 50, "size": 100, "frames": [at(TRAIN, 12)]},
        {"action": "free_requested", "addr": 30, "size": 2000, "frames": []},
        {"action": "free_completed", "addr": 30, "size": 2000, "frames": []},
        {"action": "alloc", "addr": 60, "size": 700, "frames": []},
        {"action": "segment_alloc", "addr": 4096, "size": 2 << 20, "frames": []},
    ]
    if not requests:
        events = [e for e in events if e["action"] != "free_requested"]
    live = [(10, 1000, [at(TRAIN, 3, "<module>")]), (40, 500, []), (50, 100, []), (60, 700, [])]
    blocks = [{"address": a, "size": n, "state": "active_allocated", "frames": f} for a, n, f in live]
    blocks.append({"address": 30, "size": 2000, "state": "inactive", "frames": []})
    segment = {"device": 0, "address": 10, "total_size": 2 << 20, "blocks": blocks}
    return {"segments": [segment], "device_traces": [events, []]}


def test_the_peak_is_replayed_and_charged_to_the_first_user_frame() -> None:
    (peak,) = gpu_snapshot_peak(snapshot(), user, pid=7)
    # start: P 1000 + Q 300; +2000 +500 = 3800 after event 1, never higher after
    assert (peak.device, peak.peak_bytes, peak.at_event, peak.events, peak.before_history) == (
        0,
        3800,
        1,
        9,
        300,
    )
    got = [(a.file, a.line, a.function, a.bytes, a.stack) for a in peak.lines]
    assert got == [
        (TRAIN, 10, "forward", 2000, [f"{TRAIN}:20"]),
        (TRAIN, 3, "<module>", 1000, []),
        (TRAIN, 11, "forward", 500, [f"{TRAIN}:20"]),
        ("<before the history>", 0, "", 300, []),
    ]
    assert {a.pid for a in peak.lines} == {7}


def test_without_free_requests_the_completions_free() -> None:
    (peak,) = gpu_snapshot_peak(snapshot(requests=False), user)
    assert (peak.peak_bytes, peak.at_event, sum(a.bytes for a in peak.lines)) == (3800, 1, 3800)


def test_the_file_is_read_as_plain_data_only(tmp_path: Path) -> None:
    good, bad = tmp_path / "s.pickle", tmp_path / "evil.pickle"
    good.write_bytes(pickle.dumps(snapshot(), protocol=4))
    bad.write_bytes(pickle.dumps(types.SimpleNamespace(device_traces=[])))
    assert read_gpu_snapshot(str(good)) == snapshot()
    assert str(read_gpu_snapshot(str(bad))).startswith("unreadable (types.SimpleNamespace: not plain data)")
    assert read_gpu_snapshot(str(tmp_path / "none")) == (
        "not written (CUDA never initialised, or the process did not exit normally)"
    )


class FakeCuda:
    """torch.cuda as ``install_snapshot`` uses it: CUDA not yet initialised, calls queued."""

    def __init__(self) -> None:
        self.queued: list[Any] = []
        self.recorded: list[dict[str, Any]] = []
        self.memory = types.SimpleNamespace(_record_memory_history=lambda **kw: self.recorded.append(kw))

    def is_initialized(self) -> bool:
        return False

    def _lazy_call(self, fn: Any) -> None:
        self.queued.append(fn)


def test_the_history_starts_when_the_program_initialises_cuda(tmp_path: Path) -> None:
    cuda = FakeCuda()
    env = {ENV_GPU_SNAPSHOT: str(tmp_path / "s.pickle"), ENV_GPU_SNAPSHOT_ENTRIES: "500"}
    path = install_snapshot(types.SimpleNamespace(cuda=cuda), env)
    assert path == str(tmp_path / "s.pickle")
    assert cuda.recorded == []  # nothing before CUDA runs: memgauge never initialises it
    (start,) = cuda.queued
    start()
    assert cuda.recorded == [{"max_entries": 500, "stacks": "python"}]
    # another process of the run (it inherits the environment) writes its own file
    env["MEMGAUGE_GPU_SNAPSHOT_OWNER"] = "1"
    other = install_snapshot(types.SimpleNamespace(cuda=FakeCuda()), env)
    assert other == str(tmp_path / f"s.{os.getpid()}.pickle")
    assert install_snapshot(types.SimpleNamespace(cuda=cuda), {}) is None
    atexit.unregister(_dump)  # the dumps this test registered (no process of the run exits here)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--torch", "off", "--gpu-snapshot", "s.pickle"], "--gpu-snapshot needs the torch tracker"),
        (["--gpu-snapshot", "s.pickle", "--gpu-snapshot-entries", "0"], "must be a positive number"),
    ],
)
def test_a_snapshot_the_run_cannot_write_is_refused_before_it_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    says: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text("pass\n")
    assert main(["run", *options, "prog.py"]) == 64  # a usage error (README: exit codes)
    assert says in capsys.readouterr().err
