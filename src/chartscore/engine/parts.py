"""Part files: find them, read and check one, and split its rows by key.

The first stage of the Dask engine, written without Dask so that it can be
read, tested and reasoned about on its own. One task reads one part file with
chartscore's own block reader and row checks (the same rules and codes as
``chartscore score``), and splits the checked rows into one *bucket* per
partition by a stable hash of the case id: every row of a case, gold and
prediction, lands in the same partition, on every worker and under every
``PYTHONHASHSEED``. (By case, not by key: the pooled slices' clustered
intervals need each case's rows together, and their per-case sums then add
across partitions.)

A bucket is a list of pickled *chunks*, each ``(line numbers, rows)`` in line
order. Rows are pickled as soon as a chunk fills, so a task holds its part's
checked rows in a compact form (tens of bytes a row) rather than as millions
of small Python objects. Buckets hold case ids and values: they are private
and travel only between the workers of the run.

Nothing here raises: a failure is returned as a :class:`Failure`, a value
made of a code and numbers, so no exception (which distributed would log,
pickle and print) ever carries data out of a task.
"""

from __future__ import annotations

import glob
import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.fastpath import check_batch, fast_gold, fast_prediction
from chartscore.io.inputs import InputStream, StandardInput, input_path, open_input
from chartscore.io.jsonl import iter_batches
from chartscore.records.rows import gold_row, prediction_row
from chartscore.scoring.scorer import collector_paused
from chartscore.stats.run_cost import RunHeader

CHUNK_ROWS: Final = 4096
"""Rows a bucket buffers before they are pickled into one chunk."""

PathSpec = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
Bucket = list[bytes]


class Stage:
    """Where a failure sits in the order one process would meet it.

    One process reads all gold, checks that gold is not empty and (with a
    strict schema) that every schema field is used, then reads predictions.
    An internal error comes first: a bug must never hide behind a data error.
    """

    INTERNAL: Final = -1
    GOLD: Final = 0
    EMPTY_GOLD: Final = 1
    UNUSED_SCHEMA: Final = 2
    PREDICTIONS: Final = 3
    MERGE: Final = 4


_STAGES: Final = {InputKind.GOLD: Stage.GOLD, InputKind.PREDICTIONS: Stage.PREDICTIONS}


class Failure(NamedTuple):
    """A coded failure, and where one process reading the parts in order would meet it.

    ``order`` is ``(stage, part, line, tie)``: the smallest failure over all
    tasks is the one reported. ``tie`` is 0 for the engine's global check of
    field types and 1 for everything else, so that at the same line the global
    check (which sees every partition) wins. The other fields are what the
    :class:`ChartscoreError` shows: codes, numbers, a format key and a hint (the error's own,
    closed vocabularies). Value-free.
    """

    order: tuple[int, int, int, int]
    code: str
    input: str | None
    part: int | None
    line: int | None
    field_id: str | None
    plugin: str | None = None
    key: str | None = None
    hint: str | None = None

    @classmethod
    def at(
        cls, error: ChartscoreError, source: InputKind, part: int, line: int | None, tie: int = 1
    ) -> Failure:
        """The failure ``error`` met at ``line`` of part ``part`` of ``source``.

        The message follows :func:`chartscore.io.fastpath.located`: an error
        that already names another input (a schema error) keeps its own
        place; otherwise it names this input, part and line.
        """
        order = (_STAGES[source], part, 0 if line is None else line, tie)
        named = (error.key, None if error.hint is None else error.hint.value)
        if error.input not in (None, source):
            return cls(
                order,
                error.code.value,
                error.input,
                None,
                error.line,
                error.field_id,
                error.plugin,
                *named,
            )
        shown_line = error.line if error.line is not None else line
        return cls(
            order,
            error.code.value,
            source.value,
            part,
            shown_line,
            error.field_id,
            error.plugin,
            *named,
        )

    @classmethod
    def internal(cls) -> Failure:
        """A bug in chartscore: reported before anything else, with no details."""
        return cls(
            (Stage.INTERNAL, 0, 0, 0), ErrorCode.INTERNAL_ERROR.value, None, None, None, None
        )

    def rank(self) -> tuple[tuple[int, int, int, int], str, str, int, int, str, str, str, str]:
        """The sort key: ``order`` first, then the shown fields (a total order)."""
        return (
            self.order,
            self.code,
            self.input or "",
            self.part or 0,
            self.line or 0,
            self.field_id or "",
            self.plugin or "",
            self.key or "",
            self.hint or "",
        )

    def error(self) -> ChartscoreError:
        """The :class:`ChartscoreError` to raise in the caller's process."""
        return ChartscoreError(
            ErrorCode(self.code),
            input=None if self.input is None else InputKind(self.input),
            line=self.line,
            field_id=self.field_id,
            part=self.part,
            plugin=self.plugin,
            key=self.key,
            hint=None if self.hint is None else ErrorHint(self.hint),
        )


