"""Adjudication back into gold: a completed worklist's answers, applied to the old gold.

``chartscore worklist --adjudication-column`` writes the disagreements with a last,
empty column, ``adjudicated``. An abstractor opens each chart and types the answer
there; :func:`adjudicate_files` reads the completed worklist, applies the answers to
the old gold and returns the new gold set, which :func:`write_adjudicated` writes
atomically (mode ``0o600``, never over an input). docs/worklist.md, "Adjudication
back into gold", is the user's page; this is the rule:

- a **blank** cell (empty, or spaces only) changes nothing;
- the word ``null`` (any case, spaces around it ignored) makes the gold row
  unanswerable (``value: null``); so a text field's answer cannot be the word itself;
- any other cell is the answer, read by the field's type as ``chartscore import
  csv`` reads a gold cell: a declared choice or level, a number (an integer stays an
  ``int``, any other number an exact ``Decimal``), an ISO date, a boolean word
  (``true``/``yes``/``1``, ``false``/``no``/``0``), a text as typed; a multi-select
  answer is its items joined by ``|`` (``cough|fever``), and ``[]`` is the empty set;
- the answer is then checked as gold is checked when scoring (with the schema, if
  given): an answer that is not a value of its field stops everything with
  ``invalid_cell (worklist line N column 4)``, which never quotes it.

Every other failure is a code with the worklist's or gold's line: a file that is not
a worklist with the column (``not_a_worklist``), a row whose case and field are not
in the old gold (``worklist_row_not_in_gold``), a row given twice
(``duplicate_worklist_row``), an outcome cell that is not an outcome class
(``invalid_cell``, column 3). Private: it holds the gold set; its repr and its
:attr:`Adjudication.counts` are counts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Final

import attrs

from chartscore._format import WORKLIST_ADJUDICATED, WORKLIST_COLUMNS
from chartscore._version import __version__
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.importers.fields import (
    DEFAULT_BOOLEANS,
    INVALID,
    ImportedField,
    cell_value,
    multi_value,
)
from chartscore.importers.imported import Imported, sorted_records, write_imported
from chartscore.importers.table import open_worklist_table
from chartscore.io.fastpath import fast_gold
from chartscore.io.feed import feed_rows
from chartscore.io.hints import explained
from chartscore.io.inputs import InputPath, StandardInput, input_path, open_input
from chartscore.io.ledger_file import append_line
from chartscore.io.output import check_outputs
from chartscore.ledger.adjudication import COUNT_NAMES, AdjudicationEntry
from chartscore.ledger.entry import utc_time
from chartscore.metrics import FieldType, GoldValue
from chartscore.records.gold_identity import LedgerKey, gold_identity
from chartscore.records.model import GoldField
from chartscore.records.normalize import normalize_text
from chartscore.records.rows import gold_row
from chartscore.records.schema import FieldSpec, Schema
from chartscore.scoring.disagreements import NOT_IN_GOLD, OUTCOME_CLASSES
from chartscore.scoring.scorer import Scorer
from chartscore.workflows.score import resolve_schema

NULL_WORD: Final = "null"
"""An adjudicated cell holding this word (any case) makes the gold row unanswerable."""
EMPTY_SET: Final = "[]"
"""An adjudicated multi-select cell holding this is the empty set."""
ITEM_SEPARATOR: Final = "|"
"""Between a multi-select answer's items."""
ADJUDICATION_HEADER: Final = (*WORKLIST_COLUMNS, WORKLIST_ADJUDICATED)
"""The header a completed worklist must have."""
ANSWER_COLUMN: Final = len(ADJUDICATION_HEADER)
"""The 1-based column of the adjudicated answer (errors name it)."""
OUTCOME_COLUMN: Final = WORKLIST_COLUMNS.index("outcome") + 1
"""The 1-based column of the outcome class."""
CHANGES: Final = ("value_changed", "now_unanswerable", "now_answerable")
"""How a changed row changed: another value, a value to null, null to a value."""

_INVALID_CELL: Final = object()


@attrs.frozen(repr=False)
class Adjudication:
    """The old gold, the new gold and what changed. Private: holds both gold sets.

    Attributes:
        previous: The old gold rows, in file order.
        gold: The new gold rows, sorted by case id and field id.
        counts: ``worklist_rows``, ``blank`` (no answer: no change), ``confirmed``
            (the answer is what gold held), ``changed``, each of :data:`CHANGES`,
            ``gold_rows``: counts only.
        changed_by_type: Changed rows per field type (every type present, by name).
        changed_by_outcome: Changed rows per worklist outcome class.
    """

    previous: tuple[GoldField, ...] = attrs.field(repr=False)
    gold: tuple[GoldField, ...] = attrs.field(repr=False)
    counts: Mapping[str, int] = attrs.field(repr=False)
    changed_by_type: Mapping[str, int] = attrs.field(repr=False)
    changed_by_outcome: Mapping[str, int] = attrs.field(repr=False)

    def __repr__(self) -> str:
        return (
            f"Adjudication(<{self.counts['worklist_rows']} worklist rows, "
            f"{self.counts['changed']} changed>)"
        )

    def identities(self, key: LedgerKey) -> tuple[str, str]:
        """The keyed identities of the old and the new gold set (docs/ledger.md).

        They are what ``score --ledger`` records for each gold file.
        """
        return gold_identity(self.previous, key), gold_identity(self.gold, key)

    def summary(self) -> dict[str, object]:
        """The counts as one JSON-ready object (the ledger's ``summary``): counts only."""
        return {
            **self.counts,
            "changed_by_type": dict(self.changed_by_type),
            "changed_by_outcome": dict(self.changed_by_outcome),
        }


