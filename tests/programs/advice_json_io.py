"""Ground truth for the file-io advice: a ~40 MB JSON file (a list of 500,000 small records),
written 10,000 records at a time (no large object is built to write it), then read whole with
``json.load`` on one line and held. Parsed into Python objects, it takes several times its size
on disk: that line holds most of the process's peak.

The line ends in a short sleep. json's C scanner keeps the GIL for the whole parse, so the sampler
can only look once the parse is over, and it looks wherever the program first lets go of the GIL:
with the sleep on the next line, that is sometimes the next line, which is then charged with the
growth of the parse (docs/measurement.md: a line's last interval can go to the line after it)."""

import json
import os
import tempfile
import time

RECORDS = 500_000
CHUNK = 10_000  # records written at a time: ~1 MB


def write(path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, RECORDS, CHUNK):
            rows = ",\n".join(
                f'{{"id": {i}, "name": "item-{i:07d}", "score": {i / 7:.4f}, "tags": ["a", "b"]}}'
                for i in range(start, min(start + CHUNK, RECORDS))
            )
            f.write(("[\n" if start == 0 else ",\n") + rows)
        f.write("\n]\n")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.json")
        write(path)
        size = os.path.getsize(path)
        with open(path, encoding="utf-8") as f:
            data = (json.load(f), time.sleep(0.05))[0]  # LINE: load
        time.sleep(0.3)
        print(len(data), size // 1_000_000)
