"""Ground truth for ``check --prove``: a program whose child needs more on later runs. Each run
counts itself in the file named by $PROVE_COUNTER; the first run's child writes 40 MiB, every later
run's child 300 MiB (a data set that grew between the measured run and the proof): the measured run
passes a 150 MiB budget, and the proof under 150 MiB must be OOM-killed."""

import os
import subprocess
import sys

if __name__ == "__main__":
    path = os.environ["PROVE_COUNTER"]
    runs = 0
    if os.path.exists(path):
        with open(path) as f:
            runs = int(f.read())
    with open(path, "w") as f:
        f.write(str(runs + 1))
    mib = 40 if runs == 0 else 300
    code = f"held = b'\\x07' * ({mib} << 20); print(len(held) >> 20)"
    sys.exit(subprocess.run([sys.executable, "-c", code]).returncode)
