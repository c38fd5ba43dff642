"""Comparing two systems from files: gold once, then the baseline's and the candidate's rows."""

from __future__ import annotations

from chartscore.documents.comparison import Comparison
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, callback_option
from chartscore.io.fastpath import fast_prediction
from chartscore.io.feed import Progress, feed_rows
from chartscore.io.hints import explained
from chartscore.io.inputs import InputPath, StandardInput, input_path, open_input
from chartscore.records.rows import prediction_row
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import ExtraPredictions, collector_paused
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.score import feed_gold, resolve_schema, resolve_strata

__all__ = ["compare_files", "paired_scorer"]


def compare_files(
    gold: InputPath,
    baseline: InputPath,
    candidate: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
    extra_predictions: ExtraPredictions = "error",
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | InputPath | None = None,
) -> Comparison:
    """Compare two systems' predictions files on one gold file, paired row by row.

    Reads gold once, then streams the baseline's predictions, then the
    candidate's (see :func:`chartscore.compare` for what is computed). Memory
    holds the gold set and one outcome per row the baseline answered.

    Args:
        gold: Path of the gold file, or :data:`chartscore.io.STDIN`.
        baseline: Path of the reference system's predictions file.
        candidate: Path of the system under test's predictions file (at most
            one of the three inputs may be standard input).
        schema: A :class:`Schema`, or the path of a JSON or TOML schema file.
        progress: Optional callback ``(input, lines_read)``; receives counts only.
        extra_predictions: ``"error"`` or ``"ignore"``, as for
            :func:`chartscore.compare` (each system's skipped predictions are
            counted apart).
        confidence: The level of every interval: 0.9, 0.95 (default) or 0.99.
        strata: A strata file (or its :class:`CaseStrata`), as for
            :func:`chartscore.score_files`: the comparison gains each stratum's
            pooled paired slice (``by_stratum``).

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input (``gold``, ``baseline``, ``candidate``) and line; ``usage``
            for a ``progress`` that is not None or callable, or a
            ``confidence`` that is not one of the three levels.
    """
    confidence_option(confidence)
    scorer = paired_scorer(
        gold,
        baseline,
        candidate,
        schema=schema,
        progress=progress,
        extra_predictions=extra_predictions,
        strata=strata,
    )
    return Comparison.from_tally(scorer.paired_tally(), confidence)


def paired_scorer(
    gold: InputPath,
    baseline: InputPath,
    candidate: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
    extra_predictions: ExtraPredictions = "error",
    strata: CaseStrata | InputPath | None = None,
) -> PairedScorer:
    """The paired scorer after reading all three files (as :func:`compare_files`).

    It holds values and case ids: for callers inside the boundary (sharing a
    comparison counts distinct cases from it).

    Raises:
        ChartscoreError: as :func:`compare_files`.
    """
    callback_option(progress)
    wheres = _paired_inputs(gold, baseline, candidate)
    resolved = resolve_schema(schema)
    scorer = PairedScorer(
        resolved, extra_predictions=extra_predictions, strata=resolve_strata(strata, resolved)
    )
    _feed_paired(scorer, wheres, progress)
    return scorer


def _paired_inputs(
    gold: InputPath, baseline: InputPath, candidate: InputPath
) -> list[str | StandardInput]:
    # The three files' paths; standard input may stand for one of them at most.
    wheres = [
        input_path(path, kind)
        for path, kind in (
            (gold, InputKind.GOLD),
            (baseline, InputKind.BASELINE),
            (candidate, InputKind.CANDIDATE),
        )
    ]
    if sum(isinstance(where, StandardInput) for where in wheres) > 1:
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.CANDIDATE)
    return wheres


def feed_paired(
    scorer: PairedScorer, gold: InputPath, baseline: InputPath, candidate: InputPath
) -> None:
    """Read the three files into a paired scorer made by the caller (as :func:`paired_scorer`).

    Raises:
        ChartscoreError: as :func:`compare_files`.
    """
    wheres = _paired_inputs(gold, baseline, candidate)
    _feed_paired(scorer, wheres, None)


def _feed_paired(
    scorer: PairedScorer, wheres: list[str | StandardInput], progress: Progress | None
) -> None:
    failure: ChartscoreError | None = None
    try:
        _compare_streams(scorer, wheres, progress)
    except ChartscoreError as error:
        failure = error
    if failure is not None:  # raised outside the handler: no context
        kinds = (InputKind.GOLD, InputKind.BASELINE, InputKind.CANDIDATE)
        raise explained(failure, list(zip(wheres, kinds, strict=True)))


def _compare_streams(
    scorer: PairedScorer, wheres: list[str | StandardInput], progress: Progress | None
) -> None:
    with collector_paused():
        with open_input(wheres[0], InputKind.GOLD) as stream:
            feed_gold(scorer, stream, progress)
        scorer.close_gold()
        for where, kind, add in (
            (wheres[1], InputKind.BASELINE, scorer.add_baseline),
            (wheres[2], InputKind.CANDIDATE, scorer.add_candidate),
        ):
            with open_input(where, kind) as stream:
                feed_rows(
                    stream,
                    kind,
                    fast=fast_prediction,
                    checked=prediction_row,
                    add=add,
                    progress=progress,
                    whole=True,
                )
