"""Reading a delimited text export (REDCap, a spreadsheet) as rows of strings, with line numbers.

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
- Blank lines are skipped. A row's line is the line it starts on.

Failures are codes with the input and a line (``invalid_table (records line
12)``: a quote left open or a cell over 1 MiB; ``ragged_row``: a row with
more or fewer cells than the header; ``duplicate_column (records column 4)``),
never a cell. Everything here holds cells: values.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import MAX_LINE_BYTES, iter_lines

DELIMITERS: Final = (",", ";", "\t", "|", "^")
"""The delimiters an export may use, in order of preference on a tie."""

MAX_CELL_CHARS: Final = MAX_LINE_BYTES
"""The longest cell read, 1 MiB (a physical line is at most 1 MiB too)."""


@attrs.frozen(repr=False)
class Table:
    """A delimited file's header and rows; every cell a string. Private: holds cells.

    Attributes:
        header: The header's cells, as written.
        rows: ``(line, cells)`` per non-blank row, ``line`` being the 1-based
            line the row starts on; each has exactly as many cells as the header.
        delimiter: The delimiter found.
    """

    header: tuple[str, ...] = attrs.field(repr=False)
    rows: tuple[tuple[int, tuple[str, ...]], ...] = attrs.field(repr=False)
    delimiter: str = attrs.field(repr=False)

    def __repr__(self) -> str:
        return f"Table(<{len(self.header)} columns, {len(self.rows)} rows hidden>)"

    def column_of(self, name: str) -> int | None:
        """The 0-based index of the first column with header ``name``, or None."""
        for index, cell in enumerate(self.header):
            if cell == name:
                return index
        return None


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


def read_table(path: InputPath, source: InputKind, *, unique_header: bool = True) -> Table:
    """Read a delimited text file whole (see the module docstring).

    Args:
        path: A path, or :data:`chartscore.io.STDIN`.
        source: The input's name in errors (``dictionary``, ``records``, ``table``).
        unique_header: Refuse two columns with the same header.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``, ``not_utf8``,
            ``line_too_long`` (a physical line over 1 MiB), ``invalid_table``
            (also: no header), ``ragged_row``, ``duplicate_column``; located by
            input, line and column, never by content.
    """
    where = input_path(path, source)
    with open_input(where, source) as stream:
        lines = _PhysicalLines(iter_lines(stream, source))
        first = lines.peek()
        if first is None:
            raise ChartscoreError(ErrorCode.INVALID_TABLE, input=source, line=1)
        delimiter = sniff_delimiter(first)
        records = _records(lines, delimiter, source)
        header_line, header = next(records, (1, ()))
        if not any(header):
            raise ChartscoreError(ErrorCode.INVALID_TABLE, input=source, line=header_line)
        if unique_header:
            _check_unique(header, source)
        rows = []
        for line, cells in records:
            if len(cells) != len(header):
                raise ChartscoreError(ErrorCode.RAGGED_ROW, input=source, line=line)
            rows.append((line, cells))
    return Table(header, tuple(rows), delimiter)


def _check_unique(header: tuple[str, ...], source: InputKind) -> None:
    seen: set[str] = set()
    for index, name in enumerate(header):
        if name in seen:
            raise ChartscoreError(ErrorCode.DUPLICATE_COLUMN, input=source, column=index + 1)
        seen.add(name)


class _PhysicalLines:
    """The file's lines, each with its line end, counted as the CSV reader takes them."""

    def __init__(self, lines: Iterator[tuple[int, str]]) -> None:
        self._lines = lines
        self._peeked: str | None = None
        self.taken = 0  # lines handed to the CSV reader so far

    def peek(self) -> str | None:
        if self._peeked is None:
            found = next(self._lines, None)
            if found is None:
                return None
            self._peeked = found[1]
        return self._peeked

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        text = self.peek()
        if text is None:
            raise StopIteration
        self._peeked = None
        self.taken += 1
        return text + "\n"  # "\r" of a CRLF file stays: csv reads "\r\n" as a line end


def _records(
    lines: _PhysicalLines, delimiter: str, source: InputKind
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """``(start line, cells)`` of each non-blank record; every CSV failure a located code."""
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(MAX_CELL_CHARS)
    try:
        reader = csv.reader(lines, delimiter=delimiter, quotechar='"', strict=True)
        while True:
            start = lines.taken + 1
            failed = False
            cells: list[str] | None = None
            try:
                cells = next(reader, None)
            except csv.Error:
                failed = True
            if failed:  # raised outside the handler: csv's message quotes the data
                raise ChartscoreError(ErrorCode.INVALID_TABLE, input=source, line=start)
            if cells is None:
                return
            if cells:
                yield start, tuple(cells)
    finally:
        csv.field_size_limit(previous_limit)
