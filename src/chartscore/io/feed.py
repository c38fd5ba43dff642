"""Adding checked rows to a scorer, batch by batch: the one loop that gives an add error its line.

The adder is any callable (a scorer's ``add_gold``, ``add_row``, ``add_baseline``...), so
reading never imports scoring. A prediction row (a
:class:`~chartscore.records.prediction_row.PredictionRow`) is passed whole (``whole=True``);
a gold row's four fields are passed as ``add_gold``'s arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chartscore.errors import ChartscoreError, InputKind
from chartscore.io.fastpath import check_batch, located
from chartscore.io.jsonl import ByteReader, iter_batches

Progress = Callable[[InputKind, int], None]
"""A progress callback ``(input, lines_read)``; it receives counts only."""


def first_add_failure(
    add: Callable[..., object], numbers: list[int], rows: list[Any], *, whole: bool = False
) -> tuple[ChartscoreError, int] | None:
    """Add checked rows in order (each ``whole``, or spread into arguments); the first error.

    Returns the first row's error with its line number, or None.
    """
    line = 0
    failure: ChartscoreError | None = None
    try:
        if whole:
            for line, row in zip(numbers, rows, strict=True):  # noqa: B007 - read below
                add(row)
        else:
            for line, row in zip(numbers, rows, strict=True):  # noqa: B007 - read below
                add(*row)
    except ChartscoreError as error:
        failure = error
    return None if failure is None else (failure, line)


def add_rows(
    add: Callable[..., object],
    numbers: list[int],
    rows: list[Any],
    source: InputKind,
    *,
    whole: bool = False,
) -> None:
    """Add checked rows (each ``whole``, or spread into arguments); a join error names its line."""
    found = first_add_failure(add, numbers, rows, whole=whole)
    if found is not None:
        raise located(found[0], source, found[1])  # a fresh error: no context


def feed_rows(
    stream: ByteReader,
    source: InputKind,
    *,
    fast: Callable[[str], Any],
    checked: Callable[[dict[str, object]], Any],
    add: Callable[..., object],
    progress: Progress | None,
    whole: bool = False,
) -> None:
    """Read, check and add every row of a JSON Lines stream, in line order (see add_rows)."""
    tick = None if progress is None else (lambda line: progress(source, line))
    for first, lines in iter_batches(stream, source, tick):
        numbers, rows, failure = check_batch(first, lines, source, fast, checked)
        add_rows(add, numbers, rows, source, whole=whole)
        if failure is not None:
            raise failure
