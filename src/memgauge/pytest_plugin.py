"""memgauge's pytest plugin: memory and time budgets per test. Enabled by installing memgauge (the
``pytest11`` entry point ``memgauge``; ``-p no:memgauge`` turns it off).

    @pytest.mark.memory_budget(rss="200MiB", wall="2s")     # or memory_budget("rss=200MiB wall=2s")
    def test_fit(): ...

    pytest --memgauge-budget "rss=1GiB"                     # a default for every test (ini: memgauge_budget)
    pytest --memgauge-json budgets.json                     # every budgeted test's figures
    pytest --memgauge-allow-unmeasured                      # accept limits this host cannot measure

Only budgeted tests are measured: the test's call (not its fixtures' set-up or tear-down) runs
inside ``memgauge.profile(lines=True, children=True)``. Its ``rss`` is its *growth*: the resident
peak of the process tree during the call minus the tree's resident size when the call began, so
what pytest, earlier tests and module-level caches already held is not the test's; processes the
test starts count in full. ``phase.rss`` is counted the same way, from the process's resident size
at the start. ``wall`` and ``cpu`` are the call's (CPU of the process and of its descendants).

A limit the plugin could not measure (a ``gpu`` limit without a GPU, a phase the test never entered)
fails the test, as a breach does, unless allowed (``--memgauge-allow-unmeasured``, the ini option
``memgauge_allow_unmeasured``, or the marker's ``allow_unmeasured=True``): a budget nobody could
check is not a pass.

``--memgauge-json`` lists, per budgeted test, its figures and its ``checks``: the gate's results as
``memgauge check --format json`` gives them (``CheckResult.to_dict``, one serialiser for both), each
with ``where``, the blamed line relative to the rootdir.

Without a budget anywhere the plugin costs a few dictionary look-ups per test: it imports nothing
heavy, and the gate and the capture code load only once a budget is given. PYTEST_DONT_REWRITE:
no assertion of pytest's to rewrite here, so no rewriting cost either.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator

    from memgauge.gate import Budget
    from memgauge.model import Profile
    from memgauge.runner import profile as measurement

MARKER = "memory_budget"
# the attribute a call report carries its figures in: plain data, so xdist sends it to the controller
_REPORT_ATTR = "memgauge"
RSS_DEFINITION = (
    "rss is the test's growth: the resident peak of its process tree during the call, minus the "
    "tree's resident size when the call began (processes the test starts count in full)"
)
_SUMMARY_ROWS = 20


_STATE = pytest.StashKey["_Session"]()
_BUDGET = pytest.StashKey["Budget"]()
_RECORD = pytest.StashKey[dict[str, Any]]()
_ALLOW = pytest.StashKey[bool]()
# the marker's keyword that is not a limit
_ALLOW_KEY = "allow_unmeasured"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memgauge", "memory and time budgets per test (memgauge)")
    group.addoption(
        "--memgauge-budget",
        dest="memgauge_budget",
        default=None,
        metavar="SPEC",
        help="default budget of every test, e.g. 'rss=1GiB wall=30s' (over the memgauge_budget ini "
        "option; '' for none); a memory_budget marker overrides it key by key",
    )
    group.addoption(
        "--memgauge-json",
        dest="memgauge_json",
        default=None,
        metavar="PATH",
        help="write every budgeted test's figures (rss growth, wall, cpu, limits, status, line) as JSON",
    )
    group.addoption(
        "--memgauge-allow-unmeasured",
        dest="memgauge_allow_unmeasured",
        action="store_true",
        default=None,
        help="accept a limit this host cannot measure (a gpu limit without a GPU, a phase that never "
        "ran); without it such a test fails",
    )
    parser.addini("memgauge_budget", "default budget of every test, e.g. rss=1GiB (memgauge)", default="")
    parser.addini(
        "memgauge_allow_unmeasured",
        "accept limits this host cannot measure (memgauge)",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(spec=None, **limits): memgauge budget of the test, e.g. {MARKER}(rss='200MiB', "
        f"wall='2s') or {MARKER}('rss=200MiB fit.rss=100MiB'); {MARKER}(None) takes the test out of "
        f"the default budget, {MARKER}(rss=None) one key of it",
    )
    cli = config.getoption("memgauge_budget")
    spec, source = (cli, "--memgauge-budget") if cli is not None else (config.getini("memgauge_budget"), "")
    default = None
    if str(spec).strip():
        default = _parse(str(spec), source or "memgauge_budget (ini)")
    json_path = config.getoption("memgauge_json")
    if json_path is not None:
        json_path = os.path.join(str(config.invocation_params.dir), json_path)
        if not hasattr(config, "workerinput"):
            from memgauge._errors import OutputError
            from memgauge._files import check_output

            try:
                check_output(json_path, "--memgauge-json")
            except OutputError as e:
                raise pytest.UsageError(f"memgauge: {e.message}") from None
    allow = config.getoption("memgauge_allow_unmeasured")
    session = _Session(config, default or None, json_path)
    session.allow_unmeasured = (
        bool(allow) if allow is not None else bool(config.getini("memgauge_allow_unmeasured"))
    )
    config.stash[_STATE] = session
    config.pluginmanager.register(session, "memgauge-session")


def _parse(spec: str | list[str], source: str) -> Budget:
    from memgauge.gate import BudgetError, parse_budget

    try:
        budget = parse_budget(spec, source=source)
    except BudgetError as e:
        # pytest prints a UsageError as "ERROR: ..." and exits 4, as for its own bad options
        raise pytest.UsageError(f"memgauge: {e.message}") from None
    return budget


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    for item in items:
        budget = _item_budget(item, state.default)
        if budget:
            item.stash[_BUDGET] = budget
            item.stash[_ALLOW] = _item_allows(item, state.allow_unmeasured)


def _item_allows(item: pytest.Item, default: bool) -> bool:
    """Whether the test accepts unmeasured limits: the closest marker that says, else ``default``."""
    for mark in item.iter_markers(MARKER):
        if _ALLOW_KEY in mark.kwargs:
            return bool(mark.kwargs[_ALLOW_KEY])
    return default


def _item_budget(item: pytest.Item, default: Budget | None) -> Budget | None:
    """The default budget with the test's markers over it, key by key; the closest marker (the
    function's, then its class's, then its module's) wins."""
    markers = list(item.iter_markers(MARKER))
    if not markers:
        return default
    from memgauge.gate import Budget

    budget = default or Budget()
    for mark in reversed(markers):  # the farthest first, so that the closest is applied last
        if len(mark.args) > 1 or (mark.args and not (mark.args[0] is None or isinstance(mark.args[0], str))):
            raise pytest.UsageError(
                f"memgauge: {item.nodeid}: {MARKER} takes one spec string (or None) and limits as "
                f"keywords, e.g. {MARKER}(rss='200MiB'), not {mark.args!r}"
            )
        source = f"{MARKER} marker of {item.nodeid}"
        if mark.args and mark.args[0] is None:
            budget = Budget()  # out of the default, and of the farther markers
        elif mark.args and mark.args[0].strip():
            budget = budget.merged(_parse(mark.args[0], source))
        limits = {key: value for key, value in mark.kwargs.items() if key != _ALLOW_KEY}
        dropped = {key for key, value in limits.items() if value is None}
        tokens = [f"{key}={value}" for key, value in limits.items() if value is not None]
        if tokens:
            budget = budget.merged(_parse(tokens, source))
        if dropped:
            budget = Budget(
                tuple(limit for limit in budget.limits if limit.key not in dropped), budget.policy
            )
    return budget


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    # the innermost wrapper (trylast), so that the measurement covers the test and little else
    budget = item.stash.get(_BUDGET, None)
    if budget is None:
        yield
        return
    from memgauge.runner import profile
    from memgauge.watcher import own_oom_kills

    prof = profile(lines=True, children=True)
    kills = own_oom_kills()
    with prof:
        outcome = yield
    if prof.profile is None or _skipped(outcome):
        return
    kills = own_oom_kills() - kills
    state = item.config.stash[_STATE]
    allow = item.stash.get(_ALLOW, False)
    item.stash[_RECORD] = _judge(item, budget, prof.profile, prof, state.rootdir, kills, allow)


