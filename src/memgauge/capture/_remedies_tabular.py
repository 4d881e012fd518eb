"""The tabular remedy of ``memgauge fit --remedies``: ``dtypes``, smaller column types for the
frames a program reads, applied without editing the program in a fresh process that the runner
starts with ``MEMGAUGE_REMEDY=dtypes``.

Standard library only, and nothing happens until the program imports pandas: the bootstrap
(``_start``) puts a finder first on ``sys.meta_path`` that answers for ``pandas`` alone, the way
``sections/torch/_capture`` waits for torch; memgauge never imports pandas itself. Once pandas' ``__init__``
has run, ``pandas.read_csv`` and ``pandas.read_parquet`` are replaced by wrappers that return frames whose
float64 columns are float32 and whose text columns with few distinct values (under
``CATEGORY_FRACTION`` of the rows) are ``category``:

- ``read_csv`` from a path: the first ``SAMPLE_ROWS`` rows are read to choose the types, then the
  file is read with them as ``dtype=``, so the parser never builds the float64 and string columns
  (converting afterwards would hold both at once, and the peak is what the remedy is for);
- ``read_csv`` from a buffer (it cannot be read twice) and ``read_parquet``: converted after reading.

A call that gives its own ``dtype=``, ``chunksize`` or ``iterator`` is left as it is. What was
converted (each column, its file, its types) is written as JSON to ``MEMGAUGE_REMEDY_REPORT``, the
report ``_remedies`` writes for the torch remedies: written as soon as pandas is imported (an
absent report means the program never imported pandas). Never raises into the program.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys

from memgauge._env import ENV_REMEDY, ENV_REMEDY_REPORT, TABULAR_REMEDIES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

SAMPLE_ROWS = 10_000
CATEGORY_FRACTION = 0.5  # a text column becomes category below this share of distinct values


class _Report:
    def __init__(self, path: str) -> None:
        self.path = path
        self.data: dict[str, list[str]] = {"remedies": ["dtypes"], "hooked": [], "not_applied": []}

    def add(self, key: str, line: str) -> None:
        self.data[key].append(line)
        self.write()

    def write(self) -> None:
        if not self.path:
            return
        with contextlib.suppress(OSError):
            tmp = self.path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.data, f)
            os.replace(tmp, self.path)


def _smaller_types(pandas: Any, frame: Any) -> dict[str, str]:
    """The columns of ``frame`` to convert and their new type: float64 to float32, text (object or
    str) with few distinct values to category."""
    types = pandas.api.types
    found: dict[str, str] = {}
    rows = max(len(frame), 1)
    for name in frame.columns:
        column = frame[name]
        text = types.is_object_dtype(column.dtype) or types.is_string_dtype(column.dtype)
        text = text and not isinstance(column.dtype, pandas.CategoricalDtype)
        if column.dtype == "float64":
            found[name] = "float32"
        elif text and column.nunique(dropna=True) < CATEGORY_FRACTION * rows:
            found[name] = "category"
    return found


def _source_name(source: object) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.path.basename(os.fspath(source))
    return type(source).__name__


def _wrap(pandas: Any, reader: str, report: _Report) -> None:
    original: Callable[..., Any] = getattr(pandas, reader)

    @functools.wraps(original)
    def read(*args: Any, **kwargs: Any) -> Any:
        source = args[0] if args else kwargs.get("filepath_or_buffer", kwargs.get("path"))
        name = _source_name(source)
        if any(kwargs.get(k) is not None for k in ("dtype", "chunksize")) or kwargs.get("iterator"):
            report.add("not_applied", f"dtypes: {reader}({name}) gives its own dtype/chunks, left as it is")
            return original(*args, **kwargs)
        before: dict[str, str] = {}
        chosen: dict[str, str] = {}
        try:
            if (
                reader == "read_csv"
                and isinstance(source, (str, os.PathLike))
                and kwargs.get("nrows") is None
            ):
                sample = original(*args, **{**kwargs, "nrows": SAMPLE_ROWS})
                chosen = _smaller_types(pandas, sample)
                before = {str(c): str(sample[c].dtype) for c in chosen}
        except Exception as e:  # the program's own call, unchanged, says what is wrong with it
            report.add("not_applied", f"dtypes: {reader}({name}): choosing the types failed: {e}")
            return original(*args, **kwargs)
        frame = original(*args, **kwargs, dtype=chosen) if chosen else original(*args, **kwargs)
        try:
            if not chosen:  # a buffer, or parquet: converted after reading
                chosen = _smaller_types(pandas, frame)
                before = {str(c): str(frame[c].dtype) for c in chosen}
                if chosen:
                    frame = frame.astype(chosen)
        except Exception as e:
            report.add("not_applied", f"dtypes: {reader}({name}): converting failed: {e}")
            return frame
        for column, new in chosen.items():
            report.data["hooked"].append(f"dtypes: {reader}({name}) {column}: {before[str(column)]} -> {new}")
        if not chosen:
            report.data["not_applied"].append(
                f"dtypes: {reader}({name}) has no float64 or repetitive text column"
            )
        report.write()
        return frame

    setattr(pandas, reader, read)


def hook(pandas: ModuleType) -> None:
    """Wrap the loaded pandas' readers; the report says pandas was imported even if none is called."""
    report = _Report(os.environ.get(ENV_REMEDY_REPORT, ""))
    try:
        for reader in ("read_csv", "read_parquet"):
            if hasattr(pandas, reader):
                _wrap(pandas, reader, report)
    except Exception as e:  # a pandas we cannot hook runs as it is; the report says so
        report.data["not_applied"].append(f"dtypes: hooking pandas failed: {type(e).__name__}: {e}")
    report.write()


class _PandasFinder:
    """Answers ``find_spec`` for ``pandas`` only; hooks it once its ``__init__`` has finished."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pandas":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("pandas")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_hook(module: ModuleType) -> None:
            exec_module(module)
            with contextlib.suppress(Exception):
                hook(module)

        # only this spec's loader object: a fresh one per find_spec, so no other module sees it
        spec.loader.exec_module = exec_then_hook  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Called by the bootstrap: nothing unless ``MEMGAUGE_REMEDY`` asks for a tabular remedy."""
    asked = os.environ.get(ENV_REMEDY, "").split(",")
    if not any(name in TABULAR_REMEDIES for name in asked):
        return
    if "pandas" in sys.modules and hasattr(sys.modules["pandas"], "read_csv"):
        hook(sys.modules["pandas"])
        return
    if not any(isinstance(f, _PandasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PandasFinder())
