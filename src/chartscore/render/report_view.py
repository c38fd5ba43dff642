"""The adapter from a :class:`~chartscore.report.Report` to a :class:`View`.

It decides what a report shows and in which order; the renderers only lay it
out. Rows run fields, then field types, then all fields. Fields (and types)
are ordered by name, or by normalized agreement rate, lowest first, so the
fields that need attention come first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from chartscore.render.definitions import INTERVAL_NOTE, METRIC_ORDER, definition, title
from chartscore.render.view import (
    Column,
    Estimate,
    Kind,
    Plot,
    PlotRow,
    Row,
    Table,
    View,
    slice_label,
)
from chartscore.report import (
    REPORT_FORMAT,
    REPORT_FORMAT_VERSION,
    MetricResult,
    Report,
    SliceReport,
)
from chartscore.tally import ERROR_METRICS, TYPE_METRICS

SORTS: Final = ("name", "rate")
"""Row orders: by name, or by normalized agreement rate (lowest first)."""
SORT_METRIC: Final = "normalized_agreement"

AGREEMENT_METRICS: Final = (
    "exact_agreement",
    "normalized_agreement",
    "abstention_correctness",
    "evidence_support",
)
"""The core metrics where higher is better, in the agreement table."""
ERROR_TABLE_METRICS: Final = ("answerable_abstention", "unanswerable_answer", "wrong_type_answer")
"""The core error metrics, in their own table: lower is better."""

_COUNT_COLUMNS: Final = (
    ("field_count", "gold rows"),
    ("answerable_count", "answerable"),
    ("unanswerable_count", "unanswerable"),
    ("answered_count", "answered"),
    ("abstained_count", "abstained"),
    ("missing_count", "missing"),
)
_RATE_CELLS = "Each cell: successes/trials, rate, [95% Wilson interval]; rates in percent."
_ERROR_CELLS = "Each cell: errors/trials, rate, [95% Wilson interval]; rates in percent."

_ONE_FIELD_PER_TYPE = (
    "Each field type has exactly one field here, so the tables and plots show no type rows: "
    "they would repeat their field's row (the CSV keeps them)."
)

Slice = tuple[str, str, SliceReport]
"""(slice kind, name, slice)."""


def metric_estimate(kind: str, name: str, metric: str, part: SliceReport) -> Estimate:
    """The estimate of one binomial metric of a slice."""
    return rate_estimate(kind, name, metric, part.metric(metric))


def rate_estimate(kind: str, name: str, metric: str, result: MetricResult) -> Estimate:
    """The estimate of one binomial metric's result (of a report or one side of a comparison)."""
    low, high = result.interval if result.interval is not None else (None, None)
    return Estimate(
        slice=kind,
        name=name,
        metric=metric,
        kind=Kind.RATE,
        success_count=result.success_count,
        total_count=result.total_count,
        value=result.rate,
        lower=low,
        upper=high,
        error=metric in ERROR_METRICS,
    )


def kappa_estimate(name: str, part: SliceReport) -> Estimate | None:
    """The kappa estimate of a field slice, or None if the field has no kappa."""
    kappa = part.kappa
    if kappa is None:
        return None
    low, high = kappa.interval if kappa.interval is not None else (None, None)
    return Estimate(
        slice="field",
        name=name,
        metric="kappa",
        kind=Kind.KAPPA,
        success_count=None,
        total_count=kappa.pairs,
        value=kappa.value,
        lower=low,
        upper=high,
    )


def _ordered(slices: Mapping[str, SliceReport], sort: str) -> list[tuple[str, SliceReport]]:
    def by_rate(item: tuple[str, SliceReport]) -> tuple[bool, float, str]:
        rate = item[1].metric(SORT_METRIC).rate
        return (rate is None, 0.0 if rate is None else rate, item[0])

    items = sorted(slices.items())  # by name: code point order, the same everywhere
    return sorted(items, key=by_rate) if sort == "rate" else items


def _slices(report: Report, sort: str) -> list[Slice]:
    fields = [("field", name, part) for name, part in _ordered(report.by_field, sort)]
    types = [("field_type", name, part) for name, part in _ordered(report.by_field_type, sort)]
    return [*fields, *types, ("overall", "", report.overall)]


def one_field_per_type(report: Report) -> bool:
    """True when every field type has exactly one field, so type rows repeat field rows.

    Each field has one type and each type slice at least one field, so as many
    types as fields means one field each (the pigeonhole principle).
    """
    return len(report.by_field_type) == len(report.by_field)


def _estimates(slices: Iterable[Slice]) -> list[Estimate]:
    out: list[Estimate] = []
    for kind, name, part in slices:
        out += [
            metric_estimate(kind, name, metric, part)
            for metric in METRIC_ORDER
            if metric in part.metrics
        ]
        kappa = kappa_estimate(name, part) if kind == "field" else None
        if kappa is not None:
            out.append(kappa)
    return out


def _metric_table(
    key: str, heading: str, note: str, metrics: tuple[str, ...], slices: list[Slice]
) -> Table:
    columns = tuple(Column(title(m), m, m in ERROR_METRICS) for m in metrics)
    rows = tuple(
        Row(kind, name, tuple(metric_estimate(kind, name, m, part) for m in metrics))
        for kind, name, part in slices
    )
    return Table(key, heading, note, "slice", columns, rows)


def _type_metric_table(estimates: list[Estimate]) -> Table | None:
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
        _RATE_CELLS.replace("successes", "successes (or errors)"),
        "slice",
        columns,
        rows,
    )


