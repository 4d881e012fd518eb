"""``memgauge`` command line. ``main(argv) -> int``; exit codes are mapped here and only here.

Exit codes (also in README.md and docs/cli.md):
  the program's own  ``memgauge run`` exits with the measured program's exit code
  128 + N            the program was killed by signal N (as shells report it)
  64                 usage error: bad option, nothing to run
  65                 the script has a syntax error, or a profile file is malformed
  66                 the script or module does not exist
  69                 a requested limit cannot be enforced on this host
  70                 internal error in memgauge
  73                 an output file cannot be written (the profile is saved elsewhere, see message)
  126 / 127          the command cannot be executed / is not found
  130                interrupted (Ctrl-C) while memgauge itself was working
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from memgauge._errors import InternalError, MemgaugeError, OutputError, UsageError
from memgauge._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge._profile import Profile

# options of `memgauge run` that take a value; everything up to the first other token is ours
_RUN_VALUE_OPTIONS = {"--json", "--interval", "--cgroup"}
_RUN_FLAGS = {
    "--no-json",
    "--quiet",
    "-q",
    "--help",
    "-h",
    "--color",
    "--no-color",
    "--lib",
    "--no-lines",
    "--alloc",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _top_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memgauge",
        description="How much memory and time a program needs, and where it goes.",
        epilog="Run 'memgauge run --help' for the run command.",
    )
    p.add_argument("--version", action="version", version=f"memgauge {__version__}")
    p.add_argument("command", choices=["run"], help="run: run a program under measurement")
    return p


def _run_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memgauge run",
        usage="memgauge run [options] (script.py | -m module | -- command) [args ...]",
        description=(
            "Run a program in a child process and report the resident peak of its whole process "
            "tree, its time, its phases and its processes. The report goes to stderr; the "
            "program's stdin, stdout, stderr and exit code are its own."
        ),
    )
    p.add_argument(
        "--json", metavar="PATH", help="where to write the profile (default: memgauge-NAME-TIME.json)"
    )
    p.add_argument("--no-json", action="store_true", help="write no profile file")
    p.add_argument("-q", "--quiet", action="store_true", help="print no report")
    p.add_argument(
        "--interval",
        type=float,
        default=0.01,
        metavar="SECONDS",
        help="first sampling interval of the timeline (default 0.01; it doubles as the run grows)",
    )
    p.add_argument(
        "--cgroup",
        choices=["auto", "v2", "v1", "off"],
        default="auto",
        help="measure the tree peak with a dedicated cgroup (default auto: v2, else v1, else sampling)",
    )
    p.add_argument(
        "--lib",
        action="store_true",
        help="show library frames (numpy, torch, the standard library) instead of charging them to "
        "the user line that called them",
    )
    p.add_argument(
        "--no-lines",
        action="store_true",
        help="no line sampling in the program's Python processes (peaks, phases and time only)",
    )
    p.add_argument(
        "--alloc",
        action="store_true",
        help="also track heap allocations with memray: allocation peak, the lines live at it, and "
        "why it differs from the resident peak (needs memgauge[alloc])",
    )
    color = p.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_true", default=None, help="force colors")
    color.add_argument("--no-color", dest="color", action="store_false", help="no colors")
    return p


def _split_run_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """memgauge's own options, then the target and its arguments (never parsed by us)."""
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if name in _RUN_VALUE_OPTIONS:
            i += 1 if "=" in token else 2
        elif token in _RUN_FLAGS:
            i += 1
        elif token.startswith("-") and token not in ("-", "--") and not token.startswith("-m"):
            raise UsageError(f"unknown option {token} (put the program after --)")
        else:
            break
    return argv[:i], argv[i:]


def _check_writable(path: str) -> None:
    parent = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise OutputError(f"cannot write profile to {path}: it is a directory")
    if not os.path.isdir(parent):
        raise OutputError(f"cannot write profile to {path}: no directory {parent}")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise OutputError(f"cannot write profile to {path}: permission denied")


