"""What a container needs (``peak.needs_bytes``): the /proc parsers it is read with, the running
maximum, the gate's ``rss`` judging it (the resident peak for profiles written before it), its
round trip through JSON, and the report's headline in every renderer."""

from __future__ import annotations

from memgauge.gate import judge, parse_budget
from memgauge.model import Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.watcher import TreeNeeds
from memgauge.watcher._watcher import parse_pss_parts, parse_rss_parts
from tests.factories import make_profile

MIB = 1 << 20

STATUS = (
    b"Name:\tpython\nVmHWM:\t  240000 kB\nVmRSS:\t  230000 kB\n"
    b"RssAnon:\t  200000 kB\nRssFile:\t   29000 kB\nRssShmem:\t    1000 kB\n"
)
ROLLUP = b"Rss:  317152 kB\nPss:  158681 kB\nPss_Anon:  157542 kB\nPss_File:  1139 kB\nPss_Shmem:  12 kB\n"


def test_the_parts_are_read_in_bytes_and_absent_ones_are_zero() -> None:
    assert parse_rss_parts(STATUS) == (200000 * 1024, 29000 * 1024, 1000 * 1024)
    assert parse_rss_parts(b"Name:\tzombie\n") == (0, 0, 0)
    assert parse_pss_parts(ROLLUP) == (157542 * 1024, 12 * 1024)


def test_the_tree_need_keeps_the_largest_sample_with_its_parts() -> None:
    needs = TreeNeeds()
    needs.offer(100, 10, 0, 0.5)
    needs.offer(90, 30, 5, 0.7)  # 125: a new maximum
    needs.offer(120, 0, 0, 0.9)  # 120: not one
    assert (needs.total, needs.anon, needs.file, needs.shmem, needs.at) == (125, 90, 30, 5, 0.7)


def needing(resident: int, needs: int) -> Profile:
    p = make_profile(rss=resident, method="cgroup-v1 memory.max_usage_in_bytes", peaks={1: needs}, at=1.0)
    p.peak.includes_page_cache = True
    p.peak.largest_process_bytes = needs
    p.peak.needs_bytes, p.peak.needs_method = needs, "largest process VmHWM"
    p.peak.needs_anon_bytes, p.peak.needs_file_bytes, p.peak.needs_at_seconds = (
        needs - 20 * MIB,
        20 * MIB,
        1.1,
    )
    p.peak.page_cache_bytes = 3 * MIB
    return p


def test_the_rss_budget_judges_the_need_and_the_resident_peak_without_it() -> None:
    # the group's peak (page cache of libraries read warm by another group not charged) under the
    # budget, what a container needs over it
    (result,) = judge(needing(90 * MIB, 110 * MIB), parse_budget("rss=100MiB")).results
    assert result.status == "fail" and result.measured == 110 * MIB
    older = needing(90 * MIB, 110 * MIB)
    older.peak.needs_bytes = 0  # a profile written before the field
    (result,) = judge(older, parse_budget("rss=100MiB")).results
    assert result.status == "pass" and result.measured == 90 * MIB


def test_the_need_survives_a_round_trip() -> None:
    p = needing(90 * MIB, 110 * MIB)
    again = Profile.from_json(p.to_json())
    assert again.peak == p.peak
    # profiles written before it read with the need unknown
    data = p.to_dict()
    for key in [k for k in data["peak"] if k.startswith("needs_") or k == "page_cache_bytes"]:
        del data["peak"][key]
    assert Profile.from_dict(data).peak.needs_bytes == 0


def test_every_report_leads_with_the_need_and_reconciles_it() -> None:
    p = needing(90 * MIB, 110 * MIB)
    text = TerminalRenderer(width=100, color=False).render(p)
    md = MarkdownRenderer().render(p)
    html = HtmlRenderer().render(p)
    for out in (text, md, html):
        assert out.index("container needs") < out.index("resident peak 90.0 MiB")
        assert "110 MiB" in out and "(largest process VmHWM)" in out
        assert "max RSS of the largest process 110 MiB (what /usr/bin/time prints)" in out
        assert "3.0 MiB of it at the end" in out and "spike-exact" in out
        assert "anonymous 90.0 MiB" in out and "libraries and mapped files 20.0 MiB" in out
    older = needing(90 * MIB, 110 * MIB)
    older.peak.needs_bytes = 0
    assert "container needs" not in TerminalRenderer(width=100, color=False).render(older)


def test_the_headroom_on_top_of_the_pages_in_use_is_shown_in_every_report() -> None:
    p = needing(90 * MIB, 105 * MIB)
    p.peak.needs_method, p.peak.needs_headroom_bytes = "sampled working set", 5 * MIB
    assert Profile.from_json(p.to_json()).peak.needs_headroom_bytes == 5 * MIB
    for out in (
        TerminalRenderer(width=200, color=False).render(p),
        MarkdownRenderer().render(p),
        HtmlRenderer().render(p),
    ):
        assert "+ 5.0 MiB (5%) headroom for the kernel" in out, out
        assert "libraries and mapped files in use 20.0 MiB" in out
