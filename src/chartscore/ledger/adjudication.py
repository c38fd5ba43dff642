"""A ledger line that links two gold versions: the new gold an adjudication made from the old.

``chartscore import adjudication --ledger FILE`` (docs/worklist.md, docs/ledger.md)
appends one such line: the old and the new gold set's keyed identities under the
ledger's key, and the counts of what changed. A later run scored on the new gold
records the new identity, so ``chartscore ledger show`` can say which gold version
each run used, and from which version it was adjudicated.

Like every ledger line it is the canonical JSON of one object and a ``\\n``, starting
with :data:`~chartscore.ledger.entry.LINE_PREFIX`; its ``kind`` is ``adjudication``.
Value-free but **inside-only**: keyed identities and counts, never a value, a case id,
a path or a plain digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import attrs

from chartscore.documents import _strict_json
from chartscore.documents.canonical_json import canonical_json
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.ledger.entry import (
    LEDGER_FORMAT,
    LEDGER_FORMAT_VERSION,
    LINE_PREFIX,
    MAX_LINE_BYTES,
    TIME_PATTERN,
)
from chartscore.metrics import FieldType

ADJUDICATION: Final = "adjudication"
"""The ``kind`` of a line that links two gold versions."""
COUNT_NAMES: Final = (
    "worklist_rows",
    "blank",
    "confirmed",
    "changed",
    "value_changed",
    "now_unanswerable",
    "now_answerable",
    "gold_rows",
)
"""The counts of an adjudication's ``summary``, in order (docs/ledger.md)."""

_KEYS: Final = frozenset(
    {
        "format",
        "format_version",
        "gold_identity",
        "key_id",
        "kind",
        "previous_gold_identity",
        "scorer_version",
        "summary",
        "time",
    }
)
_KEYED: Final = re.compile(r"hmac-sha256:[0-9a-f]{64}")
_KEY_ID: Final = re.compile(r"[0-9a-f]{16}")
_VERSION: Final = re.compile(r"[0-9A-Za-z.+!-]{1,64}")
_TIME: Final = re.compile(TIME_PATTERN)
_OUTCOME: Final = re.compile(r"[a-z][a-z_]{0,39}")
_TYPES: Final = frozenset(kind.value for kind in FieldType)


def _count(value: object, *, least: int = 0) -> bool:
    return type(value) is int and least <= value < 1 << 63


def _counts_by(value: object, names: re.Pattern[str] | frozenset[str]) -> bool:
    if type(value) is not dict:
        return False
    for name, count in value.items():
        known = name in names if isinstance(names, frozenset) else names.fullmatch(name)
        if not (known and _count(count, least=1)):
            return False
    return True


def _adds_up(counts: Mapping[str, int]) -> bool:
    """Every worklist row is blank, confirmed or changed; every change of one kind."""
    rows = counts["blank"] + counts["confirmed"] + counts["changed"]
    changes = counts["value_changed"] + counts["now_unanswerable"] + counts["now_answerable"]
    return rows == counts["worklist_rows"] and changes == counts["changed"]


