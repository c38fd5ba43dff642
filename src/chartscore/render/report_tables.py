"""The report view's simpler tables: type-specific and plugin metrics, kappa and the counts.

Each takes the estimates (or slices) the view has laid out and returns a value-free
:class:`~chartscore.render.view.Table` (None when no row has one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from chartscore.documents.tally import TYPE_METRICS
from chartscore.render.definitions import kappa_name, title
from chartscore.render.view import Column, Estimate, Row, Table

RATE_CELLS: Final = "Each cell: successes/trials, rate, [{level} interval]; rates in percent."
"""The note of a table of rates (``{level}``: the report's level, ``95%``)."""


class _Counted(Protocol):
    @property
    def counts(self) -> Mapping[str, int | None]: ...


COUNT_COLUMNS: Final = (  # (count, its column heading), in the table's order
    ("field_count", "gold rows"),
    ("answerable_count", "answerable"),
    ("unanswerable_count", "unanswerable"),
    ("answered_count", "answered"),
    ("abstained_count", "abstained"),
    ("missing_count", "missing"),
)


def type_metric_table(estimates: list[Estimate], level: str) -> Table | None:
    """Each field's (and type's) type-specific metrics, one row per metric."""
    rows = tuple(
        Row(e.slice, e.name, (title(e.metric), "lower" if e.error else "higher", e))
        for e in estimates
        if e.metric in TYPE_METRICS
    )
    if not rows:
        return None
    columns = (Column("metric"), Column("better"), Column("estimate"))
    return Table(
        "type_metrics",
        "Type-specific metrics",
        RATE_CELLS.format(level=level).replace("successes", "successes (or errors)"),
        "slice",
        columns,
        rows,
        repeat=1,
    )


def plugin_metric_table(
    estimates: list[Estimate], plugins: tuple[str, ...], level: str
) -> Table | None:
    """Each plugin label's rate, one row per field (and type) and label."""
    rows = tuple(
        Row(e.slice, e.name, (title(e.metric), e)) for e in estimates if e.metric in plugins
    )
    if not rows:
        return None
    return Table(
        "plugin_metrics",
        "Plugin metrics",
        RATE_CELLS.format(level=level).replace("successes", "rows with the label")
        + " The plugin, not chartscore, defines each label (docs/plugins.md).",
        "slice",
        (Column("metric"), Column("estimate")),
        rows,
        repeat=1,
    )


def kappa_table(estimates: list[Estimate], level: str) -> Table | None:
    """Each field's kappa with its interval and pairs."""
    rows = tuple(
        Row(e.slice, e.name, (kappa_name(e.weighted), e, e.total_count))
        for e in estimates
        if e.metric == "kappa"
    )
    if not rows:
        return None
    return Table(
        "kappa",
        "Kappa (higher is better)",
        f"kappa [{level} interval] over the pairs: Cohen's kappa, and on an ordinal field "
        "weighted kappa (quadratic); undefined with no pairs or when gold and answers all fall "
        "in one category.",
        "field",
        (Column("statistic"), Column("kappa", "kappa"), Column("pairs")),
        rows,
    )


def count_table(slices: Sequence[tuple[str, str, _Counted]]) -> Table:
    """The six counts of every slice."""
    rows = tuple(
        Row(kind, name, tuple(part.counts[count] for count, _ in COUNT_COLUMNS))
        for kind, name, part in slices
    )
    return Table(
        "counts",
        "Rows per slice",
        "answered + abstained + missing = gold rows = answerable + unanswerable.",
        "slice",
        tuple(Column(heading) for _, heading in COUNT_COLUMNS),
        rows,
    )
