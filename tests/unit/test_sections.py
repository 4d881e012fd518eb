"""The sections' registry: each feature's folder reached by the core through its parts, in the
order their dependencies give, and nothing of a section loaded before a part of it is asked for."""

from __future__ import annotations

import html
import sys
import types
from pathlib import Path

import pytest

from memgauge import sections
from memgauge.gate import judge, parse_budget
from memgauge.model import ImportRecord, Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.render._sections import SECTIONS as REPORT_SECTIONS
from memgauge.sections import SECTIONS, SectionSpec, ordered, section
from memgauge.sections.gpu import GpuDevice
from memgauge.sections.torch import TorchMemory
from memgauge.sections.training import Training
from tests.factories import MIB, make_profile, phase

KINDS = {
    "capture",
    "assemble",
    "record",
    "report",
    "budget",
    "torch",
    "block",
    "watch",
    "compare",
    "compare_report",
    "page_data",
    "shows",
}


def test_a_section_comes_after_those_it_builds_on() -> None:
    specs = [
        SectionSpec("c", "c", ("b",), {}),
        SectionSpec("b", "b", ("a",), {}),
        SectionSpec("a", "a", (), {}),
        SectionSpec("d", "d", ("elsewhere",), {}),  # not registered: no constraint
    ]
    assert [s.name for s in ordered(specs)] == ["a", "d", "b", "c"]
    assert [s.name for s in ordered()] == ["torch", "gpu", "training"]  # training reads the GPU's


def test_sections_that_build_on_each_other_are_refused() -> None:
    specs = [SectionSpec("a", "a", ("b",), {}), SectionSpec("b", "b", ("a",), {})]
    with pytest.raises(RuntimeError, match="build on each other: a, b"):
        list(ordered(specs))


@pytest.mark.parametrize("spec", SECTIONS, ids=lambda s: s.name)
def test_every_part_of_every_section_loads_from_its_folder(spec: SectionSpec) -> None:
    assert set(spec.parts) <= KINDS
    for kind in spec.parts:
        part = spec.part(kind)
        assert part is not None, kind
        # a report part is a tuple of its sections' builders
        first = part[0][2] if isinstance(part, tuple) else part
        module = part if isinstance(part, types.ModuleType) else sys.modules[first.__module__]
        assert module.__name__.startswith(f"memgauge.sections.{spec.name}."), (kind, module.__name__)
    assert spec.part("no such kind") is None
    assert section(spec.name) is spec


def test_the_report_sections_are_the_folders_report_parts_in_order() -> None:
    expected = [entry[0] for spec in SECTIONS for entry in spec.part("report") or ()]
    assert [entry.id for entry in REPORT_SECTIONS.entries()] == expected
    assert expected == ["torch", "training", "phase-io", "gpu"]


def _variants() -> dict[str, Profile]:
    """A profile with nothing for any section, and one with each thing some section reports."""
    out = {name: make_profile() for name in ("bare", "torch", "gpu", "steps", "jax", "io")}
    out["torch"].torch = TorchMemory(mode="summary", pid=1, peak_bytes=64 * MIB)
    out["gpu"].gpu = [GpuDevice(index=0, name="fake", total_bytes=80 << 30, reserved_peak=300 * MIB)]
    out["steps"].training = Training(steps=12, steps_per_second=3.0, bound="compute")
    out["jax"].imports = [ImportRecord(1, "jax", 0.1, 0.5, 40 * MIB, 0.4, 30 * MIB)]
    io = phase("load", 0.0, 1.0, 10 * MIB)
    io.rchar, io.wchar, io.read_bytes, io.write_bytes = 5 * MIB, 0, 4 * MIB, 0
    out["io"].phases = [io]
    return out


@pytest.mark.parametrize("spec", SECTIONS, ids=lambda s: s.name)
def test_a_section_that_says_it_has_nothing_to_show_builds_nothing(spec: SectionSpec) -> None:
    # the report leaves out, unimported, the folders whose "shows" says no: it must never say no
    # where one of the folder's builders has something
    shown = set()
    for name, profile in _variants().items():
        built = [build(profile) for _, _, build in spec.part("report")]
        if not spec.shows(profile):
            assert all(b is None for b in built), name
        elif any(b is not None for b in built):
            shown.add(name)
    assert "bare" not in shown and shown, "no variant exercised the section"


