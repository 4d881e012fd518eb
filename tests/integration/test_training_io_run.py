"""I/O by phase and by process from a real ``memgauge run``: a program whose phases write and read
known byte counts (and one that does no I/O at all), and a child process with no loop record of its
own that writes a known count, seen by the watcher's reads of its ``/proc/PID/io``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from memgauge.capture import parse_io
from memgauge.model import Profile
from memgauge.render import MarkdownRenderer, TerminalRenderer
from tests.conftest import run_memgauge

WRITE, READ, CHILD = 3 << 20, 2 << 20, 5 << 20

PROGRAM = f"""
import os, subprocess, sys, time
import memgauge

with memgauge.phase("save"):
    with open("blob.bin", "wb") as f:
        f.write(b"x" * {WRITE})
with memgauge.phase("idle"):
    time.sleep(0.05)
with memgauge.phase("load"):
    with open("blob.bin", "rb") as f:
        data = f.read({READ})
# a child with no loop record: it writes, then lingers so that the watcher reads its counters
child = "import os, time; os.write(os.open(os.devnull, os.O_WRONLY), b'y' * {CHILD}); time.sleep(0.6)"
subprocess.run([sys.executable, "-c", child], check=True)
for _ in range(3):
    memgauge.step()
"""

SLACK = 64 << 10  # memgauge's own few writes (phase events of nested phases) and other threads'


def test_phases_and_processes_carry_the_bytes_they_read_and_wrote(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    r = run_memgauge(["-q", "--no-lines", "prog.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    phase_schema = {"$ref": "#/$defs/phase", "$defs": schema["$defs"]}
    for p in r.profile["phases"]:
        jsonschema.Draft202012Validator(phase_schema).validate(p)
    phases = {p["name"]: p for p in r.profile["phases"]}
    assert WRITE <= phases["save"]["wchar"] <= WRITE + SLACK
    assert phases["save"]["rchar"] <= SLACK
    assert READ <= phases["load"]["rchar"] <= READ + SLACK
    assert phases["load"]["wchar"] <= SLACK
    # a phase that does no I/O reads 0: its own reads of /proc/self/io are taken out
    assert (phases["idle"]["rchar"], phases["idle"]["wchar"]) == (0, 0)
    profile = Profile.from_dict(r.profile)
    assert profile.to_dict()["phases"] == r.profile["phases"]
    terminal = TerminalRenderer(width=160).render(profile)
    assert "I/O by phase" in terminal and "3.0 MiB" in terminal
    assert "I/O by phase" in MarkdownRenderer().render(profile)
    # the child, which wrote no loop record, has the watcher's last read of its counters
    training = r.profile["training"]
    # (`python -c ...`: the interpreter's path may hold "-c" too, /tmp/ci-check/.venv/bin/python)
    (child,) = [p for p in training["processes"] if p["command"].split()[1:2] == ["-c"]]
    assert CHILD <= child["wchar"] <= CHILD + SLACK
    assert child["written_per_second"] is not None and child["written_per_second"] > CHILD / 10
    (series,) = [s for s in training["cpu"]["processes"] if s["pid"] == child["pid"]]
    assert series["wchar"] == child["wchar"] and max(series["written_per_second"]) > 0


def test_proc_io_parses_and_an_unreadable_one_is_none() -> None:
    raw = Path("/proc/self/io").read_bytes()
    counters = parse_io(raw)
    assert counters is not None and all(v >= 0 for v in counters)
    assert parse_io(None) is None and parse_io(b"rchar: 1\n") is None
