"""Choices by their names for people: a schema's ``choice_labels`` in a rendered report.

A REDCap field's choices are codes (``1``, ``2``, ``3``); a committee reads "Never",
"Former", "Current". The labels come from the schema, developer-authored configuration
like the field ids, never from the data: :func:`labelled_view` puts them where a view
shows a declared label (the per-label table and plots of a field), and a header line
says so. The documents and the CSV keep the codes, so a rendering can always be traced
back to them.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chartscore.documents.tally import LABEL_METRICS
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.render.view import LabelText, Plot, PlotRow, Row, Table, View, slice_label

__all__ = ["ChoiceLabels", "checked_labels", "labelled_view"]

ChoiceLabels = Mapping[str, Mapping[str, str]]
"""``{field_id: {code: label}}``, codes normalized as reports name them
(:meth:`chartscore.Schema.choice_labels`)."""

LABELS_FACT = (
    "labels",
    "choices are shown by their schema labels (choice_labels); the JSON and the CSV keep the codes",
)
_LABEL_TABLE = "labels"
_LABEL_PLOT_METRICS = frozenset(LABEL_METRICS)


def checked_labels(labels: object) -> dict[str, dict[str, str]]:
    """A plain copy of ``{field_id: {code: label}}``, checked by exact type.

    Raises:
        ChartscoreError: ``usage`` for anything else (a caller's object never runs code).
    """
    if type(labels) is not dict:
        raise ChartscoreError(ErrorCode.USAGE)
    out: dict[str, dict[str, str]] = {}
    for field_id, names in labels.items():
        if type(field_id) is not str or type(names) is not dict:
            raise ChartscoreError(ErrorCode.USAGE)
        if not all(type(k) is str and type(v) is str for k, v in names.items()):
            raise ChartscoreError(ErrorCode.USAGE)
        out[field_id] = dict(names)
    return out


def _table(table: Table, labels: ChoiceLabels) -> Table:
    if table.key != _LABEL_TABLE:
        return table
    rows = []
    for row in table.rows:
        names = labels.get(row.name, {}) if row.slice == "field" else {}
        cells = tuple(
            LabelText(names[cell.text])
            if isinstance(cell, LabelText) and cell.text in names
            else cell
            for cell in row.cells
        )
        rows.append(Row(row.slice, row.name, cells))
    return attrs.evolve(table, rows=tuple(rows))


def _plot(plot: Plot, labels: ChoiceLabels) -> Plot:
    rows = []
    for row in plot.rows:
        estimate = row.estimate
        names = labels.get(estimate.name, {}) if estimate.slice == "field" else {}
        if estimate.metric in _LABEL_PLOT_METRICS and estimate.label in names:
            shown = f"{slice_label(estimate.slice, estimate.name)}: {names[estimate.label]}"
            rows.append(PlotRow(shown, estimate, row.group, row.margins))
        else:
            rows.append(row)
    return attrs.evolve(plot, rows=tuple(rows))


def labelled_view(view: View, labels: ChoiceLabels) -> View:
    """The view with each field's declared labels shown by name, and a header line saying so.

    Only a field slice's labels are named (a type slice pools fields whose codes may
    mean different things). The estimates, hence the CSV, keep the codes.
    """
    tables = tuple(_table(table, labels) for table in view.tables)
    plots = tuple(_plot(plot, labels) for plot in view.plots)
    if tables == view.tables and plots == view.plots:
        return view
    return attrs.evolve(view, tables=tables, plots=plots, facts=(*view.facts, LABELS_FACT))
