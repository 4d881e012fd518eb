"""Sleeps SLEEP_<N> seconds, else SLEEP (for timeouts and interrupts), after writing STARTED_FILE if
set."""

import os
import time

if os.environ.get("STARTED_FILE"):
    with open(os.environ["STARTED_FILE"], "a") as f:
        f.write(os.environ.get("N", "") + "\n")
n = os.environ.get("N", "")
time.sleep(float(os.environ.get(f"SLEEP_{n}", os.environ.get("SLEEP", "60"))))
