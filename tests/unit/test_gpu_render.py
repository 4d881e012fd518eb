"""The GPU section in the terminal, Markdown and HTML reports: the layers and their gaps, the
processes on the device, the one line for a torch program without GPU figures, and nothing for
other profiles."""

from __future__ import annotations

from memgauge.model import Attribution, Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.sections.gpu import GpuDevice, GpuProcess
from memgauge.sections.torch import TorchMemory
from tests.factories import make_profile

MIB = 1 << 20


def gpu_profile() -> Profile:
    device = GpuDevice(
        index=0,
        name="NVIDIA H100 80GB HBM3",
        total_bytes=85_520_809_984,
        tensors_peak=551 * MIB,
        allocated_peak=616 * MIB,
        reserved_peak=640 * MIB,
        process_peak=1390 * MIB,
        device_used_peak=3400 * MIB,
        context=750 * MIB,
        source={"process_peak": "NVML"},
        alloc_retries=1,
        ooms=0,
        utilization_peak=97,
        utilization_mean=61.5,
        reserved_unallocated_at_peak=24 * MIB,
        processes=[GpuProcess(41, 1390 * MIB), GpuProcess(900, 2000 * MIB, "", 900)],
        notes=["CUDA_MODULE_LOADING unset (lazy loading on current drivers)"],
    )
    return make_profile(gpu=[device])


def test_terminal_shows_each_layer_with_the_gap_named() -> None:
    text = TerminalRenderer(width=140).render(gpu_profile())
    assert "GPU 0 (NVIDIA H100 80GB HBM3), 79.6 GiB in all" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()[:1]}
    assert "551 MiB" in rows["tensors"]
    assert "+65.0 MiB" in rows["allocated"] and "cuBLAS" in rows["allocated"]
    assert "+24.0 MiB" in rows["reserved"] and "cached" in rows["reserved"]
    assert "+750 MiB" in rows["process"] and "CUDA context" in rows["process"]
    assert "+2.0 GiB" in rows["device"] and "other processes" in rows["device"]
    assert "another process" in text
    assert "utilisation peak 97%, mean 61.5%" in text
    assert "allocator retries 1, out-of-memory errors 0" in text


def test_markdown_has_the_same_rows() -> None:
    text = MarkdownRenderer().render(gpu_profile())
    assert "GPU 0 (NVIDIA H100 80GB HBM3), 79.6 GiB in all**" in text
    assert "| process | 1.4 GiB | +750 MiB | CUDA context" in text
    assert "| 900 | 2.0 GiB | another process |" in text


def test_html_section_is_registered_with_its_nav_link() -> None:
    page = HtmlRenderer().render(gpu_profile())
    assert 'id="gpu-0"' in page
    assert 'href="#gpu"' in page
    assert "CUDA context and other libraries" in page


def test_a_torch_program_without_gpu_figures_gets_one_line_everywhere() -> None:
    profile = make_profile(
        torch=TorchMemory(mode="summary", pid=1, peak_bytes=0),
        environment={"measurement": {"gpu": "no GPU figures from outside the program: NVML unavailable"}},
    )
    line = "GPU: none measured (no GPU figures from outside the program: NVML unavailable)"
    assert line in TerminalRenderer(width=200).render(profile)
    assert line in MarkdownRenderer().render(profile)
    assert line in HtmlRenderer().render(profile)


def test_a_profile_without_torch_or_gpu_has_no_gpu_section() -> None:
    profile = make_profile()
    assert "GPU" not in TerminalRenderer(width=200).render(profile)
    assert "GPU" not in MarkdownRenderer().render(profile)
    assert 'id="gpu"' not in HtmlRenderer().render(profile)


def test_each_report_lists_the_lines_at_the_gpu_peak() -> None:
    profile = gpu_profile()
    profile.gpu[0].peak_lines = [
        Attribution(41, "/w/train.py", 10, "forward", 512 * MIB, [], "gpu snapshot"),
        Attribution(41, "<before the history>", 0, "", 64 * MIB, [], "gpu snapshot"),
    ]
    title = "lines at the GPU peak (allocated, from the snapshot)"
    terminal = TerminalRenderer(width=140).render(profile)
    assert title in terminal
    row = next(line for line in terminal.splitlines() if "train.py:10" in line)
    assert row.split()[-2:] == ["512", "MiB"] and "forward" in row
    markdown = MarkdownRenderer().render(profile)
    # the same table, its title and columns, in every format (one document, three backends)
    assert f"**{title}**\n\n| line | function | allocated |" in markdown
    assert "| \\<before the history\\> |  | 64.0 MiB |" in markdown  # escaped: not an HTML tag
    html = HtmlRenderer().render(profile)
    assert f"<h3>{title}</h3>" in html
    assert 'class="sortable gpu-lines"' in html and "train.py:10" in html
