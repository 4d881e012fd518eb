"""For the service's tests: tries the network (a TCP connection to each HOST:PORT argument, and a
DNS lookup) and prints one line per try, ``CONNECT host:port OK`` or ``CONNECT host:port FAILED
<error>``, ``DNS name OK|FAILED ...``. Exits 0 either way: the test reads the output."""

import socket
import sys

if __name__ == "__main__":
    for target in sys.argv[1:]:
        host, _, port = target.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=3):
                print(f"CONNECT {target} OK", flush=True)
        except OSError as e:
            print(f"CONNECT {target} FAILED {type(e).__name__}: {e}", flush=True)
    for name in ("example.com", "localhost.localdomain.invalid-memgauge-test", "pypi.org"):
        try:
            socket.setdefaulttimeout(3)
            found = socket.getaddrinfo(name, 443)
            print(f"DNS {name} OK {found[0][4]}", flush=True)
        except OSError as e:
            print(f"DNS {name} FAILED {type(e).__name__}: {e}", flush=True)