class PartSummary(NamedTuple):
    """What one part contributes besides its rows (value-free).

    Attributes:
        rows: Checked rows read (before the failure, if any).
        first_lines: For gold, ``(field id, field type) -> first line`` in this
            part: the engine's global check of one type per field id uses it.
        failure: The reading or checking failure that stopped the part, or None.
    """

    rows: int
    first_lines: dict[tuple[str, str], int]
    failure: Failure | None


def part_paths(spec: PathSpec, source: InputKind) -> list[str]:
    """The part files named by a glob pattern or a list of paths, in sorted order.

    A string or path is a glob pattern (a plain path matches itself); a list
    (or tuple) names the files directly. The 1-based position in the sorted
    list is the part number that errors show. Each path is read as
    :func:`chartscore.io.inputs.input_path` reads one: a ``str`` subclass as
    its plain text, ``__fspath__`` inside a guard.

    Raises:
        ChartscoreError: ``no_part_files`` when nothing is named;
            ``invalid_path`` for a path that is not a ``str`` or
            ``os.PathLike`` (or standard input, which has no parts).
    """
    if type(spec) is list or type(spec) is tuple:
        paths = [_part_path(path, source) for path in spec]
    else:
        pattern = _part_path(spec, source)
        paths = glob.glob(pattern, recursive=True)
        if not paths and os.path.isfile(pattern):
            paths = [pattern]  # a file whose name contains glob characters
    if not paths:
        raise ChartscoreError(ErrorCode.NO_PART_FILES, input=source)
    return sorted(paths)


def _part_path(path: object, source: InputKind) -> str:
    where = input_path(path, source)
    if type(where) is StandardInput:
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=source)
    return where  # type: ignore[return-value]


def stable_hash(text: str) -> int:
    """A 64-bit hash of ``text``: BLAKE2b of its UTF-8 bytes, little-endian.

    The same on every machine, process and ``PYTHONHASHSEED`` (unlike ``hash``).
    Lone surrogates, which JSON can encode, are kept (``surrogatepass``).
    """
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def partition_of(case_id: str, field_id: str, partitions: int) -> int:
    """The partition of the key ``(case_id, field_id)``, in ``range(partitions)``.

    ``stable_hash(case_id) mod partitions``: a function of the case alone, so
    a key's gold row and prediction always meet, and so do all rows of a case
    (``field_id`` takes no part; it is an argument so that callers name the key).
    """
    return stable_hash(case_id) % partitions


class _Partitioner:
    """:func:`partition_of`, remembering the last case id (rows of a case come together)."""

    __slots__ = ("_case_id", "_partition", "_partitions")

    def __init__(self, partitions: int) -> None:
        self._partitions = partitions
        self._case_id: str | None = None
        self._partition = 0

    def __call__(self, case_id: str, field_id: str) -> int:
        if case_id != self._case_id:
            self._case_id = case_id
            self._partition = stable_hash(case_id) % self._partitions
        return self._partition


