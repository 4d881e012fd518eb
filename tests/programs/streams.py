"""Prints on both streams, echoes stdin, reports argv and cwd, exits 3."""

import json
import os
import sys

if __name__ == "__main__":
    data = sys.stdin.read()
    print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "stdin": data, "path0": sys.path[0]}))
    print("to-stderr", file=sys.stderr)
    sys.exit(3)
