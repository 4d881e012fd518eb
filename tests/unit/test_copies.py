"""Copies across devices: the decision (``copy_direction``) over every pair of device kinds, the
per-step and per-line bookkeeping (``Copies``), the torch hooks on real CPU and ``meta`` tensors in
this process (installed on a private list and taken off again), and the analysis of a loop's rows
(``summarize_copies``, ``data_movement_figures``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from memgauge.capture._wire import TRAINING, record_writer
from memgauge.model import CaptureWarning
from memgauge.sections.training import (
    Training,
    TrainingStep,
    data_movement_figures,
    read_training,
    sent_rates,
    summarize_copies,
)
from memgauge.sections.training._capture import Loop
from memgauge.sections.training._capture_copies import (
    D2D,
    D2H,
    DIRECTIONS,
    H2D,
    MAX_LINES,
    Copies,
    copy_direction,
)

DEVICES = ["cpu", "cuda", "cuda:0", "cuda:1", "meta", "mps", "xpu:0"]


def expected(source: str, destination: str) -> int | None:
    """The rule, written out independently of the implementation."""
    kind_s, _, index_s = source.partition(":")
    kind_d, _, index_d = destination.partition(":")
    same = kind_s == kind_d and (kind_s == "cpu" or not index_s or not index_d or index_s == index_d)
    if same:
        return None
    if kind_s == "cpu":
        return H2D
    if kind_d == "cpu":
        return D2H
    return D2D


@pytest.mark.parametrize(("source", "destination"), list(itertools.product(DEVICES, DEVICES)))
def test_copy_direction_over_every_pair(source: str, destination: str) -> None:
    assert copy_direction(source, destination) == expected(source, destination)


def test_copy_direction_named_cases() -> None:
    assert copy_direction("cpu", "cpu") is None
    assert copy_direction("cuda:0", "cuda:0") is None
    assert copy_direction("cuda", "cuda:0") is None  # one device, named two ways
    assert copy_direction("cpu", "cuda:0") == H2D
    assert copy_direction("cuda:0", "cpu") == D2H
    assert copy_direction("cuda:0", "cuda:1") == D2D
    assert copy_direction("cpu", "meta") == H2D
    assert DIRECTIONS[H2D] == "h2d"


def test_copies_per_step_and_by_line() -> None:
    c = Copies()
    assert c.add("cpu", "cuda:0", 100, "a.py:1")
    assert c.add("cpu", "cuda:0", 100, "a.py:1")
    assert not c.add("cpu", "cpu", 999, "a.py:2")  # within one device: nothing
    assert c.add("cuda:0", "cpu", 7, "a.py:3")
    c.end_step(True)
    assert c.add("cuda:0", "cuda:1", 5, "a.py:4")
    c.end_step(True)
    c.end_step(False)  # a step past the kept rows
    record = c.record()
    assert record["steps"] == [[200, 7, 0], [0, 0, 5]]
    assert c.dropped == 1
    assert record["total"] == {"h2d": 200, "d2h": 7, "d2d": 5}
    assert record["count"] == {"h2d": 2, "d2h": 1, "d2d": 1}
    assert record["lines"][0] == ["a.py:1", "h2d", 200, 2]
    assert {tuple(r[:2]) for r in record["lines"]} == {
        ("a.py:1", "h2d"),
        ("a.py:3", "d2h"),
        ("a.py:4", "d2d"),
    }


def test_lines_past_the_limit_are_summed_under_no_line() -> None:
    c = Copies()
    for i in range(MAX_LINES + 5):
        c.add("cpu", "cuda:0", 1, f"x.py:{i}")
    assert len(c.lines) == MAX_LINES + 1
    assert c.lines[("", H2D)] == [5, 5]
    assert c.total[H2D] == MAX_LINES + 5


def test_hooks_count_real_copies_to_meta_and_not_within_the_cpu() -> None:
    torch: Any = pytest.importorskip("torch")
    from memgauge.sections.training._capture_copies_torch import wrap_copies

    c = Copies()
    wrapped: list[tuple[Any, str, Any]] = []
    wrap_copies(lambda: c, lambda: "here", wrapped)
    try:
        x = torch.randn(16, 8)  # 512 bytes
        assert x.to("meta").device.type == "meta"
        assert x.to(torch.float64).dtype == torch.float64  # a dtype change, same device
        x.cpu()
        x.to("cpu")
        x.clone().copy_(x)
        torch.empty(16, 8, device="meta").copy_(x)  # cpu -> meta through copy_
        torch.empty(16, 8, dtype=torch.float16, device="meta").copy_(x)  # 256 bytes land
        y = x.to("meta", torch.float16)  # 256 bytes
        assert y.dtype == torch.float16
    finally:
        while wrapped:
            owner, name, original = wrapped.pop()
            setattr(owner, name, original)
    assert c.total == [512 + 512 + 256 + 256, 0, 0]
    assert c.counts == [4, 0, 0]
    assert c.lines == {("here", H2D): [1536, 4]}
    # taken off again: copies now count nothing
    x.to("meta")
    assert c.counts == [4, 0, 0]


def _rows(h2d: list[int], seconds: float = 0.5) -> list[TrainingStep]:
    return [
        TrainingStep(
            index=i, end_seconds=i + 1.0, seconds=seconds, h2d_bytes=n, d2h_bytes=n // 2, warmup=i == 0
        )
        for i, n in enumerate(h2d)
    ]


def test_summarize_copies_over_the_steady_steps() -> None:
    rows = _rows([999, 100, 100, 300])
    record = {
        "total": {"h2d": 1499, "d2h": 748, "d2d": 0},
        "count": {"h2d": 8, "d2h": 4, "d2d": 0},
        "steps": [],
        "lines": [["t.py:3", "h2d", 1499, 8]],
    }
    c = summarize_copies(rows, record)
    assert c is not None
    assert (c.h2d_bytes, c.d2h_bytes, c.copies) == (1499, 748, 12)
    assert c.h2d_bytes_per_step is not None and c.h2d_bytes_per_step.median == 100
    # warm-up (999) left out: 500 bytes over 1.5 s of steady steps
    assert c.h2d_bytes_per_second == pytest.approx(500 / 1.5, abs=0.001)
    assert c.d2h_bytes_per_second == pytest.approx(250 / 1.5, abs=0.001)
    assert c.lines[0].line == "t.py:3" and c.lines[0].copies == 8
    t = Training(steps=4, copies=c)
    names = [f.name for f in data_movement_figures(t)]
    assert names[:2] == ["host->device per step", "host->device bytes/s"]
    assert "copied at t.py:3" in names
    assert "device->device in the run" not in names  # none crossed between devices


def test_no_copies_no_summary() -> None:
    assert summarize_copies(_rows([0]), None) is None
    empty = {"total": {"h2d": 0}, "count": {"h2d": 0}, "steps": [[0, 0, 0]], "lines": []}
    assert summarize_copies(_rows([0]), empty) is None
    assert data_movement_figures(Training(steps=1)) == ()


def test_sent_rates() -> None:
    sent = {"count": 10, "bytes": 1000, "shared_count": 2, "shared_bytes": 8192}
    row = sent_rates(sent, 2.0)
    assert row == {
        "pickles": 10,
        "pickled_bytes": 1000,
        "pickled_bytes_per_second": 500.0,
        "shared_storages": 2,
        "shared_bytes": 8192,
        "shared_bytes_per_second": 4096.0,
    }
    assert sent_rates(sent, 0.0)["pickled_bytes_per_second"] is None
    assert sent_rates(None, 1.0) == {}


def test_the_loops_record_carries_the_copies_per_step_and_the_reader_checks_them(tmp_path: Path) -> None:
    times = iter([float(t) for t in range(100)])
    loop = Loop(clock=lambda: next(times), write=record_writer(str(tmp_path), TRAINING))
    loop.copies = Copies()
    loop.fetched(0.0, 0.5, 8)
    loop.copies.add("cpu", "cuda:0", 100, "x.py:1")
    loop.end_step("optimizer")
    loop.copies.add("cuda:0", "cpu", 4, "x.py:2")
    loop.end_step("optimizer")
    loop.end_step("optimizer")
    loop.flush()
    record = read_training(tmp_path, 0.0)
    assert record is not None
    assert [(s.h2d_bytes, s.d2h_bytes) for s in record.steps] == [(100, 0), (0, 4), (0, 0)]
    assert record.copies is not None and record.copies["total"] == {"h2d": 100, "d2h": 4, "d2d": 0}
    # a record whose copies are not one row per step is left out, with a warning naming it
    path = next(tmp_path.glob("training.*.json"))
    broken = json.loads(path.read_text())
    broken["copies"]["steps"].pop()
    path.write_text(json.dumps(broken))
    warnings: list[CaptureWarning] = []
    assert read_training(tmp_path, 0.0, warnings=warnings) is None
    assert "copies across devices: not one row per step" in warnings[0].message
