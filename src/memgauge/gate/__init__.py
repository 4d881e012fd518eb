"""The CI gate's core: budgets, the project's budget configuration, and verdicts over profiles.

Pure functions over :class:`~memgauge.Profile`, which ``memgauge check`` and the pytest plugin
both call:

- :func:`parse_budget` reads ``"rss=512MiB wall=60s fit.rss=300MiB"`` into a :class:`Budget`;
- :func:`load_config` finds ``memgauge.toml`` or ``[tool.memgauge]`` in ``pyproject.toml``, and
  :func:`resolve_budget` layers its budget, a policy and ``--budget`` flags;
- :func:`judge` (one profile), :func:`judge_runs` (medians of repeats) and :func:`judge_baseline`
  give a :class:`Verdict`, one :class:`CheckResult` per limit, with :class:`Blame` for a breach;
- :func:`result_line`, :func:`verdict_json` and :func:`bencher_bmf` render them (the verdict's
  table is the report document's: ``memgauge.render``'s verdict renderers);
- the one serialised form of a verdict, both ways: ``Verdict.to_dict`` / ``CheckResult.to_dict``
  (what ``verdict_json``, the pytest plugin's ``--memgauge-json`` and the service hold) and
  ``Verdict.from_dict`` / ``CheckResult.from_dict`` (typed records again, for a stored verdict);
- :func:`apply_proof` folds a budget's proof (a run under its ``rss`` as a hard limit) into a
  verdict, :func:`proved_limit` names the limit a proof runs under;
- :func:`format_amount` writes a limit's figure for people ("512 MiB", "1.50 s").

Layout: ``_budget`` (budgets), ``_config`` (the project's configuration), ``_records`` (the verdict's
records and their serialised form), ``_verdict`` (measuring and judging), ``_proof`` (a verdict
after its budget's proof), ``_render`` (the one line, JSON, BMF).

Importing it stays light: no rich, no TOML reader, no statistics until they are used.
"""

from __future__ import annotations

from memgauge.gate._budget import METRICS, Budget, BudgetError, Limit, format_amount, parse_budget
from memgauge.gate._config import ConfigError, GateConfig, load_config, resolve_budget
from memgauge.gate._proof import apply_proof, proved_limit
from memgauge.gate._records import FAIL, Blame, CheckResult, Verdict
from memgauge.gate._render import bencher_bmf, result_line, verdict_json
from memgauge.gate._verdict import judge, judge_baseline, judge_runs, measure

__all__ = [
    "FAIL",
    "METRICS",
    "Blame",
    "Budget",
    "BudgetError",
    "CheckResult",
    "ConfigError",
    "GateConfig",
    "Limit",
    "Verdict",
    "apply_proof",
    "bencher_bmf",
    "format_amount",
    "judge",
    "judge_baseline",
    "judge_runs",
    "load_config",
    "measure",
    "parse_budget",
    "proved_limit",
    "resolve_budget",
    "result_line",
    "verdict_json",
]
