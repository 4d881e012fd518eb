"""``memgauge machine``: a validation service's machines, each pass of a policy naming one admitted
to it while it fits (``memgauge[service]``).

    memgauge machine set edge-1 8GiB --cores 4       # an admin token
    memgauge machine list | show NAME | delete NAME  # list and show: each machine's fill
    memgauge machine release SUBMISSION_ID           # the owner's or an admin's token

Exit codes as ``memgauge policy``: 65 the server refused it, 69 unreachable, 77 the token.
"""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from memgauge.cli._common import PASSED, Program, say
from memgauge.cli._parser import Parser
from memgauge.cli.commands.manage import _client, _operands
from memgauge.cli.commands.submit import server_options


class MachineCommand:
    name = "machine"
    summary = "a service's machines and their fill: list, show, set, delete, release"
    usage: str | None = (
        "memgauge machine (list | show NAME | set NAME MEMORY --cores N | delete NAME | release ID) [options]"
    )
    description = (
        "Manage the machines a validation service admits passes to (a policy names one): set makes "
        "or replaces one, e.g. memgauge machine set edge-1 8GiB --cores 4; list and show give each "
        "machine's fill; release frees the share a submission holds."
    )
    examples: tuple[str, ...] = (
        "memgauge machine set edge-1 8GiB --cores 4 --description 'the edge PCs'",
        "memgauge machine show edge-1  # its fill: each held share",
        "memgauge machine release 3f2a9c  # free the share a submission holds",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("action", choices=["list", "show", "set", "delete", "release"], help="what to do")
        parser.add_argument("operands", nargs="*", metavar="ARG", help="NAME (and MEMORY for set), or an ID")
        parser.add_argument("--cores", type=int, default=1, help="set: the machine's cores (default 1)")
        parser.add_argument("--description", default="", help="set: what the machine is")
        server_options(parser, "an admin token (release: the submission owner's)")
        parser.set_defaults(command="machine")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        shapes = {
            "list": (),
            "show": ("name",),
            "set": ("name", "memory"),
            "delete": ("name",),
            "release": ("id",),
        }
        operands = _operands(args, args.action, shapes[args.action])
        client = _client(args)
        try:
            if args.action == "list":
                for m in client.json("GET", "/api/v1/machines"):
                    print(_machine_line(m))
            elif args.action == "show":
                m = client.json("GET", f"/api/v1/machines/{quote(operands[0], safe='')}")
                print(_machine_line(m))
                for share in m.get("shares", []):
                    whose = share.get("submission") or "(another owner's)"
                    print(f"  {whose}\t{share.get('policy')}\t{_mib(share)}")
            elif args.action == "set":
                name, memory = operands
                body = {"memory": memory, "cores": args.cores, "description": args.description}
                response = client.request("PUT", f"/api/v1/machines/{quote(name, safe='')}", json=body)
                made = "created" if response.status_code == 201 else "replaced"
                say(f"machine {name} {made}: {_machine_line(response.json())}\n")
            elif args.action == "delete":
                client.request("DELETE", f"/api/v1/machines/{quote(operands[0], safe='')}")
                say(f"machine {operands[0]} deleted\n")
            else:
                sub = client.json("POST", f"/api/v1/submissions/{quote(operands[0], safe='')}/release")
                say(f"submission {operands[0]} released its share of {sub.get('machine')}\n")
        finally:
            client.close()
        return PASSED


def _mib(share: Any) -> str:
    from memgauge._units import format_bytes

    return format_bytes(int(share.get("share_bytes") or 0))


def _machine_line(m: Any) -> str:
    from memgauge._units import format_bytes

    held, memory = int(m.get("held_bytes") or 0), int(m.get("memory_bytes") or 0)
    shares = len(m.get("shares") or [])
    return (
        f"{m.get('name')}\t{format_bytes(memory)}, {m.get('cores')} cores\t"
        f"held {format_bytes(held)} by {shares}, free {format_bytes(memory - held)}"
    )
