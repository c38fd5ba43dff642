"""The documented line layout as one regular expression per format: the quickest route.

Most files are written by one program in one layout: the keys in the
documented order (docs/formats.md), ``", "`` and ``": "`` separators (or
compact ones throughout), strings without escapes, one or two source
locations. One compiled pattern checks such a line in a single pass in C
against every rule a pattern can express: the key names and their order (so
no key is missing, unknown or duplicated), the case id's length, the field id
and digest patterns, the closed words (field types, source and transformation
kinds, reviewer states), offsets as non-negative integers and uncertainty as a
number in [0, 1]. What is left (each span's start before its end and below
the largest offset, distinct sources, and numbers in range) is checked on the
captured text, as is the length of a number literal.

A line the pattern does not match is not refused: it goes on to the scanner
route in :mod:`chartscore.io.fastpath`, and from there to the strict route
that names errors. So this route may decline good lines but must never
accept a line the strict route refuses, and must answer exactly what the
scanner route answers; property tests hold it to both.
"""

from __future__ import annotations

import decimal
import enum
import re
from typing import Final

from chartscore import _format
from chartscore.io.jsonl import MAX_NUMBER_CHARS
from chartscore.metrics import FieldType, Value
from chartscore.records.evidence import ReviewerState, SourceKind, TransformationKind
from chartscore.records.normalize import NUMBER_MAX_DIGITS, NUMBER_MAX_EXPONENT
from chartscore.records.prediction_row import PredictionRow, new_row

# Numbers with a fraction or exponent become exact Decimals in C. The context
# traps anything outside chartscore's range (more than 100 digits, or beyond
# 1e+-9999), so every Decimal a fast route returns is already in range. The
# literal's length (at most MAX_NUMBER_CHARS, as the strict route reads it) is
# checked on its text before: the Decimal no longer shows it.
IN_RANGE: Final = decimal.Context(
    prec=NUMBER_MAX_DIGITS,
    Emax=NUMBER_MAX_EXPONENT,
    Emin=-NUMBER_MAX_EXPONENT,
    traps=[
        decimal.Rounded,
        decimal.Inexact,
        decimal.Overflow,
        decimal.Underflow,
        decimal.Subnormal,
        decimal.Clamped,
        decimal.InvalidOperation,
    ],
)


# A JSON string with no escape and no control character reads as its own text.
_STRING: Final = r'"[^"\\\x00-\x1f]*"'
_CASE_ID: Final = rf'"([^"\\\x00-\x1f]{{1,{_format.MAX_CASE_ID_LENGTH}}})"'
_FIELD_ID: Final = f'"({_format.FIELD_ID_PATTERN})"'
_DIGEST: Final = f'"({_format.DIGEST_PATTERN})"'
_OFFSET: Final = "(0|[1-9][0-9]{0,18})"  # compared with the largest offset in Python


def _words(closed: type[enum.StrEnum]) -> str:
    return "|".join(member.value for member in closed)


_FIELD_TYPE: Final = _words(FieldType)
_SOURCE_KIND: Final = _words(SourceKind)
_TRANSFORMATION_KIND: Final = _words(TransformationKind)
_REVIEWER_STATE: Final = _words(ReviewerState)
_END: Final = r"\}[ \t\r]*"


def _patterns(space: str) -> tuple[str, str]:
    """The gold and prediction line patterns, with ``space`` after each comma and colon.

    One pattern per separator style: an optional space at each of a chain
    line's forty separators would cost the matcher about a quarter more.
    """

    def key(name: str) -> str:
        return f'"{name}":{space}'

    then = "," + space
    # A value, in five groups: string, literal word, integer (at most 100 digits),
    # number with a fraction or exponent, or the inside of a list of strings.
    value = (
        rf'(?:"([^"\\\x00-\x1f]*)"|(null|true|false)|(-?(?:0|[1-9][0-9]{{0,99}}))'
        r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))"
        rf"|\[((?:{_STRING}(?:{then}{_STRING})*)?)\])"
    )
    source = (
        rf"\{{{key('source_digest')}{_DIGEST}{then}{key('start_offset')}{_OFFSET}"
        rf"{then}{key('end_offset')}{_OFFSET}"
        rf'(?:{then}{key("kind")}"({_SOURCE_KIND})")?\}}'
    )
    chain = (
        rf"\{{{key('field_id')}{_FIELD_ID}"
        rf"{then}{key('source_locations')}\[{source}(?:{then}{source})?\]"
        rf"{then}{key('normalized_fact_digest')}{_DIGEST}"
        rf'{then}{key("transformation_kind")}"(?:{_TRANSFORMATION_KIND})"'
        rf'{then}{key("transformation_digest")}"{_format.DIGEST_PATTERN}"'
        rf"{then}{key('uncertainty')}(0|1|0\.[0-9]{{1,20}}|1\.0{{1,20}})"
        rf'{then}{key("reviewer_state")}"(?:{_REVIEWER_STATE})"\}}'
    )
    gold = (
        rf"\{{{key('case_id')}{_CASE_ID}{then}{key('field_id')}{_FIELD_ID}"
        rf'{then}{key("field_type")}"({_FIELD_TYPE})"{then}{key("value")}{value}{_END}'
    )
    prediction = (
        rf"\{{{key('case_id')}{_CASE_ID}{then}{key('field_id')}{_FIELD_ID}"
        rf"{then}{key('value')}{value}"
        rf"(?:{then}{key('normalized_fact_digest')}{_DIGEST})?"
        rf"(?:{then}{key('evidence_chain')}{chain})?{_END}"
    )
    return gold, prediction


