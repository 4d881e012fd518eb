"""Call-heavy pure Python (~2.5 s): a naive recursive fib, then a small class whose tiny methods are
called in a loop: ~50 million Python function and method calls with little work in each. The worst
case for tools that hook every call (memray follows each Python frame push and pop); a sampling
profiler should cost no more here than anywhere else."""

import os

FIB_N = int(os.environ.get("FIB_N", "35"))
STEPS = int(os.environ.get("STEPS", "12000000"))


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Counter:
    def __init__(self) -> None:
        self.total = 0
        self.count = 0

    def add(self, value: int) -> None:
        self.total += self.scale(value)
        self.count += 1

    def scale(self, value: int) -> int:
        return value * 3 % 17

    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


def run(steps: int) -> float:
    counter = Counter()
    for i in range(steps):
        counter.add(i)
    return counter.mean()


if __name__ == "__main__":
    print(fib(FIB_N), round(run(STEPS), 6))
