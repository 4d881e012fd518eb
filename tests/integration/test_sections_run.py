"""A section's "watch" part, run by ``memgauge run`` in a real child process: a toy section outside
memgauge, registered before the command runs, watches the program while it runs and assembles what
it saw into the run's profile; the runner names no section."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TOY_WATCH = """
import os
import threading

SOURCE = "toy-polls"
UNSEEN = "the toy saw nothing"


class Polls:
    def __init__(self, pid):
        self.pid, self.sizes, self.done = pid, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(0.01):
            try:
                with open(f"/proc/{self.pid}/statm") as f:
                    self.sizes.append(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
            except OSError:
                return

    def stop(self):
        self.done.set()
        self.thread.join()
        return {"pid": self.pid, "largest": max(self.sizes, default=0)}


def start(pid):
    return "no toys here" if os.environ.get("TOY_OFF") else Polls(pid)
"""

TOY_ASSEMBLE = """
def assemble(run):
    seen = run.watched["toy"].seen
    run.measurement["toy"] = f"pid {seen['pid']} polled, largest {seen['largest'] >> 20} MiB"
"""

DRIVER = """
import sys
from memgauge import sections
from memgauge.cli import main

sys.path.insert(0, sys.argv[1])
sections.SECTIONS.append(sections.SectionSpec(
    "toy", "", (), {"watch": "_watch:", "assemble": "_assemble:assemble"},
    package="toy_section", sources=("toy-polls",),
))
sys.exit(main(sys.argv[2:]))
"""


def _run(tmp_path: Path, **env: str) -> dict[str, str]:
    package = tmp_path / "toy_section"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "_watch.py").write_text(TOY_WATCH)
    (package / "_assemble.py").write_text(TOY_ASSEMBLE)
    script = tmp_path / "grow.py"
    script.write_text("import time\nblock = bytearray(200 << 20)\ntime.sleep(0.3)\n")
    out = tmp_path / "p.json"
    argv = ["run", "-q", "--json", str(out), str(script)]
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path), *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    measurement: dict[str, str] = json.loads(out.read_text())["environment"]["measurement"]
    return measurement


def test_a_sections_watch_runs_beside_the_program_and_its_part_assembles_what_it_saw(
    tmp_path: Path,
) -> None:
    measurement = _run(tmp_path)
    pid, largest = measurement["toy"].split(" polled, largest ")
    assert pid.startswith("pid ") and int(pid[4:]) > 0
    assert 200 <= int(largest.removesuffix(" MiB")) < 260  # the program's 200 MiB, seen from outside
    # the GPU section's watch ran too, by the same registry
    assert measurement["gpu"]


def test_a_watch_that_could_not_start_says_why_and_its_section_does_not_assemble(tmp_path: Path) -> None:
    measurement = _run(tmp_path, TOY_OFF="1")
    assert measurement["toy"] == "no toys here"
