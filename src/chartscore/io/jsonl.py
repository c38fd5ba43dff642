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
from typing import BinaryIO, Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.normalize import NUMBER_MAX_DIGITS, number_in_range

MAX_LINE_BYTES: Final = 1 << 20
"""The longest accepted line, 1 MiB including its line terminator."""

_MAX_NUMBER_CHARS: Final = NUMBER_MAX_DIGITS + 20  # digits plus sign, point and exponent
_BOM: Final = b"\xef\xbb\xbf"
_JSON_BLANK: Final = " \t\r\n"


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
    if len(text) > _MAX_NUMBER_CHARS:
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


def decode_document(text: str, source: InputKind) -> object:
    """Decode one whole JSON text strictly (used for schema files)."""
    value, code = _parse(text)
    if code is not None:
        raise ChartscoreError(code, input=source)
    return value


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_object,
    parse_float=_decimal,
    parse_int=_integer,
    parse_constant=_constant,
)
_DECODE: Final = _DECODER.decode


def iter_lines(
    stream: BinaryIO,
    source: InputKind,
    on_line: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of a binary stream, blank ones included.

    Checks what can be checked before parsing: readability, the line length
    limit and UTF-8. A byte order mark at the start of the file is dropped.

    Args:
        stream: A file opened in binary mode.
        source: Which input this is, for error locations.
        on_line: Called with the line number every 16,384 lines (progress).

    Raises:
        ChartscoreError: ``file_unreadable``, ``line_too_long`` or ``not_utf8``.
    """
    readline = stream.readline
    limit = MAX_LINE_BYTES + 1
    line = 0
    while True:
        code: ErrorCode | None = None
        text = ""
        try:
            raw = readline(limit)
            if not raw:
                return
            line += 1
            if len(raw) == limit:
                code = ErrorCode.LINE_TOO_LONG
            else:
                if line == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                text = raw.decode("utf-8")
        except OSError:
            code = ErrorCode.FILE_UNREADABLE
            line += 1
        except UnicodeDecodeError:
            code = ErrorCode.NOT_UTF8
        if code is not None:
            raise ChartscoreError(code, input=source, line=line)
        if on_line is not None and not line & 0x3FFF:
            on_line(line)
        yield line, text


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
    stream: BinaryIO,
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
