"""The adapter from a shared comparison to a :class:`View`: a comparison's view, with nulls.

The same reading as :mod:`chartscore.render.comparison_view` (difference plots
around 0, the paired table, the counts), for the core paired metrics a shared
comparison publishes. A suppressed count reads ``suppressed``; a rate with a
suppressed part shows its bound, and so does a difference
(``[-3.1, +12.4] pp (95% bounds)`` in a field row, the provable range of the
difference in a pooled row); the disclosure rule is stated.
"""

from __future__ import annotations

from collections.abc import Sequence

from chartscore.documents.gates import Gate, GateResults
from chartscore.documents.shared_comparison import (
    SHARED_COMPARISON_FORMAT,
    SHARED_COMPARISON_FORMAT_VERSION,
    SHARED_PAIRED_METRICS,
    SharedComparison,
    SharedComparisonSlice,
    SharedPaired,
    system_count,
)
from chartscore.documents.tally import ERROR_METRICS
from chartscore.errors import ChartscoreError, ErrorCode, word_option
from chartscore.render.comparison_view import (
    PAIRED_COLUMNS,
    candidate_rate,
    count_table,
    difference_note,
    difference_row,
    difference_scale,
    gate_margins,
    header_facts,
    p_text,
    paired_difference,
    renamed,
    side_cells,
)
from chartscore.render.definitions import definition, interval_note, title
from chartscore.render.report_view import SORTS, rate_estimate
from chartscore.render.view import (
    Estimate,
    Kind,
    Plot,
    Row,
    Table,
    View,
    level_text,
    ordered_slices,
)

Slice = tuple[str, str, SharedComparisonSlice]
_COUNTS = ("answered_count", "abstained_count", "missing_count")


def _slices(shared: SharedComparison, sort: str) -> list[Slice]:
    return ordered_slices(
        shared.overall, shared.by_field, shared.by_field_type, sort, candidate_rate
    )


def _difference(kind: str, name: str, metric: str, paired: SharedPaired, level: str) -> Estimate:
    result = paired.result
    bound = paired.difference_bound
    if result is None:
        return Estimate(
            slice=kind,
            name=name,
            metric=metric,
            kind=Kind.DIFFERENCE,
            success_count=None,
            total_count=paired.total_count,
            value=None,
            lower=None,
            upper=None,
            error=metric in ERROR_METRICS,
            suppressed=True,
            bound=None if bound is None else (bound.lower, bound.upper),
            bound_kind="" if bound is None else bound.kind,
            bound_level=level,
        )
    return paired_difference(kind, name, metric, result, paired.total_count)


def _p(kind: str, paired: SharedPaired) -> str:
    result = paired.result
    return "suppressed" if result is None else p_text(kind, result)


def _plots(slices: list[Slice], gates: Sequence[Gate], level: str) -> tuple[Plot, ...]:
    margins = gate_margins(gates)
    panels = []
    for metric in SHARED_PAIRED_METRICS:
        rows = tuple(
            difference_row(
                kind,
                name,
                metric,
                _difference(kind, name, metric, part.paired[metric], level),
                margins,
            )
            for kind, name, part in slices
        )
        panels.append((metric, rows))
    scale = difference_scale(row for _, rows in panels for row in rows)
    note = (
        f"{difference_note(level)}; a suppressed difference is not drawn (its bound is in the "
        f"table). The axis runs from -{scale * 100:g} to +{scale * 100:g} points."
    )
    return tuple(
        Plot(f"difference-{metric}", title(metric), note, metric, (-scale, scale), rows, 0.0)
        for metric, rows in panels
    )


