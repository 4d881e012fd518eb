"""The torch sections of the reports, from real ``memgauge run``s of a small training loop (CPU):
the HTML page's stacked chart of roles over steps drawn in headless Chromium with its tables, the
Markdown roles table, and ``memgauge compare`` of two model sizes whose parameter bytes are known
by construction (terminal, Markdown, JSON, HTML)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge import load_profile
from memgauge._units import format_bytes
from memgauge.render import HtmlRenderer, MarkdownRenderer
from memgauge.sections.torch import TORCH_ROLES
from tests.conftest import run_memgauge
from tests.factories import make_profile
from tests.integration.test_html_browser import assert_clean, assert_drawn, open_report

pytest.importorskip("torch")

LAYERS, STEPS = 3, 4
TRAIN = f"""
import sys, torch
width = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range({LAYERS})])
opt = torch.optim.Adam(model.parameters())
x = torch.randn(16, width)
for _ in range({STEPS}):
    opt.zero_grad()
    model(x).relu().pow(2).mean().backward()
    opt.step()
"""


def params(width: int) -> int:
    return LAYERS * (width * width + width) * 4  # float32 weights and biases, by construction


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    tmp = tmp_path_factory.mktemp("torch")
    (tmp / "train.py").write_text(TRAIN)
    out = {}
    for width in (64, 192):
        html = tmp / f"w{width}.html"
        r = run_memgauge(["-q", "--html", str(html), "train.py", str(width)], tmp)
        assert r.returncode == 0, r.stderr
        assert r.profile is not None and r.profile["torch"]["max_by_role"]["parameters"] == params(width)
        path = tmp / f"w{width}.json"
        path.write_text(json.dumps(r.profile))
        out[width] = path
    return out


def _compare(runs: dict[int, Path], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "memgauge", "compare", "--names", "small,large", *args]
    r = subprocess.run([*cmd, str(runs[64]), str(runs[192])], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def test_the_html_report_draws_roles_over_steps_and_lists_roles_and_modules(
    browser: Any, runs: dict[int, Path]
) -> None:
    html = runs[192].with_suffix(".html")
    opened = open_report(browser, html)
    assert_clean(opened, html)
    chart = assert_drawn(opened, "chart-torch-steps")
    assert [d["label"] for d in chart["datasets"]] == [r.replace("_", " ") for r in TORCH_ROLES]
    assert chart["labels"] == [str(i + 1) for i in range(STEPS)]
    # every step's peak holds the parameters, exact to the byte
    params_set = chart["datasets"][0]
    assert params_set["points"] == STEPS and params_set["first"] == params(192)
    assert opened.page.inner_text("nav a[href='#torch']") == "torch"
    roles = opened.page.inner_text("#torch table:first-of-type tbody tr:first-child")
    assert "parameters" in roles and format_bytes(params(192)) in roles
    modules = opened.page.inner_text("#torch")
    assert "modules at the torch peak" in modules and "Sequential.0" in modules


def test_the_markdown_report_has_the_roles_table(runs: dict[int, Path]) -> None:
    text = MarkdownRenderer().render(load_profile(runs[64]))
    assert "**torch tensors (summary): peak" in text
    assert f"| parameters | {format_bytes(params(64))} |" in text
    assert "**modules at the torch peak**" in text


def test_reports_of_a_profile_without_torch_have_no_torch_section() -> None:
    p = make_profile()
    assert p.torch is None
    page = HtmlRenderer().render(p)
    # the page's own script draws the chart when there is data: look at the body and the data
    body, rest = page.split('<script type="application/json" id="memgauge-data">', 1)
    assert 'id="torch"' not in body and "chart-torch" not in body
    assert "torch" not in json.loads(rest.split("</script>", 1)[0])
    assert "torch" not in MarkdownRenderer().render(p)


def test_compare_shows_the_roles_of_two_model_sizes_side_by_side(browser: Any, runs: dict[int, Path]) -> None:
    small, large = params(64), params(192)
    data = json.loads(_compare(runs, "--format", "json").stdout)
    rows = {r["key"]: r for r in data["torch"]}
    assert rows["torch_parameters"]["values"] == [small, large]
    assert rows["torch_parameters"]["deltas"] == [large - small]
    # Adam's state at the peak: twice the parameters and one 4-byte step per parameter tensor
    assert rows["torch_optimizer_state"]["values"] == [2 * small + 2 * LAYERS * 4, 2 * large + 2 * LAYERS * 4]
    terminal = _compare(runs, "--width", "120", "--no-color").stdout
    assert "torch tensors by role at each run's peak" in terminal
    line = next(x for x in terminal.splitlines() if x.lstrip().startswith("parameters"))
    assert format_bytes(small) in line and format_bytes(large) in line
    md = _compare(runs, "--format", "md").stdout
    assert "### Torch tensors by role at each run's peak" in md
    assert f"| parameters | {format_bytes(small)} | {format_bytes(large)} |" in md
    html = runs[64].parent / "compare.html"
    _compare(runs, "--html", str(html))
    opened = open_report(browser, html)
    assert_clean(opened, html)
    chart = assert_drawn(opened, "chart-compare-torch")
    assert chart["labels"][0] == "parameters"
    assert [d["first"] for d in chart["datasets"]] == [small, large]
