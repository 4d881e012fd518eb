"""The package layout's rules, checked on the source: every package is entered through its public
face, no import circle (lazy imports included, type-only ones too), and each face's ``__all__``
names what it really provides. How long a module is, is left to what it is about: ruff's
complexity check (C901, at most 10 a function) is the rule, not a count of lines, which forced
splits that imported each other back."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "memgauge"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _package_of(module: str) -> str:
    """The top-level package a module belongs to (``memgauge`` for the root's own modules)."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "sections" and (PKG / "sections" / parts[2]).is_dir():
        return ".".join(parts[:3])  # each section's folder is a package of its own
    if len(parts) >= 2 and (PKG / parts[1]).is_dir():
        return "memgauge." + parts[1]
    return "memgauge"


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(module: str, *, runtime_only: bool) -> list[tuple[str, str | None, int]]:
    """``(target module, imported name or None, line)`` for every memgauge import in ``module``,
    wherever it stands (module level, functions, ``TYPE_CHECKING`` blocks unless ``runtime_only``)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _is_type_checking(node):
                skipped.update(id(n) for child in node.body for n in ast.walk(child))
    is_package = path.name == "__init__.py"
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.startswith("memgauge")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("memgauge"):
                continue
            for alias in node.names:
                if f"{target}.{alias.name}" in MODULES:
                    out.append((f"{target}.{alias.name}", None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
    return out


def _private_parts(module: str) -> list[str]:
    return [p for p in module.split(".")[1:] if p.startswith("_")]


def test_no_module_imports_a_private_module_or_name_of_another_package() -> None:
    """A private module (``_name``) is private to the package holding it: ``memgauge.capture._phases``
    to ``memgauge.capture``; the root's own (``memgauge._units``) to the whole of memgauge."""
    bad = []
    for module in MODULES:
        home = _package_of(module)
        for target, name, line in _imports(module, runtime_only=False):
            owner = _package_of(target)
            if owner in (home, "memgauge"):
                continue
            if _private_parts(target) or (name is not None and name.startswith("_")):
                bad.append(f"{module}:{line} imports {target}{'.' + name if name else ''}")
    assert bad == []


def _lazy_faces() -> dict[str, dict[str, str]]:
    """The packages whose face loads names lazily: name -> defining module."""
    faces = {}
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "_NAMES" for t in node.targets)
                and isinstance(node.value, ast.Dict)
            ):
                faces[module] = {
                    ast.literal_eval(k): f"{module}.{ast.literal_eval(v)}"
                    for k, v in zip(node.value.keys, node.value.values, strict=True)
                    if k is not None
                }
    return faces


def _graph(*, runtime_only: bool = True) -> dict[str, set[str]]:
    """Which module imports which when it runs (lazy imports included; type-only ones too unless
    ``runtime_only``). A name taken from a lazy face is an edge to the module that defines it, as
    it is when it loads."""
    faces = _lazy_faces()
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for imported, name, _ in _imports(module, runtime_only=runtime_only):
            target = faces[imported][name] if imported in faces and name in faces[imported] else imported
            if target in MODULES and target != module:
                graph[module].add(target)
            # importing a.b.c runs a/__init__ and a/b/__init__ first
            parts = target.split(".")
            for i in range(2, len(parts)):
                parent = ".".join(parts[:i])
                if parent in MODULES and parent != module and not module.startswith(parent + "."):
                    graph[module].add(parent)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_lazy_imports_included() -> None:
    assert _cycles(_graph()) == []


def type_only_graph() -> dict[str, set[str]]:
    """The graph with type-only imports too, less a lazy face's own type-only block: naming the
    modules of its package for type checkers, it mirrors the face's lazy table, whose names already
    lead to the modules that define them."""
    runtime, every = _graph(), _graph(runtime_only=False)
    return {m: {t for t in to if t in runtime[m] or not t.startswith(m + ".")} for m, to in every.items()}


