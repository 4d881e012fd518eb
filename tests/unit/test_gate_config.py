"""The budget configuration: real files in tmp_path, the upward search, policies, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge._errors import UsageError
from memgauge.gate import Budget, BudgetError, ConfigError, GateConfig, Limit, load_config, resolve_budget

MIB, GIB = 1 << 20, 1 << 30

PYPROJECT = """\
[project]
name = "demo"

[tool.memgauge]
budget = "rss=1GiB wall=10min"
policy = "edge-pc"
max-memory-increase = "10%"
max-time-increase = "25%"

[tool.memgauge.policies]
edge-pc = "rss=512MiB wall=30s fit.rss=300MiB"
api-pod = { rss = "2GiB", wall = "60s", "fit.rss" = "1GiB" }
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _keys(budget: Budget) -> dict[str, float]:
    return {limit.key: limit.value for limit in budget}


def test_pyproject_tool_memgauge(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", PYPROJECT)
    config = load_config(tmp_path)
    assert config.path == str(path)
    assert _keys(config.budget) == {"rss": GIB, "wall": 600.0}
    assert config.budget.policy is None
    assert config.default_policy == "edge-pc"
    assert config.max_memory_increase == pytest.approx(0.10)
    assert config.max_time_increase == pytest.approx(0.25)
    assert sorted(config.policies) == ["api-pod", "edge-pc"]
    edge, api = config.policies["edge-pc"], config.policies["api-pod"]
    assert _keys(edge) == {"rss": 512 * MIB, "wall": 30.0, "fit.rss": 300 * MIB}
    assert edge.policy == "edge-pc"
    # the table form: the same limits as the string form, written as tokens
    assert _keys(api) == {"rss": 2 * GIB, "wall": 60.0, "fit.rss": GIB}
    assert [x.text for x in api] == ["rss=2GiB", "wall=60s", "fit.rss=1GiB"]
    assert api.policy == "api-pod"


def test_memgauge_toml_keys_at_top_level(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "memgauge.toml",
        'budget = "rss=2GiB"\nmax-increase = "5%"\n[policies]\nsmall = "rss=100MiB"\n',
    )
    config = load_config(tmp_path)
    assert config.path == str(path)
    assert _keys(config.budget) == {"rss": 2 * GIB}
    assert config.default_policy is None
    # max-increase sets both tolerances
    assert (config.max_memory_increase, config.max_time_increase) == (
        pytest.approx(0.05),
        pytest.approx(0.05),
    )
    assert _keys(config.policies["small"]) == {"rss": 100 * MIB}


def test_specific_increase_over_max_increase(tmp_path: Path) -> None:
    _write(tmp_path / "memgauge.toml", 'max-increase = "5%"\nmax-time-increase = "30%"\n')
    config = load_config(tmp_path)
    assert config.max_memory_increase == pytest.approx(0.05)
    assert config.max_time_increase == pytest.approx(0.30)


def test_memgauge_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", PYPROJECT)
    own = _write(tmp_path / "memgauge.toml", 'budget = "rss=64MiB"\n')
    config = load_config(tmp_path)
    assert config.path == str(own)
    assert _keys(config.budget) == {"rss": 64 * MIB}
    # never merged: nothing of the pyproject's
    assert config.policies == {}
    assert config.default_policy is None


def test_the_nearest_directory_wins(tmp_path: Path) -> None:
    _write(tmp_path / "memgauge.toml", 'budget = "rss=64MiB"\n')
    inner = _write(tmp_path / "pkg" / "pyproject.toml", '[tool.memgauge]\nbudget = "rss=128MiB"\n')
    config = load_config(tmp_path / "pkg")
    assert config.path == str(inner)


def test_search_goes_up_from_a_subdirectory_or_a_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", PYPROJECT)
    deep = tmp_path / "src" / "pkg" / "sub"
    deep.mkdir(parents=True)
    assert load_config(deep).path == str(path)
    script = _write(deep / "train.py", "")
    assert load_config(script).path == str(path)
    assert load_config(str(deep)).path == str(path)


def test_default_start_is_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "memgauge.toml", 'budget = "wall=1s"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert load_config().path == str(path)


def test_a_pyproject_without_tool_memgauge_does_not_stop_the_search(tmp_path: Path) -> None:
    top = _write(tmp_path / "pyproject.toml", PYPROJECT)
    _write(
        tmp_path / "packages" / "a" / "pyproject.toml",
        '[project]\nname = "a"\n[tool.ruff]\nline-length = 1\n',
    )
    assert load_config(tmp_path / "packages" / "a").path == str(top)


def test_search_stops_after_the_directory_holding_git(tmp_path: Path) -> None:
    _write(tmp_path / "memgauge.toml", 'budget = "rss=64MiB"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert load_config(repo / "src") == GateConfig()
    assert load_config(repo).path is None
    # the directory with .git is still searched
    own = _write(repo / "memgauge.toml", 'budget = "rss=1MiB"\n')
    assert load_config(repo / "src").path == str(own)


def test_a_git_file_marks_the_top_too(tmp_path: Path) -> None:
    # worktrees and submodules have a .git file
    _write(tmp_path / "memgauge.toml", 'budget = "rss=64MiB"\n')
    _write(tmp_path / "wt" / ".git", "gitdir: /elsewhere\n")
    assert load_config(tmp_path / "wt").path is None


def test_no_file_at_all_gives_the_empty_config(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = load_config(tmp_path)
    assert config == GateConfig()
    assert not config.budget
    assert config.policies == {}
    assert config.path is None


def test_policies_table_forms(tmp_path: Path) -> None:
    _write(
        tmp_path / "memgauge.toml",
        """\
[policies]
# unquoted dotted keys nest in TOML: fit.rss = ... is {fit = {rss = ...}}, read the same
nested = { rss = "1GiB", fit.rss = "100MiB", data.load.wall = "2s" }
numbers = { rss = 1048576, wall = 1.5 }
listed = ["rss=1GiB", "wall=1s"]
multi = '''
    rss=1GiB
    wall=1s
'''
[policies.section]
rss = "3GiB"
"train.wall" = "1h"
""",
    )
    policies = load_config(tmp_path).policies
    assert _keys(policies["nested"]) == {"rss": GIB, "fit.rss": 100 * MIB, "data.load.wall": 2.0}
    assert [x.key for x in policies["nested"]] == ["rss", "fit.rss", "data.load.wall"]
    assert _keys(policies["numbers"]) == {"rss": float(MIB), "wall": 1.5}
    assert _keys(policies["listed"]) == {"rss": GIB, "wall": 1.0}
    assert _keys(policies["multi"]) == {"rss": GIB, "wall": 1.0}
    assert _keys(policies["section"]) == {"rss": 3 * GIB, "train.wall": 3600.0}
    assert policies["section"].limits[1] == Limit(
        "wall",
        3600.0,
        "train",
        "train.wall=1h",
    )


# --- bad files -----------------------------------------------------------------------------------


def _config_error(tmp_path: Path, name: str, text: str) -> str:
    path = _write(tmp_path / name, text)
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path)
    assert e.value.exit_code == 64
    assert isinstance(e.value, UsageError)
    assert e.value.message.startswith(f"{path}: ")
    return e.value.message[len(f"{path}: ") :]


def test_bad_policy_token_names_file_key_and_token(tmp_path: Path) -> None:
    text = PYPROJECT.replace('edge-pc = "rss=512MiB', 'edge-pc = "rss=512MX')
    message = _config_error(tmp_path, "pyproject.toml", text)
    assert message.splitlines() == [
        "tool.memgauge.policies.edge-pc: unknown unit 'MX' in 'rss=512MX'",
        "  rss=512MX wall=30s fit.rss=300MiB",
        "  ^^^^^^^^^",
    ]


def test_bad_table_policy_points_into_its_tokens(tmp_path: Path) -> None:
    message = _config_error(
        tmp_path, "memgauge.toml", '[policies]\n"api.pod" = { rss = "2GiB", wall = "1GiB" }\n'
    )
    assert message.splitlines() == [
        "policies.\"api.pod\": wall takes a duration (s, ms, min, h) in 'wall=1GiB'",
        "  rss=2GiB wall=1GiB",
        "           ^^^^^^^^^",
    ]


def test_bad_default_budget(tmp_path: Path) -> None:
    message = _config_error(tmp_path, "pyproject.toml", '[tool.memgauge]\nbudget = "rss=1GiB rss=2GiB"\n')
    assert (
        message.splitlines()[0]
        == "tool.memgauge.budget: rss is given twice (first as 'rss=1GiB') in 'rss=2GiB'"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "budgets = 'rss=1GiB'\n",
            "unknown key 'budgets' (known: budget, policy, policies, max-increase, "
            "max-memory-increase, max-time-increase)",
        ),
        (
            "max_memory_increase = '10%'\n",
            "unknown key 'max_memory_increase' (known: budget, policy, policies, "
            "max-increase, max-memory-increase, max-time-increase; did you mean 'max-memory-increase'?)",
        ),
        (
            "[tool.memgauge]\nbudget = 'rss=1GiB'\n",
            "unknown key 'tool' (known: budget, policy, policies, "
            "max-increase, max-memory-increase, max-time-increase; memgauge.toml holds the keys at its top "
            "level, without [tool.memgauge])",
        ),
        ("budget = 5\n", 'budget must be a string such as "rss=512MiB wall=30s" or a table, not 5'),
        ("policies = 'x'\n", "policies must be a table ([policies])"),
        ("policy = 3\n", "policy must be a policy's name, a string"),
        (
            "policy = 'edge'\n[policies]\napi = 'rss=1GiB'\nbig = 'rss=9GiB'\n",
            "policy: unknown policy 'edge' (known: api, big)",
        ),
        ("policy = 'edge'\n", "policy: unknown policy 'edge' (none is defined)"),
        ("max-memory-increase = 0.1\n", 'max-memory-increase must be a percentage such as "10%", not 0.1'),
        ("max-time-increase = '10'\n", "max-time-increase must be a percentage such as \"10%\", not '10'"),
        ("max-increase = '-5%'\n", "max-increase must be a percentage such as \"10%\", not '-5%'"),
        ("max-increase = 'nan%'\n", "max-increase must be a percentage such as \"10%\", not 'nan%'"),
        (
            "[policies]\np = { rss = true }\n",
            'policies.p.rss must be a figure such as "512MiB" or "30s", not True',
        ),
        (
            "[policies]\np = { \"my phase.rss\" = '1GiB' }\n",
            "policies.p: the key 'my phase.rss' cannot hold spaces, commas or '='",
        ),
        (
            "[policies]\np = [1, 2]\n",
            'policies.p must be a string such as "rss=512MiB wall=30s" or a table, not [1, 2]',
        ),
    ],
)
def test_bad_memgauge_toml(tmp_path: Path, text: str, expected: str) -> None:
    assert _config_error(tmp_path, "memgauge.toml", text) == expected


