"""The command line's face: README's exit-code table lists exactly the codes memgauge exits with,
every command's ``--help`` ends with examples that its own parser accepts, and an option keeps one
spelling of its values across commands."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from memgauge import _errors
from memgauge.cli import _common
from memgauge.cli._common import build_parser, split_argv
from memgauge.cli.commands import PROGRAM_COMMANDS, all_commands

COMMANDS = all_commands()

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "memgauge" / "cli"


def _readme_codes() -> set[int]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    codes: set[int] = set()
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| code"):
            continue
        first = line.split("|")[1]
        # "126 / 127" names two codes; "128 + N" is the signal's range, not a code of its own
        if "+" not in first:
            codes.update(int(n) for n in re.findall(r"\d+", first))
    return codes


def _error_codes() -> set[int]:
    classes = [getattr(_errors, name) for name in _errors.__all__]
    return {
        cls.exit_code for cls in classes if isinstance(cls, type) and issubclass(cls, _errors.MemgaugeError)
    }


def _returned_literals() -> set[int]:
    """Every ``return N`` and ``sys.exit(N)`` with a literal N in the CLI's modules."""
    found: set[int] = set()
    for path in CLI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            value = None
            if isinstance(node, ast.Return):
                value = node.value
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "exit", "os._exit"):
                value = node.args[0] if node.args else None
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, int)
                and not isinstance(value.value, bool)
            ):
                found.add(value.value)
    return found


def test_readme_lists_exactly_the_exit_codes_memgauge_uses() -> None:
    verdicts = {_common.PASSED, _common.OVER_BUDGET, _common.FAILED, _common.UNJUDGED, _common.INTERRUPTED}
    used = _error_codes() | verdicts | _returned_literals()
    assert used == _readme_codes()


def test_the_cli_docstring_table_agrees_with_readme() -> None:
    doc = _common.__doc__ or ""
    table = doc.split("Exit codes", 1)[1].split('"""', 1)[0]
    codes: set[int] = set()
    for line in table.splitlines():
        first = line[:21].strip()
        if first and "+" not in first and re.fullmatch(r"[\d /]+", first):
            codes.update(int(n) for n in re.findall(r"\d+", first))
    assert codes == _readme_codes()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_help_ends_with_examples_its_parser_accepts(command: _common.Command) -> None:
    assert 2 <= len(command.examples) <= 3, command.name
    parser = build_parser(command)
    help_text = parser.format_help()
    assert help_text.rstrip().endswith(command.examples[-1].partition("  # ")[0])
    assert "\nexamples:\n" in help_text
    for example in command.examples:
        line = example.partition("  # ")[0]
        argv = shlex.split(line)
        assert argv[:2] == ["memgauge", command.name], example
        own, _ = split_argv(parser, argv[2:], command.program)
        parser.parse_args(own)  # a UsageError names what the example got wrong


def _choices(option: str) -> dict[str, set[str]]:
    out = {}
    for command in COMMANDS:
        for action in build_parser(command)._actions:
            if option in action.option_strings and action.choices is not None:
                out[command.name] = {str(c) for c in action.choices}
    return out


def test_format_says_terminal_everywhere_and_check_still_takes_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    formats = _choices("--format")
    assert {name for name, choices in formats.items() if "terminal" in choices} == set(formats)
    assert not any("text" in choices for choices in formats.values())
    check = next(c for c in COMMANDS if c.name == "check")
    parser = build_parser(check)
    assert parser.parse_args(["--format", "text"]).format == "terminal"
    assert "--format text is deprecated: use --format terminal" in capsys.readouterr().err


def test_budget_helps_write_one_spelling() -> None:
    for command in COMMANDS:
        for action in build_parser(command)._actions:
            if "--budget" in action.option_strings:
                # spaces between limits, as the pytest marker, policies and docs write them
                assert re.search(r"'rss=\S+ \S+", action.help or ""), (command.name, action.help)


@pytest.mark.parametrize(
    ("argv", "content"),
    [
        (["view"], '{"a": 1}'),
        (["view"], "not json"),
        (["check", "--budget", "rss=1GiB"], '{"a": 1}'),
        (["compare", "{ok}"], "not json"),
        (["sweep", "--load"], '{"a": 1}'),
    ],
)
def test_an_error_about_a_file_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], content: str
) -> None:
    from memgauge.cli import main
    from tests.factories import make_profile

    ok = tmp_path / "ok.json"
    make_profile().save(ok)
    bad = tmp_path / "bad-file.json"
    bad.write_text(content)
    assert main([*(a.replace("{ok}", str(ok)) for a in argv), str(bad)]) == 65
    err = capsys.readouterr().err
    assert err.startswith(f"memgauge: error: {bad}: "), err


def test_serve_names_a_data_dir_it_cannot_make(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    from memgauge.service import Settings, prepare_data_dir

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(_errors.OutputError, match=f"--data-dir {blocker}/data: cannot use it"):
        prepare_data_dir(Settings(data_dir=str(blocker / "data")))


def test_the_commands_whose_run_group_is_made_first_are_those_that_run_a_target() -> None:
    # cli._ahead reads the names before any command's module (and argparse) is loaded
    assert set(PROGRAM_COMMANDS) == {c.name for c in all_commands() if c.program == "target"}
