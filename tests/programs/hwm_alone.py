"""Runs a script as `python script` would and writes the process's VmHWM at exit to $HWM_OUT:
the kernel's own figure for the program run alone, to compare memgauge against."""

import atexit
import os
import runpy
import sys


def report() -> None:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                with open(os.environ["HWM_OUT"], "w") as out:
                    out.write(str(int(line.split()[1]) * 1024))


atexit.register(report)
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
