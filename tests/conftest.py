from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests._turns import Turns

PROGRAMS = Path(__file__).parent / "programs"
MIB = 1 << 20


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    profile: dict[str, Any] | None


def marker(program: Path, tag: str) -> int:
    """The line of ``program`` carrying ``# LINE: tag`` or ``# ALLOC: tag``."""
    for n, text in enumerate(program.read_text().splitlines(), 1):
        if re.search(rf"# (LINE|ALLOC): {re.escape(tag)}\b", text):
            return n
    raise AssertionError(f"no marker {tag} in {program}")


def run_memgauge(
    args: list[str],
    tmp_path: Path,
    *,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Result:
    """`python -m memgauge run --json <tmp>/profile.json ARGS` in a real child process."""
    out = tmp_path / "profile.json"
    if out.exists():
        out.unlink()
    cmd = [sys.executable, "-m", "memgauge", "run", "--json", str(out), *args]
    proc = subprocess.run(
        cmd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd or tmp_path,
        timeout=timeout,
    )
    profile = json.loads(out.read_text()) if out.exists() else None
    return Result(proc.returncode, proc.stdout, proc.stderr, profile)


def kernel_hwm_alone(script: Path, tmp_path: Path, *args: str) -> int:
    """The kernel's VmHWM for the program run alone, without memgauge."""
    out = tmp_path / "hwm.txt"
    subprocess.run(
        [sys.executable, str(PROGRAMS / "hwm_alone.py"), str(script), *args],
        env={**os.environ, "HWM_OUT": str(out)},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return int(out.read_text())


@pytest.fixture
def memgauge_run(tmp_path: Path) -> Callable[..., Result]:
    def run(args: list[str], **kw: Any) -> Result:
        return run_memgauge(args, tmp_path, **kw)

    return run


# --- headless Chromium (Debian's), driven by Playwright, for the HTML pages -----------------------

CHROMIUM = os.environ.get("MEMGAUGE_CHROMIUM", "/usr/bin/chromium")
# as the machine notes say: without the background-networking flags Chromium keeps trying to
# reach Google's hosts, and this machine refuses every connection
_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def real_cuda() -> None:
    """A real CUDA device and NVML, and no fake standing in for them: the `gpu` tests of the real
    sources skip without them and fail with a fake set."""
    torch: Any = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    pytest.importorskip("pynvml")
    for name in ("MEMGAUGE_TEST_FAKE_CUDA", "MEMGAUGE_TEST_FAKE_NVML"):
        if name in os.environ:
            pytest.fail(f"{name} is set: these tests are about the real sources")


def _unavailable(reason: str) -> None:
    if os.environ.get("MEMGAUGE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and MEMGAUGE_REQUIRE_BROWSER=1")
    pytest.skip(reason)


# module scope, not session: Playwright's sync API keeps an asyncio loop running in this thread while
# it is open, and a later test's asyncio.run() would then fail
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=_ARGS)
        try:
            # a first page pays Chromium's own start-up; the timed pages should not
            warm = b.new_page()
            warm.set_content("<p>warm</p>")
            warm.close()
            yield b
        finally:
            b.close()


# The extras' run in CI runs again exactly the tests a run without torch skipped for its absence:
# `--record-torch-skips FILE` writes their node ids (a whole module where it skipped on import).
_TORCH_ABSENT = ("could not import 'torch'", "torch is not installed")
_torch_skips: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-torch-skips",
        metavar="FILE",
        help="write the node ids of the tests skipped because torch is not installed to FILE",
    )


def _skipped_for_torch(report: pytest.CollectReport | pytest.TestReport) -> bool:
    return report.skipped and any(reason in str(report.longrepr) for reason in _TORCH_ABSENT)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if _skipped_for_torch(report):
        _torch_skips.append(report.nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when in ("setup", "call") and _skipped_for_torch(report):
        _torch_skips.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--record-torch-skips")
    # under xdist the controller writes it: the workers' skips are reported to it
    if path and not hasattr(session.config, "workerinput"):
        Path(path).write_text("".join(f"{nodeid}\n" for nodeid in _torch_skips))


# The integration tests of what reads the interpreter's own workings (frames and bytecode, the
# bootstrap's runpy, sitecustomize, thread ids, the import system, IPython's kernel): CI runs
# these on the oldest and the newest Python too (`-m interpreter`), the whole suite on 3.11.
INTERPRETER_MODULES = frozenset(
    {
        "test_attribution_unsampled",
        "test_cli",
        "test_contention",
        "test_inprocess_capture",
        "test_knobs",
        "test_leaks_truth",
        "test_lines",
        "test_lines_edges",
        "test_lines_outside",
        "test_lines_plugin",
        "test_notebook",
        "test_pickles_run",
        "test_pytest_plugin",
        "test_record",
        "test_run_edges",
        "test_run_ground_truth",
        "test_startup",
        "test_working_set",
    }
)


# The integration tests that may run beside another test under pytest-xdist
# (`MEMGAUGE_TEST_WORKERS=2 bash scripts/test.sh`): their figures are the service's API and queue,
# a report's text and pages, a record's fields, none a time, a CPU share or a rate. Every other
# test runs with the machine to itself (tests/_turns.py).
PARALLEL_MODULES = frozenset(
    {
        "test_api",
        "test_fit_browser",
        "test_html",
        "test_html_browser",
        "test_html_sweep_browser",
        "test_plan_browser",
        "test_reports_review",
        "test_schema",
        "test_service_admission",
        "test_service_db",
        "test_service_e2e",
        "test_service_judge",
        "test_service_machines",
        "test_service_machines_browser",
        "test_service_prove",
        "test_service_quota",
        "test_service_review",
        "test_service_schemathesis",
        "test_service_ui_browser",
        "test_sweep_review",
        "test_unmeasured",
        "test_view_cli",
    }
)
_turns: Turns | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _turns
    # started from a shell's background job, pytest and every child it starts would ignore SIGINT
    # (each exec keeps an ignored signal): the tests that interrupt a run could not
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        _turns = Turns(str(workerinput["testrunuid"]))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _turns is not None:
        _turns.close()


def _alone(item: pytest.Item) -> bool:
    return not (item.path.parent.name == "integration" and item.path.stem in PARALLEL_MODULES)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    if _turns is None:
        return (yield)
    with _turns.turn(_alone(item)):
        return (yield)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in INTERPRETER_MODULES:
            item.add_marker(pytest.mark.interpreter)
    if hasattr(config, "workerinput"):
        # the tests that may run beside each other first: xdist hands out modules in this order
        # (`--no-loadscope-reorder`), so both workers run them at once instead of taking turns
        # with a measuring test. In one process the order stays the files'.
        items.sort(key=_alone)
