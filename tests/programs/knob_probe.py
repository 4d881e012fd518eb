"""Reports how it was run (its ``__file__``, ``__name__``, ``sys.argv``, the constant, and what
``os.getenv`` gives), then fails on purpose at a known line when the constant is over 100, so a
test can check that the traceback points at this file and line."""

import json
import os
import sys

BATCH_SIZE = 8
OTHER: int = 3

print(
    json.dumps(
        {
            "file": __file__,
            "name": __name__,
            "argv": sys.argv,
            "batch": BATCH_SIZE,
            "other": OTHER,
            "env": os.getenv("READ_ME"),
            "main_is_me": sys.modules["__main__"].__dict__.get("BATCH_SIZE") == BATCH_SIZE,
        }
    )
)
if BATCH_SIZE > 100:
    raise ValueError("batch too large")  # line 26: the test checks the traceback names it
