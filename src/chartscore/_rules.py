"""The field-level validity rules, shared by the records and the file reader.

The attrs records and the streaming JSON Lines reader must accept exactly the
same inputs, so both ask these predicates. Each returns a bool and never
raises, which keeps them cheap on the hot path and free of private context.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Final

from chartscore._field_id import FIELD_ID_PATTERN

DIGEST_PATTERN: Final = r"sha256:[0-9a-f]{64}"
MAX_CASE_ID_LENGTH: Final = 128
MAX_OFFSET: Final = (1 << 63) - 1


class _RememberingMatcher:
    """A full-match check for strings that remembers the ones that passed.

    Field ids and source and transformation digests repeat on row after row;
    a set lookup is far cheaper than the regular expression. The memory is
    bounded: it starts over when full.
    """

    def __init__(self, pattern: str, limit: int = 1 << 16) -> None:
        self._match = re.compile(pattern).fullmatch
        self._limit = limit
        self.known: set[str] = set()

    def __call__(self, value: object) -> bool:
        if type(value) is not str:
            return False
        if value in self.known:
            return True
        if self._match(value) is None:
            return False
        if len(self.known) >= self._limit:
            self.known.clear()
        self.known.add(value)
        return True


_field_id = _RememberingMatcher(FIELD_ID_PATTERN)
_digest = _RememberingMatcher(DIGEST_PATTERN)
known_field_ids: Final = _field_id.known
"""Field ids already checked (read directly by the fast path)."""


def is_case_id(value: object) -> bool:
    """A case id is a non-empty ``str`` of at most 128 characters."""
    return type(value) is str and 0 < len(value) <= MAX_CASE_ID_LENGTH


def is_field_id(value: object) -> bool:
    """A field id is a dotted, lowercase, developer-authored schema name."""
    return _field_id(value)


def is_digest(value: object) -> bool:
    """A digest is ``sha256:`` followed by 64 lowercase hexadecimal digits."""
    return _digest(value)


def is_offset(value: object) -> bool:
    """An offset is an ``int`` (not a bool) in 0..2**63-1."""
    return type(value) is int and 0 <= value <= MAX_OFFSET


def is_finite_number(value: object) -> bool:
    """True for an int, a finite float or a finite Decimal; never for a bool."""
    if type(value) is int:
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is Decimal:
        return value.is_finite()
    return False


def is_uncertainty(value: object) -> bool:
    """Uncertainty is a finite number in [0, 1]."""
    return is_finite_number(value) and 0 <= value <= 1  # type: ignore[operator]


def is_scalar_value(value: object) -> bool:
    """A scalar value is None, str, bool, int, or a finite float or Decimal."""
    kind = type(value)
    return value is None or kind is str or kind is bool or is_finite_number(value)


def is_value(value: object) -> bool:
    """A value is a scalar, or a set of strings for multi-select fields.

    Sets arrive as a ``frozenset`` of ``str`` (the records convert lists,
    tuples and sets on construction; the reader converts JSON arrays).
    """
    if type(value) is frozenset:
        return all(type(item) is str for item in value)
    return is_scalar_value(value)
