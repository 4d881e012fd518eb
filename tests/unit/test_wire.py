"""The wire format (``memgauge.capture._wire``): what each real writer writes, its reader reads with
no warning; a record that breaks the format is dropped with a warning naming its file, never
silently."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from memgauge.capture import _record
from memgauge.capture._child import _report_exit
from memgauge.capture._events import EventWriter
from memgauge.capture._events_read import read_events
from memgauge.capture._imports import ImportTracker
from memgauge.capture._lines_read import read_lines
from memgauge.capture._phases import ClosedPhase, EventSink, OpenPhase
from memgauge.capture._sampler import Sampler
from memgauge.capture._wire import (
    EVENT_FIELDS,
    EVENTS,
    IMPORT_ROW,
    LINES,
    WIRE_VERSION,
    event_problem,
    file_name,
    pid_of,
)
from memgauge.model import CaptureWarning


def test_file_names_round_trip_and_strangers_are_not_read() -> None:
    assert file_name(EVENTS, 42) == "events.42.jsonl" and pid_of("events.42.jsonl", EVENTS) == 42
    assert file_name(LINES, 7) == "lines.7.json" and pid_of("lines.7.json", LINES) == 7
    for name in ("lines.7.json.tmp", "lines..json", "lines.x.json", "lines.٣.json", "events.1.json"):
        assert pid_of(name, LINES) is None and pid_of(name, EVENTS) is None


def test_every_kind_of_event_the_writers_write_reads_back_without_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = EventWriter(str(tmp_path))
    sink = EventSink(writer)
    opened = OpenPhase(0, "fit", None, 0, "MainThread", 1.0, 100, 200, True)
    sink.phase_started(opened, 200)
    sink.high_water_reset(300)
    sink.phase_ended(ClosedPhase(opened, 2.0, 150, 400, True))
    _report_exit(writer)
    monkeypatch.setenv("MEMGAUGE_EVENTS_DIR", str(tmp_path))
    # the recorder looks at the environment again, and is put back as it was after the test
    monkeypatch.setattr(_record, "_writer", None)
    monkeypatch.setattr(_record, "_checked_pid", -1)
    _record.record("items", 3)
    # as the bootstrap reports an unknown module
    writer.write({"ev": "error", "t": 3.0, "kind": "module_not_found", "message": "No module named 'x'"})
    warnings: list[CaptureWarning] = []
    events = read_events(tmp_path, warnings=warnings)
    assert warnings == []
    assert sorted({e["ev"] for e in events}) == sorted(EVENT_FIELDS)
    assert {e["v"] for e in events} == {WIRE_VERSION} and {e["pid"] for e in events} == {os.getpid()}


def test_events_that_break_the_format_are_dropped_with_one_warning_per_file(tmp_path: Path) -> None:
    good = {"v": 1, "ev": "metric", "t": 1.0, "pid": 5, "name": "a", "value": 1}
    lines = [
        json.dumps(good),
        '{"v": 1, "ev": "metric", "t": 2.0, "pid"',  # a write cut short
        json.dumps({**good, "v": WIRE_VERSION + 1}),  # a version this memgauge does not read
        json.dumps({**good, "ev": "gpu"}),
        json.dumps({**good, "value": "many"}),
        "",
    ]
    (tmp_path / "events.5.jsonl").write_text("\n".join(lines))
    # written before the format carried a version: version 1's layout, read as version 1
    (tmp_path / "events.6.jsonl").write_text(json.dumps({"ev": "exit", "t": 0.5, "pid": 6, "hwm": 10}) + "\n")
    warnings: list[CaptureWarning] = []
    events = read_events(tmp_path, warnings=warnings)
    assert [(e["pid"], e["t"]) for e in events] == [(6, 0.5), (5, 1.0)]
    assert warnings == [
        CaptureWarning(
            "events.5.jsonl", "4 of its events dropped, the first at line 2: not JSON (a write cut short)"
        )
    ]


@pytest.mark.parametrize(
    ("event", "why"),
    [
        ({"v": 1, "ev": "exit", "t": 1.0, "pid": 1}, "no field 'hwm'"),
        ({"v": 1, "ev": "exit", "t": 1.0, "pid": 1, "hwm": True}, "field 'hwm' is not of type int"),
        (
            {"v": 1, "ev": "phase_end", "t": 1, "pid": 1, "id": 0, "peak": 1, "rss": 1, "exact": 1},
            "type bool",
        ),
        ({"v": "1", "ev": "exit", "t": 1.0, "pid": 1, "hwm": 1}, "wire format version '1'"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_event_problems_say_what_is_wrong(event: object, why: str) -> None:
    problem = event_problem(event)
    assert problem is not None and why in problem


def test_lines_the_sampler_and_the_import_tracker_write_read_back_without_warning(tmp_path: Path) -> None:
    sampler = Sampler(str(tmp_path))
    sampler.lines[("f.py", 3, "f")] = [0.5, 0.25, 0.1, 4096.0, 6.0]
    tracker = ImportTracker(sampler.resident, lambda: sampler.imports)
    tracker.original = __import__
    sys.modules.pop("colorsys", None)
    tracker._tracked("colorsys", "colorsys", {"__name__": "program"}, None, (), 0)
    assert len(sampler.imports) == 1 and len(sampler.imports[0]) == len(IMPORT_ROW)
    sampler.flush()
    sampler.close()
    warnings: list[CaptureWarning] = []
    data = read_lines(str(tmp_path), 0.0, warnings=warnings)
    assert warnings == []
    (line,) = [s for s in data.lines if s.file == "f.py"]
    assert (line.cpu_python_seconds, line.cpu_native_seconds, line.wait_seconds) == (0.5, 0.25, 0.1)
    assert (line.resident_growth_bytes, line.samples) == (4096, 6)
    assert [r.package for r in data.imports] == ["colorsys"]
    assert data.sampled_peaks == {os.getpid(): sampler.max_rss}


def test_a_lines_file_without_version_or_optional_fields_reads_as_version_1(tmp_path: Path) -> None:
    sampler = Sampler(str(tmp_path))
    sampler.lines[("f.py", 3, "f")] = [0.5, 0.0, 0.0, 0.0, 1.0]
    sampler.flush()
    sampler.close()
    path = tmp_path / f"lines.{os.getpid()}.json"
    data = json.loads(path.read_text())
    for name in ("v", "t_start", "interval", "lib", "retained"):
        del data[name]
    del data["peak"]["t"]
    path.write_text(json.dumps(data))
    warnings: list[CaptureWarning] = []
    assert [s.file for s in read_lines(str(tmp_path), 0.0, warnings=warnings).lines] == ["f.py"]
    assert warnings == []


def test_a_profile_keeps_at_most_50_warnings_and_counts_the_rest() -> None:
    from memgauge.runner._order import MAX_WARNINGS, capped

    many = [CaptureWarning(f"lines.{n}.json", "not JSON") for n in range(120)]
    kept = capped(many)
    assert len(kept) == MAX_WARNINGS == 50
    assert kept[:49] == many[:49]
    assert kept[-1] == CaptureWarning("", "and 71 more files that could not be used, not listed")
    assert capped(many[:50]) == many[:50]


def test_a_whole_record_written_by_two_threads_at_once_is_never_lost(tmp_path: Path) -> None:
    # the training loop's record is flushed by the main thread and by a queue's feeder thread
    # (pickling a batch): with one temporary file the second rename failed and the writer gave up
    import threading

    from memgauge.capture._wire import TRAINING, file_name, read_records, record_writer

    write = record_writer(str(tmp_path), TRAINING)
    failed: list[BaseException] = []

    def writer(n: int) -> None:
        for i in range(300):
            try:
                write({"pid": os.getpid(), "t": float(i), "steps": [[n, i]] * 50, "counters": {}})
            except BaseException as e:
                failed.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed, failed[:1]
    records, problems = read_records(str(tmp_path), TRAINING, lambda r: None)
    assert not problems and len(records) == 1 and len(records[0]["steps"]) == 50
    assert sorted(os.listdir(tmp_path)) == [file_name(TRAINING, os.getpid())]  # no temporary left
