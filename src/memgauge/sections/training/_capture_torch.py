"""The torch side of training throughput: DataLoader waits, FLOPs of one step, the CPU's peak.

Connected by ``sections/torch/_capture_hooks.connect`` once the program has imported torch (and a runner
measures it). Three things:

- **Data wait**: ``_BaseDataLoaderIter.__next__`` (every DataLoader iterator's, single- or
  multi-process) and ``DataLoader.__iter__`` (which starts the workers of each epoch) are wrapped:
  the time inside them is time the loop waited for data, and the batch's leading dimension its
  samples (``_capture.batch_samples``). A fetch made by a loader that reads one batch ahead
  (``AHEAD``: accelerate's) counts the batch it fetched before, the one the program gets now.
- **FLOPs**: a dispatch mode (``StepFlops``) is entered when step ``FLOP_STEP - 1`` ends and left
  when the next one ends: one representative step after warm-up is counted, the others run without
  it. It counts with torch's own formulas, the registry ``torch.utils.flop_counter.FlopCounterMode``
  uses, and tries an operator's decomposition where FlopCounterMode does (one without a formula
  but with a ``CompositeImplicitAutograd`` kernel), so its totals are FlopCounterMode's (tested);
  without FlopCounterMode's own bookkeeping (a module tracker, a set built and a decomposition tried
  at every operator) the counted step costs less than half as much more (+4.4 ms against +10 ms on
  the bench's 11 ms step). The counted step is still slower (every operator goes through Python) and
  is left out of the rates. Each operator's FLOPs are kept by the device and dtype of its first
  tensor input, so MFU is judged against the peak of the dtype that did the work.
- **The CPU's peak**: where the counted step ran on the CPU, a short matmul benchmark at exit
  (best of a few products of two 1024-square matrices in the step's dtype, with torch's threads):
  a measured peak, not a datasheet's, cached per CPU model, thread count, dtype and torch version
  in ``$XDG_CACHE_HOME/memgauge/cpu-peak.json`` (``~/.cache``), so a machine pays for it once.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import _BaseDataLoaderIter

from memgauge._env import ENV_FLOP_STEP
from memgauge.sections.torch import Tracker
from memgauge.sections.training._capture import Loop, batch_samples, current_loop
from memgauge.sections.training._capture_copies import Copies
from memgauge.sections.training._capture_copies_torch import wrap_copies

FLOP_STEP = 3
# the modules whose loaders fetch one batch ahead of the one they hand the program (accelerate's
# DataLoaderShard, under Hugging Face's Trainer): their batch's samples count at the next fetch
AHEAD = frozenset({"accelerate.data_loader"})
BENCH_SIZE = 1024
BENCH_SECONDS = 0.3

_wrapped: list[tuple[Any, str, Any]] = []


def flop_step(environ: dict[str, str] | os._Environ[str] | None = None) -> int | None:
    value = (environ if environ is not None else os.environ).get(ENV_FLOP_STEP, "")
    if value == "off":
        return None
    return int(value) if value.isdigit() and int(value) >= 1 else FLOP_STEP


def attach(tracker: Tracker) -> None:
    """Connect the throughput loop of this process to torch (idempotent per tracker)."""
    loop = current_loop()
    if loop is None:
        return
    tracker.on_step = _end_step
    at = flop_step()
    if at is not None and loop.torch is None:
        loop.torch = TorchPart(loop, at, tracker)
    if not _wrapped:
        _wrap(_BaseDataLoaderIter, "__next__", with_samples=True)
        _wrap(DataLoader, "__iter__", with_samples=False)
        _wrap_worker()
        wrap_copies(copies_of_loop, tracker.line_here, _wrapped)  # host<->device bytes


def copies_of_loop() -> Copies | None:
    """The copies of this process's loop (made at its first copy across devices, its earlier steps
    given none), or None when nothing is measured."""
    loop = current_loop()
    if loop is None:
        return None
    if loop.copies is None:
        loop.copies = Copies()
        loop.copies.steps = [[0, 0, 0] for _ in loop.rows]
    copies: Copies = loop.copies
    return copies


def _wrap_worker() -> None:
    """Name DataLoader worker processes, and write their record when their loop ends: they leave
    through ``os._exit`` (multiprocessing), which runs no ``atexit``."""
    from torch.utils.data._utils import worker

    original = worker._worker_loop

    @functools.wraps(original)
    def worker_loop(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            loop = current_loop()
            info = torch.utils.data.get_worker_info()
            if loop is not None:
                loop.role = f"DataLoader worker {info.id}" if info is not None else "DataLoader worker"
                loop.at_exit()

    _wrapped.append((worker, "_worker_loop", original))
    worker._worker_loop = worker_loop


def _end_step(kind: str, start: float | None) -> None:
    loop = current_loop()
    if loop is not None:
        loop.end_step(kind, start)


def _wrap(owner: Any, name: str, *, with_samples: bool) -> None:
    original = getattr(owner, name)
    clock = time.monotonic

    @functools.wraps(original)
    def waited(self: Any) -> Any:
        t0 = clock()
        ahead = with_samples and sys._getframe(1).f_globals.get("__name__") in AHEAD
        try:
            out = original(self)
        except StopIteration:
            loop = current_loop()
            if ahead and loop is not None:
                loop.exhausted(t0, clock())
            raise
        loop = current_loop()
        if loop is not None:
            if with_samples:
                loop.fetched(t0, clock(), batch_samples(out), ahead=ahead)
            else:
                loop.epoch(t0, clock())  # starting an epoch's iterator: a wait, not a batch
        return out

    _wrapped.append((owner, name, original))
    setattr(owner, name, waited)


def unwrap() -> None:
    """Put torch's own methods back (for a block measured in-process, once it ends)."""
    while _wrapped:
        owner, name, original = _wrapped.pop()
        setattr(owner, name, original)


