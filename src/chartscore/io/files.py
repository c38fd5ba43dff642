"""Scoring from files: stream gold then predictions through the scorer.

Paths are used to open files and never appear in an error: a failure names
only the input (gold, predictions, schema, output) and the line.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import tomllib
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO, Final, TypeVar

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.fastpath import fast_gold, fast_prediction
from chartscore.io.jsonl import decode_document, iter_batches, parse_object
from chartscore.io.parallel import PredictionReader
from chartscore.io.records import gold_row, prediction_row
from chartscore.report import Report
from chartscore.schema import Schema
from chartscore.scoring import Scorer, collector_paused

MAX_SCHEMA_BYTES: Final = 16 << 20
"""The largest accepted schema file, 16 MiB."""

PathLike = str | os.PathLike[str]
Progress = Callable[[InputKind, int], None]


def _open(path: PathLike, source: InputKind) -> BinaryIO:
    stream: BinaryIO | None = None
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed by the caller's with-block
    except (OSError, ValueError, TypeError):
        stream = None
    if stream is None:
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    return stream


def _relocated(error: ChartscoreError, source: InputKind, line: int) -> ChartscoreError:
    # Attach the line to an error raised for the row being read.
    if error.line is not None or error.input not in (None, source):
        return ChartscoreError(
            error.code, input=error.input, line=error.line, field_id=error.field_id
        )
    return ChartscoreError(error.code, input=source, line=line, field_id=error.field_id)


Row = TypeVar("Row")


def _feed(  # noqa: PLR0917 - one private caller pair
    stream: BinaryIO,
    source: InputKind,
    fast: Callable[[str], Row | None],
    checked: Callable[[dict[str, object]], Row],
    add: Callable[..., None],
    progress: Progress | None,
) -> int:
    # Each line takes the fast route, or the strict one that names any error.
    tick = None if progress is None else (lambda line: progress(source, line))
    first = offset = rows = 0
    failure: ChartscoreError | None = None
    try:
        for first, lines in iter_batches(stream, source, tick):
            for offset, text in enumerate(lines):
                row = fast(text)
                if row is None:
                    parsed = parse_object(text, source, first + offset)
                    if parsed is None:
                        continue  # a blank line
                    row = checked(parsed)
                add(*row)  # type: ignore[misc]
                rows += 1
    except ChartscoreError as error:
        failure = error
    if failure is not None:
        # Raised here, outside the except block, so no context survives.
        raise _relocated(failure, source, first + offset)
    return rows


def feed_gold(scorer: Scorer, stream: BinaryIO, progress: Progress | None = None) -> int:
    """Add every gold row of a JSON Lines stream to ``scorer``; returns rows read."""
    return _feed(stream, InputKind.GOLD, fast_gold, gold_row, scorer.add_gold, progress)


def feed_predictions(scorer: Scorer, stream: BinaryIO, progress: Progress | None = None) -> int:
    """Join and count every prediction of a JSON Lines stream; returns rows read."""
    return _feed(
        stream,
        InputKind.PREDICTIONS,
        fast_prediction,
        prediction_row,
        scorer.add_prediction,
        progress,
    )


def score_files(
    gold: PathLike,
    predictions: PathLike,
    *,
    schema: Schema | PathLike | None = None,
    progress: Progress | None = None,
    parallel: bool = False,
) -> Report:
    """Score a predictions JSON Lines file against a gold JSON Lines file.

    Streams both files: memory holds the gold set, not the predictions.
    See docs/formats.md for the line formats.

    Args:
        gold: Path of the gold file (at least one record).
        predictions: Path of the predictions file (may be empty).
        schema: A :class:`Schema`, or the path of a JSON or TOML schema file.
        progress: Optional callback ``(input, lines_read)``; receives counts only.
        parallel: Read the predictions in a second process while gold loads
            (see :mod:`chartscore.io.parallel`); same report, less time on two
            or more cores. It forks on Linux, so avoid it in threaded programs.

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input and line, never by path or content.
    """
    if schema is not None and not isinstance(schema, Schema):
        schema = load_schema(schema)
    scorer = Scorer(schema)
    reader = PredictionReader(os.fspath(predictions)) if parallel else None
    try:
        with collector_paused():
            with _open(gold, InputKind.GOLD) as stream:
                feed_gold(scorer, stream, progress)
            scorer.close_gold()
            if reader is None:
                with _open(predictions, InputKind.PREDICTIONS) as stream:
                    feed_predictions(scorer, stream, progress)
            else:
                _add_read_predictions(scorer, reader, progress)
            tally = scorer.tally()
    finally:
        if reader is not None:
            reader.stop()
    return Report.from_tally(tally)


def _add_read_predictions(
    scorer: Scorer, reader: PredictionReader, progress: Progress | None
) -> None:
    # The reader's own errors arrive located; join errors get the row's line here.
    source = InputKind.PREDICTIONS
    tick = None if progress is None else (lambda line: progress(source, line))
    add = scorer.add_prediction
    for numbers, rows in reader.batches(tick):
        line = 0
        failure: ChartscoreError | None = None
        try:
            for line, row in zip(numbers, rows, strict=True):  # noqa: B007 - read below
                add(*row)
        except ChartscoreError as error:
            failure = error
        if failure is not None:
            raise _relocated(failure, source, line)


def load_schema(path: PathLike) -> Schema:
    """Read a field schema from a JSON file, or a TOML file if the name ends in ``.toml``.

    Raises:
        ChartscoreError: ``file_unreadable``, ``not_utf8``, ``invalid_json``
            (also for invalid TOML), ``duplicate_key``, ``nonfinite_number``,
            ``number_out_of_range`` or a schema code.
    """
    source = InputKind.SCHEMA
    with _open(path, source) as stream:
        data = b""
        failed = False
        try:
            data = stream.read(MAX_SCHEMA_BYTES + 1)
        except OSError:
            failed = True
    if failed:
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    if len(data) > MAX_SCHEMA_BYTES:
        raise ChartscoreError(ErrorCode.LINE_TOO_LONG, input=source)
    text = ""
    code: ErrorCode | None = None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        code = ErrorCode.NOT_UTF8
    if code is not None:
        raise ChartscoreError(code, input=source)
    if not Path(path).name.endswith(".toml"):
        return Schema.from_dict(decode_document(text, source))
    document: object = None
    try:
        document = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError:
        code = ErrorCode.INVALID_JSON
    if code is not None:
        raise ChartscoreError(code, input=source)
    return Schema.from_dict(document)


def write_atomic(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` all at once: a reader sees the old file or the new one.

    Writes a temporary file beside the target, flushes it to disk and renames it
    over the target; on any failure the temporary file is removed.

    Raises:
        ChartscoreError: ``output_unwritable``.
    """
    target = Path(path)
    temporary: str | None = None
    failed = False
    try:
        handle, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=".chartscore-", suffix=".tmp"
        )
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
        temporary = None
    except (OSError, ValueError, TypeError):
        failed = True
    finally:
        if temporary is not None:
            _remove_quietly(temporary)
    if failed:
        raise ChartscoreError(ErrorCode.OUTPUT_UNWRITABLE, input=InputKind.OUTPUT)


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
