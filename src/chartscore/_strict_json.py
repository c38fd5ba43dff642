"""Strict reading of chartscore's own JSON documents (reports and their kin).

A saved report comes back from disk, possibly damaged or edited, so loading it
is validation: strict JSON (no NaN or Infinity, no duplicate keys), a known
``format`` and ``format_version``, a closed key vocabulary and numbers of the
right kind in the right range. Failures are value-free
:class:`~chartscore.errors.ChartscoreError` codes (``unknown_report_format``,
``invalid_report``) that never echo the document's text, and they carry no
chained exception.

Value-free: this module sees only chartscore's own output format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from typing import Final, NoReturn

from chartscore.errors import ChartscoreError, ErrorCode

MAX_COUNT: Final = 2**53 - 1
"""The largest integer a report holds (canonical JSON writes integers exactly up to here)."""


def invalid() -> NoReturn:
    """Refuse a malformed document with ``invalid_report``."""
    raise ChartscoreError(ErrorCode.INVALID_REPORT)


class _RefusedError(ValueError):
    """Raised inside the JSON decoder's hooks; converted to a code by :func:`parse`."""


def _unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _RefusedError
    return members


def _refuse_constant(_name: str) -> NoReturn:
    raise _RefusedError


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):  # 1e400 would otherwise become inf
        raise _RefusedError
    return number


def parse(text: str | bytes) -> object:
    """Decode ``text`` as strict JSON.

    Args:
        text: The document, as ``str`` or UTF-8 ``bytes``.

    Returns:
        The decoded value: dicts, lists, strings, ints, floats, bools and None.

    Raises:
        ChartscoreError: ``invalid_report`` for anything that is not strict JSON:
            invalid UTF-8 or syntax, NaN or Infinity, a number beyond the double
            range, a duplicate key or nesting too deep to decode.
    """
    if not isinstance(text, str | bytes):
        invalid()
    document: object = None
    failed = False
    try:
        document = json.loads(
            text,
            object_pairs_hook=_unique_members,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except (ValueError, RecursionError):
        failed = True
    if failed:  # raised here, outside the except block, so no context is chained
        invalid()
    return document


def check_format(document: object, name: str, version: int) -> dict[str, object]:
    """The document as a dict, once its ``format`` and ``format_version`` are known.

    Raises:
        ChartscoreError: ``invalid_report`` when the document is not an object;
            ``unknown_report_format`` when ``format`` is not ``name`` or
            ``format_version`` is not the integer ``version``.
    """
    if type(document) is not dict:
        invalid()
    found_version = document.get("format_version")
    if document.get("format") != name or type(found_version) is not int or found_version != version:
        raise ChartscoreError(ErrorCode.UNKNOWN_REPORT_FORMAT)
    return document


def members(
    value: object, required: Collection[str], optional: Collection[str] = ()
) -> dict[str, object]:
    """``value`` as an object holding every ``required`` key and no key outside both lists."""
    if type(value) is not dict:
        invalid()
    keys = value.keys()
    if not all(key in keys for key in required):
        invalid()
    if any(key not in required and key not in optional for key in keys):
        invalid()
    return value


def mapping(value: object) -> Mapping[str, object]:
    """``value`` as a JSON object (its keys are checked by the caller)."""
    if type(value) is not dict:
        invalid()
    return value


def count(value: object) -> int:
    """A count: an ``int`` (not a bool, not ``2.0``) in 0..2**53-1."""
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        invalid()
    return value


def number(value: object, low: float, high: float) -> float:
    """A JSON number in [low, high], as a float (``0`` and ``1`` arrive as ints)."""
    if type(value) is not int and type(value) is not float:
        invalid()
    result = float(value)
    if not low <= result <= high:
        invalid()
    return result


def interval(value: object, low: float, high: float) -> tuple[float, float]:
    """``[lower, upper]``: two numbers with ``low <= lower <= upper <= high``."""
    if type(value) is not list or len(value) != 2:
        invalid()
    lower, upper = number(value[0], low, high), number(value[1], low, high)
    if lower > upper:
        invalid()
    return (lower, upper)
