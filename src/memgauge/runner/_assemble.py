"""Turn what the watcher sampled and what the processes reported into a Profile.

Imported only once the program is running, so its imports (dataclasses, json) cost the run nothing.
"""

from __future__ import annotations

import os
import signal

from memgauge._errors import TargetNotFoundError
from memgauge._units import format_bytes
from memgauge._version import __version__
from memgauge.capture import (
    BOOTSTRAP_FAILED,
    EV_ERROR,
    EV_EXIT,
    EV_HWM_RESET,
    EV_PHASE_END,
    EV_PHASE_START,
    MODULE_NOT_FOUND,
    metrics_from_events,
    read_events,
    read_knobs,
    read_lines,
)
from memgauge.model import (
    UNBOUNDED_NOTE,
    AllocationPeak,
    CaptureWarning,
    CpuTimes,
    ExitStatus,
    Peak,
    PhaseRecord,
    ProcessRecord,
    Profile,
    Reconciliation,
)
from memgauge.runner._assemble_sections import SectionInputs, section_parts
from memgauge.runner._order import (
    allocations_of,
    capped,
    held_at_exit_of,
    leak_note_of,
    leak_suspects_of,
    order_phases,
)
from memgauge.runner._state import RunState
from memgauge.runner._target import Target
from memgauge.runner._unsampled import charge_unsampled
from memgauge.watcher import (
    MemoryGroup,
    TreeWatcher,
    WatchedProcess,
    group_page_cache,
    machine_environment,
    user_cmdline,
)

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

    from memgauge.runner._options import RunOptions
    from memgauge.runner._watch import Watched


def _exit_status(status: int, oom: bool) -> ExitStatus:
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return ExitStatus(code=code)
    sig = -code
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return ExitStatus(code=None, signal=sig, signal_name=name, oom_killed=oom and sig == signal.SIGKILL)


def _check_bootstrap(events: list[dict[str, Any]], state: RunState, target: Target) -> None:
    """A module the bootstrap could not find is the user's error, not the program's exit."""
    main_status = state.reaped[state.main_pid].status
    if not (os.WIFEXITED(main_status) and os.WEXITSTATUS(main_status) == BOOTSTRAP_FAILED):
        return
    for ev in events:
        if ev["ev"] == EV_ERROR and ev.get("kind") == MODULE_NOT_FOUND:
            raise TargetNotFoundError(str(ev.get("message", f"no module named {target.value}")))


def _merge_events(
    events: list[dict[str, Any]], watcher: TreeWatcher, state: RunState, t0: float
) -> tuple[dict[int, WatchedProcess], set[int], dict[str, Any]]:
    """The watcher's per-process records completed by what the processes reported themselves:
    by pid, the pids whose peak is their own exact figure, and the program's environment."""
    by_pid: dict[int, WatchedProcess] = {}
    for proc in watcher.processes:
        by_pid[proc.pid] = proc  # the latest image of a pid is the one that emits events
    exact: set[int] = set()
    program_env: dict[str, Any] = {}
    for ev in events:
        pid = int(ev["pid"])
        found = by_pid.get(pid)
        if found is None:
            # lived between two samples: known only from its own events
            t = float(ev["t"]) - t0
            found = by_pid[pid] = WatchedProcess(pid, None, (0, 0), [], t, t, alive=False)
            watcher.processes.append(found)
        proc = found
        if ev["ev"] in (EV_PHASE_START, EV_HWM_RESET):
            proc.peak = max(proc.peak, int(ev["hwm_before"]))
        elif ev["ev"] == EV_PHASE_END:
            proc.peak = max(proc.peak, int(ev["peak"]))
        elif ev["ev"] == EV_EXIT:
            exact.add(pid)
            env = _exited(proc, ev, state, t0)
            if pid == state.main_pid or not program_env:
                program_env = env
    return by_pid, exact, program_env


