"""The service's validation and access rules, one place for the API and the web UI: what a policy
name, a submission id, a token name or a policy's text may be, what a role may do and see.

The API publishes the patterns and limits in its OpenAPI schema (FastAPI checks them there); the
UI, whose forms are not FastAPI models, asks the ``*_error`` functions, which say why a value is
refused (None when it is not). The limits are what the tables hold (``_models.py``): PostgreSQL
refuses longer text, or any NUL, with an error, so such values are refused before they reach it,
on every database alike.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memgauge.service._models import Submission, Token
    from memgauge.service._store import Usage

Role = Literal["submitter", "admin"]
# submitter: its own submissions; admin: policies, tokens and every submission
ROLES: tuple[Role, ...] = get_args(Role)

POLICY_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
POLICY_NAME_RULE = "name: 1 to 100 letters, digits, '_', '.' or '-', starting with a letter or digit"
MAX_POLICY_NAME = 100
SUBMISSION_ID = r"^[0-9a-f]{32}$"
NO_NUL = r"^[^\x00]*$"
MAX_TOKEN_NAME = 200
MAX_POLICY_TEXT = 2000  # a policy's budget, and its description
MAX_FILENAME = 255
MAX_ENTRY = 1000
MAX_ARGS = 1000
MAX_ARGS_CHARS = 100_000
MAX_ID = 2**31 - 1  # token ids (and owners): a PostgreSQL integer
MAX_OFFSET = 10**9
PAGE_SIZE, MAX_PAGE_SIZE = 50, 500
# the whole-run metrics every run is measured (and stopped) by, whatever the host
MEASURED = ("rss", "wall", "cpu", "disk")
EMPTY_BUDGET = "budget: give at least one limit, e.g. 'rss=512MiB wall=30s'"

_POLICY_NAME = re.compile(POLICY_NAME)
_SUBMISSION_ID = re.compile(SUBMISSION_ID)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_policy_name(text: str) -> bool:
    return _POLICY_NAME.fullmatch(text) is not None


def is_submission_id(text: str) -> bool:
    return _SUBMISSION_ID.fullmatch(text) is not None


def parse_id(text: str) -> int | None:
    """A token id written in a URL, None when it cannot be one."""
    if not text.isdigit() or len(text) > len(str(MAX_ID)):
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ID else None


# -- who may do what -------------------------------------------------------------------------------


def is_admin(token: Token) -> bool:
    return token.role == "admin"


def may_see(token: Token, sub: Submission) -> bool:
    """A submission is its owner's, and every admin's."""
    return is_admin(token) or sub.owner_id == token.id


def listed_owner(token: Token, owner: int | None) -> int | None:
    """Whose submissions a list shows: an admin's choice (None: everyone's), a submitter's own."""
    return owner if is_admin(token) else token.id


def is_last_admin(token: Token, tokens: Iterable[Token]) -> bool:
    """Whether revoking ``token`` would leave no admin token (``tokens``: all of them): refused,
    since no one could then make another."""
    if not is_admin(token) or token.revoked_at is not None:
        return False
    return sum(is_admin(t) and t.revoked_at is None for t in tokens) <= 1


# -- what a value may be ---------------------------------------------------------------------------


def token_name_error(name: str) -> str | None:
    if not 1 <= len(name) <= MAX_TOKEN_NAME:
        return f"name: 1 to {MAX_TOKEN_NAME} characters"
    if "\0" in name:
        return "name: no NUL characters"
    return None


def role_error(role: str) -> str | None:
    return None if role in ROLES else f"role: one of {', '.join(ROLES)}"


def budget_error(budget: str) -> str | None:
    """Why a policy's budget is refused: unreadable, or without a limit (a policy without limits
    would pass everything)."""
    from memgauge.gate import BudgetError, parse_budget

    try:
        parsed = parse_budget(budget, source="budget")
    except BudgetError as e:
        return str(e)
    if not parsed:
        return EMPTY_BUDGET
    if not any(limit.phase is None and limit.metric in MEASURED for limit in parsed):
        return (
            f"budget: give at least one whole-run limit the service measures ({', '.join(MEASURED)}); "
            "gpu and phase limits alone would pass a program that never reaches them"
        )
    return None


PROVE_RULE = (
    "prove: a proof runs the program under the budget's whole-run rss as a hard limit; give one "
    "(e.g. 'rss=512MiB wall=30s')"
)


def prove_error(budget: str, prove: bool) -> str | None:
    """Why ``prove`` is refused for ``budget``: there is no whole-run rss limit to prove."""
    from memgauge.gate import BudgetError, parse_budget

    if not prove:
        return None
    try:
        parsed = parse_budget(budget, source="budget")
    except BudgetError:
        return None  # budget_error says why
    return None if parsed.get("rss") is not None else PROVE_RULE


