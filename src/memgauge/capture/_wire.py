"""The wire format: every file a measured process writes for the runner, defined once.

The writers (``_events.EventWriter``, the line sampler's ``_lines_write``, the import tracker that
feeds it, the allocation tracker ``_alloc``) and the readers (``_events_read``, ``_lines_read``,
``_alloc_read``) take the file names, the version, the record kinds and the field names from here.
Every record carries the version it was written in under ``"v"``. A reader that meets a record of
a version it does not read, or one that breaks the layout below, drops that record and says so in
the profile's ``warnings``: a writer and a reader that drift apart lose nothing without a word.

Version 1. In the events directory (``MEMGAUGE_EVENTS_DIR``), per process (``<pid>``):

``events.<pid>.jsonl``
    One JSON object per line, appended one ``os.write`` at a time (nothing is lost when the
    process is killed): ``v``, ``ev`` (the kind), ``t`` (``time.monotonic()``, one clock for every
    process on the machine), ``pid``, and the fields ``EVENT_FIELDS`` lists for the kind (those in
    ``EVENT_OPTIONAL`` may be left out).
``lines.<pid>.json``
    The line sampler's aggregate: one JSON object with the fields ``LINES_FIELDS`` lists (and those
    of ``LINES_OPTIONAL``, which a reader does not need), rewritten whole (a temporary file renamed
    over it) every few seconds and at exit. Its tables are arrays of positional rows, columns named
    by ``KEY_ROW``, ``LINE_ROW``, ``RETAINED_ROW``, ``SERIES_ROW``, ``POINT_ROW`` and
    ``IMPORT_ROW``: the file is rewritten over and over, and rows are most of it. A key is an index
    into ``keys``; a stack id a key of ``stacks``, whose value is the stack's keys, outermost first.
``alloc.<pid>.json``
    ``BASELINE_FIELDS``: the process's resident bytes when its allocation tracking began.
``alloc.<pid>.bin``
    memray's capture, in memray's own (versioned) format, written when the tracker stops.

Version 2 adds the lines file's optional ``children`` (``CHILD_ROW`` rows: a process this one
started and the key of its line that started it), and, per process that imported torch:

``torch.<pid>.json``
    The torch tracker's record (``TORCH_FIELDS``, ``TORCH_OPTIONAL``), rewritten whole (a temporary
    file renamed over it) at most every second at step ends, at an out-of-memory error and at exit:
    bytes by role (``TORCH_ROLES``) at the peak, each role's maximum, the modules at the peak as
    ``[role, module, bytes]`` rows, and one object per step (``TORCH_STEP_FIELDS``).

A change of layout bumps ``WIRE_VERSION``; readers list what they still read in
``READABLE_VERSIONS``. Records from before the format carried a version (no ``"v"``) have the
layout of version 1 and read as version 1.

No imports: every measured process loads this module before its program starts.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

WIRE_VERSION = 2
READABLE_VERSIONS = (1, 2)
VERSION = "v"

# file kinds: (prefix, suffix) around the writing process's pid
EVENTS = ("events.", ".jsonl")
LINES = ("lines.", ".json")
ALLOC_CAPTURE = ("alloc.", ".bin")
ALLOC_BASELINE = ("alloc.", ".json")
TORCH = ("torch.", ".json")
TRAINING = ("training.", ".json")

# field types: "int" (not a bool), "number", "str", "bool", "list", "dict"; "int?", "number?" may be null
EVENT_COMMON = {"ev": "str", "t": "number", "pid": "int"}
EV_PHASE_START = "phase_start"
EV_PHASE_END = "phase_end"
EV_HWM_RESET = "hwm_reset"
EV_EXIT = "exit"
EV_ERROR = "error"
EV_METRIC = "metric"
# the ``kind`` of an error event: the user's input named no module to run
MODULE_NOT_FOUND = "module_not_found"
EVENT_FIELDS = {
    EV_PHASE_START: {"id": "int", "name": "str", "depth": "int", "rss": "int", "hwm_before": "int"},
    EV_PHASE_END: {"id": "int", "peak": "int", "rss": "int"},
    EV_HWM_RESET: {"hwm_before": "int"},
    EV_EXIT: {"hwm": "int"},
    EV_ERROR: {"kind": "str"},
    EV_METRIC: {"name": "str", "value": "number"},
}
EVENT_OPTIONAL = {
    EV_PHASE_START: {"parent": "int?", "thread": "str", "reset": "bool"},
    # io: the phase's rchar, wchar, read_bytes, write_bytes (``_proc_io``)
    EV_PHASE_END: {"exact": "bool", "io": "list"},
    # started/ended: the program's first line and its return (monotonic); startup_cpu: the
    # process's CPU seconds by its first line; own_cpu: memgauge's threads' CPU seconds, by name
    EV_EXIT: {
        "cmdline": "list",
        "env": "dict",
        "started": "number",
        "ended": "number",
        "startup_cpu": "number",
        "own_cpu": "dict",
    },
    EV_ERROR: {"message": "str"},
    EV_HWM_RESET: {},
    EV_METRIC: {},
}

LINES_FIELDS = {
    "pid": "int",
    "t_end": "number",
    "keys": "list",
    "lines": "list",
    "stacks": "dict",
    "peak": "dict",
    "series": "list",
    "imports": "list",
}
# written by the sampler for whoever looks at a file, and not needed to read one
LINES_OPTIONAL = {
    "t_start": "number",
    "interval": "number",
    "lib": "bool",
    "retained": "list",
    "children": "list",
    # per line, its time runnable but queued for a CPU (``CONTENTION_ROW``), left out of its
    # wait_seconds: an addition, version 2 still (a file without it has contention in its wait)
    "contention": "list",
    # "outside" when the runner wrote the file from samples read outside the process (py-spy:
    # ``_lines_join``); absent when the process sampled itself
    "sampler": "str",
}
PEAK_FIELDS = {"rss": "int", "retained": "list"}
PEAK_OPTIONAL = {"t": "number"}
KEY_ROW = ("file", "line", "function")
# a line's statistics follow its key; the sampler keeps them in this order (CPU_PYTHON ... SAMPLES)
LINE_STATS = ("cpu_python_seconds", "cpu_native_seconds", "wait_seconds", "resident_growth_bytes", "samples")
CPU_PYTHON, CPU_NATIVE, WAIT, GROWTH, SAMPLES = range(len(LINE_STATS))
LINE_ROW = ("key", *LINE_STATS)
RETAINED_ROW = ("stack", "bytes")
SERIES_ROW = ("key", "points")
POINT_ROW = ("t", "bytes")
IMPORT_ROW = ("package", "start", "seconds", "resident_bytes", "self_seconds", "self_resident_bytes")
# the lines file's optional ``children``: a process this one started, and its line that started it
CHILD_ROW = ("pid", "key")
CONTENTION_ROW = ("key", "seconds")

BASELINE_FIELDS = {"baseline": "int", "t": "number"}

TORCH_ROLES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries", "other")
TORCH_FIELDS = {
    "pid": "int",
    "mode": "str",
    "t": "number",
    "peak_bytes": "int",
    "peak_by_role": "dict",
    "max_by_role": "dict",
    "end_by_role": "dict",
    "modules": "list",
    "steps": "list",
}
TORCH_OPTIONAL = {
    "peak_t": "number?",
    "steps_dropped": "int",
    # the steps not followed tensor by tensor (``sections/torch/_capture_sampling``): counted, not listed
    "steps_untracked": "int",
    "devices": "list",
    "notes": "list",
    "oom_count": "int",
    "oom": "dict",
    # the CUDA allocator per device and window (``sections/gpu/_capture_log.GPU_FIELDS``)
    "gpu": "dict",
}
TORCH_STEP_FIELDS = {"start": "number", "seconds": "number", "peak_bytes": "int", "end_bytes": "int"}
TORCH_STEP_OPTIONAL = {
    "index": "int",  # the step's number among all steps, untracked ones included
    "forward_seconds": "number",
    "backward_seconds": "number",
    "optimizer_seconds": "number",
    "kind": "str",
    "peak_by_role": "dict",
    "end_by_role": "dict",
    "retained": "dict",
}
TORCH_OOM_FIELDS = {"t": "number", "message": "str", "by_role": "dict", "tensors": "list"}
TORCH_OOM_OPTIONAL = {
    "requested_bytes": "int?",
    "device": "str",
    "where": "str",
    "step": "int",
    "phase": "str",
    "total_bytes": "int",
}

# ``training.<pid>.json``: the throughput loop's record (``sections/training/_capture.Loop.record``),
# rewritten whole at most every second at step ends and at exit; ``steps`` are ``TRAINING_STEP_ROW`` rows and
# ``counters`` map a kind to ``[count, first t, last t]`` (an addition: version 2 still)
TRAINING_FIELDS = {"pid": "int", "t": "number", "steps": "list", "counters": "dict"}
TRAINING_OPTIONAL = {
    "steps_dropped": "int",
    "fetches": "int",
    "flops": "dict",
    "peak": "dict",
    # what the process is to the loop ("DataLoader worker 0"), and its /proc/self/io counters at exit
    "role": "str",
    "io": "dict",
    # bytes copied across devices (``sections/training/_capture_copies.Copies.record``) and pickled
    # (``sections/training/_capture_pickles``)
    "copies": "dict",
    "pickles": "dict",
}
TRAINING_COPIES_FIELDS = {"total": "dict", "count": "dict", "steps": "list", "lines": "list"}
TRAINING_PICKLES_FIELDS = {"count": "int", "bytes": "int", "shared_count": "int", "shared_bytes": "int"}
TRAINING_STEP_ROW = ("end", "seconds", "wait_seconds", "samples", "kind", "tokens")
TRAINING_FLOPS_FIELDS = {"step": "int", "total": "int", "by": "list", "device_name": "str"}
TRAINING_PEAK_FIELDS = {"flops_per_second": "number", "dtype": "str", "source": "str"}


def file_name(kind: tuple[str, str], pid: int) -> str:
    return f"{kind[0]}{pid}{kind[1]}"


def pid_of(name: str, kind: tuple[str, str]) -> int | None:
    """The pid in a file ``name`` of ``kind``; None for any other name (a temporary file, a
    stranger's)."""
    prefix, suffix = kind
    if not (name.startswith(prefix) and name.endswith(suffix)) or len(name) <= len(prefix) + len(suffix):
        return None
    middle = name[len(prefix) : len(name) - len(suffix)]
    return int(middle) if middle.isascii() and middle.isdigit() else None


def records_written(directory: str) -> set[str]:
    """The whole-record kinds some process wrote in ``directory`` (``"torch"``, ``"training"``):
    a section none of whose files is there has nothing to say, and its readers need not load."""
    import os

    names = os.listdir(directory)
    kinds = (TORCH, TRAINING)
    return {kind[0].rstrip(".") for kind in kinds if any(pid_of(n, kind) is not None for n in names)}


class WritePace:
    """When a whole-record file is rewritten next: ``every`` seconds after the last write, or, once
    a write takes longer (a long run's record grows: 20,000 training steps are 24 ms of JSON), as
    far apart as keeps writing to ``share`` of the time. A killed process loses at most that long."""

    def __init__(self, every: float = 1.0, share: float = 0.005) -> None:
        self.every, self.share = every, share
        self.last = 0.0  # when the last write ended
        self.gap = every

    def due(self, now: float) -> bool:
        return now - self.last >= self.gap

    def start(self, now: float) -> None:
        """A write begins: not due again meanwhile (a queue's feeder thread flushes the same
        record as the main thread: two writes at once made one fail, and the record stop)."""
        self.last = now

    def wrote(self, started: float, ended: float) -> None:
        self.last = ended
        self.gap = max(self.every, (ended - started) / self.share)


def paced_write(
    pace: WritePace,
    clock: Callable[[], float],
    write: Callable[[dict[str, Any]], None] | None,
    record: Callable[[], dict[str, Any]],
) -> Callable[[dict[str, Any]], None] | None:
    """Write ``record()`` now (the pace told when it starts and ends); the writer to keep, None once
    a write failed (the directory is gone: the program goes on unmeasured)."""
    started = clock()
    pace.start(started)
    if write is not None:
        try:
            write(record())
        except (OSError, TypeError, ValueError):
            write = None
    pace.wrote(started, clock())
    return write


def record_writer(directory: str, kind: tuple[str, str]) -> Callable[[dict[str, Any]], None]:
    """The writer of this process's whole-record file of ``kind`` (``TORCH``, ``TRAINING``): each
    call replaces the file at once (a temporary file renamed over it), the record stamped with
    ``WIRE_VERSION``."""
    import json
    import os
    import threading

    def write(record: dict[str, Any]) -> None:
        path = os.path.join(directory, file_name(kind, os.getpid()))
        # one temporary file per thread: two threads writing at once each rename a whole record
        tmp = f"{path}.{threading.get_ident()}.tmp"
        text = json.dumps({VERSION: WIRE_VERSION, **record}, separators=(",", ":"), allow_nan=False)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)

    return write


