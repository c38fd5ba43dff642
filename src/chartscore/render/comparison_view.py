"""The adapter from a :class:`~chartscore.documents.comparison.Comparison` to a :class:`View`.

A comparison is read for its paired differences: the first plots show, per
paired metric, the candidate's rate minus the baseline's with Newcombe's
interval on an axis around 0 (±5 to ±50 points, the narrowest that holds
them, so a 2-point margin is visible), one row per slice, with any declared
non-inferiority margin of a gate. The tables give each system's rate, the
rows only one system got right, the difference and the McNemar mid-p; then
the unpaired metrics and each system's kappa side by side, and the counts.

Machine-readable rows (CSV) name a comparison's numbers ``<metric>.baseline``,
``<metric>.candidate`` and ``<metric>.difference`` in the metric column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol, TypeVar

import attrs

from chartscore.documents.comparison import (
    COMPARISON_FORMAT,
    COMPARISON_FORMAT_VERSION,
    MISSING_GAP_POINTS,
    PAIRED_METRICS,
    Comparison,
    ComparisonSlice,
    PairedMetricResult,
    missing_counts_differ,
)
from chartscore.documents.gates import Gate, GateResults
from chartscore.documents.plugin_layout import is_plugin_metric
from chartscore.documents.system_names import SystemNames
from chartscore.documents.tally import ERROR_METRICS, TYPE_METRICS
from chartscore.errors import ChartscoreError, ErrorCode, word_option
from chartscore.render.definitions import (
    definition,
    interval_note,
    kappa_name,
    plugin_definitions,
    title,
)
from chartscore.render.evidence_view import NOT_PROVIDED_NOTE, nothing_provided, shown_support
from chartscore.render.report_view import (
    ORDINAL_MARK,
    SORT_METRIC,
    SORTS,
    Binomial,
    binomial_rate,
    kappa_figure,
    plugin_facts,
    rate_estimate,
)
from chartscore.render.run_view import run_facts, run_table
from chartscore.render.verdicts import margin_lines, verdict, verdict_line
from chartscore.render.view import (
    Column,
    Estimate,
    Kind,
    Margin,
    Plot,
    PlotRow,
    Row,
    Table,
    View,
    level_text,
    ordered_slices,
    slice_label,
)

_CORE_PAIRED: Final = tuple(m for m in PAIRED_METRICS if m not in TYPE_METRICS)
_SYSTEMS: Final = ("baseline", "candidate")


class _Counted(Protocol):
    @property
    def counts(self) -> Mapping[str, int | None]: ...


_Part = TypeVar("_Part", bound=_Counted)  # a slice of a comparison, or of a shared one

Slice = tuple[str, str, ComparisonSlice]


class _Sides(Protocol):
    # A metric of both systems: a paired or unpaired one, of a comparison or a shared one.
    @property
    def baseline(self) -> Binomial: ...

    @property
    def candidate(self) -> Binomial: ...


class _PairedSlice(Protocol):
    @property
    def paired(self) -> Mapping[str, _Sides]: ...


def side_cells(
    kind: str, name: str, metric: str, sides: _Sides, level: str = "95%"
) -> tuple[str, Estimate, Estimate]:
    """A two-system metric's first cells: its title and each system's rate."""
    return (
        title(metric),
        rate_estimate(kind, name, metric, sides.baseline, level),
        rate_estimate(kind, name, metric, sides.candidate, level),
    )


def candidate_rate(part: _PairedSlice) -> float | None:
    """The rate a comparison's slices sort by: the candidate's normalized agreement."""
    return binomial_rate(part.paired[SORT_METRIC].candidate)


def _slices(comparison: Comparison, sort: str) -> list[Slice]:
    strata = [("stratum", name, part) for name, part in sorted(comparison.by_stratum.items())]
    pooled = ordered_slices(
        comparison.overall, comparison.by_field, comparison.by_field_type, sort, candidate_rate
    )
    return [*pooled, *strata]


def _difference(kind: str, name: str, metric: str, paired: PairedMetricResult) -> Estimate:
    return paired_difference(kind, name, metric, paired, paired.baseline.total_count)


def paired_difference(
    kind: str, name: str, metric: str, paired: PairedMetricResult, total_count: int | None
) -> Estimate:
    """A paired difference as an estimate (of a comparison, or a shared one's shown difference).

    ``total_count``: the rows both systems were scored on, as the document states it.
    """
    interval = paired.interval
    low, high = interval if interval is not None else (None, None)
    clustering = paired.clustering
    clustered = None if clustering is None else clustering.interval
    return Estimate(
        slice=kind,
        name=name,
        metric=metric,
        kind=Kind.DIFFERENCE,
        success_count=None,
        total_count=total_count,
        value=paired.estimate,
        lower=low,
        upper=high,
        error=metric in ERROR_METRICS,
        design_effect=None if clustering is None else clustering.design_effect,
        clustered_lower=None if clustered is None else clustered[0],
        clustered_upper=None if clustered is None else clustered[1],
    )


def _p_value(value: float | None) -> str:
    if value is None:
        return "no trials"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}"


def renamed(estimate: Estimate, suffix: str) -> Estimate:
    """For machine-readable rows: one metric column names the system or the difference."""
    return attrs.evolve(estimate, metric=f"{estimate.metric}.{suffix}")


def _kappa(name: str, part: ComparisonSlice, system: str) -> Estimate | None:
    if part.kappa is None:
        return None
    kappa = part.kappa.baseline if system == "baseline" else part.kappa.candidate
    return kappa_figure(name, kappa, weighted=ORDINAL_MARK in part.paired)


def _machine_rows(slices: Iterable[Slice]) -> list[Estimate]:
    out: list[Estimate] = []
    for kind, name, part in slices:
        for metric, paired in part.paired.items():
            out.append(renamed(rate_estimate(kind, name, metric, paired.baseline), "baseline"))
            out.append(renamed(rate_estimate(kind, name, metric, paired.candidate), "candidate"))
            out.append(renamed(_difference(kind, name, metric, paired), "difference"))
        for metric, unpaired in part.unpaired.items():
            out.append(renamed(rate_estimate(kind, name, metric, unpaired.baseline), "baseline"))
            out.append(renamed(rate_estimate(kind, name, metric, unpaired.candidate), "candidate"))
        for system in _SYSTEMS:
            kappa = _kappa(name, part, system) if kind == "field" else None
            if kappa is not None:
                out.append(renamed(kappa, system))
    return out


DIFFERENCE_SCALES: Final = (0.05, 0.1, 0.2, 0.5)
"""Half-widths of a difference plot's axis (±5 to ±50 points): the smallest that holds every
interval and margin is used; at ±50 points, on a 360 px axis, 2 points are still 7 px."""

_GATE_SLICE_KINDS: Final = {"field": "field", "type": "field_type", "stratum": "stratum"}


def gate_margins(gates: Sequence[Gate]) -> dict[tuple[str, str, str], tuple[Margin, ...]]:
    """Each difference gate's threshold, by (slice kind, name, metric)."""
    out: dict[tuple[str, str, str], tuple[Margin, ...]] = {}
    for gate in gates:
        if not gate.is_difference:
            continue
        kind, _, name = gate.slice.partition(":")
        key = (_GATE_SLICE_KINDS.get(kind, "overall"), name, gate.metric)
        label = f"gate {gate.number} ({gate.level}): {gate.rule} {gate.threshold:g}"
        out[key] = (*out.get(key, ()), Margin(gate.threshold, label))
    return out


def difference_scale(rows: Iterable[PlotRow]) -> float:
    """The smallest of :data:`DIFFERENCE_SCALES` that holds every interval and margin."""
    reach = 0.0
    for row in rows:
        numbers = [margin.value for margin in row.margins]
        if row.estimate.value is not None:
            numbers.append(row.estimate.value)
        if row.estimate.interval is not None:
            numbers += row.estimate.interval
        reach = max([reach, *map(abs, numbers)])
    return next((scale for scale in DIFFERENCE_SCALES if reach <= scale), DIFFERENCE_SCALES[-1])


def difference_note(level: str) -> str:
    """How to read a difference plot's row (the start of each one's note)."""
    return (
        f"candidate minus baseline, in points; line = Newcombe's {level} paired interval "
        "(case-clustered where a row pools fields)"
    )


def difference_row(
    kind: str,
    name: str,
    metric: str,
    estimate: Estimate,
    margins: Mapping[tuple[str, str, str], tuple[Margin, ...]],
) -> PlotRow:
    """A slice's row in a difference plot: its label, its difference, its gates' margins."""
    return PlotRow(slice_label(kind, name), estimate, kind, margins.get((kind, name, metric), ()))


def _difference_plots(slices: list[Slice], gates: Sequence[Gate], level: str) -> list[Plot]:
    margins = gate_margins(gates)
    panels: list[tuple[str, str, str, str, tuple[PlotRow, ...]]] = []
    note = difference_note(level) + "; right of 0 the candidate has the higher rate{}."
    for metric in _CORE_PAIRED:
        rows = tuple(
            difference_row(
                kind, name, metric, _difference(kind, name, metric, part.paired[metric]), margins
            )
            for kind, name, part in slices
            if metric in part.paired
        )
        better = " (for this error metric, left of 0 is better)" if metric in ERROR_METRICS else ""
        panels.append((f"difference-{metric}", title(metric), note.format(better), metric, rows))

    def mixed_rows(wanted: Callable[[str], bool]) -> tuple[PlotRow, ...]:
        # One panel of several metrics: each row names its slice and its metric.
        return tuple(
            PlotRow(
                f"{slice_label(kind, name)}: {title(metric)}",
                _difference(kind, name, metric, paired),
                f"{kind} {name}",
                margins.get((kind, name, metric), ()),
            )
            for kind, name, part in slices
            for metric, paired in part.paired.items()
            if wanted(metric)
        )

    typed = mixed_rows(lambda metric: metric in TYPE_METRICS)
    if typed:
        typed_note = note.format("; squares are errors, where left of 0 is better")
        panels.append(("difference-type_metrics", "Type-specific metrics", typed_note, "", typed))
    labelled = mixed_rows(is_plugin_metric)
    if labelled:
        plugin_note = note.format("; the plugin, not chartscore, defines each label")
        panels.append(("difference-plugin_metrics", "Plugin metrics", plugin_note, "", labelled))
    # One scale for every panel, so differences compare from panel to panel.
    scale = difference_scale(row for panel in panels for row in panel[4])
    cut = (
        f" The axis runs from -{scale * 100:g} to +{scale * 100:g} points; an interval "
        "reaching beyond it ends in an arrow (its numbers are on the right)."
    )
    plots = []
    for key, heading, text, metric, rows in panels:
        declared = [margin.label for row in rows for margin in row.margins]
        said = (
            f" Dashed purple line: a declared margin ({'; '.join(declared)})." if declared else ""
        )
        plots.append(Plot(key, heading, text + said + cut, metric, (-scale, scale), rows, 0.0))
    return plots


def p_text(kind: str, paired: PairedMetricResult) -> str:
    """The McNemar p shown: pooled rows, Durkalski's case-clustered test; field rows, mid-p."""
    clustering = paired.clustering
    return _p_value(paired.mid_p if clustering is None or kind == "field" else clustering.p)


PAIRED_COLUMNS: Final = (
    Column("metric"),
    Column("baseline"),
    Column("candidate"),
    Column("baseline only"),
    Column("candidate only"),
    Column("difference"),
    Column("McNemar p"),
)
"""The paired table's columns, in a comparison and in a shared one."""


def _paired_table(slices: list[Slice], level: str) -> Table:
    rows = tuple(
        Row(
            kind,
            name,
            (
                *side_cells(kind, name, metric, paired),
                paired.baseline_only,
                paired.candidate_only,
                _difference(kind, name, metric, paired),
                p_text(kind, paired),
            ),
        )
        for kind, name, part in slices
        for metric, paired in part.paired.items()
    )
    return Table(
        "paired",
        "Paired metrics (the same gold rows for both systems)",
        f"Rates: successes/trials, rate, [{level} interval]. 'baseline only' and 'candidate "
        "only' count the rows just one system got right (errors, for an error metric); the "
        "difference is candidate minus baseline with Newcombe's paired interval. McNemar p: "
        "the mid-p in field rows; in rows that pool fields, Durkalski's case-clustered test "
        "(and the case-clustered intervals).",
        "slice",
        PAIRED_COLUMNS,
        rows,
        repeat=1,
    )


def _unpaired_table(slices: list[Slice]) -> Table | None:
    rows = tuple(
        Row(kind, name, _shown_sides(side_cells(kind, name, metric, unpaired), part))
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
        repeat=1,
    )


def _shown_sides(
    cells: tuple[str, Estimate, Estimate], part: ComparisonSlice
) -> tuple[str, Estimate, Estimate]:
    # Evidence support reads "not provided" for a system none of whose answers carried evidence.
    heading, baseline, candidate = cells
    provided = part.unpaired.get("evidence_provided")
    if baseline.metric != "evidence_support" or provided is None:
        return cells
    if nothing_provided(provided.baseline):
        baseline = shown_support(baseline)
    if nothing_provided(provided.candidate):
        candidate = shown_support(candidate)
    return heading, baseline, candidate


def _any_not_provided(slices: list[Slice]) -> bool:
    # Whether some system's evidence support reads "not provided" in some slice.
    found = (part.unpaired.get("evidence_provided") for _, _, part in slices)
    return any(
        nothing_provided(sides.baseline) or nothing_provided(sides.candidate)
        for sides in found
        if sides is not None
    )


def _kappa_table(slices: list[Slice], level: str) -> Table | None:
    rows = []
    for kind, name, part in slices:
        baseline, candidate = _kappa(name, part, "baseline"), _kappa(name, part, "candidate")
        if kind == "field" and baseline is not None and candidate is not None:
            cells = (
                kappa_name(baseline.weighted),
                baseline,
                baseline.total_count,
                candidate,
                candidate.total_count,
            )
            rows.append(Row(kind, name, cells))
    if not rows:
        return None
    return Table(
        "kappa",
        "Kappa (higher is better)",
        f"Each system's own kappa against gold [{level} interval] over its pairs: Cohen's "
        "kappa, and on an ordinal field weighted kappa (quadratic); undefined with no "
        "pairs or when gold and answers all fall in one category. Side by side only: the pairs "
        "differ between the systems, so there is no paired test.",
        "field",
        (
            Column("statistic"),
            Column("baseline kappa", "kappa"),
            Column("baseline pairs"),
            Column("candidate kappa", "kappa"),
            Column("candidate pairs"),
        ),
        tuple(rows),
    )


def count_table(
    slices: Iterable[tuple[str, str, _Part]], count: Callable[[_Part, str, str], int | None]
) -> Table:
    """The "Rows per slice" table: gold rows, then each system's answered, abstained, missing.

    A comparison and a shared comparison show this same table; they differ only in
    where a slice keeps a system's counts, which ``count(part, system, name)`` reads.
    """
    rows = tuple(
        Row(
            kind,
            name,
            (
                part.counts["field_count"],
                *(count(part, system, counted) for system in _SYSTEMS for counted in _COUNTS),
            ),
        )
        for kind, name, part in slices
    )
    columns = (
        Column("gold rows"),
        *(
            Column(f"{system} {counted.removesuffix('_count')}")
            for system in _SYSTEMS
            for counted in _COUNTS
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


def _system_count(part: ComparisonSlice, system: str, name: str) -> int:
    return (part.baseline_counts if system == "baseline" else part.candidate_counts)[name]


_COUNTS: Final = ("answered_count", "abstained_count", "missing_count")


def systems_text(names: SystemNames | None) -> str:
    """``v2 (candidate) against v1 (baseline)``; an unnamed system is called by its role."""
    baseline = "baseline" if names is None or names.baseline is None else names.baseline
    candidate = "candidate" if names is None or names.candidate is None else names.candidate
    return f"{candidate} (candidate) against {baseline} (baseline)"


def comparison_title(kind: str, names: SystemNames | None) -> str:
    """A comparison's title: ``chartscore comparison: v2 (candidate) against v1 (baseline)``."""
    return kind if names is None else f"{kind}: {systems_text(names)}"


def header_facts(
    level: str,
    gates: Sequence[Gate],
    verdicts: GateResults | None,
    date: str | None,
) -> tuple[tuple[str, str], ...]:
    """The lines a committee reads first: the date, the level, each margin, the gates' verdict."""
    facts: list[tuple[str, str]] = []
    if date is not None:
        facts.append(("date", date))
    facts.append(("confidence", f"{level} intervals"))
    facts += [("margin", line) for line in margin_lines(gates, level)]
    if verdicts is not None:
        facts.append(("verdict", verdict(verdicts)))
        facts += [("gate", verdict_line(result)) for result in verdicts.results]
    return tuple(facts)


def _answer_facts(comparison: Comparison) -> tuple[tuple[str, str], ...]:
    """Each system's answers, skipped predictions and the missing-rows warning, as header lines."""
    overall = comparison.overall
    facts = tuple(
        (
            system,
            f"{counts['answered_count']} answered, {counts['abstained_count']} abstained, "
            f"{counts['missing_count']} missing",
        )
        for system, counts in (
            ("baseline", overall.baseline_counts),
            ("candidate", overall.candidate_counts),
        )
    )
    ignored = comparison.ignored_prediction_count
    if ignored is not None:
        facts += (
            (
                "ignored",
                f"predictions not in gold, skipped: baseline {ignored.baseline}, "
                f"candidate {ignored.candidate}",
            ),
        )
    if missing_counts_differ(overall):
        facts += (
            (
                "warning",
                f"the systems' missing rows differ by more than {MISSING_GAP_POINTS} points of "
                "gold rows: a missing row counts against agreement, so the differences mix "
                "coverage with agreement (docs/compare.md)",
            ),
        )
    return facts


_ONE_FIELD_PER_TYPE: Final = (
    "Each field type has exactly one field here, so the tables and plots show no type rows: "
    "they would repeat their field's row (the CSV keeps them)."
)


def comparison_view(
    comparison: Comparison,
    *,
    sort: str = "name",
    gates: Sequence[Gate] = (),
    verdicts: GateResults | None = None,
    date: str | None = None,
) -> View:
    """Lay out a comparison for people: difference plots, paired and unpaired tables, counts.

    Args:
        comparison: A value-free comparison.
        sort: ``"name"`` or ``"rate"``: fields and types by the candidate's
            normalized agreement rate, lowest first (no trials last).
        gates: Release gates; each difference rule (``min_difference_lower``,
            ``max_difference_upper``) is drawn on its slice's row of its
            metric's difference plot (a non-inferiority margin) and named in the header.
        verdicts: The gates checked on this comparison: the header gives their verdict.
        date: The date the header shows (``YYYY-MM-DD``, checked by the caller), or None.

    Raises:
        ChartscoreError: ``usage`` when ``comparison`` is not exactly a Comparison or
            ``sort`` is not one of :data:`SORTS`, each by its exact type.
    """
    if type(comparison) is not Comparison:
        raise ChartscoreError(ErrorCode.USAGE)
    sort = word_option(sort, SORTS)
    level = level_text(comparison.confidence)
    every_slice = _slices(comparison, sort)
    slices = every_slice
    folded: tuple[str, ...] = ()
    if len(comparison.by_field_type) == len(comparison.by_field):  # one field per type
        slices = [part for part in every_slice if part[0] != "field_type"]
        folded = (_ONE_FIELD_PER_TYPE,)
    overall = comparison.overall
    facts: tuple[tuple[str, str], ...] = ()
    if comparison.names is not None:
        facts += (("systems", systems_text(comparison.names)),)
    facts += header_facts(level, gates, verdicts, date)
    facts += (
        ("comparison", f"{COMPARISON_FORMAT}, format version {COMPARISON_FORMAT_VERSION}"),
        ("scorer", f"chartscore {comparison.scorer_version}"),
        (
            "gold rows",
            f"{overall.counts['field_count']} in {len(comparison.by_field)} fields: "
            f"{overall.counts['answerable_count']} answerable, "
            f"{overall.counts['unanswerable_count']} unanswerable",
        ),
    )
    facts += _answer_facts(comparison)
    facts += plugin_facts(comparison.plugins)
    order_note = "fields and types by name"
    if sort == "rate":
        order_note = "fields and types by the candidate's normalized agreement rate, lowest first"
    facts += (("order", order_note),)
    tables = [
        _paired_table(slices, level),
        _unpaired_table(slices),
        _kappa_table(slices, level),
        count_table(slices, _system_count),
    ]
    for system, section in comparison.run.items():  # each system's cost beside its accuracy
        facts += run_facts(section, system)
        tables.append(run_table(section, system))
    present = {m for _, _, part in slices for m in (*part.paired, *part.unpaired)}
    if any(part.kappa is not None for _, _, part in slices):
        present.add("kappa")
    order = [
        *PAIRED_METRICS,
        "wrong_type_answer",
        "evidence_support",
        "evidence_provided",
        "item_precision",
        "item_recall",
        "kappa",
    ]
    return View(
        title=comparison_title("chartscore comparison", comparison.names),
        facts=facts,
        plots=tuple(_difference_plots(slices, gates, level)),
        tables=tuple(table for table in tables if table is not None),
        estimates=tuple(_machine_rows(every_slice)),
        definitions=(
            *(definition(m) for m in order if m in present),
            *plugin_definitions(comparison.plugins, present),
        ),
        notes=(
            *folded,
            *((NOT_PROVIDED_NOTE,) if _any_not_provided(slices) else ()),
            "A paired comparison: both systems answered the same gold rows, so the difference "
            "and McNemar's test use the rows where they disagree (docs/compare.md).",
            interval_note(level),
        ),
        confidence=comparison.confidence,
    )
