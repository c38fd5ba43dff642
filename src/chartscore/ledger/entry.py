"""One line of the ledger: a scored (or failed) run, its configuration and its document.

A ledger (docs/ledger.md) is a JSON Lines file, appended to and never edited. Each
line is the canonical JSON (RFC 8785) of one :class:`LedgerEntry`, so every byte of
it but the ``time`` is a function of the run's inputs and chartscore's code. Its
keys sort after ``format`` and ``format_version``, so every line starts with
:data:`LINE_PREFIX`: a file is told to be a ledger by its first bytes.

Value-free, but **inside-only**: an entry holds a full report (small counts are facts
about identifiable patients) and the keyed identity of the gold set. It never holds
a value, a case id, a path or a plain digest of an input.
"""

from __future__ import annotations

import datetime
import re
from typing import Final

import attrs

from chartscore._format import DIGEST_PATTERN, FORMAT_KEYS
from chartscore.documents import Document, _strict_json, load_document
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.comparison import Comparison
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, valid_field_id
from chartscore.stats.clustered import CONFIDENCE_LEVELS

LEDGER_FORMAT: Final = "chartscore.ledger"
LEDGER_FORMAT_VERSION: Final = 1
LINE_PREFIX: Final = b'{"format":"chartscore.ledger","format_version":1,'
"""How every line of a ledger begins (canonical JSON: the other keys sort after these)."""
MAX_LINE_BYTES: Final = _strict_json.MAX_DOCUMENT_BYTES
"""The longest ledger line, 16 MiB: a document's limit, envelope included."""

KINDS: Final = ("score", "share", "compare")
"""What a run is: a report, a shared report or a comparison."""
SCORED: Final = "scored"
FAILED: Final = "failed"

LABEL_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}"
"""A system label: a developer-chosen run name (letters, digits, ``_ . + -``), 1 to 64."""
RUN_ID_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_.:+@-]{0,159}"
"""A run id: like a label, up to 160 characters, ``:`` and ``@`` allowed too."""
TIME_PATTERN: Final = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"
"""A ledger time: UTC, ISO 8601, to the second."""

_LABEL: Final = re.compile(LABEL_PATTERN)
_RUN_ID: Final = re.compile(RUN_ID_PATTERN)
_TIME: Final = re.compile(TIME_PATTERN)
_DIGEST: Final = re.compile(DIGEST_PATTERN)
_KEYED: Final = re.compile(r"hmac-sha256:[0-9a-f]{64}")
_KEY_ID: Final = re.compile(r"[0-9a-f]{16}")
_VERSION: Final = re.compile(r"[0-9A-Za-z.+!-]{1,64}")
_TOP_KEYS: Final = frozenset(
    {
        "format",
        "format_version",
        "gold_identity",
        "key_id",
        "kind",
        "result",
        "run_id",
        "setup",
        "status",
        "system",
        "time",
    }
)
_OPTIONAL_TOP_KEYS: Final = frozenset({"problem", "versus"})
_SETUP_KEYS: Final = frozenset({"code_hash", "confidence", "schema_digest", "scorer_version"})
_PROBLEM_KEYS: Final = frozenset({"code"})
_OPTIONAL_PROBLEM_KEYS: Final = frozenset({"field_id", "input", "key", "line"})
_DOCUMENT_KIND: Final = {Report: "score", SharedReport: "share", Comparison: "compare"}


def is_label(value: object) -> bool:
    """Whether ``value`` is a system label (:data:`LABEL_PATTERN`), by exact type."""
    return type(value) is str and _LABEL.fullmatch(value) is not None


def is_run_id(value: object) -> bool:
    """Whether ``value`` is a run id (:data:`RUN_ID_PATTERN`), by exact type."""
    return type(value) is str and _RUN_ID.fullmatch(value) is not None


def utc_time(moment: datetime.datetime | None = None) -> str:
    """``moment`` (default: now) as a ledger time, ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises:
        ChartscoreError: ``usage`` for a naive datetime (no time zone), not a datetime,
            one whose time zone raises, or one past the year 9999 in UTC.
    """
    if moment is None:
        moment = datetime.datetime.now(datetime.UTC)
    written: str | None = None
    if type(moment) is datetime.datetime:
        try:  # the caller's tzinfo runs here: whatever it raises is dropped
            if moment.utcoffset() is not None:
                written = moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except Exception:  # noqa: BLE001 - OverflowError past year 9999, a tzinfo's own error
            written = None
    if written is None:  # raised outside the handler: nothing chained
        raise ChartscoreError(ErrorCode.USAGE)
    return written


