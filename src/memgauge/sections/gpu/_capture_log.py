"""torch's CUDA caching allocator, read inside the measured process at each window's end.

The torch tracker (``sections/torch/_capture_track.Tracker``) owns one ``GpuLog``: it tells it the bytes of
every storage it counts (per device: the tensors layer) and calls ``window_end`` at each step's end, and
its record carries ``GpuLog.record()`` under ``"gpu"`` (``_wire``: ``GPU_FIELDS``). The log reads
each device's ``memory_stats`` through a ``CudaSource``: ``TorchCudaSource`` (the loaded torch) or,
in tests only, ``ScriptedCudaSource`` (figures from a JSON script named by ``ENV_FAKE_CUDA``).

It never initialises CUDA: a program that never touched the GPU reads nothing (and pays one call to
``torch.cuda.is_initialized`` per window). Peaks are exact per window because the log resets them
(``reset_peak_memory_stats``) after reading: a program that reads ``max_memory_allocated`` itself
sees the peak since the last step's end (docs/gpu.md). Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from memgauge._env import ENV_FAKE_CUDA

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class CudaSource(Protocol):
        """torch.cuda as far as the log needs it (``stats`` returns ``memory_stats``'s keys)."""

        def initialized(self) -> bool: ...
        def device_count(self) -> int: ...
        def stats(self, device: int) -> dict[str, int]: ...
        def reset_peaks(self, device: int) -> None: ...
        def uuid(self, device: int) -> str: ...


MAX_WINDOWS = 2000
STATS = (
    "allocated_bytes.all.current",
    "allocated_bytes.all.peak",
    "reserved_bytes.all.current",
    "reserved_bytes.all.peak",
    "active_bytes.all.current",
    "active_bytes.all.peak",
    "num_alloc_retries",
    "num_ooms",
)
# the record's ``gpu`` object (wire format, see ``_wire``): ``devices`` rows, ``windows`` rows
GPU_FIELDS = {"module_loading": "str", "devices": "list", "windows": "list", "tensors": "dict"}
GPU_DEVICE_FIELDS = {
    "index": "int",
    "uuid": "str",
    "allocated_peak": "int",
    "reserved_peak": "int",
    "active_peak": "int",
    "reserved_unallocated_at_peak": "int",
    "alloc_retries": "int",
    "ooms": "int",
}
GPU_WINDOW_FIELDS = {
    "kind": "str",
    "name": "str",
    "device": "int",
    "allocated_peak": "int",
    "reserved_peak": "int",
    "active_peak": "int",
    "allocated_end": "int",
    "reserved_end": "int",
}


class TorchCudaSource:
    """The loaded torch's ``torch.cuda`` (never imported here: ``modules`` is ``sys.modules``)."""

    def __init__(self, modules: dict[str, Any] | None = None) -> None:
        self._modules = sys.modules if modules is None else modules
        self._cuda_module: Any = None  # torch.cuda, once torch is there

    def _cuda(self) -> Any:
        return getattr(self._modules.get("torch"), "cuda", None)

    def initialized(self) -> bool:
        try:
            if self._cuda_module is None:  # asked at every step's end: looked up once
                self._cuda_module = self._cuda()
                if self._cuda_module is None:
                    return False
            cuda = self._cuda_module
            # is_initialized() is `_initialized and not _is_in_bad_fork()`: its flag read first, so
            # that a CPU loop's step does not call into torch (7 us a step in a real loop); a torch
            # without the flag is asked
            return bool(getattr(cuda, "_initialized", True) and cuda.is_initialized())
        except Exception:  # a partial torch: no figures, never a failed program
            return False

    def device_count(self) -> int:
        return int(self._cuda().device_count())

    def stats(self, device: int) -> dict[str, int]:
        stats = self._cuda().memory_stats(device)
        return {key: int(stats.get(key, 0)) for key in STATS}

    def reset_peaks(self, device: int) -> None:
        self._cuda().reset_peak_memory_stats(device)

    def uuid(self, device: int) -> str:
        return str(getattr(self._cuda().get_device_properties(device), "uuid", ""))


class ScriptedCudaSource:
    """A fake ``torch.cuda`` for tests: ``script`` is ``{"devices": [{"uuid": ..., "frames":
    [stats, ...]}]}``: a device's figures are its frame number N (the last one repeating) until its
    Nth ``reset_peaks``, as torch's peaks hold until reset; keys missing from a frame read 0.
    ``initialized`` is false while ``script["initialized"]`` is."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.reads = [0] * len(script.get("devices", []))
        self.resets = [0] * len(self.reads)

    @classmethod
    def from_file(cls, path: str) -> ScriptedCudaSource:
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def initialized(self) -> bool:
        return bool(self.script.get("initialized", True))

    def device_count(self) -> int:
        return len(self.reads)

    def stats(self, device: int) -> dict[str, int]:
        frames = self.script["devices"][device]["frames"]
        frame = frames[min(self.resets[device], len(frames) - 1)]
        self.reads[device] += 1
        return {key: int(frame.get(key, 0)) for key in STATS}

    def reset_peaks(self, device: int) -> None:
        self.resets[device] += 1

    def uuid(self, device: int) -> str:
        return str(self.script["devices"][device].get("uuid", ""))


def cuda_source(environ: dict[str, str] | os._Environ[str] | None = None) -> CudaSource:
    """The source a tracker reads: the scripted one where a test named its script, else torch."""
    script = (environ if environ is not None else os.environ).get(ENV_FAKE_CUDA)
    return ScriptedCudaSource.from_file(script) if script else TorchCudaSource()


def _device_index(device: str) -> int | None:
    """``cuda:1`` -> 1, ``cuda`` -> 0 (the current device, which is 0 unless the program set it),
    anything else (cpu, meta, mps) -> None."""
    if device == "cuda":
        return 0
    if device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    return None


class GpuLog:
    """The allocator's figures per device and per window, and the tensors' bytes per device."""

    def __init__(self, source: CudaSource | None = None) -> None:
        self._source = source
        self.module_loading = os.environ.get("CUDA_MODULE_LOADING", "")
        self.devices: dict[int, dict[str, Any]] = {}
        self.windows: list[dict[str, Any]] = []
        self.windows_dropped = 0
        # device -> [current, peak] bytes of the storages the tracker counts there
        self.tensors: dict[str, list[int]] = {}
        self.cap: int | None = None  # the bytes torch's reserve was capped at (``_capture_cap``)
        self.snapshot = ""  # the file this process dumps its memory history to (``_capture_snapshot``)
        # the windows open now (the step's, phases', blocks'): device -> peaks, folded at each read
        self._open: dict[object, dict[int, dict[str, int]]] = {_STEP: {}}
        self._lock = threading.RLock()
        # once CUDA is up it stays up: until then a step's end asks torch alone (no lock, no read)
        self._cuda_up = False

    @property
    def source(self) -> CudaSource:
        if self._source is None:
            self._source = cuda_source()
        return self._source

    def tensor_add(self, device: str, n: int) -> None:
        row = self.tensors.get(device)
        if row is None:
            row = self.tensors[device] = [0, 0]
        row[0] += n
        row[1] = max(row[1], row[0])

    def tensor_remove(self, device: str, n: int) -> None:
        row = self.tensors.get(device)
        if row is not None:
            row[0] -= n

    def _read(self, kind: str, name: str, *, reset: bool, close: object = None) -> None:
        """Read every device's peaks (since the last reset), fold them into the run's rows and
        every open window; with ``kind``, the window ``close`` ends and goes out as a row."""
        source = self.source
        if not source.initialized():
            return
        for device in range(source.device_count()):
            stats = source.stats(device)
            row = self.devices.get(device)
            if row is None:
                row = self.devices[device] = {"index": device, "uuid": source.uuid(device), **_peaks()}
                row.update(alloc_retries=0, ooms=0)
            figures = (
                stats["allocated_bytes.all.peak"],
                stats["reserved_bytes.all.peak"],
                stats["active_bytes.all.peak"],
            )
            _fold(row, *figures)
            row["alloc_retries"] = stats["num_alloc_retries"]
            row["ooms"] = stats["num_ooms"]
            for window in self._open.values():
                _fold(window.setdefault(device, _peaks()), *figures)
            if kind and close is not None and len(self.windows) < MAX_WINDOWS:
                peaks = self._open[close].pop(device)
                self.windows.append(
                    {
                        "kind": kind,
                        "name": name,
                        "device": device,
                        "allocated_peak": peaks["allocated_peak"],
                        "reserved_peak": peaks["reserved_peak"],
                        "active_peak": peaks["active_peak"],
                        "allocated_end": stats["allocated_bytes.all.current"],
                        "reserved_end": stats["reserved_bytes.all.current"],
                    }
                )
            elif kind and close is not None:
                self._open[close].pop(device)
                self.windows_dropped += 1
            if reset:
                source.reset_peaks(device)

    def reset(self) -> None:
        """Reset the peaks without reading them: a measured block starts its window here."""
        try:
            source = self.source
            if source.initialized():
                for device in range(source.device_count()):
                    source.reset_peaks(device)
        except Exception:  # a failing torch.cuda must not break the program
            self._source = _Silent()

    def window_end(self, kind: str, name: str | int) -> None:
        """A step ended: its peaks per device (every reading since the last step's end, phase
        boundaries included), then a fresh window."""
        if not self._cuda_up:
            # every step of a CPU loop comes here: in a loop of 6.5 ms steps this path was 14 us
            try:
                if not (self._source or self.source).initialized():
                    return  # as _read would: nothing to read
            except Exception:  # a failing source must not break the program: no more figures
                self._source = _Silent()
                return
            self._cuda_up = True
        with self._lock:
            try:
                self._read(kind, str(name), reset=True, close=_STEP)
            except Exception:  # a failing torch.cuda must not break the program: no more figures
                self._source = _Silent()

    def window_open(self, key: object) -> None:
        """A phase (or a measured block) ``key`` begins: the peaks so far go to the run and to every
        open window, then are reset, so that ``window_close`` sees this window's own."""
        with self._lock:
            try:
                self._read("", "", reset=True)
            except Exception:
                self._source = _Silent()
            self._open[key] = {}

    def window_close(self, key: object, kind: str = "", name: str = "") -> dict[int, dict[str, int]]:
        """The window ``key`` ends: its peaks per device (empty where CUDA never ran in it), out as
        a ``windows`` row too when ``kind`` is given ("phase"). Every reset in between (a step's
        end, another phase's boundary, in any thread) read the peaks first and folded them into
        every open window: the figures are exact, and include what other threads allocated."""
        with self._lock:
            if key not in self._open:
                return {}
            try:
                self._read(kind, name, reset=True, close=key if kind else None)
            except Exception:
                self._source = _Silent()
            return self._open.pop(key)

    def record(self) -> dict[str, Any] | None:
        """The ``gpu`` object of the tracker's record; None when CUDA never ran and no tensor lived
        on a GPU."""
        with self._lock:
            try:
                self._read("", "", reset=False)  # the window still open counts for the run's peaks
            except Exception:
                self._source = _Silent()
        gpu_tensors = {d: row[1] for d, row in self.tensors.items() if _device_index(d) is not None}
        if not self.devices and not gpu_tensors and not self.snapshot:
            return None
        return {
            **({"cap_bytes": self.cap} if self.cap else {}),
            **({"snapshot": self.snapshot} if self.snapshot else {}),
            "module_loading": self.module_loading,
            "devices": [self.devices[d] for d in sorted(self.devices)],
            "windows": self.windows,
            "windows_dropped": self.windows_dropped,
            "tensors": {str(_device_index(d)): n for d, n in sorted(gpu_tensors.items())},
        }


_STEP = "step"  # the key of the step window, always open


def _peaks() -> dict[str, int]:
    return {"allocated_peak": 0, "reserved_peak": 0, "active_peak": 0, "reserved_unallocated_at_peak": 0}


def _fold(row: dict[str, Any], allocated: int, reserved: int, active: int) -> None:
    """One reading of the peaks into a row of peaks (the run's, or a window's)."""
    if allocated > row["allocated_peak"] or not row["allocated_peak"]:
        # reserved can only grow inside a window without empty_cache: its peak there is an upper
        # bound of what was reserved when allocated peaked
        row["reserved_unallocated_at_peak"] = max(0, reserved - allocated)
    row["allocated_peak"] = max(row["allocated_peak"], allocated)
    row["reserved_peak"] = max(row["reserved_peak"], reserved)
    row["active_peak"] = max(row["active_peak"], active)


class _Silent:
    """What a log reads from once torch.cuda failed: nothing."""

    def initialized(self) -> bool:
        return False

    def device_count(self) -> int:
        return 0

    def stats(self, device: int) -> dict[str, int]:
        return {}

    def reset_peaks(self, device: int) -> None:
        pass

    def uuid(self, device: int) -> str:
        return ""
