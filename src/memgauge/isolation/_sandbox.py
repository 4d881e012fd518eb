"""Sandboxed runs: untrusted code measured without letting it reach the host, the network, other
runs or the server's data. This module holds what a sandboxed run is allowed (:class:`Sandbox`),
the uploaded program (:class:`Upload`), the plan the host half hands the runner half
(:class:`SandboxRun`) and the record both halves fill (:data:`PIECES`).

A sandboxed run has two halves, because the pieces need different vantage points:

* the **host** half (:class:`HostRun` in ``_host``, used by ``sweep.execute_job``) runs in the
  server's process. It makes the run's fresh directory, leases a uid no other run holds
  (``_uids``: an ``flock`` held for the run's lifetime, so concurrent runs never share one, even
  across processes), unpacks the upload (``_upload``), scrubs the environment, and starts
  ``memgauge run --sandbox PLAN.json`` under ``unshare --net --mount`` (``_probes``: what this host
  allows) so that the runner starts in its own network and mount namespaces. Afterwards it kills
  whatever still runs as the uid, removes the directory and releases the uid.
* the **runner** half (:class:`SandboxIsolation` in ``_sandboxed``, the ``Isolation`` that
  ``run_program`` drives) runs as root inside those namespaces. ``_setup`` applies the pieces: the
  mounts (``_mounts``, through ``_libc``: private ``/tmp``, empty home and runtime directories,
  the ``hidden_paths`` hidden, and the interpreter bound back read-only where it lives in a closed
  directory such as ``/root``), the pids cgroup, and the program's ``preexec``: rlimits, then
  ``setgroups([])``, ``setgid``, ``setuid`` to the leased uid. The runner stays root because it
  needs cgroups and every process's ``/proc``; only the program is unprivileged.

Every piece that a host cannot provide (not root, no ``unshare``, no pids controller ...) is left
out and the run goes ahead: the record (:data:`PIECES`, ``applied`` / ``not_applied``) says which
pieces held and why the others did not, so a caller can refuse results it cannot trust.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from typing import Any

# the names of the record, in the order a report lists them
PIECES = (
    "workdir",
    "process_group",
    "network",
    "memory",
    "wall",
    "processes",
    "output",
    "environment",
    "user",
    "filesystem",
    "disk",
)
RUNNER_PIECES = PIECES[2:]  # what the runner, inside the namespaces, applies and records

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
# the prefix of every run's directory in the temporary directory
RUN_PREFIX = "memgauge-sandbox-"
# the largest profile a sandboxed run may give (the service stores it and renders it per request)
MAX_PROFILE_BYTES = 16 << 20


@dataclass(frozen=True)
class Sandbox:
    """What a sandboxed run is allowed. ``None`` for a limit: not limited.

    ``max_processes`` counts tasks, threads included (that is what ``pids.max`` counts);
    ``max_output_bytes`` bounds the program's stdout and stderr together; ``disk_bytes`` what it
    writes in all (a scratch filesystem of that size holds every place it may write:
    ``_scratch``); ``network`` True leaves the host's network reachable; ``unprivileged`` runs
    the program as a uid of its own;
    ``hidden_paths`` are directories (or files) the run must not see; ``env`` is added to the
    program's scrubbed environment.
    """

    memory_bytes: int | None = None
    wall_seconds: float | None = None
    max_processes: int | None = 64
    max_output_bytes: int | None = 1 << 20
    disk_bytes: int | None = None
    network: bool = False
    unprivileged: bool = True
    hidden_paths: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a list from JSON or a caller is accepted, but the frozen value holds a tuple
        object.__setattr__(self, "hidden_paths", tuple(self.hidden_paths))
        for name in ("memory_bytes", "max_processes", "max_output_bytes", "disk_bytes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"Sandbox.{name} must be a positive integer or None, not {value!r}")
        if self.wall_seconds is not None and not self.wall_seconds > 0:
            raise ValueError(f"Sandbox.wall_seconds must be positive or None, not {self.wall_seconds!r}")
        for path in self.hidden_paths:
            if not isinstance(path, str) or not os.path.isabs(path):
                raise ValueError(f"Sandbox.hidden_paths must be absolute paths, not {path!r}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
            raise ValueError("Sandbox.env must map strings to strings")

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_bytes": self.memory_bytes,
            "wall_seconds": self.wall_seconds,
            "max_processes": self.max_processes,
            "max_output_bytes": self.max_output_bytes,
            "disk_bytes": self.disk_bytes,
            "network": self.network,
            "unprivileged": self.unprivileged,
            "hidden_paths": list(self.hidden_paths),
            "env": dict(self.env),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sandbox:
        """Strict: an unknown key is an error, because a misspelt limit silently ignored would be
        a limit not applied."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown Sandbox field(s): {', '.join(unknown)}")
        values = dict(data)
        if "hidden_paths" in values:
            values["hidden_paths"] = tuple(values["hidden_paths"])
        if "env" in values:
            values["env"] = dict(values["env"])
        return cls(**values)


@dataclass(frozen=True)
class Upload:
    """The uploaded program: a ``.py`` file, or a ``.zip`` / ``.tar.gz`` project (see
    ``isolation._upload``). ``data`` is left out of the repr: it can be megabytes."""

    name: str
    data: bytes = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "data": self.data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Upload:
        return cls(str(data["name"]), bytes(data["data"]))


@dataclass
class SandboxRun:
    """What the host half tells the runner (``memgauge run --sandbox PLAN.json``): the run's
    directories, the leased uid, which namespaces were made and what they are not (the host's own
    namespace ids, so the runner can check it really is in new ones before it mounts anything),
    and the program's environment."""

    sandbox: Sandbox
    run_dir: str
    workdir: str
    home: str
    tmp: str
    private: str
    uid: int | None = None
    user_reason: str = ""
    unshared: list[str] = field(default_factory=list)
    namespace_reason: str = ""
    host_namespaces: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    backstop_seconds: float | None = None

    @property
    def record_path(self) -> str:
        return os.path.join(self.private, "sandbox-record.json")

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["sandbox"] = self.sandbox.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SandboxRun:
        values = dict(data)
        values["sandbox"] = Sandbox.from_dict(values["sandbox"])
        return cls(**values)

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f)

    @classmethod
    def load(cls, path: str) -> SandboxRun:
        with open(path) as f:
            return cls.from_dict(json.load(f))


def empty_record() -> dict[str, Any]:
    """``applied`` {piece: detail}, ``not_applied`` {piece: reason}, ``hit`` {piece: what the run
    ran into} (a limit it reached)."""
    return {"applied": {}, "not_applied": {}, "hit": {}}


def memgauge_parent() -> str:
    """The directory memgauge is imported from: the runner and the program must import this copy."""
    import memgauge

    return os.path.dirname(os.path.dirname(os.path.realpath(memgauge.__file__)))
