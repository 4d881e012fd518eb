"""Ground truth for "an import line is never temporaries": a library (a module in a
``site-packages`` directory, so its frames fold into the program's line that imported it) builds
300 MiB (every page written) while it is imported and frees it before the import ends. The import
line holds the peak and keeps nearly nothing, the shape of the temporaries rule, yet what an import
holds is a library's footprint."""

import os
import sys
import tempfile
import time

MIB = 1 << 20
LIBRARY = """
_scratch = b"x" * (300 * (1 << 20))
import time
time.sleep(0.15)
del _scratch
"""

if __name__ == "__main__":
    root = os.path.join(tempfile.mkdtemp(), "site-packages")
    os.makedirs(root)
    with open(os.path.join(root, "heavy_at_import.py"), "w") as f:
        f.write(LIBRARY)
    sys.path.insert(0, root)
    import heavy_at_import  # LINE: import

    time.sleep(0.4)
    print(heavy_at_import.__name__)
