"""memgauge's IPython extension in a real Jupyter kernel (nbclient + ipykernel): ``%memit`` against
known allocations, ``%%memit -o``, ``%%mgprofile`` (namespace, last expression, errors, interrupts,
the inline report opened in headless Chromium from the saved notebook), ``%mprun`` and the watch
mode's lines.

Without nbclient and ipykernel (the ``notebook`` extra, in ``dev``) these tests skip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("numpy")

# 10**7 float64 ones: 80,000,000 bytes, every page touched (np.zeros would be lazily zeroed pages)
N = 10**7
KNOWN = 8 * N
MEMIT = re.compile(r"peak memory: (\d+\.\d) MiB, increment: (\d+\.\d) MiB")
ROOT = Path(__file__).resolve().parents[2]


def execute(
    cells: list[str], tmp_path: Path, *, name: str = "nb.ipynb", timeouts: dict[int, int] | None = None
) -> Any:
    """Runs ``cells`` in a fresh kernel (cwd ``tmp_path``), saves the notebook, returns it as read
    back from the file."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    per_cell = timeouts or {}

    def timeout(cell: Any) -> int:
        return per_cell.get(nb.cells.index(cell), 120)

    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=120,
        timeout_func=timeout,
        interrupt_on_timeout=True,
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    path = tmp_path / name
    nbformat.write(nb, path)
    return nbformat.read(path, as_version=4)


