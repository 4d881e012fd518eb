"""``memgauge`` command line. ``main(argv) -> int``; exit codes are mapped here and only here.

Commands: ``run`` (measure a program), ``view`` (report an existing profile), ``compare``
(profiles side by side), ``check`` (judge a run or profiles against budgets; ``cli/_check.py``),
``sweep`` (run a program at many sizes; ``cli/_sweep.py``), ``serve`` (the validation service;
``cli/_serve.py``), ``submit`` (send a program to it; ``cli/_submit.py``). ``view`` and ``compare``
exit 0 when the report was written.

Exit codes (also in README.md, whose table a test keeps in step with this one):
  0                  ``view`` / ``compare``: the report was written; ``check``: within budget;
                     ``sweep``: every run measured and exited 0 (within the budget, if any);
                     ``submit``: the verdict is pass; ``serve``: stopped
  1                  ``check``: over budget (a limit crossed, or stopped by ``--enforce``);
                     ``sweep``: no size fits the budget, or the confirming run went over it;
                     ``submit``: the verdict is fail (over the policy)
  2                  ``check``: the program failed while within budget; ``sweep``: a run failed
                     (non-zero exit, killed, timed out, not measured); ``submit``: the verdict
                     is error (the program failed, or could not be run), or it was cancelled
  the program's own  ``memgauge run`` exits with the measured program's exit code
  128 + N            the program was killed by signal N (as shells report it)
  64                 usage error: bad option, nothing to run
  65                 the script has a syntax error, or a profile file is malformed; ``submit``: the
                     server refused the upload (a bad archive, too large, an unknown policy)
  66                 the script, module or profile file does not exist
  69                 a requested limit cannot be enforced on this host; ``submit``: the server
                     cannot be reached, or failed
  70                 internal error in memgauge
  73                 an output file or stdout cannot be written (a profile is saved elsewhere, see
                     the message); a reader that closes the pipe early (`| head`) is not an error
  77                 ``submit``: no token, or the server refused it
  126 / 127          the command cannot be executed / is not found
  130                interrupted (Ctrl-C) while memgauge itself was working
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time

from memgauge._errors import (
    InternalError,
    MemgaugeError,
    OutputError,
    ProfileFormatError,
    TargetNotFoundError,
    UsageError,
)
from memgauge._files import check_output, same_file, write_output
from memgauge._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile
    from memgauge.runner import HardLimits

# options of `memgauge run` that take a value; everything up to the first other token is ours
_RUN_VALUE_OPTIONS = {"--json", "--interval", "--cgroup", "--html", "--sandbox"}
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
        epilog="Run 'memgauge COMMAND --help' for a command's options.",
    )
    p.add_argument("--version", action="version", version=f"memgauge {__version__}")
    p.add_argument(
        "command",
        choices=list(_COMMANDS),
        help="run: run a program under measurement; view: report a saved profile; "
        "compare: profiles side by side; check: judge a run or a profile against budgets; "
        "sweep: run a program at many sizes, fit growth laws, find the largest size under a budget; "
        "serve: the validation service; submit: send a program to it and exit with its verdict",
    )
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
    add_run_options(p)
    # how sweep._job.execute_job runs untrusted code (runner._sandbox): a plan only it writes, so
    # not an option for people, and kept out of --help
    p.add_argument("--sandbox", metavar="PLAN.json", help=argparse.SUPPRESS)
    return p


def add_run_options(p: argparse.ArgumentParser) -> None:
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
        "--alloc",
        action="store_true",
        help="also track heap allocations with memray: allocation peak, the lines live at it, and "
        "why it differs from the resident peak (needs memgauge[alloc])",
    )
    _color_options(p)


def _color_options(p: argparse.ArgumentParser) -> None:
    color = p.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_true", default=None, help="force colors")
    color.add_argument("--no-color", dest="color", action="store_false", help="no colors")


def _report_options(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument(
        "--format",
        choices=formats,
        default=None,
        help="terminal (the default unless --html is given), md (markdown, e.g. for a pull-request "
        "comment) or json",
    )
    p.add_argument("--html", metavar="PATH", help="write the HTML report to PATH (one file, works offline)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the --format output to PATH, not stdout")
    p.add_argument("--width", type=int, metavar="N", help="terminal width (default: the terminal's, or 100)")
    _color_options(p)


def _view_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memgauge view",
        usage="memgauge view [options] PROFILE.json",
        description="Report a profile written by 'memgauge run': in the terminal, as markdown or JSON, "
        "or as an HTML file.",
    )
    p.add_argument("profile", metavar="PROFILE.json")
    _report_options(p, ["terminal", "md", "json"])
    p.add_argument("--lines", type=int, default=8, metavar="N", help="lines per table (default 8)")
    return p


def _compare_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memgauge compare",
        usage="memgauge compare [options] BASELINE.json OTHER.json [...]",
        description="Profiles side by side: peaks, time, per-phase peaks and durations, the lines holding "
        "the peak. Deltas and ratios are against the first profile.",
    )
    p.add_argument("profiles", nargs="+", metavar="PROFILE.json")
    p.add_argument(
        "--names", metavar="A,B,...", help="column names, comma-separated (default: the file names)"
    )
    _report_options(p, ["terminal", "md", "json"])
    p.add_argument("--lines", type=int, default=10, metavar="N", help="lines compared (default 10)")
    return p


def split_run_argv(
    argv: list[str], value_options: set[str] = _RUN_VALUE_OPTIONS, flags: set[str] = _RUN_FLAGS
) -> tuple[list[str], list[str]]:
    """memgauge's own options, then the target and its arguments (never parsed by us)."""
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if name in value_options:
            i += 1 if "=" in token else 2
        elif token in flags:
            i += 1
        elif token.startswith("-") and token not in ("-", "--") and not token.startswith("-m"):
            raise UsageError(f"unknown option {token} (put the program after --)")
        else:
            break
    return argv[:i], argv[i:]


