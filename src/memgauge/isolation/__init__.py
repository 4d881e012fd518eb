"""Isolation: what stands between an untrusted program and the host.

Namespaces, mounts, a leased uid, cgroup limits, scrubbed environments (``Sandbox``), and the
safe unpacking of uploads (``inspect_upload``). Lazy: plain ``memgauge run`` never loads it.
"""

from __future__ import annotations

from memgauge._lazy import attach

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.isolation._sandbox import (
        MAX_PROFILE_BYTES,
        PIECES,
        HostRun,
        Sandbox,
        SandboxRun,
        SandboxSetup,
        Upload,
    )
    from memgauge.isolation._upload import (
        UploadError,
        UploadLimits,
        inspect_upload,
        resolve_entry,
        safe_py_name,
    )

_NAMES = {
    "HostRun": "_sandbox",
    "inspect_upload": "_upload",
    "MAX_PROFILE_BYTES": "_sandbox",
    "PIECES": "_sandbox",
    "resolve_entry": "_upload",
    "safe_py_name": "_upload",
    "Sandbox": "_sandbox",
    "SandboxRun": "_sandbox",
    "SandboxSetup": "_sandbox",
    "Upload": "_sandbox",
    "UploadError": "_upload",
    "UploadLimits": "_upload",
}
__all__ = [
    "MAX_PROFILE_BYTES",
    "PIECES",
    "HostRun",
    "Sandbox",
    "SandboxRun",
    "SandboxSetup",
    "Upload",
    "UploadError",
    "UploadLimits",
    "inspect_upload",
    "resolve_entry",
    "safe_py_name",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