def policy_error(name: str, budget: str, description: str, prove: bool = False) -> str | None:
    """Why a policy (its name, budget, description and ``prove``) is refused, as the API's PUT
    refuses it."""
    if not is_policy_name(name):
        return POLICY_NAME_RULE
    if not budget.strip():
        return EMPTY_BUDGET
    if len(budget) > MAX_POLICY_TEXT or len(description) > MAX_POLICY_TEXT:
        return f"budget and description: at most {MAX_POLICY_TEXT} characters each"
    if "\0" in budget or "\0" in description:
        return "budget and description: no NUL characters"
    return budget_error(budget) or prove_error(budget, prove)


def filename_error(name: str) -> str | None:
    if len(name) > MAX_FILENAME or _CONTROL.search(name):
        return f"file: a name of at most {MAX_FILENAME} characters, without control characters"
    return None


def entry_error(entry: str) -> str | None:
    return f"entry: a path of at most {MAX_ENTRY} characters" if len(entry) > MAX_ENTRY else None


def quota_error(usage: Usage, upload_bytes: int, max_queued: int, max_stored_bytes: int) -> str | None:
    """Why a token may not submit now: its submissions waiting or running, or the bytes they keep,
    are at its quota (``memgauge serve --max-queued``, ``--max-stored``)."""
    from memgauge._units import format_bytes

    if usage.waiting >= max_queued:
        return (
            f"quota: this token has {usage.waiting} submissions queued or running, the most it may "
            "have; submit again when one finishes"
        )
    if usage.stored_bytes + upload_bytes > max_stored_bytes:
        return (
            f"quota: this token's submissions keep {format_bytes(usage.stored_bytes)}; with this upload "
            f"that would pass its quota of {format_bytes(max_stored_bytes)} (an admin can raise it "
            "with memgauge serve --max-stored)"
        )
    return None


def arguments(text: str) -> list[str]:
    """A program's arguments from their JSON array. Raises ValueError, saying what they may be."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(a, str) and "\0" not in a for a in value):
        raise ValueError('args: a JSON array of strings, e.g. ["--rows", "1000"]')
    if len(value) > MAX_ARGS or sum(len(a) for a in value) > MAX_ARGS_CHARS:
        raise ValueError(f"args: too many or too long ({MAX_ARGS} arguments, {MAX_ARGS_CHARS} characters)")
    return value


# -- machines and admission ------------------------------------------------------------------------

AdmitRule = Literal["worst", "p99", "p99.9"]
# how a policy's passes are admitted to its machine: the worst case, or that percentile of the
# combined peak under random offsets (analysis.admit)
ADMIT_RULES: tuple[AdmitRule, ...] = get_args(AdmitRule)
MACHINE_NAME = POLICY_NAME
MACHINE_NAME_RULE = POLICY_NAME_RULE
MAX_SIZE_TEXT = 100
MAX_CORES = 100_000
_SIZE_WITH_UNIT = re.compile(r"[A-Za-z]\s*$")


def machine_memory(text: str) -> int:
    """A machine's memory in bytes from a size with its unit (``8GiB``). Raises ValueError."""
    from memgauge._units import parse_bytes

    if len(text) > MAX_SIZE_TEXT or not _SIZE_WITH_UNIT.search(text):
        raise ValueError("memory: a size with its unit, e.g. '8GiB'")
    try:
        value = parse_bytes(text)
    except ValueError as e:
        raise ValueError(f"memory: {e}") from None
    if not 0 < value < 2**63:
        raise ValueError("memory: a size above 0, e.g. '8GiB'")
    return value


def machine_error(name: str, memory: str, cores: int, description: str) -> str | None:
    """Why a machine (its name, memory, cores and description) is refused, as the API refuses it."""
    if not is_policy_name(name):
        return MACHINE_NAME_RULE
    try:
        machine_memory(memory)
    except ValueError as e:
        return str(e)
    if not 1 <= cores <= MAX_CORES:
        return f"cores: 1 to {MAX_CORES}"
    if len(description) > MAX_POLICY_TEXT or "\0" in description:
        return f"description: at most {MAX_POLICY_TEXT} characters, no NUL"
    return None


def admission_error(machine: str | None, rule: str, known: Iterable[str]) -> str | None:
    """Why a policy's machine and rule are refused: an unknown machine, an unknown rule, a rule
    without a machine, a percentile rule on a server without numpy (the simulation needs it)."""
    if rule not in ADMIT_RULES:
        return f"rule: one of {', '.join(ADMIT_RULES)}"
    if machine is None:
        return None if rule == "worst" else "rule: judges admission to a machine; name the machine"
    if machine not in set(known):
        return f"machine: no machine {machine!r} (GET /api/v1/machines lists them)"
    if rule != "worst":
        try:
            import numpy  # noqa: F401
        except ImportError:
            return f"rule: {rule} simulates random offsets, which needs numpy: pip install 'memgauge[plan]'"
    return None
