"""What a submission's page shows of its stored record: the verdict's limits (the gate's records,
read back by the gate), the sandbox's record and the command line."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from memgauge.service._judge import stored_verdict
from memgauge.service._models import Submission
from memgauge.service._schemas import ProofOut, proof_out


@dataclass(frozen=True)
class Check:
    """One limit of a verdict, as the page shows it."""

    key: str
    status: str
    limit: str
    measured: str
    margin: str
    note: str


def checks(sub: Submission) -> list[Check]:
    """The limits of the stored verdict; none when there is no verdict or it cannot be read."""
    from memgauge.gate import format_amount

    verdict = stored_verdict(sub)
    if verdict is None:
        return []

    def amount(value: float | None, unit: str) -> str:
        return "—" if value is None else format_amount(value, unit)

    return [
        Check(
            key=r.limit.key,
            status=r.status,
            limit=format_amount(r.limit.value, r.limit.unit),
            measured=amount(r.measured, r.limit.unit),
            margin=amount(r.margin, r.limit.unit),
            note=r.note,
        )
        for r in verdict.results
    ]


@dataclass(frozen=True)
class Piece:
    """One piece of the sandbox (``memory``, ``network`` ...): whether it held, how or why not,
    and what the run ran into there (a limit it reached)."""

    name: str
    applied: bool
    detail: str
    hit: str


@dataclass(frozen=True)
class SandboxRecord:
    pieces: list[Piece]
    other: list[tuple[str, str]]


_RECORD_PARTS = ("hit", "applied", "not_applied")


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, dict, list)) or value is None:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _pairs(value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [(str(k), _shown(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [(_shown(v), "") for v in value]
    return [] if value is None else [(_shown(value), "")]


def sandbox(text: str | None) -> SandboxRecord | None:
    """The sandbox's record (which pieces held the run, why any did not, what it reached), in the
    isolation's order of pieces; whatever else the record holds, as it is."""
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        record = text
    if not isinstance(record, dict):
        return SandboxRecord([], [("record", _shown(record))])
    parts = {part: dict(_pairs(record.get(part))) for part in _RECORD_PARTS}
    from memgauge.isolation import PIECES

    names = list(dict.fromkeys([*parts["applied"], *parts["not_applied"], *parts["hit"]]))
    names.sort(key=lambda n: PIECES.index(n) if n in PIECES else len(PIECES))
    pieces = [
        Piece(
            name=n,
            applied=n in parts["applied"],
            detail=parts["applied"].get(n) or parts["not_applied"].get(n, ""),
            hit=parts["hit"].get(n, ""),
        )
        for n in names
    ]
    other = [(str(k), _shown(v)) for k, v in record.items() if k not in _RECORD_PARTS]
    return SandboxRecord(pieces, other)


def proof(sub: Submission) -> ProofOut | None:
    """The proof of a pass (a policy with ``prove``), as the API gives it."""
    return proof_out(sub.proof)


def command(sub: Submission) -> str:
    """The command line the run had: its entry point and arguments, quoted as a shell would."""
    return shlex.join([sub.entry]) + (" " + _arguments(sub.args) if sub.args != "[]" else "")


def _arguments(args: str) -> str:
    try:
        values = json.loads(args)
    except ValueError:
        return args
    return shlex.join(str(a) for a in values) if isinstance(values, list) else args
