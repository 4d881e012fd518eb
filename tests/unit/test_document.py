"""The report document (issue 32): a section is built once and every format renders it from the
one registry; a section with nothing to say is in no format."""

from __future__ import annotations

import html

import pytest

from memgauge.model import Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.render._document import (
    Column,
    Finding,
    Heading,
    Items,
    Line,
    Paragraph,
    Section,
    Span,
    Sparkline,
    Table,
    TableCell,
)
from memgauge.render._document_registry import Registry
from memgauge.render._sections import SECTIONS
from memgauge.sections.training import Training, TrainingProcess
from tests.factories import MIB, held, make_profile


def _toy(profile: Profile) -> Section | None:
    if not profile.command:
        return None
    table = Table("toy figures", (Column("name", "name"), Column("value")), (("answer", "42 MiB"),))
    return Section("toy section", (table, Paragraph("the toy says so", "strong"), Items(("a note",))))


def _formats(profile: Profile) -> dict[str, str]:
    return {
        "terminal": TerminalRenderer(width=100).render(profile),
        "markdown": MarkdownRenderer().render(profile),
        "html": html.unescape(HtmlRenderer().render(profile)),
    }


def test_a_registered_section_appears_in_every_format_without_touching_the_renderers() -> None:
    profile = make_profile()
    before = _formats(profile)
    with SECTIONS.extra("toy", "toy", _toy):
        after = _formats(profile)
    for name, out in after.items():
        assert "toy figures" in out and "42 MiB" in out and "the toy says so" in out, name
        assert "a note" in out and "toy" not in before[name], name
    assert "**the toy says so**" in after["markdown"] and "| name | value |" in after["markdown"]
    assert '<section id="toy"><h2>toy section</h2>' in after["html"]
    assert '<a href="#toy">toy</a>' in after["html"]
    assert _formats(profile) == before  # gone with its block


def test_a_section_with_nothing_to_say_is_in_no_format() -> None:
    profile = make_profile()
    with SECTIONS.extra("toy", "toy", _toy):
        profile.command = []
        outs = _formats(profile)
    assert all("toy" not in out for out in outs.values())


def test_a_run_without_a_training_loop_has_no_training_section() -> None:
    # a program with processes and I/O but no step: no "bound by unknown", no "steps 0", no
    # "processes of the loop", no chart areas
    profile = make_profile()
    profile.training = Training(
        steps=0, processes=[TrainingProcess(pid=41, role="main loop", command="python x.py", cpu_seconds=1.0)]
    )
    for name, out in _formats(profile).items():
        assert "training throughput" not in out and "processes of the loop" not in out, name
        assert 'id="chart-training' not in out, name  # the page's script names them all


def test_the_processes_of_the_loop_have_their_heading_in_every_format() -> None:
    profile = make_profile()
    process = TrainingProcess(pid=41, role="main loop", command="python x.py", cpu_seconds=2.0, cpu_share=0.5)
    profile.training = Training(steps=12, steps_per_second=3.0, bound="compute", processes=[process])
    title = "processes of the loop (CPU share of each one's lifetime; bytes read and written)"
    for name, out in _formats(profile).items():
        assert title in out and "training throughput: bound by compute" in out, name


def test_two_sections_may_not_share_an_id_and_a_row_must_fill_its_columns() -> None:
    registry = Registry()
    registry.register("a", None, _toy)
    with pytest.raises(ValueError, match="two sections"):
        registry.register("a", None, _toy)
    with pytest.raises(ValueError, match="a row of 1 cells under 2 columns"):
        Table("t", (Column("a"), Column("b")), (("x",),))


def test_inherited_rows_say_they_are_shared_with_the_parent_in_every_format() -> None:
    # a Pool's forked workers each show their parent's 174 MiB as <inherited>: the rows summed to
    # 650 MiB against a 302 MiB peak with no word that those pages are shared
    rows = [held("<inherited>", 0, 174 * MIB, pid=pid) for pid in (42, 43)]
    profile = make_profile(rss=302 * MIB, attribution=[held("/w/x.py", 5, 170 * MIB), *rows])
    words = "2 forked processes hold 348 MiB of their parent's memory at fork, pages shared with it"
    for name, out in _formats(profile).items():
        assert words in " ".join(out.split()), name
        assert "the rows sum to 518 MiB against a peak of 302 MiB" in " ".join(out.split()), name
    assert "forked" not in _formats(make_profile(attribution=[held("/w/x.py", 5, 170 * MIB)]))["terminal"]


