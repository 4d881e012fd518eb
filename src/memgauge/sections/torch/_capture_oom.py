"""What torch's out-of-memory messages say: the size asked for and the device.

The texts are torch's (CPU: ``DefaultCPUAllocator: can't allocate memory: you tried to allocate N
bytes``; CUDA, current and older formats, verbatim in docs/gpu-facts.md). Pure string work, so the
parsing is tested on those texts without a GPU.
"""

from __future__ import annotations

import sys

_UNITS = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


_OOM_TEXTS = ("DefaultCPUAllocator: can't allocate memory", "CUDA out of memory", "out of memory")


def is_oom(exception: BaseException | None) -> bool:
    """torch's out-of-memory errors: ``torch.OutOfMemoryError`` (CUDA) or the CPU allocator's
    ``RuntimeError``; a plain Python ``MemoryError`` is not torch's."""
    if exception is None:
        return False
    oom = getattr(sys.modules.get("torch"), "OutOfMemoryError", None)
    if isinstance(oom, type) and isinstance(exception, oom):
        return True
    return isinstance(exception, RuntimeError) and any(text in str(exception) for text in _OOM_TEXTS)


def requested_bytes(message: str) -> int | None:
    """The size an out-of-memory message says was asked for: the CPU allocator's exact ``you tried
    to allocate N bytes``, CUDA's ``Tried to allocate 3.00 GiB`` (two decimals, so within 0.5% of
    the unit)."""
    lowered = message.lower()
    marker = "tried to allocate "
    at = lowered.find(marker)
    if at < 0:
        return None
    words = message[at + len(marker) :].split()
    if len(words) < 2:
        return None
    unit = words[1].rstrip(".;,)")
    try:
        number = float(words[0])
    except ValueError:
        return None
    scale = _UNITS.get(unit)
    return None if scale is None else int(number * scale)


def oom_device(message: str) -> str:
    """``cpu`` for the CPU allocator's message, ``cuda:N`` for CUDA's (both formats name GPU N)."""
    if "DefaultCPUAllocator" in message:
        return "cpu"
    at = message.find("GPU ")
    if at >= 0:
        digits = ""
        for ch in message[at + 4 :]:
            if not ch.isdigit():
                break
            digits += ch
        if digits:
            return f"cuda:{digits}"
    return "cuda" if "CUDA" in message else ""


def oom_fields(message: str) -> dict[str, object]:
    """The message (cut to 2,000 characters), the size asked for and the device of an OOM record."""
    return {
        "message": message[:2000],
        "requested_bytes": requested_bytes(message),
        "device": oom_device(message),
    }
