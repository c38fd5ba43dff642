"""Strict JSON Lines reading with line numbers, bounded memory and closed errors.

Each line is one JSON object. Integers decode to ``int`` and every other number
to an exact ``Decimal`` (never a binary float). NaN and Infinity, duplicate
keys, invalid UTF-8, lines over :data:`MAX_LINE_BYTES`, pathological numbers
and pathological nesting are refused with a :class:`ChartscoreError` that
names the input and line, never the content. A UTF-8 byte order mark, CRLF line
ends and blank lines are accepted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Final, Protocol

from chartscore._format import AGREEMENT_MARKER, AGREEMENT_OPENING, WORKLIST_SIGNATURE
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.records.normalize import NUMBER_MAX_DIGITS, number_in_range

MAX_LINE_BYTES: Final = 1 << 20
"""The longest accepted line, 1 MiB including its line terminator."""

MAX_NUMBER_CHARS: Final = NUMBER_MAX_DIGITS + 20
"""The longest accepted non-integer number literal: 100 digits plus sign, point and exponent.

A longer literal is refused even when few of its digits are significant
(``0.`` and 150 zeros, then ``1``); the fast routes apply the same limit.
"""
_BOM: Final = b"\xef\xbb\xbf"
_BLOCK_BYTES: Final = 1 << 18  # 256 KiB read at a time
_PROGRESS_LINES: Final = 1 << 14
_JSON_BLANK: Final = " \t\r\n"
_NONFINITE_WORDS: Final = frozenset({"nan", "inf", "infinity"})


class ByteReader(Protocol):
    """A binary input: ``read(size)`` returns up to ``size`` bytes, ``b""`` at the end."""

    def read(self, size: int = -1, /) -> bytes: ...


class _RefusedError(Exception):
    """Raised inside the JSON decoder's hooks; carries only a code."""

    def __init__(self, code: ErrorCode) -> None:
        super().__init__()
        self.code = code


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _RefusedError(ErrorCode.DUPLICATE_KEY)
    return result


def _decimal(text: str) -> Decimal:
    if len(text) > MAX_NUMBER_CHARS:
        raise _RefusedError(ErrorCode.NUMBER_OUT_OF_RANGE)
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the JSON grammar admits only valid literals
        number = Decimal("NaN")
    if not (number.is_finite() and number_in_range(number)):
        raise _RefusedError(ErrorCode.NUMBER_OUT_OF_RANGE)
    return number


def _integer(text: str) -> int:
    # JSON integers have no leading zeros, so more than 100 digits means |n| >= 10**100.
    if len(text) > NUMBER_MAX_DIGITS and len(text.lstrip("-")) > NUMBER_MAX_DIGITS:
        raise _RefusedError(ErrorCode.NUMBER_OUT_OF_RANGE)
    return int(text)


def _constant(_: str) -> object:
    raise _RefusedError(ErrorCode.NONFINITE_NUMBER)


def _parse(text: str) -> tuple[object, ErrorCode | None]:
    # Returns instead of raising so callers raise outside any except block.
    try:
        return _DECODE(text), None
    except _RefusedError as refused:
        return None, refused.code
    except RecursionError:
        return None, ErrorCode.NESTING_TOO_DEEP
    except ValueError:  # JSONDecodeError, or an integer beyond Python's digit limit
        return None, ErrorCode.INVALID_JSON


def decode_document(
    text: str, source: InputKind, *, first_line: int = 1, item: int | None = None
) -> object:
    """Decode one whole JSON text strictly (a schema file; one task of an export).

    Args:
        text: The JSON text.
        source: Which input it is, for error locations.
        first_line: The input's line that ``text`` starts on (for a part of an input).
        item: The 0-based item of the input that ``text`` is, if it is one.

    Raises:
        ChartscoreError: ``invalid_json`` naming the line of the syntax error,
            or ``nonfinite_number``, ``number_out_of_range``,
            ``nesting_too_deep`` or ``duplicate_key`` (the whole input, or the item).
    """
    line: int | None = None
    try:
        return _DECODE(text)
    except _RefusedError as refused:
        code = refused.code
    except RecursionError:
        code = ErrorCode.NESTING_TOO_DEEP
    except json.JSONDecodeError as error:
        code, line = ErrorCode.INVALID_JSON, error.lineno + first_line - 1
    except ValueError:  # pragma: no cover - integers are bounded before int() sees them
        code = ErrorCode.INVALID_JSON
    located = item if line is None else None
    raise ChartscoreError(code, input=source, line=line, item=located)  # outside the handlers


def decimal_literal(text: str) -> Decimal:
    """An exact, bounded ``Decimal`` for a number literal, as the JSON reader reads one.

    Raises:
        ChartscoreError: ``number_out_of_range`` (more than 100 digits, or a
            magnitude beyond 1e+-9999) or ``nonfinite_number``.
    """
    number: Decimal | None = None
    code: ErrorCode | None = None
    if text.lstrip("+-").lower() in _NONFINITE_WORDS:
        raise ChartscoreError(ErrorCode.NONFINITE_NUMBER)
    try:
        number = _decimal(text)
    except _RefusedError as refused:
        code = refused.code
    if code is not None or number is None:
        raise ChartscoreError(code or ErrorCode.NUMBER_OUT_OF_RANGE)
    return number


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_object,
    parse_float=_decimal,
    parse_int=_integer,
    parse_constant=_constant,
)
_DECODE: Final = _DECODER.decode