class _PartReader:
    """Reads one part file into buckets; see :func:`read_part`."""

    def __init__(self, source: InputKind, part: int, partitions: int) -> None:
        self.source = source
        self.part = part
        self.partitions = partitions
        self.rows = 0
        self.first_lines: dict[tuple[str, str], int] = {}
        self.buckets: list[Bucket] = [[] for _ in range(partitions)]
        self._lines: list[list[int]] = [[] for _ in range(partitions)]
        self._rows: list[list[Any]] = [[] for _ in range(partitions)]
        self._where = _Partitioner(partitions)

    def read(self, path: str) -> Failure | None:
        gold = self.source is InputKind.GOLD
        fast: Callable[[str], Any] = fast_gold if gold else fast_prediction
        checked: Callable[[dict[str, object]], Any] = gold_row if gold else prediction_row
        caught: ChartscoreError | None = None
        stream: InputStream | None = None
        try:
            stream = open_input(path, self.source)  # regular files only; gzip by first bytes
        except ChartscoreError as error:
            caught = error
        if stream is None:
            return Failure.at(
                caught or ChartscoreError(ErrorCode.FILE_UNREADABLE), self.source, self.part, None
            )
        with stream:
            try:
                for first, lines in iter_batches(stream, self.source):
                    numbers, rows, failure = check_batch(first, lines, self.source, fast, checked)
                    if not gold and first == 1 and numbers and type(rows[0][5]) is RunHeader:
                        self._broadcast(numbers.pop(0), rows.pop(0))
                    self._add(numbers, rows, gold)
                    if failure is not None:
                        caught = failure
                        break
            except ChartscoreError as error:
                caught = error
        self._flush_all()
        if caught is not None:
            return Failure.at(caught, self.source, self.part, caught.line)
        return None

    def _add(self, numbers: list[int], rows: list[Any], gold: bool) -> None:
        where = self._where
        single = self.partitions == 1
        bucket_lines, bucket_rows = self._lines, self._rows
        first_lines = self.first_lines
        for line, row in zip(numbers, rows, strict=True):
            index = 0 if single else where(row[0], row[1])
            rows_here = bucket_rows[index]
            bucket_lines[index].append(line)
            rows_here.append(row)
            if len(rows_here) >= CHUNK_ROWS:
                self._flush(index)
            if gold:
                kind = (row[1], row[2].value)
                if kind not in first_lines:
                    first_lines[kind] = line
        self.rows += len(rows)

    def _broadcast(self, line: int, header: Any) -> None:
        # A run header (line 1) goes to every partition: each partition's run cost then
        # carries it, and the partitions' run costs merge (docs/scale.md).
        for index in range(self.partitions):
            self._lines[index].append(line)
            self._rows[index].append(header)

    def _flush(self, index: int) -> None:
        lines, rows = self._lines[index], self._rows[index]
        if rows:
            chunk = pickle.dumps((lines, rows), protocol=pickle.HIGHEST_PROTOCOL)
            self.buckets[index].append(chunk)
            self._lines[index], self._rows[index] = [], []

    def _flush_all(self) -> None:
        for index in range(self.partitions):
            self._flush(index)


def read_part(
    source: InputKind, part: int, path: str, partitions: int
) -> tuple[PartSummary, list[Bucket]]:
    """Read and check part ``part`` of ``source``, and split its rows into buckets.

    Every line is read by :func:`chartscore.io.jsonl.iter_batches` and checked
    by :func:`chartscore.io.fastpath.check_batch` (gold or prediction rules),
    exactly as ``chartscore score`` reads a file, and opened as it opens one
    (:func:`chartscore.io.inputs.open_input`): a FIFO, device or directory is
    refused at once with ``file_unreadable``, and a file that starts with the
    gzip magic bytes is decompressed on the fly, whatever its name. Reading
    stops at the first bad line; the rows before it are kept, so errors keep
    their line order.

    Returns:
        The part's summary and one bucket per partition. Never raises: any
        failure is in the summary (an unexpected one as ``internal_error``).
    """
    reader = _PartReader(source, part, partitions)
    failure: Failure | None = None
    crashed = False
    try:
        with collector_paused():
            failure = reader.read(path)
    except Exception:  # noqa: BLE001 - a bug; its message could hold data
        crashed = True
    if crashed:
        return PartSummary(0, {}, Failure.internal()), [[] for _ in range(partitions)]
    return PartSummary(reader.rows, reader.first_lines, failure), reader.buckets