def _skipped(outcome: Any) -> bool:
    excinfo = getattr(outcome, "excinfo", None)
    return excinfo is not None and isinstance(excinfo[1], pytest.skip.Exception)


def _growth(profile: Profile, start_tree: int, start_process: int) -> Profile:
    """The profile with every resident figure counted from the call's start (see the module's
    doc); the pseudo-line holding what the process had before is dropped from the attribution."""
    from dataclasses import replace

    pid = profile.processes[0].pid if profile.processes else os.getpid()
    peak = replace(
        profile.peak,
        resident_bytes=max(0, profile.peak.resident_bytes - start_tree),
        # the gate's ``rss`` judges the need where there is one: the test's growth too
        needs_bytes=max(0, profile.peak.needs_bytes - start_tree) if profile.peak.needs_bytes else 0,
        attribution=[a for a in profile.peak.attribution if not (a.pid == pid and a.file == "<before>")],
    )
    phases = [
        replace(ph, peak_resident_bytes=max(0, ph.peak_resident_bytes - start_process))
        if ph.pid == pid
        else ph
        for ph in profile.phases
    ]
    return replace(profile, peak=peak, phases=phases)


def _judge(
    item: pytest.Item,
    budget: Budget,
    profile: Profile,
    prof: measurement,
    rootdir: str,
    kills: int = 0,
    allow_unmeasured: bool = False,
) -> dict[str, Any]:
    """The test's record: its figures, and per limit the gate's own result (``CheckResult.to_dict``,
    as ``memgauge check --format json`` lists it) with ``where``, the blamed line relative to the
    rootdir. ``kills``: OOM kills in this process's memory cgroups while the test ran."""
    from memgauge._plugin_blame import blamed_line, message, own_line
    from memgauge.gate import judge

    start_tree = prof.start_resident_bytes
    grown = _growth(profile, start_tree, prof.start_process_resident_bytes)
    if kills > 0 and len(profile.processes) > 1:
        # a process the test started was OOM-killed at the limit of the groups pytest runs in (a
        # container's; the machine's memory without one): the test's growth was at least that
        # limit less what the tree held when the test began (the gate's "ceiling")
        limit = profile.environment.get("memory_limit_bytes") or profile.environment.get("total_memory_bytes")
        if isinstance(limit, int):
            ceiling = {"bytes": max(0, limit - start_tree), "reached": True}
            measurement = {"cgroup_limit": ceiling, "oom_kills": kills}
            grown.environment = {**grown.environment, "measurement": measurement}
    verdict = own_line(
        getattr(getattr(item, "obj", None), "__code__", None),
        judge(grown, budget, allow_unmeasured=allow_unmeasured),
    )
    checks = [{**result.to_dict(), "where": blamed_line(result, rootdir)} for result in verdict.results]
    return {
        "nodeid": item.nodeid,
        # "unmeasured": nothing failed, but a limit could not be measured and that was not allowed
        "status": "pass" if verdict.ok else "unmeasured" if verdict.unjudged else "fail",
        # the figure the rss limit judged (Peak.headline_bytes), as every report gives it
        "rss_bytes": grown.peak.headline_bytes,
        "tree_peak_bytes": profile.peak.resident_bytes,
        "start_bytes": start_tree,
        "wall_seconds": profile.wall_seconds,
        "cpu_seconds": profile.cpu.user_seconds + profile.cpu.system_seconds,
        "limits": {check["key"]: check["limit"] for check in checks},
        "checks": checks,
        "message": message(verdict, grown, start_tree, rootdir) if not verdict.ok else "",
    }


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    # the outermost wrapper (tryfirst): it sees the report after xfail and the like made it
    outcome = yield
    if call.when != "call":
        return
    record = item.stash.get(_RECORD, None)
    if record is None:
        return
    report: pytest.TestReport = outcome.get_result()
    setattr(report, _REPORT_ATTR, record)
    if record["status"] not in ("fail", "unmeasured"):
        return
    if report.passed and not hasattr(report, "wasxfail"):
        # the test ran to its end: the breach is its failure
        report.outcome = "failed"
        report.longrepr = record["message"]
    else:
        # the test's own failure (or xfail) stands; the breach goes beside it
        report.sections.append(("memgauge budget", record["message"]))


