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
from typing import Any, BinaryIO, Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.fastpath import check_batch, fast_gold, fast_prediction, located
from chartscore.io.jsonl import decode_document, iter_batches
from chartscore.io.parallel import PredictionReader
from chartscore.io.records import gold_row, prediction_row
from chartscore.report import Report
from chartscore.schema import Schema
from chartscore.scoring import (
    ExtraPredictions,
    Scorer,
    collector_paused,
    refuse_unused_schema_fields,
)

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
    stream: BinaryIO,
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


def feed_gold(scorer: Scorer, stream: BinaryIO, progress: Progress | None = None) -> None:
    """Add every gold row of a JSON Lines stream to ``scorer``."""
    _feed(
        stream,
        InputKind.GOLD,
        fast=fast_gold,
        checked=gold_row,
        add=scorer.add_gold,
        progress=progress,
    )


def feed_predictions(scorer: Scorer, stream: BinaryIO, progress: Progress | None = None) -> None:
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
    gold: PathLike,
    predictions: PathLike,
    *,
    schema: Schema | PathLike | None = None,
    progress: Progress | None = None,
    parallel: bool = False,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
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
        extra_predictions: ``"error"`` or ``"ignore"``, as for :func:`chartscore.score`.
        strict_schema: Refuse schema field ids no gold row uses, as for
            :func:`chartscore.score`.

    Raises:
        ChartscoreError: any reading, record, join or schema code, located by
            input and line, never by path or content.
    """
    if schema is not None and not isinstance(schema, Schema):
        schema = load_schema(schema)
    scorer = Scorer(schema, extra_predictions=extra_predictions)
    reader = PredictionReader(predictions) if parallel else None
    try:
        with collector_paused():
            with _open(gold, InputKind.GOLD) as stream:
                feed_gold(scorer, stream, progress)
            scorer.close_gold()
            if strict_schema:
                refuse_unused_schema_fields(scorer)
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
    source = InputKind.PREDICTIONS
    tick = None if progress is None else (lambda line: progress(source, line))
    for numbers, rows in reader.batches(tick):
        add_rows(scorer.add_prediction, numbers, rows, source)


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
