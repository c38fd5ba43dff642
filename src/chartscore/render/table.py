"""The terminal renderer: fixed-width text tables within 100 columns.

Cells line up on the slash of ``k/n``, the rate and the interval, so a column
reads at a glance. A table too wide for 100 columns is split into panels that
repeat the slice label (and the columns the table marks as part of a row's name,
such as the metric); a label too long for its column (field ids may be 64
characters a segment) wraps after a ``.`` or ``_``, never losing a character.
A column of free text too wide for the room (an error with its hint) wraps at
its spaces, so the row's label keeps its width.
Output is plain ASCII: no colour codes, so it can be piped, logged or pasted.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Final

from chartscore.render._numbers import cell_text, estimate_parts
from chartscore.render.view import Cell, Estimate, Table, View, slice_label

WIDTH: Final = 100
"""The widest line the renderer writes."""
GAP: Final = 2
LABEL_MIN: Final = 16
"""Labels narrower than this wrap only when a single column would not fit otherwise."""
LABEL_CAP: Final = 32
"""The widest label column when a table must be split into panels."""
TEXT_MIN: Final = 24
"""A text column is wrapped to keep a table in one panel only if it keeps this width."""


def _wrap_words(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def wrap_label(label: str, width: int) -> list[str]:
    """Split ``label`` into lines of at most ``width`` characters, losing none.

    Lines break after a ``.``, ``_`` or space where one is close enough, and
    inside a piece only when it alone is wider than ``width``. Spaces at a
    break are dropped; every other character is kept, in order.
    """
    pieces: list[str] = []
    for piece in re.split(r"(?<=[._ ])", label):
        pieces += [piece[start : start + width] for start in range(0, len(piece), width)]
    lines = [""]
    for piece in pieces:
        if lines[-1] and len(lines[-1]) + len(piece.rstrip(" ")) > width:
            lines[-1] = lines[-1].rstrip(" ")
            lines.append("")
        lines[-1] += piece
    lines[-1] = lines[-1].rstrip(" ")
    return lines


_CUT: Final = "..."


def cut_label(label: str, width: int) -> str:
    """``label`` in one line of at most ``width`` characters: a wider one keeps its start
    and its end (where run ids differ), its middle cut to ``...`` (ASCII, as all output)."""
    if len(label) <= width:
        return label
    if width <= len(_CUT):
        return label[:width]
    tail = (width - len(_CUT)) // 3
    head = width - len(_CUT) - tail
    return label[:head] + _CUT + label[len(label) - tail :]


class _Column:
    """One column's texts, aligned: estimates on their slash, counts to the right."""

    def __init__(self, heading: str, cells: Sequence[Cell]) -> None:
        self.texts = self._align(cells)
        self.lines = [[text] for text in self.texts]  # each cell's lines: one unless wrapped
        self._heading = heading
        self._longest_word = max((len(word) for word in heading.split()), default=0)
        self.width = max([self._longest_word, *map(len, self.texts)])
        self.heading = _wrap_words(heading, self.width)
        self.right = all(isinstance(cell, int) or cell is None for cell in cells)
        self.text = all(type(cell) is str for cell in cells)  # free text: may wrap at spaces

    def wrap(self, width: int) -> None:
        """Wrap each cell to ``width`` characters (at least the heading's longest word).

        Lines break at spaces, and inside a word only when it alone is wider.
        """
        width = max(width, self._longest_word, 1)
        self.lines = [_wrap_words(text, width) for text in self.texts]
        self.width = max(self._longest_word, *(len(line) for cell in self.lines for line in cell))
        self.heading = _wrap_words(self._heading, self.width)

    @staticmethod
    def _align(cells: Sequence[Cell]) -> list[str]:
        # A column of estimates lines up; a blank cell ("", e.g. the rates of a macro-average
        # row) stays blank without breaking the alignment of the others.
        estimates = [cell for cell in cells if isinstance(cell, Estimate)]
        if not estimates or any(not isinstance(c, Estimate) and c != "" for c in cells):
            return [cell_text(cell) for cell in cells]
        parts = [_parts(estimate) for estimate in estimates]
        head, tail, value = (max(len(p[i]) for p in parts) for i in range(3))
        aligned = []
        for k, n, rate, rest in parts:
            fraction = ""
            if head or tail:
                fraction = f"{k:>{head}}{'/' if n else ' '}{n:<{tail}} "
            lead = f"{fraction}{rate:>{value}}"
            aligned.append(f"{lead} {rest}".rstrip() if lead else rest)
        texts = iter(aligned)
        return [next(texts) if isinstance(cell, Estimate) else "" for cell in cells]

    def pad(self, text: str) -> str:
        return text.rjust(self.width) if self.right else text.ljust(self.width)

    def cell(self, index: int, line: int = 0) -> str:
        lines = self.lines[index]
        return self.pad(lines[line] if line < len(lines) else "")


