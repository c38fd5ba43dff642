"""Scoring from files: stream gold then predictions through the scorer.

Paths are used to open files and never appear in an error: a failure names
only the input (gold, predictions, schema, output) and the line. Inputs are
opened by :mod:`chartscore.io.inputs` (regular files, gzip, standard input),
schema files are read by :mod:`chartscore.io.schema_file`, and outputs are
written by :mod:`chartscore.io.output`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chartscore.comparison import Comparison
from chartscore.documents import MAX_DOCUMENT_BYTES, Document, load_document
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.gates import MAX_GATES_BYTES, Gate, parse_gates_bytes
from chartscore.io.fastpath import check_batch, fast_gold, fast_prediction, located
from chartscore.io.inputs import (
    InputPath,
    InputStream,
    StandardInput,
    input_path,
    open_input,
    read_whole,
)
from chartscore.io.jsonl import ByteReader, iter_batches
from chartscore.io.output import write_atomic
from chartscore.io.parallel import PredictionReader
from chartscore.io.schema_file import MAX_SCHEMA_BYTES, load_schema
from chartscore.records.rows import gold_row, prediction_row
from chartscore.records.schema import Schema
from chartscore.report import Report
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import (
    ExtraPredictions,
    Scorer,
    collector_paused,
    refuse_unused_schema_fields,
)

__all__ = [
    "MAX_SCHEMA_BYTES",
    "add_rows",
    "compare_files",
    "feed_gold",
    "feed_predictions",
    "load_document_file",
    "load_gates",
    "load_schema",
    "score_files",
    "write_atomic",
]

PathLike = InputPath
Progress = Callable[[InputKind, int], None]


def add_rows(
    add: Callable[..., object], numbers: list[int], rows: list[Any], source: InputKind
) -> None:
    """Add checked rows to the scorer; a join error names its row's line."""
    line = 0
    failure: ChartscoreError | None = None
    try:
        for line, row in zip(numbers, rows, strict=True):  # noqa: B007 - read below
            add(*row)
    except ChartscoreError as error:
        failure = error
    if failure is not None:
        raise located(failure, source, line)  # outside the handler: no context


def _feed(
    stream: ByteReader,
    source: InputKind,
    *,
    fast: Callable[[str], Any],
    checked: Callable[[dict[str, object]], Any],
    add: Callable[..., object],
    progress: Progress | None,
) -> None:
    tick = None if progress is None else (lambda line: progress(source, line))
    for first, lines in iter_batches(stream, source, tick):
        numbers, rows, failure = check_batch(first, lines, source, fast, checked)
        add_rows(add, numbers, rows, source)
        if failure is not None:
            raise failure


def feed_gold(scorer: Scorer, stream: ByteReader, progress: Progress | None = None) -> None:
    """Add every gold row of a JSON Lines stream to ``scorer``."""
    _feed(
        stream,
        InputKind.GOLD,
        fast=fast_gold,
        checked=gold_row,
        add=scorer.add_gold,
        progress=progress,
    )


def feed_predictions(scorer: Scorer, stream: ByteReader, progress: Progress | None = None) -> None:
    """Join and count every prediction of a JSON Lines stream."""
    _feed(
        stream,
        InputKind.PREDICTIONS,
        fast=fast_prediction,
        checked=prediction_row,
        add=scorer.add_prediction,
        progress=progress,
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

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input and line, never by path or content; ``invalid_path`` for a
            path that is not a ``str`` or ``os.PathLike`` (or whose
            ``__fspath__`` fails), or :data:`~chartscore.io.STDIN` given twice;
            ``internal_error`` if the reader process dies.
    """
    scorer = Scorer(resolve_schema(schema), extra_predictions=extra_predictions)
    feed_files(
        scorer,
        gold,
        predictions,
        progress=progress,
        parallel=parallel,
        strict_schema=strict_schema,
    )
    return Report.from_tally(scorer.tally())


def resolve_schema(schema: Schema | InputPath | None) -> Schema | None:
    """A :class:`Schema` as given, or loaded from its path (None stays None)."""
    if schema is not None and not _is_schema(schema):
        return load_schema(schema)  # type: ignore[arg-type]
    return schema  # type: ignore[return-value]


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
    gold_where = input_path(gold, InputKind.GOLD)
    predictions_where = input_path(predictions, InputKind.PREDICTIONS)
    if isinstance(gold_where, StandardInput) and isinstance(predictions_where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.PREDICTIONS)
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
        add_rows(scorer.add_prediction, numbers, rows, source)


def compare_files(
    gold: InputPath,
    baseline: InputPath,
    candidate: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
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

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input (``gold``, ``baseline``, ``candidate``) and line.
    """
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
    scorer = PairedScorer(resolve_schema(schema))
    with collector_paused():
        with open_input(wheres[0], InputKind.GOLD) as stream:
            feed_gold(scorer, stream, progress)
        scorer.close_gold()
        for where, kind, add in (
            (wheres[1], InputKind.BASELINE, scorer.add_baseline),
            (wheres[2], InputKind.CANDIDATE, scorer.add_candidate),
        ):
            with open_input(where, kind) as stream:
                _feed(
                    stream,
                    kind,
                    fast=fast_prediction,
                    checked=prediction_row,
                    add=add,
                    progress=progress,
                )
        tally = scorer.paired_tally()
    return Comparison.from_tally(tally)


def load_gates(path: InputPath) -> tuple[Gate, ...]:
    """Read and check a gates file (TOML, UTF-8, at most 1 MiB); see docs/formats.md.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` or ``not_utf8`` (gates), or any code of
            :func:`chartscore.gates.parse_gates`. Never names the path.
    """
    return parse_gates_bytes(read_whole(path, InputKind.GATES, MAX_GATES_BYTES))


def read_document_bytes(path: InputPath) -> bytes:
    """A saved document's bytes (at most 256 MiB), for a reader that checks its shape.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable`` or
            ``file_too_large`` (report). Never names the path.
    """
    return read_whole(path, InputKind.REPORT, MAX_DOCUMENT_BYTES)


def load_document_file(path: InputPath) -> Document:
    """Read a saved report or comparison (at most 256 MiB); see :mod:`chartscore.documents`.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (report), ``unknown_report_format`` or
            ``invalid_report``. Never names the path.
    """
    return load_document(read_document_bytes(path))
