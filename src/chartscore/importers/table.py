"""Reading a delimited text export (REDCap, a spreadsheet) as a stream of rows, with line numbers.

Exports come as people's tools write them, so the reader takes what they write:

- UTF-8, with or without a byte order mark; a file that is not UTF-8 is
  ``not_utf8`` with the line. gzip and standard input are read as for every
  input (:mod:`chartscore.io.inputs`).
- The delimiter is found from the header line: the one of ``,`` ``;`` tab ``|``
  ``^`` that occurs most often outside quotes (a tie goes to the earlier one in
  that list; none at all is one column). REDCap lets users and servers switch
  to any of them.
- Quotes are honoured, so a cell may hold the delimiter, a quote (doubled) or
  line ends; every cell is a string, exactly as written (no number or NA
  parsing: ``NA`` is a REDCap missing-data code, not an empty cell).
- Blank lines are skipped (a run of them in one step, however long). A row's
  line is the line it starts on.

The table is read as a stream: :func:`open_table` reads the header and no
more, so an importer checks its columns before any row is read, and the rows
come one at a time while they are read. Memory holds one block of the file
and one row. At most :data:`MAX_TABLE_BYTES` are read, counted after
decompression (``file_too_large``), so a gzip bomb stops there.

Failures are codes with the input and a line (``invalid_table (records line
12)``: a quote left open or a cell over 1 MiB; ``ragged_row``: a row with
more or fewer cells than the header; ``duplicate_column (records column 4)``),
never a cell. Everything here holds cells: values.
"""

from __future__ import annotations

import contextlib
import csv
import re
from collections.abc import Iterator
from typing import Final

import attrs

from chartscore._format import WORKLIST_MARKER
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import MAX_LINE_BYTES, iter_text

DELIMITERS: Final = (",", ";", "\t", "|", "^")
"""The delimiters an export may use, in order of preference on a tie."""

MAX_CELL_CHARS: Final = MAX_LINE_BYTES
"""The longest cell read, 1 MiB (a physical line is at most 1 MiB too)."""

MAX_TABLE_BYTES = 1 << 30
"""The most a table is read, 1 GiB after decompression (read when a table is opened)."""

_LINE_ENDS: Final = re.compile(r"[\r\n]*")
_SHORT_RUN: Final = 4096  # a run of blank lines longer than this may fill the block: counted

Row = tuple[int, tuple[str, ...]]
"""A row: the line it starts on, and its cells."""


@attrs.frozen(repr=False)
class Table:
    """An open delimited file: its header, and its rows as they are read. Private: holds cells.

    Attributes:
        header: The header's cells, as written.
        delimiter: The delimiter found.
    """

    header: tuple[str, ...] = attrs.field(repr=False)
    delimiter: str = attrs.field(repr=False)
    _records: Iterator[Row] = attrs.field(repr=False)
    _source: InputKind = attrs.field(repr=False)

    def __repr__(self) -> str:
        return f"Table(<{len(self.header)} columns, rows hidden>)"

    def column_of(self, name: str) -> int | None:
        """The 0-based index of the first column with header ``name``, or None."""
        for index, cell in enumerate(self.header):
            if cell == name:
                return index
        return None

    def rows(self) -> Iterator[Row]:
        """``(line, cells)`` per non-blank row, read as they are asked for (once).

        Each has exactly as many cells as the header.

        Raises:
            ChartscoreError: any reading code, ``invalid_table``, ``ragged_row``,
                ``file_too_large``.
        """
        width = len(self.header)
        for line, cells in self._records:
            if len(cells) != width:
                raise ChartscoreError(ErrorCode.RAGGED_ROW, input=self._source, line=line)
            yield line, cells


