"""Ground truth for the waiting advice: a little work, then 1.5 s asleep on one line. The run
waits most of its wall time on that line, with the CPU idle."""

import time


def work() -> int:
    return sum(i * i for i in range(200_000))


if __name__ == "__main__":
    total = work()
    time.sleep(1.5)  # LINE: wait
    print(total > 0)
