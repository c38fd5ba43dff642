"""A REDCap data dictionary, read as a chartscore schema and a map of the export's columns.

The dictionary comes from the UI ("Data Dictionary" download: ``Variable / Field
Name``, ``Form Name``, ...) or the API (``content=metadata``: ``field_name``,
``form_name``, ...); both headers are recognised, after trimming and case folding.
Its first row is the record-ID field, which becomes the case id.

Field types (docs/import.md has the full table):

- ``radio`` and ``dropdown``: categorical, the codes as ``choices`` (ordinal, with
  the codes as levels in dictionary order, for the fields named in ``ordinal``), and
  their labels as ``choice_labels`` (checkbox fields too) when they are distinct lines
  of at most 200 characters (else the field gets none: display text never fails an import);
- ``yesno`` and ``truefalse``: boolean (raw ``1`` and ``0``);
- ``checkbox``: multi, one export column per code, ``<field>___<code>`` with the
  code lower-cased and every other character than a-z and 0-9 made ``_`` (the
  columns are built from the codes, never parsed back from the names);
- ``text`` with a ``date_*`` validation: date; with ``integer`` or ``number*``:
  number (``*_comma_decimal``: a decimal comma); ``slider``: number. The
  validation's min and max are a valid range, not a tolerance: a tolerance is
  only what the caller declares;
- other ``text`` (``datetime_*`` included: chartscore's dates have no time),
  ``notes`` and ``sql``: text;
- ``calc``, ``descriptive`` and ``file``: skipped, and counted.

Fields the caller excludes (free-text notes, say) are read as any other, then left
out like a skipped field: not in the schema, their export columns known and left out.

The dictionary is developer-authored (field names, codes), but errors still name
only the line and column, and a field id where the error is about that field.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode, InputKind, closest, valid_field_id
from chartscore.importers.fields import ImportedField
from chartscore.importers.table import Table, open_table
from chartscore.io.inputs import InputPath
from chartscore.metrics import FieldType
from chartscore.records.normalize import normalize_text, parse_number_literal
from chartscore.records.schema import Schema

_SOURCE: Final = InputKind.DICTIONARY

UI_HEADERS: Final[Mapping[str, str]] = {
    "variable / field name": "field_name",
    "form name": "form_name",
    "section header": "section_header",
    "field type": "field_type",
    "field label": "field_label",
    "choices, calculations, or slider labels": "select_choices_or_calculations",
    "field note": "field_note",
    "text validation type or show slider number": "text_validation_type_or_show_slider_number",
    "text validation min": "text_validation_min",
    "text validation max": "text_validation_max",
    "identifier?": "identifier",
    "branching logic (show field only if...)": "branching_logic",
    "required field?": "required_field",
    "custom alignment": "custom_alignment",
    "question number (surveys only)": "question_number",
    "matrix group name": "matrix_group_name",
    "matrix ranking?": "matrix_ranking",
    "field annotation": "field_annotation",
}
"""The UI download's column names (case-folded) and the API's name for each."""

_REQUIRED: Final = (
    "field_name",
    "form_name",
    "field_type",
    "select_choices_or_calculations",
    "text_validation_type_or_show_slider_number",
)
SKIPPED_TYPES: Final = ("calc", "descriptive", "file")
"""REDCap field types that hold nothing an abstractor enters: skipped and counted."""

_CHOICE_TYPES: Final = frozenset({"radio", "dropdown", "checkbox"})
_TEXT_TYPES: Final = frozenset({"text", "notes", "sql"})
_BOOLEAN_TYPES: Final = frozenset({"yesno", "truefalse"})
_NOT_ALPHANUMERIC: Final = re.compile(r"[^a-z0-9]")


def checkbox_column(field_name: str, code: str) -> str:
    """The export column of one checkbox code: ``<field>___<code>``, code mangled as REDCap does."""
    return f"{field_name}___{_NOT_ALPHANUMERIC.sub('_', code.lower())}"


@attrs.frozen(repr=False)
class RedcapField:
    """One importable dictionary field: its chartscore field and its export columns.

    Attributes:
        field: The chartscore field (id = the REDCap field name).
        form: Its instrument's unique name.
        line: The dictionary line it is on.
        option_columns: Checkbox fields: export column -> code, in dictionary order.
        missing_columns: Checkbox fields: export column -> missing-data code.
        branching: Its "Branching Logic" cell, trimmed ("" for none): dictionary text,
            read by :mod:`chartscore.importers.redcap_branching`, never shown.
    """

    field: ImportedField
    form: str
    line: int
    option_columns: Mapping[str, str] = attrs.field(factory=dict)
    missing_columns: Mapping[str, str] = attrs.field(factory=dict)
    branching: str = ""

    def __repr__(self) -> str:
        return f"RedcapField({self.field.field_id!r})"


@attrs.frozen(repr=False)
class Dictionary:
    """A data dictionary read for import.

    Attributes:
        record_id: The record-ID field's name (the first row): the records' first column.
        fields: The importable fields, in dictionary order.
        other_fields: Names of the skipped fields (calc, descriptive, file): their
            columns in an export are known, and left out.
        forms: Every instrument's unique name (for ``<form>_complete`` columns).
        skipped: How many fields of each skipped type (``calc``, ``descriptive``, ``file``),
            and how many the caller excluded (``excluded``, when any).
    """

    record_id: str
    fields: tuple[RedcapField, ...]
    other_fields: frozenset[str]
    forms: frozenset[str]
    skipped: Mapping[str, int]

    def __repr__(self) -> str:
        return f"Dictionary(<{len(self.fields)} fields>)"

    def schema_document(self) -> dict[str, object]:
        """The schema of the importable fields (docs/formats.md)."""
        return {"fields": {item.field.field_id: item.field.schema_entry() for item in self.fields}}


def read_dictionary(
    path: InputPath,
    *,
    missing_codes: Collection[str] = (),
    tolerances: Mapping[str, str | int | Decimal] | None = None,
    ordinal: Collection[str] = (),
    exclude: Collection[str] = (),
) -> Dictionary:
    """Read a REDCap data dictionary (CSV, UI or API header) for import.

    Args:
        path: The dictionary file, or :data:`chartscore.io.STDIN`.
        missing_codes: The project's missing-data codes (they are not in the
            dictionary): each gives checkbox fields one more column.
        tolerances: Declared tolerances: a number field's as a decimal, a date
            field's as whole days.
        ordinal: Radio and dropdown fields to score as ordinal, their codes (in
            dictionary order) as the levels.
        exclude: Fields to leave out of the schema and the records (their columns
            in an export are known, and left out).

    Raises:
        ChartscoreError: a reading code (:func:`~chartscore.importers.table.open_table`),
            ``unknown_dictionary_header``, ``invalid_field_name``,
            ``unknown_redcap_type``, ``invalid_choices`` (dictionary line and
            column), ``not_applicable_option`` or ``schema_invalid_tolerance``
            (the field): also for an excluded field that is not in the dictionary,
            or is its record-ID field.
    """
    declared = _tolerances(tolerances)
    excluded = set(exclude)
    with open_table(path, _SOURCE) as table:
        columns = _columns(table)
        wanted_ordinal = set(ordinal)
        record_id: str | None = None
        names: set[str] = set()
        fields: list[RedcapField] = []
        other: set[str] = set()
        forms: set[str] = set()
        skipped = dict.fromkeys(SKIPPED_TYPES, 0)
        left_out = 0
        for line, cells in table.rows():
            name = cells[columns["field_name"]].strip()
            if not valid_field_id(name) or "." in name or name in names:
                raise ChartscoreError(
                    ErrorCode.INVALID_FIELD_NAME,
                    input=_SOURCE,
                    line=line,
                    column=columns["field_name"] + 1,
                )
            names.add(name)
            forms.add(cells[columns["form_name"]].strip())
            if record_id is None:
                record_id = name
                continue
            kind = cells[columns["field_type"]].strip().lower()
            if kind in SKIPPED_TYPES:
                skipped[kind] += 1
                other.add(name)
                excluded.discard(name)  # left out already
                continue
            field = _field(name, kind, cells, columns, line=line, ordinal=wanted_ordinal)
            field = _with_tolerance(field, declared.pop(name, None))
            item = _columns_of(field, cells[columns["form_name"]].strip(), line, missing_codes)
            if "branching_logic" in columns:
                item = attrs.evolve(item, branching=cells[columns["branching_logic"]].strip())
            if name in excluded:
                excluded.discard(name)
                left_out += 1
                other.update({name, *item.option_columns, *item.missing_columns})
                continue
            fields.append(item)
    if record_id is None:
        raise ChartscoreError(ErrorCode.INVALID_TABLE, input=_SOURCE, line=2)
    _refuse_unused(declared, wanted_ordinal, fields)
    for name in sorted(excluded):  # not a field of the dictionary (or its record id): a typo?
        raise _not_applicable(name, names - {record_id}, names)
    if left_out:
        skipped["excluded"] = left_out
    dictionary = Dictionary(record_id, tuple(fields), frozenset(other), frozenset(forms), skipped)
    _check_schema(dictionary)
    return dictionary


def _tolerances(tolerances: object) -> dict[str, str | int | Decimal]:
    """The caller's tolerances, read by exact type: a ``dict`` of ``str`` keys, or None."""
    if tolerances is None:
        return {}
    if type(tolerances) is not dict or not all(type(key) is str for key in tolerances):
        raise ChartscoreError(ErrorCode.USAGE)
    return dict(tolerances)


