"""What this host lets a sandboxed run have: whether ``unshare`` can make new namespaces here
(probed once per process), and whether the runner really is in namespaces of its own."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

from memgauge.isolation._sandbox import SAFE_PATH

PROBES: dict[tuple[str, ...], str] = {}


def unshare_problem(flags: tuple[str, ...]) -> str:
    """Why ``unshare FLAGS`` cannot work here ("" when it can); tried once per process."""
    if flags in PROBES:
        return PROBES[flags]
    exe = unshare_command()
    problem = ""
    if exe is None:
        problem = "the unshare command (util-linux) is not installed"
    else:
        try:
            done = subprocess.run(
                [exe, *flags, "--", "true"], capture_output=True, text=True, timeout=20, check=False
            )
            if done.returncode != 0:
                detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
                who = "" if os.geteuid() == 0 else f" (memgauge runs as uid {os.geteuid()}, not root)"
                problem = f"unshare {' '.join(flags)} failed: {detail}{who}"
        except (OSError, subprocess.SubprocessError) as e:
            problem = f"unshare {' '.join(flags)} failed: {e}"
    PROBES[flags] = problem
    return problem


def namespace_ids() -> dict[str, str]:
    ids = {}
    for kind in ("net", "mnt"):
        with contextlib.suppress(OSError):
            ids[kind] = os.readlink(f"/proc/self/ns/{kind}")
    return ids


def in_new_namespace(kind: str, host: dict[str, str]) -> bool:
    """This process is in a ``kind`` namespace of its own: not the host's (as the plan recorded
    it), not its parent's (``unshare`` execs the runner, so the parent is the job's process), not
    init's."""
    try:
        now = os.readlink(f"/proc/self/ns/{kind}")
    except OSError:
        return False
    if not host.get(kind):
        return False
    others = {host[kind]}
    for pid in (os.getppid(), 1):
        with contextlib.suppress(OSError):
            others.add(os.readlink(f"/proc/{pid}/ns/{kind}"))
    return now not in others


def unshare_command() -> str | None:
    """The ``unshare`` executable, also where a scrubbed PATH would not find it."""
    return shutil.which("unshare") or shutil.which("unshare", path=SAFE_PATH + ":/usr/sbin:/sbin")
