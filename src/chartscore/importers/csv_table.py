"""A table to chartscore: one row per case, one column per field, mapped by a declared column map.

The column map (JSON, or TOML by name, read as a schema file is) says which column
holds the case id and which holds each field; the schema says each field's type:

.. code-block:: json

    {"case_id": "chart", "fields": {"hx.smoking": "smoking", "echo.lvef": "lvef"},
     "missing": ["NA"], "separator": "|", "true": ["yes"], "false": ["no"]}

- ``case_id`` (required): the case id column's header.
- ``fields`` (required): field id -> the header of its column.
- ``missing``: cells that mean unanswerable (gold) or an explicit abstention
  (predictions), ``value: null``; compared after trimming.
- ``separator``: between a multi-select cell's items (default ``|``).
- ``true`` and ``false``: a boolean field's words, compared after text
  normalization (default ``true``/``yes``/``1`` and ``false``/``no``/``0``).

An empty cell writes no row, as for REDCap. Columns the map does not name are
ignored; a column it names that the table lacks is ``column_not_found``, decided
from the header before any row is read. Gold needs every mapped field declared
in the schema (``field_undeclared``); a predictions table may be read without a
schema, every cell then a text answer. A table with no row (a header alone), or
gold with no value, is ``empty_export``. The table is read as a stream by
:mod:`chartscore.importers.table` (UTF-8 with or without a byte order mark, the
delimiter found from the header, every cell a string).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from chartscore._format import MAX_CASE_ID_LENGTH
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, valid_field_id, word_option
from chartscore.importers.fields import (
    DEFAULT_BOOLEANS,
    INVALID,
    ImportedField,
    cell_value,
    multi_value,
)
from chartscore.importers.imported import ROLES, Imported, Role, sorted_predictions, sorted_records
from chartscore.importers.table import Table, open_table
from chartscore.io.inputs import InputPath
from chartscore.io.schema_file import read_document
from chartscore.metrics import FieldType
from chartscore.records.model import GoldField, Prediction
from chartscore.records.normalize import normalize_text
from chartscore.records.schema import FieldSpec, Schema

_SOURCE: Final = InputKind.TABLE
_MAP: Final = InputKind.COLUMNS
_MAP_KEYS: Final = frozenset({"case_id", "fields", "missing", "separator", "true", "false"})
DEFAULT_SEPARATOR: Final = "|"


def import_csv(
    table: InputPath,
    columns: InputPath | Mapping[str, object],
    *,
    role: Role = "gold",
    schema: Schema | None = None,
) -> Imported:
    """Read a table of one row per case, one column per field, through a column map.

    Args:
        table: The delimited text file (see :mod:`chartscore.importers.table`).
        columns: The column map: a JSON or TOML file, or the decoded document.
        role: ``"gold"`` or ``"predictions"``.
        schema: The fields' types and options (required for gold).

    Raises:
        ChartscoreError: a reading code (table or columns), ``invalid_column_map``,
            ``column_not_found``, ``duplicate_column``, ``field_undeclared`` (a
            gold field not in the schema, or no schema), ``invalid_case_id``,
            ``duplicate_case`` and ``invalid_cell`` (table line and column),
            ``empty_export`` (no row, or gold with no value); ``usage`` for an
            option that is not one of its values.
    """
    gold = word_option(role, ROLES) == "gold"
    if schema is not None and type(schema) is not Schema:
        raise ChartscoreError(ErrorCode.USAGE)
    # By exact type: a caller's mapping-like object is read as a path (and refused).
    document = columns if type(columns) is dict else read_document(columns, _MAP)  # type: ignore[arg-type]
    column_map = ColumnMap.from_document(document)
    fields = {
        field_id: _field(field_id, None if schema is None else schema.get(field_id), gold)
        for field_id in column_map.fields
    }
    with open_table(table, _SOURCE, unique_header=False) as read:
        cases, values = _read(read, column_map, fields, gold)
    if not cases or (gold and not values):
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    counts = {"cases": len({case for case, _, _ in values}), "rows": len(values)}
    counts["unanswerable"] = sum(1 for _, _, value in values if value is None)
    if gold:
        return Imported(
            gold=sorted_records([GoldField(c, f.field_id, f.field_type, v) for c, f, v in values]),
            counts=counts,
        )
    return Imported(
        predictions=sorted_predictions([Prediction(c, f.field_id, v) for c, f, v in values]),
        counts=counts,
    )


class ColumnMap:
    """A checked column map (developer-authored configuration, not patient data)."""

    __slots__ = ("booleans", "case_id", "fields", "missing", "separator")

    def __init__(
        self,
        case_id: str,
        fields: Mapping[str, str],
        missing: frozenset[str],
        separator: str,
        booleans: Mapping[str, bool],
    ) -> None:
        self.case_id = case_id
        self.fields = dict(fields)
        self.missing = missing
        self.separator = separator
        self.booleans = dict(booleans)

    def __repr__(self) -> str:
        return f"ColumnMap(<{len(self.fields)} fields>)"

    @classmethod
    def from_document(cls, document: object) -> ColumnMap:
        """Check a decoded column map (see the module docstring).

        Raises:
            ChartscoreError: ``invalid_column_map (columns)``, with the key ``case_id``
                when that is the key at fault.
        """
        if type(document) is not dict or not set(document) <= _MAP_KEYS:
            raise _invalid()
        case_id = document.get("case_id")
        if type(case_id) is not str or not case_id:
            raise _invalid("case_id")
        fields = document.get("fields")
        if (
            type(fields) is not dict
            or not fields
            or not all(valid_field_id(key) and _word(value) for key, value in fields.items())
        ):
            raise _invalid()
        separator = document.get("separator", DEFAULT_SEPARATOR)
        if not _word(separator):
            raise _invalid()
        booleans = dict(DEFAULT_BOOLEANS)
        if "true" in document or "false" in document:
            booleans = {
                **{normalize_text(word): True for word in _words(document.get("true", []))},
                **{normalize_text(word): False for word in _words(document.get("false", []))},
            }
            if len(booleans) != len(_words(document.get("true", []))) + len(
                _words(document.get("false", []))
            ):
                raise _invalid()  # a word both true and false, or given twice
        missing = frozenset(word.strip() for word in _words(document.get("missing", [])))
        return cls(case_id, fields, missing, separator, booleans)


def _invalid(key: str | None = None) -> ChartscoreError:
    return ChartscoreError(ErrorCode.INVALID_COLUMN_MAP, input=_MAP, key=key)


def _word(value: object) -> bool:
    return type(value) is str and bool(value)


def _words(value: object) -> list[str]:
    if type(value) is not list or not all(_word(item) for item in value):
        raise _invalid()
    return value


def _field(field_id: str, spec: FieldSpec | None, gold: bool) -> ImportedField:
    if spec is None:
        if gold:
            raise ChartscoreError(
                ErrorCode.FIELD_UNDECLARED, input=InputKind.SCHEMA, field_id=field_id
            )
        return ImportedField(field_id, FieldType.TEXT)
    choices: tuple[str, ...] = ()
    if spec.field_type is FieldType.ORDINAL:
        choices = tuple(str(level) for level in spec.levels)
    elif spec.choices:
        choices = tuple(sorted(spec.choices))
    return ImportedField(field_id, spec.field_type, choices)


def _column(table: Table, name: str, *, field_id: str | None = None, key: str | None = None) -> int:
    positions = [index for index, cell in enumerate(table.header) if cell.strip() == name.strip()]
    if not positions:
        raise ChartscoreError(ErrorCode.COLUMN_NOT_FOUND, input=_MAP, field_id=field_id, key=key)
    if len(positions) > 1:
        raise ChartscoreError(ErrorCode.DUPLICATE_COLUMN, input=_SOURCE, column=positions[1] + 1)
    return positions[0]


def _read(
    table: Table, column_map: ColumnMap, fields: Mapping[str, ImportedField], gold: bool
) -> tuple[int, list[tuple[str, ImportedField, object]]]:
    """(the number of rows, the values): the columns from the header, then the rows."""
    case_column = _column(table, column_map.case_id, key="case_id")
    placed = [
        (_column(table, name, field_id=field_id), fields[field_id])
        for field_id, name in column_map.fields.items()
    ]
    values: list[tuple[str, ImportedField, object]] = []
    seen: set[str] = set()
    for line, cells in table.rows():
        case_id = cells[case_column]
        if not case_id.strip() or len(case_id) > MAX_CASE_ID_LENGTH:
            raise ChartscoreError(
                ErrorCode.INVALID_CASE_ID, input=_SOURCE, line=line, column=case_column + 1
            )
        if case_id in seen:
            raise ChartscoreError(ErrorCode.DUPLICATE_CASE, input=_SOURCE, line=line)
        seen.add(case_id)
        for index, field in placed:
            text = cells[index]
            if not text.strip():
                continue
            value: object
            if text.strip() in column_map.missing:
                value = None
            elif field.field_type is FieldType.MULTI:
                items = [item.strip() for item in text.split(column_map.separator)]
                value = multi_value(field, [item for item in items if item], gold=gold)
            else:
                value = cell_value(field, text, gold=gold, booleans=column_map.booleans)
            if value is INVALID:
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=index + 1
                )
            values.append((case_id, field, value))
    return len(seen), values
