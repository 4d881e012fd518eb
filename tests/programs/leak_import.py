"""Ground truth: not a leak. A library (a module in a ``site-packages`` directory, so its frames
fold into the program's import line) grows steadily while it is imported, 2 MiB every 20 ms for
about a second, and keeps it all: the shape of a leak on the import line, yet an import is a
one-off cost (issue 16). The program then does nothing for a moment."""

import os
import sys
import tempfile
import time

LIBRARY = """
import time
_tables = []
for _ in range(50):
    _tables.append(b"t" * (2 << 20))
    time.sleep(0.02)
"""

if __name__ == "__main__":
    root = os.path.join(tempfile.mkdtemp(), "site-packages")
    os.makedirs(root)
    with open(os.path.join(root, "slow_tables.py"), "w") as f:
        f.write(LIBRARY)
    sys.path.insert(0, root)
    import slow_tables  # LINE: import

    time.sleep(0.1)
    print(len(slow_tables._tables))
