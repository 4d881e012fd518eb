"""Waits for SIGTERM or SIGINT; reports which arrived in a file, exits 7 (TERM) or 8 (INT)."""

import signal
import sys
import time

got: list[int] = []
signal.signal(signal.SIGTERM, lambda s, f: got.append(s))
signal.signal(signal.SIGINT, lambda s, f: got.append(s))
open(sys.argv[1] + ".ready", "w").close()
deadline = time.monotonic() + 20
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.2)  # a second, duplicated delivery would show up here
with open(sys.argv[1], "w") as f:
    f.write(",".join(signal.Signals(s).name for s in got))
sys.exit({signal.SIGTERM: 7, signal.SIGINT: 8}.get(got[0], 1) if got else 1)
