"""``memgauge policy`` and ``memgauge token``: a validation service's policies and tokens, managed
over its API with an admin token (``memgauge[service]``).

    memgauge policy set edge-pc 'rss=512MiB wall=30s' --description "the edge PCs"
    memgauge policy list | show NAME | delete NAME
    memgauge token create ci --role submitter      # the secret on stdout, shown this once
    memgauge token list | revoke ID

Exit codes as ``memgauge submit``: 65 the server refused it (a bad budget, an unknown name), 69 the
server cannot be reached, 77 no token or a refused one (not an admin's).
"""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from memgauge._errors import PermissionDeniedError, UsageError
from memgauge.cli._common import PASSED, Program, say
from memgauge.cli._parser import Parser
from memgauge.cli.commands.submit import Client, server_options


def _client(args: argparse.Namespace) -> Client:
    if not args.token:
        raise PermissionDeniedError("give an admin token: --token mg_... or MEMGAUGE_TOKEN")
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise UsageError("this needs the service extra: pip install 'memgauge[service]'") from None
    return Client(args.server, args.token)


def _operands(args: argparse.Namespace, action: str, names: tuple[str, ...]) -> list[str]:
    if len(args.operands) != len(names):
        wanted = " ".join(n.upper() for n in names)
        usage = f"memgauge {args.command} {action} {wanted}".rstrip()
        raise UsageError(f"{action} takes {wanted or 'nothing more'}: {usage}")
    return list(args.operands)


class PolicyCommand:
    name = "policy"
    summary = "a service's policies: list, show, set, delete"
    usage: str | None = "memgauge policy (list | show NAME | set NAME BUDGET | delete NAME) [options]"
    description = (
        "Manage a validation service's policies (named budgets submissions are judged by) with an "
        "admin token: set makes or replaces one, e.g. memgauge policy set edge-pc 'rss=512MiB wall=30s'."
    )
    examples: tuple[str, ...] = (
        "memgauge policy set edge-pc 'rss=512MiB wall=30s' --description 'the edge PCs'",
        "memgauge policy set gpu-box 'rss=8GiB gpu=20GiB' --allow-unmeasured  # pass where no GPU is seen",
        "memgauge policy list  # every policy and its budget",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("action", choices=["list", "show", "set", "delete"], help="what to do")
        parser.add_argument("operands", nargs="*", metavar="ARG", help="NAME, and BUDGET for set")
        parser.add_argument("--description", default="", help="set: what the policy is for")
        parser.add_argument(
            "--machine", default=None, metavar="NAME", help="set: admit each pass to this machine if it fits"
        )
        parser.add_argument(
            "--rule",
            choices=["worst", "p99", "p99.9"],
            default="worst",
            help="set: the admission's rule (the worst case, or that percentile under random offsets)",
        )
        parser.add_argument(
            "--allow-unmeasured",
            action="store_true",
            help="set: accept a limit the server's host cannot measure (a gpu limit without a GPU); "
            "without it such a run's verdict is unmeasured, never a pass",
        )
        server_options(parser, "an admin token")
        parser.set_defaults(command="policy")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        shapes = {"list": (), "show": ("name",), "set": ("name", "budget"), "delete": ("name",)}
        operands = _operands(args, args.action, shapes[args.action])
        client = _client(args)
        try:
            if args.action == "list":
                for p in client.json("GET", "/api/v1/policies"):
                    print(_policy_line(p))
            elif args.action == "show":
                print(_policy_line(client.json("GET", f"/api/v1/policies/{quote(operands[0], safe='')}")))
            elif args.action == "set":
                name, budget = operands
                response = client.request(
                    "PUT",
                    f"/api/v1/policies/{quote(name, safe='')}",
                    json={
                        "budget": budget,
                        "description": args.description,
                        "machine": args.machine,
                        "rule": args.rule,
                        "allow_unmeasured": args.allow_unmeasured,
                    },
                )
                made = "created" if response.status_code == 201 else "replaced"
                say(f"policy {name} {made}: {response.json().get('budget', budget)}\n")
            else:
                client.request("DELETE", f"/api/v1/policies/{quote(operands[0], safe='')}")
                say(f"policy {operands[0]} deleted (past submissions keep its budget)\n")
        finally:
            client.close()
        return PASSED


def _policy_line(p: Any) -> str:
    description = f"  # {p['description']}" if p.get("description") else ""
    machine = f"\t-> {p['machine']} ({p.get('rule')})" if p.get("machine") else ""
    allowed = " (unmeasured limits allowed)" if p.get("allow_unmeasured") else ""
    return f"{p.get('name')}\t{p.get('budget')}{allowed}{machine}{description}"


class TokenCommand:
    name = "token"
    summary = "a service's tokens: list, create, revoke"
    usage: str | None = "memgauge token (list | create NAME [--role ROLE] | revoke ID) [options]"
    description = (
        "Manage a validation service's API tokens with an admin token. create prints the new "
        "token's secret on stdout, the only time it is shown."
    )
    examples: tuple[str, ...] = (
        "memgauge token create ci --role submitter  # the secret on stdout, shown this once",
        "memgauge token list",
        "memgauge token revoke 3",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("action", choices=["list", "create", "revoke"], help="what to do")
        parser.add_argument("operands", nargs="*", metavar="ARG", help="NAME for create, ID for revoke")
        parser.add_argument(
            "--role", choices=["submitter", "admin"], default="submitter", help="create: (default submitter)"
        )
        server_options(parser, "an admin token")
        parser.set_defaults(command="token")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        shapes = {"list": (), "create": ("name",), "revoke": ("id",)}
        operands = _operands(args, args.action, shapes[args.action])
        if args.action == "revoke" and not operands[0].isdigit():
            raise UsageError(f"revoke takes a token's id (memgauge token list shows it), not {operands[0]!r}")
        client = _client(args)
        try:
            if args.action == "list":
                for t in client.json("GET", "/api/v1/tokens"):
                    revoked = "  revoked" if t.get("revoked_at") else ""
                    print(f"{t.get('id')}\t{t.get('role')}\t{t.get('prefix')}...\t{t.get('name')}{revoked}")
            elif args.action == "create":
                made = client.json("POST", "/api/v1/tokens", json={"name": operands[0], "role": args.role})
                say(f"token {made.get('id')} ({args.role}) {operands[0]}: its secret, shown this once:\n")
                print(made["token"])
            else:
                client.request("DELETE", f"/api/v1/tokens/{operands[0]}")
                say(f"token {operands[0]} revoked\n")
        finally:
            client.close()
        return PASSED
