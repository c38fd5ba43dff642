"""Scoring from files: stream gold then predictions through the scorer.

Paths are used to open files and never appear in an error: a failure names
only the input (gold, predictions, schema, output) and the line. Inputs are
opened by :mod:`chartscore.io.inputs` (regular files, gzip, standard input),
schema files are read by :mod:`chartscore.io.schema_file`, and outputs are
written by :mod:`chartscore.io.output`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from chartscore import _document
from chartscore.comparison import Comparison, PairedTally
from chartscore.documents import Document, load_document
from chartscore.errors import (
    ChartscoreError,
    ErrorCode,
    ErrorHint,
    InputKind,
    callback_option,
    flag_option,
    with_hint,
)
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
from chartscore.io.jsonl import ByteReader, iter_batches, iter_objects
from chartscore.io.output import write_atomic
from chartscore.io.parallel import PredictionReader
from chartscore.io.records import gold_row, prediction_row
from chartscore.io.schema_file import MAX_SCHEMA_BYTES, load_schema
from chartscore.pairing import PairedScorer
from chartscore.report import Report
from chartscore.schema import Schema
from chartscore.scoring import (
    ExtraPredictions,
    Scorer,
    check_options,
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
            ``internal_error`` if the reader process dies; ``usage`` for an
            option that is not exactly one of its documented values
            (``progress`` None or callable, ``parallel`` and ``strict_schema``
            a ``bool``, ``extra_predictions`` a ``str``).
    """
    check_file_options(progress, parallel, extra_predictions, strict_schema)
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
        raise explained(failure, [(predictions_where, InputKind.PREDICTIONS)])


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
        add_rows(scorer.add_prediction, numbers, rows, source)


def compare_files(
    gold: InputPath,
    baseline: InputPath,
    candidate: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
    extra_predictions: ExtraPredictions = "error",
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

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input (``gold``, ``baseline``, ``candidate``) and line; ``usage``
            for a ``progress`` that is not None or callable.
    """
    callback_option(progress)
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
    scorer = PairedScorer(resolve_schema(schema), extra_predictions=extra_predictions)
    failure: ChartscoreError | None = None
    try:
        tally = _compare_streams(scorer, wheres, progress)
    except ChartscoreError as error:
        failure = error
    if failure is not None:  # raised outside the handler: no context
        others = [(wheres[1], InputKind.BASELINE), (wheres[2], InputKind.CANDIDATE)]
        raise explained(failure, others)
    return Comparison.from_tally(tally)


def _compare_streams(
    scorer: PairedScorer, wheres: list[str | StandardInput], progress: Progress | None
) -> PairedTally:
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
        return scorer.paired_tally()


_JSON_LINES_CODES: Final = frozenset({ErrorCode.INVALID_JSON, ErrorCode.NOT_AN_OBJECT})
_LINE_INPUTS: Final = frozenset(
    {InputKind.GOLD, InputKind.PREDICTIONS, InputKind.BASELINE, InputKind.CANDIDATE}
)


def explained(
    error: ChartscoreError, predictions: Sequence[tuple[str | StandardInput, InputKind]]
) -> ChartscoreError:
    """``error`` with a hint when the shape of the failure tells the likely cause.

    Decided from the code, the input and the line, and (for a swap) whether the
    first record of a predictions file has a ``field_type``: never shown, so
    nothing of the data reaches the message.

    - An ``invalid_json`` or ``not_an_object`` on line 1 of a JSON Lines input:
      a CSV file or a JSON array (``json_lines_expected``).
    - Gold's first record lacks ``field_type`` while a predictions file's has
      one: the two files given the wrong way round (``inputs_swapped``).
    """
    if error.hint is not None or error.line != 1 or error.input not in _LINE_INPUTS:
        return error
    if error.code in _JSON_LINES_CODES:
        return with_hint(error, ErrorHint.JSON_LINES_EXPECTED)
    swapped = (
        error.input is InputKind.GOLD
        and error.code is ErrorCode.MISSING_KEY
        and error.key == "field_type"
        and any(_first_record_has_field_type(where, kind) for where, kind in predictions)
    )
    return with_hint(error, ErrorHint.INPUTS_SWAPPED) if swapped else error


def _first_record_has_field_type(where: str | StandardInput, kind: InputKind) -> bool:
    """Whether a file's first record has gold's ``field_type`` key (standard input is not read)."""
    if isinstance(where, StandardInput):
        return False
    found = False
    try:
        with open_input(where, kind) as stream:
            for _, record in iter_objects(stream, kind):
                found = "field_type" in record
                break
    except ChartscoreError:
        found = False  # unreadable or not JSON Lines: no hint
    return found


def load_gates(path: InputPath) -> tuple[Gate, ...]:
    """Read and check a gates file (TOML, UTF-8, at most 1 MiB); see docs/formats.md.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` or ``not_utf8`` (gates), or any code of
            :func:`chartscore.gates.parse_gates`. Never names the path.
    """
    return parse_gates_bytes(read_whole(path, InputKind.GATES, MAX_GATES_BYTES))


def read_document_bytes(path: InputPath) -> bytes:
    """A saved document's bytes (at most 16 MiB), for a reader that checks its shape.

    Read like every input (a path or standard input, regular files only, gzip
    decompressed), in chunks that a :class:`~chartscore._document.DocumentScanner`
    checks as they come: reading stops at the first chunk that is not UTF-8,
    does not open an object, nests too deep or passes the size limit, so a
    gzip bomb costs little more than that chunk.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (report) or ``invalid_report``. Never names the path.
    """
    where = input_path(path, InputKind.REPORT)
    scanner = _document.DocumentScanner()
    chunks: list[bytes] = []
    failed = False
    with open_input(where, InputKind.REPORT) as stream:
        while True:
            try:
                chunk = stream.read(_document.SCAN_CHUNK_BYTES)
            except OSError:
                failed = True
                break
            if not chunk:
                break
            scanner.feed(chunk)  # raises as soon as the bytes cannot be a document
            chunks.append(chunk)
    if failed:  # raised outside the handler: no chained reader message
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=InputKind.REPORT)
    scanner.finish()
    return b"".join(chunks)


def load_document_file(path: InputPath) -> Document:
    """Read a saved document (at most 16 MiB); see :mod:`chartscore.documents`.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (report), ``unknown_report_format`` or
            ``invalid_report``. Never names the path.
    """
    return load_document(read_document_bytes(path))