def _parts(estimate: Estimate) -> tuple[str, str, str, str]:
    # (successes, trials, rate, interval or a word): the pieces that line up in a column.
    fraction, value, rest = estimate_parts(estimate)
    k, _, n = fraction.partition("/")
    return (k, n, value, rest)


def _panels(label_width: int, columns: list[_Column], repeat: int) -> list[list[int]]:
    """Column indexes per panel; the first ``repeat`` columns start every panel."""
    fixed = list(range(repeat))
    start = label_width + sum(GAP + columns[i].width for i in fixed)
    panels: list[list[int]] = [[*fixed]]
    used = start
    for index in range(repeat, len(columns)):
        column = columns[index]
        if len(panels[-1]) > repeat and used + GAP + column.width > WIDTH:
            panels.append([*fixed])
            used = start
        panels[-1].append(index)
        used += GAP + column.width
    return panels


def _fit_text(labels: list[str], columns: list[_Column], repeat: int) -> None:
    """Wrap free-text columns too wide for the room, so that no label is squeezed.

    The widest text column is wrapped to keep the table in one panel when it
    can keep :data:`TEXT_MIN` characters; any column still wider than a panel
    with the label (up to :data:`LABEL_CAP`) leaves is wrapped to that.
    """
    label = min(max(map(len, labels)), LABEL_CAP)
    texts = [column for column in columns[repeat:] if column.text]
    if not texts or label + sum(GAP + column.width for column in columns) <= WIDTH:
        return
    widest = max(texts, key=lambda column: column.width)
    others = sum(GAP + column.width for column in columns if column is not widest)
    if WIDTH - label - others - GAP >= TEXT_MIN:
        widest.wrap(WIDTH - label - others - GAP)
    fixed = sum(GAP + column.width for column in columns[:repeat])
    for column in texts:
        if label + fixed + GAP + column.width > WIDTH:
            column.wrap(WIDTH - label - fixed - GAP)


def _label_width(labels: list[str], columns: list[_Column], repeat: int) -> int:
    longest = max(map(len, labels))
    room = WIDTH - sum(GAP + column.width for column in columns)
    if longest <= room:
        return longest
    if room >= LABEL_MIN:
        return room
    fixed = sum(GAP + column.width for column in columns[:repeat])
    widest = max(column.width for column in columns[repeat:] or columns)
    return max(1, min(longest, LABEL_CAP, WIDTH - GAP - widest - fixed))


def _heading_lines(label: str, label_width: int, columns: list[_Column]) -> list[str]:
    height = max(len(column.heading) for column in columns)
    lines = []
    for line in range(height):
        cells = []
        for column in columns:
            offset = line - (height - len(column.heading))
            text = column.heading[offset] if offset >= 0 else ""
            cells.append(column.pad(text))
        lines.append(_join((label if line == height - 1 else "").ljust(label_width), cells))
    lines.append(_join("-" * label_width, ["-" * column.width for column in columns]))
    return lines


def table_lines(table: Table) -> list[str]:
    """The rows of one table as text lines, each at most :data:`WIDTH` characters."""
    labels = [slice_label(row.slice, row.name) for row in table.rows]
    columns = [
        _Column(column.heading, [row.cells[i] for row in table.rows])
        for i, column in enumerate(table.columns)
    ]
    _fit_text([table.label_heading, *labels], columns, table.repeat)
    label_width = _label_width([table.label_heading, *labels], columns, table.repeat)
    if table.cut_labels:  # a run id is whole up to the cap: the other columns go to panels
        label_width = max(label_width, min(max(map(len, labels), default=0), LABEL_CAP))
    lines: list[str] = []
    for number, panel in enumerate(_panels(label_width, columns, table.repeat)):
        shown = [columns[i] for i in panel]
        lines += [""] * (number > 0)
        lines += _heading_lines(table.label_heading, label_width, shown)
        for index, row in enumerate(table.rows):
            if index and row.slice != table.rows[index - 1].slice:
                lines.append("")
            if table.cut_labels:
                label = [cut_label(labels[index], label_width)]
            else:
                label = wrap_label(labels[index], label_width)
            height = max(len(label), *(len(column.lines[index]) for column in shown))
            for line in range(height):
                text = label[line] if line < len(label) else ""
                cells = [column.cell(index, line) for column in shown]
                lines.append(_join(text.ljust(label_width), cells))
    return lines


def _join(label: str, cells: list[str]) -> str:
    return (" " * GAP).join([label, *cells]).rstrip()


def _paragraph(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False) or [""]


def render_table(view: View) -> str:
    """The view as terminal text: header, one block per table, notes; ends with a line end."""
    lines = [view.title]
    for label, text in view.facts:
        lines += textwrap.wrap(
            f"{label}: {text}", WIDTH, subsequent_indent="  ", break_on_hyphens=False
        )
    for table in view.tables:
        lines += ["", table.title]
        lines += _paragraph(table.note)
        lines += table_lines(table)
    if view.notes:
        lines.append("")
        for note in view.notes:
            lines += _paragraph(note)
    return "\n".join(lines) + "\n"
