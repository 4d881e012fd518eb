"""The HTML report's GPU section in headless Chromium: a real run under the GPU fakes
(tests/integration/test_gpu_run.py's scripts), its page clean and offline, the section in the
navigation, and its layer rows showing the gaps the scripts imply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_memgauge
from tests.integration.test_gpu_run import TRAIN, scripts
from tests.integration.test_html_browser import assert_clean, open_report

pytest.importorskip("torch")


def test_the_gpu_section_shows_the_layers_in_chromium(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    result = run_memgauge(["--html", str(html), str(TRAIN)], tmp_path, env=scripts(tmp_path))
    assert result.returncode == 0, result.stderr
    opened = open_report(browser, html)
    assert_clean(opened, html)
    page = opened.page
    assert page.is_visible("#gpu")
    assert page.get_attribute("nav a[href='#gpu']", "href") == "#gpu"
    assert page.inner_text("#gpu-0") == "GPU 0 (NVIDIA H100 80GB HBM3), 79.6 GiB in all"
    rows = page.eval_on_selector_all(
        "#gpu table.gpu-layers tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
    )
    assert [r[0] for r in rows] == ["tensors", "allocated", "reserved", "process", "device"]
    by_layer = {r[0]: r for r in rows}
    assert by_layer["process"][1:3] == ["830 MiB", "+610 MiB"]
    assert "CUDA context" in by_layer["process"][3]
    assert by_layer["tensors"][1] == "—"  # the program's tensors live on the CPU
    assert by_layer["allocated"][2] == "—"
    page.close()