class RunPlan:
    """A validated ``run``: what to run, how, and where its profile and report go."""

    def __init__(
        self, args: argparse.Namespace, rest: list[str], *, enforce: HardLimits | None = None
    ) -> None:
        from memgauge.runner import RunOptions, parse_target

        if not 0 < args.interval <= 10:
            raise UsageError("--interval must be in (0, 10] seconds")
        self.target = parse_target(rest)
        if args.lib and args.no_lines:
            raise UsageError("--lib needs line sampling: drop --no-lines")
        if args.alloc:
            import importlib.util

            if importlib.util.find_spec("memray") is None:
                raise UsageError("--alloc needs memray: pip install 'memgauge[alloc]'")
        self.json_path: str | None = None
        if not args.no_json:
            if args.json == "":
                raise UsageError("--json needs a path (or use --no-json)")
            self.json_path = args.json or _default_profile_path(self.target.name)
            check_output(self.json_path, "profile")
        if args.html is not None:
            if not args.html:
                raise UsageError("--html needs a path")
            if self.json_path is not None and same_file(self.json_path, args.html):
                raise UsageError("--json and --html name the same file")
            check_output(args.html, "HTML report")
        self.html_path: str | None = args.html
        self.quiet: bool = args.quiet
        self.color: bool | None = args.color
        lines = "off" if args.no_lines else "lib" if args.lib else "on"
        self.options = RunOptions(
            interval=args.interval, cgroup=args.cgroup, lines=lines, alloc=args.alloc, enforce=enforce
        )
        sandbox_plan = getattr(args, "sandbox", None)
        if sandbox_plan is not None:
            from memgauge.isolation import SandboxRun

            try:
                self.options.sandbox = SandboxRun.load(sandbox_plan)
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise UsageError(f"--sandbox {sandbox_plan}: not a sandbox plan: {e}") from e

    def run(self, json_path: str | None = None, *, report: bool = True) -> Profile:
        """Run the program, then save its profile (to ``json_path`` when given) and HTML report and
        show the terminal report. The profile first: a report that cannot be shown (stderr closed,
        a broken pipe) must lose neither the profile nor the program's exit status."""
        from memgauge.runner import run_program

        json_path = json_path or self.json_path
        profile = run_program(self.target, self.options)
        saved_error: OutputError | None = None
        if json_path is not None:
            try:
                profile.save(json_path)
            except OutputError as e:
                saved_error = _save_elsewhere(profile, self.target.name, e)
        html_error: OutputError | None = None
        if self.html_path:
            try:
                _write_html(profile, self.html_path)
            except OutputError as e:
                html_error = e
        if report and not self.quiet:
            # name only the files that were written
            shown_json = json_path if saved_error is None else None
            _show_report(profile, self.color, shown_json, self.html_path if html_error is None else None)
        if saved_error is not None:
            raise saved_error
        if html_error is not None:
            raise html_error
        return profile


def _cmd_run(argv: list[str]) -> int:
    own, rest = split_run_argv(argv)
    args = _run_parser().parse_args(own)
    profile = RunPlan(args, rest).run()
    return profile.exit.code if profile.exit.code is not None else 128 + (profile.exit.signal or 0)


