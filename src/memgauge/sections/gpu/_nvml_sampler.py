"""Polling NVML in the runner's process while the program runs: peaks per device and per process.

A thread polls every ``interval`` seconds (150 ms: NVML's own figures change about every 200 ms,
docs/gpu-facts.md, so polling faster adds nothing) and keeps, per device, the largest used memory,
utilisation's largest and mean, and, per pid NVML lists there, its largest used memory; and the
utilisation over time (gpu % and memory % per sample, at most ``MAX_SERIES`` samples: past that the
series are thinned by pairs and the interval between kept samples doubles). Every pid
is kept: which of them belong to the run is decided at assembly, when the whole process tree is
known (``sections/gpu/_assemble``). ``poll`` is public so that tests drive it without the thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memgauge.sections.gpu._nvml import NvmlDevice, NvmlSource, open_nvml

# NVML's own figures change about every 200 ms (docs/gpu-facts.md): polling faster adds nothing
INTERVAL = 0.15
MAX_SERIES = 2000  # utilisation samples kept per device: past it, every other one goes


@dataclass
class NvmlDeviceSamples:
    device: NvmlDevice
    used_peak: int = 0
    utilization_peak: int | None = None
    utilization_sum: int = 0
    utilization_count: int = 0
    # pid -> the largest used bytes NVML gave for it on this device
    processes: dict[int, int] = field(default_factory=dict)
    # the utilisation over time: (seconds since sampling began, gpu %, memory %), None: unsupported
    series: list[tuple[float, int | None, int | None]] = field(default_factory=list)

    @property
    def utilization_mean(self) -> float | None:
        return None if not self.utilization_count else self.utilization_sum / self.utilization_count


@dataclass
class NvmlSamples:
    """What the sampler saw; ``note`` says why there is nothing (no NVML) or what was missed."""

    devices: list[NvmlDeviceSamples] = field(default_factory=list)
    polls: int = 0
    note: str = ""
    # the seconds between two samples of ``series`` (the poll interval, doubled each time the
    # series were thinned by pairs), and when sampling began (``time.monotonic``)
    series_interval: float = INTERVAL
    t_start: float = 0.0


class NvmlSampler:
    def __init__(
        self, source: NvmlSource, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.source = source
        self.interval = interval
        self.clock = clock
        devices = [NvmlDeviceSamples(d) for d in source.devices()]
        self.samples = NvmlSamples(devices=devices, series_interval=interval, t_start=clock())
        self._every = 1  # polls per kept utilisation sample
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def poll(self) -> None:
        """One reading of every device."""
        with self._lock:
            t = round(self.clock() - self.samples.t_start, 4)
            keep = self.samples.polls % self._every == 0
            for row in self.samples.devices:
                reading = self.source.read(row.device.index)
                if keep:
                    row.series.append((t, reading.utilization, reading.memory_utilization))
                row.used_peak = max(row.used_peak, reading.used_bytes)
                if reading.utilization is not None:
                    row.utilization_peak = max(row.utilization_peak or 0, reading.utilization)
                    row.utilization_sum += reading.utilization
                    row.utilization_count += 1
                for pid, used in reading.processes.items():
                    row.processes[pid] = max(row.processes.get(pid, 0), used)
            self.samples.polls += 1
            if keep and self.samples.devices and len(self.samples.devices[0].series) >= MAX_SERIES:
                for row in self.samples.devices:
                    del row.series[1::2]
                self._every *= 2
                self.samples.series_interval = self.interval * self._every

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception as e:  # NVML failing mid-run (a driver reset): keep what was seen
                self.samples.note = f"NVML stopped answering during the run ({e}): its figures are partial"
                return
            self._stop.wait(self.interval)

    def start(self) -> NvmlSampler:
        self._thread = threading.Thread(target=self._run, name="memgauge-nvml", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> NvmlSamples:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.source.close()
        return self.samples


def open_sampler(main_pid: int | None, interval: float | None = None) -> NvmlSampler | str:
    """A started sampler, or the line saying why there are no NVML figures
    (``_nvml_start.start_nvml_sampler``)."""
    source, why = open_nvml(main_pid=main_pid)
    if source is None:
        return why
    try:
        return NvmlSampler(source, INTERVAL if interval is None else interval).start()
    except Exception as e:  # a device list NVML cannot give: no GPU figures, never a failed run
        source.close()
        return f"no GPU figures from outside the program: NVML failed ({e})"