def _columns(table: Table) -> dict[str, int]:
    """The dictionary's columns by API name; the required ones must all be there."""
    found: dict[str, int] = {}
    for index, cell in enumerate(table.header):
        name = cell.strip().casefold()
        api = UI_HEADERS.get(name, name if name in UI_HEADERS.values() else None)
        if api is not None and api not in found:
            found[api] = index
    if any(name not in found for name in _REQUIRED):
        raise ChartscoreError(ErrorCode.UNKNOWN_DICTIONARY_HEADER, input=_SOURCE, line=1)
    return found


def _field(
    name: str,
    kind: str,
    cells: tuple[str, ...],
    columns: Mapping[str, int],
    *,
    line: int,
    ordinal: Collection[str],
) -> ImportedField:
    validation = cells[columns["text_validation_type_or_show_slider_number"]].strip().lower()
    if kind in _CHOICE_TYPES:
        column = columns["select_choices_or_calculations"]
        codes = parse_choices(cells[column])
        if codes is None:
            raise ChartscoreError(
                ErrorCode.INVALID_CHOICES, input=_SOURCE, line=line, column=column + 1
            )
        labels = choice_labels(cells[column])
        if kind == "checkbox":
            return ImportedField(name, FieldType.MULTI, codes, labels=labels)
        chosen = FieldType.ORDINAL if name in ordinal else FieldType.CATEGORICAL
        return ImportedField(name, chosen, codes, labels=labels)
    if kind in _BOOLEAN_TYPES:
        return ImportedField(name, FieldType.BOOLEAN)
    if kind == "slider":
        return ImportedField(name, FieldType.NUMBER)
    if kind in _TEXT_TYPES:
        if kind == "text" and validation.startswith("date_"):
            return ImportedField(name, FieldType.DATE)
        if kind == "text" and (validation == "integer" or validation.startswith("number")):
            return ImportedField(
                name, FieldType.NUMBER, comma_decimal=validation.endswith("comma_decimal")
            )
        return ImportedField(name, FieldType.TEXT)
    raise ChartscoreError(
        ErrorCode.UNKNOWN_REDCAP_TYPE, input=_SOURCE, line=line, column=columns["field_type"] + 1
    )


