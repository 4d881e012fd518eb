"""Bootstrap of the measured Python process: ``python .../memgauge/capture/_launch.py script|module
T ARGS`` (``BOOTSTRAP_FILE``) calls ``main``; ``python -m memgauge.capture._child ...`` does too, but
loads runpy, importlib.util, contextlib, collections and functools before the program (~4 ms, and
modules the program would not find loaded run directly).

It makes the program see what it would see run directly (``sys.argv``, ``sys.path[0]``,
``__main__``), reports problems that are the user's input rather than the program's (an unknown
module) to the runner as events, and at exit reports the process's exact ``VmHWM`` and the versions
of the libraries it imported. It imports as little as it can: everything here is measured too.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import types

from memgauge._env import ENV_EVENTS_DIR
from memgauge.capture import _knobs, _own_cpu, _procfs, _start
from memgauge.capture._events import BOOTSTRAP_FAILED, EventWriter
from memgauge.capture._program import program_environment
from memgauge.capture._wire import EV_ERROR, EV_EXIT, MODULE_NOT_FOUND

# runpy's too, where it runs the program (a module, a directory, a zip file, a compiled script)
_RUNPY = os.path.join(os.path.dirname(os.__file__), "runpy.py")
_LAUNCH = os.path.join(os.path.dirname(__file__), "_launch.py")
_OWN_FILES = frozenset({__file__, _knobs.__file__, _LAUNCH, _RUNPY, "<frozen runpy>"})
# when the program's first line ran and its last returned (time.monotonic), and the process's CPU
# time by its first line: what memgauge's bootstrap and shutdown cost (``Profile.overhead``)
_times: dict[str, float] = {}


def _report_exit(writer: EventWriter) -> None:
    # only phases and memgauge.profile() reset VmHWM, and both load the phases' module: where it
    # is not loaded (most programs; importing it would cost every run ~3 ms) the kernel's is exact
    phases = sys.modules.get("memgauge.capture._phases")
    tracker = phases.active_tracker() if phases is not None else None
    hwm = _procfs.read_high_water("self") or 0
    if tracker is not None:
        hwm = max(hwm, tracker.process_peak)
    writer.write(
        {
            "ev": EV_EXIT,
            "t": time.monotonic(),
            "hwm": hwm,
            "cmdline": _procfs.read_cmdline(os.getpid()),
            "env": program_environment(),
            **_times,
            "own_cpu": _own_cpu.own_cpu(),
        }
    )


def _trim_traceback() -> None:
    """Drop the bootstrap's and runpy's frames from uncaught tracebacks, so they read as if the
    program had been run directly."""
    original = sys.excepthook

    def excepthook(t: type[BaseException], e: BaseException, tb: types.TracebackType | None) -> None:
        while tb is not None and tb.tb_frame.f_code.co_filename in _OWN_FILES:
            tb = tb.tb_next
        # the default hook prints e.__traceback__, not tb
        original(t, e.with_traceback(tb), tb)

    sys.excepthook = excepthook


def main(argv: list[str]) -> None:
    kind, target, *args = argv
    directory = os.environ.get(ENV_EVENTS_DIR, "")
    writer = EventWriter(directory) if directory else None
    if writer is not None:
        atexit.register(_report_exit, writer)
    _trim_traceback()
    _start.start_all()  # already done where the runner's sitecustomize ran: then a no-op
    try:
        _run(kind, target, args, writer)
    finally:
        _program_done()


def _run(kind: str, target: str, args: list[str], writer: EventWriter | None) -> None:
    if kind == "module":
        sys.path[0] = os.getcwd()  # as python -m puts it (the launcher's directory, run as a script)
        error = _missing_module(target)
        if error is not None:
            if writer is not None:
                writer.write(
                    {"ev": EV_ERROR, "t": time.monotonic(), "kind": MODULE_NOT_FOUND, "message": error}
                )
                atexit.unregister(_report_exit)
            else:
                sys.stderr.write(f"memgauge: error: {error}\n")
            sys.exit(BOOTSTRAP_FAILED)
        import runpy

        sys.argv = [target, *args]  # run_module sets argv[0] to the module's file, as python -m does
        _program_starts(_module_file(target))
        _start.kept_globals.append(runpy.run_module(target, run_name="__main__", alter_sys=True))
    else:
        path = os.path.abspath(target)  # __file__ stays valid if the program changes directory
        sys.argv = [target, *args]
        _program_starts(path)
        if os.path.isdir(path) or _is_zip(path):
            import runpy

            sys.path.pop(0)  # runpy puts the directory or zip file itself first, as python does
            _start.kept_globals.append(runpy.run_path(path, run_name="__main__"))
        else:
            sys.path[0] = os.path.dirname(path)
            _start.kept_globals.append(_run_script(path))


def _run_script(path: str) -> dict[str, object]:
    """Run the script file ``path`` as python runs one: its source compiled (with a swept
    module-level constant in place, ``_knobs``) and executed in a new ``__main__`` module, which
    stays in ``sys.modules`` to the end. Not ``runpy.run_path``, which imports pkgutil and typing
    (~10 ms of every run, and modules the program would not find loaded run directly), sets
    ``sys.argv[0]`` to the absolute path and puts the bootstrap back as ``__main__`` when the
    program's code returns, before its exit handlers run."""
    import builtins
    import io

    # importlib.util's MAGIC_NUMBER, from where it comes (loaded with python), without
    # importlib.util's own imports (contextlib, ...)
    from importlib._bootstrap_external import MAGIC_NUMBER
    from importlib.machinery import SourceFileLoader

    with io.open_code(path) as f:  # as python and runpy open it: audit hooks see the open
        source = f.read()
    if source.startswith(MAGIC_NUMBER):
        import runpy  # python runs a compiled file too: runpy knows how

        return runpy.run_path(path, run_name="__main__")
    # dont_inherit: this module's `from __future__ import annotations` is not the program's
    code = _knobs.script_code(path, source) or compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace.update(__file__=path, __cached__=None, __package__=None, __spec__=None, __builtins__=builtins)
    namespace["__loader__"] = SourceFileLoader("__main__", path)
    sys.modules["__main__"] = module  # as python leaves it: pickle and multiprocessing find it there
    exec(code, namespace)
    return namespace


