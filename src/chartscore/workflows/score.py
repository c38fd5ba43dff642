"""Scoring from files: stream gold then predictions through the scorer.

Paths are used to open files and never appear in an error: a failure names
only the input (gold, predictions, schema, output) and the line. Inputs are
opened by :mod:`chartscore.io.inputs` (regular files, gzip, standard input),
schema files are read by :mod:`chartscore.io.schema_file`, rows are added by
:mod:`chartscore.io.feed`, and a failure's likely cause is named by
:mod:`chartscore.io.hints`.
"""

from __future__ import annotations

from chartscore.documents.report import Report
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, callback_option, flag_option
from chartscore.io.fastpath import fast_gold, fast_prediction
from chartscore.io.feed import Progress, add_rows, feed_rows
from chartscore.io.hints import explained
from chartscore.io.inputs import (
    InputPath,
    InputStream,
    StandardInput,
    input_path,
    open_input,
)
from chartscore.io.jsonl import ByteReader
from chartscore.io.parallel import PredictionReader
from chartscore.io.schema_file import load_schema
from chartscore.io.strata_file import load_strata
from chartscore.records.rows import gold_row, prediction_row
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import (
    ExtraPredictions,
    Scorer,
    check_options,
    collector_paused,
    refuse_unused_schema_fields,
)
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option

__all__ = [
    "Progress",
    "check_file_options",
    "feed_files",
    "feed_gold",
    "feed_predictions",
    "resolve_schema",
    "resolve_strata",
    "score_files",
]


def feed_gold(
    scorer: Scorer | PairedScorer, stream: ByteReader, progress: Progress | None = None
) -> None:
    """Add every gold row of a JSON Lines stream to ``scorer``."""
    feed_rows(
        stream,
        InputKind.GOLD,
        fast=fast_gold,
        checked=gold_row,
        add=scorer.add_gold,
        progress=progress,
    )


def feed_predictions(scorer: Scorer, stream: ByteReader, progress: Progress | None = None) -> None:
    """Join and count every prediction of a JSON Lines stream."""
    feed_rows(
        stream,
        InputKind.PREDICTIONS,
        fast=fast_prediction,
        checked=prediction_row,
        add=scorer.add_row,
        progress=progress,
        whole=True,
    )


def score_files(
    gold: InputPath,
    predictions: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
    parallel: bool = False,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | InputPath | None = None,
) -> Report:
    """Score a predictions JSON Lines file against a gold JSON Lines file.

    Streams both files: memory holds the gold set, not the predictions.
    See docs/formats.md for the line formats and the reading rules (gzip
    files, standard input, regular files only).

    Args:
        gold: Path of the gold file (at least one record), or
            :data:`chartscore.io.STDIN`.
        predictions: Path of the predictions file (may be empty), or
            :data:`chartscore.io.STDIN` (at most one input may be).
        schema: A :class:`Schema`, or the path of a JSON or TOML schema file.
        progress: Optional callback ``(input, lines_read)``; receives counts only.
        parallel: Read the predictions in a second process while gold loads
            (see :mod:`chartscore.io.parallel`); same report and errors, less
            time on two or more cores. It forks on POSIX systems, so avoid it in
            threaded programs; where it cannot start, one process does the work.
        extra_predictions: ``"error"`` or ``"ignore"``, as for :func:`chartscore.score`.
        strict_schema: Refuse schema field ids no gold row uses, as for
            :func:`chartscore.score`.
        confidence: The level of every interval, as for :func:`chartscore.score`.
        strata: A strata file's path (or its :class:`CaseStrata`): the report
            gains stratum slices (docs/reports.md, "Stratum slices"); the
            schema must declare the strata.

    Raises:
        ChartscoreError: any reading, record, join or schema code, a strata
            code (docs/errors.md, "Strata"), located by
            input and line, never by path or content; ``invalid_path`` for a
            path that is not a ``str`` or ``os.PathLike`` (or whose
            ``__fspath__`` fails), or :data:`~chartscore.io.STDIN` given twice;
            ``internal_error`` if the reader process dies; ``usage`` for an
            option that is not exactly one of its documented values
            (``progress`` None or callable, ``parallel`` and ``strict_schema``
            a ``bool``, ``extra_predictions`` a ``str``, ``confidence`` one of
            the three levels).
    """
    check_file_options(progress, parallel, extra_predictions, strict_schema)
    confidence_option(confidence)
    resolved = resolve_schema(schema)
    scorer = Scorer(
        resolved, extra_predictions=extra_predictions, strata=resolve_strata(strata, resolved)
    )
    feed_files(
        scorer,
        gold,
        predictions,
        progress=progress,
        parallel=parallel,
        strict_schema=strict_schema,
    )
    return Report.from_tally(scorer.tally(), confidence)


