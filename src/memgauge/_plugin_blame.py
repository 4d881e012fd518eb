"""The pytest plugin's correction of a breach's line (``memgauge.pytest_plugin``, which loads this
module only once a test has a budget)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import CodeType

    from memgauge.gate import Verdict


def own_line(code: CodeType | None, verdict: Verdict) -> Verdict:
    """A breach blamed on pytest's call of the test function (``code``: None when it has none) is
    the test's: a C operation of the test kept the GIL until the test had returned (``b"x" * n``
    as its last use), so the sampler saw only pytest's frame. The test's line most likely to have
    held it (``stalled_line`` up to the test's end) is named instead."""
    from dataclasses import replace

    from memgauge.capture import source_line, stalled_line

    ours = f"{os.sep}_pytest{os.sep}"
    if code is None or not any(r.blame and ours in (r.blame.file or "") for r in verdict.results):
        return verdict
    line = stalled_line(code, len(code.co_code)) or code.co_firstlineno
    file, source = code.co_filename, source_line(code.co_filename, line)
    results = [
        replace(r, blame=replace(r.blame, file=file, line=line, function=code.co_name, source=source))
        if r.blame and ours in (r.blame.file or "")
        else r
        for r in verdict.results
    ]
    return replace(verdict, results=tuple(results))
