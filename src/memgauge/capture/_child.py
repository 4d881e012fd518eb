"""Bootstrap of the measured Python process: ``python -m memgauge.capture._child script|module T ARGS``.

It makes the program see what it would see run directly (``sys.argv``, ``sys.path[0]``,
``__main__``), reports problems that are the user's input rather than the program's (an unknown
module) to the runner as events, and at exit reports the process's exact ``VmHWM`` and the versions
of the libraries it imported. It imports as little as it can: everything here is measured too.
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys
import time
import types

from memgauge.capture import _procfs
from memgauge.capture._events import BOOTSTRAP_FAILED, ENV_EVENTS_DIR, EventWriter

_OWN_FILES = frozenset({__file__, runpy.__file__ or "", "<frozen runpy>"})


def _report_exit(writer: EventWriter) -> None:
    from memgauge.capture import _phases
    from memgauge.capture._environment import program_environment

    tracker = _phases.active_tracker()
    hwm = _procfs.read_high_water("self") or 0
    if tracker is not None:
        hwm = max(hwm, tracker.process_peak)
    writer.write(
        {
            "ev": "exit",
            "t": time.monotonic(),
            "hwm": hwm,
            "cmdline": _procfs.read_cmdline(os.getpid()),
            "env": program_environment(),
        }
    )


def _trim_traceback() -> None:
    """Drop the bootstrap's and runpy's frames from uncaught tracebacks, so they read as if the
    program had been run directly."""
    original = sys.excepthook

    def excepthook(t: type[BaseException], e: BaseException, tb: types.TracebackType | None) -> None:
        while tb is not None and tb.tb_frame.f_code.co_filename in _OWN_FILES:
            tb = tb.tb_next
        original(t, e, tb)

    sys.excepthook = excepthook


def main(argv: list[str]) -> None:
    kind, target, *args = argv
    directory = os.environ.get(ENV_EVENTS_DIR, "")
    writer = EventWriter(directory) if directory else None
    if writer is not None:
        atexit.register(_report_exit, writer)
    _trim_traceback()
    if kind == "module":
        import importlib.util

        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError) as e:
            spec, error = None, f"{type(e).__name__}: {e}"
        else:
            error = f"No module named {target!r}"
        if spec is None:
            if writer is not None:
                writer.write(
                    {"ev": "error", "t": time.monotonic(), "kind": "module_not_found", "message": error}
                )
                atexit.unregister(_report_exit)
            else:
                sys.stderr.write(f"memgauge: error: {error}\n")
            sys.exit(BOOTSTRAP_FAILED)
        sys.argv = [spec.origin or target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
