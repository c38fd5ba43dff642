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

Double Data Entry (REDCap's DDE module): each chart is entered twice, as the
records ``ID--1`` and ``ID--2``, and a reviewer merges the pair into the record
``ID``. :func:`import_redcap` refuses such an export (``dde_records``): read as it
comes, each entry would be a chart of its own. :func:`import_redcap_dde` splits it
into two raters (the predictions format, case id ``ID``) and, when asked, the merged
records as adjudicated gold; an entry without its partner is left out, and counted.

The export is read as a stream: its columns are matched to the dictionary from the
header alone, before any row is read, and each row is read into values as it
comes. An export with no row (a header alone), or gold with no value, is refused
with ``empty_export``: it would write an empty gold file, which ``score`` refuses.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Final, Literal

from chartscore._format import MAX_CASE_ID_LENGTH
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, word_option
from chartscore.importers.fields import (
    INVALID,
    REDCAP_BOOLEANS,
    ImportedField,
    cell_value,
    exact_items,
)
from chartscore.importers.imported import ROLES, Imported, Role, sorted_predictions, sorted_records
from chartscore.importers.redcap_branching import Logic, evaluate, parse
from chartscore.importers.redcap_dictionary import (
    Dictionary,
    RedcapField,
    checkbox_column,
    read_dictionary,
)
from chartscore.importers.table import Table, open_table
from chartscore.io.inputs import InputPath
from chartscore.metrics import NOT_APPLICABLE
from chartscore.records.model import GoldField, Prediction

Repeating = Literal["refuse", "rows"]
REPEATING: Final = ("refuse", "rows")

STANDARD_MISSING_CODES: Final = frozenset(
    {
        *("NI", "INV", "UNK", "NASK", "ASKU", "NAV", "MSK", "NA", "NAVU"),
        *("NP", "QS", "QI", "TRC", "UNC", "DER", "PINF", "NINF", "OTH"),
    }
)
"""REDCap's pre-defined missing-data codes (HL7 null flavors, offered in Project Setup).

A cell holding one that was not declared with ``missing_codes`` is counted
(``undeclared_missing_codes``), and a gold cell or checkbox column that fails
because of one gets the hint ``missing_codes_undeclared``.
"""

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

_DDE_ENTRY: Final = re.compile(r"(.+)--([12])", re.S)
_DDE_MARK: Final = "--"
_MERGED: Final = ""  # a plain record: the whole export, or DDE's merged record
_FIRST: Final = "1"
_SECOND: Final = "2"


def import_redcap(
    dictionary: InputPath,
    records: InputPath | None = None,
    *,
    role: Role = "gold",
    missing_codes: Collection[str] = (),
    tolerances: Mapping[str, str | int | Decimal] | None = None,
    ordinal: Collection[str] = (),
    repeating: Repeating = "refuse",
    exclude_fields: Collection[str] = (),
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
        exclude_fields: Fields to leave out of the schema and the records (free-text
            notes, say); each must be a field of the dictionary.

    Returns:
        The :class:`~chartscore.importers.imported.Imported` schema and records.

    Raises:
        ChartscoreError: any code of :func:`read_dictionary`, a reading code,
            ``record_id_column``, ``unknown_column``, ``repeating_rows``,
            ``duplicate_case``, ``invalid_case_id`` or ``invalid_cell`` (records
            line and column), ``dde_records`` (a Double Data Entry record,
            ``ID--1`` or ``ID--2``: use :func:`import_redcap_dde`),
            ``empty_export`` (no row, or gold with no value);
            ``usage`` for an option that is not one of its values.
    """
    chosen_role = word_option(role, ROLES)
    chosen_repeating = word_option(repeating, REPEATING)
    codes = _codes(missing_codes)
    parsed = _dictionary(dictionary, codes, tolerances, ordinal, exclude_fields)
    counts = _schema_counts(parsed)
    if records is None:
        return Imported(schema=parsed.schema_document(), counts=counts)
    gold = chosen_role == "gold"
    with open_table(records, _SOURCE) as table:
        reader = _RecordsReader(parsed, table, codes, dde=False, merged_gold=gold)
        reader.read(rows_are_cases=chosen_repeating == "rows")
    part = reader.parts[_MERGED]
    counts.update(
        cases=part.written_cases(),
        rows=len(part.values),
        unanswerable=part.unanswerable(),
        blank_cells=part.blank_cells(),
    )
    if part.code_cells():
        counts["undeclared_missing_codes"] = part.code_cells()
    _branching_counts(counts, reader, part)
    if not part.cases or (gold and not part.values):
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    if gold:
        return Imported(gold=part.gold_records(), schema=parsed.schema_document(), counts=counts)
    return Imported(predictions=part.predictions(), schema=parsed.schema_document(), counts=counts)


def import_redcap_dde(
    dictionary: InputPath,
    records: InputPath,
    *,
    merged_gold: bool = True,
    missing_codes: Collection[str] = (),
    tolerances: Mapping[str, str | int | Decimal] | None = None,
    ordinal: Collection[str] = (),
    repeating: Repeating = "refuse",
    exclude_fields: Collection[str] = (),
) -> Imported:
    """Split a REDCap Double Data Entry export into two raters and the merged gold.

    REDCap's DDE module stores a chart's two entries as the records ``ID--1`` and
    ``ID--2``, and the reviewer's merge of them as the record ``ID``. The entries
    become two raters (:attr:`Imported.raters`, predictions format, read as
    predictions are), each with the case id ``ID``; with ``merged_gold``, the
    merged records become gold (read as gold is: checked). An entry whose partner
    is not in the export is left out of both raters, and counted
    (``dde_unpaired``); so are merged records when ``merged_gold`` is false
    (``dde_merged_left_out``).

    Args:
        dictionary: The data dictionary (UI download or API ``metadata`` as CSV).
        records: A raw records export of the DDE project (not labels).
        merged_gold: Write the merged records as gold.
        missing_codes: As for :func:`import_redcap`.
        tolerances: As for :func:`import_redcap`.
        ordinal: As for :func:`import_redcap`.
        repeating: As for :func:`import_redcap`; with ``"rows"`` an entry's rows
            pair with its partner's rows of the same event and instance.
        exclude_fields: As for :func:`import_redcap`.

    Returns:
        The schema, the two raters and (with ``merged_gold``) the gold records.

    Raises:
        ChartscoreError: the codes of :func:`import_redcap` (``dde_records``
            aside); ``invalid_dde_record`` (records line, column 1) for a record
            id with ``--`` that is not ``ID--1`` or ``ID--2``; ``empty_export``
            with ``merged_gold`` when no entry has its partner, or the merged
            records give no gold value; ``no_dde_pairs`` without it when no entry
            has its partner (there is no gold file to speak of); ``usage`` for an
            option of the wrong type.
    """
    if type(merged_gold) is not bool:
        raise ChartscoreError(ErrorCode.USAGE)
    chosen_repeating = word_option(repeating, REPEATING)
    codes = _codes(missing_codes)
    parsed = _dictionary(dictionary, codes, tolerances, ordinal, exclude_fields)
    counts = _schema_counts(parsed)
    with open_table(records, _SOURCE) as table:
        reader = _RecordsReader(parsed, table, codes, dde=True, merged_gold=merged_gold)
        reader.read(rows_are_cases=chosen_repeating == "rows")
    first, second, merged = (reader.parts[name] for name in (_FIRST, _SECOND, _MERGED))
    paired = first.cases.keys() & second.cases.keys()
    counts["dde_unpaired"] = len(first.cases) + len(second.cases) - 2 * len(paired)
    first.keep(paired)
    second.keep(paired)
    written = [("rater_1", first), ("rater_2", second)]
    if merged_gold:
        written.append(("gold", merged))
    else:
        counts["dde_merged_left_out"] = len(reader.merged_left_out)
    for name, part in written:
        counts[f"{name}_cases"] = part.written_cases()
        counts[f"{name}_unanswerable"] = part.unanswerable()
    counts["blank_cells"] = sum(part.blank_cells() for _, part in written)
    code_cells = sum(part.code_cells() for _, part in written)
    if code_cells:
        counts["undeclared_missing_codes"] = code_cells
    if merged_gold and (not paired or not merged.values):
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    if not paired:
        raise ChartscoreError(ErrorCode.NO_DDE_PAIRS, input=_SOURCE)
    return Imported(
        gold=merged.gold_records() if merged_gold else (),
        raters=(first.predictions(), second.predictions()),
        schema=parsed.schema_document(),
        counts=counts,
    )


def _dictionary(
    dictionary: InputPath,
    codes: frozenset[str],
    tolerances: Mapping[str, str | int | Decimal] | None,
    ordinal: Collection[str],
    exclude_fields: Collection[str],
) -> Dictionary:
    return read_dictionary(
        dictionary,
        missing_codes=codes,
        tolerances=tolerances,
        ordinal=_names(ordinal),
        exclude=_names(exclude_fields),
    )


def _schema_counts(parsed: Dictionary) -> dict[str, int]:
    return {
        "schema_fields": len(parsed.fields),
        **{f"skipped_{kind}": count for kind, count in parsed.skipped.items()},
    }


def _codes(missing_codes: Collection[str]) -> frozenset[str]:
    return frozenset(code.strip() for code in _names(missing_codes) if code.strip())


def _names(values: object) -> tuple[str, ...]:
    return exact_items(values, str)


class _Part:
    """The rows read for one part of an export: all of it, or a DDE entry, or the merged
    records. Private: holds values and case ids."""

    def __init__(self, *, gold: bool) -> None:
        self.gold = gold
        self.values: list[tuple[str, ImportedField, object]] = []
        # Case id -> (blank cells, undeclared code cells): the cases read, and their tallies
        # until a DDE entry's partner is known.
        self.cases: dict[str, tuple[int, int]] = {}
        self.hidden_with_value = 0  # gold cells with a value where the branching logic is false

    def __repr__(self) -> str:
        return f"_Part(<{len(self.cases)} cases>)"

    def keep(self, case_ids: Collection[str]) -> None:
        """Keep only these cases (DDE: the entries that have their partner)."""
        self.values = [row for row in self.values if row[0] in case_ids]
        self.cases = {case: tally for case, tally in self.cases.items() if case in case_ids}

    def written_cases(self) -> int:
        """The cases with a row written (a record whose every cell is blank writes none)."""
        return len({case for case, _, _ in self.values})

    def unanswerable(self) -> int:
        return sum(1 for _, _, value in self.values if value is None)

    def not_applicable(self) -> int:
        return sum(1 for _, _, value in self.values if value is NOT_APPLICABLE)

    def blank_cells(self) -> int:
        return sum(blanks for blanks, _ in self.cases.values())

    def code_cells(self) -> int:
        return sum(codes for _, codes in self.cases.values())

    def gold_records(self) -> tuple[GoldField, ...]:
        return sorted_records(
            [
                GoldField(case, item.field_id, item.field_type, value)
                for case, item, value in self.values
            ]
        )

    def predictions(self) -> tuple[Prediction, ...]:
        return sorted_predictions(
            [Prediction(case, item.field_id, value) for case, item, value in self.values]
        )


class _RecordsReader:
    """Maps an export's columns to the dictionary, then reads its rows into values.

    With ``dde``, each row goes to its part (``ID--1``, ``ID--2`` or the merged
    ``ID``) under the case id ``ID``; without it, a DDE record id is refused.
    """

    def __init__(
        self,
        dictionary: Dictionary,
        table: Table,
        codes: frozenset[str],
        *,
        dde: bool,
        merged_gold: bool,
    ):
        self.dictionary = dictionary
        self.table = table
        self.codes = codes
        self.dde = dde
        # Without DDE the plain records are the whole export, read as gold or predictions;
        # with it, the merged records are read only when they are written (as gold).
        self.read_merged = merged_gold or not dde
        self.parts = {_MERGED: _Part(gold=merged_gold)}
        if dde:
            self.parts.update({_FIRST: _Part(gold=False), _SECOND: _Part(gold=False)})
        self.merged_left_out: set[str] = set()  # DDE: merged records not read (no gold)
        self.row_keys: dict[str, int] = {}
        self.plain: list[tuple[int, RedcapField]] = []
        self.checkboxes: dict[str, tuple[RedcapField, list[tuple[int, str]], list[int]]] = {}
        self._map_columns()
        # Gold's plain fields whose branching logic is read: field id -> (logic, its columns).
        self.logic: dict[str, tuple[Logic, dict[tuple[str, str | None], int]]] = {}
        self.untranslated = 0  # fields whose branching logic is not in the subset, or not here
        self._read_logic()

    def _read_logic(self) -> None:
        # Where each reference may be read: a plain field's column, a checkbox option's.
        where: dict[tuple[str, str | None], int] = {
            (item.field.field_id, None): index for index, item in self.plain
        }
        for item, options, _ in self.checkboxes.values():
            for index, code in options:
                where[item.field.field_id, code] = index
        for index, item in self.plain:
            del index
            if not item.branching:
                continue
            logic = parse(item.branching)
            references = None if logic is None else logic.references()
            if logic is None or not references or not references <= where.keys():
                self.untranslated += 1
                continue
            self.logic[item.field.field_id] = (logic, {ref: where[ref] for ref in references})
        self.untranslated += sum(1 for item, _, _ in self.checkboxes.values() if item.branching)

    def _hidden(self, field_id: str, cells: tuple[str, ...]) -> bool:
        """Whether the field's branching logic is read and false for this row."""
        found = self.logic.get(field_id)
        if found is None:
            return False
        logic, columns = found
        shown = evaluate(logic, {ref: cells[index].strip() for ref, index in columns.items()})
        return shown is False

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
                hint = ErrorHint.MISSING_CODES_UNDECLARED if self._code_column(name) else None
                raise ChartscoreError(
                    ErrorCode.UNKNOWN_COLUMN, input=_SOURCE, column=index + 1, hint=hint
                )

    def _code_column(self, name: str) -> bool:
        """Whether a column is a checkbox's column for one of REDCap's standard codes."""
        return any(
            name == checkbox_column(item.field.field_id, code)
            for item in self.dictionary.fields
            if item.option_columns
            for code in STANDARD_MISSING_CODES - self.codes
        )

    def read(self, *, rows_are_cases: bool) -> None:
        for line, cells in self.table.rows():
            if not cells[0].strip():
                raise ChartscoreError(ErrorCode.INVALID_CASE_ID, input=_SOURCE, line=line, column=1)
            part, record = self._entry(cells[0], line)
            read = part != _MERGED or self.read_merged
            seen = self.parts[part].cases if read else self.merged_left_out
            pieces = [cells[self.row_keys[key]] for key in _ROW_KEYS if key in self.row_keys]
            if rows_are_cases:
                case_id = "/".join([record, *(piece for piece in pieces if piece)])
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
            if read:
                self._read_row(self.parts[part], case_id, line, cells)
            else:
                self.merged_left_out.add(case_id)

    def _entry(self, record: str, line: int) -> tuple[str, str]:
        """The part a record id belongs to, and the case's record id (DDE: without ``--N``)."""
        match = _DDE_ENTRY.fullmatch(record)
        if not self.dde:
            if match is not None:  # an entry read as a chart of its own: refused
                raise ChartscoreError(ErrorCode.DDE_RECORDS, input=_SOURCE, line=line, column=1)
            return _MERGED, record
        if match is not None and _DDE_MARK not in match[1]:
            return match[2], match[1]
        if _DDE_MARK in record:
            raise ChartscoreError(ErrorCode.INVALID_DDE_RECORD, input=_SOURCE, line=line, column=1)
        return _MERGED, record

    def _read_row(self, part: _Part, case_id: str, line: int, cells: tuple[str, ...]) -> None:
        blanks = code_cells = 0
        for index, item in self.plain:
            text = cells[index]
            stripped = text.strip()
            hidden = part.gold and self._hidden(item.field.field_id, cells)
            if not stripped:
                if hidden:  # docs/import.md: branching logic hid it, so it does not apply
                    part.values.append((case_id, item.field, NOT_APPLICABLE))
                else:
                    blanks += 1
                continue
            part.hidden_with_value += hidden
            if stripped in self.codes:
                part.values.append((case_id, item.field, None))
                continue
            standard = stripped in STANDARD_MISSING_CODES
            code_cells += standard
            value = cell_value(item.field, text, gold=part.gold, booleans=REDCAP_BOOLEANS)
            if value is INVALID:
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL,
                    input=_SOURCE,
                    line=line,
                    column=index + 1,
                    hint=ErrorHint.MISSING_CODES_UNDECLARED if standard else None,
                )
            part.values.append((case_id, item.field, value))
        for checkbox in self.checkboxes.values():
            blanks += self._read_checkbox(part, case_id, line, cells, checkbox)
        part.cases[case_id] = (blanks, code_cells)

    def _read_checkbox(
        self,
        part: _Part,
        case_id: str,
        line: int,
        cells: tuple[str, ...],
        checkbox: tuple[RedcapField, list[tuple[int, str]], list[int]],
    ) -> bool:
        """Read one checkbox field of a row; whether its cells were all blank."""
        item, options, missing = checkbox
        marks = [(index, cells[index].strip()) for index, _ in options]
        marks += [(index, cells[index].strip()) for index in missing]
        for index, mark in marks:
            if mark not in ("", _CHECKED, _UNCHECKED):
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=index + 1
                )
        if all(mark == "" for _, mark in marks):
            return True
        checked = [code for index, code in options if cells[index].strip() == _CHECKED]
        if any(cells[index].strip() == _CHECKED for index in missing):
            if checked:  # a code and "missing" at once: which is it?
                first = next(index for index, _ in options if cells[index].strip() == _CHECKED)
                raise ChartscoreError(
                    ErrorCode.INVALID_CELL, input=_SOURCE, line=line, column=first + 1
                )
            part.values.append((case_id, item.field, None))
            return False
        part.values.append((case_id, item.field, sorted(checked)))
        return False


def _branching_counts(counts: dict[str, int], reader: _RecordsReader, part: _Part) -> None:
    # docs/import.md, "Branching logic": each count only when it is not zero.
    found = {
        "branching_not_applicable": part.not_applicable(),
        "hidden_with_value": part.hidden_with_value,
        "branching_untranslated": reader.untranslated if part.gold else 0,
    }
    counts.update((name, count) for name, count in found.items() if count)


def _is_form_status(name: str, forms: frozenset[str]) -> bool:
    """``<form>_complete`` or ``<form>_timestamp`` of a known instrument."""
    for suffix in ("_complete", "_timestamp"):
        if name.endswith(suffix) and name[: -len(suffix)] in forms:
            return True
    return False
