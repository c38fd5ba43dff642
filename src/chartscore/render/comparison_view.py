"""The adapter from a :class:`~chartscore.comparison.Comparison` to a :class:`View`.

A comparison is read for its paired differences: the first plots show, per
paired metric, the candidate's rate minus the baseline's with Newcombe's
interval on a -1..1 axis around 0, one row per slice. The tables give each
system's rate, the rows only one system got right, the difference and the
McNemar mid-p; then the unpaired metrics side by side, and the counts.

Machine-readable rows (CSV) name a comparison's numbers ``<metric>.baseline``,
``<metric>.candidate`` and ``<metric>.difference`` in the metric column.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from chartscore.comparison import (
    COMPARISON_FORMAT,
    COMPARISON_FORMAT_VERSION,
    PAIRED_METRICS,
    Comparison,
    ComparisonSlice,
    PairedMetricResult,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.render.definitions import INTERVAL_NOTE, definition, title
from chartscore.render.report_view import rate_estimate
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
from chartscore.tally import ERROR_METRICS, TYPE_METRICS

_CORE_PAIRED: Final = tuple(m for m in PAIRED_METRICS if m not in TYPE_METRICS)
_SYSTEMS: Final = ("baseline", "candidate")

Slice = tuple[str, str, ComparisonSlice]


def _slices(comparison: Comparison) -> list[Slice]:
    fields = [("field", name, part) for name, part in sorted(comparison.by_field.items())]
    types = [("field_type", name, part) for name, part in sorted(comparison.by_field_type.items())]
    return [*fields, *types, ("overall", "", comparison.overall)]


def _difference(kind: str, name: str, metric: str, paired: PairedMetricResult) -> Estimate:
    interval = paired.interval
    low, high = interval if interval is not None else (None, None)
    return Estimate(
        slice=kind,
        name=name,
        metric=metric,
        kind=Kind.DIFFERENCE,
        success_count=None,
        total_count=paired.baseline.total_count,
        value=paired.estimate,
        lower=low,
        upper=high,
        error=metric in ERROR_METRICS,
    )


def _p_value(value: float | None) -> str:
    if value is None:
        return "no trials"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}"


def _renamed(estimate: Estimate, suffix: str) -> Estimate:
    # For machine-readable rows: one metric column names the system or the difference.
    return Estimate(
        slice=estimate.slice,
        name=estimate.name,
        metric=f"{estimate.metric}.{suffix}",
        kind=estimate.kind,
        success_count=estimate.success_count,
        total_count=estimate.total_count,
        value=estimate.value,
        lower=estimate.lower,
        upper=estimate.upper,
        error=estimate.error,
    )


def _machine_rows(slices: Iterable[Slice]) -> list[Estimate]:
    out: list[Estimate] = []
    for kind, name, part in slices:
        for metric, paired in part.paired.items():
            out.append(_renamed(rate_estimate(kind, name, metric, paired.baseline), "baseline"))
            out.append(_renamed(rate_estimate(kind, name, metric, paired.candidate), "candidate"))
            out.append(_renamed(_difference(kind, name, metric, paired), "difference"))
        for metric, unpaired in part.unpaired.items():
            out.append(_renamed(rate_estimate(kind, name, metric, unpaired.baseline), "baseline"))
            out.append(_renamed(rate_estimate(kind, name, metric, unpaired.candidate), "candidate"))
    return out


def _difference_plots(slices: list[Slice]) -> list[Plot]:
    plots = []
    note = (
        "candidate minus baseline, in points; line = Newcombe's 95% paired interval; "
        "right of 0 the candidate has the higher rate{}."
    )
    for metric in _CORE_PAIRED:
        rows = tuple(
            PlotRow(
                slice_label(kind, name), _difference(kind, name, metric, part.paired[metric]), kind
            )
            for kind, name, part in slices
            if metric in part.paired
        )
        better = " (for this error metric, left of 0 is better)" if metric in ERROR_METRICS else ""
        plots.append(
            Plot(
                f"difference-{metric}",
                title(metric),
                note.format(better),
                metric,
                (-1.0, 1.0),
                rows,
                0.0,
            )
        )
    typed = tuple(
        PlotRow(
            f"{slice_label(kind, name)}: {title(metric)}",
            _difference(kind, name, metric, paired),
            f"{kind} {name}",
        )
        for kind, name, part in slices
        for metric, paired in part.paired.items()
        if metric in TYPE_METRICS
    )
    if typed:
        plots.append(
            Plot(
                "difference-type_metrics",
                "Type-specific metrics",
                note.format("; squares are errors, where left of 0 is better"),
                "",
                (-1.0, 1.0),
                typed,
                0.0,
            )
        )
    return plots


def _paired_table(slices: list[Slice]) -> Table:
    rows = tuple(
        Row(
            kind,
            name,
            (
                title(metric),
                rate_estimate(kind, name, metric, paired.baseline),
                rate_estimate(kind, name, metric, paired.candidate),
                paired.baseline_only,
                paired.candidate_only,
                _difference(kind, name, metric, paired),
                _p_value(paired.mid_p),
            ),
        )
        for kind, name, part in slices
        for metric, paired in part.paired.items()
    )
    columns = (
        Column("metric"),
        Column("baseline"),
        Column("candidate"),
        Column("baseline only"),
        Column("candidate only"),
        Column("difference"),
        Column("McNemar mid-p"),
    )
    return Table(
        "paired",
        "Paired metrics (the same gold rows for both systems)",
        "Rates: successes/trials, rate, [95% Wilson interval]. 'baseline only' and 'candidate "
        "only' count the rows just one system got right (errors, for an error metric); the "
        "difference is candidate minus baseline with Newcombe's paired interval.",
        "slice",
        columns,
        rows,
    )


def _unpaired_table(slices: list[Slice]) -> Table | None:
    rows = tuple(
        Row(
            kind,
            name,
            (
                title(metric),
                rate_estimate(kind, name, metric, unpaired.baseline),
                rate_estimate(kind, name, metric, unpaired.candidate),
            ),
        )
        for kind, name, part in slices
        for metric, unpaired in part.unpaired.items()
    )
    if not rows:
        return None
    return Table(
        "unpaired",
        "Unpaired metrics (each system's own answered rows or items)",
        "Side by side only: the trials differ between the systems, so there is no paired test.",
        "slice",
        (Column("metric"), Column("baseline"), Column("candidate")),
        rows,
    )


def _count_table(slices: list[Slice]) -> Table:
    rows = tuple(
        Row(
            kind,
            name,
            (
                part.counts["field_count"],
                *(
                    (part.baseline_counts if system == "baseline" else part.candidate_counts)[count]
                    for system in _SYSTEMS
                    for count in _COUNTS
                ),
            ),
        )
        for kind, name, part in slices
    )
    columns = (
        Column("gold rows"),
        *(
            Column(f"{system} {count.removesuffix('_count')}")
            for system in _SYSTEMS
            for count in _COUNTS
        ),
    )
    return Table(
        "counts",
        "Rows per slice",
        "Each system's answered + abstained + missing = gold rows.",
        "slice",
        columns,
        rows,
    )


_COUNTS: Final = ("answered_count", "abstained_count", "missing_count")


_ONE_FIELD_PER_TYPE: Final = (
    "Each field type has exactly one field here, so the tables and plots show no type rows: "
    "they would repeat their field's row (the CSV keeps them)."
)


def comparison_view(comparison: Comparison) -> View:
    """Lay out a comparison for people: difference plots, paired and unpaired tables, counts.

    Raises:
        ChartscoreError: ``usage`` when ``comparison`` is not exactly a Comparison.
    """
    if type(comparison) is not Comparison:
        raise ChartscoreError(ErrorCode.USAGE)
    every_slice = _slices(comparison)
    slices = every_slice
    folded: tuple[str, ...] = ()
    if len(comparison.by_field_type) == len(comparison.by_field):  # one field per type
        slices = [part for part in every_slice if part[0] != "field_type"]
        folded = (_ONE_FIELD_PER_TYPE,)
    overall = comparison.overall
    facts = (
        ("comparison", f"{COMPARISON_FORMAT}, format version {COMPARISON_FORMAT_VERSION}"),
        ("scorer", f"chartscore {comparison.scorer_version}"),
        (
            "gold rows",
            f"{overall.counts['field_count']} in {len(comparison.by_field)} fields: "
            f"{overall.counts['answerable_count']} answerable, "
            f"{overall.counts['unanswerable_count']} unanswerable",
        ),
    )
    tables = [_paired_table(slices), _unpaired_table(slices), _count_table(slices)]
    present = {m for _, _, part in slices for m in (*part.paired, *part.unpaired)}
    order = [
        *PAIRED_METRICS,
        "wrong_type_answer",
        "evidence_support",
        "item_precision",
        "item_recall",
    ]
    return View(
        title="chartscore comparison",
        facts=facts,
        plots=tuple(_difference_plots(slices)),
        tables=tuple(table for table in tables if table is not None),
        estimates=tuple(_machine_rows(every_slice)),
        definitions=tuple(definition(m) for m in order if m in present),
        notes=(
            *folded,
            "A paired comparison: both systems answered the same gold rows, so the difference "
            "and McNemar's test use the rows where they disagree (docs/compare.md).",
            INTERVAL_NOTE,
        ),
    )