def _exited(proc: WatchedProcess, ev: dict[str, Any], state: RunState, t0: float) -> dict[str, Any]:
    """A process's exit report into its record and the run's state; returns its environment."""
    proc.peak = max(proc.peak, int(ev["hwm"]))
    proc.last_seen = max(proc.last_seen, float(ev["t"]) - t0)
    proc.cmdline = proc.cmdline or user_cmdline(list(ev.get("cmdline") or [])) or []
    if proc.pid == state.main_pid:
        state.program_times = {k: float(ev[k]) for k in ("started", "ended") if k in ev}
    for what, seconds in dict(ev.get("own_cpu") or {}).items():
        if isinstance(seconds, (int, float)):
            state.own_cpu.append((str(what), proc.pid, float(seconds)))
    return dict(ev.get("env") or {})


def _process_records(
    watcher: TreeWatcher, state: RunState, by_pid: dict[int, WatchedProcess], exact: set[int]
) -> list[ProcessRecord]:
    processes = [
        ProcessRecord(
            pid=p.pid,
            ppid=p.ppid,
            cmdline=p.cmdline,
            start_seconds=p.first_seen,
            end_seconds=state.reaped[p.pid].at if (p.pid in state.reaped and not p.alive) else p.last_seen,
            peak_resident_bytes=p.peak,
            cpu_user_seconds=p.user,
            cpu_system_seconds=p.system,
            peak_exact=p.pid in exact and by_pid.get(p.pid) is p,
        )
        for p in watcher.processes
        if not p.replaced_by_exec
    ]
    processes.sort(key=lambda r: (r.start_seconds, r.pid))
    return processes


def _between_samples(
    processes: list[ProcessRecord], sampled_peaks: dict[int, int], charged: set[int]
) -> list[str]:
    """A note for each process whose peak fell between its line samples (not one charged whole
    to the line that started it)."""
    notes = []
    for record in processes:
        sampled = sampled_peaks.get(record.pid)
        if record.pid not in charged and sampled is not None and sampled < 0.9 * record.peak_resident_bytes:
            notes.append(
                f"process {record.pid}: its peak ({format_bytes(record.peak_resident_bytes)}) fell between "
                f"line samples; its attribution describes the highest sample ({format_bytes(sampled)})"
            )
    return notes


def assemble_profile(
    target: Target,
    state: RunState,
    watcher: TreeWatcher,
    group: MemoryGroup | None,
    group_reason: str,
    events_dir: str,
    wall: float,
    global_ooms: int,
    options: RunOptions,
    watched: dict[str, Watched] | None = None,
) -> Profile:
    t0 = watcher.t0
    # every file the processes wrote and the profile cannot use (see capture's wire format)
    warnings: list[CaptureWarning] = []
    events = read_events(events_dir, warnings=warnings)
    _check_bootstrap(events, state, target)
    by_pid, exact, program_env = _merge_events(events, watcher, state, t0)
    processes = _process_records(watcher, state, by_pid, exact)
    phases = _phases_from_events(events, t0, by_pid, wall)
    oom = (group.oom_kills() if group is not None else global_ooms) > 0
    peak = _tree_peak(watcher, group, processes, group_reason)
    _needs(peak, watcher, group, {r.pid: r.peak_resident_bytes for r in processes})
    if oom:
        peak.notes.append("the kernel's OOM killer killed a process during the run")
    user = sum(r.user for r in state.reaped.values())
    system = sum(r.system for r in state.reaped.values())
    environment: dict[str, Any] = {**machine_environment(), **program_env, "mode": "child-process"}
    environment["measurement"] = {
        "tree_peak_method": peak.method,
        "cgroup": str(group.path) if group is not None else None,
        "cgroup_unavailable_reason": None if group is not None else group_reason,
        "sampling_interval_start_seconds": options.interval,
        "memory_limit_bytes": options.memory_limit_bytes,
        "lines": options.lines,
        "alloc": options.alloc,
        "torch": options.torch,
    }
    knobs = read_knobs(events_dir)
    if knobs is not None:  # a sweep's or a fit's parameters, and how each reached the program
        environment["knobs"] = knobs
    line_data = read_lines(events_dir, t0, {p.pid for p in processes}, warnings=warnings)
    # a child that left no lines for its peak is charged to the line that started it
    charged, charged_notes = charge_unsampled(line_data, processes)
    peak.attribution = sorted([*line_data.attribution, *charged], key=lambda a: -a.bytes)
    peak.notes += charged_notes
    peak.notes += _between_samples(processes, line_data.sampled_peaks, {a.pid for a in charged})
    allocation_peak: AllocationPeak | None = None
    reconciliation: list[Reconciliation] = []
    held = held_at_exit_of(line_data)
    if options.alloc:
        allocation_peak, reconciliation, held = allocations_of(
            events_dir, processes, options.lines == "lib", warnings, held, environment["measurement"]
        )
    # before the Profile: its warnings are capped there
    measurement = environment["measurement"]
    cpu = watcher.cpu.build
    inputs = SectionInputs(
        events_dir, t0, options, watched or {}, processes, line_data, warnings, cpu, measurement
    )
    parts = section_parts(inputs)
    return Profile(
        command=target.display(),
        exit=_exit_status(state.reaped[state.main_pid].status, oom),
        wall_seconds=wall,
        cpu=CpuTimes(user, system),
        peak=peak,
        processes=processes,
        phases=phases,
        timeline=watcher.builder.build(),
        environment=environment,
        lines=line_data.lines,
        imports=line_data.imports,
        leaks=leak_suspects_of(line_data, t0),
        allocation_peak=allocation_peak,
        reconciliation=reconciliation,
        memgauge_version=__version__,
        metrics=metrics_from_events(events),
        warnings=capped(warnings),
        **parts,
        held_at_exit=held,
        leak_note=leak_note_of(line_data),
    )