def _kappa_table(estimates: list[Estimate]) -> Table | None:
    rows = tuple(
        Row(e.slice, e.name, (e, e.total_count)) for e in estimates if e.kind is Kind.KAPPA
    )
    if not rows:
        return None
    return Table(
        "kappa",
        "Cohen's kappa (higher is better)",
        "kappa [95% interval] over the pairs; undefined with no pairs or when gold and answers "
        "all fall in one category.",
        "field",
        (Column("kappa", "kappa"), Column("pairs")),
        rows,
    )


def _count_table(slices: list[Slice]) -> Table:
    rows = tuple(
        Row(kind, name, tuple(part.count(count) for count, _ in _COUNT_COLUMNS))
        for kind, name, part in slices
    )
    return Table(
        "counts",
        "Rows per slice",
        "answered + abstained + missing = gold rows = answerable + unanswerable.",
        "slice",
        tuple(Column(heading) for _, heading in _COUNT_COLUMNS),
        rows,
    )


def _plot_row(estimate: Estimate, *, with_metric: bool = False) -> PlotRow:
    label = slice_label(estimate.slice, estimate.name)
    if not with_metric:
        return PlotRow(label, estimate, estimate.slice)
    return PlotRow(
        f"{label}: {title(estimate.metric)}", estimate, f"{estimate.slice} {estimate.name}"
    )


def _plots(estimates: list[Estimate]) -> list[Plot]:
    plots = []
    for metric in (*AGREEMENT_METRICS, *ERROR_TABLE_METRICS):
        error = metric in ERROR_METRICS
        note = ("error rate: lower is better" if error else "higher is better") + (
            "; point = rate, line = 95% Wilson interval."
        )
        rows = tuple(_plot_row(e) for e in estimates if e.metric == metric)
        plots.append(Plot(metric, title(metric), note, metric, (0.0, 1.0), rows))
    typed = tuple(_plot_row(e, with_metric=True) for e in estimates if e.metric in TYPE_METRICS)
    if typed:
        note = (
            "Each field's type-specific metrics; squares are errors (lower is better). "
            "Point = rate, line = 95% Wilson interval."
        )
        plots.append(Plot("type_metrics", "Type-specific metrics", note, "", (0.0, 1.0), typed))
    kappas = tuple(_plot_row(e) for e in estimates if e.kind is Kind.KAPPA)
    if kappas:
        note = "kappa and 95% interval; 0 is chance agreement, 1 perfect agreement."
        plots.append(Plot("kappa", title("kappa"), note, "kappa", (-1.0, 1.0), kappas, 0.0))
    return plots


def _order_note(sort: str) -> str:
    if sort == "rate":
        return "fields and types by normalized agreement rate, lowest first"
    return "fields and types by name"


def _summary(report: Report) -> tuple[tuple[str, str], ...]:
    overall = report.overall
    fields, types = len(report.by_field), len(report.by_field_type)
    ignored: tuple[tuple[str, str], ...] = ()
    if report.ignored_prediction_count is not None:
        ignored = (
            (
                "ignored",
                f"{report.ignored_prediction_count} prediction"
                f"{'s' * (report.ignored_prediction_count != 1)} not in gold, skipped",
            ),
        )
    return (
        ("report", f"{REPORT_FORMAT}, format version {REPORT_FORMAT_VERSION}"),
        ("scorer", f"chartscore {report.scorer_version}"),
        (
            "gold rows",
            f"{overall.count('field_count')} in {fields} field{'s' * (fields != 1)} of "
            f"{types} type{'s' * (types != 1)}: {overall.count('answerable_count')} answerable, "
            f"{overall.count('unanswerable_count')} unanswerable",
        ),
        (
            "answers",
            f"{overall.count('answered_count')} answered, {overall.count('abstained_count')} "
            f"abstained, {overall.count('missing_count')} missing",
        ),
        *ignored,
    )


def report_view(report: Report, *, sort: str = "name") -> View:
    """Lay out a report for people: tables, forest plots and the legend.

    Args:
        report: A value-free report (from ``chartscore.score`` or
            :meth:`Report.from_json`).
        sort: ``"name"`` or ``"rate"`` (normalized agreement, lowest first).

    Returns:
        The :class:`View` every renderer draws.

    Raises:
        ValueError: for an unknown ``sort`` (the public :func:`render` checks it first).
    """
    if sort not in SORTS:
        raise ValueError("unknown sort")
    every_slice = _slices(report, sort)
    estimates = _estimates(every_slice)  # machine-readable output keeps every slice
    notes: tuple[str, ...] = ()
    slices = every_slice
    if one_field_per_type(report):
        slices = [part for part in every_slice if part[0] != "field_type"]
        notes = (_ONE_FIELD_PER_TYPE,)
    shown = [e for e in estimates if e.slice != "field_type"] if notes else estimates
    tables: list[Table | None] = [
        _metric_table(
            "agreement", "Agreement (higher is better)", _RATE_CELLS, AGREEMENT_METRICS, slices
        ),
        _metric_table(
            "errors", "Errors (lower is better)", _ERROR_CELLS, ERROR_TABLE_METRICS, slices
        ),
        _type_metric_table(shown),
        _kappa_table(shown),
        _count_table(slices),
    ]
    present = {e.metric for e in estimates}
    return View(
        title="chartscore report",
        facts=(*_summary(report), ("order", _order_note(sort))),
        plots=tuple(_plots(shown)),
        tables=tuple(table for table in tables if table is not None),
        estimates=tuple(estimates),
        definitions=tuple(definition(m) for m in METRIC_ORDER if m in present),
        notes=(
            *notes,
            INTERVAL_NOTE,
            "A missing answer is never an abstention: it counts against agreement and "
            "abstention correctness. Definitions: docs/metrics.md.",
        ),
    )
