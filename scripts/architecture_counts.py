"""The layout's figures that issue 32 measured, counted on the source tree: how far each section
reaches outside its folder, how many modules a report takes per format, import circles with
type-only imports counted, the faces' widths and the record schemes. Run from the repository's
root (it reads the module graph the architecture tests check):

    .venv/bin/python scripts/architecture_counts.py
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.unit import test_architecture as arch  # noqa: E402  # the graph the tests check

FORMATS = ("terminal", "markdown", "html", "text")
FACES = ("analysis", "capture", "model", "render", "runner", "sweep", "watcher", "gate", "isolation")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _sections() -> list[str]:
    return sorted(p.name for p in (arch.PKG / "sections").iterdir() if (p / "__init__.py").exists())


def main() -> int:
    source = list(arch.MODULES.values())
    print(f"source: {sum(map(_lines, source)):,} lines in {len(source)} modules")
    print("\nsections (folder files, lines; modules outside the folder that name it):")
    for name in _sections():
        inside = [p for m, p in arch.MODULES.items() if m.startswith(f"memgauge.sections.{name}")]
        outside = sorted(
            m
            for m in arch.MODULES
            if not m.startswith("memgauge.sections.") and name in arch.sections_named(m)
        )
        print(f"  {name}: {len(inside)} files, {sum(map(_lines, inside)):,} lines; outside: {outside}")
    print("\nmodules named after a format (render and the section folders):")
    for fmt in FORMATS:
        named = sorted(
            m for m in arch.MODULES if ".render." in m or ".sections." in m if fmt in m.rsplit(".", 1)[-1]
        )
        print(f"  {fmt}: {len(named)} {named}")
    print(f"\nimport circles, type-only imports counted: {len(arch._cycles(arch.type_only_graph()))}")
    print("\nfaces (names in __all__):")
    for face in FACES:
        module = importlib.import_module(f"memgauge.{face}")
        print(f"  {face}: {len(getattr(module, '__all__', ()))}")
    envelope = importlib.import_module("memgauge.model._envelope")
    kinds = sorted(
        f"{k.kind} {k.version}" for k in vars(envelope).values() if isinstance(k, envelope.RecordKind)
    )
    print(f"\nrecord schemes: 1 envelope, {len(kinds)} kinds: {', '.join(kinds)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
