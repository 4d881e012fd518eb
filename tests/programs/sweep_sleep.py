"""Sleeps SLEEP seconds (for timeouts and interrupts), after writing STARTED_FILE if set."""

import os
import time

if os.environ.get("STARTED_FILE"):
    with open(os.environ["STARTED_FILE"], "a") as f:
        f.write(os.environ.get("N", "") + "\n")
time.sleep(float(os.environ.get("SLEEP", "60")))
