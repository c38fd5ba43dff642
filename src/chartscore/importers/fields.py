"""An imported field and how its cells become values: the rule every importer shares.

A cell is a string as the export wrote it. For **gold** a cell must be a valid
value of its field (a declared choice or level, a number, an ISO date such as
``2023-04-17``, a boolean word), or the importer stops with ``invalid_cell`` at its line and
column: a gold set that does not say what it means is not scored. For
**predictions** a cell that is not a value of its type is kept as the text it is,
and simply never agrees (a wrong-type answer, as in every predictions file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Final, TypeVar, cast

import attrs

from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.metrics import FieldType, Value
from chartscore.records.normalize import date_key, normalize_text, parse_number_literal
from chartscore.records.schema import MAX_LABEL_LENGTH

INVALID: Final = object()
"""What :func:`cell_value` returns for a gold cell that is not a value of its field."""

_INTEGER: Final = re.compile(r"[+-]?[0-9]+").fullmatch

REDCAP_BOOLEANS: Final[Mapping[str, bool]] = {"1": True, "0": False}
"""REDCap's raw yes/no and true/false codes."""

DEFAULT_BOOLEANS: Final[Mapping[str, bool]] = {
    "true": True,
    "yes": True,
    "1": True,
    "false": False,
    "no": False,
    "0": False,
}
"""The boolean words of a CSV table unless its column map declares others (case-insensitive)."""


@attrs.frozen(repr=False)
class ImportedField:
    """A field an importer writes: its id, type and schema options (developer-authored).

    Attributes:
        field_id: The chartscore field id.
        field_type: Its type.
        choices: Categorical or multi-select choices, or ordinal levels, in order.
        tolerance: A declared number tolerance (``Decimal``) or date tolerance in
            days (``int``); None when none was declared.
        comma_decimal: Numbers are written with a decimal comma (REDCap's
            ``*_comma_decimal`` validations): ``"1,54"`` is 1.54.
        labels: Each choice's display label, in the order of ``choices`` (a REDCap
            choice's label), or ``()``; written as ``choice_labels`` when they are
            what a schema takes (:func:`usable_labels`), else left out.
    """

    field_id: str
    field_type: FieldType
    choices: tuple[str, ...] = ()
    tolerance: Decimal | int | None = None
    comma_decimal: bool = False
    labels: tuple[str, ...] = ()
    normalized_choices: frozenset[str] = attrs.field(
        init=False,
        default=attrs.Factory(
            lambda self: frozenset(normalize_text(choice) for choice in self.choices),
            takes_self=True,
        ),
    )

    def declares(self, code: str) -> bool:
        """Whether ``code`` is a declared choice or level, compared as scoring compares them."""
        return not self.choices or normalize_text(code) in self.normalized_choices

    def __repr__(self) -> str:
        return f"ImportedField({self.field_id!r}, {self.field_type.value!r})"

    def schema_entry(self) -> dict[str, object]:
        """The field's entry in a schema document (docs/formats.md)."""
        entry: dict[str, object] = {"type": self.field_type.value}
        if self.field_type in (FieldType.CATEGORICAL, FieldType.MULTI) and self.choices:
            entry["choices"] = list(self.choices)
        elif self.field_type is FieldType.ORDINAL:
            entry["levels"] = list(self.choices)
        if usable_labels(self.choices, self.labels):
            entry["choice_labels"] = dict(zip(self.choices, self.labels, strict=True))
        if self.tolerance is not None:
            if self.field_type is FieldType.DATE:
                entry["tolerance_days"] = self.tolerance
            else:
                entry["tolerance"] = str(self.tolerance)
        return entry


def usable_labels(codes: tuple[str, ...], labels: tuple[str, ...]) -> bool:
    """Whether ``labels`` can be the codes' ``choice_labels``: one each, distinct, one
    printable line of 1 to 200 characters with no outer spaces (the schema's rule).

    Display text never fails an import: labels that cannot be used are left out.
    """
    return (
        len(labels) == len(codes) > 0
        and len(set(labels)) == len(labels)
        and all(
            0 < len(label) <= MAX_LABEL_LENGTH and label.isprintable() and label.strip() == label
            for label in labels
        )
    )


def number_value(text: str, *, comma_decimal: bool = False) -> int | Decimal | None:
    """A number cell as an exact number (an ``int`` for an integer literal), or None."""
    cleaned = text.strip()
    if comma_decimal and cleaned.count(",") == 1 and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    number = parse_number_literal(cleaned)
    if number is None:
        return None
    if _INTEGER(cleaned) is not None:
        return int(cleaned)
    return number


def cell_value(
    field: ImportedField,
    text: str,
    *,
    gold: bool,
    booleans: Mapping[str, bool],
) -> Value | object:
    """The value of a non-blank cell of ``field`` (not a missing-data code).

    Returns :data:`INVALID` for a gold cell that is not a value of the field;
    a prediction cell that is not one is returned as its text.
    """
    field_type = field.field_type
    value: Value | object = INVALID
    if field_type is FieldType.TEXT:
        value = text
    elif field_type in (FieldType.CATEGORICAL, FieldType.ORDINAL):
        code = text.strip()
        if not gold or field.declares(code):
            value = code if gold else text
    elif field_type is FieldType.BOOLEAN:
        found = booleans.get(normalize_text(text))
        value = found if found is not None else INVALID
    elif field_type is FieldType.NUMBER:
        number = number_value(text, comma_decimal=field.comma_decimal)
        value = number if number is not None else INVALID
    elif field_type is FieldType.DATE:
        day = text.strip()
        if date_key(day) is not None:
            value = day
    if value is INVALID and not gold:
        return text
    return value


def multi_value(field: ImportedField, items: list[str], *, gold: bool) -> list[str] | object:
    """A multi-select value from its items: sorted and distinct; :data:`INVALID` for a gold
    item outside the declared choices."""
    chosen = sorted(set(items))
    if gold and not all(field.declares(item) for item in chosen):
        return INVALID
    return chosen


_T = TypeVar("_T")
_COLLECTIONS: Final = (list, tuple, set, frozenset, range)


def exact_items(values: object, kind: type[_T]) -> tuple[_T, ...]:
    """A caller's list, tuple, set or range of exactly ``kind`` items, read by exact type.

    Raises:
        ChartscoreError: ``usage`` for any other collection or item (a ``str``
            subclass, a ``bool`` for an ``int``): a caller's object never runs code here.
    """
    items = exact_collection(values)
    if not all(type(item) is kind for item in items):
        raise ChartscoreError(ErrorCode.USAGE)
    return cast(tuple[_T, ...], items)


def exact_collection(values: object) -> tuple[object, ...]:
    """The items of a caller's list, tuple, set or range, read by exact type.

    Raises:
        ChartscoreError: ``usage`` for any other collection.
    """
    kind_of_values = type(values)
    if not any(kind_of_values is collection for collection in _COLLECTIONS):  # identity: no __eq__
        raise ChartscoreError(ErrorCode.USAGE)
    return tuple(cast(Iterable[object], values))
