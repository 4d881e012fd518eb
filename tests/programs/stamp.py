"""Records when it ran: writes ``pid start end cwd`` (monotonic seconds, comparable across the
processes of one machine) to the file named by its first argument, after sleeping
STAMP_SECONDS (default 0.5). The pid and start are written first, so a run stopped while it
sleeps still says which process it was."""

import os
import sys
import time

if __name__ == "__main__":
    path = sys.argv[1]
    start = time.monotonic()
    with open(path, "w") as f:
        f.write(f"{os.getpid()} {start}\n")
    time.sleep(float(os.environ.get("STAMP_SECONDS", "0.5")))
    end = time.monotonic()
    with open(path, "w") as f:
        f.write(f"{os.getpid()} {start} {end} {os.getcwd()}\n")
