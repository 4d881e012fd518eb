"""Budget parsing: every unit, bare numbers, case rules, every error with its caret, merging."""

from __future__ import annotations

import pytest

from memgauge._errors import UsageError
from memgauge._units import format_bytes, format_seconds, parse_bytes, parse_seconds
from memgauge.gate import METRICS, Budget, BudgetError, Limit, parse_budget

KIB, MIB, GIB, TIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40


# --- parse_bytes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4096", 4096),
        ("0", 0),
        ("12B", 12),
        ("1KB", 1000),
        ("1kB", 1000),
        ("1KiB", KIB),
        ("1MB", 1000**2),
        ("1MiB", MIB),
        ("1GB", 1000**3),
        ("1GiB", GIB),
        ("1TB", 1000**4),
        ("1TiB", TIB),
        ("512MiB", 512 * MIB),
        ("1.5GB", 1_500_000_000),
        ("1.1GB", 1_100_000_000),  # exact: not 1100000000.0000002
        ("300 KiB", 300 * KIB),
        ("  2 GiB  ", 2 * GIB),
        (".5KiB", 512),
        ("1e3KB", 1000**2),
        ("+5MiB", 5 * MIB),
        ("-0", 0),
    ],
)
def test_parse_bytes_units(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["2gib", "2GIB", "2Gib", "2gIB"])
def test_parse_bytes_units_are_case_insensitive(text: str) -> None:
    assert parse_bytes(text) == 2 * GIB


def test_parse_bytes_decimal_prefixes_are_powers_of_1000_in_any_case() -> None:
    assert parse_bytes("1mb") == parse_bytes("1MB") == parse_bytes("1Mb") == 1_000_000


