"""What a container needs counts mapped file pages the run's group was not charged for (issue 16):
maps the file given (already in page cache, read by another group) and reads every page, held 0.3 s.
With ``child`` first, a child process does it and the parent only waits."""

import mmap
import subprocess
import sys
import time

if sys.argv[1] == "child":
    sys.exit(subprocess.run([sys.executable, __file__, sys.argv[2]], check=False).returncode)
with open(sys.argv[1], "rb") as f:
    mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
total = sum(mapped[i] for i in range(0, len(mapped), mmap.PAGESIZE))  # every page resident
time.sleep(0.3)
print(len(mapped) >> 20, total)
