"""The field types and the shape of a field value: closed words every layer may name.

They sit below the records so that the row checks (:mod:`chartscore.records.rows`) and the
records (:mod:`chartscore.records.model`) can share them without importing each other.
Nothing here holds a value.
"""

from __future__ import annotations

import enum
from decimal import Decimal

from chartscore.errors import ChartscoreError, ErrorCode

Scalar = str | int | float | Decimal | bool
Value = Scalar | frozenset[str] | None
"""A field value: None (unanswerable gold / explicit abstention), a scalar, or a
set of strings for multi-select fields."""


class FieldType(enum.StrEnum):
    """The closed set of field types; each has its own normalization."""

    TEXT = "text"
    CATEGORICAL = "categorical"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATE = "date"
    ORDINAL = "ordinal"
    MULTI = "multi"


def to_field_type(value: object) -> FieldType:
    """A :class:`FieldType` from a member or its exact string value."""
    found = field_type_or_none(value)
    if found is None:
        raise ChartscoreError(ErrorCode.INVALID_FIELD_TYPE)
    return found


def field_type_or_none(value: object) -> FieldType | None:
    """The :class:`FieldType` a member or its exact string value names; else None.

    Checked by ``type()`` first, so a caller's object is never asked anything.
    """
    if type(value) is FieldType:
        return value
    if type(value) is str and value in FieldType._value2member_map_:
        return FieldType(value)
    return None