def _program_starts(file: str | None) -> None:
    """Tell the line sampler the program's own code runs from now on: growth that no sampled line
    explains (a program that ran to its end between two samples) is then the program's file's,
    not the interpreter's start-up."""
    from memgauge.capture import _sampling

    sampler = _sampling.active_sampler()
    if sampler is not None and file:
        sampler.program_key = (file, 0, "<module>")
    _times["startup_cpu"] = time.process_time()
    _times["started"] = time.monotonic()  # last: the program's first line comes next


def _program_done() -> None:
    """The program's code returned (or raised): what the main thread runs from now on (exit
    handlers, shutdown) is not a line of it, and growth no line explains is its file's."""
    _times["ended"] = time.monotonic()
    from memgauge.capture import _sampling

    sampler = _sampling.active_sampler()
    if sampler is not None:
        sampler.program_returned()


def _module_file(name: str) -> str | None:
    """The file ``python -m name`` runs (a package's ``__main__``), None where unknown."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(name + ".__main__")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _is_zip(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _missing_module(name: str) -> str | None:
    """Why ``python -m name`` would not find anything to run, or None. An ImportError raised by the
    program's own code (a package importing a missing dependency) is not ours to report: the
    program then fails as it would when run directly."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except ImportError as e:
        missing = getattr(e, "name", None) or ""
        if missing == name or (name.startswith(missing + ".") and missing):
            return f"No module named {name!r}"
        return None
    except ValueError as e:
        return str(e)
    if spec is None:
        return f"No module named {name!r}"
    if spec.submodule_search_locations is not None and importlib.util.find_spec(name + ".__main__") is None:
        return f"No module named {name}.__main__; {name!r} is a package and cannot be directly executed"
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
