"""Knobs: the parameters a sweep or a fit sets, and which of them reached the measured program.

The runner's environment asks (``MEMGAUGE_KNOBS``, JSON: ``{"params": {NAME: value}, "args":
{NAME: text}}``). A parameter reaches the program in three ways, and each is recorded when it
happens, one line per process and way in ``knobs.jsonl`` of the events directory:

- ``env``: the program read the environment variable NAME (``os.environ[...]``, ``os.getenv``,
  ``in os.environ``: every read goes through ``os.environ.__getitem__``, which is watched for the
  asked names only);
- ``constant``: the script assigns NAME a literal at module level (``BATCH_SIZE = 64``); the
  bootstrap then runs the script compiled from its syntax tree with that value in place of the
  literal (``script_code``): the file is not touched, and ``__file__``, ``sys.argv[0]``,
  ``__name__ == "__main__"`` and the line numbers of tracebacks stay the script's own;
- ``argument``: the value, put in the program's arguments by a ``{NAME}`` template, is in argv.

Written at once rather than at exit: a forked worker that reads the variable ends with
``os._exit``. A C extension calling ``getenv`` itself is not seen.
"""

from __future__ import annotations

import os
import sys

from memgauge._env import ENV_KNOBS

# not `from typing import ...`: the measured process should not pay for typing
TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Iterator
    from types import CodeType
    from typing import Any

KNOBS_FILE = "knobs.jsonl"
ASKED_FILE = "knobs-asked.json"

_directory = ""
_noted: set[tuple[str, str]] = set()
_noted_in = -1


def request() -> dict[str, Any] | None:
    """What the runner asked, or None (no knobs: nothing is watched or replaced)."""
    text = os.environ.get(ENV_KNOBS)
    if not text:
        return None
    import json  # only when asked: a run without knobs pays nothing here

    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("params"), dict) else None


def note(kind: str, name: str) -> None:
    """Record that ``name`` reached the program this ``kind`` of way (once per process)."""
    global _noted_in
    if not _directory:
        return
    if _noted_in != os.getpid():  # a forked child records for itself
        _noted.clear()
        _noted_in = os.getpid()
    if (kind, name) in _noted:
        return
    _noted.add((kind, name))
    import json

    line = json.dumps({"kind": kind, "name": name, "pid": os.getpid()}) + "\n"
    try:
        fd = os.open(os.path.join(_directory, KNOBS_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return
    try:
        os.write(fd, line.encode())  # one short write with O_APPEND: lines of processes never mix
    finally:
        os.close(fd)


def start(directory: str) -> None:
    """Watch the asked names in this process (idempotent per process)."""
    global _directory
    asked = request()
    if asked is None or not directory or _directory:
        return
    _directory = directory
    try:
        # the first process records what was asked; the reader needs it to say what did not reach
        fd = os.open(os.path.join(directory, ASKED_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        pass
    else:
        import json

        try:
            os.write(fd, json.dumps(asked).encode())
        finally:
            os.close(fd)
    names = frozenset(str(n) for n in asked["params"])
    _watch_environ(names)
    arguments = asked.get("args") or {}
    tokens = sys.argv[1:]
    for name, value in arguments.items():
        text = str(value)
        # within a token: a template may put it inside one ("--rows={N}", "size-{N}")
        if any(text in t for t in tokens):
            note("argument", str(name))


def _watch_environ(names: frozenset[str]) -> None:
    environ = os.environ
    base = type(environ)
    if getattr(base, "_memgauge_watched", False):
        return

    class Watched(base):  # type: ignore[valid-type,misc]
        _memgauge_watched = True

        def __getitem__(self, key: str) -> str:
            if key in names:
                note("env", key)
            return base.__getitem__(self, key)

    try:
        # the same object, its class swapped: references the program took before stay watched
        environ.__class__ = Watched
    except TypeError:
        return  # an os.environ replaced by something else: its reads go unseen


def script_code(path: str, source: bytes) -> CodeType | None:
    """The script ``path`` (its ``source``) compiled with each asked parameter that it assigns a
    literal at module level set to the asked value; None where there is no such assignment (the
    bootstrap then compiles the source as it is)."""
    asked = request()
    if asked is None:
        return None
    import ast

    values: dict[str, Any] = asked["params"]
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return None  # python reports it, as it would run directly
    replaced: list[str] = []
    for name, node in top_level_assignments(tree):
        if name not in values or not _literal(node.value):
            continue
        old = node.value
        assert old is not None
        node.value = ast.copy_location(ast.Constant(values[name]), old)
        replaced.append(name)
    if not replaced:
        return None
    code = compile(tree, path, "exec", dont_inherit=True)
    for name in replaced:
        note("constant", name)
    return code


def top_level_assignments(tree: ast.Module) -> Iterator[tuple[str, ast.Assign | ast.AnnAssign]]:
    """A module's ``NAME = value`` and ``NAME: T = value`` statements at its top level, in order:
    the constants a parameter may replace (and the sweep reads when none is asked)."""
    import ast

    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target: ast.expr = node.targets[0]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target = node.target
        else:
            continue
        if isinstance(target, ast.Name):
            yield target.id, node


def _literal(node: ast.expr | None) -> bool:
    import ast

    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
