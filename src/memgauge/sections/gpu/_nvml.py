"""NVML seen from outside the measured program: devices, their used memory, the processes on them.

``NvmlSource`` is the interface the sampler (``_nvml_sampler``) polls; ``PynvmlSource`` the real one
(nvidia-ml-py, imported on first use), ``ScriptedNvmlSource`` the fake tests inject, or name in
``ENV_FAKE_NVML`` (a test hook: a JSON script the runner reads instead of NVML). ``open_nvml``
returns a source, or None and the one line saying why there are no GPU figures.

The device's used memory is NVML's v2 figure (what nvidia-smi shows): v1 carries the driver's own
reserve (480 MiB on an H100, docs/gpu-facts.md). Devices are named by UUID without NVML's ``GPU-``
prefix, which is how torch spells them.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any, Protocol

from memgauge._env import ENV_FAKE_NVML
from memgauge.sections.gpu._nvml_driver import NO_DRIVER, no_driver


@dataclass(frozen=True)
class NvmlDevice:
    index: int
    uuid: str
    name: str
    total_bytes: int


@dataclass(frozen=True)
class NvmlReading:
    """One poll of one device: used bytes (v2), utilisation in percent (None: not supported), and
    pid -> used bytes of each compute process NVML lists on it; ``memory_utilization``: the percent
    of time device memory was read or written (NVML's ``utilization.memory``)."""

    used_bytes: int
    utilization: int | None
    processes: dict[int, int]
    memory_utilization: int | None = None


class NvmlSource(Protocol):
    def devices(self) -> list[NvmlDevice]: ...
    def read(self, index: int) -> NvmlReading: ...
    def close(self) -> None: ...


def strip_uuid(uuid: str) -> str:
    return uuid[4:] if uuid.startswith("GPU-") else uuid


class PynvmlSource:
    """The real NVML through nvidia-ml-py (``pynvml``)."""

    def __init__(self, pynvml: Any) -> None:
        self._nv = pynvml
        pynvml.nvmlInit()
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        self._v2 = getattr(pynvml, "nvmlMemory_v2", None)

    def devices(self) -> list[NvmlDevice]:
        nv = self._nv
        out = []
        for i, handle in enumerate(self._handles):
            name = nv.nvmlDeviceGetName(handle)
            uuid = nv.nvmlDeviceGetUUID(handle)
            out.append(
                NvmlDevice(
                    index=i,
                    uuid=strip_uuid(uuid.decode() if isinstance(uuid, bytes) else str(uuid)),
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    total_bytes=int(self._memory(handle).total),
                )
            )
        return out

    def _memory(self, handle: Any) -> Any:
        if self._v2 is not None:
            try:
                return self._nv.nvmlDeviceGetMemoryInfo(handle, version=self._v2)
            except self._nv.NVMLError:
                self._v2 = None  # a driver without v2: v1 from now on (it includes the driver's reserve)
        return self._nv.nvmlDeviceGetMemoryInfo(handle)

    def read(self, index: int) -> NvmlReading:
        nv = self._nv
        handle = self._handles[index]
        try:
            rates = nv.nvmlDeviceGetUtilizationRates(handle)
            utilization: int | None = int(rates.gpu)
            memory_utilization: int | None = int(rates.memory)
        except nv.NVMLError:
            utilization = memory_utilization = None
        processes = {
            int(p.pid): int(p.usedGpuMemory)
            for p in nv.nvmlDeviceGetComputeRunningProcesses(handle)
            if p.usedGpuMemory is not None
        }
        return NvmlReading(int(self._memory(handle).used), utilization, processes, memory_utilization)

    def close(self) -> None:
        with contextlib.suppress(self._nv.NVMLError):
            self._nv.nvmlShutdown()


class ScriptedNvmlSource:
    """A fake NVML: ``script`` is ``{"devices": [{"uuid", "name", "total", "frames": [{"used",
    "utilization", "memory_utilization", "processes": {pid: bytes}}, ...]}]}``; each ``read`` of a
    device returns its next frame, the last one repeating. A pid written as ``"$main"`` stands for
    ``main_pid``."""

    def __init__(self, script: dict[str, Any], main_pid: int | None = None) -> None:
        self.script = script
        self.main_pid = main_pid
        self.reads = [0] * len(script.get("devices", []))
        self.closed = False

    @classmethod
    def from_file(cls, path: str, main_pid: int | None = None) -> ScriptedNvmlSource:
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f), main_pid)

    def devices(self) -> list[NvmlDevice]:
        return [
            NvmlDevice(i, strip_uuid(str(d.get("uuid", ""))), str(d.get("name", "")), int(d.get("total", 0)))
            for i, d in enumerate(self.script.get("devices", []))
        ]

    def _pid(self, key: str) -> int:
        if key == "$main" and self.main_pid is not None:
            return self.main_pid
        return int(key)

    def read(self, index: int) -> NvmlReading:
        frames = self.script["devices"][index]["frames"]
        frame = frames[min(self.reads[index], len(frames) - 1)]
        self.reads[index] += 1
        utilization = frame.get("utilization")
        memory = frame.get("memory_utilization")
        return NvmlReading(
            memory_utilization=None if memory is None else int(memory),
            used_bytes=int(frame.get("used", 0)),
            utilization=None if utilization is None else int(utilization),
            processes={self._pid(str(k)): int(v) for k, v in dict(frame.get("processes") or {}).items()},
        )

    def close(self) -> None:
        self.closed = True


def open_nvml(
    environ: dict[str, str] | os._Environ[str] | None = None, main_pid: int | None = None
) -> tuple[NvmlSource | None, str]:
    """NVML, or None and why not (no nvidia-ml-py, no driver, no device): one line for the report.
    ``main_pid`` is the program's pid, for a scripted source's ``"$main"``."""
    script = (environ if environ is not None else os.environ).get(ENV_FAKE_NVML)
    if script:
        return ScriptedNvmlSource.from_file(script, main_pid), ""
    if no_driver(environ):
        # NVML has nothing to report, and importing nvidia-ml-py (~30 ms) would only delay every
        # run on a machine without a GPU
        return None, NO_DRIVER
    try:
        import pynvml  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None, "no GPU figures from outside the program: nvidia-ml-py is not installed (extra 'gpu')"
    try:
        source = PynvmlSource(pynvml)
    except pynvml.NVMLError as e:
        return None, f"no GPU figures from outside the program: NVML unavailable ({e})"
    if not source.devices():
        source.close()
        return None, "no GPU figures from outside the program: NVML sees no device"
    return source, ""
