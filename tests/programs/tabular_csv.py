"""A tabular program: writes a CSV of ROWS rows (six float columns, two text columns of few distinct
values) in a temporary directory, reads it back with ``pandas.read_csv`` and works on the frame.

``HAND=dtypes`` reads it with the smaller types written by hand (float32 and category), the
conversion ``memgauge fit --remedies dtypes`` makes by hooks: the plain run the hooked one is checked
against. The file is written with the csv module, row by row, so that writing it adds nothing to
the resident peak that reading it sets. Prints the frame's own size (``memory_usage(deep=True)``)
and its column types to stderr as JSON."""

import csv
import json
import os
import random
import sys
import tempfile

import pandas as pd

ROWS = 400_000
FLOATS = [f"x{i}" for i in range(6)]
CITIES = ["Lyon", "Oslo", "Lima", "Pune", "Kobe", "Graz", "Cork", "Nice"]
KINDS = ["train", "test", "holdout"]
HAND = os.environ.get("HAND", "")

rng = random.Random(0)
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "table.csv")
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([*FLOATS, "city", "kind"])
        for _ in range(ROWS):
            out.writerow([*(f"{rng.random():.6f}" for _ in FLOATS), rng.choice(CITIES), rng.choice(KINDS)])
    if HAND == "dtypes":
        frame = pd.read_csv(
            path, dtype={**dict.fromkeys(FLOATS, "float32"), "city": "category", "kind": "category"}
        )
    else:
        frame = pd.read_csv(path)
    # work whose memory follows the columns' widths: shuffled copies (a text column's copy is a
    # pointer per row, a category's one byte), a scaled copy and a per-group mean
    shuffled = [frame.sample(frac=1.0, random_state=seed) for seed in range(3)]
    scaled = frame[FLOATS] * 2.0
    means = frame.groupby(["city", "kind"], observed=True)[FLOATS].mean()
    print(
        json.dumps(
            {
                "frame_bytes": int(frame.memory_usage(deep=True).sum()),
                "dtypes": {str(c): str(t) for c, t in frame.dtypes.items()},
                "groups": len(means),
            }
        ),
        file=sys.stderr,
    )
