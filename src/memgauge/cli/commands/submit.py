"""``memgauge submit``: send a program to a validation service, wait for its verdict, exit with it.

Exit codes: 0 within the policy, 1 over it, 2 the program failed or could not be run (or was
cancelled), 3 a limit could not be measured on the server's host and the policy does not allow
it; 64 usage, 65 the server refused the upload, 69 the server cannot be reached, 77 the token is
missing or refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from memgauge._env import ENV_SERVER, ENV_TOKEN
from memgauge._errors import (
    PermissionDeniedError,
    RefusedError,
    ServiceUnavailableError,
    TargetNotFoundError,
    UsageError,
)
from memgauge._files import check_output, write_output
from memgauge.cli._common import FAILED, OVER_BUDGET, PASSED, UNJUDGED, Program, say
from memgauge.cli._parser import Parser
from memgauge.cli._spelling import renamed_option

DEFAULT_SERVER = "http://127.0.0.1:8000"
_FINISHED = ("done", "failed", "cancelled")
_EXIT = {"pass": PASSED, "fail": OVER_BUDGET, "error": FAILED, "unmeasured": UNJUDGED}


def server_options(p: Parser, token: str) -> None:
    """``--server`` and ``--token``, for every command that talks to the service."""
    p.add_argument(
        "--server",
        default=os.environ.get(ENV_SERVER, DEFAULT_SERVER),
        metavar="URL",
        help=f"the service (default $MEMGAUGE_SERVER or {DEFAULT_SERVER})",
    )
    p.add_argument(
        "--token",
        default=os.environ.get(ENV_TOKEN),
        metavar="TOKEN",
        help=f"{token} (default $MEMGAUGE_TOKEN)",
    )


class SubmitCommand:
    name = "submit"
    summary = "send a program to it and exit with its verdict"
    usage: str | None = (
        "memgauge submit [options] --policy NAME (script.py | project.zip | project.tar.gz) [-- args ...]"
    )
    description = (
        "Submit a program to a memgauge validation service, show its progress and "
        "exit with its verdict: 0 within the policy, 1 over it, 2 the program failed, 3 a limit "
        "could not be measured."
    )
    examples: tuple[str, ...] = (
        "memgauge submit train.py --policy edge-pc  # wait for the verdict, exit with it",
        "memgauge submit project.zip --policy edge-pc --entry main.py -- --epochs 1",
        "memgauge submit train.py --policy edge-pc --no-wait  # print the id and go",
    )
    program: Program = "after-dashes"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument("upload", metavar="FILE", help="a .py file, or a .zip / .tar.gz project")
        p.add_argument("--policy", required=True, metavar="NAME", help="the policy to judge it by")
        p.add_argument(
            "--entry", metavar="PATH", help="a project's entry point (default main.py, or its only .py)"
        )
        server_options(p, "the API token")
        p.add_argument("--no-wait", action="store_true", help="print the submission's id and exit 0")
        p.add_argument(
            "--max-wait",
            type=float,
            metavar="SECONDS",
            help="stop waiting after this (exit 2; the run goes on)",
        )
        # its old spelling: --timeout bounds the run itself in sweep, not the wait
        p.add_argument("--timeout", type=float, dest="old_max_wait", help=argparse.SUPPRESS)
        p.add_argument("--json", metavar="PATH", help="write the submission's final record (JSON) here")
        p.add_argument("--html", metavar="PATH", help="write the run's HTML report here")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        if not args.token:
            raise PermissionDeniedError("give a token: --token mg_... or MEMGAUGE_TOKEN")
        renamed_option(args, "submit", "--timeout", "--max-wait", "SECONDS")
        if args.max_wait is not None and args.max_wait <= 0:
            raise UsageError("--max-wait must be positive")
        data = _read_upload(args.upload)
        for path in (args.json, args.html):
            if path is not None:
                check_output(path, "output")
        try:
            import httpx  # noqa: F401
        except ImportError:
            raise UsageError("memgauge submit needs memgauge[service] (httpx is missing)") from None
        client = Client(args.server, args.token)
        try:
            form = {"policy": args.policy, "args": json.dumps(program)}
            if args.entry is not None:
                form["entry"] = args.entry
            sub = client.submission(
                "POST",
                "/api/v1/submissions",
                data=form,
                files={"file": (os.path.basename(args.upload), data)},
            )
            page = f"{client.server}/ui/submissions/{sub['id']}"
            say(f"submitted {sub['id']} ({sub.get('filename')}, policy {sub.get('policy')}): {page}\n")
            if args.no_wait:
                print(sub["id"])
                return PASSED
            sub = _wait(client, sub, args.max_wait)
            if sub["status"] not in _FINISHED:
                say(f"memgauge submit: stopped waiting after {args.max_wait:g} s; the run goes on\n")
                return FAILED
            _outputs(client, sub, args)
            _print_result(client, sub)
            return _EXIT.get(sub.get("verdict") or "error", FAILED)
        finally:
            client.close()


def _read_upload(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise TargetNotFoundError(f"no such file: {path}") from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


class Client:
    """The API over httpx; every failure becomes one of memgauge's errors with the server's words."""

    def __init__(self, server: str, token: str, timeout: float = 30.0) -> None:
        import httpx

        self.server = server.rstrip("/")
        self._http = httpx.Client(
            base_url=self.server, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as e:
            raise ServiceUnavailableError(f"cannot reach {self.server}: {e}") from None
        if response.status_code < 400:
            return response
        detail = _detail(response)
        if response.status_code in (401, 403):
            raise PermissionDeniedError(f"{self.server} refused the token: {detail}")
        if response.status_code in (404, 409, 413, 422, 429):
            raise RefusedError(f"{self.server} refused it: {detail}")
        raise ServiceUnavailableError(f"{self.server} answered {response.status_code}: {detail}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise ServiceUnavailableError(
                f"{self.server} answered {response.status_code} with no JSON: is it a memgauge service?"
            ) from None

    def submission(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A submission record; anything else is the server's failure (exit 69), not ours."""
        sub = self.json(method, path, **kwargs)
        if not isinstance(sub, dict) or not all(isinstance(sub.get(k), str) for k in ("id", "status")):
            raise ServiceUnavailableError(f"{self.server} answered with no submission: {str(sub)[:200]}")
        return sub


