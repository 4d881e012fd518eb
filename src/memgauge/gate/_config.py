"""The project's budget configuration: ``memgauge.toml``, or ``[tool.memgauge]`` in ``pyproject.toml``.

::

    [tool.memgauge]
    budget = "rss=1GiB wall=10min"       # under every `memgauge check` (not the pytest plugin's default)
    policy = "edge-pc"                   # the policy `memgauge check` applies when given none
    max-memory-increase = "10%"          # tolerances of baseline checks
    max-time-increase = "25%"            # (max-increase = "10%" sets both)

    [tool.memgauge.policies]
    edge-pc = "rss=512MiB wall=30s fit.rss=300MiB"
    api-pod = { rss = "2GiB", wall = "60s", "fit.rss" = "1GiB" }

``memgauge.toml`` holds the same keys at its top level. The search starts in a directory (the
current one by default) and goes up; the first directory with either file decides, and within one
directory ``memgauge.toml`` wins (the two are never merged). A ``pyproject.toml`` without
``[tool.memgauge]`` does not count: the search goes on above it, as a package of a monorepo has its
own pyproject.toml and the budgets may live at the top. The search stops after the directory that
holds ``.git`` (the repository's top) or at the filesystem's root.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from memgauge._errors import UsageError
from memgauge.gate._budget import METRICS, Budget, BudgetError, parse_budget

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["CONFIG_FILE", "PYPROJECT_FILE", "ConfigError", "GateConfig", "load_config", "resolve_budget"]

CONFIG_FILE = "memgauge.toml"
PYPROJECT_FILE = "pyproject.toml"
_KEYS = ("budget", "policy", "policies", "max-increase", "max-memory-increase", "max-time-increase")


class ConfigError(UsageError):
    """A configuration file that cannot be used, or a policy that is not in it. The message names
    the file and the key (``pyproject.toml: tool.memgauge.policies.edge-pc: ...``)."""


@dataclass(frozen=True)
class GateConfig:
    """What the configuration file says; ``GateConfig()`` is the configuration of a project with none.

    ``budget``: the limits under every ``memgauge check``; ``policies``: named budgets (each with its
    name as ``Budget.policy``); ``default_policy``: the one used when none is asked for;
    ``max_*_increase``: baseline tolerances as fractions (0.10 for "10%"); ``path``: the file, None
    when none was found."""

    budget: Budget = field(default_factory=Budget)
    policies: Mapping[str, Budget] = field(default_factory=dict)
    default_policy: str | None = None
    max_memory_increase: float | None = None
    max_time_increase: float | None = None
    path: str | None = None


def load_config(start: str | os.PathLike[str] | None = None) -> GateConfig:
    """The configuration found from ``start`` (a directory, or a file in one; default the current
    directory) upward, or ``GateConfig()`` when there is none. Raises ConfigError for a file that
    cannot be read or says something invalid."""
    here = Path(os.getcwd() if start is None else start).absolute()
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        own = directory / CONFIG_FILE
        if own.is_file():
            return _config(_read(own), str(own), "")
        pyproject = directory / PYPROJECT_FILE
        if pyproject.is_file():
            tool = _read(pyproject).get("tool", {})
            table = tool.get("memgauge") if isinstance(tool, dict) else None
            if table is not None:
                if not isinstance(table, dict):
                    raise ConfigError(f"{pyproject}: tool.memgauge must be a table ([tool.memgauge])")
                return _config(table, str(pyproject), "tool.memgauge.")
        # a worktree or submodule has a .git file, not a directory: the top all the same
        if (directory / ".git").exists():
            break
    return GateConfig()


def resolve_budget(
    config: GateConfig, *, policy: str | None = None, budget_specs: Sequence[str] = ()
) -> Budget:
    """The budget a check applies: ``config.budget``, then the policy over it (``policy``, else the
    configuration's default policy), then ``budget_specs`` (``--budget``) over both; a layer's
    limit replaces the limit of the same key below it. The result's ``policy`` is the policy's
    name, None when none applies. Raises ConfigError for an unknown policy (listing the known
    ones) and BudgetError for a bad ``budget_specs``."""
    name = policy if policy is not None else config.default_policy
    budget = config.budget
    if name is not None:
        chosen = config.policies.get(name)
        if chosen is None:
            raise ConfigError(_unknown_policy("--policy" if policy is not None else "policy", name, config))
        budget = budget.merged(chosen)
    return budget.merged(parse_budget(budget_specs)).with_policy(name)


def _unknown_policy(what: str, name: str, config: GateConfig, *, in_file: bool = False) -> str:
    """The message for an unknown policy; ``in_file`` when it goes after the file's name already."""
    if config.policies:
        known = f"known: {', '.join(sorted(config.policies))}" + ("" if in_file else f", in {config.path}")
    elif in_file:
        known = "none is defined"
    elif config.path is not None:
        known = f"{config.path} defines none"
    else:
        known = f"no {CONFIG_FILE} or [tool.memgauge] in {PYPROJECT_FILE} was found from here up"
    return f"{what}: unknown policy '{name}' ({known})"


def _read(path: Path) -> dict[str, Any]:
    toml = _toml_module()
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it: {e.strerror or e}") from None
    try:
        parsed: dict[str, Any] = toml.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except toml.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    return parsed


def _toml_module() -> Any:
    # tomllib is 3.11's; tomli is the same reader, a dependency on 3.10 only
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # type: ignore[import-not-found, unused-ignore]

    return tomli


def _config(table: dict[str, Any], path: str, prefix: str) -> GateConfig:
    """``prefix`` is where ``table`` is in its file ("tool.memgauge." in pyproject.toml), so that
    messages name keys as the file spells them."""
    for key in table:
        if key not in _KEYS:
            hint = ""
            if key.replace("_", "-") in _KEYS:
                hint = f"; did you mean '{key.replace('_', '-')}'?"
            elif key == "tool" and not prefix:
                hint = f"; {CONFIG_FILE} holds the keys at its top level, without [tool.memgauge]"
            raise ConfigError(f"{path}: unknown key '{prefix}{key}' (known: {', '.join(_KEYS)}{hint})")
    budget = _budget(table.get("budget", ""), path, f"{prefix}budget", None)
    raw_policies = table.get("policies", {})
    if not isinstance(raw_policies, dict):
        raise ConfigError(f"{path}: {prefix}policies must be a table ([{prefix}policies])")
    policies = {
        str(name): _budget(value, path, f"{prefix}policies.{_toml_key(str(name))}", str(name))
        for name, value in raw_policies.items()
    }
    default = table.get("policy")
    if default is not None:
        if not isinstance(default, str):
            raise ConfigError(f"{path}: {prefix}policy must be a policy's name, a string")
        if default not in policies:
            known = GateConfig(policies=policies, path=path)
            raise ConfigError(f"{path}: {_unknown_policy(prefix + 'policy', default, known, in_file=True)}")
    both = _fraction(table, "max-increase", path, prefix)
    memory = _fraction(table, "max-memory-increase", path, prefix)
    time = _fraction(table, "max-time-increase", path, prefix)
    return GateConfig(
        budget=budget,
        policies=policies,
        default_policy=default,
        max_memory_increase=memory if memory is not None else both,
        max_time_increase=time if time is not None else both,
        path=path,
    )


def _budget(value: object, path: str, key: str, policy: str | None) -> Budget:
    """A budget written as a string ("rss=512MiB wall=30s"), a list of them, or a table
    ({ rss = "512MiB", "fit.rss" = "300MiB" }, where an unquoted fit.rss = ... nests: same thing)."""
    if isinstance(value, dict):
        tokens = []
        for name, figure in _flat(value):
            if any(c.isspace() or c in ",=" for c in name):
                raise ConfigError(f"{path}: {key}: the key '{name}' cannot hold spaces, commas or '='")
            if isinstance(figure, bool) or not isinstance(figure, (str, int, float)):
                raise ConfigError(
                    f'{path}: {key}.{name} must be a figure such as "512MiB" or "30s", not {figure!r}'
                )
            # a TOML number is a typed figure: bytes for a size (a string still needs its unit)
            sized = METRICS.get(name.rpartition(".")[2].lower()) == "bytes"
            tokens.append(f"{name}={figure}{'B' if sized and not isinstance(figure, str) else ''}")
        spec: str | list[str] = " ".join(tokens)
    elif isinstance(value, str):
        spec = value
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        spec = list(value)
    else:
        raise ConfigError(
            f'{path}: {key} must be a string such as "rss=512MiB wall=30s" or a table, not {value!r}'
        )
    try:
        return parse_budget(spec, source=f"{path}: {key}").with_policy(policy)
    except BudgetError as e:
        raise ConfigError(e.message) from None


def _flat(table: dict[str, Any], prefix: str = "") -> list[tuple[str, object]]:
    """``{"fit": {"rss": "1GiB"}}`` as ``[("fit.rss", "1GiB")]``."""
    items: list[tuple[str, object]] = []
    for name, value in table.items():
        if isinstance(value, dict):
            items += _flat(value, f"{prefix}{name}.")
        else:
            items.append((f"{prefix}{name}", value))
    return items


def _fraction(table: dict[str, Any], name: str, path: str, prefix: str) -> float | None:
    """A percentage ("10%") as a fraction (0.1)."""
    from memgauge._units import parse_percent

    value = table.get(name)
    if value is None:
        return None
    try:
        return parse_percent(value if isinstance(value, str) else "")
    except ValueError:
        raise ConfigError(
            f'{path}: {prefix}{name} must be a percentage such as "10%", not {value!r}'
        ) from None


def _toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else quoted."""
    import re

    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace('"', '\\"') + '"'
