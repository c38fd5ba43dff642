"""The quick route for well-formed JSON Lines rows.

Almost every line of a large file is well formed, so it pays to check a line
the cheap way first. A line in the documented layout is read by one regular
expression (:mod:`chartscore.io.layout`). Any other line is parsed with the
standard library's C scanner (no Python hooks) and checked against the same
rules as :mod:`chartscore.records.rows` with as few Python operations as
possible. Either way the answer is the row or None. None means "not
sure": the caller then parses the line strictly and lets ``records`` name the
precise error. So the fast route may refuse good lines, but must never accept
a line the strict route refuses; a property test holds it to that.

Duplicate keys are the one rule a hook-free parse cannot see. They are ruled
out by counting colons: outside strings, JSON has exactly one colon per key,
so ``text.count(":")`` equals the number of keys plus the colons inside string
tokens. When the parsed row's key count plus the colons in its parsed strings
equals that count, and no ``\\u003a`` escape could have hidden a colon, no key
occurred twice (a duplicate adds a key token that the parsed row lacks).
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Final, TypeVar

from chartscore import _format
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, fail, relocated
from chartscore.io import layout
from chartscore.io.jsonl import MAX_NUMBER_CHARS, parse_object
from chartscore.metrics import FieldType, Value
from chartscore.records import _rules
from chartscore.records.prediction_row import PredictionRow, new_row
from chartscore.records.rows import CHAIN_KEYS
from chartscore.records.usage import usage_or_none
from chartscore.stats.run_cost import RunHeader

_FIELD_TYPES: Final = {member.value: member for member in FieldType}
_SOURCE_KINDS: Final = frozenset({"clinical_record", "generated_text"})
_TRANSFORMATION_KINDS: Final = frozenset({"rule", "model"})
_REVIEWER_STATES: Final = frozenset({"pending", "approved", "rejected"})
_INT_LIMIT: Final = 10**100
_JSON_BLANK: Final = " \t\r\n"
_ZERO: Final = Decimal(0)
_ONE: Final = Decimal(1)


class _NotFastError(Exception):
    pass


# What the scanner or a lookup on a non-object can raise: all mean "not fast".
_NOT_FAST: Final = (
    ValueError,
    StopIteration,
    RecursionError,
    ArithmeticError,
    KeyError,
    TypeError,
    _NotFastError,
)
_KNOWN_FIELD_IDS: Final = _rules.known_field_ids


def _refuse_constant(_: str) -> object:
    raise _NotFastError


_CREATE_DECIMAL: Final = layout.IN_RANGE.create_decimal


def _decimal(text: str) -> Decimal:
    # The strict route's length limit: once a Decimal, "0.000...1" looks like "1E-151".
    if len(text) > MAX_NUMBER_CHARS:
        raise _NotFastError
    return _CREATE_DECIMAL(text)


# The C scanner, called directly: no decode() wrapper, no Python hooks per object
# (one per non-integer number, for its length).
_SCAN: Callable[[str, int], tuple[object, int]] = json.scanner.make_scanner(
    json.JSONDecoder(  # type: ignore[arg-type]
        parse_float=_decimal, parse_constant=_refuse_constant
    )
)


def _value(raw: object) -> tuple[Value, int] | None:
    """(value, colons in its strings) when the value is valid and in range."""
    if type(raw) is str:
        return raw, raw.count(":")
    if raw is None or type(raw) is bool:
        return raw, 0
    if type(raw) is int:
        return (raw, 0) if -_INT_LIMIT < raw < _INT_LIMIT else None
    if type(raw) is Decimal:
        return raw, 0  # in range by construction (see _decimal)
    if type(raw) is list and all(type(item) is str for item in raw):
        return frozenset(raw), sum(item.count(":") for item in raw)
    return None


# Fact digests are unique per answer: matched without the memory of _rules.is_digest.
_DIGEST_MATCH: Final = re.compile(_format.DIGEST_PATTERN).fullmatch
_is_digest: Final = _rules.is_digest


def _no_duplicate_keys(text: str, keys: int, colons_in_strings: int) -> bool:
    if text.count(":") != keys + colons_in_strings:
        return False
    return "\\" not in text or "\\u003" not in text  # one-character search first: fast


def fast_gold(text: str) -> tuple[str, str, FieldType, Value] | None:
    """The gold row of a well-formed line, or None to take the strict route.

    A line in the documented layout is read by one pattern (:mod:`layout`);
    any other by the scanner (:func:`scanned_gold`).
    """
    matched = layout.gold_line(text)
    if matched is not None:
        return layout.gold(matched)
    return scanned_gold(text)


def scanned_gold(text: str) -> tuple[str, str, FieldType, Value] | None:
    """:func:`fast_gold` for a line in any layout: scanned, then checked."""
    # Written out flat: a file in another layout sends every line here, millions of times.
    try:
        row, end = _SCAN(text, 0)
        case_id = row["case_id"]  # type: ignore[index]
        field_id = row["field_id"]  # type: ignore[index]
        field_type = _FIELD_TYPES[row["field_type"]]  # type: ignore[index]
        raw = row["value"]  # type: ignore[index]
    except _NOT_FAST:
        return None
    if type(raw) is str:
        value: object = raw
        colons = raw.count(":")
    else:
        checked = _value(raw)
        if checked is None:
            return None
        value, colons = checked
    if (
        len(row) != 4  # type: ignore[arg-type]
        or (end != len(text) and text[end:].strip(_JSON_BLANK))
        or type(case_id) is not str
        or not 0 < len(case_id) <= _format.MAX_CASE_ID_LENGTH
        or type(field_id) is not str
        or (field_id not in _KNOWN_FIELD_IDS and not _rules.is_field_id(field_id))
        or text.count(":") != 4 + case_id.count(":") + colons
        or ("\\" in text and ("\\u003" in text or not _rules.is_text(case_id)))
    ):
        return None
    return case_id, field_id, field_type, value  # type: ignore[return-value]


def fast_prediction(text: str) -> PredictionRow | None:
    """The prediction row of a well-formed line, or None to take the strict route.

    As :func:`fast_gold`: the layout's pattern first, then the scanner.
    """
    matched = layout.prediction_line(text)
    if matched is not None:
        return layout.prediction(matched)
    return scanned_prediction(text)


def scanned_prediction(text: str) -> PredictionRow | None:
    """:func:`fast_prediction` for a line in any layout: scanned, then checked."""
    # Written out flat, like scanned_gold.
    try:
        row, end = _SCAN(text, 0)
        case_id = row["case_id"]  # type: ignore[index]
        field_id = row["field_id"]  # type: ignore[index]
        value = _value(row["value"])  # type: ignore[index]
        digest = row.get("normalized_fact_digest")  # type: ignore[attr-defined]
        chain = row.get("evidence_chain")  # type: ignore[attr-defined]
        usage = row.get("usage")  # type: ignore[attr-defined]
    except _NOT_FAST:
        return None
    size = len(row)  # type: ignore[arg-type]
    if (
        value is None
        or type(row) is not dict
        or (end != len(text) and text[end:].strip(_JSON_BLANK))
        or size
        != 3 + ("normalized_fact_digest" in row) + ("evidence_chain" in row) + (usage is not None)
        or type(case_id) is not str
        or not 0 < len(case_id) <= _format.MAX_CASE_ID_LENGTH
        or not _rules.is_field_id(field_id)
        or ("\\" in text and not _rules.is_text(case_id))  # the strict route refuses it
    ):
        return None
    keys = size
    colons = case_id.count(":") + value[1]
    evidence = 0
    uncertainty = None
    supported = False
    if chain is not None:
        facts = _chain(chain) if type(chain) is dict else None
        if facts is None:
            return None
        chain_field, fact, clinical, chain_keys, chain_colons = facts
        supported = clinical and chain_field == field_id and fact == digest
        # The evidence state (records.prediction_row): supported, else any span, else none.
        evidence = 1 if supported else 2 if chain["source_locations"] else 0
        uncertainty = chain["uncertainty"]
        keys += chain_keys
        colons += chain_colons
        if supported:
            digest = None  # equal to the chain's digest, which is valid
            colons += 1
    if digest is not None:
        if type(digest) is not str or _DIGEST_MATCH(digest) is None:  # names one answer
            return None
        colons += 1
    amounts = None
    if usage is not None:  # a line's run cost: numbers under fixed names (no colon in a string)
        amounts = usage_or_none(usage)
        if amounts is None:
            return None
        keys += len(usage)
    if not _no_duplicate_keys(text, keys, colons):
        return None
    return new_row(PredictionRow, (case_id, field_id, value[0], evidence, uncertainty, amounts))


def _chain(chain: dict[str, object]) -> tuple[str, str, bool, int, int] | None:
    """(field id, fact digest, any clinical span, keys, colons in strings) of a valid chain."""
    if len(chain) != len(CHAIN_KEYS):
        return None
    try:
        field_id = chain["field_id"]
        sources = chain["source_locations"]
        fact = chain["normalized_fact_digest"]
        transformation_kind = chain["transformation_kind"]
        transformation = chain["transformation_digest"]
        uncertainty = chain["uncertainty"]
        state = chain["reviewer_state"]
    except KeyError:
        return None
    if not (
        type(sources) is list
        and type(transformation_kind) is str
        and transformation_kind in _TRANSFORMATION_KINDS
        and type(state) is str
        and state in _REVIEWER_STATES
        and _rules.is_field_id(field_id)
        and type(fact) is str
        and _DIGEST_MATCH(fact) is not None
        and _is_digest(transformation)
    ):
        return None
    if type(uncertainty) is Decimal:
        if not _ZERO <= uncertainty <= _ONE:
            return None
    elif not (type(uncertainty) is int and 0 <= uncertainty <= 1):
        return None
    keys = len(CHAIN_KEYS)
    clinical = False
    seen = []
    for source in sources:
        if type(source) is not dict:
            return None
        size = len(source)
        try:
            digest = source["source_digest"]
            start = source["start_offset"]
            end = source["end_offset"]
            kind = source["kind"] if size == 4 else "clinical_record"
        except KeyError:
            return None
        if not (
            size in {3, 4}
            and type(kind) is str
            and kind in _SOURCE_KINDS
            and type(start) is int
            and type(end) is int
            and 0 <= start < end <= _format.MAX_OFFSET
            and _is_digest(digest)
        ):
            return None
        clinical = clinical or kind == "clinical_record"
        keys += size
        seen.append((digest, start, end, kind))
    if len(seen) > 1 and len(set(seen)) != len(seen):
        return None  # a duplicate source
    # Each digest holds exactly one colon (after "sha256").
    return field_id, fact, clinical, keys, 2 + len(sources)  # type: ignore[return-value]


Row = TypeVar("Row")


def is_run_header_row(row: object) -> bool:
    """Whether a checked row is a run header's (made only by the strict route)."""
    return type(row) is PredictionRow and type(row.usage) is RunHeader


