"""``--gpu-snapshot FILE``: torch's CUDA memory history, recorded in the measured process and dumped
at its exit as the pickle PyTorch's memory_viz opens (https://pytorch.org/memory_viz).

``install_snapshot`` (called where the torch tracker connects) starts
``torch.cuda.memory._record_memory_history(max_entries=N, stacks="python")`` once the program has
initialised CUDA (``torch.cuda._lazy_call``: memgauge never initialises CUDA itself) and registers
``torch.cuda.memory._dump_snapshot(FILE)`` at exit. The history is a ring buffer of the last N
alloc/free events (each with its Python stack): N bounds the file. The first process that installs
it writes FILE; any other process of the run (it inherits the environment) writes ``FILE`` with its
pid before the extension. The runner reads the file back (``read_gpu_snapshot``) and attributes the
GPU peak to lines (``analysis.gpu_snapshot_peak``).

Under the tests' fake ``torch.cuda`` (``ENV_FAKE_CUDA``) the script's ``"snapshot"`` object is what
is dumped, in the same shape. Standard library only.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle

from memgauge._env import ENV_FAKE_CUDA, ENV_GPU_SNAPSHOT, ENV_GPU_SNAPSHOT_ENTRIES, ENV_GPU_SNAPSHOT_OWNER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_ENTRIES = 100_000


def snapshot_path(path: str, pid: int, owner: bool) -> str:
    """Where process ``pid`` dumps its snapshot: ``path`` for the owner, ``stem.PID.ext`` else."""
    if owner:
        return path
    root, ext = os.path.splitext(path)
    return f"{root}.{pid}{ext}"


def _entries(environ: dict[str, str] | os._Environ[str]) -> int:
    value = environ.get(ENV_GPU_SNAPSHOT_ENTRIES, "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_ENTRIES


def install_snapshot(torch: Any, environ: dict[str, str] | os._Environ[str] | None = None) -> str | None:
    """Record ``torch``'s CUDA memory history from CUDA's initialisation and dump it at exit to the
    file ``ENV_GPU_SNAPSHOT`` names; the path this process writes (None: no snapshot asked for)."""
    env = os.environ if environ is None else environ
    asked = env.get(ENV_GPU_SNAPSHOT, "")
    if not asked:
        return None
    owner = env.get(ENV_GPU_SNAPSHOT_OWNER, "") in ("", str(os.getpid()))
    env[ENV_GPU_SNAPSHOT_OWNER] = env.get(ENV_GPU_SNAPSHOT_OWNER) or str(os.getpid())
    path = snapshot_path(asked, os.getpid(), owner)
    fake = env.get(ENV_FAKE_CUDA, "")
    if fake:
        atexit.register(_dump_scripted, fake, path)
        return path
    cuda = torch.cuda
    entries = _entries(env)

    def start() -> None:
        cuda.memory._record_memory_history(max_entries=entries, stacks="python")

    if cuda.is_initialized():
        start()
    else:
        cuda._lazy_call(start)
    atexit.register(_dump, cuda, path)
    return path


def _dump(cuda: Any, path: str) -> None:
    try:
        if cuda.is_initialized():
            cuda.memory._dump_snapshot(path)
    except Exception:  # a snapshot that cannot be written must not change the program's exit
        pass


def _dump_scripted(script: str, path: str) -> None:
    try:
        with open(script, encoding="utf-8") as f:
            found = json.load(f)
        if found.get("initialized", True) and "snapshot" in found:
            with open(path, "wb") as out:
                pickle.dump(found["snapshot"], out, protocol=4)
    except (OSError, ValueError):
        pass
