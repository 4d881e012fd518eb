"""Sandbox probe: holds 100 MiB (every page written) at a known line, then reports as one JSON line
who it runs as, its environment, and what it can reach: the network, a local unix socket, and the
files named on its command line."""

import json
import os
import socket
import sys
import time

MIB = 1 << 20


def hold() -> bytes:
    # allocated and held on one line: a sample taken during the sleep still lands on this line
    return (b"\x01" * (100 * MIB), time.sleep(0.2))[0]  # LINE: hold


def attempt(action) -> str:  # type: ignore[no-untyped-def]
    try:
        action()
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    return "ok"


def unix_connect(path: str) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(2)
        s.connect(path)


def main() -> None:
    kept = hold()
    report = {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        # a sandboxed run's environment is small and checked whole; an unsandboxed one inherits
        # the host's, which can outgrow the output tail the test reads: PROBE_ENV names the keys
        "env": (
            {k: v for k, v in os.environ.items() if k in os.environ["PROBE_ENV"].split(",")}
            if "PROBE_ENV" in os.environ
            else dict(os.environ)
        ),
        "cwd": os.getcwd(),
        "cwd_files": sorted(os.listdir(".")),
        # the sandboxes' run directories only: without a mount namespace /tmp is the host's, and
        # all of it could outgrow the output tail the test reads
        "tmp": sorted(n for n in os.listdir("/tmp") if n.startswith("memgauge-sandbox-")),
        "visible_pids": sum(name.isdigit() for name in os.listdir("/proc")),
        "tcp_postgres": attempt(lambda: socket.create_connection(("127.0.0.1", 5432), timeout=2).close()),
        "tcp_remote": attempt(lambda: socket.create_connection(("1.1.1.1", 443), timeout=2).close()),
        "unix_postgres": attempt(lambda: unix_connect("/var/run/postgresql/.s.PGSQL.5432")),
        "resolve": attempt(lambda: socket.getaddrinfo("example.com", 80)),
        "reads": {path: attempt(lambda path=path: open(path, "rb").close()) for path in sys.argv[1:]},
        "held_mib": len(kept) // MIB,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
