"""Writing the line sampler's aggregate as ``lines.<pid>.json``, in the wire format (``_wire``).

The file is written whole to a temporary file that is then renamed over it, so a reader finds
either the previous aggregate or the new one. ``json`` is not used: it imports ``re``, ``enum`` and
more into the measured process, and imported late from the sampler's thread it could pick up the
program's own module of that name from the script's directory. The C string encoder of the json
package is enough for the plain data written here.
"""

from __future__ import annotations

import os
from _json import encode_basestring_ascii as _encode_str

from memgauge.capture._line_times import LINE_TIMES
from memgauge.capture._spawns import started
from memgauge.capture._wire import LINE_STATS, LINES, VERSION, WIRE_VERSION, file_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    from memgauge.capture._ledger import Ledger

    Key = tuple[str, int, str]

    class Times(Protocol):
        def record(self, index: Callable[[Key], int]) -> dict[str, object] | None: ...

    class Aggregate(Protocol):
        """What a lines record is written from: the in-process sampler (``_sampler.Sampler``) or
        the join of outside samples (``_lines_join``); no import of either (no circle)."""

        pid: int
        t_start: float
        last_t: float
        interval: float
        lib: bool
        max_rss: int
        peak_t: float
        peak_retained: dict[int, int]
        imports: list[list[Any]]
        ledger: Ledger
        lines: dict[Key, list[float]]

        @property
        def times(self) -> Times: ...


# only lines retaining at least this much at the end carry a time series (for leak detection)
SERIES_MIN_BYTES = 1 << 20

_INF = float("inf")


def lines_record(sampler: Aggregate) -> dict[str, Any]:
    """The sampler's aggregate as the wire format's lines record: keys numbered in order of first
    use, rows positional (``_wire.LINE_ROW`` and the other ``*_ROW`` names)."""
    keys: dict[Key, int] = {}

    def index(key: Key) -> int:
        i = keys.get(key)
        if i is None:
            i = keys[key] = len(keys)
        return i

    ledger = sampler.ledger
    width = len(LINE_STATS)
    lines = [[index(k), *v[:width]] for k, v in sampler.lines.items()]
    # an addition to version 2 (``_wire.CONTENTION_ROW``): older readers ignore it. A row without
    # it (built by a test) has none
    contention = [
        [index(k), round(v[width], 6)] for k, v in sampler.lines.items() if len(v) > width and v[width] > 0
    ]
    stacks_used: dict[int, list[int]] = {}
    for sid in list(sampler.peak_retained) + list(ledger.retained):
        if sid not in stacks_used:
            stacks_used[sid] = [index(k) for k in ledger.stacks[sid]]
    series = [
        [index(k), [[round(t, 4), b] for t, b in points]]
        for k, points in ledger.series.items()
        if ledger.inclusive.get(k, 0) >= SERIES_MIN_BYTES
    ]
    # numbered before "keys" is written out below
    children = [[pid, index(key)] for pid, key in list(started)]
    times = sampler.times.record(index)  # the main thread's line over time (``_line_times``)
    return {
        VERSION: WIRE_VERSION,
        "pid": sampler.pid,
        "t_start": sampler.t_start,
        "t_end": sampler.last_t,
        "interval": sampler.interval,
        "lib": sampler.lib,
        "keys": [list(k) for k in keys],
        "lines": lines,
        "stacks": {str(sid): ks for sid, ks in stacks_used.items()},
        "peak": {
            "rss": sampler.max_rss,
            "t": sampler.peak_t,
            "retained": [[sid, b] for sid, b in sampler.peak_retained.items() if b > 0],
        },
        "retained": [[sid, b] for sid, b in ledger.retained.items() if b > 0],
        "series": series,
        "imports": sampler.imports,
        "children": children,
        "contention": contention,
        **({LINE_TIMES: times} if times is not None else {}),
    }


def write_lines(directory: str, pid: int, record: dict[str, Any]) -> None:
    """Raises OSError (the directory is gone) or TypeError (not plain data)."""
    path = os.path.join(directory, file_name(LINES, pid))
    parts: list[str] = []
    _dump(record, parts)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        data = "".join(parts).encode("ascii")
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def add_children(record: dict[str, Any], passive: dict[str, Any]) -> None:
    """Give a joined ``record`` the children of the process's passive record (pid, the line that
    started it), with the line's key index in ``record``'s keys (added where it has none)."""
    keys: list[list[Any]] = record["keys"]
    index = {tuple(k): i for i, k in enumerate(keys)}
    passive_keys = [tuple(k) for k in passive.get("keys", [])]
    children = []
    for child_pid, key_index in passive.get("children", []):
        key = passive_keys[key_index]
        if key not in index:
            index[key] = len(keys)
            keys.append(list(key))
        children.append([child_pid, index[key]])
    record["children"] = children


def _dump(obj: object, out: list[str]) -> None:
    """JSON of plain data, appended to ``out`` piece by piece."""
    if isinstance(obj, str):
        out.append(_encode_str(obj))
    elif obj is None or isinstance(obj, bool):
        out.append("null" if obj is None else "true" if obj else "false")
    elif isinstance(obj, int):
        out.append(str(obj))
    elif isinstance(obj, float):
        out.append(repr(obj) if -_INF < obj < _INF else "0")  # JSON has no nan or inf
    elif isinstance(obj, dict):
        _dump_dict(obj, out)
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, value in enumerate(obj):
            if i:
                out.append(",")
            _dump(value, out)
        out.append("]")
    else:
        raise TypeError(f"not plain data: {type(obj).__name__}")


def _dump_dict(obj: dict[Any, Any], out: list[str]) -> None:
    out.append("{")
    for i, (key, value) in enumerate(obj.items()):
        if i:
            out.append(",")
        out.append(_encode_str(str(key)))
        out.append(":")
        _dump(value, out)
    out.append("}")
