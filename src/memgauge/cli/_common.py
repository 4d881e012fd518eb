"""What every ``memgauge`` command shares: the ``Command`` protocol, the parser and how a command's
argv divides into memgauge's options and the measured program's argv, the option groups of several
commands, writing to stdout and stderr, and the mapping of errors to exit codes (here and only here).

Exit codes (also in README.md, whose table a test keeps in step with this one):
  0                  ``view`` / ``compare``: the report was written; ``check``: within budget;
                     ``sweep``: every run measured and exited 0 (within the budget, if any);
                     ``submit``: the verdict is pass; ``serve``: stopped; ``plan``: the
                     programs fit by the rule (and ``--verify`` agreed)
  1                  ``check``: over budget (a limit crossed, or stopped by ``--enforce``);
                     ``sweep``: no size fits the budget, or the confirming run went over it;
                     ``submit``: the verdict is fail (over the policy); ``plan``: they do
                     not fit, or a verifying run contradicted the plan
  2                  ``check``: the program failed while within budget; ``sweep``: a run failed
                     (non-zero exit, killed, timed out, not measured); ``submit``: the verdict
                     is error (the program failed, or could not be run), or it was cancelled
  3                  ``check``: a limit could not be measured (no GPU for a gpu limit, a phase
                     that never ran) and nothing failed; ``--allow-unmeasured`` accepts it (0);
                     ``submit``: the verdict is unmeasured (the policy does not allow it)
  the program's own  ``memgauge run`` exits with the measured program's exit code
  128 + N            the program was killed by signal N (as shells report it)
  64                 usage error: bad option, nothing to run
  65                 the script has a syntax error or cannot be read, or a profile file is
                     malformed (the message names the file); ``submit``: the
                     server refused the upload (a bad archive, too large, an unknown policy)
  66                 the script, module or profile file does not exist
  69                 a requested limit cannot be enforced on this host; ``submit``: the server
                     cannot be reached, or failed
  70                 internal error in memgauge
  73                 an output file or stdout cannot be written (a profile is saved elsewhere, see
                     the message); a reader that closes the pipe early (`| head`) is not an error;
                     ``serve``: its data directory cannot be made
  77                 ``submit``: no token, or the server refused it
  126 / 127          the command cannot be executed / is not found
  130                interrupted (Ctrl-C) while memgauge itself was working
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

from memgauge._env import ENV_DEBUG, LINE_SAMPLERS
from memgauge._errors import (
    InternalError,
    MemgaugeError,
    OutputError,
    ProfileFormatError,
    TargetNotFoundError,
    UsageError,
)
from memgauge._files import check_output, same_file, write_output
from memgauge.cli._formats import RECORD_SUFFIX, format_option
from memgauge.cli._parser import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, Protocol

    from memgauge.cli._formats import Kind
    from memgauge.model import Profile

# the verdict codes of check, sweep and submit (the table above)
PASSED, OVER_BUDGET, FAILED, UNJUDGED = 0, 1, 2, 3
INTERRUPTED = 130

# Where memgauge's own options end and the measured program's argv begins:
#   "none": the command runs no program, argparse reads all of it;
#   "target": at the first token that is not one of the command's options (`memgauge run [options]
#     script.py args...`), so the program's own options are never read as ours;
#   "after-dashes": after `--` (`memgauge sweep [options] -- program args`).
#
# For the type checker only: typing costs ~6 ms to import, and every command loads this module
# before it starts the measured program. When it runs, ``Program`` is a plain ``str`` and
# ``Command`` a plain class that nothing derives from.
if TYPE_CHECKING:
    Program = Literal["none", "target", "after-dashes"]
else:
    Protocol = object
    Program = str


class Command(Protocol):
    """One ``memgauge NAME`` command: ``cli/_main.py`` builds its parser with ``prepare_parser``,
    splits its argv as ``program`` says, parses memgauge's part and calls ``run``."""

    name: str  # memgauge NAME
    summary: str  # its words in `memgauge --help`
    usage: str | None  # None: argparse writes it
    description: str
    # two or three command lines, each with what it does after "  # ": the end of its --help
    examples: tuple[str, ...]
    program: Program

    def prepare_parser(self, parser: Parser) -> None:
        """Add the command's options and positionals."""

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        """Do the command; the exit code. ``program`` is the measured program's argv (empty
        where ``program`` is "none"). Errors are raised, never printed (see ``guarded``)."""