def _tree_peak(
    watcher: TreeWatcher, group: MemoryGroup | None, processes: list[ProcessRecord], group_reason: str = ""
) -> Peak:
    largest = max((p.peak_resident_bytes for p in processes), default=0)
    sampled = watcher.max_sampled_tree
    if group is not None:
        peak = Peak(
            resident_bytes=group.peak(),
            method=group.method,
            error_bound_bytes=group.error_bound_bytes,
            at_seconds=watcher.group_peak_at,
            includes_page_cache=True,
            largest_process_bytes=largest,
            sampled_tree_bytes=sampled,
        )
        if group.note is not None:  # a host that keeps no counter: which figure replaced it
            peak.notes.append(group.note)
        if largest > 1.1 * (peak.resident_bytes + peak.error_bound_bytes):
            peak.notes.append(
                f"the largest process's own peak ({format_bytes(largest)}) is above the group's: file pages "
                "(libraries, mapped files) already cached count in a process's RSS but are charged to the "
                "cgroup that first read them"
            )
        return peak
    best = max(sampled, largest)
    upper = sum(p.peak_resident_bytes for p in processes)
    # what the host could not give and which figure replaced it, in one line (docs/hosts.md)
    why = f" ({group_reason})" if group_reason else ""
    notes = [
        f"no memory cgroup{why}: the tree peak is the largest sampled sum of the processes' resident "
        "sizes (at most the sum of their own peaks, VmHWM); a process shorter than one sample can be "
        "missed"
    ]
    if upper < best:
        # a process in a sampled sum has no record: the upper bound is not known
        notes.append(UNBOUNDED_NOTE)
    return Peak(
        resident_bytes=best,
        method="sampled tree sum + per-process VmHWM",
        error_bound_bytes=max(0, upper - best),
        at_seconds=watcher.max_sampled_tree_at,
        includes_page_cache=False,
        largest_process_bytes=largest,
        sampled_tree_bytes=sampled,
        notes=notes,
    )


# the headroom on top of the pages in use (docs/measurement.md "What a container needs"): under a
# limit at exactly the working set the kernel refaults library pages it just dropped and the program
# stalls (seen: bench/programs/sk_linear.py stalled under 368 MiB with 363 MiB in use, 358 MiB of it
# anonymous); 5% covers that on every program measured and keeps within 25% of the full-speed limit.
# Added whether a window closed or not, so a program ending near a window's end gets one figure.
NEEDS_HEADROOM = 0.05


