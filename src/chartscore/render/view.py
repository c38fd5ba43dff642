"""The view: what a rendered report shows, independent of the output format.

An adapter turns a value-free document (a report, a shared report or a
comparison) into a :class:`View`; each renderer (table, markdown, csv,
html) turns a view into text. A view holds closed text, field ids and type
names, and numbers: nothing a renderer shows can come from anywhere else.

A count of ``None`` means *suppressed* (withheld by a disclosure rule): every
renderer shows it as "suppressed", never as 0.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

import attrs

SLICE_KINDS: Final = ("field", "field_type", "overall", "stratum")
"""Slice kinds, in the order their rows appear: fields, types, overall, then strata.

A ``stratum`` slice is named ``site=A``, or ``site=A/type:date`` for its slice of one type."""


class Kind(enum.StrEnum):
    """What an :class:`Estimate`'s number is, which fixes its axis and its formatting."""

    RATE = "rate"
    """``success_count / total_count`` with a Wilson (or clustered) interval, on 0..1."""
    KAPPA = "kappa"
    """Cohen's kappa with its interval, on -1..1; ``total_count`` holds the pairs."""
    DIFFERENCE = "difference"
    """A paired difference of two rates (candidate - baseline), on -1..1."""
    SCORE = "score"
    """A figure of counts with no interval (F1), on 0..1; not plotted."""
    MAGNITUDE = "magnitude"
    """An error magnitude in the field's unit or in days, with an optional range; not plotted."""