def parse_choices(cell: str) -> tuple[str, ...] | None:
    """The codes of a choices cell (``0, Female | 1, Male``), in order; None if unreadable.

    Every choice is ``code, label``; codes are trimmed, non-empty and distinct,
    also after text normalization (``A`` and ``a`` would be one choice).
    """
    codes: list[str] = []
    for part in cell.split("|"):
        choice = part.strip()
        if not choice:
            continue
        code, comma, _ = choice.partition(",")
        code = code.strip()
        if not comma or not code or code in codes:
            return None
        codes.append(code)
    if not codes or len({normalize_text(code) for code in codes}) != len(codes):
        return None
    return tuple(codes)


def choice_labels(cell: str) -> tuple[str, ...]:
    """The labels of a choices cell (``0, Female | 1, Male``: ``("Female", "Male")``), in the
    order of :func:`parse_choices`'s codes; a label is everything after the first comma, with
    runs of white space made one space. Call it on a cell ``parse_choices`` read.
    """
    labels = []
    for part in cell.split("|"):
        choice = part.strip()
        if choice:
            labels.append(" ".join(choice.partition(",")[2].split()))
    return tuple(labels)


def _columns_of(
    field: ImportedField, form: str, line: int, missing_codes: Iterable[str]
) -> RedcapField:
    if field.field_type is not FieldType.MULTI:
        return RedcapField(field, form, line)
    options = {checkbox_column(field.field_id, code): code for code in field.choices}
    missing = {checkbox_column(field.field_id, code): code for code in missing_codes}
    if len(options) != len(field.choices) or options.keys() & missing.keys():
        raise ChartscoreError(ErrorCode.INVALID_CHOICES, input=_SOURCE, line=line)
    return RedcapField(field, form, line, options, missing)