def _needs(peak: Peak, watcher: TreeWatcher, group: MemoryGroup | None, peaks: dict[int, int]) -> None:
    """What a container needs (docs/measurement.md): the largest sampled tree need (``TreeNeeds``):
    anonymous and shmem pages plus the file pages used (referenced per window, ``FileWorkingSet``;
    every mapped one where the working set is off), with the parts of that sample and the group's
    page cache, which it does not count. The largest process's ``VmHWM`` (max RSS) stands beside it:
    it counts every mapped library page, used or not. Without a tree need (no sample), that.
    ``peaks``: each process's final ``VmHWM`` (exact at exit for Python programs), for the last
    window."""
    watcher.finish_needs(peaks)
    tree = watcher.needs
    ws = watcher.working_set
    if tree.total:
        used = ws is not None and ws.windows > 0
        peak.needs_headroom_bytes = round(tree.total * NEEDS_HEADROOM)
        peak.needs_bytes = tree.total + peak.needs_headroom_bytes
        peak.needs_method = "sampled working set" if used else "sampled tree need"
    else:
        peak.needs_bytes, peak.needs_method = peak.largest_process_bytes, "largest process VmHWM"
    peak.needs_anon_bytes, peak.needs_file_bytes, peak.needs_shmem_bytes = tree.anon, tree.file, tree.shmem
    peak.needs_at_seconds = tree.at if tree.total else None
    peak.page_cache_bytes = group_page_cache(group) if group is not None else None


def _phases_from_events(
    events: list[dict[str, Any]], t0: float, by_pid: dict[int, WatchedProcess], wall: float
) -> list[PhaseRecord]:
    entries: list[tuple[Any, Any, PhaseRecord]] = []
    open_: dict[tuple[int, int], dict[str, Any]] = {}
    for ev in events:
        key = (int(ev["pid"]), int(ev.get("id", -1)))
        if ev["ev"] == EV_PHASE_START:
            open_[key] = ev
        elif ev["ev"] == EV_PHASE_END and key in open_:
            start = open_.pop(key)
            entries.append(_phase_entry(start, ev, t0))
    for key, start in open_.items():
        # the process ended (or was killed) inside the phase: keep what is known
        proc = by_pid.get(key[0])
        end_t = proc.last_seen if proc is not None else wall
        start_t = float(start["t"]) - t0
        lower = int(start["rss"])
        if proc is not None and proc.last_high_water_at >= start_t:
            lower = max(lower, proc.last_high_water)
        record = PhaseRecord(
            name=str(start["name"]),
            pid=key[0],
            start_seconds=start_t,
            end_seconds=max(end_t, start_t),
            peak_resident_bytes=lower,
            start_resident_bytes=int(start["rss"]),
            end_resident_bytes=0,
            depth=int(start["depth"]),
            thread=str(start.get("thread", "")),
            peak_exact=False,
            complete=False,
        )
        parent = start.get("parent")
        entries.append((key, (key[0], parent) if parent is not None else None, record))
    return order_phases(entries)


def _phase_entry(start: dict[str, Any], end: dict[str, Any], t0: float) -> tuple[Any, Any, PhaseRecord]:
    pid = int(start["pid"])
    record = PhaseRecord(
        name=str(start["name"]),
        pid=pid,
        start_seconds=float(start["t"]) - t0,
        end_seconds=float(end["t"]) - t0,
        peak_resident_bytes=int(end["peak"]),
        start_resident_bytes=int(start["rss"]),
        end_resident_bytes=int(end["rss"]),
        depth=int(start["depth"]),
        thread=str(start.get("thread", "")),
        peak_exact=bool(end.get("exact", True)),
    )
    io = end.get("io")
    if isinstance(io, list) and len(io) == 4 and all(type(v) is int and v >= 0 for v in io):
        record.rchar, record.wchar, record.read_bytes, record.write_bytes = io
    parent = start.get("parent")
    return (pid, int(start["id"])), ((pid, parent) if parent is not None else None), record
