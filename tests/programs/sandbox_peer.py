"""Two sandboxed runs at once. ``write TOKEN``: leave TOKEN in marker.txt in the working directory
and wait (up to 20 s) until someone outside removes it. ``read PATH``: try to read another run's
file, and report what this run sees of /tmp, as one JSON line."""

import json
import os
import sys
import time

if sys.argv[1] == "write":
    with open("marker.txt", "w") as f:
        f.write(sys.argv[2])
    deadline = time.monotonic() + 20
    while os.path.exists("marker.txt") and time.monotonic() < deadline:
        time.sleep(0.02)
    print(json.dumps({"cwd": os.getcwd(), "uid": os.getuid()}))
else:
    path = sys.argv[2]
    try:
        with open(path) as f:
            read = "ok: " + f.read()
    except OSError as e:
        read = f"{type(e).__name__}: {e}"
    print(json.dumps({"read": read, "tmp": sorted(os.listdir("/tmp")), "uid": os.getuid()}))
