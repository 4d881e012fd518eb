"""The one table of report formats (``cli/_formats.py``): every command's ``--format`` choices and
its ``--html`` page come from it, and no command picks a renderer of its own."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from memgauge.analysis import compare
from memgauge.cli._common import build_parser, default_profile_path
from memgauge.cli._formats import FORMATS, KINDS, PAGE, Judged, Look, names, need
from memgauge.cli.commands import all_commands
from memgauge.gate import judge, parse_budget
from tests.factories import MIB, make_profile

CLI = Path(__file__).resolve().parents[2] / "src" / "memgauge" / "cli"

# what each command reports: (the kind of its --format, the kind of its --html page); a command
# that gains either says so here
REPORTS: dict[str, tuple[str | None, str | None]] = {
    "run": (None, "profile"),
    "check": ("verdict", "profile"),
    "view": ("profile", "profile"),
    "compare": ("comparison", "comparison"),
    "sweep": ("sweep", "sweep"),
    "fit": ("fit", "fit"),
    "plan": ("plan", "plan"),
    "submit": (None, "profile"),  # the service's page of the run, fetched
}


def _options(command_name: str) -> dict[str, list[str] | None]:
    """Each option of the command's parser (its longest spelling) and its choices."""
    command = next(c for c in all_commands() if c.name == command_name)
    return {
        max(a.option_strings, key=len): a.choices for a in build_parser(command)._actions if a.option_strings
    }


@pytest.mark.parametrize("command", [c.name for c in all_commands()])
def test_every_commands_format_choices_and_page_come_from_the_table(command: str) -> None:
    options = _options(command)
    fmt, page = REPORTS.get(command, (None, None))
    if "--format" in options:
        assert fmt is not None, f"{command} has --format: name its kind of report in REPORTS"
        assert options["--format"] == names(fmt)
    else:
        assert fmt is None, f"{command} reports {fmt} but has no --format"
    assert ("--html" in options) == (page is not None), command
    if page is not None:
        assert PAGE.has(page), f"{command} writes a page the table has no {page} renderer for"


def test_no_command_module_picks_a_renderer_or_a_format_list_of_its_own() -> None:
    for path in CLI.rglob("*.py"):
        if path.name == "_formats.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute | ast.Name | ast.alias):
                name = (
                    node.attr
                    if isinstance(node, ast.Attribute)
                    else getattr(node, "id", getattr(node, "name", ""))
                )
                # a fit's remedies and prediction are parts of its terminal report, not formats
                if name.endswith("Renderer") and "Remedies" not in name and "Prediction" not in name:
                    pytest.fail(f"{path.name}:{node.lineno} uses {name}: pick it from cli/_formats.py")
            if isinstance(node, ast.Call) and any(
                isinstance(a, ast.Constant) and a.value == "--format" for a in node.args
            ):
                assert not any(k.arg == "choices" for k in node.keywords), f"{path.name}:{node.lineno}"


def test_the_table_names_each_kind_and_the_formats_print_what_they_say() -> None:
    assert set(KINDS) == {"profile", "comparison", "sweep", "fit", "plan", "verdict"}
    assert names("profile") == ["terminal", "md", "json"] and names("sweep") == ["terminal", "md", "json"]
    assert names("verdict") == ["terminal", "md", "json", "bmf"] and "html" not in names("plan")
    assert names("fit") == ["terminal", "md", "json"]
    profile = make_profile(rss=300 * MIB)
    look = Look(width=80)
    assert "resident peak 300 MiB" in need(FORMATS["terminal"].profile, "terminal")(profile, look)
    assert need(FORMATS["md"].profile, "md")(profile, look).startswith("### memgauge ")
    assert json.loads(need(FORMATS["json"].profile, "json")(profile, look))["format"]
    assert need(PAGE.profile, "html")(profile, look).startswith("<!DOCTYPE html>")
    comparison = compare([profile, make_profile(rss=400 * MIB)], ["a", "b"])
    for fmt in names("comparison"):
        assert "a" in need(FORMATS[fmt].comparison, fmt)(comparison, look)
    verdict = judge(profile, parse_budget("rss=1GiB"))
    judged = Judged(verdict, [profile], "bench")
    assert "rss" in need(FORMATS["terminal"].verdict, "terminal")(judged, look)
    assert "| rss |" in need(FORMATS["md"].verdict, "md")(judged, look)
    assert "bench" in json.loads(need(FORMATS["bmf"].verdict, "bmf")(judged, look))


def test_a_kind_without_the_format_is_a_usage_error_and_records_take_the_json_suffix() -> None:
    from memgauge._errors import UsageError

    with pytest.raises(UsageError, match="no bmf format"):
        need(FORMATS["bmf"].sweep, "bmf")
    assert default_profile_path("x").endswith(FORMATS["json"].suffix)
    assert {f.suffix for f in FORMATS.values()} == {".txt", ".md", ".json", ".html"}