def text(cell: Any) -> str:
    """Everything a cell printed (stdout, stderr) and its result's text."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            out.append(o.data.get("text/plain", ""))
        elif o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}\n")
    return "".join(out)


def errors(cell: Any) -> list[str]:
    return [o.ename for o in cell.outputs if o.output_type == "error"]


def result(cell: Any) -> str:
    found = [o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result"]
    assert len(found) == 1, cell.outputs
    return str(found[0])


def figures(cell: Any) -> Any:
    """The JSON a cell printed last."""
    printed = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    return json.loads(printed.strip().splitlines()[-1])


def within(measured: int, known: int, tolerance: float = 0.03) -> bool:
    return abs(measured - known) <= tolerance * known


def test_memit_increment_is_the_known_allocation_also_after_a_free(tmp_path: Path) -> None:
    nb = execute(
        [
            "%load_ext memgauge",
            f"import numpy as np\nN = {N}",
            "first = %memit -o x = np.ones(N)",
            "del x",
            # the freed pages went back to the kernel: the new array rises above the start again
            "again = %memit -o x = np.ones(N)",
            # a temporary freed within the statement: a 0.1 s poll misses it, VmHWM does not
            "spike = %memit -o float(np.ones(N).sum())",
            "import json\nprint(json.dumps([[r.increment_bytes, r.peak_bytes, r.baseline_bytes, r.method]"
            " for r in (first, again, spike)]))",
        ],
        tmp_path,
    )
    assert all(not errors(c) for c in nb.cells), [text(c) for c in nb.cells]
    for i in (2, 4, 5):
        line = text(nb.cells[i])
        match = MEMIT.search(line)
        assert match, line
        assert float(match.group(2)) > 0.0, line
        assert "exact: VmHWM reset before each run" in line
    for increment, peak, baseline, method in figures(nb.cells[6]):
        print(f"%memit increment {increment} B for {KNOWN} B known: {100 * (increment / KNOWN - 1):+.3f}%")
        assert within(increment, KNOWN), increment
        assert peak == baseline + increment
        assert method == "vmhwm-reset"


def test_cell_memit_returns_its_result_with_o_and_runs_in_the_namespace(tmp_path: Path) -> None:
    nb = execute(
        [
            "%load_ext memgauge",
            f"import numpy as np\nN = {N}",
            "%%memit -o -r 2\nbig = np.ones(N)\ntotal = float(big.sum())",
            "r = _\nimport json\nprint(json.dumps([type(r).__name__, len(r.peaks), r.increments, total]))",
            "%%memit -q\nsmall = 1",
            "%%memit\nraise ValueError('inside memit')",
        ],
        tmp_path,
    )
    cell = nb.cells[2]
    assert MEMIT.search(text(cell)), text(cell)
    assert "max of 2 runs" in text(cell)
    assert result(cell).startswith("<MemitResult : peak memory:")
    kind, runs, increments, total = figures(nb.cells[3])
    assert (kind, runs, total) == ("MemitResult", 2, float(N))
    # the first run adds the array; the second holds the old one while it makes the new one
    assert within(increments[0], KNOWN)
    assert within(increments[1], KNOWN)
    assert [o for o in nb.cells[4].outputs if o.output_type != "stream" or o.text.strip()] == []
    assert errors(nb.cells[5]) == ["ValueError"]


PROFILED = (
    "%%mgprofile -o prof --save prof.json\n"
    "a = np.ones(N)\n"
    "b = a * 2  # the peak: a and b\n"
    "del a\n"
    "float(b.sum())"
)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    tmp = tmp_path_factory.mktemp("profiled")
    nb = execute(
        [
            "%load_ext memgauge",
            f"import numpy as np\nN = {N}",
            PROFILED,
            "import json\nprint(json.dumps([b.shape[0], 'a' in dir(), prof.peak.resident_bytes,"
            " prof.peak.method, len(prof.lines) > 0]))",
            "%%mgprofile\nraise KeyError('from the cell')",
        ],
        tmp,
        name="profiled.ipynb",
    )
    return tmp / "profiled.ipynb", nb


def test_profiled_cell_keeps_its_variables_and_shows_its_last_expression(profiled: tuple[Path, Any]) -> None:
    path, nb = profiled
    cell = nb.cells[2]
    assert errors(cell) == []
    assert result(cell) == str(float(2 * N))
    html = [o for o in cell.outputs if o.output_type == "display_data"]
    assert len(html) == 1 and "text/html" in html[0].data and "text/plain" in html[0].data
    assert html[0].data["text/plain"].startswith("memgauge: peak ")
    size, a_defined, peak, method, has_lines = figures(nb.cells[3])
    assert (size, a_defined, method, has_lines) == (N, False, "vmhwm-reset", True)
    saved = json.loads((path.parent / "prof.json").read_text())
    assert saved["peak"]["resident_bytes"] == peak
    # the error is the cell's own, after the report of what ran
    assert errors(nb.cells[4]) == ["KeyError"]
    assert any(o.output_type == "display_data" for o in nb.cells[4].outputs)


def test_inline_report_renders_offline_in_chromium_from_the_saved_notebook(
    browser: Any, profiled: tuple[Path, Any]
) -> None:
    path, _ = profiled
    saved = nbformat.read(path, as_version=4)
    fragment = next(o.data["text/html"] for o in saved.cells[2].outputs if o.output_type == "display_data")
    assert "<script src" not in fragment and "http" not in fragment.split("srcdoc=")[0]
    # an output area as Jupyter fills it: the stored HTML set as a node's content
    host = path.parent / "host.html"
    host.write_text(
        "<!doctype html><html><head><meta charset='utf-8'></head><body><div id='out'></div>"
        f"<script>document.getElementById('out').innerHTML = {json.dumps(fragment)};</script>"
        "</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    console: list[tuple[str, str]] = []
    page_errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(host.as_uri())
    frame_element = page.wait_for_selector("iframe.memgauge-report")
    frame = frame_element.content_frame()
    frame.wait_for_selector("body[data-rendered], body[data-failed]", state="attached", timeout=15_000)
    assert frame.get_attribute("body", "data-failed") is None
    assert frame.get_attribute("body", "data-rendered") == "true"
    # the memory chart is drawn, and the peak's line is the cell's own source
    painted = frame.evaluate(
        "() => { const c = document.getElementById('chart-memory'); const d = c.getContext('2d')"
        ".getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4)"
        " if (d[i]) n++; return n; }"
    )
    assert painted > 1000
    assert "b = a * 2" in frame.inner_text("#peak")
    # the report's navigation scrolls within the frame instead of loading the host page into it
    frame.click("nav a[href='#peak']")
    page.wait_for_timeout(200)
    assert frame.url.startswith("about:srcdoc")
    assert frame.get_attribute("body", "data-rendered") == "true"
    # the frame grew to its content
    assert frame_element.bounding_box()["height"] > 720
    assert page_errors == []
    assert [m for m in console if m[0] in ("error", "warning")] == []
    assert requests == [host.as_uri()]  # offline: nothing fetched
    page.close()


def test_an_interrupted_profiled_cell_leaves_nothing_running(tmp_path: Path) -> None:
    probe = (
        "import os, sys, threading, json\n"
        "from memgauge.capture import active_sampler, active_tracker\n"
        "print(json.dumps([len(os.listdir('/proc/self/task')), sorted(t.name for t in threading.enumerate()),"
        " active_sampler() is None, active_tracker() is None, sys.gettrace() is None]))"
    )
    nb = execute(
        [
            "%load_ext memgauge",
            # the first report's display starts a few threads of the kernel's own, once: the
            # figures before are taken after it
            "%%mgprofile -c\nimport subprocess, sys, time",
            probe,
            "%%mgprofile -c\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "time.sleep(60)",
            "child.kill(); child.wait()\n" + probe,
            "def slow():\n    time.sleep(60)",
            "%mprun -f slow slow()",
            probe,
        ],
        tmp_path,
        timeouts={3: 4, 6: 3},
    )
    assert errors(nb.cells[3]) == ["KeyboardInterrupt"]
    assert errors(nb.cells[6]) == ["KeyboardInterrupt"]
    before, after, later = figures(nb.cells[2]), figures(nb.cells[4]), figures(nb.cells[7])
    assert after == before  # the same OS threads (the line sampler's too), nothing active
    assert later == before
    assert before[2:] == [True, True, True]


def test_watch_prints_one_line_per_cell(tmp_path: Path) -> None:
    fake = (
        "from memgauge.notebook import GpuPeak, use_gpu_monitor\n"
        "class FakeGpu:\n"
        "    def start(self): pass\n"
        "    def stop(self): return GpuPeak((3 << 30,), (1 << 30,), (4 << 30,))\n"
    )
    nb = execute(
        [
            "%load_ext memgauge",
            f"import numpy as np\nN = {N}\n" + fake,
            "%memgauge watch on",
            "x = np.ones(N)",
            "del x",
            "1 / 0",
            "use_gpu_monitor(FakeGpu())",
            "y = 2",
            "%memgauge watch off",
            "z = 3",
            "%memgauge history",
            "import json\nw = get_ipython().magics_manager.registry['MemgaugeMagics'].watch\n"
            "print(json.dumps([[c.execution_count, c.increment_bytes, c.retained_bytes]\n"
            "                  for c in w.history]))",
        ],
        tmp_path,
    )
    lines = {
        i: [t for t in text(c).splitlines() if t.startswith("memgauge [")] for i, c in enumerate(nb.cells)
    }
    assert "memgauge: watch is on" in text(nb.cells[2])
    for i in (3, 4, 5, 6, 7):
        assert len(lines[i]) == 1, (i, text(nb.cells[i]))
        assert lines[i][0].startswith(f"memgauge [{nb.cells[i].execution_count}]: peak "), lines[i]
    assert re.search(r"peak \S+ MiB \(\+7[56]\.\d MiB\) · now \S+ MiB \(\+7[56]\.\d MiB\)", lines[3][0])
    assert re.search(r"now \S+ MiB \(-7[56]\.\d MiB\)", lines[4][0]), lines[4]
    assert errors(nb.cells[5]) == ["ZeroDivisionError"]
    assert "GPU peak 3.0 GiB (+2.0 GiB, reserved 4.0 GiB)" in lines[7][0]
    # from the cell after `watch on` to the cell before `watch off`
    assert lines[2] == [] and lines[8] == [] and lines[9] == [] and lines[10] == [] and lines[11] == []
    history = figures(nb.cells[11])
    assert [h[0] for h in history] == [c.execution_count for c in nb.cells[3:8]]
    _, increment, retained = history[0]
    assert within(increment, KNOWN) and within(retained, KNOWN)
    assert within(-history[1][2], KNOWN)
    table = text(nb.cells[10])
    assert "increment" in table and len(table.strip().splitlines()) == 2 + 5


def test_mprun_gives_each_line_its_exact_peak(tmp_path: Path) -> None:
    nb = execute(
        [
            "%load_ext memgauge",
            f"import numpy as np\nN = {N}",
            "def work(n):\n"
            "    kept = np.ones(n)\n"
            "    total = float((kept * 2).sum())\n"
            "    for _ in range(3):\n"
            "        part = np.ones(n // 4)\n"
            "    return total",
            "lines = %mprun -o -f work work(N)",
            "import json\nf = lines.functions[0]\n"
            "print(json.dumps({r.line: [r.hits, r.temporary_bytes, r.increment_bytes] for r in f.rows}))",
        ],
        tmp_path,
    )
    out = text(nb.cells[3])
    assert "Line #" in out and "kept = np.ones(n)" in out and "VmHWM read and reset" in out
    rows = {int(k): v for k, v in figures(nb.cells[4]).items()}
    kept, temporary, loop = rows[2], rows[3], rows[5]
    assert kept[0] == 1 and within(kept[1], KNOWN) and within(kept[2], KNOWN)
    # the temporary (kept * 2) is freed within its line: seen in full, nothing kept
    assert temporary[0] == 1 and within(temporary[1], KNOWN) and abs(temporary[2]) < 0.03 * KNOWN
    assert loop[0] == 3 and within(loop[1], KNOWN // 4)
    assert rows[1][0] == 0  # the def line never runs as a line of the call


def test_the_example_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    example = ROOT / "examples" / "memgauge_in_jupyter.ipynb"
    nb = nbformat.read(example, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError at the first failing cell
    shown = "".join(text(c) for c in nb.cells if c.cell_type == "code")
    assert MEMIT.search(shown)
    assert "memgauge [" in shown
