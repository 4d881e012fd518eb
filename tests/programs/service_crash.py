"""For the service's tests: ``exit N`` ends with SystemExit(N); ``raise`` with an uncaught exception."""

import sys

if __name__ == "__main__":
    print("CRASHING", flush=True)
    if sys.argv[1:2] == ["raise"]:
        raise ValueError("service test crash")
    raise SystemExit(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
