"""The Markdown renderer: GitHub-flavoured tables and a legend, for memos and wikis.

Field ids are shown as code spans when they hold only id characters, and
escaped character by character otherwise, so no label can open a link, an
HTML tag or a new table cell. chartscore's own closed text is escaped only
where Markdown would read it as markup, so the raw text stays readable.
"""

from __future__ import annotations

import re

from chartscore.render._numbers import cell_text
from chartscore.render.view import Cell, LabelText, Table, View, slice_label

_CODE_SAFE = re.compile(r"[A-Za-z0-9_.\-]+")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_MARKUP = re.compile(r"([\\`*_<>|&~])")


def escape(text: str) -> str:
    """Backslash-escape every ASCII punctuation character and flatten line breaks.

    Markdown gives none of them a meaning once escaped, so the text renders as
    written, with no link, emphasis, HTML or table cell boundary.
    """
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def text(closed: str) -> str:
    """chartscore's own text with the characters Markdown would read as markup escaped."""
    return _MARKUP.sub(r"\\\1", " ".join(closed.split()))


def _name(name: str) -> str:
    return f"`{name}`" if _CODE_SAFE.fullmatch(name) else escape(name)


def label(slice_kind: str, name: str) -> str:
    """A row label: a field id as code, ``type `name```, or bold ``all fields``."""
    return slice_label(slice_kind, name, code=_name, text=escape, everything="**all fields**")


def _cell(cell: Cell) -> str:
    if isinstance(cell, LabelText):
        return escape(cell.text)
    return cell_text(cell).replace("|", "\\|")


def table_lines(table: Table) -> list[str]:
    """One table as GitHub-flavoured Markdown lines."""
    headings = [table.label_heading, *(column.heading for column in table.columns)]
    right = [
        all(isinstance(row.cells[i], int) or row.cells[i] is None for row in table.rows)
        for i in range(len(table.columns))
    ]
    lines = [
        "| " + " | ".join(text(heading) for heading in headings) + " |",
        "| :-- | " + " | ".join("--:" if r else ":--" for r in right) + " |",
    ]
    for row in table.rows:
        cells = [label(row.slice, row.name), *(_cell(cell) for cell in row.cells)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(view: View) -> str:
    """The view as Markdown: header list, one section per table, definitions, notes."""
    lines = [f"# {text(view.title)}", ""]
    lines += [f"- **{text(name)}**: {text(fact)}" for name, fact in view.facts]
    for table in view.tables:
        lines += ["", f"## {text(table.title)}", "", text(table.note), ""]
        lines += table_lines(table)
    if view.definitions:
        lines += ["", "## Definitions", ""]
        lines += [
            f"- **{text(d.title)}** (`{d.metric}`): {text(d.text)} See `{d.source}`."
            for d in view.definitions
        ]
    if view.notes:
        lines.append("")
        for note in view.notes:
            lines += [text(note), ""]
        lines.pop()
    return "\n".join(lines) + "\n"
