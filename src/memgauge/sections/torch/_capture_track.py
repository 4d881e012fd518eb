"""The torch tracker's bookkeeping: storages by role, the peak and its composition, steps, OOMs.

No torch here: ``_capture_hooks`` hands over storage objects (anything that takes a weak reference)
with their sizes, and the tracker keeps, per live storage, one ``Entry`` that knows its bytes, role,
module and creating line. A storage is counted once whatever the number of tensors viewing it: a
view adds nothing, a slice keeps its whole base. The tracker holds storages only weakly: the weak
reference's callback, run when torch frees the storage, takes its bytes off the totals. So it never
keeps a tensor alive.

A storage has one role; when it turns out to play a higher one (a weight saved for backward is a
parameter first) it moves up: parameters > gradients > optimizer state > activations saved for
backward > temporaries > other.
"""

from __future__ import annotations

import os
import sys
import time
import weakref

from memgauge.capture import WritePace, paced_write
from memgauge.sections.torch._capture_device import NO_DEVICE_LOG
from memgauge.sections.torch._capture_oom import oom_fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memgauge.sections.torch._capture_device import DeviceLog

ROLES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries", "other")
PARAMETERS, GRADIENTS, OPTIMIZER_STATE, ACTIVATIONS, TEMPORARIES, OTHER = range(len(ROLES))
# roles whose bytes are kept by creating line: what can pile up across steps
_BY_LINE = (ACTIVATIONS, TEMPORARIES, OTHER)
MAX_STEPS = 5000
TOP_MODULES = 40
TOP_TENSORS = 20
STEP_LINES = 5


class Entry:
    """One live storage. ``ref`` is the weak reference whose callback forgets it."""

    __slots__ = ("device", "dtype", "line", "module", "name", "nbytes", "ref", "role", "serial", "shape")

    def __init__(self, nbytes: int, role: int, serial: int) -> None:
        self.nbytes, self.role, self.serial = nbytes, role, serial
        self.module, self.line, self.name, self.dtype, self.device = "", "", "", "", ""
        self.shape: tuple[int, ...] = ()
        self.ref: weakref.ref[Any] | None = None

    def row(self) -> dict[str, Any]:
        return {
            "bytes": self.nbytes,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "device": self.device,
            "role": ROLES[self.role],
            "name": self.name,
            "line": self.line,
            "module": self.module,
            "id": self.serial,
        }