def adjudicate_files(
    gold: InputPath, worklist: InputPath, *, schema: Schema | InputPath | None = None
) -> Adjudication:
    """Apply a completed worklist's adjudicated answers to a gold file.

    Args:
        gold: The old gold (JSON Lines, as ``score`` reads it), checked as scoring checks it.
        worklist: The completed worklist (``chartscore worklist --adjudication-column``).
        schema: The schema (a :class:`Schema` or its file): its choices and levels
            check the answers, as scoring checks gold.

    Raises:
        ChartscoreError: every reading and gold code of ``score`` (``gold line N``);
            ``not_a_worklist``, ``worklist_row_not_in_gold``,
            ``duplicate_worklist_row``, ``invalid_cell``, ``invalid_table``,
            ``ragged_row`` (``worklist line N``); never a value or a case id.
    """
    spec = resolve_schema(schema)
    previous = _read_gold(gold, spec)
    index = {(row.case_id, row.field_id): position for position, row in enumerate(previous)}
    rows = list(previous)
    counts: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    by_outcome: Counter[str] = Counter()
    changed: list[tuple[int, GoldField]] = []
    seen: set[int] = set()
    with open_worklist_table(worklist) as table:
        if table.header != ADJUDICATION_HEADER:
            raise ChartscoreError(ErrorCode.NOT_A_WORKLIST, input=InputKind.WORKLIST, line=2)
        for line, (case_id, field_id, outcome, answer) in table.rows():
            counts["worklist_rows"] += 1
            if outcome not in OUTCOME_CLASSES:
                raise _invalid_cell(line, OUTCOME_COLUMN)
            position = index.get((case_id, field_id))
            if position is None and outcome == NOT_IN_GOLD and not answer.strip():
                counts["blank"] += 1  # --list-ignored's row: gold has no row to adjudicate
                continue
            if position is None:
                raise ChartscoreError(
                    ErrorCode.WORKLIST_ROW_NOT_IN_GOLD, input=InputKind.WORKLIST, line=line
                )
            if position in seen:
                raise ChartscoreError(
                    ErrorCode.DUPLICATE_WORKLIST_ROW, input=InputKind.WORKLIST, line=line
                )
            seen.add(position)
            if previous[position].not_applicable:  # never a worklist row: not scored
                raise ChartscoreError(
                    ErrorCode.NOT_APPLICABLE_UNSUPPORTED, input=InputKind.WORKLIST, line=line
                )
            if not answer.strip():
                counts["blank"] += 1
                continue
            old = previous[position]
            new = _adjudicated(old, answer, None if spec is None else spec.get(old.field_id))
            if new is None:
                raise _invalid_cell(line, ANSWER_COLUMN)
            if _same(old.value, new.value):
                counts["confirmed"] += 1
                continue
            counts["changed"] += 1
            counts[_change(old.value, new.value)] += 1
            by_type[old.field_type.value] += 1
            by_outcome[outcome] += 1
            changed.append((line, new))
            rows[position] = new
    _check_answers(changed, spec)
    counts["gold_rows"] = len(rows)
    return Adjudication(
        tuple(previous),
        sorted_records(rows),
        {name: counts[name] for name in COUNT_NAMES},
        {name.value: by_type[name.value] for name in FieldType if by_type[name.value]},
        {name: by_outcome[name] for name in OUTCOME_CLASSES if by_outcome[name]},
    )


def write_adjudicated(
    adjudication: Adjudication, gold_out: InputPath, *, inputs: Sequence[InputPath | None] = ()
) -> None:
    """Write the new gold file: atomically, mode ``0o600``, never over an input.

    Raises:
        ChartscoreError: as :func:`chartscore.importers.write_imported`; ``usage``
            for an ``adjudication`` that is not an :class:`Adjudication`.
    """
    if type(adjudication) is not Adjudication:
        raise ChartscoreError(ErrorCode.USAGE)
    write_imported(Imported(gold=adjudication.gold), gold=gold_out, inputs=inputs)


def adjudication_entry(
    adjudication: Adjudication, key: LedgerKey, *, time: str | None = None
) -> AdjudicationEntry:
    """The ledger line linking the old gold's keyed identity to the new one's, with the counts.

    Raises:
        ChartscoreError: ``usage`` for an ``adjudication`` that is not an
            :class:`Adjudication` or a ``key`` that is not a :class:`LedgerKey`.
    """
    if type(adjudication) is not Adjudication or type(key) is not LedgerKey:
        raise ChartscoreError(ErrorCode.USAGE)
    previous, new = adjudication.identities(key)
    counts = {name: adjudication.counts[name] for name in COUNT_NAMES}
    return AdjudicationEntry(
        utc_time() if time is None else time,
        __version__,
        previous,
        new,
        key.key_id,
        counts,
        dict(adjudication.changed_by_type),
        dict(adjudication.changed_by_outcome),
    )