def _tree(profile: Profile) -> Section | None:
    cells = (
        ("outer", "1 s", "a long remark"),
        ("inner", "2 s", "  another remark  "),
        ("deepest", "3 s", ""),
    )
    columns = (
        Column("step", "rest", least=6, keep=True),
        Column("time"),
        Column("why", "rest", dim=True, clip=8),
    )
    return Section("tree", (Table("steps", columns, cells, depths=(0, 1, 2)),))


def test_a_tree_table_is_nested_and_a_clipped_column_is_cut_where_no_width_is_fitted() -> None:
    profile = make_profile()
    with SECTIONS.extra("tree", None, _tree):
        out = _formats(profile)
    terminal = out["terminal"].splitlines()
    assert any(line.startswith("outer ") for line in terminal)
    assert any(line.startswith("  inner ") for line in terminal)
    assert any(line.startswith("    deepest ") for line in terminal)
    assert "a long remark" in out["terminal"]  # the terminal has the width: its layout cuts
    # Markdown: nesting by non-breaking spaces and an arrow; the remark stripped and cut to 8
    assert "| outer | 1 s | a long … |" in out["markdown"]
    assert "| ↳ inner | 2 s | another… |" in out["markdown"]
    assert "| &nbsp;&nbsp;&nbsp;&nbsp;↳ deepest | 3 s |  |" in out["markdown"]
    assert "\u00a0\u00a0inner" in out["html"] and "\u00a0\u00a0\u00a0\u00a0deepest" in out["html"]
    with pytest.raises(ValueError, match="2 depths for 3 rows"):
        Table("t", columns=(Column("a"),), rows=(("x",), ("y",), ("z",)), depths=(0, 1))


def _advice_like(profile: Profile) -> Section | None:
    finding = Finding(
        "a big copy",
        where="x.py:7",
        figures=(("held", "120 MiB"), ("share", "13%")),
        detail="copy less",
        kind="copy",
    )
    return Section("hints", (Heading("hints"), finding, Heading("more")), note="why these")


def test_a_heading_and_a_finding_have_their_form_in_every_format() -> None:
    with SECTIONS.extra("hints", "hints", _advice_like):
        out = _formats(make_profile())
    assert "hints\n- a big copy at x.py:7\n  held 120 MiB · share 13%\n  copy less\nmore\n" in out["terminal"]
    markdown = (
        "**hints**\n\n- **a big copy** at `x.py:7`\n\n  held 120 MiB · share 13%\n\n  copy less\n\n**more**"
    )
    assert markdown in out["markdown"]
    # the page: the heading that repeats the section's is left out, the other is a sub-heading
    page = out["html"]
    assert '<section id="hints"><h2>hints</h2><p class="note">why these</p><div class="advice"' in page
    assert "<h3>a big copy <code>x.py:7</code></h3>" in page and "<h3>more</h3>" in page
    assert "<tr><th>held</th><td>120 MiB</td></tr>" in page and "<p>copy less</p>" in page


def test_a_figure_keeps_a_fixed_width_and_an_absent_cell_is_words_not_code() -> None:
    columns = (Column("n", width=6), Column("what", role="rest", keep=True, code=True, absent="(none)"))

    def fixed(profile: Profile) -> Section:
        return Section("fixed", (Table("fixed", columns, (("1", "run x"), ("2", "(none)"))),))

    with SECTIONS.extra("fixed", None, fixed):
        out = _formats(make_profile())
    assert "     n  what  \n     1  run x \n     2  (none)\n" in out["terminal"]
    assert "| 1 | `run x` |\n| 2 | (none) |" in out["markdown"]
    assert '<code title="run x">run x</code>' in out["html"] and '<code title="(none)">' not in out["html"]


def _figures(profile: Profile) -> Section:
    head = (Span("needs ", "strong"), Span("1.0 GiB", "figure"))
    return Section(
        "figures",
        (
            Heading("report", code="run x", level=3),
            Line((head, (Span("(sampled)"),), (Span("exit 1", "bad"), Span(" ·")), (Span("a.py", "code"),))),
            Line(
                ((Span("by cgroup,", "dim"),), (Span("page cache included", "dim"),)), lead="  ", joined=True
            ),
            Line(
                ((Span("part one,", "dim"),), (Span("part two", "dim"),)), lead="  ", indent="    ", item=True
            ),
            Line(((Span("part three", "dim"),),), lead="  ", item=True),
            Sparkline("memory", (0.0, 1.0, 4.0, 2.0), "0 to 4 B over 1 s"),
        ),
    )