_SPACED_START: Final = '{"case_id": '
_GOLD_SPACED, _PREDICTION_SPACED = (re.compile(p).fullmatch for p in _patterns(" "))
_GOLD_COMPACT, _PREDICTION_COMPACT = (re.compile(p).fullmatch for p in _patterns(""))


def gold_line(text: str) -> re.Match[str] | None:
    """The match of a gold line in the documented layout, or None."""
    if text.startswith(_SPACED_START):
        return _GOLD_SPACED(text)
    return _GOLD_COMPACT(text)


def prediction_line(text: str) -> re.Match[str] | None:
    """The match of a prediction line in the documented layout, or None."""
    if text.startswith(_SPACED_START):
        return _PREDICTION_SPACED(text)
    return _PREDICTION_COMPACT(text)


_FIELD_TYPES: Final = {member.value: member for member in FieldType}
_LITERALS: Final = {"null": None, "true": True, "false": False}
_ITEMS: Final = re.compile(r'"([^"]*)"').findall  # inside a list the pattern checked
_CLINICAL: Final = SourceKind.CLINICAL_RECORD.value
_GENERATED: Final = SourceKind.GENERATED_TEXT.value
_MAX_OFFSET: Final = _format.MAX_OFFSET


def _value(
    string: str | None, literal: str | None, integer: str | None, number: str | None, items: str
) -> Value:
    # Raises ArithmeticError for a number out of range (IN_RANGE's traps).
    if string is not None:
        return string
    if literal is not None:
        return _LITERALS[literal]
    if integer is not None:
        return int(integer)
    if number is not None:
        if len(number) > MAX_NUMBER_CHARS:
            raise ArithmeticError  # too long, as the strict route reads it
        return IN_RANGE.create_decimal(number)
    return frozenset(_ITEMS(items))


def gold(match: re.Match[str]) -> tuple[str, str, FieldType, Value] | None:
    """The row of a line :func:`gold_line` matched, or None for the strict route."""
    case_id, field_id, field_type, string, literal, integer, number, items = match.groups()
    if string is not None:
        return case_id, field_id, _FIELD_TYPES[field_type], string
    try:
        value = _value(string, literal, integer, number, items)
    except ArithmeticError:
        return None
    return case_id, field_id, _FIELD_TYPES[field_type], value


def prediction(match: re.Match[str]) -> PredictionRow | None:
    """The row of a line :func:`prediction_line` matched, or None for the strict route."""
    (
        case_id,
        field_id,
        string,
        literal,
        integer,
        number,
        items,
        digest,
        chain_field,
        first_digest,
        first_start,
        first_end,
        first_kind,
        second_digest,
        second_start,
        second_end,
        second_kind,
        fact,
        uncertainty,
    ) = match.groups()
    if string is not None:
        value: Value = string
    else:
        try:
            value = _value(string, literal, integer, number, items)
        except ArithmeticError:
            return None
    if chain_field is None:
        return new_row(PredictionRow, (case_id, field_id, value, 0, None, None))
    start, end = int(first_start), int(first_end)
    if not start < end <= _MAX_OFFSET:
        return None
    clinical = first_kind != _GENERATED
    if second_digest is not None:
        second_start, second_end = int(second_start), int(second_end)
        if not second_start < second_end <= _MAX_OFFSET:
            return None
        first = (first_digest, start, end, first_kind or _CLINICAL)
        if first == (second_digest, second_start, second_end, second_kind or _CLINICAL):
            return None  # a duplicate source
        clinical = clinical or second_kind != _GENERATED
    # The pattern's chain has one or two spans: supported (1), or evidence that is not (2).
    evidence = 1 if clinical and chain_field == field_id and fact == digest else 2
    return new_row(
        PredictionRow, (case_id, field_id, value, evidence, _uncertainty(uncertainty), None)
    )


def _uncertainty(text: str) -> int | decimal.Decimal:
    # "0" and "1" are JSON integers; other literals are exact decimals (docs/formats.md).
    # Cached: a producer declares few distinct uncertainties, and a Decimal costs a line's time.
    found = _UNCERTAINTIES.get(text)
    if found is None:
        if len(_UNCERTAINTIES) >= 4096:
            _UNCERTAINTIES.clear()
        found = _UNCERTAINTIES[text] = int(text) if text in ("0", "1") else decimal.Decimal(text)
    return found


_UNCERTAINTIES: dict[str, int | decimal.Decimal] = {}
