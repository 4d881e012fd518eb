"""Phases with known peaks (every byte written, so resident == allocated):
load: 300 MiB, with a nested parse phase that adds 100 MiB transiently; fit: 200 MiB;
fit also runs in a forked child process that holds 50 MiB in its own "child-work" phase."""

import multiprocessing as mp
import sys

import memgauge

MIB = 1 << 20


@memgauge.phase("child-work")
def child_work() -> None:
    block = b"\x07" * (50 * MIB)
    del block


def load() -> bytes:
    with memgauge.phase("load"):
        data = b"\x08" * (300 * MIB)
        with memgauge.phase("parse"):
            tmp = b"\x09" * (100 * MIB)
            del tmp
    return data


@memgauge.phase
def fit() -> int:
    model = b"\x0a" * (200 * MIB)
    return len(model)


if __name__ == "__main__":
    data = load()
    del data
    fit()
    ctx = mp.get_context(sys.argv[1] if len(sys.argv) > 1 else "fork")
    p = ctx.Process(target=child_work)
    p.start()
    p.join()
