"""Plants, in the directory where memgauge's runner (root) reads the program's measurements, a link
to a root-only file and a FIFO (which would block whoever opens it), under the names it reads."""

import os

events = os.environ["MEMGAUGE_EVENTS_DIR"]
os.symlink("/etc/shadow", os.path.join(events, "events.1.jsonl"))
os.symlink("/etc/shadow", os.path.join(events, "lines.1.json"))
os.mkfifo(os.path.join(events, "events.2.jsonl"))
block = b"\x01" * (20 << 20)
print("planted")
