"""Prints 10 MiB, then sleeps: only an output limit stops it early."""

import sys
import time

line = "x" * 1023 + "\n"
for _ in range(10 * 1024):
    sys.stdout.write(line)
sys.stdout.flush()
time.sleep(60)
