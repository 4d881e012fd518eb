"""One envelope for every record memgauge writes for later, and one rule for its version.

A profile, a sweep, a fit, a plan, a verdict, the machines catalogue's answer and the pytest
plugin's budgets file are each one JSON object whose first two keys say what it is and how it is
laid out, with the record's own fields beside them::

    {"format": "memgauge-profile", "version": 8, "command": [...], ...}

The rule, the same for every kind:

- **Any change of layout bumps the version**: a field added, removed or renamed anywhere in the
  record, or given another type, unit or meaning (keys inside an object documented as open, such as
  a profile's ``environment``, excepted). ``tests/unit/test_envelope.py`` holds every kind's fields
  at its current version and fails on a change that did not bump it.
- **Every older version stays readable**: a reader opens the record with :meth:`RecordKind.open`,
  which gives the version and the fields, and fills what that version did not have.
- **A newer version is refused with one line** (``ProfileFormatError``, exit 65) that says to
  upgrade memgauge; so is anything that is not the record asked for.

Records from before this envelope read as the versions they were: a profile's ``schema_version``
1-7, a sweep's ``"memgauge_sweep": 1``, a fit's and a plan's version 1 (their fields under
``"fit"`` and ``"plan"``) and a verdict without a header (version 1).

The files a measured process writes for its runner (``capture/_wire.py``) follow the same rule with
a shorter header: each record carries its version under ``"v"`` (one per event line, where a
format name on every line would be most of the bytes), and a reader drops a record of a version it
does not read, with a warning in the profile.
"""

from __future__ import annotations

from memgauge._errors import ProfileFormatError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BUDGETS",
    "FIT",
    "FORMAT",
    "KINDS",
    "MACHINES",
    "PLAN",
    "PROFILE",
    "SWEEP",
    "VERDICT",
    "VERSION",
    "RecordKind",
]

FORMAT = "format"
VERSION = "version"
_PREFIX = "memgauge-"


class RecordKind:
    """One kind of record: its name, the version this memgauge writes, and how the versions from
    before the envelope named themselves. A plain class, not a dataclass: every ``memgauge run``
    loads this module, and a dataclass's generated methods cost a millisecond to make."""

    __slots__ = ("headless", "kind", "legacy_key", "nested_until", "version")

    def __init__(
        self, kind: str, version: int, *, nested_until: int = 0, legacy_key: str = "", headless: int = 0
    ) -> None:
        self.kind = kind
        self.version = version
        # versions up to this one held their fields under the kind's name ({"fit": {...}})
        self.nested_until = nested_until
        # the key a record from before the envelope held its version in ("schema_version")
        self.legacy_key = legacy_key
        # the version a record without any header reads as; 0: such a record is refused
        self.headless = headless

    def __repr__(self) -> str:
        return f"RecordKind({self.kind!r}, {self.version})"

    @property
    def format(self) -> str:
        return _PREFIX + self.kind

    def wrap(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The record as written: the header first, so a reader can check it before the rest."""
        return {FORMAT: self.format, VERSION: self.version, **fields}

    def open(self, data: object) -> tuple[int, dict[str, Any]]:
        """``(version, fields)`` of a record of this kind, the header taken off and the fields of a
        nested version lifted out; ProfileFormatError when it is not one or is newer than this
        memgauge reads."""
        if not isinstance(data, dict):
            raise ProfileFormatError(f"not a memgauge {self.kind} record (not a JSON object)")
        fields = dict(data)
        if FORMAT in fields:
            self._check_format(fields.pop(FORMAT))
            version = self._check_version(fields.pop(VERSION, None))
        elif self.legacy_key and self.legacy_key in fields:
            version = self._check_version(fields.pop(self.legacy_key))
            if version >= self.version:  # the old key never named the envelope's versions
                raise ProfileFormatError(
                    f"{self.legacy_key} {version} is not a memgauge {self.kind} version "
                    f"(this memgauge reads {self.readable})"
                )
        elif self.headless:
            version = self.headless
        else:
            raise ProfileFormatError(f'not a memgauge {self.kind} record (no "format": "{self.format}")')
        if version <= self.nested_until:
            nested = fields.get(self.kind)
            if not isinstance(nested, dict):
                raise ProfileFormatError(
                    f"malformed {self.format} version {version}: no {self.kind!r} object"
                )
            fields = nested
        return version, fields

    @property
    def readable(self) -> str:
        return f"versions 1-{self.version}" if self.version > 1 else "version 1"

    def _check_format(self, name: object) -> None:
        if name == self.format:
            return
        if isinstance(name, str) and name.startswith(_PREFIX):
            raise ProfileFormatError(f"a {name} record, not a memgauge {self.kind}")
        raise ProfileFormatError(f"not a memgauge {self.kind} record (format {name!r})")

    def _check_version(self, version: object) -> int:
        if type(version) is not int or version < 1:
            raise ProfileFormatError(f"{self.format} version {version!r} is not one memgauge writes")
        if version > self.version:
            raise ProfileFormatError(
                f"{self.format} version {version} is newer than this memgauge reads "
                f"({self.readable}): upgrade memgauge"
            )
        return version


# Version history, per kind (docs/records.md says what each version added):
# profile  8: the envelope (1-7 named themselves "schema_version")
# sweep    2: the envelope (1 was "memgauge_sweep": 1); 3: a run's needs_bytes, the rss metric
#             where known (read as 0 from 1 and 2: the rss metric is then the resident peak)
# fit      2: the envelope's flat fields (1 nested them under "fit" and gained tolerance, start and
#             start_from without a bump; a version 1 record without them reads with their defaults)
# plan     2: the envelope's flat fields (1 nested them under "plan")
# verdict  2: the envelope (1 had no header)
# machines 1, budgets 1: first versioned with the envelope
PROFILE = RecordKind("profile", 8, legacy_key="schema_version")
SWEEP = RecordKind("sweep", 3, legacy_key="memgauge_sweep")
FIT = RecordKind("fit", 2, nested_until=1)
PLAN = RecordKind("plan", 2, nested_until=1)
VERDICT = RecordKind("verdict", 2, headless=1)
MACHINES = RecordKind("machines", 1)
BUDGETS = RecordKind("budgets", 1)
KINDS = (PROFILE, SWEEP, FIT, PLAN, VERDICT, MACHINES, BUDGETS)