def open_record(path: str, binary: bool = False) -> Any:
    """A file of the events directory, opened for reading if it is a regular file (OSError if
    not). The program can write in that directory: a FIFO it left under a record's name would
    block whoever opens it for ever, so the file is opened without blocking and checked first."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {path}")
        os.set_blocking(fd, True)
        return open(fd, "rb") if binary else open(fd, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def read_records(
    directory: str, kind: tuple[str, str], check: Callable[[Any], str | None]
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Every process's whole-record file of ``kind`` that reads and passes ``check`` (which
    returns the problem, or None), and, for each that does not, its file name and the problem."""
    import json
    import os

    records: list[dict[str, Any]] = []
    problems: list[tuple[str, str]] = []
    for name in sorted(os.listdir(directory)):
        if pid_of(name, kind) is None:
            continue
        try:
            with open_record(os.path.join(directory, name)) as f:
                record = json.load(f)
        except (OSError, ValueError) as e:
            problems.append((name, f"unreadable ({e})"))
            continue
        found = check(record)
        if found is not None:
            problems.append((name, found))
            continue
        records.append(record)
    return records, problems


def _is(value: object, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "int?":
        return value is None or _is(value, "int")
    if kind == "number?":
        return value is None or _is(value, "number")
    return isinstance(value, {"str": str, "bool": bool, "list": list, "dict": dict}[kind])


def problem(record: object, fields: dict[str, str], optional: dict[str, str] | None = None) -> str | None:
    """Why ``record`` is not a record of a version this memgauge reads, with ``fields`` (name to
    type) and ``optional`` ones of the right type where present; None when it is one. Used by the
    readers: the measured process never calls it."""
    if not isinstance(record, dict):
        return "not a JSON object"
    version = record.get(VERSION, 1)
    if type(version) is not int or version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        return f"wire format version {version!r}, and this memgauge reads version {readable}"
    return layout_problem(record, fields, optional)


def layout_problem(
    record: object, fields: dict[str, str], optional: dict[str, str] | None = None
) -> str | None:
    """``problem`` for an object inside a record: its fields only."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, kind in fields.items():
        if name not in record:
            return f"no field {name!r}"
        if not _is(record[name], kind):
            return f"field {name!r} is not of type {kind}"
    for name, kind in (optional or {}).items():
        if name in record and not _is(record[name], kind):
            return f"field {name!r} is not of type {kind}"
    return None


def event_problem(event: object) -> str | None:
    """``problem`` for one event: its kind's fields."""
    common = problem(event, EVENT_COMMON)
    if common is not None or not isinstance(event, dict):
        return common
    kind = event["ev"]
    if kind not in EVENT_FIELDS:
        return f"unknown event kind {kind!r}"
    return problem(event, EVENT_FIELDS[kind], EVENT_OPTIONAL[kind])