def iter_batches(
    stream: ByteReader,
    source: InputKind,
    on_line: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(first_line_number, lines)``: the stream's lines in batches, blank ones included.

    The blocks of :func:`iter_text`, split in C, so the per-line cost is one
    list item; memory stays under about two blocks plus one line.

    Args:
        stream: A file opened in binary mode.
        source: Which input this is, for error locations.
        on_line: Called with each multiple of 16,384 lines reached (progress).

    Raises:
        ChartscoreError: any code of :func:`iter_text`.
    """
    mark = _PROGRESS_LINES
    for first, text in iter_text(stream, source):
        lines = text.split("\n")
        lines.pop()  # the empty string after the last line end
        yield first, lines
        line = first - 1 + len(lines)
        while on_line is not None and mark <= line:
            on_line(mark)
            mark += _PROGRESS_LINES


def iter_text(
    stream: ByteReader, source: InputKind, *, worklist: bool = False
) -> Iterator[tuple[int, str]]:
    """Yield ``(first_line_number, text)``: the stream's text in blocks of whole lines.

    Every block ends with a line end (one is added after a last line without
    one). Reads blocks of :data:`_BLOCK_BYTES` and checks what can be checked
    before parsing: readability, the line length limit (detected after
    reading at most the limit plus one block) and UTF-8. A byte order mark at
    the start of the file is dropped.

    Args:
        stream: The input.
        source: Its name in errors.
        worklist: The one reader of an adjudication worklist (``import
            adjudication``) reads one: it is not refused.

    Raises:
        ChartscoreError: ``file_unreadable``, ``line_too_long`` or ``not_utf8``;
            ``inside_only_worklist`` (line 1) for an adjudication worklist;
            ``agreement_not_shareable`` (line 1) for an agreement document.
    """
    carry = b""
    line = 0  # lines yielded so far
    at_start = True
    while True:
        block = b""
        code: ErrorCode | None = None
        try:
            block = stream.read(_BLOCK_BYTES)
        except OSError:
            code = ErrorCode.FILE_UNREADABLE
        if code is not None:
            raise ChartscoreError(code, input=source, line=line + 1)
        if at_start:
            at_start = False
            if block.startswith(_BOM):
                block = block[len(_BOM) :]
        data = carry + block if carry else block
        if not block:
            if not data:
                return
            if len(data) > MAX_LINE_BYTES:
                raise ChartscoreError(ErrorCode.LINE_TOO_LONG, input=source, line=line + 1)
            complete, carry = data + b"\n", b""  # a last line without a line end
        else:
            cut = data.rfind(b"\n") + 1
            complete, carry = data[:cut], data[cut:]
            if len(carry) > MAX_LINE_BYTES:  # too long, wherever its line end is
                raise ChartscoreError(
                    ErrorCode.LINE_TOO_LONG, input=source, line=line + complete.count(b"\n") + 1
                )
            if not complete:
                continue
        if len(complete) > MAX_LINE_BYTES and block:
            _check_line_lengths(complete, source, line)
        text = ""
        bad_byte = -1
        try:
            text = complete.decode("utf-8")
        except UnicodeDecodeError as error:
            bad_byte = error.start
        if bad_byte >= 0:
            bad_line = line + complete.count(b"\n", 0, bad_byte) + 1
            raise ChartscoreError(ErrorCode.NOT_UTF8, input=source, line=bad_line)
        if line == 0 and not worklist and text.startswith(WORKLIST_SIGNATURE):
            # Patient-level case ids, never an input to score or share: said so, not parsed.
            raise ChartscoreError(ErrorCode.INSIDE_ONLY_WORKLIST, input=source, line=1)
        if line == 0 and is_agreement_line(text):
            # agree's document given as rows (to share it, most likely): no rule shares it.
            raise ChartscoreError(ErrorCode.AGREEMENT_NOT_SHAREABLE, input=source, line=1)
        yield line + 1, text
        line += complete.count(b"\n")


def is_agreement_line(text: str) -> bool:
    """Whether the first line of ``text`` is an agreement document (``chartscore agree``)."""
    if not text.startswith(AGREEMENT_OPENING):
        return False
    end = text.find("\n")
    return AGREEMENT_MARKER in (text if end < 0 else text[:end])


def _check_line_lengths(complete: bytes, source: InputKind, before: int) -> None:
    # Rare: a region long enough to hold an over-long line; find and name it.
    for offset, raw in enumerate(complete.split(b"\n")[:-1]):
        if len(raw) + 1 > MAX_LINE_BYTES:
            raise ChartscoreError(ErrorCode.LINE_TOO_LONG, input=source, line=before + offset + 1)


def iter_lines(
    stream: ByteReader,
    source: InputKind,
    on_line: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, blank ones included.

    See :func:`iter_batches`, which this unpacks.
    """
    for first, lines in iter_batches(stream, source, on_line):
        for offset, text in enumerate(lines):
            yield first + offset, text


def parse_object(text: str, source: InputKind, line: int) -> dict[str, object] | None:
    """Strictly decode one line: its object, or None for a blank line.

    Raises:
        ChartscoreError: ``invalid_json``, ``nonfinite_number``,
            ``number_out_of_range``, ``nesting_too_deep``, ``duplicate_key`` or
            ``not_an_object``, located at ``line``.
    """
    value, code = _parse(text)
    if code is not None:
        if code is ErrorCode.INVALID_JSON and not text.strip(_JSON_BLANK):
            return None
        raise ChartscoreError(code, input=source, line=line)
    if type(value) is not dict:
        raise ChartscoreError(ErrorCode.NOT_AN_OBJECT, input=source, line=line)
    return value


def iter_objects(
    stream: ByteReader,
    source: InputKind,
    on_line: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield ``(line_number, object)`` for each non-blank line, strictly decoded.

    Raises:
        ChartscoreError: any code of :func:`iter_lines` or :func:`parse_object`.
    """
    for line, text in iter_lines(stream, source, on_line):
        value = parse_object(text, source, line)
        if value is not None:
            yield line, value
