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
from memgauge.cli._common import PASSED, Parser, Program, say
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
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("action", choices=["list", "show", "set", "delete"], help="what to do")
        parser.add_argument("operands", nargs="*", metavar="ARG", help="NAME, and BUDGET for set")
        parser.add_argument("--description", default="", help="set: what the policy is for")
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
                    json={"budget": budget, "description": args.description},
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
    return f"{p.get('name')}\t{p.get('budget')}{description}"


class TokenCommand:
    name = "token"
    summary = "a service's tokens: list, create, revoke"
    usage: str | None = "memgauge token (list | create NAME [--role ROLE] | revoke ID) [options]"
    description = (
        "Manage a validation service's API tokens with an admin token. create prints the new "
        "token's secret on stdout, the only time it is shown."
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
