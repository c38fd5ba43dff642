"""REDCap to chartscore: a dictionary becomes a schema, a raw records export gold or predictions.

A records export is read as the reference notes describe it (docs/import.md): its
first column is the record-ID field (the case id); ``redcap_*`` columns,
``<form>_complete`` and ``<form>_timestamp`` are bookkeeping, not fields; the
columns of calculated, descriptive and file fields are left out; every other
column must belong to the dictionary (a checkbox's option columns, and one column per
missing-data code, built from the dictionary's codes), or the import stops with
``unknown_column``: an export and a dictionary that disagree are not guessed at.

Cells:

- An empty cell means REDCap stored nothing (never entered, hidden by branching
  logic, another event's or instance's row): **no row** is written, so a gold
  field left empty is not in the gold set and an abstractor's empty field is
  *missing*, never an abstention.
- A declared missing-data code (``UNK``, ``NA``, ...; REDCap stores the code as the
  value, in any field type) means **unanswerable** in gold and an explicit
  abstention in predictions: ``value: null``.
- A checkbox field is the set of codes whose column holds ``1``; all ``0`` is the
  empty set; a missing-data code's column holding ``1`` is ``null``.

Repeating instruments and events (rows with ``redcap_repeat_instance``, or a record
on several rows, one per event) are refused with ``repeating_rows`` unless
``repeating="rows"``: then each row is a case of its own, with the case id
``record/event/instrument/instance`` (the parts the row has).

The export is read as a stream: its columns are matched to the dictionary from the
header alone, before any row is read, and each row is read into values as it
comes. An export with no row (a header alone), or gold with no value, is refused
with ``empty_export``: it would write an empty gold file, which ``score`` refuses.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Final, Literal

from chartscore._format import MAX_CASE_ID_LENGTH
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, word_option
from chartscore.importers.fields import (
    INVALID,
    REDCAP_BOOLEANS,
    ImportedField,
    cell_value,
    exact_items,
)
from chartscore.importers.imported import Imported, sorted_predictions, sorted_records
from chartscore.importers.redcap_dictionary import Dictionary, RedcapField, read_dictionary
from chartscore.importers.table import Table, open_table
from chartscore.io.inputs import InputPath
from chartscore.records.model import GoldField, Prediction

Role = Literal["gold", "predictions"]
ROLES: Final = ("gold", "predictions")
Repeating = Literal["refuse", "rows"]
REPEATING: Final = ("refuse", "rows")

_SOURCE: Final = InputKind.RECORDS
_EVENT: Final = "redcap_event_name"
_INSTRUMENT: Final = "redcap_repeat_instrument"
_INSTANCE: Final = "redcap_repeat_instance"
_ROW_KEYS: Final = (_EVENT, _INSTRUMENT, _INSTANCE)
BOOKKEEPING_COLUMNS: Final = frozenset(
    {*_ROW_KEYS, "redcap_data_access_group", "redcap_survey_identifier"}
)
"""Columns REDCap adds to an export that are not fields."""
_CHECKED: Final = "1"
_UNCHECKED: Final = "0"


def import_redcap(
    dictionary: InputPath,
    records: InputPath | None = None,
    *,
    role: Role = "gold",
    missing_codes: Collection[str] = (),
    tolerances: Mapping[str, str | int | Decimal] | None = None,
    ordinal: Collection[str] = (),
    repeating: Repeating = "refuse",
) -> Imported:
    """Read a REDCap data dictionary, and optionally a raw records export (CSV).

    Args:
        dictionary: The data dictionary (UI download or API ``metadata`` as CSV).
        records: A raw records export (not labels), or None for the schema only.
        role: Whether the records are ``"gold"`` or ``"predictions"`` (a second
            abstractor's project with the same dictionary).
        missing_codes: The project's missing-data codes (Project Setup, Missing Data
            Codes; they are not in the dictionary): cells holding one are ``null``.
        tolerances: Declared tolerances by field name: a decimal for number fields,
            whole days for date fields (None: none; the dictionary declares none).
        ordinal: Radio or dropdown fields to score as ordinal (codes in order).
        repeating: ``"refuse"`` (default) or ``"rows"``: a case per row.

    Returns:
        The :class:`~chartscore.importers.imported.Imported` schema and records.

    Raises:
        ChartscoreError: any code of :func:`read_dictionary`, a reading code,
            ``record_id_column``, ``unknown_column``, ``repeating_rows``,
            ``duplicate_case``, ``invalid_case_id`` or ``invalid_cell`` (records
            line and column), ``empty_export`` (no row, or gold with no value);
            ``usage`` for an option that is not one of its values.
    """
    chosen_role = word_option(role, ROLES)
    chosen_repeating = word_option(repeating, REPEATING)
    codes = _codes(missing_codes)
    parsed = read_dictionary(
        dictionary, missing_codes=codes, tolerances=tolerances, ordinal=_names(ordinal)
    )
    counts = {
        "schema_fields": len(parsed.fields),
        **{f"skipped_{kind}": count for kind, count in parsed.skipped.items()},
    }
    if records is None:
        return Imported(schema=parsed.schema_document(), counts=counts)
    with open_table(records, _SOURCE) as table:
        reader = _RecordsReader(parsed, table, codes, gold=chosen_role == "gold")
        reader.read(rows_are_cases=chosen_repeating == "rows")
    counts.update(reader.counts)
    if not reader.counts["cases"] or (chosen_role == "gold" and not reader.values):
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    if chosen_role == "gold":
        gold = sorted_records(
            [
                GoldField(case, item.field_id, item.field_type, value)
                for case, item, value in reader.values
            ]
        )
        return Imported(gold=gold, schema=parsed.schema_document(), counts=counts)
    predictions = sorted_predictions(
        [Prediction(case, item.field_id, value) for case, item, value in reader.values]
    )
    return Imported(predictions=predictions, schema=parsed.schema_document(), counts=counts)


def _codes(missing_codes: Collection[str]) -> frozenset[str]:
    return frozenset(code.strip() for code in _names(missing_codes) if code.strip())


def _names(values: object) -> tuple[str, ...]:
    return exact_items(values, str)


class _RecordsReader:
    """Maps an export's columns to the dictionary, then reads its rows into values."""

    def __init__(self, dictionary: Dictionary, table: Table, codes: frozenset[str], *, gold: bool):
        self.dictionary = dictionary
        self.table = table
        self.codes = codes
        self.gold = gold
        self.values: list[tuple[str, ImportedField, object]] = []
        self.counts = {"cases": 0, "rows": 0, "unanswerable": 0, "blank_cells": 0}
        self.row_keys: dict[str, int] = {}
        self.plain: list[tuple[int, RedcapField]] = []
        self.checkboxes: dict[str, tuple[RedcapField, list[tuple[int, str]], list[int]]] = {}
        self._map_columns()

    def _map_columns(self) -> None:
        header = self.table.header
        if not header or header[0].strip() != self.dictionary.record_id:
            raise ChartscoreError(ErrorCode.RECORD_ID_COLUMN, input=_SOURCE, column=1)
        plain = {item.field.field_id: item for item in self.dictionary.fields}
        options: dict[str, tuple[RedcapField, str | None]] = {}
        for item in self.dictionary.fields:
            for column, code in item.option_columns.items():
                options[column] = (item, code)
            for column in item.missing_columns:
                options[column] = (item, None)
        forms = self.dictionary.forms
        for index, raw in enumerate(header[1:], start=1):
            name = raw.strip()
            field = plain.get(name)
            if name in BOOKKEEPING_COLUMNS:
                self.row_keys[name] = index
            elif field is not None and not field.option_columns:
                self.plain.append((index, field))
            elif name in options:
                owner, option = options[name]
                entry = self.checkboxes.setdefault(owner.field.field_id, (owner, [], []))
                if option is None:
                    entry[2].append(index)
                else:
                    entry[1].append((index, option))
            elif name in self.dictionary.other_fields or _is_form_status(name, forms):
                continue
            else:
                raise ChartscoreError(ErrorCode.UNKNOWN_COLUMN, input=_SOURCE, column=index + 1)

    def read(self, *, rows_are_cases: bool) -> None:
        seen: set[str] = set()
        for line, cells in self.table.rows():
            record = cells[0]
            if not record.strip():
                raise ChartscoreError(ErrorCode.INVALID_CASE_ID, input=_SOURCE, line=line, column=1)
            parts = [cells[self.row_keys[key]] for key in _ROW_KEYS if key in self.row_keys]
            if rows_are_cases:
                case_id = "/".join([record, *(part for part in parts if part)])
            else:
                repeated = any(
                    cells[self.row_keys[key]]
                    for key in (_INSTRUMENT, _INSTANCE)
                    if key in self.row_keys
                )
                if repeated or record in seen:
                    raise ChartscoreError(ErrorCode.REPEATING_ROWS, input=_SOURCE, line=line)
                case_id = record
            if case_id in seen:
                raise ChartscoreError(ErrorCode.DUPLICATE_CASE, input=_SOURCE, line=line)
            if len(case_id) > MAX_CASE_ID_LENGTH:
                raise ChartscoreError(ErrorCode.INVALID_CASE_ID, input=_SOURCE, line=line, column=1)
            seen.add(case_id)
            self.counts["cases"] += 1
            self._read_row(case_id, line, cells)

    def _read_row(self, case_id: str, line: int, cells: tuple[str, ...]) -> None:
        for index, item in self.plain:
            text = cells[index]
            if not text.strip():
                self.counts["blank_cells"] += 1
                continue
            if text.strip() in self.codes:
                self._add(case_id, item, None)
                continue
            value = cell_value(item.field, text, gold=self.gold, booleans=REDCAP_BOOLEANS)
            if value is INVALID:
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=index + 1
                )
            self._add(case_id, item, value)
        for item, options, missing in self.checkboxes.values():
            self._read_checkbox(case_id, line, cells, (item, options, missing))

    def _read_checkbox(
        self,
        case_id: str,
        line: int,
        cells: tuple[str, ...],
        checkbox: tuple[RedcapField, list[tuple[int, str]], list[int]],
    ) -> None:
        item, options, missing = checkbox
        marks = [(index, cells[index].strip()) for index, _ in options]
        marks += [(index, cells[index].strip()) for index in missing]
        for index, mark in marks:
            if mark not in ("", _CHECKED, _UNCHECKED):
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=index + 1
                )
        if all(mark == "" for _, mark in marks):
            self.counts["blank_cells"] += 1
            return
        checked = [code for index, code in options if cells[index].strip() == _CHECKED]
        if any(cells[index].strip() == _CHECKED for index in missing):
            if checked:  # a code and "missing" at once: which is it?
                first = next(index for index, _ in options if cells[index].strip() == _CHECKED)
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=first + 1
                )
            self._add(case_id, item, None)
            return
        self._add(case_id, item, sorted(checked))

    def _add(self, case_id: str, item: RedcapField, value: object) -> None:
        self.values.append((case_id, item.field, value))
        self.counts["rows"] += 1
        if value is None:
            self.counts["unanswerable"] += 1


def _is_form_status(name: str, forms: frozenset[str]) -> bool:
    """``<form>_complete`` or ``<form>_timestamp`` of a known instrument."""
    for suffix in ("_complete", "_timestamp"):
        if name.endswith(suffix) and name[: -len(suffix)] in forms:
            return True
    return False
