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

from chartscore._format import (
    DIGEST_PATTERN,
    FIELD_ID_PATTERN,
    FORMAT_KEYS,
    MAX_CASE_ID_LENGTH,
    MAX_OFFSET,
)


class _RememberingMatcher:
    """A full-match check for strings that remembers the ones that passed.

    Field ids and source and transformation digests repeat on row after row;
    a dict lookup is far cheaper than the regular expression. The memory is
    bounded: it starts over when full. It maps each remembered string to the
    first equal one it saw, so records can keep that one shared copy instead
    of one per row (:meth:`canonical`).
    """

    def __init__(self, pattern: str, limit: int = 1 << 16) -> None:
        self._match = re.compile(pattern).fullmatch
        self._limit = limit
        self.known: dict[str, str] = {}

    def canonical(self, value: object) -> str | None:
        """The remembered string equal to ``value`` if it passes, else None."""
        if type(value) is not str:
            return None
        known = self.known.get(value)
        if known is not None:
            return known
        if self._match(value) is None:
            return None
        if len(self.known) >= self._limit:
            self.known.clear()
        self.known[value] = value
        return value


_field_id = _RememberingMatcher(FIELD_ID_PATTERN)
_digest = _RememberingMatcher(DIGEST_PATTERN)
_digest_match = re.compile(DIGEST_PATTERN).fullmatch
known_field_ids: Final = _field_id.known
"""Field ids already checked, each mapped to its shared copy (read directly on hot paths)."""
known_digests: Final = _digest.known
"""Digests already checked by :func:`is_digest`, each mapped to its shared copy."""
canonical_field_id: Final = _field_id.canonical
"""A valid field id's shared copy, or None for an invalid one (see :func:`is_field_id`)."""
canonical_digest: Final = _digest.canonical
"""A valid digest's shared copy, or None for an invalid one (see :func:`is_digest`)."""


def is_format_key(value: object) -> bool:
    """Whether ``value`` is one of the format's own key names (never free text)."""
    return type(value) is str and value in FORMAT_KEYS


def is_case_id(value: object) -> bool:
    """A case id is a non-empty ``str`` of at most 128 characters of text (:func:`is_text`)."""
    return type(value) is str and 0 < len(value) <= MAX_CASE_ID_LENGTH and is_text(value)


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def is_text(value: str) -> bool:
    """Whether a ``str`` holds no lone surrogate (JSON's ``\\ud800``, which UTF-8 cannot hold).

    Why: a case id is written out as UTF-8 (worklists) and as canonical JSON (release
    records, RFC 8785), and neither can hold one; it is refused where it is read.
    """
    return value.isascii() or _LONE_SURROGATE.search(value) is None


def escape_lone_surrogates(text: str) -> str:
    """JSON text with each lone surrogate written as its ``\\uXXXX`` escape (reads back alike)."""
    if is_text(text):
        return text
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def is_field_id(value: object) -> bool:
    """A field id is a dotted, lowercase, developer-authored schema name."""
    return canonical_field_id(value) is not None


def is_digest(value: object) -> bool:
    """A digest is ``sha256:`` followed by 64 lowercase hexadecimal digits."""
    return canonical_digest(value) is not None


def is_unique_digest(value: object) -> bool:
    """:func:`is_digest` for a digest unlikely to repeat (a fact digest names one answer).

    The same rule, without remembering the value: unique digests would only
    push the repeated ones (sources, transformations) out of the memory.
    """
    return type(value) is str and _digest_match(value) is not None


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
