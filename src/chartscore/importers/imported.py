"""What an importer produces, in chartscore's own formats, and writing it atomically.

An :class:`Imported` holds validated records (:class:`~chartscore.GoldField`,
:class:`~chartscore.Prediction`) and a schema document. It writes them as the
formats of docs/formats.md: JSON Lines in the documented key order and layout (the
fastest to read back), sorted by case id and field id so that the same export in
any row order gives the same bytes; the schema as canonical JSON.

:func:`write_imported` checks every output before writing any (never an input:
``output_is_input``; never two outputs on one file: ``duplicate_output``) and
writes them all or none: each to a temporary file, all renamed once every one is
complete, so a failure (a full disk on the second) leaves no new file beside old
ones. Gold and predictions files hold patient data and are written with mode
``0o600``; a schema is developer-authored configuration and gets the usual mode.

Room for more outputs: a case-level file (the strata of issue 24) would be one more
member built from the same cases, and one more target in :func:`write_imported`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Final, Literal

import attrs

from chartscore.documents.canonical_json import canonical_json, json_constant
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.importers.fields import exact_collection
from chartscore.io.inputs import InputPath
from chartscore.io.output import check_outputs, write_atomic_all
from chartscore.records._rules import escape_lone_surrogates
from chartscore.records.model import GoldField, Prediction
from chartscore.records.schema import Schema

PRIVATE_MODE = 0o600
"""The mode of every file an importer writes that holds patient data."""

Role = Literal["gold", "predictions"]
"""What an importer's records become: gold, or predictions (one choice, for every importer)."""
ROLES: Final = ("gold", "predictions")


@attrs.frozen(repr=False)
class Imported:
    """An importer's result: records and a schema document, nothing written yet.

    Attributes:
        gold: Gold records, sorted by (case id, field id).
        predictions: Prediction records, sorted the same way.
        schema: The schema document (``{"fields": {...}}``), or None.
        counts: What was read and what was left out, by closed names (see
            docs/import.md): counts only.
        raters: Several raters' records on the same cases (REDCap Double Data
            Entry's two entries), each in the predictions format, sorted the same way.
    """

    gold: tuple[GoldField, ...] = attrs.field(default=(), repr=False)
    predictions: tuple[Prediction, ...] = attrs.field(default=(), repr=False)
    schema: Mapping[str, object] | None = attrs.field(default=None, repr=False)
    counts: Mapping[str, int] = attrs.field(factory=dict, repr=False)
    raters: tuple[tuple[Prediction, ...], ...] = attrs.field(default=(), repr=False)

    def __repr__(self) -> str:
        fields = 0 if self.schema is None else len(self.schema["fields"])  # type: ignore[arg-type]
        raters = f", {len(self.raters)} raters" if self.raters else ""
        return (
            f"Imported(<{len(self.gold)} gold rows, {len(self.predictions)} predictions"
            f"{raters}, {fields} schema fields>)"
        )

    def gold_lines(self) -> bytes:
        """The gold records as a gold JSON Lines file."""
        return b"".join(_gold_line(row) for row in self.gold)

    def prediction_lines(self) -> bytes:
        """The predictions as a predictions JSON Lines file."""
        return b"".join(_prediction_line(row) for row in self.predictions)

    def rater_lines(self, rater: int) -> bytes:
        """One rater's records (0-based: ``raters[rater]``) as a predictions JSON Lines file.

        Raises:
            ChartscoreError: ``usage`` when there is no such rater.
        """
        if type(rater) is not int or not 0 <= rater < len(self.raters):
            raise ChartscoreError(ErrorCode.USAGE)
        return b"".join(_prediction_line(row) for row in self.raters[rater])

    def schema_text(self) -> bytes:
        """The schema document as canonical JSON, with a line end.

        Raises:
            ChartscoreError: ``invalid_schema`` when there is none; the schema's codes
                when it would not read back (a label with a lone surrogate is no choice).
        """
        if self.schema is None:
            raise ChartscoreError(ErrorCode.INVALID_SCHEMA)
        Schema.from_dict(self.schema)  # what is written reads back, or nothing is written
        return (canonical_json(self.schema) + "\n").encode("utf-8")

    def loaded_schema(self) -> Schema | None:
        """The schema document read as a :class:`Schema` (None when there is none)."""
        return None if self.schema is None else Schema.from_dict(self.schema)


