"""The reports of ``memgauge fit`` (with its remedies and prediction), ``memgauge plan`` and the
verdict of ``memgauge check``, each built once on the report document: the terminal's and
Markdown's text, the page's sections, the same words in every format, and each reached through
the formats' table (``cli/_formats.py``), Markdown included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgauge.analysis import PredictedStep, RemedyMeasure, build_plan, gpu_prediction, remedy_table
from memgauge.cli._formats import FORMATS, PAGE, Judged, Look, names, need
from memgauge.gate import judge, parse_budget
from memgauge.model import FitRecord, FitTrial, FitVerification, NonMonotonic, PlanRun
from memgauge.render import (
    HtmlFitRenderer,
    HtmlPlanRenderer,
    HtmlRemediesRenderer,
    JsonRemediesRenderer,
    MarkdownFitRenderer,
    MarkdownPlanRenderer,
    MarkdownPredictionRenderer,
    MarkdownRemediesRenderer,
    TerminalFitRenderer,
    TerminalPlanRenderer,
    TerminalPredictionRenderer,
    TerminalRemediesRenderer,
)
from tests.factories import MIB, make_profile, torch_run
from tests.unit.test_plan import spike


def fit_record() -> FitRecord:
    trials = [
        FitTrial(8, {"rss": 20 * MIB, "wall": 1.0}, True),
        FitTrial(64, {"rss": 70 * MIB, "wall": 2.0}, True, guided=True),
        FitTrial(80, {"rss": 96 * MIB, "wall": 2.5}, False, over=("rss",), guided=True),
        FitTrial(72, {"rss": 66 * MIB, "wall": 2.2}, True, guided=True),
        FitTrial(76, {}, False, error="exit 1"),
    ]
    verification = FitVerification(72, 95 * MIB, True, True, 0, 0, 3, 2.25, 94 * MIB, 93 * MIB, 2)
    return FitRecord(
        parameter="BATCH",
        value=72,
        runs=7,
        verified=True,
        command=["train.py", "--epochs", "1"],
        budget={"rss": 100 * MIB, "wall": 10.0},
        aims={"rss": 95 * MIB, "wall": 9.5},
        margin=0.05,
        low=1,
        high=None,
        reason="tolerance",
        trials=trials,
        verification=verification,
        laws={"rss": "linear: 12.0 MiB + 800 KiB x BATCH"},
        tolerance=0.1,
        start=8,
        start_from="the program's own value",
        non_monotonic=[NonMonotonic(72, 64, "rss", 66 * MIB, 70 * MIB)],
    )


# -- fit -------------------------------------------------------------------------------------------


def test_the_fit_terminal_report() -> None:
    assert TerminalFitRenderer().render(fit_record()) == (
        "memgauge fit: BATCH = 72  (BATCH=76 does not: within 10%)\n"
        "budget: rss <= 100 MiB, wall <= 10.00 s (searched within rss <= 95.0 MiB, wall <= 9.50 s: a 5%\n"
        "  margin)\n"
        "runs: 7 (5 search, 2 verification); started at 8 (the program's own value)\n"
        "verified under 95.0 MiB as a hard limit, caches cold: survived; cgroup peak 94.0 MiB\n"
        "  (unlimited 93.0 MiB), limit hit 3 times, wall 2.25 s\n"
        "law of container needs: linear: 12.0 MiB + 800 KiB x BATCH\n"
        "\n"
        "trials (by value)\n"
        "BATCH  container needs    wall  result\n"
        "    8         20.0 MiB  1.00 s  fits\n"
        "   64         70.0 MiB  2.00 s  fits\n"
        "   72         66.0 MiB  2.20 s  fits\n"
        "   76                —       —  failed: exit 1\n"
        "   80         96.0 MiB  2.50 s  over rss\n"
        "\n"
        "not monotonic (the search assumed a larger value never needs less)\n"
        "  BATCH=72: container needs 66.0 MiB, below 70.0 MiB at BATCH=64\n"
    )


def test_the_fit_markdown_report_says_the_same() -> None:
    assert MarkdownFitRenderer().render(fit_record()) == (
        "### memgauge fit: BATCH = 72  (BATCH=76 does not: within 10%)\n\n"
        "budget: rss \\<= 100 MiB, wall \\<= 10.00 s (searched within rss \\<= 95.0 MiB, wall \\<= 9.50 s: "
        "a 5% margin)\n\n"
        "runs: 7 (5 search, 2 verification); started at 8 (the program's own value)\n\n"
        "verified under 95.0 MiB as a hard limit, caches cold: survived; cgroup peak 94.0 MiB (unlimited "
        "93.0 MiB), limit hit 3 times, wall 2.25 s\n\n"
        "law of container needs: linear: 12.0 MiB + 800 KiB x BATCH\n\n"
        "**trials (by value)**\n\n"
        "| BATCH | container needs | wall | result |\n"
        "| ---: | ---: | ---: | :--- |\n"
        "| 8 | 20.0 MiB | 1.00 s | fits |\n"
        "| 64 | 70.0 MiB | 2.00 s | fits |\n"
        "| 72 | 66.0 MiB | 2.20 s | fits |\n"
        "| 76 | — | — | failed: exit 1 |\n"
        "| 80 | 96.0 MiB | 2.50 s | over rss |\n\n"
        "**not monotonic (the search assumed a larger value never needs less)**\n\n"
        "- BATCH=72: container needs 66.0 MiB, below 70.0 MiB at BATCH=64\n"
    )


def test_the_fit_page_holds_the_same_sections_around_its_charts() -> None:
    page = HtmlFitRenderer().render(fit_record())
    sections = re.findall(r'<section id="(\w+)"><h2>([^<]*)</h2>', page)
    assert sections == [
        ("answer", "BATCH = 72  (BATCH=76 does not: within 10%)"),
        ("curve", "The curve and the budget"),
        ("trials", "trials (by value)"),
        ("monotonic", "not monotonic (the search assumed a larger value never needs less)"),
    ]
    assert "<h1>memgauge fit <code>train.py --epochs 1</code></h1>" in page
    assert "<p>law of container needs: linear: 12.0 MiB + 800 KiB x BATCH</p>" in page
    assert '<canvas id="chart-fit-0">' in page and '<canvas id="chart-fit-1">' in page
    # a section repeats no title of its own: its table's, its heading's
    assert "<h3>trials (by value)</h3>" not in page and "<h3>not monotonic" not in page


def test_a_failed_verification_is_bad_and_nothing_fitting_says_so() -> None:
    record = fit_record()
    assert record.verification is not None
    record.verification = FitVerification(72, 95 * MIB, False, False, None, 1, 9, 2.0, 95 * MIB, 99 * MIB, 2)
    text = TerminalFitRenderer(color=True).render(record)
    assert "\x1b[1;31mNOT\x1b[0m \x1b[1;31mverified" in text and "\x1b[1;31mOOM-killed;" in text
    assert "**NOT verified under 95.0 MiB" in MarkdownFitRenderer().render(record)
    page = HtmlFitRenderer().render(record)
    assert '<p><span class="bad">NOT</span> <span class="bad">verified</span>' in page
    record.value, record.verification, record.non_monotonic = None, None, []
    for text in (TerminalFitRenderer().render(record), MarkdownFitRenderer().render(record)):
        assert "memgauge fit: no value of BATCH from 1 fits the budget" in text
        assert "not verified: nothing fits" in text and "not monotonic" not in text


def test_fit_and_the_verdict_have_a_markdown_format() -> None:
    assert names("fit") == ["terminal", "md", "json"]
    assert names("verdict") == ["terminal", "md", "json", "bmf"]
    record = fit_record()
    assert need(FORMATS["md"].fit, "md")(record, Look()) == MarkdownFitRenderer().render(record)
    assert need(FORMATS["terminal"].fit, "terminal")(record, Look(width=100)) == TerminalFitRenderer().render(
        record
    )
    assert need(PAGE.fit, "html")(record, Look()).startswith("<!DOCTYPE html>")
    profile = make_profile(rss=300 * MIB)
    judged = Judged(judge(profile, parse_budget("rss=200MiB")), [profile], "bench")
    md = need(FORMATS["md"].verdict, "md")(judged, Look())
    assert md.startswith(
        "| limit | budget | measured | margin | status |\n| :--- | ---: | ---: | ---: | :--- |\n"
    )
    assert "| rss | 200 MiB | 300 MiB | -100 MiB | FAIL |" in md and md.endswith(
        "**OVER BUDGET: 1 of 1 limit**\n"
    )
    terminal = need(FORMATS["terminal"].verdict, "terminal")(judged, Look())
    assert terminal.splitlines()[1].split() == ["rss", "200", "MiB", "300", "MiB", "-100", "MiB", "FAIL"]


# -- plan ------------------------------------------------------------------------------------------


def test_the_plan_reports_say_the_same_from_one_document() -> None:
    record = build_plan(
        [spike("a", 0.5), spike("b", 2.0), spike("c", 3.5)],
        machine_bytes=300 * MIB,
        machine_cores=2,
        trials=500,
    )
    record.runs.append(
        PlanRun(
            "given", 3, [0.0, 0.0, 0.0], 300 * MIB, True, 0, 0, 200 * MIB, 4.6, 1.02, [0, 0, 0], 230 * MIB
        )
    )
    text = TerminalPlanRenderer().render(record)
    lines = text.splitlines()
    title = "memgauge plan: 3 programs on 300 MiB, 2 cores: they do NOT fit by the worst case (390 MiB)"
    assert lines[0] == title
    assert lines[1] == "worst case, every need at once plus the kernel's 0 B per group: 390 MiB"
    members = lines.index("program    needs  peak at  runs for  every  from")
    assert lines[members - 1] == "" and lines[members + 1] == "a        130 MiB   500 ms    4.50 s      —  a"
    runs = lines.index("verified together under 300 MiB, caches cold")
    assert lines[runs + 2].split()[:5] == ["given", "3", "0,", "0,", "0"]
    md = MarkdownPlanRenderer().render(record)
    assert md.startswith(
        f"### {title}\n\n- worst case, every need at once plus the kernel's 0 B per group: 390 MiB\n"
    )
    # GFM tables: the delimiter rows are ones a renderer takes (they were "| l | r |")
    assert (
        "| program | needs | peak at | runs for | every | from |\n| :--- | ---: | ---: | ---: | ---: | :--- |"
        in md
    )
    assert "**verified together under 300 MiB, caches cold**" in md and "| given | 3 | 0, 0, 0 s |" in md
    page = HtmlPlanRenderer().render(record)
    assert f"<h1>{title}</h1>" in page
    assert re.findall(r'<section id="(\w+)"><h2>([^<]*)</h2>', page) == [
        ("answer", "The answer"),
        ("members", "Programs"),
        ("runs", "verified together under 300 MiB, caches cold"),
    ]
    # a narrow terminal: the statements wrap between words, the tables leave columns out
    narrow = TerminalPlanRenderer(width=60).render(record).splitlines()
    assert all(len(line) <= 60 for line in narrow[2:])
    assert "  aligned: 390 MiB" in narrow or any(line.endswith("390 MiB") for line in narrow[1:6])
    assert need(FORMATS["md"].plan, "md")(record, Look()) == md


# -- the remedies and the prediction ---------------------------------------------------------------


def test_every_remedies_renderer_shows_the_rows_and_the_reasons() -> None:
    profile = make_profile(rss=300 * MIB, torch=torch_run(100 * MIB, [1.0, 1.0], activations=60 * MIB))
    table = remedy_table(
        [
            RemedyMeasure("baseline", profile, batch=64),
            RemedyMeasure("autocast", profile, hooked=["autocast: Net.forward (cpu, bfloat16)"], batch=64),
            RemedyMeasure("offload", None, not_applied=["offload: <cpu> & why"]),
        ]
    )
    text = TerminalRemediesRenderer(width=200).render(table)
    assert (
        "offload (not applied)" in text
        and "offload: <cpu> & why" in text
        and "autocast: hooked Net.forward (cpu, bfloat16)" in text
    )
    assert "100 MiB" in text and "60.0 MiB" in text
    md = MarkdownRemediesRenderer().render(table)
    assert md.count("\n| ") == 5  # the header, its alignment row and three rows
    assert "- offload: \\<cpu\\> \\& why" in md
    html = HtmlRemediesRenderer().render(table)
    assert "&lt;cpu&gt; &amp; why" in html and "<cpu>" not in html
    assert (
        html.startswith('<section id="remedies"><h2>What each remedy buys')
        and '<table class="sortable remedies">' in html
    )
    data = json.loads(JsonRemediesRenderer().render(table))
    assert [r["name"] for r in data["rows"]] == ["baseline", "autocast", "offload"]
    assert data["rows"][1]["tensor_delta"] == 0.0


def test_a_narrow_terminal_keeps_each_remedys_name_and_its_changes() -> None:
    profile = make_profile(rss=300 * MIB, torch=torch_run(100 * MIB, [1.0, 1.0], activations=60 * MIB))
    half = make_profile(rss=250 * MIB, torch=torch_run(50 * MIB, [0.5, 0.5], activations=30 * MIB))
    table = remedy_table(
        [
            RemedyMeasure("baseline", profile, batch=64, half=half, half_batch=32),
            RemedyMeasure("autocast", profile, batch=64, half=half, half_batch=32),
            RemedyMeasure("checkpoint", None, not_applied=["checkpoint: the program does not use torch"]),
        ],
        budget_bytes=400 * MIB,
    )
    wide = TerminalRemediesRenderer(width=200).render(table).splitlines()[1]
    assert wide.split("  ")[0] == "remedy" and "gradients" in wide and "largest batch" in wide
    lines = TerminalRemediesRenderer(width=100).render(table).splitlines()
    assert lines[0] == "What each remedy buys (each a fresh run against the same baseline)"
    assert all(len(line) <= 100 for line in lines)
    header = lines[1].split()
    assert (
        "resident vs baseline" in lines[1] and "step vs baseline" in lines[1] and "largest batch" in lines[1]
    )
    assert "gradients" not in header and "activations" not in header
    assert lines[4].startswith("checkpoint (not applied)")


def test_a_figure_no_remedy_has_is_left_out() -> None:
    # a program without torch: no tensor peak, no roles, no step time in any row
    table = remedy_table(
        [
            RemedyMeasure("baseline", make_profile(rss=400 * MIB)),
            RemedyMeasure("dtypes", make_profile(rss=300 * MIB)),
        ]
    )
    header = TerminalRemediesRenderer(width=200).render(table).splitlines()[1]
    assert header == "remedy    resident peak  resident vs baseline"
    assert "| remedy | resident peak | resident vs baseline |" in MarkdownRemediesRenderer().render(table)
    assert "<th" in HtmlRemediesRenderer().render(
        table
    ) and "tensor peak" not in HtmlRemediesRenderer().render(table)


def test_a_tabular_row_shows_the_resident_change_and_says_the_roles_do_not_apply() -> None:
    table = remedy_table(
        [
            RemedyMeasure("baseline", make_profile(rss=400 * MIB)),
            RemedyMeasure(
                "dtypes",
                make_profile(rss=300 * MIB),
                hooked=["dtypes: read_csv(t.csv) x: float64 -> float32"],
            ),
            RemedyMeasure("checkpoint", None, not_applied=["checkpoint: the program does not use torch"]),
        ]
    )
    text = TerminalRemediesRenderer().render(table)
    assert "-25%" in text and "dtypes: hooked read_csv(t.csv) x: float64 -> float32" in text
    # a hook's note already names its remedy: said once
    assert "checkpoint: the program does not use torch" in text and "checkpoint: checkpoint:" not in text


def test_the_table_goes_into_the_fit_page_before_its_data(tmp_path: Path) -> None:
    from memgauge.cli.commands._fit_what_if import _add_to_page
    from memgauge.render import remedies_section

    page = tmp_path / "fit.html"
    page.write_text(HtmlFitRenderer().render(fit_record()))
    profile = make_profile(rss=300 * MIB, torch=torch_run(100 * MIB, [1.0, 1.0]))
    _add_to_page(str(page), remedies_section(remedy_table([RemedyMeasure("baseline", profile, batch=8)])))
    text = page.read_text()
    assert text.index('<section id="remedies">') < text.index(
        '<script type="application/json" id="memgauge-data">'
    )
    assert text.count('<section id="remedies">') == 1 and ">baseline</td>" in text


def test_the_prediction_in_the_terminal_and_in_markdown() -> None:
    roles = {"parameters": 10 * MIB, "optimizer_state": 20 * MIB, "activations": 64 * MIB}
    steps = [
        PredictedStep(64, 64 * MIB, max_by_role=roles, rounding_bytes=1024),
        PredictedStep(32, error="no prediction"),
    ]
    prediction = gpu_prediction(steps, 2048 * MIB)
    text = TerminalPredictionRenderer(width=100).render(prediction, "BATCH")
    lines = text.splitlines()
    assert lines[0] == "Predicted for a GPU of 2.0 GiB (fake tensors, no device)"
    assert lines[1] == "  BATCH=64: tensor peak 64.0 MiB, +1.0 KiB by the allocator's 512 B rounding"
    assert "  BATCH=32: no prediction" in lines and all(len(line) <= 100 for line in lines)
    md = MarkdownPredictionRenderer().render(prediction, "BATCH")
    assert md.startswith(
        "**Predicted for a GPU of 2.0 GiB (fake tensors, no device)**\n\n- BATCH=64: tensor peak"
    )
    assert "- BATCH=32: no prediction\n" in md


def test_the_what_if_follows_the_fit_report_after_a_blank_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from memgauge.cli.commands._fit_what_if import _append

    # on stdout, after the fit's report: a blank line first (in Markdown, a line straight under
    # the trials' table would be one of its rows); alone, none
    args = argparse.Namespace(output=None, json=None)
    _append(args, ["**What each remedy buys**\n"], {}, after=True)
    assert capsys.readouterr().out == "\n**What each remedy buys**\n"
    _append(args, ["**What each remedy buys**\n"], {}, after=False)
    assert capsys.readouterr().out == "**What each remedy buys**\n"
    # in -o's file: after the report written there; alone, what an earlier run left is replaced
    report = tmp_path / "fit.md"
    report.write_text("| 8 | fits |\n")
    args = argparse.Namespace(output=str(report), json=None)
    _append(args, ["- a note\n"], {}, after=True)
    assert report.read_text() == "| 8 | fits |\n\n- a note\n"
    _append(args, ["- a note\n"], {}, after=False)
    assert report.read_text() == "- a note\n"