def _damaged() -> ChartscoreError:
    return ChartscoreError(ErrorCode.NOT_A_LEDGER, input=InputKind.LEDGER)


def _need(condition: bool) -> None:
    if not condition:
        raise _damaged()


def _object(value: object) -> dict[str, object]:
    _need(type(value) is dict)
    return value  # type: ignore[return-value]


@attrs.frozen
class Setup:
    """What a run's figures depend on besides its inputs: its configuration.

    Two runs are comparable, side by side, only when their setups are equal (and
    they were scored on the same gold set).

    Attributes:
        scorer_version: chartscore's version.
        code_hash: ``sha256:`` digest of the code that decides a document's
            numbers (:func:`chartscore.ledger.code_hash`).
        schema_digest: The schema's keyed digest (``hmac-sha256:``), or None without one.
        confidence: The intervals' confidence level (0.9, 0.95 or 0.99).
        min_cell: A shared run's disclosure threshold; None for other runs.
    """

    scorer_version: str
    code_hash: str
    schema_digest: str | None
    confidence: float
    min_cell: int | None = None

    def __attrs_post_init__(self) -> None:
        if not (
            type(self.scorer_version) is str
            and _VERSION.fullmatch(self.scorer_version)
            and type(self.code_hash) is str
            and _DIGEST.fullmatch(self.code_hash)
            and (
                self.schema_digest is None
                or (type(self.schema_digest) is str and _KEYED.fullmatch(self.schema_digest))
            )
            and type(self.confidence) is float
            and self.confidence in CONFIDENCE_LEVELS
            and (self.min_cell is None or (type(self.min_cell) is int and self.min_cell >= 2))
        ):
            raise ChartscoreError(ErrorCode.USAGE)

    def to_dict(self) -> dict[str, object]:
        """The ``setup`` object of a ledger line."""
        out: dict[str, object] = {
            "scorer_version": self.scorer_version,
            "code_hash": self.code_hash,
            "schema_digest": self.schema_digest,
            "confidence": self.confidence,
        }
        if self.min_cell is not None:
            out["min_cell"] = self.min_cell
        return out

    @classmethod
    def from_dict(cls, value: object) -> Setup:
        """Read a ``setup`` object. Raises ``not_a_ledger`` when it is not one."""
        setup = _object(value)
        _need(_SETUP_KEYS <= setup.keys() <= _SETUP_KEYS | {"min_cell"})
        try:
            return cls(
                scorer_version=setup["scorer_version"],  # type: ignore[arg-type]
                code_hash=setup["code_hash"],  # type: ignore[arg-type]
                schema_digest=setup["schema_digest"],  # type: ignore[arg-type]
                confidence=setup["confidence"],  # type: ignore[arg-type]
                min_cell=setup.get("min_cell"),  # type: ignore[arg-type]
            )
        except ChartscoreError:
            pass
        raise _damaged()

    def differences(self, other: Setup) -> tuple[str, ...]:
        """The names of the settings in which ``other`` differs, in :meth:`to_dict` order."""
        mine, theirs = self.to_dict(), other.to_dict()
        names = [*mine, *(name for name in theirs if name not in mine)]
        return tuple(name for name in names if mine.get(name) != theirs.get(name))