def test_a_sections_budget_metric_is_judged_by_its_part() -> None:
    profile = make_profile()
    profile.gpu = [GpuDevice(index=0, name="fake", total_bytes=80 << 30, reserved_peak=300 * MIB)]
    verdict = judge(profile, parse_budget("gpu=1GiB samples_per_s>=10"))
    gpu, rate = verdict.results
    assert gpu.measured == 300 * MIB and gpu.status == "pass"
    assert rate.measured is None and "no training steps" in rate.note


def test_each_section_names_the_sources_its_assembly_reads() -> None:
    # a run without any of them loads none of the section's assembly (test_startup.py)
    assert {s.name: s.sources for s in SECTIONS} == {
        "torch": ("torch", "nvml"),
        "training": ("training",),
        "gpu": ("torch", "nvml"),
    }


TOY_REPORT = """
from memgauge.render import Column, Paragraph, Section, Table


def toy(profile):
    if not profile.command:
        return None  # nothing to say: in no format
    table = Table("toy figures", (Column("name", "name"), Column("value")), (("answer", "42 MiB"),))
    return Section("toy section", (table, Paragraph("the toy says so", "strong")))


REPORT = (("toy", "toy", toy),)
"""


def test_a_toy_section_folder_is_in_every_format_without_touching_the_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a folder of its own, outside memgauge, with a report part: registered, it is in the next
    # report of every format, after the sections before it; unregistered, it is gone
    package = tmp_path / "toy_section"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_report.py").write_text(TOY_REPORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    profile = make_profile()
    before = _formats(profile)
    toy = SectionSpec("toy", "", ("gpu",), {"report": "_report:REPORT"}, package="toy_section")
    sections.SECTIONS.append(toy)
    try:
        after = _formats(profile)
        assert [s.name for s in ordered()][-1] == "toy"
    finally:
        sections.SECTIONS.remove(toy)
    for name, out in after.items():
        assert "toy figures" in out and "42 MiB" in out and "the toy says so" in out, name
        assert "toy figures" not in before[name], name
    assert '<section id="toy"><h2>toy section</h2>' in after["html"]
    assert _formats(profile) == before


def _formats(profile: Profile) -> dict[str, str]:
    return {
        "terminal": TerminalRenderer(width=100).render(profile),
        "markdown": MarkdownRenderer().render(profile),
        "html": html.unescape(HtmlRenderer().render(profile)),
    }


TOY_COMPARE = """
class Answers:
    def __init__(self, names):
        self.names = names

    def to_dict(self):
        return {"answered": list(self.names)}


def compare(profiles, names):
    return Answers(names) if all(p.command for p in profiles) else None
"""

TOY_COMPARE_REPORT = """
from memgauge.render import Heading, Only, Paragraph, Section


def section(c, part):
    heading = Only(("markdown",), (Heading(f"toy compared {' and '.join(part.names)}", level=3),))
    return Section("toy comparison", (heading, Paragraph(f"toy compared {' and '.join(part.names)}")))
"""


def test_a_toy_sections_compare_part_is_in_every_format_of_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.analysis import compare
    from memgauge.render import (
        HtmlComparisonRenderer,
        MarkdownComparisonRenderer,
        TerminalComparisonRenderer,
    )

    package = tmp_path / "toy_compare"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_compare.py").write_text(TOY_COMPARE)
    (package / "_report_compare.py").write_text(TOY_COMPARE_REPORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    parts = {"compare": "_compare:compare", "compare_report": "_report_compare:"}
    toy = SectionSpec("toy", "", (), parts, package="toy_compare")
    profiles = [make_profile(), make_profile()]
    sections.SECTIONS.append(toy)
    try:
        c = compare(profiles, ["a", "b"])
        renders = (
            TerminalComparisonRenderer(width=100).render(c),
            MarkdownComparisonRenderer().render(c),
            HtmlComparisonRenderer().render(c),
        )
    finally:
        sections.SECTIONS.remove(toy)
    assert c.to_dict()["toy"] == {"answered": ["a", "b"]}
    assert "toy compared a and b" in renders[0] and "### toy compared a and b" in renders[1]
    assert '<section id="toy"><h2>toy comparison</h2><p>toy compared a and b</p>' in renders[2]
    assert "toy" not in compare(profiles, ["a", "b"]).to_dict()