def test_lines_of_figures_break_between_their_parts_and_join_where_there_is_no_width() -> None:
    with SECTIONS.extra("figures", None, _figures):
        wide = _formats(make_profile())
        narrow = TerminalRenderer(width=20).render(make_profile())
    assert (
        "report run x\nneeds 1.0 GiB (sampled) exit 1 · a.py\n  by cgroup, page cache included\n"
        in wide["terminal"]
    )
    assert "  part one, part two\n  part three\nmemory  ▂█▄  0 to 4 B over 1 s\n" in wide["terminal"]
    # too narrow for a line: broken between parts, never inside one, the next lines indented
    assert "needs 1.0 GiB\n  (sampled) exit 1 ·\n  a.py\n" in narrow
    markdown = wide["markdown"]
    assert (
        "### report `run x`\n\n**needs 1.0 GiB** (sampled) **exit 1** · `a.py`"
        " · by cgroup, page cache included" in markdown
    )
    assert "\n\n- part one, part two\n- part three\n\nmemory `  ▂█▄ ` 0 to 4 B over 1 s" in markdown
    assert "<h3>report <code>run x</code></h3>" in wide["html"] and "<strong>1.0 GiB</strong>" in wide["html"]


def _toned(profile: Profile) -> Section:
    columns = (Column("[b]size", "words"), Column("peak"), Column("spread"), Column("note", "words"))
    table = Table(
        "",
        columns,
        (("small", "1.0 GiB", "0.9-1.1 GiB", "fits"), ("large", "4.0 GiB", "3.9-4.1 GiB", "")),
        optional=("spread",),
        tones=(("", "strong", "", "good"), ("", "bad", "dim", "warn")),
    )
    program = Paragraph("  run 2 (exit 1): MemoryError: a long line the program printed", "bad", cut=True)
    return Section("toned", (table, program))


def test_a_cell_has_its_tone_in_every_format_and_a_quoted_line_is_cut_at_the_width() -> None:
    with SECTIONS.extra("toned", None, _toned):
        wide = _formats(make_profile())
        narrow = TerminalRenderer(width=30).render(make_profile())
        coloured = TerminalRenderer(width=100, color=True).render(make_profile())
    # a header is never markup, and an empty cell keeps no mark of its tone
    assert "[b]size     peak       spread  note\n" in wide["terminal"]
    assert "| small | **1.0 GiB** | 0.9-1.1 GiB | fits |" in wide["markdown"]
    assert "| large | **4.0 GiB** | 0.9" not in wide["markdown"]
    assert '<td class="num" data-v="1.0 GiB"><b>1.0 GiB</b></td>' in wide["html"]
    assert (
        '<span class="good">fits</span>' in wide["html"]
        and '<span class="na">3.9-4.1 GiB</span>' in wide["html"]
    )
    assert "\x1b[1m1.0 GiB" in coloured and "\x1b[32mfits" in coloured and "\x1b[2m3.9-4.1 GiB" in coloured
    # the quoted line: whole where there is no width, one line cut with an ellipsis on the terminal
    assert "MemoryError: a long line the program printed" in wide["markdown"]
    assert "  run 2 (exit 1): MemoryError…\n" in narrow


def _phases_wide(profile: Profile) -> Section:
    names = ("load", "fit", "save")
    columns = (Column("N"), *(Column(f"{n} peak / time", short=n) for n in names))
    row = ("1000", *("40.0 MiB / 200 ms" for _ in names))
    table = Table(
        "", columns, (row,), optional=("save peak / time", "fit peak / time"), left_out="left out here"
    )
    return Section("wide", (table,))


def test_the_terminal_says_which_columns_it_left_out_where_asked() -> None:
    with SECTIONS.extra("wide", None, _phases_wide):
        wide = TerminalRenderer(width=100).render(make_profile())
        narrow = TerminalRenderer(width=30).render(make_profile())
        markdown = MarkdownRenderer().render(make_profile())
    assert "save peak / time" in wide and "left out here" not in wide
    assert "   N   load peak / time\n1000  40.0 MiB / 200 ms\n  left out here: fit, save\n" in narrow
    assert "left out" not in markdown and "| save peak / time |" in markdown


