"""Isolation: what stands between a program and the host.

The runner drives one ``Isolation`` through every run: ``NoIsolation`` for a plain ``memgauge
run``, ``SandboxIsolation`` for a sandboxed one (namespaces, mounts, a leased uid, process and
output limits, a scrubbed environment; its host half is ``HostRun``), and the ``HardLimits`` its
watchdog stops the run at. Also the safe unpacking of uploads (``inspect_upload``). Lazy: plain
``memgauge run`` loads only the no-op default and the limits.

The modules, one job each: ``_protocol`` (the seam: the protocol, its default, the limits), ``_sandbox``
(what a sandboxed run is allowed, its plan and its record), ``_host`` (the host half), ``_uids``
(uid leases), ``_probes`` (what the host allows), ``_setup`` (the runner half's pieces), ``_mounts``
and ``_libc`` (the filesystem piece), ``_sandboxed`` (the runner half through the run), and
``_upload`` with ``_upload_rules``, ``_upload_zip``, ``_upload_tar``, ``_upload_sinks``.
"""

from __future__ import annotations

from memgauge._lazy import attach

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.isolation._host import HostRun, reap_orphaned_runs
    from memgauge.isolation._protocol import HardLimits, Isolation, NoIsolation
    from memgauge.isolation._sandbox import MAX_PROFILE_BYTES, PIECES, Sandbox, SandboxRun, Upload
    from memgauge.isolation._sandboxed import SandboxIsolation
    from memgauge.isolation._upload import inspect_upload, resolve_entry
    from memgauge.isolation._upload_rules import UploadError, UploadLimits, safe_py_name

_NAMES = {
    "HardLimits": "_protocol",
    "HostRun": "_host",
    "inspect_upload": "_upload",
    "Isolation": "_protocol",
    "MAX_PROFILE_BYTES": "_sandbox",
    "NoIsolation": "_protocol",
    "reap_orphaned_runs": "_host",
    "PIECES": "_sandbox",
    "resolve_entry": "_upload",
    "safe_py_name": "_upload_rules",
    "Sandbox": "_sandbox",
    "SandboxIsolation": "_sandboxed",
    "SandboxRun": "_sandbox",
    "Upload": "_sandbox",
    "UploadError": "_upload_rules",
    "UploadLimits": "_upload_rules",
}
__all__ = [
    "MAX_PROFILE_BYTES",
    "PIECES",
    "HardLimits",
    "HostRun",
    "Isolation",
    "NoIsolation",
    "Sandbox",
    "SandboxIsolation",
    "SandboxRun",
    "Upload",
    "UploadError",
    "UploadLimits",
    "inspect_upload",
    "reap_orphaned_runs",
    "resolve_entry",
    "safe_py_name",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
