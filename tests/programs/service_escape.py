"""For the service's tests: tries to read each PATH argument (a file, or a directory's listing)
and prints ``READ path OK <n> bytes`` / ``LIST path OK [...]`` or ``... FAILED <error>``; then
walks the directories above its own, looking for a file named by ``--find NAME``. Exits 0."""

import os
import sys

if __name__ == "__main__":
    args = sys.argv[1:]
    find = None
    if "--find" in args:
        i = args.index("--find")
        find = args[i + 1]
        del args[i : i + 2]
    print(f"CWD {os.getcwd()} UID {os.getuid()}", flush=True)
    for path in args:
        try:
            if os.path.isdir(path):
                print(f"LIST {path} OK {sorted(os.listdir(path))[:20]}", flush=True)
            else:
                with open(path, "rb") as f:
                    print(f"READ {path} OK {len(f.read())} bytes", flush=True)
        except OSError as e:
            print(f"READ {path} FAILED {type(e).__name__}: {e}", flush=True)
    if find:
        here = os.path.abspath(os.getcwd())
        roots = {os.path.dirname(here), os.path.dirname(os.path.dirname(here)), "/tmp", "/var/tmp"}
        seen = 0
        for root in sorted(roots):
            for base, _dirs, files in os.walk(root):
                seen += 1
                if seen > 20000:
                    break
                if find in files:
                    path = os.path.join(base, find)
                    try:
                        with open(path, "rb") as f:
                            print(f"FOUND {path} READ OK {len(f.read())} bytes", flush=True)
                    except OSError as e:
                        print(f"FOUND {path} READ FAILED {type(e).__name__}: {e}", flush=True)
        print("SEARCHED", flush=True)