def _second_chance(profile: Profile) -> Section:
    columns = (Column("name", "words"), Column("wide figure"), Column("b"))
    rows = (("x", "1,234,567,890,123", "2"),)
    return Section("chance", (Table("", columns, rows, optional=("b", "wide figure"), second_chance=True),))


def test_a_second_chance_takes_back_a_column_a_later_one_made_room_for() -> None:
    with SECTIONS.extra("chance", None, _second_chance):
        narrow = TerminalRenderer(width=20).render(make_profile())
    # "b" went first, then "wide figure" too; without it, "b" fits again and is taken back
    assert "name  b\nx     2\n" in narrow


def test_a_tone_for_each_cell_or_none() -> None:
    with pytest.raises(ValueError, match="a tone for each cell"):
        Table("", (Column("a"), Column("b")), (("1", "2"),), tones=(("",),))


# -- the comparison's blocks (``memgauge compare``) ------------------------------------------------


def _compare_formats(section: Section, width: int = 100) -> dict[str, str]:
    import io

    from memgauge.render._document_html import section_part
    from memgauge.render._document_markdown import section_blocks
    from memgauge.render._document_terminal import print_section
    from memgauge.render._layout import console

    buf = io.StringIO()
    print_section(console(buf, width, False), section, width)
    markdown = "\n\n".join("\n".join(b) for b in section_blocks(section))
    return {"terminal": buf.getvalue(), "markdown": markdown, "html": section_part(section).content}


def _runs_side_by_side() -> Section:
    from memgauge.render._document import Breaks, Change, Compared, Only, Runs

    worse = Change("300 MiB", "+100 MiB", "1.50x", "bad", 300.0)
    rows = ((("peak",), (Change("200 MiB", sort=200.0), worse)), (("wall",), (Change("1 s"), Change("—"))))
    return Section(
        "side by side",
        (
            Only(("markdown",), (Heading("Only in Markdown", level=3),)),
            Only(("terminal", "html"), (Paragraph("not in Markdown"),)),
            Runs(("a", "b"), (("exit 0", "good"), ("killed", "bad")), ("python a.py", "python b.py")),
            Compared("figures (—: none)", (Column("figure", "label"),), ("a", "b"), rows),
            Breaks(("first", "second"), "warn", "note: ", quote=True),
        ),
    )


def test_a_block_for_some_formats_is_in_those_only() -> None:
    shown = _compare_formats(_runs_side_by_side())
    assert "### Only in Markdown" in shown["markdown"]
    assert "Only in Markdown" not in shown["terminal"] + shown["html"]
    assert "not in Markdown" in shown["terminal"] and "<p>not in Markdown</p>" in shown["html"]
    assert "not in Markdown" not in shown["markdown"]


def test_runs_side_by_side_have_their_changes_in_every_format() -> None:
    shown = _compare_formats(_runs_side_by_side())
    # the terminal: a delta and a ratio column per later run, a missing change as "—"
    assert "figures (—: none)" in shown["terminal"]
    assert "peak    200 MiB  300 MiB  +100 MiB  1.50x" in shown["terminal"]
    assert "wall        1 s        —         —      —" in shown["terminal"]
    assert (
        "  a  exit 0  python a.py" in shown["terminal"] and "note: first\nnote: second" in shown["terminal"]
    )
    # Markdown: each later run's delta and ratio named after it; a paragraph of lines, quoted
    assert "| figure | a | b | Δ b | ratio b |" in shown["markdown"]
    assert "| peak | 200 MiB | 300 MiB | +100 MiB | 1.50x |" in shown["markdown"]
    assert "| a (baseline) | exit 0 | `python a.py` |" in shown["markdown"]
    assert "> note: first  \n> note: second" in shown["markdown"]
    # the page: the change under its figure, sorted by the figure; the runs a column each
    assert (
        '<td class="num" data-v="300.0">300 MiB<br><small class="bad">+100 MiB · 1.50x</small></td>'
        in (shown["html"])
    )
    assert '<th class="txt">a</th><th class="txt">b</th>' in shown["html"]
    assert "<li>first</li><li>second</li>" in shown["html"] and "note:" not in shown["html"]


