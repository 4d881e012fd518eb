"""Run a Python script as ``python script.py args`` would, and record the kernel's resident peak.

Usage: ``python bench/_hwm.py script.py [args ...]`` with ``MEMGAUGE_BENCH_HWM_FILE`` set. At exit it
writes this process's ``VmHWM`` (bytes) from ``/proc/self/status`` to that file. It writes to a file,
not stdout, so the program's own output is untouched. The wrapper adds the imports of ``runpy`` and
``pkgutil`` and one ``atexit`` hook: on the empty program we measured ~15-20 ms and ~2 MiB resident
(Python 3.11), negligible next to a real program. The benchmark times these runs too, so that cost
is measured, not assumed.
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys

ENV_VAR = "MEMGAUGE_BENCH_HWM_FILE"


def _vm_hwm_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # the kernel reports kB (KiB)
    raise RuntimeError("no VmHWM in /proc/self/status")


def _write_hwm(path: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(f"{_vm_hwm_bytes()}\n")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: _hwm.py script.py [args ...]")
    out = os.environ.get(ENV_VAR)
    if not out:
        sys.exit(f"_hwm.py: set {ENV_VAR} to the file that receives the peak")
    script = os.path.abspath(sys.argv[1])
    # look exactly like `python script.py args`: argv and sys.path[0] as the interpreter sets them
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(script)
    # atexit hooks run after the script (also on SystemExit or an exception), before teardown
    atexit.register(_write_hwm, out)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
