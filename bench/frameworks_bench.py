"""What ``memgauge run`` costs the training loops of the frameworks people train with: each program
of ``bench/programs/frameworks/`` (Lightning ``Trainer.fit``, Hugging Face ``Trainer``, Keras 3 on
the torch backend, ``torch.compile``, an accelerate loop by hand) run plain and under
``memgauge run -q --json`` (its defaults: lines sampled, torch and training followed) at the same
time, in lockstep (bench/_lockstep.py): the two take turns of ``--block`` steps, each main thread
on CPU 0, so that both meet the same machine speed (it moves 10-25% over seconds on a 2-vCPU VM,
which unpaired runs cannot resolve). The figure is the program's own: the time of its blocks by its
own clock (a framework callback), past the first ``FIRST_BLOCKS`` (start-up, compilation, memgauge's
followed steps). Per pair, the measured run's steady blocks over the plain run's; the table gives
the median and range over the pairs.

    .venv/bin/python bench/frameworks_bench.py                 # 5 pairs per program
    .venv/bin/python bench/frameworks_bench.py --reps 3 --programs lightning_fit,hf_trainer

Needs torch and the ``frameworks`` extra (``pip install torch==2.13.0 -e '.[frameworks]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _lockstep import listen, results

PROGRAMS = Path(__file__).resolve().parent / "programs" / "frameworks"
FIRST_BLOCKS = 2  # the blocks of start-up, compilation and memgauge's first, followed steps
NAMES = ("lightning_fit", "hf_trainer", "keras_fit", "torch_compile", "accelerate_loop")
QUIET = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "OMP_NUM_THREADS": "1",
}


def pair(name: str, block: int, work: Path) -> tuple[list[float], list[float]]:
    """One plain and one measured run of program ``name`` in lockstep: their blocks' seconds."""
    script = str(PROGRAMS / f"{name}.py")
    commands = {
        "plain": [sys.executable, script],
        "memgauge": [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(work / "p.json"), script],
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "turns")
        server = listen(path)
        env = {
            **os.environ,
            **QUIET,
            "OUT": str(work / "out"),
            "BENCH_LOCKSTEP": path,
            "BENCH_BLOCK": str(block),
        }
        procs = {
            k: subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=work)
            for k, cmd in commands.items()
        }
        got = results(server, procs, "plain", f"frameworks_bench ({name})")
    plain, measured = got["plain"]["blocks"], got["memgauge"]["blocks"]
    return plain, measured


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="pairs per program (default 5)")
    p.add_argument("--programs", default=",".join(NAMES), help="comma-separated, of: " + ", ".join(NAMES))
    p.add_argument("--block", type=int, default=10, help="steps a turn (default 10)")
    p.add_argument("--json", metavar="PATH", help="write the ratios here")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="frameworks-bench-"))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    results: dict[str, list[float]] = {}
    print(f"| program | steady steps/s, plain | memgauge / plain, median (min-max) of {args.reps} pairs |")
    print("| --- | ---: | --- |")
    for name in args.programs.split(","):
        ratios, rates = [], []
        for rep in range(args.reps):
            plain, measured = pair(name, args.block, work)
            ours, theirs = sum(measured[FIRST_BLOCKS:]), sum(plain[FIRST_BLOCKS:])
            ratios.append(ours / theirs)
            rates.append(args.block * len(plain[FIRST_BLOCKS:]) / theirs)
            print(
                f"  {name} pair {rep + 1}: {theirs:.3f} s -> {ours:.3f} s, {ratios[-1]:.4f}", file=sys.stderr
            )
        results[name] = ratios
        median = statistics.median
        print(
            f"| {name} | {median(rates):.1f} | {median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f}) |"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
