"""Agreement among several raters from files: read every rater file, count, document.

:func:`agree_files` (``chartscore agree``, docs/cli.md): each rater file has the
predictions format and is read with the predictions reader; its rows are normalized by
the schema's field types and joined with the other raters' on (case id, field id)
(:class:`~chartscore.scoring.raters.RaterTable`). With a gold file, each rater is also
scored against gold exactly as ``score`` scores a predictions file, and the document
gains each rater's agreement with gold and the ceiling (the best and the median rater).

Raters are named by plain labels (a file name's stem, as a batch's runs, or the name
given with ``--rater NAME=FILE``); an error names a rater file by its position
(``raters part 2 line 7``), never by its name or path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from chartscore.documents.agreement import (
    GOLD_METRICS,
    MAX_RATERS,
    MIN_RATERS,
    RATER_LABEL,
    Agreement,
    CountResult,
    GoldAgreement,
    count_result,
)
from chartscore.documents.report import Report
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, as_part
from chartscore.io.fastpath import fast_prediction
from chartscore.io.feed import Progress, feed_rows
from chartscore.io.hints import explained
from chartscore.io.inputs import InputPath, StandardInput, input_path, open_input
from chartscore.records.rows import prediction_row
from chartscore.records.schema import Schema
from chartscore.scoring.raters import RaterTable
from chartscore.scoring.scorer import ExtraPredictions, collector_paused
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option, z_for
from chartscore.workflows.score import resolve_schema, score_files

__all__ = ["agree_files"]

_T = TypeVar("_T")


def agree_files(
    raters: Sequence[tuple[str, InputPath]],
    *,
    schema: Schema | InputPath,
    gold: InputPath | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    extra_predictions: ExtraPredictions = "error",
    progress: Progress | None = None,
) -> Agreement:
    """The agreement document of several raters' files on the same charts.

    Args:
        raters: ``(label, path)`` for each rater, 2 to 64 of them; a label is a plain
            name (letters, digits, ``_ . + -``), at most one path may be standard input,
            and none with ``gold``.
        schema: A :class:`Schema` or the path of a schema file declaring every field the
            raters answer (it gives each field's type and scale).
        gold: A gold file: each rater is then scored against it (as ``score``).
        confidence: The level of every interval: 0.9, 0.95 (default) or 0.99.
        extra_predictions: With ``gold``, what a rater's key that is not in gold does:
            ``"error"`` (default) or ``"ignore"``, as for ``score``.
        progress: Optional callback ``(input, lines_read)``; receives counts only.

    Returns:
        The value-free :class:`~chartscore.documents.agreement.Agreement`.

    Raises:
        ChartscoreError: ``usage`` for fewer than 2 or more than 64 raters, standard
            input twice (or with ``gold``) or a confidence level outside the three;
            ``invalid_run_label`` or ``duplicate_run_label`` (``raters part N``);
            ``undeclared_rater_field``, ``duplicate_prediction_key`` or any reading code,
            located by ``raters part N`` and line; with ``gold``, any code ``score``
            raises, a rater file's located the same way.
    """
    confidence_option(confidence)
    if type(raters) not in (list, tuple) or not MIN_RATERS <= len(raters) <= MAX_RATERS:
        raise ChartscoreError(ErrorCode.USAGE)
    labels: list[str] = []
    wheres: list[str | StandardInput] = []
    for part, item in enumerate(raters, start=1):
        if type(item) is not tuple or len(item) != 2:
            raise ChartscoreError(ErrorCode.USAGE)
        label, path = item
        if type(label) is not str or RATER_LABEL.fullmatch(label) is None:
            raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL, input=InputKind.RATERS, part=part)
        if label in labels:
            raise ChartscoreError(ErrorCode.DUPLICATE_RUN_LABEL, input=InputKind.RATERS, part=part)
        labels.append(label)
        wheres.append(input_path(path, InputKind.RATERS))
    standard = sum(isinstance(where, StandardInput) for where in wheres)
    if standard > 1 or (standard and gold is not None):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.RATERS)
    if schema is None:
        raise ChartscoreError(ErrorCode.SCHEMA_REQUIRED, input=InputKind.SCHEMA)
    resolved = resolve_schema(schema)
    assert resolved is not None
    table = RaterTable(resolved, labels)
    for part, where in enumerate(wheres, start=1):
        _read_rater(table, part, where, progress)
    agreement = table.agreement(confidence)
    if gold is None:
        return agreement
    reports = [
        _scored(
            gold,
            part,
            where=where,
            schema=resolved,
            confidence=confidence,
            extra_predictions=extra_predictions,
            progress=progress,
        )
        for part, where in enumerate(wheres, start=1)
    ]
    return Agreement(
        agreement.raters,
        confidence,
        agreement.by_field,
        agreement.pooled,
        _against_gold(dict(zip(labels, reports, strict=True)), z_for(confidence)),
    )


def _read_rater(
    table: RaterTable, part: int, where: str | StandardInput, progress: Progress | None
) -> None:
    def read() -> None:
        failure: ChartscoreError | None = None
        try:
            with collector_paused(), open_input(where, InputKind.RATERS) as stream:
                feed_rows(
                    stream,
                    InputKind.RATERS,
                    fast=fast_prediction,
                    checked=prediction_row,
                    add=table.adder(part - 1),
                    progress=progress,
                )
        except ChartscoreError as error:
            failure = error
        if failure is not None:  # a gold file or report given as a rater: the hint (no context)
            raise explained(failure, [(where, InputKind.RATERS)])

    _as_rater(part, (None, InputKind.RATERS), read)


def _scored(
    gold: InputPath,
    part: int,
    *,
    where: str | StandardInput,
    schema: Schema,
    confidence: float,
    extra_predictions: ExtraPredictions,
    progress: Progress | None,
) -> Report:
    return _as_rater(
        part,
        (InputKind.PREDICTIONS,),
        lambda: score_files(
            gold,
            where,
            schema=schema,
            confidence=confidence,
            extra_predictions=extra_predictions,
            progress=progress,
        ),
    )


def _as_rater(part: int, own: tuple[InputKind | None, ...], call: Callable[[], _T]) -> _T:
    """``call()``; an error it raises about the rater's own file is renamed as rater ``part``'s.

    Reading a rater's file and scoring it against gold fail alike: an error located
    in that file (its input one of ``own``) is named by the file's place among the
    raters, any other passes unchanged. Raised outside the handler: no context.
    """
    return as_part(part, own, InputKind.RATERS, call)


def _against_gold(reports: dict[str, Report], z: float) -> GoldAgreement:
    def results(metrics: object) -> dict[str, CountResult]:
        found: dict[str, CountResult] = {}
        for metric in GOLD_METRICS:
            result = metrics[metric]  # type: ignore[index]
            found[metric] = count_result(result.success_count, result.total_count, z)
        return found

    fields = sorted({field_id for report in reports.values() for field_id in report.by_field})
    by_field = {
        field_id: {
            name: results(report.by_field[field_id].metrics)
            for name, report in sorted(reports.items())
        }
        for field_id in fields
    }
    overall = {name: results(report.overall.metrics) for name, report in sorted(reports.items())}
    return GoldAgreement(overall, by_field)
