"""Measure GPU and PyTorch ground truth on a real NVIDIA card and print one JSON document.

Usage::

    python3 bench/gpu_probe.py > gpu_probe.json          # everything, ~3.5 minutes on an H100
    python3 bench/gpu_probe.py --only context_lazy,allocator
    python3 bench/gpu_probe.py --list

Self-contained on purpose (stdlib, torch, pynvml from nvidia-ml-py; no memgauge import): the future
GPU features of memgauge are built and tested on machines without a GPU, behind fakes, and these
are the figures the fakes must reproduce. docs/gpu-facts.md records one run and what it means.

Every measurement runs in its own child process (``sys.executable`` re-running this file with
``--child NAME OUT``) so that each one starts with a clean CUDA context: no earlier allocation,
cached block, loaded module or cuBLAS handle leaks into it. The parent imports neither torch nor
pynvml. A child writes its result file after every step, so a crash or a time-out still leaves the
steps done before it; each step catches its own exception and records it as text. Only reads are made
of the card's settings: clocks, power limits and modes are never changed.

Progress goes to stderr; the JSON document goes to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from typing import Any

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

_STATUS_FIELDS = (
    "VmPeak",
    "VmSize",
    "VmLck",
    "VmPin",
    "VmHWM",
    "VmRSS",
    "RssAnon",
    "RssFile",
    "RssShmem",
    "VmData",
    "VmSwap",
)


# --------------------------------------------------------------------------------------------------
# helpers used inside the children


def _proc_status() -> dict[str, int]:
    """The kernel's memory figures of this process from /proc/self/status, in bytes."""
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in _STATUS_FIELDS:
                out[key] = int(rest.split()[0]) * KiB  # the kernel writes kB (KiB)
    return out


def _nspid() -> str | None:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("NSpid:"):
                return line.split(":", 1)[1].strip()
    return None


def _maps_summary() -> dict[str, Any]:
    """Virtual size of this process's mappings grouped by what backs them (device files, anon, files)."""
    groups: dict[str, dict[str, int]] = {}
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            if path.startswith("/dev/nvidia"):
                key = path
            elif path.startswith("/dev/"):
                key = "/dev/other"
            elif not path:
                key = "anonymous"
            elif path.startswith("["):
                key = path
            else:
                key = "files"
            g = groups.setdefault(key, {"count": 0, "bytes": 0})
            g["count"] += 1
            g["bytes"] += hi - lo
    return groups


class _Nvml:
    """Read-only NVML views of device 0 (the only GPU on the probe machine) and of this process."""

    def __init__(self) -> None:
        import pynvml

        self.nv = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.pid = os.getpid()

    def device_memory(self) -> dict[str, Any]:
        nv = self.nv
        m = nv.nvmlDeviceGetMemoryInfo(self.handle)
        out: dict[str, Any] = {"total": m.total, "free": m.free, "used": m.used}
        try:
            m2 = nv.nvmlDeviceGetMemoryInfo(self.handle, version=nv.nvmlMemory_v2)
            out["v2"] = {"total": m2.total, "free": m2.free, "used": m2.used, "reserved": m2.reserved}
        except Exception as e:
            out["v2_error"] = f"{type(e).__name__}: {e}"
        return out

    def processes(self) -> list[dict[str, Any]]:
        procs = self.nv.nvmlDeviceGetComputeRunningProcesses(self.handle)
        return [{"pid": p.pid, "used": p.usedGpuMemory} for p in procs]

    def snap(self) -> dict[str, Any]:
        procs = self.processes()
        own = [p for p in procs if p["pid"] == self.pid]
        return {
            "t": time.time(),
            "device": self.device_memory(),
            "processes": procs,
            "own_pid": self.pid,
            "own_process_used": own[0]["used"] if own else None,
            "own_pid_listed": bool(own),
        }


class _Recorder:
    """The child's result: saved to its file after every step, so partial results survive a crash."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {"errors": {}}

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def save(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.data, f, default=str)
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        except BaseException as e:  # a failed step is a finding, not the end of the child
            if isinstance(e, KeyboardInterrupt | SystemExit):
                raise
            self.data["errors"][name] = {
                "type": f"{type(e).__module__}.{type(e).__qualname__}",
                "message": str(e),
                "traceback": traceback.format_exc(limit=6),
            }
        finally:
            self.data.setdefault("step_seconds", {})[name] = round(time.perf_counter() - t0, 4)
            self.save()


def _exc_info(e: BaseException) -> dict[str, Any]:
    return {
        "type": f"{type(e).__module__}.{type(e).__qualname__}",
        "mro": [f"{c.__module__}.{c.__qualname__}" for c in type(e).__mro__],
        "is_RuntimeError": isinstance(e, RuntimeError),
        "is_MemoryError": isinstance(e, MemoryError),
        "message": str(e),
    }


def _torch_mem(torch: Any) -> dict[str, Any]:
    """The caching allocator's figures that the GPU features will read."""
    s = torch.cuda.memory_stats()
    keys = (
        "allocated_bytes.all.current",
        "allocated_bytes.small_pool.current",
        "allocated_bytes.large_pool.current",
        "reserved_bytes.all.current",
        "reserved_bytes.small_pool.current",
        "reserved_bytes.large_pool.current",
        "active_bytes.all.current",
        "inactive_split_bytes.all.current",
        "inactive_split.all.current",
        "requested_bytes.all.current",
        "segment.all.current",
        "segment.small_pool.current",
        "segment.large_pool.current",
        "allocated_bytes.all.peak",
        "reserved_bytes.all.peak",
        "num_alloc_retries",
        "num_ooms",
    )
    return {
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "stats": {k: s.get(k) for k in keys},
    }