def check_batch(
    first: int,
    lines: list[str],
    source: InputKind,
    fast: Callable[[str], Row | None],
    checked: Callable[[dict[str, object]], Row],
) -> tuple[list[int], list[Row], ChartscoreError | None]:
    """Check a batch of lines: each takes the fast route, or the strict one that names errors.

    Returns the line numbers and rows of the good lines before the first bad
    one, and the error for that line (or None). The caller uses the rows before
    raising, so errors keep their line order. A run header row (only the strict
    route makes one) is refused with ``misplaced_run_header`` unless on line 1.
    """
    numbers: list[int] = []
    rows: list[Row] = []
    line = first
    failure: ChartscoreError | None = None
    try:
        for offset, text in enumerate(lines):
            line = first + offset
            row = fast(text)
            if row is None:
                parsed = parse_object(text, source, line)
                if parsed is None:
                    continue  # a blank line
                row = checked(parsed)
                if line != 1 and is_run_header_row(row):
                    fail(ErrorCode.MISPLACED_RUN_HEADER)
            numbers.append(line)
            rows.append(row)
    except ChartscoreError as error:
        failure = error
    if failure is not None:
        failure = located(failure, source, line)  # a new error, made outside the handler
    return numbers, rows, failure


def located(error: ChartscoreError, source: InputKind, line: int) -> ChartscoreError:
    """A copy of ``error`` that names ``line`` of ``source`` unless it already names a place."""
    if error.line is not None or error.input not in (None, source):
        return relocated(error, input=error.input, line=error.line)
    return ChartscoreError(
        error.code,
        input=source,
        line=line,
        field_id=error.field_id,
        key=error.key,
        plugin=error.plugin,
    )
