"""A ``gpu=`` limit judged under ``--enforce``: torch's reserve was capped at the limit in the
measured process (``capture._gpu_cap``); a run that ran out of GPU memory under the cap fails the
limit whatever its figure (the program did not fit), one that survived says so in the note."""

from __future__ import annotations

import dataclasses

from memgauge._units import format_bytes
from memgauge.gate._records import FAIL, CheckResult
from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def under_gpu_cap(result: CheckResult, runs: Sequence[Profile]) -> CheckResult:
    capped = [(i, d) for i, run in enumerate(runs) for d in run.gpu if d.cap_bytes is not None]
    if not capped:
        return result
    failed = [(i, d) for i, d in capped if d.cap_outcome == "out of memory"]
    i, d = (failed or capped)[0]
    where = f" (run {i + 1})" if len(runs) > 1 else ""
    cap = format_bytes(d.cap_bytes or 0)
    if failed:
        note = f"out of memory under --enforce{where}: torch's reserve capped at {cap} on device {d.index}"
        result = dataclasses.replace(result, status=FAIL)
    else:
        note = f"survived --enforce: torch's reserve capped at {cap} (the CUDA context comes on top)"
    return dataclasses.replace(result, note="; ".join(n for n in (note, result.note) if n))
