"""A synthetic one-hour profile as large as a real one can get, for the report's size and speed
limits: a full timeline (the builder keeps at most 2048 samples), a respawning worker pool, a
phase per batch, thousands of lines, hundreds of imports, an allocation peak, leak suspects."""

from __future__ import annotations

import math
import random

from memgauge.model._profile import (
    AllocationPeak,
    Attribution,
    CpuTimes,
    ExitStatus,
    ImportRecord,
    LeakSuspect,
    LineStats,
    Peak,
    PhaseRecord,
    ProcessRecord,
    ProcessSeries,
    Profile,
    Reconciliation,
    Timeline,
)

MIB = 1 << 20


def long_profile(
    hours: float = 1.0,
    *,
    samples: int = 2048,
    workers: int = 64,
    epochs: int = 100,
    batches: int = 80,
    files: int = 60,
    lines_per_file: int = 50,
    imports: int = 400,
    seed: int = 0,
) -> Profile:
    rng = random.Random(seed)
    wall = hours * 3600
    t = [wall * i / (samples - 1) for i in range(samples)]
    main_pid = 1000
    main = [int((300 + 200 * math.sin(i / 50) + rng.random() * 40) * MIB) for i in range(samples)]
    processes = [
        ProcessRecord(main_pid, 1, ["python", "train.py", "--hours", str(hours)], 0.0, wall, max(main))
    ]
    series = [ProcessSeries(main_pid, 0, main)]
    tree = list(main)
    span = samples // workers
    for w in range(workers):
        pid = 2000 + w
        start = w * span
        values = [int((150 + rng.random() * 100) * MIB) for _ in range(span)]
        series.append(ProcessSeries(pid, start, values))
        for i, v in enumerate(values):
            tree[start + i] += v
        processes.append(
            ProcessRecord(
                pid,
                main_pid,
                ["python", "-c", "worker"],
                t[start],
                t[start + span - 1],
                max(values),
                30.0,
                2.0,
            )
        )
    peak_i = max(range(samples), key=tree.__getitem__)
    user = [0.9 * x for x in t]
    system = [0.05 * x for x in t]

    phases = [PhaseRecord("load", main_pid, 0.0, 60.0, 400 * MIB, 30 * MIB, 350 * MIB)]
    epoch_len = (wall - 120) / epochs
    for e in range(epochs):
        start = 60 + e * epoch_len
        parent = len(phases)
        phases.append(
            PhaseRecord("epoch", main_pid, start, start + epoch_len, 600 * MIB, 350 * MIB, 360 * MIB)
        )
        for b in range(batches):
            bs = start + b * epoch_len / batches
            phases.append(
                PhaseRecord(
                    "batch",
                    main_pid,
                    bs,
                    bs + epoch_len / batches,
                    590 * MIB,
                    350 * MIB,
                    355 * MIB,
                    1,
                    parent,
                )
            )
    phases.append(PhaseRecord("save", main_pid, wall - 60, wall, 420 * MIB, 360 * MIB, 360 * MIB))

    lines: list[LineStats] = []
    for f in range(files):
        path = (
            f"/srv/app/pkg/module_{f:02d}.py" if f % 3 else f"/usr/lib/python3/site-packages/lib{f}/core.py"
        )
        for n in range(lines_per_file):
            lines.append(
                LineStats(
                    pid=main_pid if n % 4 else 2000 + n % workers,
                    file=path,
                    line=10 + n * 3,
                    function=f"func_{n // 5}",
                    cpu_python_seconds=rng.random() * 20,
                    cpu_native_seconds=rng.random() * 30,
                    wait_seconds=rng.random() * 5,
                    resident_growth_bytes=int((rng.random() - 0.3) * 50 * MIB),
                    samples=rng.randrange(1, 10_000),
                    source=f"result_{n} = transform(batch, weights[{n}])  # step {f}",
                )
            )
    stack = [f"/srv/app/pkg/module_{k:02d}.py:{k + 5}" for k in range(12)]
    attribution = [
        Attribution(
            main_pid, f"/srv/app/pkg/module_{k:02d}.py", 10 + k, f"func_{k}", (60 - k) * MIB, stack, "x = y"
        )
        for k in range(60)
    ]
    return Profile(
        command=["python", "train.py", "--hours", str(hours)],
        exit=ExitStatus(code=0),
        wall_seconds=wall,
        cpu=CpuTimes(user[-1], system[-1]),
        peak=Peak(
            resident_bytes=tree[peak_i],
            method="cgroup-v2 memory.peak",
            error_bound_bytes=512 * 1024,
            at_seconds=t[peak_i],
            largest_process_bytes=max(main),
            sampled_tree_bytes=tree[peak_i],
            notes=["a synthetic profile"],
            attribution=attribution,
        ),
        processes=processes,
        phases=phases,
        timeline=Timeline(wall / samples, t, tree, list(tree), user, system, series),
        environment={"python": "3.11.7", "libraries": {f"lib{k}": "1.0" for k in range(50)}},
        lines=lines,
        imports=[
            ImportRecord(main_pid, f"package_{k}", k * 0.01, 0.2, (k % 7) * MIB, 0.1, (k % 5) * MIB)
            for k in range(imports)
        ],
        leaks=[
            LeakSuspect(
                main_pid,
                "/srv/app/pkg/cache.py",
                10 + k,
                "remember",
                1000.0 * (k + 1),
                k * MIB,
                5.0,
                wall,
                0.97,
            )
            for k in range(40)
        ],
        allocation_peak=AllocationPeak(
            bytes=900 * MIB,
            processes={str(main_pid): 900 * MIB},
            attribution=[
                Attribution(
                    main_pid,
                    "/srv/app/pkg/model.py",
                    20 + k,
                    "build",
                    (50 - k) * MIB,
                    stack[:3],
                    "w = init()",
                )
                for k in range(50)
            ],
        ),
        reconciliation=[
            Reconciliation(main_pid, 700 * MIB, 900 * MIB, 30 * MIB, 250 * MIB, 20 * MIB, ["estimated"])
        ],
        started_at="2026-11-23T10:00:00+00:00",
        memgauge_version="test",
    )
