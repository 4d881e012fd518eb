"""Leaves a daemon behind: a grandchild in a session of its own that sleeps for a minute, while
the program itself exits at once."""

import os
import time

print(os.getuid(), flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
os.wait()