def sniff_delimiter(first_line: str) -> str:
    """The delimiter of a header line: the candidate most often outside quotes."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in first_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    best = max(DELIMITERS, key=lambda delimiter: counts[delimiter])  # first of the largest
    return best if counts[best] else ","


@contextlib.contextmanager
def open_table(
    path: InputPath, source: InputKind, *, unique_header: bool = True
) -> Iterator[Table]:
    """Open a delimited text file and read its header (see the module docstring).

    The rows are read from :meth:`Table.rows` inside the ``with`` block.

    Args:
        path: A path, or :data:`chartscore.io.STDIN`.
        source: The input's name in errors (``dictionary``, ``records``, ``table``).
        unique_header: Refuse two columns with the same header.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``, ``not_utf8``,
            ``line_too_long`` (a physical line over 1 MiB), ``file_too_large``
            (over :data:`MAX_TABLE_BYTES`), ``invalid_table`` (also: no header),
            ``ragged_row``, ``duplicate_column``; located by input, line and
            column, never by content.
    """
    where = input_path(path, source)
    with open_input(where, source, limit=MAX_TABLE_BYTES) as stream:
        yield _table(_PhysicalLines(iter_text(stream, source)), source, unique_header)


@contextlib.contextmanager
def open_worklist_table(path: InputPath) -> Iterator[Table]:
    """Open an adjudication worklist (``chartscore worklist``) as a table: its header, its rows.

    Its first line must begin with the worklist's marker (``# chartscore.worklist
    1:``), as written or as a spreadsheet saves it again (quoted, or cut into cells
    at its comma); the header and rows follow as :func:`open_table` reads them,
    numbered from line 2.

    Raises:
        ChartscoreError: ``not_a_worklist (worklist line 1)`` without the marker;
            every code of :func:`open_table`, located in ``worklist``.
    """
    source = InputKind.WORKLIST
    where = input_path(path, source)
    with open_input(where, source, limit=MAX_TABLE_BYTES) as stream:
        lines = _PhysicalLines(iter_text(stream, source, worklist=True))
        first = lines.peek()
        if first is None or not first.lstrip('"').startswith(WORKLIST_MARKER):
            raise ChartscoreError(ErrorCode.NOT_A_WORKLIST, input=source, line=1)
        next(lines)
        yield _table(lines, source, True)


def _table(lines: _PhysicalLines, source: InputKind, unique_header: bool) -> Table:
    start = lines.taken + 1
    lines.skip_blank()
    first = lines.peek()
    if first is None:
        raise ChartscoreError(ErrorCode.INVALID_TABLE, input=source, line=start)
    delimiter = sniff_delimiter(first)
    records = _Records(lines, delimiter, source)
    header_line, header = next(records, (1, ()))
    if not any(header):
        raise ChartscoreError(ErrorCode.INVALID_TABLE, input=source, line=header_line)
    if unique_header:
        _check_unique(header, source)
    return Table(header, delimiter, records, source)


def _check_unique(header: tuple[str, ...], source: InputKind) -> None:
    seen: set[str] = set()
    for index, name in enumerate(header):
        if name in seen:
            raise ChartscoreError(ErrorCode.DUPLICATE_COLUMN, input=source, column=index + 1)
        seen.add(name)


class _PhysicalLines:
    """The file's lines, each with its line end, counted as the CSV reader takes them."""

    def __init__(self, blocks: Iterator[tuple[int, str]]) -> None:
        self._blocks = blocks
        self._text = ""  # the current block of whole lines
        self._at = 0  # where the next line starts in it
        self.taken = 0  # lines handed to the CSV reader (or skipped) so far

    def _fill(self) -> bool:
        """Whether a line is left; reads the next block when this one is used up."""
        while self._at >= len(self._text):
            block = next(self._blocks, None)
            if block is None:
                return False
            self._text, self._at = block[1], 0
        return True

    def peek(self) -> str | None:
        """The next line without its line end, or None at the end."""
        if not self._fill():
            return None
        return self._text[self._at : self._text.index("\n", self._at)]

    def skip_blank(self) -> None:
        """Skip the blank lines ahead (call between records: inside one, they are a cell's).

        A blank line is one of nothing but ``\\r`` before its ``\\n``: what csv reads
        as no record. A run of them is found in one step, so blank lines cost no
        Python per line.
        """
        while self._fill():
            text, at = self._text, self._at
            run = _LINE_ENDS.match(text, at, at + _SHORT_RUN)  # always matches
            end = at if run is None else run.end()
            if end == at + _SHORT_RUN:  # a long run, maybe a gzip bomb of blank lines
                rest = len(text) - at
                newlines = text.count("\n", at)
                if newlines + text.count("\r", at) == rest:  # the whole block is blank
                    self.taken += newlines
                    self._at = len(text)
                    continue
                run = _LINE_ENDS.match(text, end)
                end = end if run is None else run.end()
            end = text.rfind("\n", at, end) + 1 or at  # whole lines only
            self.taken += text.count("\n", at, end)
            self._at = end
            if end < len(text):
                return

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        if not self._fill():
            raise StopIteration
        end = self._text.index("\n", self._at) + 1
        line = self._text[self._at : end]
        self._at = end
        self.taken += 1
        return line  # "\r" of a CRLF file stays: csv reads "\r\n" as a line end


class _Records:
    """``(start line, cells)`` of each non-blank record; every CSV failure a located code."""

    def __init__(self, lines: _PhysicalLines, delimiter: str, source: InputKind) -> None:
        self._lines = lines
        self._reader = csv.reader(lines, delimiter=delimiter, quotechar='"', strict=True)
        self._source = source

    def __iter__(self) -> Iterator[Row]:
        return self

    def __next__(self) -> Row:
        while True:
            self._lines.skip_blank()
            start = self._lines.taken + 1
            cells = self._next_cells(start)
            if cells is None:
                raise StopIteration
            if cells:
                return start, tuple(cells)

    def _next_cells(self, start: int) -> list[str] | None:
        previous_limit = csv.field_size_limit(MAX_CELL_CHARS)
        failed = False
        cells: list[str] | None = None
        try:
            cells = next(self._reader, None)
        except csv.Error:
            failed = True
        finally:
            csv.field_size_limit(previous_limit)
        if failed:  # raised outside the handler: csv's message quotes the data
            raise ChartscoreError(ErrorCode.INVALID_TABLE, input=self._source, line=start)
        return cells
