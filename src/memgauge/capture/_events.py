"""Events from measured processes to the runner: the writer, and the names of the environment.

Each process appends JSON lines to its own file ``events.<pid>.jsonl`` in the directory named by
``MEMGAUGE_EVENTS_DIR``, in the wire format (``_wire``). One ``os.write`` per event on an
``O_APPEND`` descriptor: nothing is buffered in the process, so a process killed by SIGKILL or the
OOM killer loses no event it wrote. A forked child notices its new pid and opens its own file.
``_events_read`` reads them back.
"""

from __future__ import annotations

import os

from memgauge.capture._wire import EVENTS, VERSION, WIRE_VERSION, file_name

try:  # the C encoder json itself uses, imported before the program runs (it cannot shadow it)
    import _json
except ImportError:  # an interpreter without json's accelerator
    _json = None  # type: ignore[assignment]

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# the measured Python process runs `python BOOTSTRAP_FILE script|module TARGET ARGS` (``_launch``):
# a file, not `python -m BOOTSTRAP_MODULE`, whose runpy (with importlib.util, contextlib,
# collections and functools) every run paid (~4 ms) and the program found loaded, which python
# running it directly does not
BOOTSTRAP_MODULE = "memgauge.capture._child"
BOOTSTRAP_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_launch.py")
# the folder holding the sitecustomize that starts capture in every Python process of a run
AUTOSTART_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_autostart")
# exit code of the bootstrap when it reported a problem with the user's input as an event
BOOTSTRAP_FAILED = 249


def bootstrap_args(argv: list[str]) -> list[str] | None:
    """What follows memgauge's bootstrap on a Python command line (``script|module TARGET ARGS``),
    or None where ``argv`` does not run it (as a file, or as ``-m BOOTSTRAP_MODULE``)."""
    if len(argv) >= 2 and argv[1].endswith(os.path.join("memgauge", "capture", "_launch.py")):
        return argv[2:]
    if argv[1:3] == ["-m", BOOTSTRAP_MODULE]:
        return argv[3:]
    return None


class EventWriter:
    """Never raises into the measured program: once the directory is gone (memgauge ended before a
    daemon the program left, a full disk), the writer turns itself off."""

    def __init__(self, directory: str) -> None:
        self._dir = directory
        self._pid = -1
        self._fd = -1
        self.broken = False

    def write(self, event: dict[str, Any]) -> None:
        if self.broken:
            return
        try:
            pid = os.getpid()
            if pid != self._pid:
                self._pid = pid
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                self._fd = os.open(os.path.join(self._dir, file_name(EVENTS, pid)), flags, 0o600)
            event[VERSION] = WIRE_VERSION
            event["pid"] = pid
            os.write(self._fd, (to_json(event) + "\n").encode())
        except (OSError, ValueError, TypeError):
            self.broken = True


def to_json(value: object) -> str:
    """``value`` as compact JSON text, as ``json.dumps(value, separators=(",", ":"))`` writes it,
    made by json's own C encoder: importing json loads ``re`` and ``enum``, ~5 ms of every measured
    process and modules its program would not find loaded if run directly."""
    if _json is None:
        import json

        return json.dumps(value, separators=(",", ":"))

    def unknown(o: object) -> object:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    # markers (a cycle is an error, not a recursion), indent, separators, sort_keys, skipkeys, NaN
    ascii_str = _json.encode_basestring_ascii
    encode = _json.make_encoder({}, unknown, ascii_str, None, ":", ",", False, False, True)
    return "".join(encode(value, 0))
