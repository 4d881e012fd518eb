"""For the service's tests: prints its arguments as one JSON line (and, in a project, a value from
a sibling module, to show the whole project was unpacked next to it)."""

import json
import sys

try:
    from helper import VALUE  # only in the archive uploads
except ImportError:
    VALUE = None

if __name__ == "__main__":
    print("ARGS " + json.dumps({"args": sys.argv[1:], "helper": VALUE}), flush=True)
