"""The environment variables live in one module (``memgauge._env``, issue 32): no other module
names one by a string of its own, so a rename cannot leave a reader behind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import memgauge
from memgauge import _env

SRC = Path(memgauge.__file__).parent
NAME = re.compile(r"MEMGAUGE_[A-Z0-9_]+")
SITECUSTOMIZE = SRC / "capture" / "_autostart" / "sitecustomize.py"


def _literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and NAME.fullmatch(n.value)
    ]


def test_no_module_but_env_spells_a_variable_out() -> None:
    spelled = {
        str(p.relative_to(SRC)): found
        for p in sorted(SRC.rglob("*.py"))
        if p not in (SRC / "_env.py", SITECUSTOMIZE) and (found := _literals(p))
    }
    assert spelled == {}


def test_every_name_is_one_variable_and_the_autostart_checks_the_events_one() -> None:
    values = {k: v for k, v in vars(_env).items() if k.startswith("ENV_")}
    assert values and len(set(values.values())) == len(values)
    assert all(NAME.fullmatch(v) for v in values.values())
    # it runs before memgauge is imported, so it spells the name out: the same name
    assert _literals(SITECUSTOMIZE) == [_env.ENV_EVENTS_DIR]