def check_file_options(
    progress: object, parallel: object, extra_predictions: object, strict_schema: object
) -> None:
    """Refuse, with ``usage``, file-scoring options that are not exactly their documented values.

    ``progress`` None or callable, ``parallel`` a ``bool``, and the options of
    :func:`chartscore.score`; checked by exact type before any file is opened.
    """
    callback_option(progress)
    flag_option(parallel)
    check_options(extra_predictions, strict_schema)


def resolve_schema(schema: Schema | InputPath | None) -> Schema | None:
    """A :class:`Schema` as given, or loaded from its path (None stays None)."""
    if schema is not None and not _is_schema(schema):
        return load_schema(schema)  # type: ignore[arg-type]
    return schema  # type: ignore[return-value]


def resolve_strata(
    strata: CaseStrata | InputPath | None, schema: Schema | None
) -> CaseStrata | None:
    """A :class:`CaseStrata` as given, or read from its path against ``schema``."""
    if strata is None or type(strata) is CaseStrata:
        return strata
    return load_strata(strata, schema)  # type: ignore[arg-type]


def feed_files(
    scorer: Scorer,
    gold: InputPath,
    predictions: InputPath,
    *,
    progress: Progress | None = None,
    parallel: bool = False,
    strict_schema: bool = False,
) -> None:
    """Feed a gold file then a predictions file to ``scorer`` (see :func:`score_files`).

    Raises:
        ChartscoreError: as :func:`score_files`.
    """
    callback_option(progress)
    parallel = flag_option(parallel)
    strict_schema = flag_option(strict_schema)
    gold_where = input_path(gold, InputKind.GOLD)
    predictions_where = input_path(predictions, InputKind.PREDICTIONS)
    if isinstance(gold_where, StandardInput) and isinstance(predictions_where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.PREDICTIONS)
    failure: ChartscoreError | None = None
    try:
        _feed_both(
            scorer,
            gold_where,
            predictions_where,
            progress=progress,
            parallel=parallel,
            strict_schema=strict_schema,
        )
    except ChartscoreError as error:
        failure = error
    if failure is not None:  # raised outside the handler: no context
        inputs = [(gold_where, InputKind.GOLD), (predictions_where, InputKind.PREDICTIONS)]
        raise explained(failure, inputs)


def _feed_both(
    scorer: Scorer,
    gold_where: str | StandardInput,
    predictions_where: str | StandardInput,
    *,
    progress: Progress | None,
    parallel: bool,
    strict_schema: bool,
) -> None:
    reader: PredictionReader | None = None
    opened: InputStream | None = None
    deferred: ChartscoreError | None = None
    try:
        if parallel:
            opened, deferred = _try_open(predictions_where, InputKind.PREDICTIONS)
            if opened is not None:
                reader = PredictionReader.start(opened)
                if reader is not None:
                    opened.close()  # the reader has its own copy
                    opened = None
        with collector_paused():
            with open_input(gold_where, InputKind.GOLD) as stream:
                feed_gold(scorer, stream, progress)
            scorer.close_gold()
            if strict_schema:
                refuse_unused_schema_fields(scorer)
            if reader is not None:
                _add_read_predictions(scorer, reader, progress)
            else:
                if deferred is not None:
                    raise deferred
                if opened is None:
                    opened = open_input(predictions_where, InputKind.PREDICTIONS)
                with opened:
                    feed_predictions(scorer, opened, progress)
    finally:
        if reader is not None:
            reader.stop()
        if opened is not None:
            opened.close()


def _is_schema(schema: object) -> bool:
    # type() rather than isinstance(): a proxy's __class__ is the caller's code.
    return type(schema) is Schema


def _try_open(
    where: str | StandardInput, source: InputKind
) -> tuple[InputStream | None, ChartscoreError | None]:
    """Open an input now, or keep its error to raise later, in the one-process order."""
    code = ErrorCode.FILE_UNREADABLE
    try:
        return open_input(where, source), None
    except ChartscoreError as error:
        code = error.code
    return None, ChartscoreError(code, input=source)  # a fresh error, made outside the handler


def _add_read_predictions(
    scorer: Scorer, reader: PredictionReader, progress: Progress | None
) -> None:
    source = InputKind.PREDICTIONS
    tick = None if progress is None else (lambda line: progress(source, line))
    for numbers, rows in reader.batches(tick):
        add_rows(scorer.add_row, numbers, rows, source, whole=True)
