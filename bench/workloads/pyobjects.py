"""Allocation-heavy pure Python: ~1M feature dicts (~3 s) built row by row, the way much preprocessing
code is written. Millions of small allocations: the worst case for allocation-tracing profilers."""

import os

ROWS = int(os.environ.get("ROWS", "1000000"))


def featurize(i: int) -> dict[str, object]:
    return {"id": i, "name": f"user{i}", "tags": [i % 7, i % 11, i % 13], "score": i * 0.5}


if __name__ == "__main__":
    rows = [featurize(i) for i in range(ROWS)]
    index = {r["name"]: r for r in rows}
    print(len(index), sum(float(r["score"]) for r in rows))  # type: ignore[arg-type]
