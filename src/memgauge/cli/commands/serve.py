"""``memgauge serve``: the validation service (``memgauge[service]``)."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys

from memgauge._env import ENV_ADMIN_TOKEN
from memgauge._errors import ServiceUnavailableError, UsageError
from memgauge.cli._common import Program
from memgauge.cli._parser import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.service import FrontLimits, Settings

DEFAULT_PORT = 8000


class ServeCommand:
    name = "serve"
    summary = "the validation service"
    usage: str | None = None
    description = (
        "Serve the validation service: an HTTP API and web UI that accept Python "
        "programs, run each sandboxed under memgauge and judge it against a policy. The first "
        "start makes an admin token and writes it to DATA_DIR/admin-token."
    )
    examples: tuple[str, ...] = (
        "memgauge serve  # on 127.0.0.1:8000, SQLite in ./memgauge-data",
        "memgauge serve --host 0.0.0.0 --db postgresql://memgauge@db/memgauge --workers 2",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
        p.add_argument(
            "--db",
            metavar="URL",
            help="database URL: postgresql://user@host/db to share one between servers (default: "
            "a SQLite file in the data directory)",
        )
        p.add_argument(
            "--data-dir",
            default="memgauge-data",
            metavar="DIR",
            help="the server's own files: the SQLite database, the first admin token (default "
            "./memgauge-data, made mode 0700; hidden from every run)",
        )
        p.add_argument(
            "--engine", choices=["local", "ray"], default="local", help="where runs go (default local)"
        )
        p.add_argument("--address", metavar="ADDR", help="the Ray cluster (--engine ray), e.g. auto")
        p.add_argument(
            "--workers",
            type=int,
            default=1,
            metavar="N",
            help="runs at once at most (default 1: exact times)",
        )
        p.add_argument("--max-upload", default="16MiB", metavar="SIZE", help="largest upload (default 16MiB)")
        p.add_argument(
            "--max-memory",
            default="4GiB",
            metavar="SIZE",
            help="memory limit of every run; a policy's rss limit is enforced below it (default 4GiB)",
        )
        p.add_argument(
            "--max-wall",
            default="10min",
            metavar="TIME",
            help="wall-time limit of every run; a policy's wall limit is enforced below it (default 10min)",
        )
        p.add_argument(
            "--max-processes", type=int, default=64, metavar="N", help="processes per run (default 64)"
        )
        p.add_argument("--max-output", default="1MiB", metavar="SIZE", help="a run's output (default 1MiB)")
        p.add_argument(
            "--max-disk",
            default="1GiB",
            metavar="SIZE",
            help="what a run may write in all; a policy's disk limit is enforced below it (default 1GiB)",
        )
        p.add_argument(
            "--max-queued",
            type=int,
            default=100,
            metavar="N",
            help="submissions one token may have queued or running (default 100)",
        )
        p.add_argument(
            "--max-stored",
            default="1GiB",
            metavar="SIZE",
            help="bytes one token's submissions may keep: uploads, profiles, output (default 1GiB)",
        )
        p.add_argument(
            "--admin-token",
            metavar="TOKEN",
            default=os.environ.get(ENV_ADMIN_TOKEN),
            help="an admin token to accept (default $MEMGAUGE_ADMIN_TOKEN; none: one is made at the "
            "first start)",
        )
        p.add_argument(
            "--max-connections",
            type=int,
            default=4096,
            metavar="N",
            help="connections open at once (default 4096; the open-files limit is raised for them); "
            "past it a new one closes the oldest still sending its request headers",
        )
        p.add_argument(
            "--max-connections-per-client",
            type=int,
            default=128,
            metavar="N",
            help="connections open at once from one client address (default 128)",
        )
        p.add_argument(
            "--header-timeout",
            default="10s",
            metavar="TIME",
            help="a connection's request headers must be complete this long after it opened or after "
            "its last response, else it is closed (default 10s)",
        )
        p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        try:
            import uvicorn

            from memgauge.service import create_app
        except ImportError as e:
            raise UsageError(
                "memgauge serve needs the service extra: pip install 'memgauge[service]' "
                f"({e.name} is missing)"
            ) from None
        from memgauge.service import database_url, open_database, prepare_data_dir, run_server

        settings = settings_from(args)
        limits = front_limits(args)
        # the port first: a server that cannot listen must say so before it prints its address or
        # makes a token
        sock = _listen(args.host, args.port)

        # a database that cannot be opened fails here, with a message and exit 64, not in uvicorn
        prepare_data_dir(settings)
        open_database(database_url(settings.db_url, settings.data_dir)).close()
        app = create_app(settings)
        print(
            f"memgauge serve: http://{args.host}:{args.port}/ (engine {settings.engine}, "
            f"{settings.workers} worker{'s' if settings.workers != 1 else ''}, data in {settings.data_dir})",
            file=sys.stderr,
            flush=True,
        )
        del uvicorn  # imported above only to say early that the extra is missing
        run_server(app, sock, limits, log_level=args.log_level)
        return 0


def front_limits(args: argparse.Namespace) -> FrontLimits:
    from memgauge._units import parse_seconds
    from memgauge.service import FrontLimits

    if args.max_connections < 1:
        raise UsageError("--max-connections must be at least 1")
    if args.max_connections_per_client < 1:
        raise UsageError("--max-connections-per-client must be at least 1")
    try:
        header = parse_seconds(args.header_timeout)
    except ValueError:
        raise UsageError(f"--header-timeout takes a time such as 10s, not {args.header_timeout!r}") from None
    if header <= 0:
        raise UsageError("--header-timeout must be above 0")
    return FrontLimits(args.max_connections, args.max_connections_per_client, header)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or ServiceUnavailableError (exit 69) saying why not."""
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = info[0]
        sock = socket.socket(family, kind, proto)
    except OSError as e:
        raise ServiceUnavailableError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as e:
        sock.close()
        why = "the port is in use (another server?)" if e.errno == errno.EADDRINUSE else e.strerror
        raise ServiceUnavailableError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(False)
    return sock


def settings_from(args: argparse.Namespace) -> Settings:
    from memgauge._units import parse_bytes, parse_seconds
    from memgauge.service import Settings

    def size(option: str, text: str) -> int:
        try:
            return parse_bytes(text)
        except ValueError:
            raise UsageError(f"{option} takes a size such as 512MiB, not {text!r}") from None

    try:
        wall = parse_seconds(args.max_wall)
    except ValueError:
        raise UsageError(f"--max-wall takes a time such as 30s or 10min, not {args.max_wall!r}") from None
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.max_processes < 1:
        raise UsageError("--max-processes must be at least 1")
    if args.max_queued < 1:
        raise UsageError("--max-queued must be at least 1")
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1-65535, not {args.port}")
    if args.address is not None and args.engine != "ray":
        raise UsageError("--address is for --engine ray")
    if args.admin_token is not None and (
        not args.admin_token.startswith("mg_") or len(args.admin_token) < 20
    ):
        raise UsageError("--admin-token: a token starts with mg_ and has at least 20 characters")
    return Settings(
        data_dir=args.data_dir,
        db_url=args.db,
        engine=args.engine,
        address=args.address,
        workers=args.workers,
        max_upload_bytes=size("--max-upload", args.max_upload),
        max_memory_bytes=size("--max-memory", args.max_memory),
        max_wall_seconds=wall,
        max_processes=args.max_processes,
        max_output_bytes=size("--max-output", args.max_output),
        max_disk_bytes=size("--max-disk", args.max_disk),
        max_queued=args.max_queued,
        max_stored_bytes=size("--max-stored", args.max_stored),
        admin_token=args.admin_token,
    )