def test_no_import_circle_type_only_imports_included() -> None:
    # a circle through a type-only import is still a knot for whoever moves one of its modules
    assert _cycles(type_only_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _face_uses(path: Path, faces: set[str]) -> set[tuple[str, str]]:
    """``(face, name)`` for every name the file takes from a subpackage's face: imported from it,
    or read as an attribute of the face imported as a module (``render.TerminalRenderer``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[tuple[str, str]] = set()
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if node.module in faces:
                    out.add((node.module, alias.name))
                if f"{node.module}.{alias.name}" in faces:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            out.add((bound[node.value.id], node.attr))
    return out


# faces whose names are the user's, not other packages': the IPython extension (%load_ext)
USER_FACES = {"memgauge.notebook"}


def test_each_face_names_only_what_another_package_or_a_test_uses() -> None:
    faces = {m for m, p in MODULES.items() if p.name == "__init__.py" and m.count(".") == 1} - USER_FACES
    used: set[tuple[str, str]] = set()
    for module, path in MODULES.items():
        used |= {(f, n) for f, n in _face_uses(path, faces) if f != _package_of(module)}
    root = SRC.parent
    others = [p for d in ("tests", "bench", "examples") for p in sorted((root / d).rglob("*.py"))]
    for path in others:
        used |= _face_uses(path, faces)
    # a program a test runs in a child, written as a string, names what it imports as words
    text = "\n".join(p.read_text(encoding="utf-8") for p in others)
    unused = {
        f"{face}.{name}"
        for face in faces
        for name in getattr(importlib.import_module(face), "__all__", [])
        if (face, name) not in used and not re.search(rf"import [^\n]*\b{name}\b", text)
    }
    assert sorted(unused) == []


def _defined(module: str) -> set[str]:
    """The names ``module`` defines at its top level (classes, functions, assignments)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


@pytest.mark.parametrize("face", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_each_public_face_provides_exactly_its_all(face: str) -> None:
    module = importlib.import_module(face)
    names = getattr(module, "__all__", [])
    assert len(set(names)) == len(names)
    lazy = _lazy_faces().get(face)
    for name in names:
        try:
            assert getattr(module, name) is not None, f"{face}.{name}"
        except ModuleNotFoundError as e:
            # a name of a module that imports torch (the torch section's hooks, a loop's torch
            # part), where torch is not installed: its module defines it, as the face says
            if e.name != "torch" or lazy is None:
                raise
            assert name in _defined(lazy[name]), f"{face}.{name}"
    if lazy is not None:
        assert sorted(lazy) == sorted(names)


@pytest.mark.parametrize(
    "section", sorted({m.split(".")[2] for m in MODULES if m.startswith("memgauge.sections.")})
)
def test_a_sections_capture_part_never_loads_its_analysis_or_report(section: str) -> None:
    # what the measured process imports of a section (its "_capture*" modules, and what they
    # import when they run) stays clear of every section's analyses and report blocks, and of the
    # core's analysis and render packages
    graph = _graph()
    start = [m for m in MODULES if m.startswith(f"memgauge.sections.{section}._capture")]
    seen, todo = set(start), list(start)
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    leaf = re.compile(r"^memgauge\.(analysis|render)(\.|$)|^memgauge\.sections\.\w+\._(analysis|report)")
    assert start and sorted(m for m in seen if leaf.match(m)) == []


# the modules outside the section folders that name one, each for a reason the folders cannot
# take over: the package's public names (``memgauge.step``, ``memgauge.torch``), the profile's
# typed fields, the notebook extension's GPU monitor (its users' names) and the what-if table's
# reading of the torch part (type-only)
NAMES_A_SECTION = {
    "memgauge": {"training"},
    "memgauge.torch": {"torch", "training"},
    "memgauge.model._profile": {"torch", "gpu", "training"},
    "memgauge.notebook._gpu": {"gpu"},
    "memgauge.analysis._remedies": {"torch"},
}


def sections_named(module: str) -> set[str]:
    named = set()
    for imported, _, _ in _imports(module, runtime_only=False):
        parts = imported.split(".")
        if len(parts) >= 3 and parts[1] == "sections" and (PKG / "sections" / parts[2]).is_dir():
            named.add(parts[2])
    return named


def test_only_the_known_modules_outside_the_section_folders_name_a_section() -> None:
    # the core reaches a section through the registry (``memgauge.sections``), by its parts: a
    # new import of a folder from outside it is a feature threaded through the core again
    outside = {
        m: named for m in MODULES if not m.startswith("memgauge.sections.") and (named := sections_named(m))
    }
    assert outside == NAMES_A_SECTION
