"""Ground truth: a worker thread builds 500 MiB while the main thread waits."""

import threading

MIB = 1 << 20
out: list[int] = []


def work() -> None:
    block = b"\x05" * (500 * MIB)  # LINE: thread
    out.append(len(block))
    del block


if __name__ == "__main__":
    t = threading.Thread(target=work)
    t.start()
    t.join()
    print(out[0] // MIB)