def test_bad_keys_in_pyproject_are_named_with_their_table(tmp_path: Path) -> None:
    message = _config_error(tmp_path, "pyproject.toml", "[tool.memgauge]\nmax-increase = 10\n")
    assert message == 'tool.memgauge.max-increase must be a percentage such as "10%", not 10'
    message = _config_error(tmp_path, "pyproject.toml", "[tool]\nmemgauge = 'rss=1GiB'\n")
    assert message == "tool.memgauge must be a table ([tool.memgauge])"


def test_invalid_toml(tmp_path: Path) -> None:
    message = _config_error(tmp_path, "memgauge.toml", "budget = 'rss=1GiB\n")
    assert message.startswith("not valid TOML: ")
    # a broken pyproject.toml cannot be searched for [tool.memgauge]: an error, not a silent skip
    (tmp_path / "memgauge.toml").unlink()
    message = _config_error(tmp_path, "pyproject.toml", "[project\n")
    assert message.startswith("not valid TOML: ")


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "memgauge.toml").write_bytes(b"budget = '\xff'\n")
    with pytest.raises(ConfigError, match=r"memgauge\.toml: not UTF-8 text$"):
        load_config(tmp_path)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod 0 does not stop root (the tests may run as root): the read fails by hand
    _write(tmp_path / "memgauge.toml", "budget = 'rss=1GiB'\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(ConfigError, match=r"memgauge\.toml: cannot read it: Permission denied$"):
        load_config(tmp_path)


# --- resolve_budget ------------------------------------------------------------------------------


def test_resolve_layers_config_budget_policy_and_flags(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", PYPROJECT)
    config = load_config(tmp_path)
    # the default policy over the default budget
    b = resolve_budget(config)
    assert b.policy == "edge-pc"
    assert [(x.key, x.value) for x in b] == [("rss", 512 * MIB), ("wall", 30.0), ("fit.rss", 300 * MIB)]
    # a named policy instead of the default
    b = resolve_budget(config, policy="api-pod")
    assert b.policy == "api-pod"
    assert _keys(b) == {"rss": 2 * GIB, "wall": 60.0, "fit.rss": GIB}
    # --budget over both
    b = resolve_budget(config, policy="api-pod", budget_specs=["wall=5s cpu=1s", "fit.rss=10MiB"])
    assert [x.text for x in b] == ["rss=2GiB", "wall=5s", "fit.rss=10MiB", "cpu=1s"]
    assert b.policy == "api-pod"


def test_resolve_without_policy_keeps_the_config_budget(tmp_path: Path) -> None:
    _write(tmp_path / "memgauge.toml", 'budget = "rss=1GiB wall=10min"\n[policies]\nsmall = "rss=1MiB"\n')
    config = load_config(tmp_path)
    b = resolve_budget(config, budget_specs=["cpu=1s"])
    assert b.policy is None
    assert [x.text for x in b] == ["rss=1GiB", "wall=10min", "cpu=1s"]
    b = resolve_budget(config, policy="small")
    assert [x.text for x in b] == ["rss=1MiB", "wall=10min"]
    assert resolve_budget(GateConfig()) == Budget()


def test_resolve_unknown_policy_lists_the_known(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", PYPROJECT)
    config = load_config(tmp_path)
    with pytest.raises(ConfigError) as e:
        resolve_budget(config, policy="edge")
    assert e.value.message == f"--policy: unknown policy 'edge' (known: api-pod, edge-pc, in {path})"
    assert e.value.exit_code == 64


def test_resolve_unknown_policy_without_policies() -> None:
    with pytest.raises(ConfigError) as e:
        resolve_budget(GateConfig(), policy="edge")
    assert e.value.message == (
        "--policy: unknown policy 'edge' (no memgauge.toml or [tool.memgauge] in pyproject.toml was "
        "found from here up)"
    )
    with pytest.raises(ConfigError) as e:
        resolve_budget(GateConfig(path="/x/memgauge.toml"), policy="edge")
    assert e.value.message == "--policy: unknown policy 'edge' (/x/memgauge.toml defines none)"


def test_resolve_bad_flag_is_a_budget_error() -> None:
    with pytest.raises(BudgetError) as e:
        resolve_budget(GateConfig(), budget_specs=["wall=1", "rss=1X"])
    assert e.value.message.startswith("--budget: unknown unit 'X' in 'rss=1X'\n")
