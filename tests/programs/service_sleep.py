"""For the service's tests: prints START, sleeps SECONDS (first argument, default 2), prints END."""

import sys
import time

if __name__ == "__main__":
    print("START", flush=True)
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
    print("END", flush=True)