def _segments(torch: Any) -> list[dict[str, Any]]:
    """Segments of the caching allocator with their blocks (sizes and states), from memory_snapshot()."""
    out = []
    for seg in torch.cuda.memory_snapshot():
        out.append(
            {
                "segment_type": seg.get("segment_type"),
                "total_size": seg.get("total_size"),
                "allocated_size": seg.get("allocated_size"),
                "blocks": [
                    [b.get("size"), b.get("requested_size"), b.get("state")] for b in seg.get("blocks", [])
                ],
            }
        )
    return out


def _sync(torch: Any) -> None:
    torch.cuda.synchronize()


def _import_torch_cuda() -> Any:
    import torch

    torch.cuda.init()
    torch.cuda.synchronize()  # creates the primary context without allocating through torch
    return torch


def _fields(struct: Any) -> dict[str, Any]:
    """A ctypes structure from pynvml as a dict."""
    return {f[0]: getattr(struct, f[0]) for f in struct._fields_}


def _jsonable(v: Any) -> Any:
    if isinstance(v, str | int | float | bool) or v is None:
        return v
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)


# --------------------------------------------------------------------------------------------------
# the measurements, one per child process


def child_env(rec: _Recorder) -> None:
    """Versions of everything, the card's properties as torch and NVML see them."""
    rec["python"] = sys.version
    rec["platform"] = platform.platform()
    rec["kernel"] = platform.release()
    rec["nproc"] = os.cpu_count()
    with rec.step("meminfo"), open("/proc/meminfo", encoding="ascii") as f:
        rec["host_meminfo_kib"] = {
            line.split(":")[0]: int(line.split()[1])
            for line in f
            if line.split(":")[0] in ("MemTotal", "MemFree", "MemAvailable")
        }
    with rec.step("packages"):
        from importlib import metadata

        vers = {}
        for name in ("torch", "nvidia-ml-py", "numpy", "triton"):
            try:
                vers[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                vers[name] = None
        rec["package_versions"] = vers
    with rec.step("nvml"):
        nv = _Nvml()
        p = nv.nv
        h = nv.handle
        info: dict[str, Any] = {
            "driver_version": p.nvmlSystemGetDriverVersion(),
            "nvml_version": p.nvmlSystemGetNVMLVersion(),
            "cuda_driver_version": p.nvmlSystemGetCudaDriverVersion(),
            "device_count": p.nvmlDeviceGetCount(),
            "name": p.nvmlDeviceGetName(h),
            "uuid": p.nvmlDeviceGetUUID(h),
            "pci_bus_id": p.nvmlDeviceGetPciInfo(h).busId,
            "memory": nv.device_memory(),
            "processes_at_start": nv.processes(),
        }
        for key, fn in (
            ("power_limit_mw", lambda: p.nvmlDeviceGetEnforcedPowerLimit(h)),
            ("max_sm_clock_mhz", lambda: p.nvmlDeviceGetMaxClockInfo(h, p.NVML_CLOCK_SM)),
            ("max_mem_clock_mhz", lambda: p.nvmlDeviceGetMaxClockInfo(h, p.NVML_CLOCK_MEM)),
            ("sm_clock_mhz_idle", lambda: p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM)),
            ("compute_mode", lambda: p.nvmlDeviceGetComputeMode(h)),
            ("persistence_mode", lambda: p.nvmlDeviceGetPersistenceMode(h)),
            ("ecc_mode", lambda: p.nvmlDeviceGetEccMode(h)),
            ("mig_mode", lambda: p.nvmlDeviceGetMigMode(h)),
            ("bar1_memory", lambda: _fields(p.nvmlDeviceGetBAR1MemoryInfo(h))),
        ):
            try:
                info[key] = fn()
            except Exception as e:
                info[key] = f"error {type(e).__name__}: {e}"
        rec["nvml"] = _jsonable(info)
    with rec.step("torch"):
        import torch

        rec["torch"] = {
            "version": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "is_available": torch.cuda.is_available(),
            "device_count": torch.cuda.device_count(),
            "CUDA_MODULE_LOADING_env_before_init": os.environ.get("CUDA_MODULE_LOADING"),
        }
    with rec.step("torch_device"):
        torch.cuda.init()
        props = torch.cuda.get_device_properties(0)
        rec["device_properties"] = {
            k: _jsonable(getattr(props, k)) for k in dir(props) if not k.startswith("_")
        }
        rec["torch"]["CUDA_MODULE_LOADING_env_after_init"] = os.environ.get("CUDA_MODULE_LOADING")
        rec["torch"]["capability"] = list(torch.cuda.get_device_capability(0))
        rec["torch"]["mem_get_info"] = list(torch.cuda.mem_get_info())
        rec["torch"]["float32_matmul_precision_default"] = torch.get_float32_matmul_precision()
        rec["torch"]["matmul_allow_tf32_default"] = torch.backends.cuda.matmul.allow_tf32
        rec["torch"]["cudnn_allow_tf32_default"] = torch.backends.cudnn.allow_tf32
        rec["torch"]["alloc_backend"] = torch.cuda.get_allocator_backend()


def _context_point(rec: _Recorder, nv: _Nvml, torch: Any, name: str, baseline_used: int) -> None:
    s = nv.snap()
    s["host"] = _proc_status()
    dev_used = s["device"]["used"]
    s["device_used_delta"] = dev_used - baseline_used
    if torch is not None and torch.cuda.is_initialized():
        tm = _torch_mem(torch)
        s["torch"] = tm
        reserved = tm["memory_reserved"]
        s["device_used_delta_minus_reserved"] = s["device_used_delta"] - reserved
        if s["own_process_used"] is not None:
            s["process_used_minus_reserved"] = s["own_process_used"] - reserved
        s["mem_get_info"] = list(torch.cuda.mem_get_info())
        s["processes_used_minus_reserved"] = [
            None if p["used"] is None else p["used"] - reserved for p in s["processes"]
        ]
    rec["points"][name] = s
    rec.save()


