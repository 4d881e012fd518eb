"""Tries to start 200 threads and reports, as its last line, how many it got."""

import threading

release = threading.Event()
started = 0
try:
    for _ in range(200):
        threading.Thread(target=release.wait).start()
        started += 1
except RuntimeError as e:
    print("refused:", e)
release.set()
print(started)