def shared_comparison_view(
    shared: SharedComparison,
    *,
    sort: str = "name",
    gates: Sequence[Gate] = (),
    verdicts: GateResults | None = None,
    date: str | None = None,
) -> View:
    """Lay out a shared comparison for people: difference plots, the paired table, counts.

    The header gives the date, the level, each difference gate's margin and the gates'
    verdict as a comparison's does; a shared comparison names no system (its systems are
    the baseline and the candidate: names are free text it cannot vouch for).

    Raises:
        ChartscoreError: ``usage`` when ``shared`` is not exactly a SharedComparison or
            ``sort`` is not one of :data:`SORTS`.
    """
    if type(shared) is not SharedComparison:
        raise ChartscoreError(ErrorCode.USAGE)
    sort = word_option(sort, SORTS)
    level = level_text(shared.confidence)
    slices = _slices(shared, sort)
    disclosure = shared.disclosure
    overall = shared.overall.counts

    def shown(value: int | None) -> str:
        return "suppressed" if value is None else str(value)

    facts: tuple[tuple[str, str], ...] = header_facts(level, gates, verdicts, date)
    facts += (
        (
            "comparison",
            f"{SHARED_COMPARISON_FORMAT}, format version {SHARED_COMPARISON_FORMAT_VERSION}",
        ),
        ("scorer", f"chartscore {shared.scorer_version}"),
        (
            "disclosure",
            f"cell-size rule: no number from 1 to {disclosure.min_cell - 1} cases is shown or "
            f"derivable; {disclosure.suppressed_count} numbers suppressed, primary and "
            "complementary; the audit also checks the quantities derived from them (failures, "
            "rows both or neither system got right), so it reports more hidden numbers "
            "(docs/disclosure.md)",
        ),
        (
            "gold rows",
            f"{shown(overall['field_count'])} in {len(shared.by_field)} fields: "
            f"{shown(overall['answerable_count'])} answerable, "
            f"{shown(overall['unanswerable_count'])} unanswerable",
        ),
    )
    facts += tuple(
        (
            system,
            ", ".join(
                f"{shown(overall[system_count(system, count)])} {count.removesuffix('_count')}"
                for count in _COUNTS
            ),
        )
        for system in ("baseline", "candidate")
    )
    order = "fields and types by name"
    if sort == "rate":
        order = "fields and types by the candidate's normalized agreement rate, lowest first"
    facts += (("order", order),)
    paired_rows = tuple(
        Row(
            kind,
            name,
            (
                *side_cells(kind, name, metric, paired, level),
                paired.baseline_only,
                paired.candidate_only,
                _difference(kind, name, metric, paired, level),
                _p(kind, paired),
            ),
        )
        for kind, name, part in slices
        for metric, paired in part.paired.items()
    )
    paired_table = Table(
        "paired",
        "Paired metrics (the same gold rows for both systems)",
        f"Rates: successes/trials, rate, [{level} interval]; 'suppressed' marks a number "
        "withheld by the disclosure rule, and a rate or difference with a withheld part shows "
        "the bound its published ranges prove instead. 'baseline only' and 'candidate only' "
        "count the rows just one system got right (errors, for an error metric).",
        "slice",
        PAIRED_COLUMNS,
        paired_rows,
        repeat=1,
    )
    counts = count_table(slices, lambda part, system, name: part.counts[system_count(system, name)])
    estimates: list[Estimate] = []
    for kind, name, part in slices:
        for metric, paired in part.paired.items():
            for system, side in (("baseline", paired.baseline), ("candidate", paired.candidate)):
                estimate = rate_estimate(kind, name, metric, side, level)
                estimates.append(renamed(estimate, system))
            estimates.append(renamed(_difference(kind, name, metric, paired, level), "difference"))
    return View(
        title="chartscore shared comparison",
        facts=facts,
        plots=_plots(slices, gates, level),
        tables=(paired_table, counts),
        estimates=tuple(estimates),
        definitions=tuple(definition(metric) for metric in SHARED_PAIRED_METRICS),
        notes=(
            "A shared comparison: the core paired metrics of a comparison, with every number "
            f"backed by 1 to {disclosure.min_cell - 1} cases suppressed (docs/disclosure.md, "
            '"Sharing a comparison").',
            interval_note(level),
        ),
        shared=True,
        confidence=shared.confidence,
    )