class StepFlops(TorchDispatchMode):
    """The FLOPs of the operators run under it by torch's formulas, by (device type, dtype) of each
    operator's first tensor input."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        from torch.utils.flop_counter import flop_registry

        self.formulas: dict[Any, Any] = flop_registry
        self.by: dict[tuple[str, str], int] = {}
        self._decomposes: dict[Any, bool] = {}

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        formula = self.formulas.get(func._overloadpacket)
        if formula is None:
            decomposes = self._decomposes.get(func)
            if decomposes is None:
                decomposes = self._decomposes[func] = bool(func._can_decompose())
            if decomposes:  # counted as its parts, as FlopCounterMode counts it
                with self:
                    out = func.decompose(*args, **kwargs)
                if out is not NotImplemented:
                    return out
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if first is not None:
            key = (first.device.type, str(first.dtype).replace("torch.", ""))
            self.by[key] = self.by.get(key, 0) + int(formula(*args, **kwargs, out_val=out))
        return out


class TorchPart:
    """Counts the FLOPs of step ``at`` and measures the CPU's peak at exit when that step ran on
    the CPU. With the ``tracker`` (whose optimizer pre hook tells), the optimizer's update is not
    counted: the counter is left as it begins. MFU counts the model's FLOPs, forward and backward
    (PaLM's definition); an optimizer's ~14 elementwise operators a parameter have no formula in
    torch's registry anyway, and went through Python for nothing (Adam: 110 of the bench loop's
    158 operators in the counted step)."""

    def __init__(self, loop: Loop, at: int, tracker: Tracker | None = None) -> None:
        self.loop = loop
        self.at = at
        self.tracker = tracker
        self.counter: StepFlops | None = None
        self.counting = False  # entered, and not yet left at the optimizer's update
        loop.watch = at - 1  # the counter starts at that step's end, and stops at the next one's

    def leave(self) -> None:
        """The counted step's optimizer begins (or the step ends): nothing more is counted."""
        if self.tracker is not None:
            self.tracker.before_optimizer = None
        if self.counter is not None and self.counting:
            self.counting = False
            self.counter.__exit__(None, None, None)  # type: ignore[no-untyped-call]

    def step_ending(self, index: int) -> None:
        if self.counter is None:
            return
        self.leave()
        counter, self.counter = self.counter, None
        self.loop.watch = -1
        rows: list[list[Any]] = [[d, t, n] for (d, t), n in sorted(counter.by.items(), key=lambda kv: -kv[1])]
        device = str(rows[0][0]) if rows else ""
        total = sum(counter.by.values())
        self.loop.flops = {"step": index, "total": total, "by": rows, "device_name": _device_name(device)}

    def step_ended(self, index: int) -> None:
        if index != self.at - 1 or self.loop.flops is not None:
            return
        counter = StepFlops()
        counter.__enter__()  # type: ignore[no-untyped-call]
        self.counter, self.counting = counter, True
        if self.tracker is not None:
            self.tracker.before_optimizer = self.leave
        self.loop.watch = index + 1

    def at_exit(self) -> None:
        if self.counter is not None:  # the program ended inside the counted step: nothing to keep
            self.leave()
            self.counter = None
        flops = self.loop.flops
        if not flops or not flops["by"] or flops["by"][0][0] != "cpu":
            return
        dtype = str(flops["by"][0][1])
        self.loop.peak = cpu_peak(dtype)


def _device_name(device: str) -> str:
    if device == "cuda" and torch.cuda.is_available():
        return str(torch.cuda.get_device_name(torch.cuda.current_device()))
    if device == "cpu":
        return cpu_model()
    return device


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "cpu"


def _cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memgauge", "cpu-peak.json")


def cpu_peak(dtype: str) -> dict[str, Any] | None:
    """The CPU's measured matmul peak in ``dtype`` (cached); None for a dtype torch cannot multiply
    on this CPU."""
    threads = torch.get_num_threads()
    key = f"{cpu_model()}|{threads}|{dtype}|{torch.__version__}"
    path = _cache_path()
    cache: dict[str, Any] = {}
    try:
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
        if isinstance(loaded, dict):
            cache = loaded
    except (OSError, ValueError):
        pass
    found = cache.get(key)
    if isinstance(found, dict) and isinstance(found.get("flops_per_second"), (int, float)):
        return {**found, "cached": True}
    try:
        rate = measure_matmul(getattr(torch, dtype))
    except (AttributeError, RuntimeError, TypeError):
        return None
    entry = {
        "flops_per_second": rate,
        "dtype": dtype,
        "threads": threads,
        "source": f"measured: best {BENCH_SIZE}x{BENCH_SIZE} matmul on {cpu_model()}, {threads} threads",
    }
    cache[key] = entry
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(cache, f)
        os.replace(tmp, path)
    except OSError:
        pass  # uncached: the next run measures again
    return {**entry, "cached": False}


def measure_matmul(dtype: torch.dtype, *, size: int = BENCH_SIZE, seconds: float = BENCH_SECONDS) -> float:
    """FLOP/s of the fastest of repeated ``size``-square matrix products within ``seconds``."""
    with torch.no_grad():
        a = torch.randn(size, size).to(dtype)
        b = torch.randn(size, size).to(dtype)
        torch.mm(a, b)  # warm-up: threads, packing buffers
        best = float("inf")
        end = time.perf_counter() + seconds
        runs = 0
        while runs < 3 or time.perf_counter() < end:
            t0 = time.perf_counter()
            torch.mm(a, b)
            best = min(best, time.perf_counter() - t0)
            runs += 1
    return 2.0 * size**3 / best