def _detail(response: Any) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, list):  # FastAPI's validation errors
        detail = "; ".join(f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg')}" for d in detail)
    return str(detail or response.text[:200] or response.reason_phrase)


def _wait(client: Client, sub: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """Polls until the submission finishes, showing its status: a live line on a terminal, a line
    per change elsewhere."""
    start = time.monotonic()
    interactive = sys.stderr is not None and sys.stderr.isatty()
    last = ""
    delay = 0.2
    while sub["status"] not in _FINISHED:
        if timeout is not None and time.monotonic() - start >= timeout:
            break
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)
        sub = client.submission("GET", f"/api/v1/submissions/{sub['id']}")
        state = sub["status"] + (f" (attempt {sub['attempts']})" if sub.get("attempts", 0) > 1 else "")
        elapsed = time.monotonic() - start
        if interactive:
            say(f"\r\x1b[K{state}, {elapsed:.0f} s")
        elif state != last:
            say(f"{state} after {elapsed:.1f} s\n")
        last = state
    if interactive:
        say("\r\x1b[K")
    return sub


def _outputs(client: Client, sub: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json is not None:
        write_output(args.json, json.dumps(sub, indent=2) + "\n", "record")
    if args.html is not None and sub.get("status") == "done":
        html = client.request("GET", f"/api/v1/submissions/{sub['id']}/report").text
        write_output(args.html, html, "report")


def _limits_text(doc: Any) -> str:
    """The verdict's limits as ``memgauge check`` prints them (sizes and times in units)."""
    from memgauge.cli._formats import FORMATS, Judged, Look, need
    from memgauge.gate import Verdict, format_amount

    try:
        judged = Judged(Verdict.from_dict(doc), [], "")
        # indented under the submission's line, within 100 columns
        text = need(FORMATS["terminal"].verdict, "terminal")(judged, Look(width=98))
        return "".join(f"  {line}\n" for line in text.splitlines())
    except (ValueError, TypeError, AttributeError):
        lines = []
        for r in doc.get("results", []) if isinstance(doc, dict) else []:
            unit = r.get("unit") if r.get("unit") in ("bytes", "seconds") else None

            def shown(value: Any, unit: str | None = unit) -> str:
                return format_amount(value, unit) if unit and isinstance(value, (int, float)) else str(value)

            lines.append(
                f"  {r.get('key', '?')} <= {shown(r.get('limit'))}: {r.get('status', '?')} "
                f"({r.get('note') or shown(r.get('measured'))})\n"
            )
        return "".join(lines)


def _print_result(client: Client, sub: dict[str, Any]) -> None:
    from memgauge._units import format_bytes, format_seconds

    verdict = sub.get("verdict") or sub["status"]
    figures = []
    if sub.get("peak_rss_bytes") is not None:
        figures.append(f"container needs {format_bytes(sub['peak_rss_bytes'])}")
    if sub.get("wall_seconds") is not None:
        figures.append(f"wall {format_seconds(sub['wall_seconds'])}")
    say(f"{verdict.upper()}: {sub.get('reason') or ''}\n")
    if figures:
        say("  " + ", ".join(figures) + f" (policy {sub['policy']}: {sub['budget']})\n")
    if sub.get("status") == "done" and sub.get("verdict_json") is None:
        try:
            verdict_doc = client.json("GET", f"/api/v1/submissions/{sub['id']}/verdict")
        except (RefusedError, ServiceUnavailableError):
            verdict_doc = None
        if verdict_doc:
            say(_limits_text(verdict_doc))
    sandbox = sub.get("sandbox") or {}
    # a run that never started has every piece not applied for one reason: said once
    by_reason: dict[str, list[str]] = {}
    for name, why in (sandbox.get("not_applied") or {}).items():
        by_reason.setdefault(str(why), []).append(str(name))
    for why, names in by_reason.items():
        if len(names) == 1:
            say(f"  note: the sandbox's {names[0]} piece was not applied: {why}\n")
        else:
            say(f"  note: {len(names)} sandbox pieces were not applied ({', '.join(names)}): {why}\n")
    say(f"  report: {client.server}/ui/submissions/{sub['id']}\n")