def child_context(rec: _Recorder) -> None:
    """CUDA context size (NVML process and device views), before/after init, cuBLAS, cuDNN, a step."""
    rec["CUDA_MODULE_LOADING_env_at_start"] = os.environ.get("CUDA_MODULE_LOADING")
    rec["points"] = {}
    rec["pid"] = os.getpid()
    rec["ppid"] = os.getppid()
    rec["nspid"] = _nspid()
    nv = _Nvml()
    base = nv.device_memory()["used"]
    rec["baseline_device_used"] = base
    torch = None
    with rec.step("before_import"):
        _context_point(rec, nv, None, "before_import_torch", base)
    with rec.step("import"):
        t0 = time.perf_counter()
        import torch

        rec["import_torch_s"] = time.perf_counter() - t0
        _context_point(rec, nv, torch, "after_import_torch", base)
    with rec.step("init"):
        t0 = time.perf_counter()
        torch.cuda.init()
        _sync(torch)  # creates the primary context; no kernel launched, nothing allocated
        rec["init_no_kernel_s"] = time.perf_counter() - t0
        _context_point(rec, nv, torch, "after_init_no_kernel", base)
        x = torch.zeros(1, device="cuda")  # the first kernel launch
        _sync(torch)
        rec["init_plus_tiny_tensor_s"] = time.perf_counter() - t0
        rec["CUDA_MODULE_LOADING_env_after_init"] = os.environ.get("CUDA_MODULE_LOADING")
        _context_point(rec, nv, torch, "after_init_tiny_tensor", base)
    with rec.step("pid_matching"):
        props = torch.cuda.get_device_properties(0)
        torch_uuid = str(getattr(props, "uuid", ""))
        nvml_uuid = nv.nv.nvmlDeviceGetUUID(nv.handle)
        if isinstance(nvml_uuid, bytes):
            nvml_uuid = nvml_uuid.decode()
        procs = nv.processes()
        rec["pid_matching"] = {
            "os_getpid": os.getpid(),
            "nspid": _nspid(),
            "nvml_pids": [p["pid"] for p in procs],
            "getpid_in_nvml": os.getpid() in [p["pid"] for p in procs],
            "torch_uuid": torch_uuid,
            "nvml_uuid": nvml_uuid,
            "uuid_match_after_GPU_prefix": nvml_uuid.removeprefix("GPU-") == torch_uuid,
            "torch_pci": [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")],
            "nvml_pci_bus_id": nv.nv.nvmlDeviceGetPciInfo(nv.handle).busId,
            "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }
        try:
            rec["pid_matching"]["torch_list_gpu_processes"] = torch.cuda.list_gpu_processes()
        except Exception as e:
            rec["pid_matching"]["torch_list_gpu_processes"] = f"error {type(e).__name__}: {e}"
        try:
            rec["pid_matching"]["torch_device_memory_used"] = torch.cuda.device_memory_used()
        except Exception as e:
            rec["pid_matching"]["torch_device_memory_used"] = f"error {type(e).__name__}: {e}"
    with rec.step("matmul_fp32"):
        a = torch.randn(1024, 1024, device="cuda")
        b = a @ a
        _sync(torch)
        _context_point(rec, nv, torch, "after_first_matmul_fp32", base)
    with rec.step("matmul_bf16"):
        c = a.bfloat16() @ a.bfloat16()
        _sync(torch)
        _context_point(rec, nv, torch, "after_first_matmul_bf16", base)
    with rec.step("conv"):
        img = torch.randn(8, 3, 64, 64, device="cuda")
        w = torch.randn(16, 3, 3, 3, device="cuda")
        y = torch.nn.functional.conv2d(img, w, padding=1)
        _sync(torch)
        rec["cudnn_enabled"] = torch.backends.cudnn.enabled
        _context_point(rec, nv, torch, "after_first_conv", base)
    with rec.step("train_step"):
        model = torch.nn.Sequential(
            torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)
        ).cuda()
        opt = torch.optim.Adam(model.parameters())
        inp = torch.randn(64, 256, device="cuda")
        loss = torch.nn.functional.cross_entropy(model(inp), torch.randint(0, 10, (64,), device="cuda"))
        loss.backward()
        opt.step()
        _sync(torch)
        _context_point(rec, nv, torch, "after_first_adam_step", base)
    with rec.step("empty_cache"):
        del x, a, b, c, img, w, y, model, opt, inp, loss
        torch.cuda.empty_cache()
        _sync(torch)
        _context_point(rec, nv, torch, "after_del_all_and_empty_cache", base)
        rec["segments_left_after_empty_cache"] = _segments(torch)
    with rec.step("clear_cublas_workspaces"):
        # what stays allocated after empty_cache: cuBLAS workspaces are held by torch per handle/stream
        torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.empty_cache()
        _sync(torch)
        _context_point(rec, nv, torch, "after_clear_cublas_workspaces_and_empty_cache", base)


def child_host(rec: _Recorder) -> None:
    """Host-side /proc/self/status figures through import, CUDA init, a 1 GiB device tensor, pinned memory."""
    rec["points"] = {}

    def point(name: str, maps: bool = False) -> None:
        p: dict[str, Any] = {"status": _proc_status()}
        if maps:
            p["maps"] = _maps_summary()
        rec["points"][name] = p
        rec.save()

    point("start", maps=True)
    torch = None
    with rec.step("import"):
        import torch

        point("after_import_torch", maps=True)
    with rec.step("init"):
        torch.cuda.init()
        x = torch.zeros(1, device="cuda")
        _sync(torch)
        point("after_cuda_init_tiny_tensor", maps=True)
    with rec.step("gib_tensor"):
        big = torch.empty(GiB, dtype=torch.uint8, device="cuda")
        _sync(torch)
        point("after_1GiB_device_tensor_empty")
        big.fill_(1)
        _sync(torch)
        point("after_1GiB_device_tensor_filled", maps=True)
    with rec.step("matmul"):
        a = torch.randn(1024, 1024, device="cuda")
        (a @ a).sum().item()
        point("after_first_matmul")
    with rec.step("pinned"):
        pinned = torch.empty(256 * MiB, dtype=torch.uint8, pin_memory=True)
        point("after_256MiB_pinned_host_tensor_empty")
        pinned.fill_(1)
        point("after_256MiB_pinned_host_tensor_filled", maps=True)
        del pinned
        point("after_del_pinned (host caching allocator keeps it)")
        torch.cuda.empty_cache()  # does not free cached pinned memory; _host_emptyCache might
        point("after_empty_cache")
    with rec.step("device_to_host"):
        host = big.cpu()
        point("after_copy_1GiB_to_host_pageable")
        del host
        point("after_del_host_copy")
    del x, big, a


_ALLOC_SIZES = (
    ("1 B", 1),
    ("511 B", 511),
    ("512 B", 512),
    ("513 B", 513),
    ("1 MiB", MiB),
    ("1 MiB + 1", MiB + 1),
    ("5 MiB", 5 * MiB),
    ("10 MiB - 1", 10 * MiB - 1),
    ("10 MiB", 10 * MiB),
    ("10 MiB + 1", 10 * MiB + 1),
    ("100 MiB", 100 * MiB),
    ("100 MiB + 1", 100 * MiB + 1),
    ("1 GiB", GiB),
)


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k in ("memory_allocated", "memory_reserved"):
        out[k] = after[k] - before[k]
    for k, v in after["stats"].items():
        b = before["stats"].get(k)
        if isinstance(v, int) and isinstance(b, int):
            out[k] = v - b
    return out


def child_allocator(rec: _Recorder) -> None:
    """Caching-allocator rounding and segment sizes for known uint8 tensors; peaks and their reset."""
    rec["PYTORCH_CUDA_ALLOC_CONF"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
    rec["PYTORCH_ALLOC_CONF"] = os.environ.get("PYTORCH_ALLOC_CONF")
    nv = _Nvml()
    torch = _import_torch_cuda()
    rec["memory_stats_keys"] = sorted(torch.cuda.memory_stats().keys())
    rec["after_init"] = {"torch": _torch_mem(torch), "nvml_process_used": nv.snap()["own_process_used"]}
    rec.save()

    isolated = []
    rec["isolated"] = isolated
    for label, size in _ALLOC_SIZES:
        with rec.step(f"isolated {label}"):
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            before = _torch_mem(torch)
            nv_before = nv.snap()["own_process_used"]
            t = torch.empty(size, dtype=torch.uint8, device="cuda")
            _sync(torch)
            after = _torch_mem(torch)
            nv_after = nv.snap()["own_process_used"]
            segs = _segments(torch)
            del t
            _sync(torch)
            freed = _torch_mem(torch)
            nv_freed = nv.snap()["own_process_used"]
            torch.cuda.empty_cache()
            nv_empty = nv.snap()["own_process_used"]
            isolated.append(
                {
                    "label": label,
                    "size": size,
                    "held": after,
                    "delta_held": _delta(after, before),
                    "segments_held": segs,
                    "after_free": freed,
                    "nvml_process_used_before": nv_before,
                    "nvml_process_used_held": nv_after,
                    "nvml_delta_held": None
                    if nv_after is None or nv_before is None
                    else nv_after - nv_before,
                    "nvml_process_used_after_free_cached": nv_freed,
                    "nvml_process_used_after_empty_cache": nv_empty,
                }
            )

    cumulative = []
    rec["cumulative"] = cumulative
    with rec.step("cumulative"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        held = []
        for label, size in _ALLOC_SIZES:
            held.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
            _sync(torch)
            cumulative.append(
                {
                    "label": label,
                    "torch": _torch_mem(torch),
                    "nvml_process_used": nv.snap()["own_process_used"],
                }
            )
        rec["cumulative_segments"] = _segments(torch)
        del held
        _sync(torch)
        rec["cumulative_after_del"] = {
            "torch": _torch_mem(torch),
            "nvml_process_used": nv.snap()["own_process_used"],
        }
        torch.cuda.empty_cache()
        rec["cumulative_after_empty_cache"] = {
            "torch": _torch_mem(torch),
            "nvml_process_used": nv.snap()["own_process_used"],
        }

    with rec.step("reset_peak"):
        r: dict[str, Any] = {}
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        keep = torch.empty(10 * MiB, dtype=torch.uint8, device="cuda")
        tmp = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
        del tmp
        _sync(torch)
        r["after_alloc_100MiB_and_free_holding_10MiB"] = _torch_mem(torch)
        torch.cuda.reset_peak_memory_stats()
        r["after_reset_peak_memory_stats"] = _torch_mem(torch)
        torch.cuda.empty_cache()
        r["after_empty_cache"] = _torch_mem(torch)
        torch.cuda.reset_peak_memory_stats()
        r["after_empty_cache_and_reset_peak"] = _torch_mem(torch)
        s = torch.cuda.memory_stats()
        r["cumulative_counters_kept_by_reset_peak"] = {
            k: s.get(k) for k in ("allocation.all.allocated", "allocation.all.freed", "num_alloc_retries")
        }
        torch.cuda.reset_accumulated_memory_stats()
        s = torch.cuda.memory_stats()
        r["after_reset_accumulated_memory_stats"] = {
            k: s.get(k) for k in ("allocation.all.allocated", "allocation.all.freed", "num_alloc_retries")
        }
        del keep
        rec["reset_peak"] = r


def child_fraction(rec: _Recorder) -> None:
    """set_per_process_memory_fraction enforcement: exception type, message, counters, NVML vs cap."""
    nv = _Nvml()
    torch = _import_torch_cuda()
    total = torch.cuda.get_device_properties(0).total_memory
    frac = 2 * GiB / total
    rec["total_memory"] = total
    rec["fraction"] = frac
    rec["cap_bytes"] = frac * total
    rec["nvml_process_used_after_init"] = nv.snap()["own_process_used"]
    torch.cuda.set_per_process_memory_fraction(frac)
    rec.save()

    def attempt(name: str, nbytes: int) -> None:
        with rec.step(name):
            out: dict[str, Any] = {"bytes": nbytes, "before": _torch_mem(torch)}
            try:
                t = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
                _sync(torch)
                out["succeeded"] = True
                del t
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                out["succeeded"] = False
                out["exception"] = _exc_info(e)
                out["is_torch_OutOfMemoryError"] = isinstance(e, torch.OutOfMemoryError)
                out["torch_cuda_OutOfMemoryError_is_torch_OutOfMemoryError"] = (
                    torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
                )
                del e
            out["after"] = _torch_mem(torch)
            out["nvml_process_used_after"] = nv.snap()["own_process_used"]
            rec[name] = out

    attempt("alloc_3GiB_under_2GiB_cap", 3 * GiB)

    with rec.step("retry_path"):
        # a 1.2 GiB cached block cannot serve 1.4 GiB, and 1.2 + 1.4 GiB would pass the cap: the
        # allocator must free its cache and retry (num_alloc_retries)
        out = {}
        a = torch.empty(int(1.2 * GiB), dtype=torch.uint8, device="cuda")
        del a
        out["after_1.2GiB_freed_cached"] = _torch_mem(torch)
        b = torch.empty(int(1.4 * GiB), dtype=torch.uint8, device="cuda")
        b.fill_(1)
        _sync(torch)
        out["holding_1.4GiB"] = _torch_mem(torch)
        snap = nv.snap()
        out["nvml_process_used_holding_1.4GiB"] = snap["own_process_used"]
        out["nvml_device"] = snap["device"]
        rec["retry_path"] = out
        rec.save()
        attempt("alloc_1GiB_more_while_holding_1.4GiB", GiB)
        del b
    torch.cuda.empty_cache()

    with rec.step("hold_near_cap"):
        # does the cap bound torch's reserved bytes alone, or the process as NVML sees it (context too)?
        t = torch.empty(int(1.8 * GiB), dtype=torch.uint8, device="cuda")
        t.fill_(1)
        _sync(torch)
        rec["hold_1.8GiB_under_2GiB_cap"] = {
            "torch": _torch_mem(torch),
            "nvml_process_used": nv.snap()["own_process_used"],
        }
        del t
    torch.cuda.empty_cache()

    with rec.step("device_oom"):
        torch.cuda.set_per_process_memory_fraction(1.0)
        rec["mem_get_info_before_device_oom"] = list(torch.cuda.mem_get_info())
    attempt("alloc_2x_total_no_cap", 2 * total)
    free = torch.cuda.mem_get_info()[0]
    attempt("alloc_free_plus_1GiB_no_cap", free + GiB)


def child_capacity(rec: _Recorder) -> None:
    """The largest single allocation that succeeds, against mem_get_info free and NVML free."""
    nv = _Nvml()
    torch = _import_torch_cuda()
    free, total = torch.cuda.mem_get_info()
    rec["mem_get_info"] = [free, total]
    rec["nvml_before"] = nv.snap()
    rec.save()
    with rec.step("search"):
        fail = free + 2 * MiB
        ok = 0
        size = free - (free % (2 * MiB))
        tries = []
        # step down in 64 MiB until one succeeds, then bisect to 2 MiB
        for _ in range(64):
            try:
                t = torch.empty(size, dtype=torch.uint8, device="cuda")
                del t
                ok = size
                tries.append([size, True])
                break
            except torch.OutOfMemoryError:
                fail = size
                tries.append([size, False])
                size -= 64 * MiB
        while fail - ok > 2 * MiB and ok:
            mid = (ok + fail) // 2
            mid -= mid % (2 * MiB)
            if mid in (ok, fail):
                break
            try:
                t = torch.empty(mid, dtype=torch.uint8, device="cuda")
                del t
                ok = mid
                tries.append([mid, True])
            except torch.OutOfMemoryError:
                fail = mid
                tries.append([mid, False])
            torch.cuda.empty_cache()
        rec["tries"] = tries
        rec["largest_single_alloc"] = ok
        rec["free_minus_largest"] = free - ok
        torch.cuda.empty_cache()
        s = torch.cuda.memory_stats()
        rec["num_ooms_during_search"] = s.get("num_ooms")
        rec["num_alloc_retries_during_search"] = s.get("num_alloc_retries")
    with rec.step("hold_largest"):
        t = torch.empty(ok, dtype=torch.uint8, device="cuda")
        _sync(torch)
        rec["holding_largest"] = {
            "mem_get_info": list(torch.cuda.mem_get_info()),
            "nvml": nv.snap(),
            "torch": _torch_mem(torch),
        }
        del t


def child_flops(rec: _Recorder) -> None:
    """FlopCounterMode on a training step of 3 x Linear(1024, 1024) at batch 512, vs 6*B*in*out."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    torch.cuda.init()
    bsz, dim, layers = 512, 1024, 3
    rec["shape"] = {"batch": bsz, "in": dim, "out": dim, "layers": layers}
    rec["six_b_in_out_times_layers"] = 6 * bsz * dim * dim * layers
    rec["two_b_in_out_times_layers_forward"] = 2 * bsz * dim * dim * layers
    model = torch.nn.Sequential(
        torch.nn.Linear(dim, dim),
        torch.nn.ReLU(),
        torch.nn.Linear(dim, dim),
        torch.nn.ReLU(),
        torch.nn.Linear(dim, dim),
    ).cuda()

    def step(x: Any) -> None:
        loss = model(x).pow(2).mean()
        loss.backward()

    for req in (False, True):
        with rec.step(f"train_step_input_requires_grad_{req}"):
            x = torch.randn(bsz, dim, device="cuda", requires_grad=req)
            with FlopCounterMode(display=False) as fc:
                step(x)
            counts = fc.get_flop_counts()
            rec[f"train_step_input_requires_grad_{req}"] = {
                "total": fc.get_total_flops(),
                "global_by_op": {str(k): v for k, v in counts.get("Global", {}).items()},
                "modules": sorted(str(k) for k in counts),
            }
            model.zero_grad(set_to_none=True)
    with rec.step("forward_only"):
        x = torch.randn(bsz, dim, device="cuda")
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            model(x)
        rec["forward_only_no_grad"] = fc.get_total_flops()
    with rec.step("bias_and_bmm"):
        # a Linear without bias, and a bmm, to see what is counted
        lin = torch.nn.Linear(dim, dim, bias=False).cuda()
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            lin(torch.randn(bsz, dim, device="cuda"))
            torch.bmm(torch.randn(4, 64, 32, device="cuda"), torch.randn(4, 32, 16, device="cuda"))
        rec["no_bias_linear_plus_bmm"] = {
            "total": fc.get_total_flops(),
            "global_by_op": {str(k): v for k, v in fc.get_flop_counts().get("Global", {}).items()},
            "expected": 2 * bsz * dim * dim + 2 * 4 * 64 * 32 * 16,
        }
    with rec.step("train_step_time"):
        x = torch.randn(bsz, dim, device="cuda")
        for _ in range(5):
            step(x)
        _sync(torch)
        times = []
        for _ in range(30):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            step(x)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        med = statistics.median(times)
        total = rec["train_step_input_requires_grad_False"]["total"]
        rec["train_step_fp32_median_ms"] = med
        rec["train_step_fp32_tflops_by_counter"] = total / (med * 1e-3) / 1e12


def _time_cuda(torch: Any, fn: Callable[[], Any], warmup: int = 3, reps: int = 10) -> list[float]:
    for _ in range(warmup):
        fn()
    _sync(torch)
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return times


def child_matmul(rec: _Recorder) -> None:
    """Achieved TFLOP/s of an 8192^3 product in bf16, fp16, fp32 (IEEE) and tf32; a 1 GiB copy's GB/s."""
    torch = _import_torch_cuda()
    n = 8192
    flops = 2 * n**3
    rec["n"] = n
    rec["float32_matmul_precision_default"] = torch.get_float32_matmul_precision()
    cases = (
        ("bf16", torch.bfloat16, "highest"),
        ("fp16", torch.float16, "highest"),
        ("fp32_ieee", torch.float32, "highest"),
        ("tf32", torch.float32, "high"),
    )
    for name, dtype, prec in cases:
        with rec.step(name):
            torch.set_float32_matmul_precision(prec)
            g = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
            b = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
            times = _time_cuda(torch, lambda a=a, b=b: a @ b)
            med = statistics.median(times)
            rec[name] = {
                "median_ms": med,
                "min_ms": min(times),
                "max_ms": max(times),
                "tflops_median": flops / (med * 1e-3) / 1e12,
                "precision_setting": prec,
                "allow_tf32_seen": torch.backends.cuda.matmul.allow_tf32,
            }
            del a, b
    torch.set_float32_matmul_precision("highest")
    with rec.step("copy_1GiB"):
        src = torch.empty(GiB, dtype=torch.uint8, device="cuda").fill_(3)
        dst = torch.empty_like(src)
        times = _time_cuda(torch, lambda: dst.copy_(src))
        med = statistics.median(times)
        rec["copy_1GiB"] = {"median_ms": med, "GBps_read_plus_write": 2 * GiB / (med * 1e-3) / 1e9}


def child_utilization(rec: _Recorder) -> None:
    """nvmlDeviceGetUtilizationRates every 20 ms: idle, matmul loop, idle, copy loop, idle."""
    nv = _Nvml()
    p, h = nv.nv, nv.handle
    torch = _import_torch_cuda()
    samples: list[list[float]] = []
    stop = threading.Event()
    t_start = time.perf_counter()
    call_cost: list[float] = []

    def sampler() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            u = p.nvmlDeviceGetUtilizationRates(h)
            call_cost.append(time.perf_counter() - t0)
            try:
                sm = p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM)
                power = p.nvmlDeviceGetPowerUsage(h)
            except Exception:
                sm, power = -1, -1
            samples.append([round(t0 - t_start, 4), u.gpu, u.memory, sm, power])
            time.sleep(max(0.0, 0.02 - (time.perf_counter() - t0)))

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    src = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    _sync(torch)
    phases: list[list[Any]] = []

    def phase(name: str, seconds: float, work: Callable[[], Any] | None) -> None:
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < seconds:
            if work is None:
                time.sleep(0.01)
                continue
            for _ in range(10):
                work()
                n += 1
            _sync(torch)
        _sync(torch)
        phases.append([name, round(t0 - t_start, 4), round(time.perf_counter() - t_start, 4), n])

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    with rec.step("phases"):
        phase("idle_before", 1.0, None)
        phase("matmul_bf16_4096", 2.0, lambda: a @ a)
        phase("idle_between", 1.0, None)
        phase("copy_512MiB", 2.0, lambda: dst.copy_(src))
        phase("idle_after", 1.0, None)
    stop.set()
    th.join()
    rec["phases"] = phases
    rec["samples_columns"] = ["t_s", "gpu_util_pct", "mem_util_pct", "sm_clock_mhz", "power_mw"]
    rec["samples"] = samples
    rec["nvml_utilization_call_seconds_median"] = statistics.median(call_cost) if call_cost else None
    summary = {}
    for name, t0, t1, n in phases:
        inside = [s for s in samples if t0 <= s[0] < t1]
        if not inside:
            continue
        gpu = [s[1] for s in inside]
        mem = [s[2] for s in inside]
        summary[name] = {
            "iterations": n,
            "n_samples": len(inside),
            "gpu_mean": statistics.fmean(gpu),
            "gpu_min": min(gpu),
            "gpu_max": max(gpu),
            "mem_mean": statistics.fmean(mem),
            "mem_min": min(mem),
            "mem_max": max(mem),
            "gpu_distinct_values": len(set(gpu)),
            "gpu_value_changes": sum(1 for x, y in itertools.pairwise(gpu) if x != y),
            "first_sample_gpu_ge_90_after_s": next((s[0] - t0 for s in inside if s[1] >= 90), None),
            "first_sample_gpu_le_10_after_s": next((s[0] - t0 for s in inside if s[1] <= 10), None),
            "sm_clock_max": max(s[3] for s in inside),
            "power_mw_max": max(s[4] for s in inside),
        }
    rec["summary"] = summary


def _history_child(rec: _Recorder, max_entries: int, stacks: str, steps: int = 10) -> None:
    """_record_memory_history + _snapshot on a 3-Linear training loop: sizes, keys, timing."""
    import inspect

    torch = _import_torch_cuda()
    rec["max_entries"] = max_entries
    rec["stacks"] = stacks
    rec["steps"] = steps
    with rec.step("signature"):
        rec["signature"] = str(inspect.signature(torch.cuda.memory._record_memory_history))
    with rec.step("record"):
        torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks)
        model = torch.nn.Sequential(
            torch.nn.Linear(1024, 1024),
            torch.nn.ReLU(),
            torch.nn.Linear(1024, 1024),
            torch.nn.ReLU(),
            torch.nn.Linear(1024, 10),
        ).cuda()
        opt = torch.optim.Adam(model.parameters())
        t0 = time.perf_counter()
        for _ in range(steps):
            x = torch.randn(256, 1024, device="cuda")
            y = torch.randint(0, 10, (256,), device="cuda")
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        _sync(torch)
        rec["loop_s"] = time.perf_counter() - t0
    with rec.step("snapshot"):
        t0 = time.perf_counter()
        snap = torch.cuda.memory._snapshot()
        rec["snapshot_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        blob = pickle.dumps(snap)
        rec["pickle_s"] = time.perf_counter() - t0
        rec["pickle_protocol_default"] = pickle.DEFAULT_PROTOCOL
        rec["pickle_bytes"] = len(blob)
        rec["pickle_bytes_protocol4"] = len(pickle.dumps(snap, protocol=4))
        rec["pickle_zlib6_bytes"] = len(zlib.compress(blob, 6))
        rec["top_keys"] = sorted(snap.keys()) if isinstance(snap, dict) else str(type(snap))
        segs = snap.get("segments", [])
        rec["n_segments"] = len(segs)
        rec["segment_keys"] = sorted(segs[0].keys()) if segs else None
        blocks = [b for s in segs for b in s.get("blocks", [])]
        rec["n_blocks"] = len(blocks)
        rec["block_keys"] = sorted(blocks[0].keys()) if blocks else None
        rec["block_states"] = sorted({str(b.get("state")) for b in blocks})
        traces = snap.get("device_traces", [])
        rec["n_devices_in_traces"] = len(traces)
        entries = traces[0] if traces else []
        rec["n_trace_entries"] = len(entries)
        rec["trace_entry_keys"] = sorted({k for e in entries for k in e})
        actions: dict[str, int] = {}
        for e in entries:
            actions[str(e.get("action"))] = actions.get(str(e.get("action")), 0) + 1
        rec["trace_actions"] = actions
        frames = [f for e in entries for f in e.get("frames", [])]
        rec["frame_keys"] = sorted({k for f in frames for k in f})
        rec["frames_per_entry_mean"] = len(frames) / len(entries) if entries else None
        me = os.path.basename(__file__)
        rec["example_frame_this_file"] = next((f for f in frames if me in str(f.get("filename"))), None)
        rec["example_frame_not_py"] = next(
            (f for f in frames if not str(f.get("filename", "")).endswith(".py")), None
        )
        rec["example_block"] = blocks[0] if blocks and len(str(blocks[0])) < 4000 else None
        if rec["example_block"] is not None and "frames" in rec["example_block"]:
            rec["example_block"] = {**blocks[0], "frames": blocks[0]["frames"][:3]}
        rec["example_trace_entry"] = (
            {**entries[-1], "frames": entries[-1].get("frames", [])[:3]} if entries else None
        )
        rec["allocator_settings"] = snap.get("allocator_settings")
    with rec.step("stop"):
        torch.cuda.memory._record_memory_history(enabled=None)


def child_history_py_1k(rec: _Recorder) -> None:
    """Memory history with max_entries=1000, stacks='python', 10 steps: snapshot size, keys, timing."""
    _history_child(rec, 1000, "python")


def child_history_py_100k(rec: _Recorder) -> None:
    """Memory history with max_entries=100000, stacks='python', 10 steps: snapshot size, keys, timing."""
    _history_child(rec, 100_000, "python")


def child_history_all_1k(rec: _Recorder) -> None:
    """Memory history with max_entries=1000, stacks='all', 10 steps: snapshot size, keys, timing."""
    _history_child(rec, 1000, "all")


def child_history_all_100k(rec: _Recorder) -> None:
    """Memory history with max_entries=100000, stacks='all', 10 steps: snapshot size, keys, timing."""
    _history_child(rec, 100_000, "all")


def child_history_py_1k_300(rec: _Recorder) -> None:
    """Memory history, max_entries=1000, stacks='python', 300 steps (the ring buffer overflows)."""
    _history_child(rec, 1000, "python", steps=300)


def child_history_py_100k_300(rec: _Recorder) -> None:
    """Memory history, max_entries=100000, stacks='python', 300 steps."""
    _history_child(rec, 100_000, "python", steps=300)


def child_history_all_100k_300(rec: _Recorder) -> None:
    """Memory history, max_entries=100000, stacks='all', 300 steps."""
    _history_child(rec, 100_000, "all", steps=300)


# name -> (function, environment overrides (None removes the variable), time-out in seconds)
_CLEAN = {"CUDA_MODULE_LOADING": None, "PYTORCH_CUDA_ALLOC_CONF": None, "PYTORCH_ALLOC_CONF": None}
CHILDREN: dict[str, tuple[Callable[[_Recorder], None], dict[str, str | None], float]] = {
    "env": (child_env, _CLEAN, 60),
    "context_default": (child_context, _CLEAN, 60),
    "context_lazy": (child_context, {**_CLEAN, "CUDA_MODULE_LOADING": "LAZY"}, 60),
    "context_eager": (child_context, {**_CLEAN, "CUDA_MODULE_LOADING": "EAGER"}, 90),
    "host": (child_host, _CLEAN, 60),
    "allocator": (child_allocator, _CLEAN, 60),
    "allocator_expandable": (
        child_allocator,
        {**_CLEAN, "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
        60,
    ),
    "fraction": (child_fraction, _CLEAN, 60),
    "capacity": (child_capacity, _CLEAN, 60),
    "flops": (child_flops, _CLEAN, 60),
    "matmul": (child_matmul, _CLEAN, 60),
    "utilization": (child_utilization, _CLEAN, 60),
    "history_python_1k": (child_history_py_1k, _CLEAN, 60),
    "history_python_100k": (child_history_py_100k, _CLEAN, 60),
    "history_all_1k": (child_history_all_1k, _CLEAN, 90),
    "history_all_100k": (child_history_all_100k, _CLEAN, 90),
    "history_python_1k_300steps": (child_history_py_1k_300, _CLEAN, 60),
    "history_python_100k_300steps": (child_history_py_100k_300, _CLEAN, 60),
    "history_all_100k_300steps": (child_history_all_100k_300, _CLEAN, 120),
}


def _run_child(name: str, out_path: str) -> None:
    fn = CHILDREN[name][0]
    rec = _Recorder(out_path)
    rec["child"] = name
    rec["pid"] = os.getpid()
    rec.save()
    with rec.step("main"):
        fn(rec)


def _child_env(overrides: dict[str, str | None]) -> dict[str, str]:
    env = dict(os.environ)
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--child", nargs=2, metavar=("NAME", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--only", help="comma-separated measurement names (see --list)")
    ap.add_argument("--list", action="store_true", help="list the measurements and exit")
    ap.add_argument("--budget-s", type=float, default=480.0, help="stop starting children after this")
    args = ap.parse_args()
    if args.child:
        _run_child(*args.child)
        return
    if args.list:
        for name, (fn, env, timeout) in CHILDREN.items():
            doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
            print(f"{name:24} {timeout:>4.0f}s  {doc}  env={ {k: v for k, v in env.items() if v} }")
        return
    names = list(CHILDREN) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in CHILDREN]
    if unknown:
        sys.exit(f"unknown measurement(s): {', '.join(unknown)}; see --list")

    t_start = time.time()
    doc: dict[str, Any] = {
        "probe": "memgauge bench/gpu_probe.py",
        "started_unix": t_start,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
        "python_executable": sys.executable,
        "argv": sys.argv,
        "children": {},
    }
    deadline = time.monotonic() + args.budget_s
    with tempfile.TemporaryDirectory(prefix="gpu_probe_") as tmp:
        for name in names:
            _fn, env, timeout = CHILDREN[name]
            left = deadline - time.monotonic()
            if left < 10:
                doc["children"][name] = {"skipped": f"budget spent ({args.budget_s} s)"}
                print(f"[gpu_probe] {name}: skipped, budget spent", file=sys.stderr, flush=True)
                continue
            out_path = os.path.join(tmp, f"{name}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--child", name, out_path]
            t0 = time.monotonic()
            entry: dict[str, Any] = {"env_overrides": env}
            try:
                cp = subprocess.run(
                    cmd, env=_child_env(env), capture_output=True, text=True, timeout=min(timeout, left)
                )
                entry["returncode"] = cp.returncode
                entry["stderr_tail"] = cp.stderr[-3000:]
                entry["stdout_tail"] = cp.stdout[-1000:]
            except subprocess.TimeoutExpired as e:
                entry["returncode"] = None
                entry["timed_out_after_s"] = e.timeout
                err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
                entry["stderr_tail"] = (err or "")[-3000:]
            entry["wall_s"] = round(time.monotonic() - t0, 3)
            try:
                with open(out_path, encoding="utf-8") as f:
                    entry["result"] = json.load(f)
            except (OSError, ValueError) as e:
                entry["result"] = None
                entry["result_error"] = f"{type(e).__name__}: {e}"
            doc["children"][name] = entry
            errs = (entry.get("result") or {}).get("errors", {})
            print(
                f"[gpu_probe] {name}: rc={entry.get('returncode')} {entry['wall_s']:.1f}s "
                f"errors={list(errs) if errs else 'none'}",
                file=sys.stderr,
                flush=True,
            )
    doc["total_wall_s"] = round(time.time() - t_start, 3)
    json.dump(doc, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