class _Session:
    """Per session, registered as a plugin of its own in ``pytest_configure``: no module-level
    state, so a pytest run in-process (pytester) or an xdist worker each get their own. Records
    arrive with the call reports, so under xdist they gather in the controller, which writes the
    summary and the JSON."""

    def __init__(self, config: pytest.Config, default: Budget | None, json_path: str | None) -> None:
        self.config = config
        self.default = default
        self.json_path = json_path
        self.rootdir = str(config.rootpath)
        self.allow_unmeasured = False
        self.records: list[dict[str, Any]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, _REPORT_ATTR, None)
        if report.when == "call" and isinstance(record, dict):
            self.records.append(record)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.records:
            return
        from memgauge._units import format_bytes, format_seconds
        from memgauge.gate import format_amount

        terminalreporter.section("memgauge: budgeted tests")
        failed = [r for r in self.records if r["status"] != "pass"]
        shown = failed + sorted(
            (r for r in self.records if r["status"] == "pass"), key=lambda r: -int(r["rss_bytes"])
        )
        rows = shown[: max(_SUMMARY_ROWS, len(failed))]
        terminalreporter.write_line(f"{'rss':>9}  {'wall':>8}  {'cpu':>8}  status  test")
        for r in rows:
            limits = " ".join(f"{c['key']}={format_amount(c['limit'], c['unit'])}" for c in r["checks"])
            terminalreporter.write_line(
                f"{format_bytes(r['rss_bytes']):>9}  {format_seconds(r['wall_seconds']):>8}  "
                f"{format_seconds(r['cpu_seconds']):>8}  {r['status'].upper():<6}  {r['nodeid']}  ({limits})"
            )
        if len(self.records) > len(rows):
            terminalreporter.write_line(
                f"... and {len(self.records) - len(rows)} more within budget (--memgauge-json lists all)"
            )
        terminalreporter.write_line(RSS_DEFINITION)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.json_path is None or hasattr(self.config, "workerinput"):
            return
        import json

        from memgauge._errors import OutputError
        from memgauge._files import write_output
        from memgauge._version import __version__
        from memgauge.model import BUDGETS

        data = BUDGETS.wrap({"memgauge_version": __version__, "rss": RSS_DEFINITION, "tests": self.records})
        try:
            write_output(self.json_path, json.dumps(data, indent=2) + "\n", "--memgauge-json")
        except OutputError as e:
            terminal = self.config.pluginmanager.get_plugin("terminalreporter")
            if terminal is not None:
                terminal.write_line(f"memgauge: {e.message}", red=True)
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_STATE, None)
    if session is not None:
        config.pluginmanager.unregister(session)
        del config.stash[_STATE]
