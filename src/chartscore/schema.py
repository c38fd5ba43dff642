"""The optional field schema: per-field type and options, authored by developers.

A schema maps field ids to a type and its options (ordinal levels, categorical
and multi-select choices, numeric and date tolerances). It is developer-written
configuration, not patient data, so level and choice names may appear in docs;
errors still name only the code and, when valid, the field id.

Format (JSON, or TOML for a ``.toml`` file)::

    {"fields": {"triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
                "vitals.weight_kg": {"type": "number", "tolerance": "0.5"}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore import _rules
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.model import FieldType, to_field_type
from chartscore.normalize import normalize_text, number_key

_OPTIONS: Final[Mapping[FieldType, frozenset[str]]] = {
    FieldType.TEXT: frozenset(),
    FieldType.CATEGORICAL: frozenset({"choices"}),
    FieldType.NUMBER: frozenset({"tolerance"}),
    FieldType.BOOLEAN: frozenset(),
    FieldType.DATE: frozenset({"tolerance_days"}),
    FieldType.ORDINAL: frozenset({"levels"}),
    FieldType.MULTI: frozenset({"choices"}),
}
_REQUIRED: Final[Mapping[FieldType, frozenset[str]]] = {FieldType.ORDINAL: frozenset({"levels"})}

Level = str | int


def _schema_error(code: ErrorCode, field_id: object = None) -> ChartscoreError:
    # Name the field only when its id is a valid schema name (never free text).
    shown = field_id if _rules.is_field_id(field_id) else None
    return ChartscoreError(code, input=InputKind.SCHEMA, field_id=shown)  # type: ignore[arg-type]


@attrs.frozen
class FieldSpec:
    """One field's declared type and options.

    Attributes:
        field_type: The declared :class:`FieldType`.
        levels: Ordinal levels in order (strings or integers); empty otherwise.
        choices: Allowed categorical or multi-select items, as normalized text;
            None when undeclared.
        tolerance: Absolute numeric tolerance (exact Decimal), or None.
        tolerance_days: Date tolerance in days, or None.
    """

    field_type: FieldType
    levels: tuple[Level, ...] = ()
    choices: frozenset[str] | None = None
    tolerance: Decimal | None = None
    tolerance_days: int | None = None

    def level_index(self) -> tuple[dict[int, int], dict[str, int]]:
        """Maps from integer levels and from normalized string levels to positions."""
        ints = {level: i for i, level in enumerate(self.levels) if type(level) is int}
        texts = {
            normalize_text(level): i for i, level in enumerate(self.levels) if type(level) is str
        }
        return ints, texts


def _levels(raw: object, field_id: str) -> tuple[Level, ...]:
    if type(raw) not in (list, tuple) or len(raw) < 2:  # type: ignore[arg-type]
        raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS, field_id)
    seen: set[tuple[str, object]] = set()
    for level in raw:  # type: ignore[attr-defined]
        if type(level) is int:
            marker: tuple[str, object] = ("int", level)
        elif type(level) is str and normalize_text(level):
            marker = ("str", normalize_text(level))
        else:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS, field_id)
        if marker in seen:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS, field_id)
        seen.add(marker)
    return tuple(raw)  # type: ignore[arg-type]


def _choices(raw: object, field_id: str) -> frozenset[str]:
    if type(raw) not in (list, tuple) or not raw:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES, field_id)
    normalized = []
    for choice in raw:  # type: ignore[attr-defined]
        if type(choice) is not str:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES, field_id)
        normalized.append(normalize_text(choice))
    if len(set(normalized)) != len(normalized):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES, field_id)
    return frozenset(normalized)


def _tolerance(raw: object, field_id: str) -> Decimal:
    number = number_key(raw) if type(raw) in (str, int, Decimal, float) else None
    if number is None or number < 0:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_TOLERANCE, field_id)
    return Decimal(number)


def _tolerance_days(raw: object, field_id: str) -> int:
    if type(raw) is not int or raw < 0:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_TOLERANCE, field_id)
    return raw


def _field_spec(field_id: str, raw: object) -> FieldSpec:
    if not isinstance(raw, Mapping):
        raise _schema_error(ErrorCode.INVALID_SCHEMA, field_id)
    type_name = raw.get("type")
    if type(type_name) is not str or type_name not in FieldType._value2member_map_:
        raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_TYPE, field_id)
    field_type = to_field_type(type_name)
    options = set(raw) - {"type"}
    if not options <= _OPTIONS[field_type]:
        raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_OPTION, field_id)
    if not _REQUIRED.get(field_type, frozenset()) <= options:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS, field_id)
    return FieldSpec(
        field_type=field_type,
        levels=_levels(raw["levels"], field_id) if "levels" in raw else (),
        choices=_choices(raw["choices"], field_id) if "choices" in raw else None,
        tolerance=_tolerance(raw["tolerance"], field_id) if "tolerance" in raw else None,
        tolerance_days=(
            _tolerance_days(raw["tolerance_days"], field_id) if "tolerance_days" in raw else None
        ),
    )


_MAX_SCHEMA_DEPTH: Final = 8
_FAILED: Final = object()


def _copy(value: object, depth: int) -> object:
    if depth > _MAX_SCHEMA_DEPTH:
        raise RecursionError
    if isinstance(value, Mapping):
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError
            copied[key] = _copy(item, depth + 1)
        return copied
    if isinstance(value, list | tuple):
        return [_copy(item, depth + 1) for item in value]
    return value


def _snapshot(document: object) -> object:
    """A plain dict/list copy of a caller's schema document.

    The caller's Mapping may raise anything while it is read; that exception
    is dropped here (never chained), and the document is refused.
    """
    copied: object = _FAILED
    try:
        copied = _copy(document, 0)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        copied = _FAILED
    if copied is _FAILED:
        raise _schema_error(ErrorCode.INVALID_SCHEMA)
    return copied


@attrs.frozen
class Schema:
    """Declared field types and options, keyed by field id.

    Build one with :meth:`from_dict` (the JSON shape) or :func:`chartscore.io.load_schema`.
    """

    fields: Mapping[str, FieldSpec]

    @classmethod
    def from_dict(cls, document: object) -> Schema:
        """Validate a schema document ``{"fields": {field_id: {"type": ..., ...}}}``.

        Raises:
            ChartscoreError: ``invalid_schema``, ``invalid_field_id``,
                ``schema_unknown_type``, ``schema_unknown_option``,
                ``schema_invalid_levels``, ``schema_invalid_choices`` or
                ``schema_invalid_tolerance``.
        """
        document = _snapshot(document)
        if not isinstance(document, dict) or set(document) != {"fields"}:
            raise _schema_error(ErrorCode.INVALID_SCHEMA)
        declared = document["fields"]
        if not isinstance(declared, Mapping):
            raise _schema_error(ErrorCode.INVALID_SCHEMA)
        fields: dict[str, FieldSpec] = {}
        for field_id, raw in declared.items():
            if not _rules.is_field_id(field_id):
                raise _schema_error(ErrorCode.INVALID_FIELD_ID)
            fields[field_id] = _field_spec(field_id, raw)
        return cls(fields=fields)

    def get(self, field_id: str) -> FieldSpec | None:
        """The spec for ``field_id``, or None when the schema does not declare it."""
        return self.fields.get(field_id)
