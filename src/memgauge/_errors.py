"""One error hierarchy. Every error memgauge raises on purpose carries its exit code, and
``memgauge.cli`` maps it to a one-line message; nothing else decides exit codes.

The codes live in the 64-78 range of ``sysexits.h`` (and 126/127 for commands, as shells do) so
they rarely collide with a measured program's own exit codes, which ``memgauge run`` passes through.
"""

from __future__ import annotations

# not typing itself: every command loads this module before it starts the program, and typing
# costs ~6 ms to import
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

__all__ = [
    "CommandNotExecutableError",
    "CommandNotFoundError",
    "InternalError",
    "LimitError",
    "MemgaugeError",
    "OutputError",
    "PermissionDeniedError",
    "ProfileFormatError",
    "RefusedError",
    "ScriptError",
    "ServiceUnavailableError",
    "TargetNotFoundError",
    "UsageError",
]


class MemgaugeError(Exception):
    """Base of every error memgauge reports to a user."""

    exit_code: ClassVar[int] = 70

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(MemgaugeError):
    """Bad command line: unknown option, missing value, nothing to run."""

    exit_code = 64


class ProfileFormatError(MemgaugeError):
    """A profile file that is not JSON, or not a memgauge profile, or of an unknown version."""

    exit_code = 65


class ScriptError(MemgaugeError):
    """The script to run cannot be compiled (syntax error) or read."""

    exit_code = 65


class TargetNotFoundError(MemgaugeError):
    """The script file or the module to run does not exist."""

    exit_code = 66


class InternalError(MemgaugeError):
    """A bug in memgauge; the message says what failed."""

    exit_code = 70


class LimitError(MemgaugeError):
    """A requested limit cannot be enforced on this host (no cgroup to enforce it with)."""

    exit_code = 69


class ServiceUnavailableError(MemgaugeError):
    """``memgauge submit``: the server cannot be reached, or answered with a server error."""

    exit_code = 69


class RefusedError(MemgaugeError):
    """``memgauge submit``: the server refused the submission (a bad upload, an unknown policy)."""

    exit_code = 65


class PermissionDeniedError(MemgaugeError):
    """``memgauge submit``: no token, a token the server does not accept, or a role that may not."""

    exit_code = 77


class OutputError(MemgaugeError):
    """An output path (profile JSON, report) cannot be written."""

    exit_code = 73


class CommandNotExecutableError(MemgaugeError):
    """The command exists but cannot be executed (permissions, not a binary)."""

    exit_code = 126


class CommandNotFoundError(MemgaugeError):
    """The command is not on PATH."""

    exit_code = 127
