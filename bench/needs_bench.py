"""What a container needs (``peak.needs_bytes``, issue 16 part 1) against the ground truth, on
four programs: ``bench/programs/sk_mlp.py``, ``sk_linear.py`` (need scikit-learn, which CI does not
have) and ``tests/programs/fit_numpy.py``, ``fit_anon.py``.

    python bench/needs_bench.py [--reps 2] [--only sk_mlp.py ...] [--json PATH] [--no-fit]

For each program: ``memgauge run --no-lines`` cold (every file under the Python installation and
the program's directory evicted from page cache first, as ``fit-limit`` does) and warm (after a
warm-up run), ``--reps`` times each: the need and the group's peak; ``/usr/bin/time``'s max RSS of
a warm run; and ``memgauge fit-limit``'s bisection over real runs (2 MiB precision), caches cold: the
largest limit the program dies under, the smallest it survives and the smallest it runs at full
speed under (wall within 10% of the unlimited run's; ``--no-fit``: the cold and warm runs only),
with ``fit-limit``'s own code: a run under a limit is stopped after ``--stall`` times the
unlimited run's wall time (at least 20 s) and counts as stalled. Under a limit a little too
small, the kernel can keep a program alive for minutes by reclaiming and re-reading its library
pages over and over. Prints a markdown table and the three checks: the need the same cold or warm
within 5%, never below the smallest surviving limit, at most 1.25x the full-speed limit.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from memgauge.runner import FitResult, Target, Trial, default_roots, evict_page_cache, fit_limit

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = [
    ROOT / "bench" / "programs" / "sk_mlp.py",
    ROOT / "bench" / "programs" / "sk_linear.py",
    ROOT / "tests" / "programs" / "fit_numpy.py",
    ROOT / "tests" / "programs" / "fit_anon.py",
]
MIB = 1 << 20
PRECISION = 2 * MIB
TOLERANCE = 0.10


def measured(program: Path, *, cold: bool) -> dict[str, Any]:
    """One ``memgauge run``: its ``peak`` record."""
    if cold:
        evict_page_cache(default_roots(Target("script", str(program))))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "p.json"
        cmd = [sys.executable, "-m", "memgauge", "run", "-q", "--no-lines", "--json", str(out), str(program)]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, cwd=tmp)
        peak: dict[str, Any] = json.loads(out.read_text())["peak"]
    return peak


def time_max_rss(program: Path) -> int:
    """``/usr/bin/time``'s maximum resident set size of a plain run, in bytes."""
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%M", sys.executable, str(program)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    return int(r.stderr.strip().splitlines()[-1]) * 1024


def fit(program: Path, stall: float) -> FitResult:
    """``memgauge fit-limit``'s bisections (``runner.fit_limit``), every run cold, a limited run
    stopped after ``stall`` times the unlimited run's wall time (at least 20 s) as stalled."""

    def progress(t: Trial) -> None:
        assert t.limit_bytes is not None
        print(
            f"  {t.limit_bytes / MIB:.0f} MiB: {t.outcome} in {t.wall_seconds:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    target = Target("script", str(program))
    return fit_limit(
        target, cold=True, tolerance=TOLERANCE, precision_bytes=PRECISION, progress=progress, stall=stall
    )


def bench(program: Path, reps: int, stall: float | None) -> dict[str, Any]:
    measured(program, cold=False)  # warm-up
    warm = [measured(program, cold=False) for _ in range(reps)]
    cold = [measured(program, cold=True) for _ in range(reps)]
    found = fit(program, stall) if stall is not None else None
    limits = {
        "dies_under": found.largest_failing_bytes if found else None,
        "smallest_surviving": found.smallest_surviving_bytes if found else None,
        "full_speed": found.full_speed_bytes if found else None,
        "fit_runs": len(found.trials) if found else 0,
        "stalled": [t.limit_bytes for t in found.trials if t.stalled] if found else [],
        "unlimited_cold_wall": found.baseline.wall_seconds if found else None,
        "unlimited_cold_needs": found.baseline.needs_bytes if found else None,
    }
    return {
        "program": str(program.relative_to(ROOT)),
        "needs_cold": [p["needs_bytes"] for p in cold],
        "needs_warm": [p["needs_bytes"] for p in warm],
        "group_cold": [p["resident_bytes"] for p in cold],
        "group_warm": [p["resident_bytes"] for p in warm],
        "page_cache_cold": [p["page_cache_bytes"] for p in cold],
        "parts_cold": [[p["needs_anon_bytes"], p["needs_file_bytes"], p["needs_shmem_bytes"]] for p in cold],
        "time_max_rss": time_max_rss(program),
        **limits,
    }


def mib(values: list[int] | int | None) -> str:
    if values is None:
        return "-"
    if isinstance(values, int):
        return f"{values / MIB:.0f}"
    low, high = min(values) / MIB, max(values) / MIB
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"


def checks(row: dict[str, Any]) -> list[str]:
    needs = row["needs_cold"] + row["needs_warm"]
    spread = (max(needs) - min(needs)) / min(needs)
    out = [f"cold/warm spread {spread:.1%} ({'ok' if spread <= 0.05 else 'FAILS <= 5%'})"]
    surviving, full = row["smallest_surviving"], row["full_speed"]
    if surviving:
        ok = min(needs) >= surviving
        out.append(
            f"lowest need / smallest surviving {min(needs) / surviving:.2f} ({'ok' if ok else 'FAILS >= 1'})"
        )
    if full:
        ratio = max(needs) / full
        out.append(f"highest need / full speed {ratio:.2f} ({'ok' if ratio <= 1.25 else 'FAILS <= 1.25'})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="program file names")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--stall", type=float, default=5.0, help="a limited run's cap, x the unlimited wall")
    parser.add_argument("--no-fit", action="store_true", help="cold and warm runs only, no fit-limit")
    args = parser.parse_args()
    rows = []
    for program in PROGRAMS:
        if args.only and program.name not in args.only:
            continue
        print(f"measuring {program.name} ...", file=sys.stderr, flush=True)
        rows.append(bench(program, args.reps, None if args.no_fit else args.stall))
    print(
        "| program | container needs, cold / warm | group peak, cold / warm | `/usr/bin/time` max RSS "
        "| dies under | smallest surviving limit | full speed from |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| `{r['program']}` | {mib(r['needs_cold'])} / {mib(r['needs_warm'])} MiB "
            f"| {mib(r['group_cold'])} / {mib(r['group_warm'])} MiB | {mib(r['time_max_rss'])} MiB "
            f"| {mib(r['dies_under'])} MiB | {mib(r['smallest_surviving'])} MiB "
            f"| {mib(r['full_speed'])} MiB |"
        )
    print()
    for r in rows:
        anon, file, shmem = (mib([p[i] for p in r["parts_cold"]]) for i in range(3))
        print(
            f"- `{r['program']}`: {'; '.join(checks(r))}; at the largest sample, cold: anonymous {anon}, "
            f"file pages in use {file}, shmem {shmem} MiB; group page cache at the end, cold: "
            f"{mib(r['page_cache_cold'])} MiB; {r['fit_runs']} fit-limit runs"
            + (
                f", stopped stalled under {', '.join(mib(x) for x in r['stalled'])} MiB"
                if r["stalled"]
                else ""
            )
        )
    if args.json:
        args.json.write_text(json.dumps({"load": os.getloadavg(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