class Tracker:
    """The bookkeeping of one process. ``write`` (set by the hooks) saves ``record()`` for the
    runner; it is called at step ends about once a second (``WritePace``), at an OOM and at exit."""

    def __init__(
        self,
        mode: str,
        *,
        internal: tuple[str, ...] = (),
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.mode, self.pid, self.clock, self.write, self.internal = mode, os.getpid(), clock, write, internal
        self.entries: dict[int, Entry] = {}
        self.serial = 0
        self.roles, self.max_roles = [0] * len(ROLES), [0] * len(ROLES)
        self.total, self.peak = 0, 0
        self.peak_t: float | None = None
        self.peak_roles = [0] * len(ROLES)
        self.peak_modules: dict[tuple[int, str], int] = {}
        self._peak_pending = False
        self._peak_serial = 0  # the newest storage alive at the peak
        self._step_peak_serial = 0
        self.module_bytes: dict[tuple[int, str], int] = {}
        self.line_bytes: dict[str, int] = {}
        self.modules: list[str] = []  # the qualified names of the modules running forward
        self.devices: set[str] = set()
        self._internal_code: dict[object, bool] = {}
        self.steps: list[dict[str, Any]] = []
        self.steps_dropped = 0
        # summary mode follows some steps tensor by tensor (``_capture_sampling``): the hooks set
        # ``tracking`` for the next step in ``after_step``; the others are only counted
        self.tracking = True
        self.steps_untracked = 0
        self.ended = 0  # steps ended so far (a merged second optimizer's not counted)
        self.after_step: Callable[[float], None] | None = None  # given the step's end
        self.phase, self._phase_t0 = "", 0.0
        self._phase_seconds = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
        # a step starts at its first forward (or backward, or optimizer step), the next where it ends
        self._step_start: float | None = None
        self._step_peak = 0
        self._step_peak_roles = [0] * len(ROLES)
        self.active = False  # whether the step running did anything yet (ended steps: not)
        self._recorded = False  # whether the last step ended is the last one in ``steps``
        self.pace = WritePace()
        self.oom: dict[str, Any] | None = None
        self.oom_count, self._oom_seen = 0, set[int]()  # OOM errors seen, each once (by id)
        self.notes: list[str] = []
        self.hooks: Any = None  # what connects this tracker to torch (``_capture_hooks.Hooks``)
        # told of each new step: (kind, when it began or None); the training section's sets it
        self.on_step: Callable[[str, float | None], None] | None = None
        self.before_optimizer: Callable[[], None] | None = None  # at an optimizer's step, once set
        self.gpu: DeviceLog = NO_DEVICE_LOG  # the GPU section's allocator log, once set (docs/gpu.md)

    # -- storages --------------------------------------------------------------------------------

    def track(
        self,
        storage: object,
        nbytes: int,
        role: int,
        *,
        module: str | None = None,
        name: str = "",
        shape: tuple[int, ...] = (),
        dtype: str = "",
        device: str = "",
        line: str | None = None,
    ) -> Entry | None:
        """Count ``storage`` under ``role`` (moving it up if it was counted lower); None when it
        cannot be weakly referenced. ``module`` defaults to the innermost module running forward,
        ``line`` to the program's line calling into torch now."""
        key = id(storage)
        entry = self.entries.get(key)
        if entry is not None:
            if role < entry.role:
                self._promote(entry, role, module, name)
            elif name and not entry.name:
                entry.name = name
            return entry
        self.serial += 1
        entry = Entry(nbytes, role, self.serial)
        try:
            entry.ref = weakref.ref(storage, self._callback(key, entry))
        except TypeError:
            return None
        entry.module = module if module is not None else (self.modules[-1] if self.modules else "")
        entry.name = name
        entry.shape = shape
        entry.dtype = dtype
        entry.device = device
        if device not in self.devices:
            self.devices.add(device)
        if line is None and role != PARAMETERS:
            line = self.line_here()
        entry.line = line or ""
        self.entries[key] = entry
        self._add_bytes(entry)
        return entry

    def _promote(self, entry: Entry, role: int, module: str | None, name: str) -> None:
        """A counted storage seen again in a lower role (a parameter's gradient, say): moved there."""
        # alive now, so alive at any peak since its creation: that peak held it in this role
        n = entry.nbytes
        if entry.serial <= self._peak_serial:
            self.peak_roles[entry.role] -= n
            self.peak_roles[role] += n
        if entry.serial <= self._step_peak_serial:
            self._step_peak_roles[entry.role] -= n
            self._step_peak_roles[role] += n
        self._remove_bytes(entry)
        entry.role = role
        if module is not None:
            entry.module = module
        if name:
            entry.name = name
        self._add_bytes(entry)

    def _callback(self, key: int, entry: Entry) -> Callable[[object], None]:
        def gone(_ref: object) -> None:
            # the id may already belong to a new storage with its own entry: forget only ours
            if self.entries.get(key) is entry:
                del self.entries[key]
                self._remove_bytes(entry)

        return gone

    def _add_bytes(self, entry: Entry) -> None:
        n = entry.nbytes
        role = entry.role
        self.gpu.tensor_add(entry.device, n)
        self.roles[role] += n
        self.max_roles[role] = max(self.max_roles[role], self.roles[role])
        key = (role, entry.module)
        self.module_bytes[key] = self.module_bytes.get(key, 0) + n
        if role in _BY_LINE and entry.line:
            self.line_bytes[entry.line] = self.line_bytes.get(entry.line, 0) + n
        self.total += n
        if self.total > self._step_peak:
            self._step_peak = self.total
            self._step_peak_roles = self.roles[:]
            self._step_peak_serial = self.serial
        if self.total > self.peak:
            self.peak = self.total
            self.peak_roles = self.roles[:]
            self._peak_serial = self.serial
            self.peak_t = self.clock()
            # the modules are copied once the total starts falling again: once per local maximum
            self._peak_pending = True

    def _remove_bytes(self, entry: Entry) -> None:
        if self._peak_pending:
            self._settle_peak()
        n = entry.nbytes
        self.gpu.tensor_remove(entry.device, n)
        self.roles[entry.role] -= n
        key = (entry.role, entry.module)
        left = self.module_bytes.get(key, 0) - n
        if left > 0:
            self.module_bytes[key] = left
        else:
            self.module_bytes.pop(key, None)
        if entry.role in _BY_LINE and entry.line:
            rest = self.line_bytes.get(entry.line, 0) - n
            if rest > 0:
                self.line_bytes[entry.line] = rest
            else:
                self.line_bytes.pop(entry.line, None)
        self.total -= n

    def _settle_peak(self) -> None:
        self.peak_modules = dict(self.module_bytes)
        self._peak_pending = False

    def line_here(self) -> str:
        """``file:line`` of the innermost frame that is neither torch's nor memgauge's."""
        frame = sys._getframe(2)
        known = self._internal_code
        while frame is not None:
            code = frame.f_code
            internal = known.get(code)
            if internal is None:
                internal = known[code] = code.co_filename.startswith(self.internal) or (
                    code.co_filename.startswith("<frozen")
                )
            if not internal:
                return f"{code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back  # type: ignore[assignment]
        return ""

    def live(self, *, top: int | None = None) -> list[dict[str, Any]]:
        """The live storages as rows, largest first."""
        entries = sorted(self.entries.values(), key=lambda e: e.nbytes, reverse=True)
        return [e.row() for e in (entries if top is None else entries[:top])]

    # -- steps -----------------------------------------------------------------------------------

    def enter(self, phase: str) -> None:
        """Forward, backward or optimizer begins (a forward inside a forward changes nothing)."""
        now = self.clock()
        if self._step_start is None:
            self._step_start = now
        if self.phase in self._phase_seconds:
            self._phase_seconds[self.phase] += now - self._phase_t0
        self.phase = phase
        self._phase_t0 = now
        self.active = True

    def leave(self) -> None:
        if self.phase in self._phase_seconds:
            self._phase_seconds[self.phase] += self.clock() - self._phase_t0
        self.phase = ""

    def end_step(self, kind: str) -> None:
        now = self.clock()
        if not self.active and kind == "optimizer" and self.ended > 0:
            # a second optimizer stepping right after the first (GANs, several param groups): one step
            self.leave()
            if self._recorded:
                last = self.steps[-1]
                last["seconds"] = now - last["start"]
                last["optimizer_seconds"] += self._phase_seconds["optimizer"]
                last["peak_bytes"] = max(last["peak_bytes"], self._step_peak)
                last["end_bytes"] = self.total
                last["end_by_role"] = self.by_role(self.roles)
            self.gpu.window_end("step", self.ended - 1)
        else:
            if self.tracking:
                self.leave()
                self._recorded = self._append_step(kind, now)
            else:  # unfollowed: counted, and its time is the loop's (``on_step``); nothing else kept
                self.phase = ""
                self.steps_untracked += 1
                self._recorded = False
            self.ended += 1
            self.gpu.window_end("step", self.ended - 1)
            if self.on_step is not None:
                self.on_step(kind, self._step_start)  # the throughput loop (``sections/training/_capture``)
            if self.after_step is not None:
                self.after_step(now)
        self._step_start = now
        self.active = False
        if self.tracking:  # the next step is followed: its peak and phases start here
            self._step_peak = self.total
            self._step_peak_roles = self.roles[:]
            self._step_peak_serial = self.serial
            self._phase_seconds = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
        if self.pace.due(now):
            self.flush()

    def _append_step(self, kind: str, now: float) -> bool:
        if len(self.steps) >= MAX_STEPS:
            self.steps_dropped += 1
            return False
        start = now if self._step_start is None else self._step_start
        seconds = self._phase_seconds
        retained = sorted(self.line_bytes.items(), key=lambda kv: kv[1], reverse=True)[:STEP_LINES]
        self.steps.append(
            {
                "index": self.ended,
                "start": start,
                "seconds": now - start,  # unrounded, as the phases' (the reader rounds: round() is slow)
                "peak_bytes": self._step_peak,
                "end_bytes": self.total,
                **{f"{phase}_seconds": t for phase, t in seconds.items()},
                "kind": kind,
                "peak_by_role": self.by_role(self._step_peak_roles),
                "end_by_role": self.by_role(self.roles),
                "retained": dict(retained),
            }
        )
        return True

    # -- out of memory ---------------------------------------------------------------------------

    def seen_oom(self, exception: BaseException) -> bool:
        return id(exception) in self._oom_seen

    def out_of_memory(self, exception: BaseException, where: str) -> None:
        """Record what was held when torch ran out of memory (once per exception object, which
        is never kept: it holds the failed step's frames and so its tensors)."""
        if id(exception) in self._oom_seen:
            return
        self._oom_seen.add(id(exception))
        self.oom_count += 1
        self.oom = {
            "t": self.clock(),
            **oom_fields(str(exception)),
            "where": where,
            "step": self.ended,
            "phase": self.phase,
            "by_role": self.by_role(self.roles),
            "total_bytes": self.total,
            "tensors": self.live(top=TOP_TENSORS),
        }
        self.flush()

    # -- the record ------------------------------------------------------------------------------

    @staticmethod
    def by_role(values: list[int]) -> dict[str, int]:
        return dict(zip(ROLES, values, strict=True))

    def record(self) -> dict[str, Any]:
        if self._peak_pending:
            self._settle_peak()
        rows = ((ROLES[role], name, n) for (role, name), n in self.peak_modules.items() if n > 0 and name)
        modules = sorted(rows, key=lambda row: row[2], reverse=True)
        out: dict[str, Any] = {
            "pid": self.pid,
            "mode": self.mode,
            "t": self.clock(),
            "peak_bytes": self.peak,
            "peak_t": self.peak_t,
            "peak_by_role": self.by_role(self.peak_roles),
            "max_by_role": self.by_role(self.max_roles),
            "end_by_role": self.by_role(self.roles),
            "modules": [list(row) for row in modules[:TOP_MODULES]],
            "steps": self.steps,
            "steps_dropped": self.steps_dropped,
            "steps_untracked": self.steps_untracked,
            "devices": sorted(d for d in self.devices if d),
            "notes": self.notes,
            "oom_count": self.oom_count,
        }
        if self.oom is not None:
            out["oom"] = self.oom
        if (gpu := self.gpu.record()) is not None:
            out["gpu"] = gpu
        return out

    def flush(self) -> None:
        self.write = paced_write(self.pace, self.clock, self.write, self.record)
