"""The adjudication worklist: every disagreement's case id, field id and outcome class.

It is **patient-level and inside-only**: case ids link to charts, so the list is for
the abstractors inside the protected environment, who open each chart to adjudicate
(no value is listed: the chart holds them). It is never a report:

- it is written only to a named file, never to stdout, with mode ``0o600``,
  atomically and never over an input;
- its first line, ``# chartscore.worklist 1: INSIDE ONLY. ...``, marks it, and every
  reader of reports and JSON Lines (``render``, ``gate``, ``audit``, ``share``,
  ``score``, ``compare``, ``Report.from_json``, ...) refuses it with
  ``inside_only_worklist``;
- nothing of it reaches stdout, stderr or an error: only its number of rows.

The format (docs/worklist.md): UTF-8 CSV, ``\\n`` line ends, that first line, the
header ``case_id,field_id,outcome``, then one row per disagreement sorted by case
id and field id; cells quoted as CSV needs. With ``adjudication_column``, a last,
empty column ``adjudicated`` is added for the abstractor's answer, which
``chartscore import adjudication`` reads back into a new gold version
(:mod:`chartscore.workflows.adjudication`).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from chartscore._format import WORKLIST_ADJUDICATED, WORKLIST_COLUMNS, WORKLIST_FIRST_LINE
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, flag_option
from chartscore.io.inputs import InputPath, StandardInput, input_path
from chartscore.io.output import write_output
from chartscore.records.model import GoldField, Prediction
from chartscore.records.schema import Schema, to_schema
from chartscore.scoring.disagreements import OUTCOME_CLASSES, Disagreement, DisagreementScorer
from chartscore.scoring.scorer import (
    ExtraPredictions,
    check_options,
    collector_paused,
    feed_records,
)
from chartscore.workflows.score import check_file_options, feed_files, resolve_schema

WORKLIST_MODE: Final = 0o600
"""The worklist file's mode: readable and writable by its owner only."""
HEADER: Final = WORKLIST_COLUMNS
"""The worklist's column names."""
ADJUDICATION_HEADER: Final = (*WORKLIST_COLUMNS, WORKLIST_ADJUDICATED)
"""The column names of a worklist with the adjudication column (left empty)."""


@attrs.frozen(repr=False)
class Worklist:
    """Every disagreement of one scoring run, sorted. Private: holds case ids.

    Attributes:
        rows: ``(case id, field id, outcome class)`` per disagreeing gold row.
        ignored_prediction_count: With ``extra_predictions="ignore"``, how many predictions
            were skipped for a key not in gold (they are in no row); None otherwise.
    """

    rows: tuple[Disagreement, ...] = attrs.field(repr=False)
    ignored_prediction_count: int | None = attrs.field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"Worklist(<{len(self.rows)} rows hidden>)"

    def counts(self) -> dict[str, int]:
        """How many rows of each outcome class (every class, zeros included)."""
        found = Counter(outcome for _, _, outcome in self.rows)
        return {name: found[name] for name in OUTCOME_CLASSES}

    def to_csv(self, *, adjudication_column: bool = False) -> bytes:
        """The worklist file's bytes (see the module docstring).

        Args:
            adjudication_column: Add the last, empty column ``adjudicated``.

        Raises:
            ChartscoreError: ``usage`` when ``adjudication_column`` is not a ``bool``.
        """
        adjudication_column = flag_option(adjudication_column)
        buffer = io.StringIO()
        buffer.write(WORKLIST_FIRST_LINE + "\n")
        writer = csv.writer(buffer, lineterminator="\n")
        if adjudication_column:
            writer.writerow(ADJUDICATION_HEADER)
            writer.writerows((*row, "") for row in self.rows)
        else:
            writer.writerow(HEADER)
            writer.writerows(self.rows)
        return buffer.getvalue().encode("utf-8")


def worklist(
    gold: Iterable[GoldField],
    predictions: Iterable[Prediction],
    *,
    schema: Schema | Mapping[str, object] | None = None,
    extra_predictions: ExtraPredictions = "error",
    list_ignored: bool = False,
) -> Worklist:
    """The disagreements of ``predictions`` with ``gold``, scored as :func:`chartscore.score`.

    ``list_ignored`` (with ``extra_predictions="ignore"``) lists each prediction whose key
    gold does not hold as a row of class ``not_in_gold``.

    Raises:
        ChartscoreError: every code of :func:`chartscore.score`; ``usage`` for
            ``list_ignored`` without ``extra_predictions="ignore"``.
    """
    check_options(extra_predictions, False)
    _check_list_ignored(list_ignored, extra_predictions)
    scorer = DisagreementScorer(
        None if schema is None else to_schema(schema),
        extra_predictions=extra_predictions,
        list_ignored=list_ignored,
    )
    with collector_paused():
        feed_records(scorer, gold, predictions)
    return Worklist(tuple(scorer.disagreements()), scorer.ignored_prediction_count)


def worklist_files(
    gold: InputPath,
    predictions: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    extra_predictions: ExtraPredictions = "error",
    parallel: bool = False,
    list_ignored: bool = False,
) -> Worklist:
    """The disagreements of a predictions file with a gold file (read as ``score_files`` reads).

    Raises:
        ChartscoreError: every code of :func:`chartscore.score_files`; ``usage`` for
            ``list_ignored`` without ``extra_predictions="ignore"``.
    """
    check_file_options(None, parallel, extra_predictions, False)
    _check_list_ignored(list_ignored, extra_predictions)
    scorer = DisagreementScorer(
        resolve_schema(schema), extra_predictions=extra_predictions, list_ignored=list_ignored
    )
    feed_files(scorer, gold, predictions, parallel=parallel)
    return Worklist(tuple(scorer.disagreements()), scorer.ignored_prediction_count)


def _check_list_ignored(list_ignored: object, extra_predictions: object) -> None:
    if type(list_ignored) is not bool or (list_ignored and extra_predictions != "ignore"):
        raise ChartscoreError(ErrorCode.USAGE)


def write_worklist(
    found: Worklist,
    out: InputPath,
    *,
    inputs: Sequence[InputPath | None] = (),
    adjudication_column: bool = False,
) -> None:
    """Write the worklist to the file ``out``: atomically, mode ``0o600``, never over an input.

    With ``adjudication_column``, the file has a last, empty column ``adjudicated``
    for the abstractors' answers (docs/worklist.md, "Adjudication back into gold").

    Raises:
        ChartscoreError: ``invalid_path`` (also for standard output: a worklist
            goes to a named file only), ``output_is_input``, ``output_unwritable``,
            or ``usage`` when ``found`` is not a :class:`Worklist` or
            ``adjudication_column`` not a ``bool``.
    """
    if type(found) is not Worklist:
        raise ChartscoreError(ErrorCode.USAGE)
    data = found.to_csv(adjudication_column=adjudication_column)
    if isinstance(input_path(out, InputKind.OUTPUT), StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.OUTPUT)
    write_output(data, out, inputs=inputs, mode=WORKLIST_MODE)