def build_parser(command: Command) -> Parser:
    parser = Parser(prog=f"memgauge {command.name}", usage=command.usage, description=command.description)
    parser.examples = command.examples
    command.prepare_parser(parser)
    return parser


def split_argv(parser: Parser, argv: list[str], program: Program) -> tuple[list[str], list[str]]:
    """memgauge's own options, then the program's argv (never parsed by memgauge)."""
    if program == "none":
        return argv, []
    if program == "after-dashes":
        if "--" in argv:
            i = argv.index("--")
            return argv[:i], argv[i + 1 :]
        return argv, []
    values = parser.values_taken()
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, _ = token.partition("=")
        if token in values:
            i += 1 + values[token]
        elif eq and name.startswith("--") and values.get(name, 0) == 1:  # --json=PATH
            i += 1
        # "-", "--" and "-m module" belong to the target (stdin, a command, a module), not to us
        elif token.startswith("-") and token not in ("-", "--") and not token.startswith("-m"):
            raise UsageError(f"unknown option {token} (put the program after --)")
        else:
            break
    return argv[:i], argv[i:]


def guarded(body: Callable[[], int]) -> int:
    """``body``'s exit code, or the one its error maps to, with a one-line message on stderr."""
    try:
        return body()
    except MemgaugeError as e:
        say(f"memgauge: error: {e.message}\n")
        return e.exit_code
    except KeyboardInterrupt:
        say("memgauge: interrupted\n")
        return INTERRUPTED
    except SystemExit as e:  # argparse --help / --version
        return int(e.code or 0) if not isinstance(e.code, str) else 0
    except Exception as e:
        if os.environ.get(ENV_DEBUG):
            raise
        err = InternalError(f"internal error: {type(e).__name__}: {e} (set MEMGAUGE_DEBUG=1 for a traceback)")
        say(f"memgauge: error: {err.message}\n")
        return err.exit_code


def program_exit_code(code: int | None, signal: int | None) -> int:
    """A measured program's status as a shell reports it: its code, or 128 + the killing signal."""
    return code if code is not None else 128 + (signal or 0)


# -- option groups -------------------------------------------------------------------------------


def run_options(p: argparse.ArgumentParser) -> None:
    """The options of a measured run, shared by ``run`` and ``check``."""
    p.add_argument(
        "--json", metavar="PATH", help="where to write the profile (default: memgauge-NAME-TIME.json)"
    )
    p.add_argument("--no-json", action="store_true", help="write no profile file")
    p.add_argument("--html", metavar="PATH", help="also write the HTML report (one file, works offline)")
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
        "--line-sampler",
        choices=LINE_SAMPLERS,
        default=None,
        help="who reads the lines: inside (the default: a thread in each process), auto (py-spy from "
        "outside where ptrace allows: sees long C calls) or outside (MEMGAUGE_LINE_SAMPLER sets it)",
    )
    p.add_argument(
        "--alloc",
        action="store_true",
        help="also track heap allocations with memray: allocation peak, the lines live at it, and "
        "why it differs from the resident peak (needs memgauge[alloc])",
    )
    p.add_argument(
        "--torch",
        choices=["off", "summary", "full"],
        default="summary",
        help="where a program that imports torch holds tensor memory, by role, module and step "
        "(default summary: module, autograd and optimizer hooks; full: every operator, slower)",
    )
    p.add_argument(
        "--gpu-snapshot",
        metavar="FILE",
        help="record torch's CUDA memory history in the program and write it to FILE at its exit (a "
        "pickle https://pytorch.org/memory_viz opens); the report charges the GPU peak to lines",
    )
    p.add_argument(
        "--gpu-snapshot-entries",
        type=int,
        default=100_000,
        metavar="N",
        help="the history keeps the last N alloc/free events (default 100000; it bounds the file)",
    )
    color_options(p)


def color_options(p: argparse.ArgumentParser) -> None:
    color = p.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_true", default=None, help="force colors")
    color.add_argument("--no-color", dest="color", action="store_false", help="no colors")