@attrs.frozen
class Estimate:
    """One number of a slice with its interval: a metric's rate, a kappa or a difference.

    Attributes:
        slice: ``"field"``, ``"field_type"`` or ``"overall"``.
        name: The field id or field type name; ``""`` for the overall slice.
        metric: The metric's report name, e.g. ``"exact_agreement"`` or ``"kappa"``.
        kind: See :class:`Kind`.
        success_count: Successes (errors, for an error metric); None when suppressed
            or, for kappa and differences, not applicable.
        total_count: Trials (kappa: pairs); None when suppressed.
        value: The rate, kappa or difference; None with no trials, when
            undefined or when suppressed.
        lower: The plain interval's lower bound (Wilson, Newcombe, kappa's), or None.
        upper: The plain interval's upper bound, or None.
        error: True for an error metric (lower is better).
        suppressed: True when a disclosure rule withheld part of this estimate.
        design_effect: A pooled slice's published design effect, or None.
        clustered_lower: A pooled slice's case-clustered lower bound, or None.
        clustered_upper: A pooled slice's case-clustered upper bound, or None.
        label: The declared label (a normalized schema choice) of a per-label
            metric; ``""`` otherwise.
        bound: A shared report's rate bound of a suppressed rate, ``(lower,
            upper)`` (docs/disclosure.md, "Provable bounds"), or None.
        bound_kind: ``wilson`` (field rows) or ``rate_range`` (pooled rows).
        bound_level: The report's level as people read it (``95%``).
        success_range: A shared report's published range ``(lo, hi)`` of a suppressed
            success count (``hi`` None: no upper end), or None.
        total_range: The same for a suppressed total count, or None.
        weighted: True for an ordinal field's kappa, which is quadratic-weighted: renderers
            name it "weighted kappa (quadratic)", not Cohen's kappa.
        not_provided: True for ``evidence_support`` in a slice where no answered row carried
            evidence (``evidence_provided`` 0 of its trials): the tables and plots read "not
            provided", not 0%, and draw no rate; the CSV keeps its counts.
        units: An agreement document's all-rater coefficient's units (its ``total_count``
            is its rating pairs): fewer than 100 mark it "too few pairs", as its gate
            reads them; None elsewhere (``total_count`` is read).
    """

    slice: str
    name: str
    metric: str
    kind: Kind
    success_count: int | None
    total_count: int | None
    value: float | None
    lower: float | None
    upper: float | None
    error: bool = False
    suppressed: bool = False
    design_effect: float | None = None
    clustered_lower: float | None = None
    clustered_upper: float | None = None
    label: str = ""
    bound: tuple[float, float] | None = None
    bound_kind: str = ""
    bound_level: str = ""
    success_range: tuple[int, int | None] | None = None
    total_range: tuple[int, int | None] | None = None
    weighted: bool = False
    not_provided: bool = False
    units: int | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The interval people see: the clustered one where there is one, else the plain one."""
        if self.clustered_lower is not None and self.clustered_upper is not None:
            return (self.clustered_lower, self.clustered_upper)
        return self.plain_interval

    @property
    def plain_interval(self) -> tuple[float, float] | None:
        """``(lower, upper)``, or None when there is no interval."""
        if self.lower is None or self.upper is None:
            return None
        return (self.lower, self.upper)

    @property
    def clustered(self) -> bool:
        """Whether :attr:`interval` is the case-clustered interval of a pooled slice."""
        return self.clustered_lower is not None and self.clustered_upper is not None


@attrs.frozen
class LabelText:
    """A declared label in a table cell: schema text, escaped by every renderer."""

    text: str


Cell = Estimate | int | str | LabelText | None
"""A table cell: an estimate, a count (None: suppressed), closed text or a declared label."""


@attrs.frozen
class Column:
    """A table column after the row label.

    Attributes:
        heading: Closed text, e.g. ``"exact agreement"``.
        metric: The metric shown, for links to its definition; ``""`` if none.
        error: True when the column holds an error metric (lower is better).
    """

    heading: str
    metric: str = ""
    error: bool = False


@attrs.frozen
class Row:
    """One table row: the slice it describes and one cell per column."""

    slice: str
    name: str
    cells: tuple[Cell, ...]


@attrs.frozen
class Table:
    """A titled table; the first column is the slice label.

    Attributes:
        key: A stable identifier (used for anchors), e.g. ``"agreement"``.
        title: Closed text.
        note: How to read the cells (closed text).
        label_heading: The heading of the label column.
        columns: The columns after the label.
        rows: The rows, in display order.
        repeat: How many leading columns identify a row together with its label
            (e.g. a metric column): a renderer that splits the table into
            panels repeats them in every panel.
        cut_labels: The text renderer's label column is as wide as the widest
            label up to its cap (32), the other columns moving to panels; a label
            wider still loses its middle to ``...`` (a run id: a wrapped one reads
            as a second row) instead of wrapping.
    """

    key: str
    title: str
    note: str
    label_heading: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    repeat: int = 0
    cut_labels: bool = False


@attrs.frozen
class Margin:
    """A declared threshold to mark on one plot row, e.g. a non-inferiority margin.

    Attributes:
        value: Where on the axis (a difference of -0.02 is 2 points worse).
        label: Closed text naming it, e.g. ``"gate 2: min_difference_lower -0.02"``.
    """

    value: float
    label: str


@attrs.frozen
class PlotRow:
    """One forest-plot row: its label, its estimate, and its group.

    Attributes:
        label: The row label (a slice label, possibly with a metric name).
        estimate: The point and interval to draw.
        group: Rows are drawn in order, with a gap wherever the group changes.
        margins: Thresholds declared for this row, drawn across it.
    """

    label: str
    estimate: Estimate
    group: str
    margins: tuple[Margin, ...] = ()


@attrs.frozen
class Plot:
    """One forest-plot panel: a row per estimate on a shared axis.

    Attributes:
        key: A stable identifier (used for anchors), e.g. ``"exact_agreement"``.
        title: Closed text.
        note: Closed text under the title.
        metric: The metric plotted, or ``""`` for a panel of several metrics.
        axis: The axis range: ``(0, 1)`` for rates, ``(-1, 1)`` for kappa, a
            symmetric range around 0 for differences; an interval beyond it is
            cut at the edge with an arrow.
        rows: The rows, in display order.
        reference: A value to mark with a vertical line (0 for differences), or None.
        zoomed: True when the axis was narrowed to the data (``--axis zoom``): the plot
            says so under its axis.
    """

    key: str
    title: str
    note: str
    metric: str
    axis: tuple[float, float]
    rows: tuple[PlotRow, ...]
    reference: float | None = None
    zoomed: bool = False


@attrs.frozen
class Definition:
    """A legend entry: what a metric means and where the docs define it."""

    metric: str
    title: str
    text: str
    source: str
    error: bool = False


@attrs.frozen
class View:
    """Everything a renderer shows, in order.

    Attributes:
        title: The document's title (closed text).
        facts: Header lines as (label, text): format, scorer, run summary.
        plots: Forest-plot panels.
        tables: Tables.
        estimates: Every estimate once, for machine-readable output (CSV).
        definitions: The legend.
        notes: Closing lines on how to read the document (closed text).
        shared: True for a shared report: the CSV adds a ``suppressed`` column
            naming the cells of each row that are withheld.
        confidence: The confidence level of every interval (0.9, 0.95 or 0.99).
    """

    title: str
    facts: tuple[tuple[str, str], ...]
    plots: tuple[Plot, ...]
    tables: tuple[Table, ...]
    estimates: tuple[Estimate, ...]
    definitions: tuple[Definition, ...]
    notes: tuple[str, ...] = ()
    shared: bool = False
    confidence: float = 0.95


def level_text(confidence: float) -> str:
    """``95%``, ``90%`` or ``99%``: a confidence level as people read it."""
    return f"{round(100 * confidence)}%"


def slice_label(
    slice_kind: str,
    name: str,
    *,
    code: Callable[[str], str] = str,
    text: Callable[[str], str] = str,
    everything: str = "all fields",
) -> str:
    """The row label of a slice: the field id, ``type <name>``, a stratum or ``all fields``.

    Field ids cannot contain a space, so neither other label can be mistaken
    for a field (a field may be called ``overall``). A renderer marks names up with
    ``code`` (a field or type name) and ``text`` (a stratum's label), and may say
    ``all fields`` its own way (``everything``).
    """
    if slice_kind == "field":
        return code(name)
    if slice_kind == "field_type":
        return f"type {code(name)}"
    if slice_kind == "stratum":
        return text(stratum_label(name))
    if slice_kind == "quantity":  # a run-cost row: closed text (render/run_view.py)
        return text(name)
    return everything


def stratum_label(name: str) -> str:
    """``site=A`` or ``site=A, type date`` (declared names; a field id never holds ``=``)."""
    stratum, _, type_slice = name.partition("/type:")
    return stratum + (f", type {type_slice}" if type_slice else "")


_S = TypeVar("_S")


def ordered_slices(
    overall: _S,
    by_field: Mapping[str, _S],
    by_field_type: Mapping[str, _S],
    sort: str,
    rate: Callable[[_S], float | None],
) -> list[tuple[str, str, _S]]:
    """A document's field slices, then its type slices, then its overall slice.

    Fields and types by name (code point order, the same everywhere), or with ``sort``
    ``"rate"`` by ``rate``, lowest first; a slice with no rate (no trials, or suppressed)
    sorts last, and equal rates by name.
    """

    def by_rate(item: tuple[str, _S]) -> tuple[bool, float, str]:
        found = rate(item[1])
        return (found is None, 0.0 if found is None else found, item[0])

    def ordered(slices: Mapping[str, _S]) -> list[tuple[str, _S]]:
        items = sorted(slices.items())
        return sorted(items, key=by_rate) if sort == "rate" else items

    fields = [("field", name, part) for name, part in ordered(by_field)]
    types = [("field_type", name, part) for name, part in ordered(by_field_type)]
    return [*fields, *types, ("overall", "", overall)]