def test_a_narrow_terminal_leaves_out_the_ratios_then_the_deltas() -> None:
    from memgauge.render._document import Change, Compared

    runs = ("base", "second", "third")
    row = (
        Change("100 MiB"),
        Change("200 MiB", "+100 MiB", "2.00x"),
        Change("50.0 MiB", "-50.0 MiB", "0.50x"),
    )
    table = Compared("", (Column("figure", "label"),), runs, ((("resident peak",), row),))
    wide = _compare_formats(Section("", (table,)), 100)["terminal"]
    assert "ratio" in wide and "Δ" in wide
    narrow = _compare_formats(Section("", (table,)), 62)["terminal"]
    assert "ratio" not in narrow and narrow.count("Δ") == 2 and "+100 MiB" in narrow
    narrower = _compare_formats(Section("", (table,)), 58)["terminal"]
    assert narrower.count("Δ") == 1 and "+100 MiB" not in narrower and "-50.0 MiB" in narrower
    assert max(len(line) for line in narrower.splitlines()) <= 58


def test_a_whole_report_renders_its_title_and_sections_in_every_format() -> None:
    from memgauge.render._document_report import Report, markdown_text, page_sections, sentence, terminal_text

    # a sentence breaks between its words, never after a number or an operator, nor before one
    budget = sentence("budget: rss <= 100 MiB, wall <= 1 min 0 s (a 5% margin)", "bad")
    words = [part[0].text for part in budget.parts]
    assert words == ["budget:", "rss <= 100 MiB,", "wall <= 1 min 0 s", "(a 5%", "margin)"]
    table = Table("trials", (Column("N"), Column("result", role="words")), (("8", "fits"),))
    report = Report(
        Heading("memgauge toy: N = 8", level=3),
        (("answer", Section("N = 8", (budget,))), ("trials", Section("trials", (table,)))),
    )
    # the title over the first section, a blank line between sections, the next lines indented
    assert terminal_text(report, width=24) == (
        "memgauge toy: N = 8\nbudget: rss <= 100 MiB,\n  wall <= 1 min 0 s\n  (a 5% margin)\n\n"
        "trials\nN  result\n8  fits\n"
    )
    # one bold run for a bold line of many parts, not a run per word
    assert markdown_text(report) == (
        "### memgauge toy: N = 8\n\n**budget: rss \\<= 100 MiB, wall \\<= 1 min 0 s (a 5% margin)**\n\n"
        "**trials**\n\n| N | result |\n| ---: | :--- |\n| 8 | fits |\n"
    )
    # the page: each section under its anchor and heading, a table's title left out where it
    # repeats the heading; the title is the page's frame's, not a section's
    page = page_sections(report.sections)
    assert page.startswith('<section id="answer"><h2>N = 8</h2><p><span class="bad">budget:</span> ')
    assert '<section id="trials"><h2>trials</h2><table class="sortable ">' in page
    assert "<h3>" not in page and "memgauge toy" not in page


# -- the profile report's blocks ------------------------------------------------------------------


def _sums() -> Section:
    from memgauge.render._document import Notes, Span, Sum, Sums

    terms = ((Span("peak "), Span("600 MiB", "figure")), (Span("= base 30 MiB"),), (Span("+ heap 570 MiB"),))
    second = ((Span("peak 9 MiB"),), (Span("= base 9 MiB"),))
    return Section("", (Sums((Sum(terms, ("pages never written",)), Sum(second))), Notes(("one", "two"))))


def test_a_sum_keeps_its_terms_whole_under_its_equals_and_notes_are_cautions_in_every_format() -> None:
    wide = _compare_formats(_sums(), 100)
    assert "  peak 600 MiB = base 30 MiB + heap 570 MiB\n    pages never written\n" in wide["terminal"]
    assert "note: one\nnote: two" in wide["terminal"]
    # too narrow for one line: the figure and its first part, then the rest under the '='
    narrow = _compare_formats(_sums(), 30)["terminal"]
    assert "  peak 600 MiB = base 30 MiB\n               + heap 570 MiB\n" in narrow
    # Markdown: the sums one list, their notes under their items; the notes a paragraph each
    md = wide["markdown"]
    assert "- peak 600 MiB = base 30 MiB + heap 570 MiB\n  - pages never written\n- peak 9 MiB" in md
    assert "> note: one\n>\n> note: two" in md
    # the page: a paragraph each, the figure in bold; the notes a list
    assert '<p class="reconcile">peak <b>600 MiB</b> = base 30 MiB + heap 570 MiB</p>' in wide["html"]
    assert "<li>pages never written</li>" in wide["html"] and "<li>one</li><li>two</li>" in wide["html"]