def _with_tolerance(field: ImportedField, declared: str | int | Decimal | None) -> ImportedField:
    if declared is None:
        return field
    tolerance: Decimal | int | None
    if field.field_type is FieldType.NUMBER:
        tolerance = _number_tolerance(declared)
    elif field.field_type is FieldType.DATE:
        tolerance = _days_tolerance(declared)
    else:
        raise ChartscoreError(ErrorCode.NOT_APPLICABLE_OPTION, field_id=field.field_id)
    if tolerance is None:
        raise ChartscoreError(
            ErrorCode.SCHEMA_INVALID_TOLERANCE, input=InputKind.SCHEMA, field_id=field.field_id
        )
    return attrs.evolve(field, tolerance=tolerance)


def _number_tolerance(declared: object) -> Decimal | None:
    if type(declared) is int:
        declared = Decimal(declared)
    if type(declared) is str:
        declared = parse_number_literal(declared.strip())
    if type(declared) is Decimal and declared.is_finite() and declared >= 0:
        return declared
    return None


def _days_tolerance(declared: object) -> int | None:
    if type(declared) is str and declared.strip().isdigit() and declared.strip().isascii():
        declared = int(declared.strip())
    return declared if type(declared) is int and declared >= 0 else None


def _refuse_unused(
    tolerances: Mapping[str, object], ordinal: Collection[str], fields: Iterable[RedcapField]
) -> None:
    """A tolerance or ordinal option naming no suitable field is an error: a typo drops it."""
    kinds = {item.field.field_id: item.field.field_type for item in fields}
    categorical = {
        name for name, kind in kinds.items() if kind in (FieldType.CATEGORICAL, FieldType.ORDINAL)
    }
    measured = {name for name, kind in kinds.items() if kind in (FieldType.NUMBER, FieldType.DATE)}
    for name in sorted(tolerances):  # not a field of the dictionary
        raise _not_applicable(name, measured, kinds)
    for name in sorted(set(ordinal) - categorical):
        raise _not_applicable(name, categorical, kinds)


def _not_applicable(
    name: str, suitable: Collection[str], known: Collection[str]
) -> ChartscoreError:
    """``not_applicable_option`` naming the field, or the dictionary field it may have meant.

    A field of the dictionary is named (it cannot take the option). Otherwise the
    message suggests ``nyha`` for ``NYHA`` (REDCap field names are lowercase) or a
    close suitable name, both the dictionary's. Field names
    are the dictionary's and the options' (developer-authored, not patient data);
    a name that is not a field id is never shown.
    """
    if name in known:
        return ChartscoreError(ErrorCode.NOT_APPLICABLE_OPTION, field_id=name)
    lower = name.lower()
    guess = lower if lower in known else closest(lower, suitable)
    # The name itself only as given, and only when it is a field id (ChartscoreError drops
    # anything else): lowercased, a name that is no field could show what it was.
    return ChartscoreError(ErrorCode.NOT_APPLICABLE_OPTION, field_id=name, suggestion=guess)


def _check_schema(dictionary: Dictionary) -> None:
    """Every field's schema entry must be a valid schema (so the written schema loads)."""
    for item in dictionary.fields:
        entry = {"fields": {item.field.field_id: item.field.schema_entry()}}
        code: ErrorCode | None = None
        try:
            Schema.from_dict(entry)
        except ChartscoreError as error:
            code = error.code
        if code is not None:  # raised outside the handler, at the field's line
            raise ChartscoreError(code, input=_SOURCE, line=item.line, field_id=item.field.field_id)