def _write_html(profile: Profile, path: str) -> None:
    from memgauge.render import HtmlRenderer

    write_output(path, HtmlRenderer().render(profile), "HTML report")


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


def _show_report(
    profile: Profile, color_option: bool | None, json_path: str | None, html_path: str | None = None
) -> None:
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
        if html_path:
            text += f"report: {html_path}\n"
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass  # stderr closed or a broken pipe: the profile is saved and the exit code stands


def _load(path: str) -> Profile:
    from memgauge.model import load_profile

    if not os.path.exists(path):
        raise TargetNotFoundError(f"no profile {path}")
    if os.path.isdir(path):
        raise ProfileFormatError(f"{path} is a directory, not a profile")
    return load_profile(path)


def _emit(text: str, output: str | None) -> None:
    """The report to ``output`` (atomically) or to stdout."""
    if output:
        write_output(output, text, "report")
        _say(f"report: {output}\n")
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


def _report_target(args: argparse.Namespace, inputs: list[str]) -> tuple[str | None, int, bool]:
    """(format to print or None, terminal width, colors) from the shared report options.
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
    width = args.width or (shutil.get_terminal_size((100, 24)).columns if tty else 100)
    return width, tty if args.color is None else args.color


def _cmd_view(argv: list[str]) -> int:
    args = _view_parser().parse_args(argv)
    fmt, width, color = _report_target(args, [args.profile])
    profile = _load(args.profile)
    from memgauge import render

    if args.html:
        write_output(args.html, render.HtmlRenderer().render(profile), "HTML report")
        _say(f"report: {args.html}\n")
    if fmt is None:
        return 0
    renderer: render.Renderer
    if fmt == "md":
        renderer = render.MarkdownRenderer(max_lines=args.lines)
    elif fmt == "json":
        renderer = render.JsonRenderer()
    else:
        renderer = render.TerminalRenderer(width=width, color=color, max_lines=args.lines)
    text = renderer.render(profile)
    _emit(text if text.endswith("\n") else text + "\n", args.output)
    return 0


def _cmd_compare(argv: list[str]) -> int:
    args = _compare_parser().parse_args(argv)
    if len(args.profiles) < 2:
        raise UsageError("compare needs at least two profiles")
    fmt, width, color = _report_target(args, args.profiles)
    if args.names is not None:
        names = [n.strip() for n in args.names.split(",")]
        if len(names) != len(args.profiles) or not all(names):
            raise UsageError(f"--names needs {len(args.profiles)} non-empty names, one per profile")
        if len(set(names)) != len(names):
            raise UsageError("--names must differ: the columns could not be told apart")
    else:
        names = _default_names(args.profiles)
    profiles = [_load(path) for path in args.profiles]
    from memgauge import render
    from memgauge.analysis import compare

    comparison = compare(profiles, names, max_lines=args.lines)
    if args.html:
        write_output(args.html, render.HtmlComparisonRenderer().render(comparison), "HTML report")
        _say(f"report: {args.html}\n")
    if fmt is None:
        return 0
    if fmt == "md":
        text = render.MarkdownComparisonRenderer().render(comparison)
    elif fmt == "json":
        text = json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n"
    else:
        text = render.TerminalComparisonRenderer(width=width, color=color).render(comparison)
    _emit(text, args.output)
    return 0


def _default_names(paths: list[str]) -> list[str]:
    """File names without .json; the whole path where two files share a name."""
    stems = [os.path.basename(p).removesuffix(".json") for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)


def _cmd_check(argv: list[str]) -> int:
    from memgauge.cli._check import cmd_check

    return cmd_check(argv)


def _cmd_sweep(argv: list[str]) -> int:
    from memgauge.cli._sweep import cmd_sweep

    return cmd_sweep(argv)


def _cmd_serve(argv: list[str]) -> int:
    from memgauge.cli._serve import cmd_serve

    return cmd_serve(argv)


def _cmd_submit(argv: list[str]) -> int:
    from memgauge.cli._submit import cmd_submit

    return cmd_submit(argv)


_COMMANDS = {
    "run": _cmd_run,
    "view": _cmd_view,
    "compare": _cmd_compare,
    "check": _cmd_check,
    "sweep": _cmd_sweep,
    "serve": _cmd_serve,
    "submit": _cmd_submit,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] and argv[0] in _COMMANDS:
            return _COMMANDS[argv[0]](argv[1:])
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