@attrs.frozen
class AdjudicationEntry:
    """One adjudication as the ledger records it.

    Attributes:
        time: When the line was written, UTC (``YYYY-MM-DDTHH:MM:SSZ``).
        scorer_version: chartscore's version.
        previous_gold_identity: The old gold set's keyed identity.
        gold_identity: The new gold set's keyed identity.
        key_id: Which key made both.
        counts: :data:`COUNT_NAMES`, each a count; ``worklist_rows`` is ``blank +
            confirmed + changed``, and ``changed`` the sum of its three kinds.
        changed_by_type: Changed rows per field type (types with none left out).
        changed_by_outcome: Changed rows per worklist outcome class (likewise).
    """

    time: str
    scorer_version: str
    previous_gold_identity: str = attrs.field(repr=False)
    gold_identity: str = attrs.field(repr=False)
    key_id: str = attrs.field(repr=False)
    counts: Mapping[str, int] = attrs.field(repr=False)
    changed_by_type: Mapping[str, int] = attrs.field(factory=dict, repr=False)
    changed_by_outcome: Mapping[str, int] = attrs.field(factory=dict, repr=False)

    def __attrs_post_init__(self) -> None:
        valid = (
            type(self.time) is str
            and _TIME.fullmatch(self.time) is not None
            and type(self.scorer_version) is str
            and _VERSION.fullmatch(self.scorer_version) is not None
            and all(
                type(identity) is str and _KEYED.fullmatch(identity) is not None
                for identity in (self.previous_gold_identity, self.gold_identity)
            )
            and type(self.key_id) is str
            and _KEY_ID.fullmatch(self.key_id) is not None
            and type(self.counts) is dict
            and type(self.changed_by_type) is dict
            and type(self.changed_by_outcome) is dict
            and list(self.counts) == list(COUNT_NAMES)
            and all(_count(count) for count in self.counts.values())
            and _counts_by(self.changed_by_type, _TYPES)
            and _counts_by(self.changed_by_outcome, _OUTCOME)
            and sum(self.changed_by_type.values()) == self.counts["changed"]
            and sum(self.changed_by_outcome.values()) == self.counts["changed"]
            and _adds_up(self.counts)
        )
        if not valid:
            raise ChartscoreError(ErrorCode.USAGE)

    @property
    def kind(self) -> str:
        """``adjudication``."""
        return ADJUDICATION

    def to_dict(self) -> dict[str, object]:
        """The line as JSON-ready data."""
        return {
            "format": LEDGER_FORMAT,
            "format_version": LEDGER_FORMAT_VERSION,
            "kind": ADJUDICATION,
            "time": self.time,
            "scorer_version": self.scorer_version,
            "previous_gold_identity": self.previous_gold_identity,
            "gold_identity": self.gold_identity,
            "key_id": self.key_id,
            "summary": {
                **self.counts,
                "changed_by_type": dict(sorted(self.changed_by_type.items())),
                "changed_by_outcome": dict(sorted(self.changed_by_outcome.items())),
            },
        }

    def to_line(self) -> bytes:
        """The ledger line: canonical JSON and ``\\n``, starting with the ledger's prefix."""
        return canonical_json(self.to_dict()).encode("utf-8") + b"\n"

    @classmethod
    def from_line(cls, data: bytes) -> AdjudicationEntry:
        """Read one adjudication line back, strictly.

        Raises:
            ChartscoreError: ``not_a_ledger (ledger)`` for anything that is not
                exactly what :meth:`to_line` writes; the message never quotes it.
        """
        entry: AdjudicationEntry | None = None
        if type(data) is bytes and len(data) <= MAX_LINE_BYTES:
            entry = _parsed(data[:-1] if data.endswith(b"\n") else data)
        if entry is None:
            raise ChartscoreError(ErrorCode.NOT_A_LEDGER, input=InputKind.LEDGER)
        return entry


def _parsed(text: bytes) -> AdjudicationEntry | None:
    if not text.startswith(LINE_PREFIX):
        return None
    line: object = None
    try:
        line = _strict_json.parse(text)
    except ChartscoreError:
        line = None
    if type(line) is not dict or line.keys() != _KEYS:
        return None
    if (line["format"], line["kind"]) != (LEDGER_FORMAT, ADJUDICATION):
        return None
    version, summary = line["format_version"], line["summary"]
    if type(version) is not int or version != LEDGER_FORMAT_VERSION or type(summary) is not dict:
        return None
    if summary.keys() != {*COUNT_NAMES, "changed_by_type", "changed_by_outcome"}:
        return None
    if canonical_json(line).encode("utf-8") != text:
        return None
    entry: AdjudicationEntry | None = None
    try:
        entry = AdjudicationEntry(
            line["time"],
            line["scorer_version"],
            line["previous_gold_identity"],
            line["gold_identity"],
            line["key_id"],
            {name: summary[name] for name in COUNT_NAMES},
            summary["changed_by_type"],
            summary["changed_by_outcome"],
        )
    except ChartscoreError:
        entry = None
    return entry