def report_options(p: argparse.ArgumentParser, kind: Kind) -> None:
    """The options of a report of saved profiles, shared by ``view`` and ``compare``."""
    format_option(
        p,
        kind,
        "terminal (the default unless --html is given), md (markdown, e.g. for a pull-request "
        "comment) or json",
    )
    p.add_argument("--html", metavar="PATH", help="write the HTML report to PATH (one file, works offline)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the --format output to PATH, not stdout")
    p.add_argument("--width", type=int, metavar="N", help="terminal width (default: the terminal's, or 100)")
    color_options(p)


def run_report_options(p: argparse.ArgumentParser, kind: Kind) -> None:
    """The report options of the commands that run a program many times (``sweep``, ``fit``)."""
    format_option(p, kind, "report format (default terminal)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH, not stdout")
    p.add_argument("--width", type=int, metavar="N", help="terminal width (default: the terminal's, or 100)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def report_target(args: argparse.Namespace, inputs: list[str]) -> tuple[str | None, int, bool]:
    """(format to print or None, terminal width, colors) from ``report_options`` and ``--lines``.
    ``inputs`` are the profiles read: no output may overwrite one."""
    for name in ("output", "html"):
        value = getattr(args, name)
        if value is not None:
            if not value:
                raise UsageError(f"--{name} needs a path")
            for path in inputs:
                if same_file(value, path):
                    raise UsageError(f"--{name} {value} would overwrite the profile {path}")
            check_output(value, "report")
    fmt = args.format or (None if args.html and not args.output else "terminal")
    if args.output and args.html and same_file(args.output, args.html):
        raise UsageError("--output and --html name the same file")
    if args.width is not None and not 40 <= args.width <= 1000:
        raise UsageError("--width must be between 40 and 1000")
    if args.lines is not None and args.lines < 1:
        raise UsageError("--lines must be at least 1")
    width, color = terminal_width_color(args)
    return fmt, width, color


def terminal_width_color(args: argparse.Namespace) -> tuple[int, bool]:
    """The width and colours of a terminal report from ``--width``, ``--color`` and ``-o``: the
    terminal's when stdout is one, else 100 columns without colour."""
    tty = args.output is None and sys.stdout is not None and sys.stdout.isatty()
    width = args.width or 100
    if tty and not args.width:
        import shutil  # a run without a terminal (a script, CI) does not pay for it

        width = shutil.get_terminal_size((100, 24)).columns
    return width, tty if args.color is None else args.color


# -- files and streams ---------------------------------------------------------------------------


def load_profile(path: str) -> Profile:
    """A saved profile, or the error (66 missing, 65 not a profile) that names the path."""
    from memgauge import model

    if not os.path.exists(path):
        raise TargetNotFoundError(f"no profile {path}")
    if os.path.isdir(path):
        raise ProfileFormatError(f"{path} is a directory, not a profile")
    with naming(path):
        return model.load_profile(path)


@contextlib.contextmanager
def naming(path: str) -> Iterator[None]:
    """A malformed file's error names the file: ``run.json: not a memgauge profile (...)``."""
    try:
        yield
    except ProfileFormatError as e:
        if path in e.message:
            raise
        raise ProfileFormatError(f"{path}: {e.message}") from e


def default_profile_path(name: str) -> str:
    base = f"memgauge-{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = base + RECORD_SUFFIX, 1
    while os.path.exists(path):  # two runs in the same second keep both profiles
        n += 1
        path = f"{base}-{n}{RECORD_SUFFIX}"
    return path


def say(text: str) -> None:
    """A line on stderr, if stderr can take it."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def emit(text: str, output: str | None) -> None:
    """The report to ``output`` (atomically) or to stdout."""
    if output:
        write_output(output, text, "report")
        say(f"report: {output}\n")
        return
    stream = sys.stdout
    if stream is None:  # started with stdout closed
        raise OutputError("cannot write the report to stdout: it is closed")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # `memgauge view run.json | head`: the reader has all it wanted
        _drop_stdout()
    except (OSError, ValueError) as e:  # a full disk, a closed descriptor
        _drop_stdout()
        reason = getattr(e, "strerror", None) or e
        raise OutputError(f"cannot write the report to stdout: {reason}") from e


def _drop_stdout() -> None:
    """Point stdout at /dev/null: the interpreter's flush at exit must not fail again (it would
    print "Exception ignored" and turn the exit code into 120)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
