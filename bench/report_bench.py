"""HTML reports side by side: memgauge's against memray's flame graph and Scalene's page, for the
same workload, and memgauge's for a synthetic one-hour profile.

    .venv/bin/python bench/report_bench.py [--workload known_peak] [--reps 5]

For each report: its size, the time to write it from a saved capture (the capture itself is not
timed: `run_bench.py` times the runs), and what headless Chromium (Debian's, /usr/bin/chromium)
makes of it with the network cut off: time to the load event, requests to other hosts (refused),
console errors. Medians over the repetitions. Needs `pip install -e '.[bench,dev]'` and Chromium.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "bench" / "workloads"
BIN = Path(sys.executable).parent
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@dataclass
class Report:
    name: str
    path: Path
    write_seconds: list[float] = field(default_factory=list)
    load_seconds: list[float] = field(default_factory=list)
    external: int = 0
    errors: int = 0


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def capture(workload: Path, out: Path) -> dict[str, Callable[[], float]]:
    """Run the workload once under each tool (untimed); return how to write each report (timed)."""
    py = sys.executable
    subprocess.run(
        [py, "-m", "memgauge", "run", "-q", "--json", "mg.json", str(workload)], cwd=out, check=True
    )
    subprocess.run([str(BIN / "memray"), "run", "-q", "-o", "cap.bin", str(workload)], cwd=out, check=True)
    subprocess.run(
        [str(BIN / "scalene"), "run", "--memory", "-o", "scalene.json", str(workload)],
        cwd=out,
        check=True,
        capture_output=True,
    )
    mg = [py, "-m", "memgauge", "view", "mg.json", "--html"]
    flame = [str(BIN / "memray"), "flamegraph", "-f", "-o"]
    return {
        "memgauge": lambda: timed([*mg, "memgauge.html"], out),
        "memray flamegraph": lambda: timed([*flame, "memray.html", "cap.bin"], out),
        "memray flamegraph --no-web": lambda: timed(
            [*flame, "memray-noweb.html", "--no-web", "cap.bin"], out
        ),
        "scalene view --standalone": lambda: timed(
            [str(BIN / "scalene"), "view", "--standalone", "scalene.json"], out
        ),
    }


def synthetic(out: Path) -> Callable[[], float]:
    sys.path.insert(0, str(ROOT))
    from tests.synthetic import long_profile

    long_profile(hours=1.0).save(out / "hour.json")
    return lambda: timed([sys.executable, "-m", "memgauge", "view", "hour.json", "--html", "hour.html"], out)


FILES = {
    "memgauge": "memgauge.html",
    "memray flamegraph": "memray.html",
    "memray flamegraph --no-web": "memray-noweb.html",
    "scalene view --standalone": "scalene-profile.html",
    "memgauge, one-hour profile": "hour.html",
}


def load(browser: Any, report: Report) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    external: list[str] = []
    errors: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file:") or r.request.url.startswith("data:"):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    start = time.perf_counter()
    page.goto(report.path.as_uri(), wait_until="load", timeout=60_000)
    if report.name.startswith("memgauge"):
        page.wait_for_selector("body[data-rendered]", state="attached", timeout=60_000)
    report.load_seconds.append(time.perf_counter() - start)
    report.external = max(report.external, len(external))
    report.errors = max(report.errors, len(errors))
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default="known_peak")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="memgauge-report-bench-") as tmp:
        out = Path(tmp)
        writers = capture(WORKLOADS / f"{args.workload}.py", out)
        writers["memgauge, one-hour profile"] = synthetic(out)
        reports = {name: Report(name, out / FILES[name]) for name in writers}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            warm = browser.new_page()
            warm.set_content("<p>warm</p>")
            warm.close()
            for _ in range(args.reps):
                for name, write in writers.items():
                    reports[name].write_seconds.append(write())
                    load(browser, reports[name])
            browser.close()
        rows = []
        for r in reports.values():
            rows.append(
                {
                    "report": r.name,
                    "bytes": r.path.stat().st_size,
                    "write_s": statistics.median(r.write_seconds),
                    "load_s": statistics.median(r.load_seconds),
                    "external_requests": r.external,
                    "console_errors": r.errors,
                }
            )
    print(f"workload: {args.workload}, {args.reps} repetitions, medians\n")
    print("| report | size | written in | Chromium load | requests to other hosts | console errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['report']} | {row['bytes'] / 1024:.0f} KiB | {row['write_s']:.2f} s | "
            f"{row['load_s']:.2f} s | {row['external_requests']} | {row['console_errors']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