def test_parse_bytes_rounds_half_up_to_whole_bytes() -> None:
    assert parse_bytes("1.5B") == 2
    assert parse_bytes("2.5B") == 3  # round() would give 2
    assert parse_bytes("0.1KiB") == 102  # 102.4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("abc", "not a number"),
        ("MiB", "not a number"),
        ("inf", "not a number"),
        ("nan", "not a number"),
        ("1.5.3MiB", "not a number"),
        ("1 2", "not a number"),
        ("512MX", "unknown unit 'MX'"),
        ("5 MiB 3", "unknown unit 'MiB 3'"),
        ("5s", "unknown unit 's'"),
        ("5M", "ambiguous unit 'M' (MB or MiB?)"),
        ("5k", "ambiguous unit 'k' (KB or KiB?)"),
        ("5g", "ambiguous unit 'g' (GB or GiB?)"),
        ("5T", "ambiguous unit 'T' (TB or TiB?)"),
        ("-5MiB", "negative"),
        ("-1", "negative"),
        ("1e99GiB", "out of range"),
        ("1e-40", "out of range"),
    ],
)
def test_parse_bytes_errors(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_bytes(text)
    assert str(e.value) == reason


@pytest.mark.parametrize("n", [0, 1, 999, 1023, 1024, 1536, 100 * KIB, 512 * MIB, 3 * GIB + 7, 2 * TIB])
def test_parse_bytes_reads_format_bytes_back(n: int) -> None:
    # format_bytes shows a tenth of its unit at least (1.0 KiB and up): within 5%, and printed alike
    back = parse_bytes(format_bytes(n))
    assert abs(back - n) <= 0.05 * n
    assert format_bytes(back) == format_bytes(n)


# --- parse_seconds -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30", 30.0),
        ("0", 0.0),
        ("2.5", 2.5),
        ("60s", 60.0),
        ("60 sec", 60.0),
        ("250ms", 0.25),
        ("500us", 0.0005),
        ("500\u00b5s", 0.0005),  # micro sign, as format_seconds writes it
        ("500\u03bcs", 0.0005),  # Greek mu
        ("10min", 600.0),
        ("1.5h", 5400.0),
        ("2 min 5 s", 125.0),
        ("1h30min", 5400.0),
        ("1h 30min 15s", 5415.0),
        ("60S", 60.0),
        ("250MS", 0.25),
        ("10Min", 600.0),
        ("2H", 7200.0),
    ],
)
def test_parse_seconds_units(text: str, expected: float) -> None:
    assert parse_seconds(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("soon", "not a number"),
        ("h", "not a number"),
        ("30 1h", "not a number"),
        ("5x", "unknown unit 'x'"),
        ("5GiB", "unknown unit 'GiB'"),
        ("5m", "ambiguous unit 'm' (min or ms?)"),
        ("1h 30", "a unit after every number of a compound (1h 30min)"),
        ("-1s", "negative"),
        ("1e99s", "out of range"),
    ],
)
def test_parse_seconds_errors(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_seconds(text)
    assert str(e.value) == reason


@pytest.mark.parametrize("s", [0.0, 0.0005, 0.25, 1.5, 59.0, 60.0, 125.0, 3599.0, 3600.0, 5400.0, 86400.0])
def test_parse_seconds_reads_format_seconds_back(s: float) -> None:
    assert parse_seconds(format_seconds(s)) == pytest.approx(s, rel=1e-9, abs=1e-9)


# --- parse_budget --------------------------------------------------------------------------------


def test_parse_budget_every_metric_and_a_phase() -> None:
    b = parse_budget("rss=512MiB gpu=2GiB wall=60s cpu=30s fit.rss=300MiB")
    assert b.limits == (
        Limit("rss", 512.0 * MIB, None, "rss=512MiB"),
        Limit("gpu", 2.0 * GIB, None, "gpu=2GiB"),
        Limit("wall", 60.0, None, "wall=60s"),
        Limit("cpu", 30.0, None, "cpu=30s"),
        Limit("rss", 300.0 * MIB, "fit", "fit.rss=300MiB"),
    )
    assert [limit.key for limit in b.limits] == ["rss", "gpu", "wall", "cpu", "fit.rss"]
    assert [limit.unit for limit in b.limits] == ["bytes", "bytes", "seconds", "seconds", "bytes"]
    assert b.policy is None
    assert set(METRICS) == {"rss", "gpu", "wall", "cpu", "disk", *KNOWN.split(", ")[5:]}


def test_parse_budget_separators_commas_spaces_tabs_newlines() -> None:
    expected = parse_budget("rss=1GiB wall=1min")
    specs = ["rss=1GiB,wall=1min", "rss=1GiB, wall=1min", " rss=1GiB\twall=1min ", "rss=1GiB\n,,wall=1min\n"]
    for spec in specs:
        assert [(x.metric, x.value) for x in parse_budget(spec)] == [(x.metric, x.value) for x in expected]


def test_parse_budget_bare_numbers_are_seconds_and_sizes_need_a_unit() -> None:
    b = parse_budget("rss=1048576B wall=90 cpu=1.5 disk=1GiB")
    assert [x.value for x in b] == [1048576.0, 90.0, 1.5, float(GIB)]
    # "rss=5" would be 5 bytes: refused, as "rss=5M" is (issue 17)
    for spec in ("rss=5", "gpu=1.5", "fit.rss=100", "disk=10"):
        assert "takes a size with a unit" in _error(spec).message


def test_parse_budget_phase_names_keep_their_dots_and_case() -> None:
    b = parse_budget("data.load.wall=5s Fit.RSS=1GiB v1.2.rss=1KiB")
    assert [(x.phase, x.metric) for x in b] == [("data.load", "wall"), ("Fit", "rss"), ("v1.2", "rss")]
    assert [x.key for x in b] == ["data.load.wall", "Fit.rss", "v1.2.rss"]


def test_parse_budget_metric_names_are_case_insensitive() -> None:
    assert [x.metric for x in parse_budget("RSS=1GiB Wall=1s CPU=2s")] == ["rss", "wall", "cpu"]


def test_parse_budget_of_several_specs_and_empty_ones() -> None:
    b = parse_budget(["rss=1GiB", "wall=1s fit.wall=500ms"])
    assert [x.key for x in b] == ["rss", "wall", "fit.wall"]
    assert not parse_budget("")
    assert not parse_budget([])
    assert not parse_budget(["", " , "])
    assert parse_budget("rss=1B") == Budget((Limit("rss", 1.0, None, "rss=1B"),))


def _error(spec: str | list[str], source: str = "--budget") -> BudgetError:
    with pytest.raises(BudgetError) as e:
        parse_budget(spec, source=source)
    assert e.value.exit_code == 64
    assert isinstance(e.value, UsageError)
    return e.value


def test_error_points_at_the_bad_token() -> None:
    e = _error("rss=512MX wall=60s")
    assert e.message == ("--budget: unknown unit 'MX' in 'rss=512MX'\n  rss=512MX wall=60s\n  ^^^^^^^^^")
    assert (e.token, e.spec, e.start) == ("rss=512MX", "rss=512MX wall=60s", 0)
    e = _error("wall=60s,  rss=512MX")
    assert e.message.splitlines() == [
        "--budget: unknown unit 'MX' in 'rss=512MX'",
        "  wall=60s,  rss=512MX",
        "             ^^^^^^^^^",
    ]
    assert e.start == 11


KNOWN = "rss, gpu, wall, cpu, disk, steps_per_s, samples_per_s, tokens_per_s, mfu, data_wait"


@pytest.mark.parametrize(
    ("spec", "reason", "token"),
    [
        ("rss512MiB", "missing '=' (a limit is metric=value, e.g. rss=512MiB)", "rss512MiB"),
        ("GiB", "a unit on its own (write a figure without spaces: rss=1.5GiB)", "GiB"),
        ("min", "a unit on its own (write a figure without spaces: rss=1.5GiB)", "min"),
        ("=5", f"missing metric before '=' ({KNOWN})", "=5"),
        ("fit.=5", f"missing metric before '=' ({KNOWN})", "fit.=5"),
        (".rss=5", "empty phase name before '.'", ".rss=5"),
        ("mem=1GiB", f"unknown metric 'mem' (known: {KNOWN})", "mem=1GiB"),
        ("fit.Mem=1GiB", f"unknown metric 'Mem' (known: {KNOWN})", "fit.Mem=1GiB"),
        ("rss=", "empty value", "rss="),
        ("rss=0B", "zero limit (a limit must be above zero)", "rss=0B"),
        ("wall=0ms", "zero limit (a limit must be above zero)", "wall=0ms"),
        ("rss=0.4B", "zero limit (a limit must be above zero)", "rss=0.4B"),
        ("rss=-1GiB", "negative limit (a limit must be above zero)", "rss=-1GiB"),
        ("cpu=-2s", "negative limit (a limit must be above zero)", "cpu=-2s"),
        ("rss=lots", "not a number", "rss=lots"),
        ("rss=5M", "ambiguous unit 'M' (MB or MiB?)", "rss=5M"),
        ("wall=5m", "ambiguous unit 'm' (min or ms?)", "wall=5m"),
        ("rss=60s", "rss takes a size (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)", "rss=60s"),
        ("gpu=1min", "gpu takes a size (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)", "gpu=1min"),
        ("fit.rss=2h", "rss takes a size (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)", "fit.rss=2h"),
        ("wall=1GiB", "wall takes a duration (s, ms, min, h)", "wall=1GiB"),
        ("cpu=10MB", "cpu takes a duration (s, ms, min, h)", "cpu=10MB"),
        ("rss=1e99GiB", "out of range", "rss=1e99GiB"),
    ],
)
def test_every_error_names_its_token(spec: str, reason: str, token: str) -> None:
    e = _error(f"wall=1s {spec} cpu=9s" if not spec.startswith(("wall=", "cpu=")) else f"rss=1GiB {spec}")
    first, shown, carets = e.message.splitlines()
    assert first == f"--budget: {reason} in '{token}'"
    assert e.token == token
    # the caret line sits under the token, as long as it
    assert carets == "  " + " " * shown[2:].index(token) + "^" * len(token)


def test_the_same_key_twice_points_at_the_second() -> None:
    e = _error("rss=1GiB wall=1s RSS=2GiB")
    assert e.message.splitlines() == [
        "--budget: rss is given twice (first as 'rss=1GiB') in 'RSS=2GiB'",
        "  rss=1GiB wall=1s RSS=2GiB",
        "                   ^^^^^^^^",
    ]
    e = _error("fit.rss=1GiB fit.rss=2GiB")
    assert e.message.splitlines()[0] == (
        "--budget: fit.rss is given twice (first as 'fit.rss=1GiB') in 'fit.rss=2GiB'"
    )
    # a phase limit and the whole-run limit are different keys
    assert len(parse_budget("rss=1GiB fit.rss=1GiB")) == 2


def test_the_same_key_across_specs_points_into_the_second_spec() -> None:
    e = _error(["rss=1GiB", "wall=1s rss=2GiB"])
    assert e.message.splitlines() == [
        "--budget: rss is given twice (first as 'rss=1GiB') in 'rss=2GiB'",
        "  wall=1s rss=2GiB",
        "          ^^^^^^^^",
    ]
    assert e.spec == "wall=1s rss=2GiB"


def test_a_multi_line_spec_shows_the_line_of_the_token() -> None:
    e = _error("rss=1GiB\n\twall=1s\n    fit.rss=5X  cpu=1s\n", source="memgauge.toml: budget")
    assert e.message.splitlines() == [
        "memgauge.toml: budget: unknown unit 'X' in 'fit.rss=5X'",
        "  fit.rss=5X  cpu=1s",
        "  ^^^^^^^^^^",
    ]
    e = _error("rss=1GiB\twall=1x")
    assert e.message.splitlines()[1:] == ["  rss=1GiB wall=1x", "           ^^^^^^^"]


def test_carets_count_terminal_columns_of_wide_characters() -> None:
    e = _error("訓練.rss=1GiB 推論.wall=5X")
    assert e.message.splitlines()[1:] == [
        "  訓練.rss=1GiB 推論.wall=5X",
        "                ^^^^^^^^^^^^",
    ]


# --- Budget --------------------------------------------------------------------------------------


def test_budget_truthiness_len_get() -> None:
    assert not Budget()
    b = parse_budget("rss=1GiB fit.wall=2s")
    assert b
    assert len(b) == 2
    assert b.get("fit.wall") == Limit("wall", 2.0, "fit", "fit.wall=2s")
    assert b.get("wall") is None


def test_merged_replaces_same_keys_in_place_and_appends_new_ones() -> None:
    base = Budget(parse_budget("rss=1GiB wall=60s fit.rss=500MiB").limits, policy="base")
    over = parse_budget("fit.rss=300MiB cpu=10s rss=2GiB")
    merged = base.merged(over)
    assert [x.text for x in merged] == ["rss=2GiB", "wall=60s", "fit.rss=300MiB", "cpu=10s"]
    assert merged.policy == "base"  # over names none
    assert base.merged(Budget(policy="edge")).policy == "edge"
    assert Budget().merged(base) == base
    assert base.merged(Budget()) == base
    # the originals are untouched (frozen)
    assert [x.text for x in base] == ["rss=1GiB", "wall=60s", "fit.rss=500MiB"]


def test_limit_key_and_with_policy() -> None:
    assert Limit("rss", 1.0).key == "rss"
    assert Limit("wall", 1.0, "a.b").key == "a.b.wall"
    assert parse_budget("rss=1B").with_policy("p").policy == "p"