def record_adjudication(
    ledger: InputPath,
    adjudication: Adjudication,
    key: LedgerKey,
    *,
    inputs: Sequence[InputPath | None] = (),
) -> AdjudicationEntry:
    """Append the adjudication's line to the ledger (docs/ledger.md): locked, all or nothing.

    Raises:
        ChartscoreError: as :func:`adjudication_entry` and
            :func:`chartscore.io.ledger_file.append_line`.
    """
    entry = adjudication_entry(adjudication, key)
    append_line(ledger, entry.to_line(), inputs=inputs)
    return entry


def check_adjudication_output(gold_out: InputPath, inputs: Sequence[InputPath | None]) -> None:
    """Check the new gold's path before anything is read (never an input, never stdout).

    Raises:
        ChartscoreError: ``invalid_path (output)`` for standard output, and every
            code of :func:`chartscore.io.output.check_outputs`.
    """
    if isinstance(input_path(gold_out, InputKind.OUTPUT), StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.OUTPUT)
    check_outputs([gold_out], inputs=inputs)


def _read_gold(gold: InputPath, schema: Schema | None) -> list[GoldField]:
    """The old gold's rows, checked as ``score`` checks gold (errors by gold line)."""
    scorer = Scorer(schema)
    rows: list[GoldField] = []

    def add(case_id: str, field_id: str, field_type: FieldType, value: GoldValue) -> None:
        scorer.add_gold(case_id, field_id, field_type, value)
        rows.append(GoldField(case_id, field_id, field_type, value))

    where = input_path(gold, InputKind.GOLD)
    failure: ChartscoreError | None = None
    try:
        with open_input(where, InputKind.GOLD) as stream:
            feed_rows(
                stream, InputKind.GOLD, fast=fast_gold, checked=gold_row, add=add, progress=None
            )
    except ChartscoreError as error:
        failure = error
    if failure is not None:  # score's hints (a CSV, a report given as gold); no context
        raise explained(failure, [(where, InputKind.GOLD)])
    if not rows:
        raise ChartscoreError(ErrorCode.EMPTY_GOLD, input=InputKind.GOLD)
    return rows


def _invalid_cell(line: int, column: int) -> ChartscoreError:
    return ChartscoreError(
        ErrorCode.INVALID_CELL, input=InputKind.WORKLIST, line=line, column=column
    )


def _adjudicated(old: GoldField, answer: str, spec: FieldSpec | None) -> GoldField | None:
    """The gold row with the adjudicated answer, or None when it is not a value of the field."""
    value = _answer_value(old.field_type, answer, spec)
    if value is _INVALID_CELL:
        return None
    record: GoldField | None = None
    try:
        record = GoldField(old.case_id, old.field_id, old.field_type, value)
    except ChartscoreError:
        record = None  # the record's own error is dropped: it names nothing of the row here
    return record


def _answer_value(field_type: FieldType, answer: str, spec: FieldSpec | None) -> object:
    text = answer.strip()
    if text.lower() == NULL_WORD:
        return None
    if field_type is FieldType.TEXT:
        return answer
    if field_type is FieldType.MULTI:
        if text == EMPTY_SET:
            return []
        items = [item.strip() for item in text.split(ITEM_SEPARATOR)]
        choices = tuple(sorted(spec.choices)) if spec is not None and spec.choices else ()
        field = ImportedField("answer", field_type, choices)
        value = multi_value(field, items, gold=True) if all(items) else INVALID
        return _INVALID_CELL if value is INVALID else value
    levels: tuple[object, ...] = spec.levels if spec is not None else ()
    if field_type is FieldType.ORDINAL:
        for level in levels:
            if normalize_text(str(level)) == normalize_text(text):
                return level
        return _INVALID_CELL
    declared = spec.choices if spec is not None and spec.choices else frozenset()
    field = ImportedField("answer", field_type, tuple(sorted(declared)))
    value = cell_value(field, answer, gold=True, booleans=DEFAULT_BOOLEANS)
    return _INVALID_CELL if value is INVALID else value


def _same(old: GoldValue, new: GoldValue) -> bool:
    """Whether an answer is what gold held already, exactly (its written form included)."""
    if type(old) is not type(new):
        return False
    if type(old) is Decimal:
        return str(old) == str(new)
    return old == new


def _change(old: GoldValue, new: GoldValue) -> str:
    if new is None:
        return "now_unanswerable"
    if old is None:
        return "now_answerable"
    return "value_changed"


def _check_answers(changed: list[tuple[int, GoldField]], schema: Schema | None) -> None:
    """Check every changed row as scoring checks gold; a failure names its worklist cell."""
    scorer = Scorer(schema)
    for line, row in changed:
        failed = False
        try:
            scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
        except ChartscoreError:
            failed = True
        if failed:
            raise _invalid_cell(line, ANSWER_COLUMN)
