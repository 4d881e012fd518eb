"""Builds 200 MiB inside a phase, then kills itself with SIGKILL: nothing after is run."""

import os
import signal

import memgauge

MIB = 1 << 20

if __name__ == "__main__":
    with memgauge.phase("doomed"):
        block = b"\x06" * (200 * MIB)
        os.kill(os.getpid(), signal.SIGKILL)
