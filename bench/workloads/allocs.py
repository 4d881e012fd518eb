"""Allocation churn in pure Python (~2.5 s): ~13 million small dicts, lists, tuples and strings, most
dropped at once, two records in three kept until exit (a peak of ~300 MiB, built up gradually).
Unlike pyobjects, most allocations die young: what an allocation tracer pays per allocation shows
here, next to a peak made of many small objects."""

import os

RECORDS = int(os.environ.get("RECORDS", "1100000"))


def record(i: int) -> dict[str, object]:
    key = f"record-{i:08d}"
    parts = [i % 7, i % 11, i % 13]  # a temporary list, copied into a tuple and dropped
    return {"id": i, "key": key, "parts": tuple(parts), "label": key.upper()}


def churn(i: int) -> int:
    """Temporaries only: all of them are garbage when it returns."""
    words = [str(i), str(i + 1), str(i + 2)]
    pair = (words[0], len(words))
    return len({"pair": pair, "words": words}) + len("-".join(words))


if __name__ == "__main__":
    kept = []
    total = 0
    for i in range(RECORDS):
        rec = record(i)
        total += churn(i)
        if i % 3:  # two in three are kept, the third dropped
            kept.append(rec)
    print(len(kept), total)