@attrs.frozen
class Problem:
    """Why a run failed: an error's code and location, never its data.

    Attributes:
        code: The :class:`~chartscore.ErrorCode`.
        input: Which input (``predictions``, ``baseline``, ...), if known.
        line: The 1-based line of that input, if known.
        key: The format key of a key error, if any.
        field_id: The field id of a schema error, if any.
    """

    code: ErrorCode
    input: InputKind | None = None
    line: int | None = None
    key: str | None = None
    field_id: str | None = None

    @classmethod
    def of(cls, error: ChartscoreError) -> Problem:
        """The problem an error describes (its value-free attributes only)."""
        return cls(error.code, error.input, error.line, error.key, error.field_id)

    def error(self) -> ChartscoreError:
        """The error again, for its message (``invalid_json (predictions line 3)``)."""
        return ChartscoreError(
            self.code, input=self.input, line=self.line, key=self.key, field_id=self.field_id
        )

    def to_dict(self) -> dict[str, object]:
        """The ``problem`` object of a ledger line."""
        out: dict[str, object] = {"code": self.code.value}
        for name in ("input", "line", "key", "field_id"):
            value = getattr(self, name)
            if value is not None:
                out[name] = str(value) if name == "input" else value
        return out

    @classmethod
    def from_dict(cls, value: object) -> Problem:
        """Read a ``problem`` object. Raises ``not_a_ledger`` when it is not one."""
        problem = _object(value)
        _need(_PROBLEM_KEYS <= problem.keys() <= _PROBLEM_KEYS | _OPTIONAL_PROBLEM_KEYS)
        code, where = problem["code"], problem.get("input")
        line, key, field_id = problem.get("line"), problem.get("key"), problem.get("field_id")
        _need(type(code) is str and code in ErrorCode._value2member_map_)
        _need(where is None or (type(where) is str and where in InputKind._value2member_map_))
        _need(line is None or (type(line) is int and line >= 1))
        _need(key is None or (type(key) is str and key in FORMAT_KEYS))
        _need(field_id is None or valid_field_id(field_id))
        return cls(
            ErrorCode(str(code)),
            None if where is None else InputKind(str(where)),
            line,  # type: ignore[arg-type]
            key,  # type: ignore[arg-type]
            field_id,  # type: ignore[arg-type]
        )