def sorted_records(rows: Sequence[GoldField]) -> tuple[GoldField, ...]:
    """Gold records in file order: by case id, then field id (code point order)."""
    return tuple(sorted(rows, key=lambda row: (row.case_id, row.field_id)))


def sorted_predictions(rows: Sequence[Prediction]) -> tuple[Prediction, ...]:
    """Predictions in file order: by case id, then field id."""
    return tuple(sorted(rows, key=lambda row: (row.case_id, row.field_id)))


def _text(value: str) -> str:
    # A lone surrogate (a value read from JSON's "\\ud800") is written as that escape again:
    # UTF-8 cannot hold it, and the line reads back to the same string.
    return escape_lone_surrogates(json.dumps(value, ensure_ascii=False))


def _value(value: object) -> str:
    constant = json_constant(value)
    if constant is not None:
        return constant
    if type(value) is str:
        return _text(value)
    if type(value) is int:
        return str(value)
    if type(value) is Decimal:
        return str(value)  # finite and in range: a JSON number literal (1.5, 1E+3)
    if type(value) is frozenset:
        return "[" + ", ".join(_text(item) for item in sorted(value)) + "]"
    raise ChartscoreError(ErrorCode.INVALID_VALUE)  # records hold only the types above


def _gold_line(row: GoldField) -> bytes:
    # docs/formats.md: a not-applicable row (the field does not apply to the chart)
    value = 'null, "not_applicable": true' if row.not_applicable else _value(row.value)
    return (
        f'{{"case_id": {_text(row.case_id)}, "field_id": {_text(row.field_id)}, '
        f'"field_type": "{row.field_type.value}", "value": {value}}}\n'
    ).encode()


def _prediction_line(row: Prediction) -> bytes:
    return (
        f'{{"case_id": {_text(row.case_id)}, "field_id": {_text(row.field_id)}, '
        f'"value": {_value(row.value)}}}\n'
    ).encode()


def write_imported(
    imported: Imported,
    *,
    gold: InputPath | None = None,
    predictions: InputPath | None = None,
    schema: InputPath | None = None,
    inputs: Sequence[InputPath | None] = (),
    raters: Sequence[InputPath | None] = (),
) -> None:
    """Write the asked parts of ``imported``, all or none, after checking every target.

    Args:
        imported: What an importer produced.
        gold: Where to write the gold file (mode ``0o600``), or None.
        predictions: Where to write the predictions file (mode ``0o600``), or None.
        schema: Where to write the schema (canonical JSON), or None.
        inputs: Every input the import read; no output may be one of them.
        raters: Where to write each rater's file (mode ``0o600``), in the order of
            ``imported.raters``; None (or a shorter sequence) leaves a rater out.

    Raises:
        ChartscoreError: ``output_is_input`` (an output names an input),
            ``duplicate_output`` (two outputs name one file), ``output_unwritable``
            (nothing new was written, unless the error says that some outputs
            were replaced), ``invalid_path``;
            ``invalid_schema`` when a schema is asked for but there is none;
            ``usage`` when ``imported`` is not an :class:`Imported`, or ``raters``
            names more raters than it holds.
    """
    if type(imported) is not Imported:
        raise ChartscoreError(ErrorCode.USAGE)
    rater_targets = tuple(exact_collection(raters))
    if len(rater_targets) > len(imported.raters):
        raise ChartscoreError(ErrorCode.USAGE)
    asked: list[tuple[object, Callable[[], bytes], int | None]] = [
        (gold, imported.gold_lines, PRIVATE_MODE),
        (predictions, imported.prediction_lines, PRIVATE_MODE),
        *(
            (where, functools.partial(imported.rater_lines, index), PRIVATE_MODE)
            for index, where in enumerate(rater_targets)
        ),
        (schema, imported.schema_text, None),
    ]
    targets = [(where, produce, mode) for where, produce, mode in asked if where is not None]
    checked = check_outputs([where for where, _, _ in targets], inputs=inputs)
    contents = [produce() for _, produce, _ in targets]  # all built before any is written
    write_atomic_all(
        [
            (path, data, mode)
            for path, data, (_, _, mode) in zip(checked, contents, targets, strict=True)
        ]
    )