def test_cards_open_the_page_and_the_text_reports_leave_them_out() -> None:
    from memgauge.render._document import Card, Cards

    section = Section("", (Cards((Card("peak", "1 GiB", "exact", "peak"), Card("wall", "2 s"))),))
    shown = _compare_formats(section)
    assert shown["terminal"] == "" and shown["markdown"] == ""
    assert (
        '<div class="cards"><div class="card peak"><div class="label">peak</div>'
        '<div class="value">1 GiB</div><div class="sub">exact</div></div>'
    ) in shown["html"]
    assert '<div class="card "><div class="label">wall</div>' in shown["html"]


def test_the_page_sorts_a_cell_by_its_key_and_a_missing_one_by_nothing() -> None:
    keyed = Table("t", (Column("n"), Column("peak")), (("1", "2 MiB"), ("—", "1 MiB")))
    keyed = Table(keyed.title, keyed.columns, keyed.rows, sorts=(("1", 2 * MIB), (None, MIB)))
    shown = _compare_formats(Section("", (keyed,)))
    assert '<td class="num" data-v="2097152">2 MiB</td>' in shown["html"]
    assert '<td class="num">—</td>' in shown["html"]
    assert "2 MiB" in shown["terminal"] and "| 1 | 2 MiB |" in shown["markdown"]
    with pytest.raises(ValueError, match="sort key"):
        Table("t", (Column("n"),), (("1",),), sorts=((),))


def test_the_page_draws_a_cells_form_and_the_text_reports_its_text() -> None:
    from memgauge.render._document_forms import Heat, Indent, Split, Stack

    columns = (Column("phase", role="rest"), Column("time"), Column("split"), Column("line", code=True))
    forms = (
        Indent(2, "(unfinished)"),
        Heat(-1.0, 4.0, negative=True),
        Split(3.0, 1.0, 0.0),
        Stack(("a.py:1", "b.py:2")),
    )
    table = Table("t", columns, (("load", "-1 s", "75% / 25% / 0%", "x.py:3"),), forms=(forms,))
    shown = _compare_formats(Section("", (table,)))
    page = shown["html"]
    assert '<span class="indent" style="--depth:2"></span>load <em class="bad">(unfinished)</em>' in page
    assert '<div class="heat neg"><span style="width:25.0%"></span><em>-1 s</em></div>' in page
    assert '<span class="py" style="width:75.0%" title="Python 75%"></span>' in page
    assert '<span class="nat" style="width:25.0%"' in page and 'class="wait"' not in page
    assert "</div><small>75% / 25% / 0%</small>" in page
    assert (
        '<details><summary><code title="x.py:3">x.py:3</code></summary><ol class=stack>'
        "<li><code>a.py:1</code></li><li><code>b.py:2</code></li></ol></details>"
    ) in page
    for text in (shown["terminal"], shown["markdown"]):
        assert "load" in text and "-1 s" in text and "75% / 25% / 0%" in text and "x.py:3" in text
        assert "unfinished" not in text and "a.py:1" not in text
    # a cell with no form, and a split of no time, is drawn as it is: nothing for no time
    plain = Table("t", (Column("a"), Column("b")), (("1", ""),), forms=((None, Split(0.0, 0.0, 0.0)),))
    assert (
        '<td class="num" data-v="1">1</td><td class="num" data-v=""></td>'
        in _compare_formats(Section("", (plain,)))["html"]
    )
    with pytest.raises(ValueError, match="a form for each cell"):
        Table("t", (Column("n"),), (("1",),), forms=((),))


# -- the page's own parts (the sweep's page) ----------------------------------------------------------


def _page_and_text() -> Section:
    columns = (
        Column("size", "words"),
        Column("fit", page=Column("formula", "words", code=True, absent="—")),
        Column("peak / time", formats=("terminal", "markdown")),
        Column("peak", formats=("html",)),
        Column("note", "words"),
        Column("empty", "words"),
    )
    rows = (
        (
            TableCell("small", sort=1.0),
            TableCell("1 + 2·N"),
            TableCell("1.0 MiB / 2 s"),
            TableCell("1.0 MiB", sort=1048576),
            TableCell("binding; why", "warn", "why", (("binding", "strong"), ("; why", ""))),
            TableCell(""),
        ),
        (
            TableCell("large", sort=2.0),
            TableCell("too few runs", "dim", None, (("—", "dim"),)),
            TableCell("—"),
            TableCell("—", sort=None, page=(("—", "dim"),)),
            TableCell("OVER", "alarm"),
            TableCell(""),
        ),
    )
    table = Table("", columns, (), optional=("fit",), cells=rows, drop_empty=True)
    return Section(
        "page and text", (table, Table("", (Column("exit", "words"),), (), cells=((TableCell("ok", "ok"),),)))
    )