@attrs.frozen
class LedgerEntry:
    """One run as the ledger records it (see docs/ledger.md for each key).

    Build one with :meth:`scored` or :meth:`failed`; write it with :meth:`to_line`;
    read one back with :meth:`from_line`.

    Attributes:
        run_id: The run's id: a later line with the same kind and run id supersedes it.
        system: The system's label (for a comparison: the candidate's).
        kind: ``score``, ``share`` or ``compare``.
        time: When the line was written, UTC (the one field that is not reproducible).
        setup: The configuration its figures depend on.
        gold_identity: The gold set's keyed identity (``hmac-sha256:...``).
        key_id: Which key made it (16 hex digits).
        result: The report, shared report or comparison; None for a failed run.
        problem: Why the run failed; None for a scored run.
        versus: A comparison's baseline label; None for other kinds.
    """

    run_id: str
    system: str
    kind: str
    time: str
    setup: Setup
    gold_identity: str = attrs.field(repr=False)
    key_id: str = attrs.field(repr=False)
    result: Document | None = attrs.field(default=None, repr=False)
    problem: Problem | None = None
    versus: str | None = None

    def __attrs_post_init__(self) -> None:
        document_kind = None if self.result is None else _DOCUMENT_KIND.get(type(self.result))
        valid = (
            is_run_id(self.run_id)
            and is_label(self.system)
            and self.kind in KINDS
            and type(self.time) is str
            and _TIME.fullmatch(self.time) is not None
            and type(self.setup) is Setup
            and type(self.gold_identity) is str
            and _KEYED.fullmatch(self.gold_identity) is not None
            and type(self.key_id) is str
            and _KEY_ID.fullmatch(self.key_id) is not None
            and (self.result is None) is not (self.problem is None)
            and (self.problem is None or type(self.problem) is Problem)
            and (self.result is None or document_kind == self.kind)
            and ((self.kind == "compare") is (self.versus is not None))
            and (self.versus is None or is_label(self.versus))
            and ((self.kind == "share") is (self.setup.min_cell is not None))
        )
        if valid and self.result is not None:
            valid = self.setup.confidence == self.result.confidence and (
                self.setup.scorer_version == self.result.scorer_version
            )
            if type(self.result) is SharedReport:
                valid = valid and self.setup.min_cell == self.result.disclosure.min_cell
        if not valid:
            raise ChartscoreError(ErrorCode.USAGE)

    @property
    def status(self) -> str:
        """``scored`` or ``failed``."""
        return FAILED if self.result is None else SCORED

    @property
    def run(self) -> tuple[str, str]:
        """``(kind, run_id)``: what a later line must share to supersede this one."""
        return (self.kind, self.run_id)

    @classmethod
    def scored(
        cls,
        document: Document,
        *,
        run_id: str,
        system: str,
        time: str,
        code_hash: str,
        schema_digest: str | None,
        gold_identity: str,
        key_id: str,
        versus: str | None = None,
    ) -> LedgerEntry:
        """The entry of a run that produced ``document``; its setup is read from it.

        Raises:
            ChartscoreError: ``invalid_run_label`` for a label or run id that is
                not plain; ``usage`` for anything else out of shape.
        """
        kind = _DOCUMENT_KIND.get(type(document))
        if kind is None:
            raise ChartscoreError(ErrorCode.USAGE)
        _check_labels(run_id, system, versus)
        min_cell = document.disclosure.min_cell if type(document) is SharedReport else None
        setup = Setup(
            document.scorer_version, code_hash, schema_digest, document.confidence, min_cell
        )
        return cls(run_id, system, kind, time, setup, gold_identity, key_id, document, None, versus)

    @classmethod
    def failed(
        cls,
        problem: Problem,
        *,
        kind: str,
        run_id: str,
        system: str,
        time: str,
        setup: Setup,
        gold_identity: str,
        key_id: str,
        versus: str | None = None,
    ) -> LedgerEntry:
        """The entry of a run that failed with ``problem``.

        Raises:
            ChartscoreError: as :meth:`scored`.
        """
        _check_labels(run_id, system, versus)
        return cls(run_id, system, kind, time, setup, gold_identity, key_id, None, problem, versus)

    def to_dict(self) -> dict[str, object]:
        """The line as JSON-ready data."""
        out: dict[str, object] = {
            "format": LEDGER_FORMAT,
            "format_version": LEDGER_FORMAT_VERSION,
            "run_id": self.run_id,
            "system": self.system,
            "kind": self.kind,
            "status": self.status,
            "time": self.time,
            "setup": self.setup.to_dict(),
            "gold_identity": self.gold_identity,
            "key_id": self.key_id,
            "result": None if self.result is None else self.result.to_dict(),
        }
        if self.problem is not None:
            out["problem"] = self.problem.to_dict()
        if self.versus is not None:
            out["versus"] = self.versus
        return out

    def to_line(self) -> bytes:
        """The ledger line: canonical JSON and ``\\n``, starting with :data:`LINE_PREFIX`.

        Raises:
            ChartscoreError: ``file_too_large (ledger)`` over :data:`MAX_LINE_BYTES`.
        """
        data = canonical_json(self.to_dict()).encode("utf-8") + b"\n"
        if len(data) > MAX_LINE_BYTES:
            raise ChartscoreError(ErrorCode.FILE_TOO_LARGE, input=InputKind.LEDGER)
        return data

    @classmethod
    def from_line(cls, data: bytes) -> LedgerEntry:
        """Read one ledger line back, strictly: a damaged or edited line is refused.

        The line must be exactly what :meth:`to_line` writes (canonical JSON, one
        optional ``\\n``), and its document is read as ``chartscore render`` reads
        one: every figure recomputed from its counts.

        Raises:
            ChartscoreError: ``not_a_ledger (ledger)``; the message never quotes it.
        """
        _need(type(data) is bytes)
        text = data[:-1] if data.endswith(b"\n") else data
        _need(text.startswith(LINE_PREFIX))
        parsed: object = None
        try:
            parsed = _strict_json.parse(text)
        except ChartscoreError:
            parsed = None
        line = _object(parsed)
        _need(line.get("format") == LEDGER_FORMAT)
        _need(type(line.get("format_version")) is int)
        _need(line["format_version"] == LEDGER_FORMAT_VERSION)
        _need(_TOP_KEYS <= line.keys() <= _TOP_KEYS | _OPTIONAL_TOP_KEYS)
        _need(canonical_json(line).encode("utf-8") == text)
        result = line["result"]
        document: Document | None = None
        if result is not None:
            try:
                document = load_document(canonical_json(result))
            except ChartscoreError:
                document = None
            _need(document is not None)
        problem = None if line.get("problem") is None else Problem.from_dict(line["problem"])
        _need(line["status"] == (SCORED if document is not None else FAILED))
        try:
            return cls(
                line["run_id"],  # type: ignore[arg-type]
                line["system"],  # type: ignore[arg-type]
                line["kind"],  # type: ignore[arg-type]
                line["time"],  # type: ignore[arg-type]
                Setup.from_dict(line["setup"]),
                line["gold_identity"],  # type: ignore[arg-type]
                line["key_id"],  # type: ignore[arg-type]
                document,
                problem,
                line.get("versus"),  # type: ignore[arg-type]
            )
        except ChartscoreError:
            pass
        raise _damaged()


def _check_labels(run_id: object, system: object, versus: object) -> None:
    if not (is_run_id(run_id) and is_label(system) and (versus is None or is_label(versus))):
        raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL)
