"""What to run: a Python script, a Python module, or any command; checked before anything starts."""

from __future__ import annotations

import os
import sys

from memgauge._errors import (
    CommandNotExecutableError,
    CommandNotFoundError,
    ScriptError,
    TargetNotFoundError,
    UsageError,
)
from memgauge.capture import BOOTSTRAP_FILE

TYPE_CHECKING = False  # not typing's: loaded before the program starts, typing costs ~6 ms
if TYPE_CHECKING:
    from typing import Literal


class Target:
    """``kind`` script | module | command, the script path, module name or command, its arguments."""

    __slots__ = ("args", "kind", "value")

    def __init__(
        self, kind: Literal["script", "module", "command"], value: str, args: list[str] | None = None
    ) -> None:
        self.kind, self.value, self.args = kind, value, list(args or [])

    def __repr__(self) -> str:
        return f"Target({self.kind!r}, {self.value!r}, {self.args!r})"

    def argv(self) -> list[str]:
        """The command line the child process executes."""
        if self.kind == "command":
            return [self.value, *self.args]
        return [sys.executable, BOOTSTRAP_FILE, self.kind, self.value, *self.args]

    def display(self) -> list[str]:
        """The command line as the user would have typed it to run the program directly."""
        if self.kind == "script":
            return ["python", self.value, *self.args]
        if self.kind == "module":
            return ["python", "-m", self.value, *self.args]
        return [self.value, *self.args]

    @property
    def name(self) -> str:
        """A short name for default output files."""
        if self.kind == "script":
            return os.path.splitext(os.path.basename(self.value))[0] or "script"
        if self.kind == "module":
            return self.value.rsplit(".", 1)[-1]
        return os.path.basename(self.value) or "command"

    def check(self) -> None:
        """Fail fast, with a one-line reason, on input that cannot run."""
        if self.kind == "script":
            _check_script(self.value)
        elif self.kind == "module":
            if not self.value or any(not part.isidentifier() for part in self.value.split(".")):
                raise UsageError(f"not a module name: {self.value!r}")
        else:
            _check_command(self.value)


def _check_script(path: str) -> None:
    if not os.path.exists(path):
        raise TargetNotFoundError(f"no such script: {path}")
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "__main__.py")):
            return
        raise TargetNotFoundError(f"{path} is a directory without __main__.py")
    if not os.path.isfile(path):
        return  # a pipe or /dev/stdin: reading it here would take the program's input away
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise ScriptError(f"cannot read {path}: {e.strerror}") from e
    if source[:4] == b"PK\x03\x04":
        return  # a zip application: python runs its __main__.py
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        where = f"{path}:{e.lineno}" if e.lineno else path
        raise ScriptError(f"{where}: syntax error: {e.msg}") from e
    except ValueError as e:  # null bytes
        raise ScriptError(f"{path}: {e}") from e


def _check_command(command: str) -> None:
    import shutil  # only for a command: a script's run does not pay for it

    if os.sep in command:
        if not os.path.exists(command):
            raise CommandNotFoundError(f"command not found: {command}")
        if os.path.isdir(command) or not os.access(command, os.X_OK):
            raise CommandNotExecutableError(f"not executable: {command}")
    elif shutil.which(command) is None:
        raise CommandNotFoundError(f"command not found: {command}")


def parse_target(tokens: list[str]) -> Target:
    """``script.py ARGS`` | ``-m module ARGS`` | ``-- command ARGS``. A first token that is no file
    and no ``.py`` name but a command on PATH (``memgauge run python -m pytest``) is a command."""
    if not tokens:
        raise UsageError("nothing to run: give a script, -m MODULE, or -- COMMAND")
    first, rest = tokens[0], tokens[1:]
    if first == "--":
        if not rest:
            raise UsageError("nothing to run after --")
        return Target("command", rest[0], rest[1:])
    if first == "-m":
        if not rest:
            raise UsageError("-m needs a module name")
        return Target("module", rest[0], rest[1:])
    if first.startswith("-m") and len(first) > 2:
        return Target("module", first[2:], rest)
    if not first.endswith(".py") and not os.path.exists(first) and _on_path(first):
        return Target("command", first, rest)
    return Target("script", first, rest)


def _on_path(name: str) -> bool:
    import shutil

    return shutil.which(name) is not None