def test_a_column_may_be_one_formats_alone_and_the_page_may_set_it_its_own_way() -> None:
    shown = _compare_formats(_page_and_text())
    assert "| size | fit | peak / time | note | empty |" in shown["markdown"]
    assert "| small | 1 + 2·N | 1.0 MiB / 2 s | binding; why |  |" in shown["markdown"]
    assert "size            fit    peak / time  note          empty\n" in shown["terminal"]
    assert "large  too few runs              —  OVER" in shown["terminal"]
    page = shown["html"]
    # the page's own header and code, its own column; the text reports' column and the empty
    # one left out
    assert '<th class="txt">formula</th><th class="num">peak</th><th class="txt">note</th></tr>' in page
    assert "peak / time" not in page and "empty" not in page
    assert '<td class="txt" data-v="1 + 2·N"><code title="1 + 2·N">1 + 2·N</code></td>' in page


def test_a_cell_has_the_pages_sort_key_and_wording() -> None:
    shown = _compare_formats(_page_and_text())
    page = shown["html"]
    # sorted by its key; by what it shows where it has none; a missing figure unsorted and dim
    assert '<td class="txt" data-v="1.0">small</td>' in page
    assert '<td class="num" data-v="1048576">1.0 MiB</td>' in page
    assert (
        '<td class="txt"><span class="na">—</span></td><td class="num"><span class="na">—</span></td>' in page
    )
    # the page's wording in parts, each with its tone
    assert '<td class="txt" data-v="why"><b>binding</b>; why</td>' in page
    # a failure that answers, bold and bad; an outcome with nothing wrong, plain
    assert '<td class="txt" data-v="OVER"><b class="bad">OVER</b></td>' in page
    assert '<td class="txt" data-v="ok"><span>ok</span></td>' in page
    assert "| large | too few runs | — | **OVER** |  |" in shown["markdown"]
    with pytest.raises(ValueError, match="a table's cells, or its rows, tones, sort keys and forms"):
        Table("", (Column("a"),), (("x",),), cells=((TableCell("x"),),))
    # the keys the page sorts by come from the cells, whichever way the table was given: a key,
    # or the words shown (a nested row's first cell with its indent)
    nested = Table(
        "", (Column("a"), Column("b")), (), depths=(1,), cells=((TableCell("x"), TableCell("2", sort=2.0)),)
    )
    assert nested.sorts == (("\u00a0\u00a0x", 2.0),)


def test_the_pages_charts_cards_and_named_values() -> None:
    from memgauge.render._document import Card, Cards, Chart, Charts, Named, Only
    from memgauge.render._document_views import chart_blocks

    grid = Charts((Chart("c-0", "memory vs N", tall=True, data={"kind": "growth"}), Chart("c-1", "<shares>")))
    cards = Cards((Card("points", "8 of 8", "complete", "good"), Card("peak", "1.0 GiB", cls="peak")))
    section = Section("top", (Only(("html",), (grid,)), cards, Named((("N", "1000, 2000"),)), Chart("c-2")))
    shown = _compare_formats(section)
    page = shown["html"]
    assert '<figure style="margin:0"><h3>memory vs N</h3><div class="chart tall"><canvas id="c-0">' in page
    assert '<h3>&lt;shares&gt;</h3><div class="chart"><canvas id="c-1">' in page
    assert '<div class="cards"><div class="card good"><div class="label">points</div>' in page
    assert '<div class="card peak">' in page and "<ul><li><code>N</code>: 1000, 2000</li></ul>" in page
    # the text reports have no charts and no cards, the names and their values in their own form
    assert shown["terminal"] == "N: 1000, 2000\n" and shown["markdown"] == "- `N`: 1000, 2000"
    # the page's data from the charts wherever they sit
    assert [c.id for c in chart_blocks(section)] == ["c-0", "c-1", "c-2"]
    assert chart_blocks(section)[0].data == {"kind": "growth"}