def _cmd_run(argv: list[str]) -> int:
    from memgauge.runner import RunOptions, parse_target, run_program

    own, rest = _split_run_argv(argv)
    args = _run_parser().parse_args(own)
    if not 0 < args.interval <= 10:
        raise UsageError("--interval must be in (0, 10] seconds")
    target = parse_target(rest)
    if args.lib and args.no_lines:
        raise UsageError("--lib needs line sampling: drop --no-lines")
    if args.alloc:
        import importlib.util

        if importlib.util.find_spec("memray") is None:
            raise UsageError("--alloc needs memray: pip install 'memgauge[alloc]'")
    json_path: str | None = None
    if not args.no_json:
        if args.json == "":
            raise UsageError("--json needs a path (or use --no-json)")
        json_path = args.json or _default_profile_path(target.name)
        _check_writable(json_path)
    lines = "off" if args.no_lines else "lib" if args.lib else "on"
    options = RunOptions(interval=args.interval, cgroup=args.cgroup, lines=lines, alloc=args.alloc)
    profile = run_program(target, options)
    status = profile.exit.code if profile.exit.code is not None else 128 + (profile.exit.signal or 0)
    # the profile first: a report that cannot be shown (stderr closed, a broken pipe) must lose
    # neither the profile nor the program's exit code
    saved_error: OutputError | None = None
    if json_path is not None:
        try:
            profile.save(json_path)
        except OutputError as e:
            saved_error = _save_elsewhere(profile, target.name, e)
    if not args.quiet:
        _show_report(profile, args.color, json_path if saved_error is None else None)
    if saved_error is not None:
        raise saved_error
    return status


def _default_profile_path(name: str) -> str:
    base = f"memgauge-{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = f"{base}.json", 1
    while os.path.exists(path):  # two runs in the same second keep both profiles
        n += 1
        path = f"{base}-{n}.json"
    return path


def _save_elsewhere(profile: Profile, name: str, error: OutputError) -> OutputError:
    import tempfile

    try:
        fd, fallback = tempfile.mkstemp(prefix=f"memgauge-{name}-", suffix=".json")
        os.close(fd)
        profile.save(fallback)
    except (OSError, OutputError):
        return OutputError(f"{error.message}; and no temporary file could be written either")
    return OutputError(f"{error.message}; saved it to {fallback} instead")


def _show_report(profile: Profile, color_option: bool | None, json_path: str | None) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        tty = stream.isatty()
        # imported after the run: rich's import time is not added to the program's start
        from memgauge.render import TerminalRenderer

        width = os.get_terminal_size(stream.fileno()).columns if tty else 100
        color = tty if color_option is None else color_option
        text = TerminalRenderer(width=min(width, 140), color=color).render(profile)
        if json_path is not None:
            text += f"profile: {json_path}\n"
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass  # stderr closed or a broken pipe: the profile is saved and the exit code stands


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["run"]:
            return _cmd_run(argv[1:])
        if not argv:
            raise UsageError("give a command, e.g. 'memgauge run script.py' (see 'memgauge --help')")
        _top_parser().parse_args(argv)
        raise UsageError("give a command, e.g. 'memgauge run script.py'")
    except MemgaugeError as e:
        _say(f"memgauge: error: {e.message}\n")
        return e.exit_code
    except KeyboardInterrupt:
        _say("memgauge: interrupted\n")
        return 130
    except SystemExit as e:  # argparse --help / --version
        return int(e.code or 0) if not isinstance(e.code, str) else 0
    except Exception as e:
        if os.environ.get("MEMGAUGE_DEBUG"):
            raise
        err = InternalError(f"internal error: {type(e).__name__}: {e} (set MEMGAUGE_DEBUG=1 for a traceback)")
        _say(f"memgauge: error: {err.message}\n")
        return err.exit_code


def _say(text: str) -> None:
    """A line on stderr, if stderr can take it."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
