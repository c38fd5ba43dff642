"""Type-aware normalization: one function per field type.

Each normalizer maps a value to a comparable key, or to ``None`` when the value
is not a value of that type (a wrong-type answer never matches). None of them
guesses: no units, synonyms, tolerances or learned mappings.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Final

NUMBER_MAX_DIGITS: Final = 100
"""A number may have at most this many coefficient digits (leading zeros aside)."""

NUMBER_MAX_EXPONENT: Final = 9999
"""A nonzero number's magnitude must lie within 1e-9999 .. 1e+9999 (inclusive)."""

_INT_LIMIT: Final = 10**NUMBER_MAX_DIGITS
# ``\d`` in a str pattern matches exactly the characters for which
# ``str.isdecimal()`` is true (Unicode general category Nd), the same
# characters Python's Decimal reads as digits; a test pins all three together.
_NUMBER_LITERAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?").fullmatch
_DATE_LITERAL = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?").fullmatch

# Days in each month of a common year (index 1..12); February 29 is checked apart.
_MONTH_DAYS: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

DateKey = tuple[int, int | None, int | None]
"""A normalized date: (year, month or None, day or None); the Nones give the precision."""


def normalize_text(value: str) -> str:
    """NFKC, case folding, NFKC again, then whitespace collapsed to single spaces.

    The second NFKC makes the result idempotent: case folding can produce text
    that NFKC would change again (for example U+1E9E, capital sharp s).
    """
    if value.isascii():
        return " ".join(value.lower().split())
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", value).casefold())
    return " ".join(folded.split())


def text_key(value: object) -> str | None:
    """Normalized text for a ``str``; None for anything else."""
    return normalize_text(value) if type(value) is str else None


def number_in_range(number: int | Decimal) -> bool:
    """Whether a number has at most 100 significant digits and exponent within +-9999."""
    if isinstance(number, int):
        return -_INT_LIMIT < number < _INT_LIMIT
    if not number:
        return True
    digits = len(number.as_tuple().digits)
    return digits <= NUMBER_MAX_DIGITS and abs(number.adjusted()) <= NUMBER_MAX_EXPONENT


def parse_number_literal(text: str) -> Decimal | None:
    """A decimal literal as Python's ``Decimal`` reads it, within limits, or None.

    The grammar: an optional ``+`` or ``-``; digits, with an optional ``.`` and
    optional digits after it (``5.``), or a ``.`` and digits (``.5``); then an
    optional exponent, ``e`` or ``E``, an optional sign and digits. A digit is
    any Unicode decimal digit (``str.isdecimal``: ASCII 7, Arabic-Indic U+0667,
    Devanagari U+096D, ...), read as its decimal value; scripts may mix.

    No thousands separators, underscores, spaces, units, NaN or infinities; the
    value must be within the documented range (100 coefficient digits, exponent
    +-9999). The caller trims and applies NFKC.
    """
    if _NUMBER_LITERAL(text) is None:
        return None
    number: Decimal | None = None
    try:
        number = Decimal(text)
    except InvalidOperation:  # an exponent too large for Decimal itself
        number = None
    # Under a caller's decimal context without traps, Decimal gives NaN instead
    # of raising: is_finite() catches that.
    if number is None or not number.is_finite() or not number_in_range(number):
        return None
    return number


def number_key(value: object) -> int | Decimal | None:
    """An exact number for an int, Decimal, float or numeric string; None otherwise.

    Strings are read after NFKC and trimming surrounding whitespace. A Python
    float (library use only; files never produce one) is read by its shortest
    repr, so ``0.1`` means ``Decimal("0.1")``. Booleans are not numbers.
    """
    if type(value) is int:
        return value if number_in_range(value) else None
    if type(value) is Decimal:
        return value if value.is_finite() and number_in_range(value) else None
    if type(value) is str:
        text = value if value.isascii() else unicodedata.normalize("NFKC", value)
        return parse_number_literal(text.strip())
    if type(value) is float:
        return parse_number_literal(repr(value))
    return None


def boolean_key(value: object) -> bool | None:
    """Only real booleans are booleans: 1, "true" and "yes" are not."""
    return value if type(value) is bool else None


def date_key(value: object) -> DateKey | None:
    """An ISO 8601 calendar date ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``, or None.

    Read after NFKC and trimming. Years run 0001..9999; impossible dates such
    as 2023-02-30 are not dates.
    """
    if type(value) is not str:
        return None
    text = value if value.isascii() else unicodedata.normalize("NFKC", value)
    match = _DATE_LITERAL(text.strip())
    if match is None:
        return None
    year = int(match[1])
    if year < 1:
        return None
    if match[2] is None:
        return (year, None, None)
    month = int(match[2])
    if not 1 <= month <= 12:
        return None
    if match[3] is None:
        return (year, month, None)
    day = int(match[3])
    if not 1 <= day <= _MONTH_DAYS[month] and not (
        month == 2 and day == 29 and calendar.isleap(year)
    ):
        return None
    return (year, month, day)


def multi_key(value: object) -> frozenset[str] | None:
    """The set of normalized item texts for a multi-select answer, or None."""
    if type(value) is not frozenset:
        return None
    return frozenset(normalize_text(item) for item in value)
