"""Reading run cost from a predictions file: a line's ``usage`` object and the run header.

A ``usage`` object holds the system's own magnitudes for one prediction line: tokens in
and out, latency in milliseconds and cost in the run header's currency. It is read into a
plain tuple of exact integers in the smallest units of :mod:`chartscore.stats.run_cost`
(tokens, nanoseconds, billionths), None where a key is absent, so it crosses the reader's
pipe and Dask's partitions as cheaply as the rest of the row.

The run header is a line ``{"chartscore_run": {...}}``: no prediction line can look like it
(a prediction needs ``case_id``). Its model name and version are free text chosen by the
operator, so they are held to a small character set and never shown in an error.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

from chartscore import _format
from chartscore.errors import ErrorCode, fail
from chartscore.stats.run_cost import UNITS_PER, RunHeader

Usage = tuple[int | None, int | None, int | None, int | None]
"""A checked ``usage`` object: input tokens, output tokens, latency in ns, cost in billionths."""

MAX_TOKENS: Final = 10**12
"""The largest token count one line may give."""
MAX_MAGNITUDE: Final = 10**12
"""The largest latency (ms), cost or price one line or header may give."""

_USAGE_KEYS: Final = frozenset(_format.USAGE_KEY_ORDER)
_HEADER_KEYS: Final = frozenset(_format.RUN_HEADER_KEY_ORDER)
_PRICE_KEYS: Final = frozenset(_format.PRICE_KEY_ORDER)
_NAME: Final = re.compile(_format.RUN_NAME_PATTERN).fullmatch
_CURRENCY: Final = re.compile(_format.CURRENCY_PATTERN).fullmatch
_COST_UNITS: Final = UNITS_PER["cost"]
_UNITS: Final = tuple(
    (key, 0 if key.endswith("_tokens") else UNITS_PER[key]) for key in _format.USAGE_KEY_ORDER
)
_ABSENT: Final = object()


def scaled(number: object, units: int) -> int | None:
    """``number`` times ``units`` as an exact int, or None if it is not a finite
    non-negative int or Decimal of at most :data:`MAX_MAGNITUDE` that many units resolve."""
    if type(number) is int:
        whole: int = number
        return whole * units if 0 <= whole <= MAX_MAGNITUDE else None
    if type(number) is not Decimal or not number.is_finite():
        return None
    if not 0 <= number <= MAX_MAGNITUDE:  # exact comparisons (also for a Decimal)
        return None
    result: int
    _, digits, exponent = number.as_tuple()
    coefficient = int("".join(map(str, digits)))
    places = len(str(units)) - 1  # units is a power of ten
    shift = int(exponent) + places
    if shift >= 0:
        result = coefficient * 10**shift
        return result
    divisor: int = 10**-shift
    if coefficient % divisor:
        return None  # finer than the unit: more decimals than the format allows
    result = coefficient // divisor
    return result


def usage_of(raw: object) -> Usage:
    """The checked :data:`Usage` of a prediction line's ``usage`` object.

    Raises:
        ChartscoreError: ``invalid_usage`` when it is not an object, is empty, has a null,
            or a count is not an integer from 0 to 10^12, or latency or cost is not a number
            from 0 to 10^12 with at most 6 (latency) or 9 (cost) decimals; ``unknown_key``
            for another key (named only when it is a format key).
    """
    found = usage_or_none(raw)
    if found is None:  # say why, precisely
        if type(raw) is dict and not raw.keys() <= _USAGE_KEYS:
            named = sorted(key for key in raw.keys() - _USAGE_KEYS if key in _format.FORMAT_KEYS)
            fail(ErrorCode.UNKNOWN_KEY, key=named[0] if named else None)
        fail(ErrorCode.INVALID_USAGE)
    return found


def usage_or_none(raw: object) -> Usage | None:
    """:func:`usage_of`'s answer, or None where it raises: the fast route asks this, no error."""
    if type(raw) is not dict or not raw or not raw.keys() <= _USAGE_KEYS:
        return None
    found: list[int | None] = []
    for key, units in _UNITS:
        item = raw.get(key, _ABSENT)
        if item is _ABSENT:
            found.append(None)
        elif units:
            amount = scaled(item, units)  # None for a null, a bool, a string...
            if amount is None:
                return None
            found.append(amount)
        elif type(item) is int and 0 <= item <= MAX_TOKENS:
            found.append(item)
        else:
            return None
    return (found[0], found[1], found[2], found[3])


def is_run_header(row: dict[str, object]) -> bool:
    """Whether a parsed line is a run header (it has the header's key)."""
    return _format.RUN_HEADER_KEY in row


def run_header_of(row: dict[str, object]) -> RunHeader:
    """The checked :class:`RunHeader` of a header line ``{"chartscore_run": {...}}``.

    Raises:
        ChartscoreError: ``invalid_run_header`` when the line has another key beside it,
            the header or its price is not an object, a name is outside
            ``RUN_NAME_PATTERN``, the currency outside ``CURRENCY_PATTERN`` (both in
            :mod:`chartscore._format`; a price requires the currency), or a price is
            not a number from 0 to 10^12 with at most 9 decimals; ``unknown_key`` for
            another key in the header or price.
    """
    header = row[_format.RUN_HEADER_KEY]
    if len(row) != 1 or type(header) is not dict:
        fail(ErrorCode.INVALID_RUN_HEADER)
    _known_keys(header.keys(), _HEADER_KEYS)
    if None in header.values():
        fail(ErrorCode.INVALID_RUN_HEADER)
    model = _name(header.get("model"))
    version = _name(header.get("model_version"))
    price = header.get("price")
    if price is None:
        return RunHeader(model, version)
    if type(price) is not dict:
        fail(ErrorCode.INVALID_RUN_HEADER)
    _known_keys(price.keys(), _PRICE_KEYS)
    if None in price.values():
        fail(ErrorCode.INVALID_RUN_HEADER)
    currency = price.get("currency")
    if type(currency) is not str or _CURRENCY(currency) is None:
        fail(ErrorCode.INVALID_RUN_HEADER)
    prices = []
    for key in _format.PRICE_KEY_ORDER[1:]:
        raw = price.get(key)
        amount = None if raw is None else scaled(raw, _COST_UNITS)
        if raw is not None and amount is None:
            fail(ErrorCode.INVALID_RUN_HEADER)
        prices.append(amount)
    return RunHeader(model, version, currency, prices[0], prices[1])


def _known_keys(keys: object, allowed: frozenset[str]) -> None:
    unknown = set(keys) - allowed  # type: ignore[call-overload]
    if unknown:
        named = sorted(key for key in unknown if key in _format.FORMAT_KEYS)
        fail(ErrorCode.UNKNOWN_KEY, key=named[0] if named else None)


def _name(raw: object) -> str | None:
    if raw is None:
        return None
    if type(raw) is not str or _NAME(raw) is None:
        fail(ErrorCode.INVALID_RUN_HEADER)
    return raw
