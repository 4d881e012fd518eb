"""One envelope for every persisted record, one rule for its version (``model/_envelope.py``).

- Each kind's fields, at its current version, are kept in ``tests/data/records/fields.json``: a
  field added, removed or retyped without a bump of that kind's version fails here. After a bump,
  ``python -m tests.unit.test_envelope`` writes the new list.
- Every older version reads: ``tests/data/records`` holds records written by earlier memgauge
  versions (a real run of each command), and each reads into what the current writer writes.
- A newer version, and a record of another kind, are refused with one line.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import memgauge.model
from memgauge._errors import ProfileFormatError
from memgauge.gate import Verdict
from memgauge.model import (
    FIT,
    KINDS,
    PLAN,
    PROFILE,
    SWEEP,
    VERDICT,
    FitRecord,
    PlanRecord,
    Profile,
    RecordKind,
    SweepResult,
)
from memgauge.sections import SECTIONS

RECORDS = Path(__file__).resolve().parents[1] / "data" / "records"
FIELDS = RECORDS / "fields.json"
# the faces a record's nested classes are found on: the model's, and each section's (its part)
FACES = [memgauge.model, *(importlib.import_module(spec.package) for spec in SECTIONS)]
# the dataclass each kind's record is read into
TYPES: dict[str, type] = {
    PROFILE.kind: Profile,
    SWEEP.kind: SweepResult,
    FIT.kind: FitRecord,
    PLAN.kind: PlanRecord,
    VERDICT.kind: Verdict,
}


def _names(annotation: str) -> list[str]:
    return re.findall(r"[A-Za-z_]\w*", annotation)


def fields_of(cls: type, prefix: str = "", seen: frozenset[type] = frozenset()) -> list[str]:
    """Every field of ``cls`` and of the dataclasses its fields hold, as ``path: annotation``. The
    annotation is the source's text (``from __future__ import annotations``), the same on every
    Python, and names a nested record by its class name, not its module: found in its module, or,
    for a section's part that its module imports only to type it (loaded with the first record that
    has it), on the model's face or its section's."""
    module = vars(sys.modules[cls.__module__])
    out: list[str] = []
    for f in dataclasses.fields(cls):
        annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", repr(f.type))
        out.append(f"{prefix}{f.name}: {annotation}")
        for name in _names(annotation):
            inner = module.get(name) or next(
                (getattr(face, name) for face in FACES if name in getattr(face, "__all__", ())), None
            )
            if isinstance(inner, type) and dataclasses.is_dataclass(inner) and inner not in seen:
                out += fields_of(inner, f"{prefix}{f.name}.", seen | {cls})
    return out


def current_fields() -> dict[str, dict[str, Any]]:
    kinds = {k.kind: k for k in KINDS}
    return {kind: {"version": kinds[kind].version, "fields": fields_of(cls)} for kind, cls in TYPES.items()}


def test_a_change_of_fields_bumps_the_version() -> None:
    kept = json.loads(FIELDS.read_text())
    for kind, now in current_fields().items():
        then = kept[kind]
        if now["fields"] != then["fields"]:
            added = sorted(set(now["fields"]) - set(then["fields"]))
            gone = sorted(set(then["fields"]) - set(now["fields"]))
            assert now["version"] != then["version"], (
                f"the fields of memgauge-{kind} changed (added {added}, gone {gone}) but its version "
                f"is still {now['version']}: bump it in model/_envelope.py, teach its reader the old "
                "one, then run python -m tests.unit.test_envelope"
            )
        assert now == then, (
            f"memgauge-{kind} is at version {now['version']}: run python -m tests.unit.test_envelope"
        )


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
def test_the_header_comes_first_and_opens_to_the_fields(kind: RecordKind) -> None:
    data = kind.wrap({"a": 1, "b": [2]})
    assert list(data)[:2] == ["format", "version"]
    assert data["format"] == f"memgauge-{kind.kind}"
    assert kind.open(json.loads(json.dumps(data))) == (kind.version, {"a": 1, "b": [2]})


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
def test_a_newer_version_or_another_record_is_refused_in_one_line(kind: RecordKind) -> None:
    newer = {"format": kind.format, "version": kind.version + 1}
    with pytest.raises(ProfileFormatError, match="newer than this memgauge reads") as err:
        kind.open(newer)
    assert "\n" not in err.value.message and "upgrade memgauge" in err.value.message
    assert err.value.exit_code == 65
    other = next(k for k in KINDS if k is not kind)
    with pytest.raises(ProfileFormatError, match=f"a {other.format} record, not a memgauge {kind.kind}$"):
        kind.open(other.wrap({}))
    for bad in ([], "x", {"format": kind.format, "version": "1"}, {"format": kind.format, "version": 0}):
        with pytest.raises(ProfileFormatError):
            kind.open(bad)


def _read(kind: str, data: dict[str, Any]) -> Any:
    if kind == VERDICT.kind:
        return Verdict.from_dict(data)
    return TYPES[kind].from_dict(data)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kind", "name", "version"),
    [
        (PROFILE.kind, "profile-v7.json", 7),
        (SWEEP.kind, "sweep-v1.json", 1),
        (FIT.kind, "fit-v1.json", 1),
        (PLAN.kind, "plan-v1.json", 1),
        (VERDICT.kind, "verdict-v1.json", 1),
    ],
)
def test_a_record_of_an_older_version_reads_and_is_written_at_the_current_one(
    kind: str, name: str, version: int
) -> None:
    old = json.loads((RECORDS / name).read_text())
    assert "format" not in old or old["version"] == version  # the fixture is what it says
    record = _read(kind, old)
    new = record.to_dict()
    assert (new["format"], new["version"]) == (
        f"memgauge-{kind}",
        next(k for k in KINDS if k.kind == kind).version,
    )
    assert _read(kind, json.loads(json.dumps(new))) == record
    # nothing of the old record is lost on the way: its fields are the new one's
    body = {
        k: v for k, v in old.items() if k not in ("format", "version", "schema_version", "memgauge_sweep")
    }
    body = body.get(kind, body) if version == 1 and kind in (FIT.kind, PLAN.kind) else body
    missing = set(body) - set(new) - {"result"}
    assert not missing, missing


def test_an_old_header_cannot_name_a_version_of_the_envelope() -> None:
    with pytest.raises(ProfileFormatError, match="schema_version 8 is not a memgauge profile version"):
        PROFILE.open({"schema_version": 8})
    with pytest.raises(ProfileFormatError, match="newer than this memgauge reads"):
        SWEEP.open({"memgauge_sweep": SWEEP.version + 1})


if __name__ == "__main__":
    FIELDS.write_text(json.dumps(current_fields(), indent=1) + "\n")
    print(f"wrote {FIELDS}")
