"""A measured run as ``memgauge run`` and ``memgauge check`` make it: the options of ``run_options``
checked before anything runs, then the run, its profile, its HTML report and its terminal report."""

from __future__ import annotations

import argparse
import os
import sys

from memgauge._errors import OutputError, UsageError
from memgauge._files import check_output, same_file, write_output
from memgauge.cli._common import default_profile_path
from memgauge.cli._formats import FORMATS, PAGE, RECORD_SUFFIX, Look, need

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from memgauge.isolation import SandboxRun
    from memgauge.model import Profile
    from memgauge.runner import HardLimits


def _outputs(args: argparse.Namespace, name: str) -> tuple[str | None, str | None]:
    """Where the profile (None: --no-json) and the HTML report go, each checked writable."""
    json_path = None
    if not args.no_json:
        if args.json == "":
            raise UsageError("--json needs a path (or use --no-json)")
        json_path = args.json or default_profile_path(name)
        check_output(json_path, "profile")
    if args.html is not None:
        if not args.html:
            raise UsageError("--html needs a path")
        if json_path is not None and same_file(json_path, args.html):
            raise UsageError("--json and --html name the same file")
        check_output(args.html, "HTML report")
    return json_path, args.html


def _sandbox(path: str) -> SandboxRun:
    from memgauge.isolation import SandboxRun

    try:
        return SandboxRun.load(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"--sandbox {path}: not a sandbox plan: {e}") from e


def _line_sampler(chosen: str | None) -> str:
    """--line-sampler, else MEMGAUGE_LINE_SAMPLER, else "" (the default, inside); a bad value in
    the environment is a usage error, as a bad option is, not a silent default."""
    if chosen is not None:
        return chosen
    from memgauge._env import ENV_LINE_SAMPLER, LINE_SAMPLERS

    value = os.environ.get(ENV_LINE_SAMPLER, "")
    if value and value not in LINE_SAMPLERS:
        raise UsageError(f"{ENV_LINE_SAMPLER}={value}: expected one of {', '.join(LINE_SAMPLERS)}")
    return value


class RunPlan:
    """A validated run: what to run, how, and where its profile and report go."""

    def __init__(
        self, args: argparse.Namespace, rest: list[str], *, enforce: HardLimits | None = None
    ) -> None:
        from memgauge.runner import RunOptions, parse_target, process_started

        if not 0 < args.interval <= 10:
            raise UsageError("--interval must be in (0, 10] seconds")
        self.target = parse_target(rest)
        if args.lib and args.no_lines:
            raise UsageError("--lib needs line sampling: drop --no-lines")
        if args.alloc:
            import importlib.util

            if importlib.util.find_spec("memray") is None:
                raise UsageError("--alloc needs memray: pip install 'memgauge[alloc]'")
        self.json_path, self.html_path = _outputs(args, self.target.name)
        self.tensorboard: str | None = getattr(args, "tensorboard", None)
        if self.tensorboard is not None:
            from memgauge.cli._tensorboard import check_tensorboard

            check_tensorboard(self.tensorboard)
        self.quiet: bool = args.quiet
        self.color: bool | None = args.color
        lines = "off" if args.no_lines else "lib" if args.lib else "on"
        self.options = RunOptions(
            interval=args.interval, cgroup=args.cgroup, lines=lines, alloc=args.alloc, enforce=enforce
        )
        self.options.torch = getattr(args, "torch", "summary")
        self.options.line_sampler = _line_sampler(getattr(args, "line_sampler", None))
        if getattr(args, "own_process", False):
            # memgauge was started for this run: its own start-up is timed in the profile
            self.options.process_start = process_started()
        snapshot = getattr(args, "gpu_snapshot", None)
        if snapshot is not None:
            self._gpu_snapshot(snapshot, args.gpu_snapshot_entries)
        sandbox_plan = getattr(args, "sandbox", None)
        if sandbox_plan is not None:
            self.options.sandbox = _sandbox(sandbox_plan)
        shown = () if self.quiet else FORMATS["terminal"].loads
        self.options.prewarm = (*shown, *(PAGE.loads if self.html_path else ()))

    def _gpu_snapshot(self, path: str, entries: int) -> None:
        """--gpu-snapshot: the program records torch's memory history and dumps it to ``path``
        (docs/gpu.md), asked for through its environment (never memgauge's own)."""
        from memgauge._env import ENV_GPU_SNAPSHOT, ENV_GPU_SNAPSHOT_ENTRIES

        if not path:
            raise UsageError("--gpu-snapshot needs a path")
        if entries <= 0:
            raise UsageError("--gpu-snapshot-entries must be a positive number of events")
        if self.options.torch == "off":
            raise UsageError("--gpu-snapshot needs the torch tracker: drop --torch off")
        check_output(path, "GPU snapshot")
        env = {ENV_GPU_SNAPSHOT: os.path.abspath(path), ENV_GPU_SNAPSHOT_ENTRIES: str(entries)}
        self.options.env = {**(self.options.env or os.environ), **env}

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
        if self.tensorboard:
            from memgauge.cli._tensorboard import write_tensorboard

            try:
                write_tensorboard(profile, self.tensorboard)
            except OutputError as e:
                html_error = html_error or e
        if report and not self.quiet:
            # name only the files that were written
            shown_json = json_path if saved_error is None else None
            _show_report(profile, self.color, shown_json, self.html_path if html_error is None else None)
        if saved_error is not None:
            raise saved_error
        if html_error is not None:
            raise html_error
        return profile


def _write_html(profile: Profile, path: str) -> None:
    write_output(path, need(PAGE.profile, "html")(profile, Look()), "HTML report")


def _save_elsewhere(profile: Profile, name: str, error: OutputError) -> OutputError:
    import tempfile

    try:
        fd, fallback = tempfile.mkstemp(prefix=f"memgauge-{name}-", suffix=RECORD_SUFFIX)
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
        # a serial console or an emulator may report 0 columns: the report is never dropped for it
        width = (_columns(stream) if tty else 0) or 100
        color = tty if color_option is None else color_option
        text = _report_text(profile, min(width, 140), color)
        if json_path is not None:
            text += f"profile: {json_path}\n"
        if html_path:
            text += f"report: {html_path}\n"
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass  # stderr closed or a broken pipe: the profile is saved and the exit code stands


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return 0


def _report_text(profile: Profile, width: int, color: bool) -> str:
    """The terminal report; where rendering it fails, one line saying so, so that the lines after
    it (where the profile was saved) are still printed and the run's exit code stands."""
    # the renderer loads after the run: rich's import time is not added to the program's start
    try:
        return need(FORMATS["terminal"].profile, "terminal")(profile, Look(width, color))
    except Exception as e:  # any renderer defect: the saved profile still says it all
        return f"memgauge: the report could not be rendered ({type(e).__name__}: {e})\n"
