"""The adapter from a report (or a shared report) to a :class:`View`.

It decides what a report shows and in which order; the renderers only lay it
out. Rows run fields, then field types, then all fields. Fields (and types)
are ordered by name, or by normalized agreement rate, lowest first, so the
fields that need attention come first.

A :class:`~chartscore.documents.shared_report.SharedReport` has the same shape with
``None`` for every suppressed number, so the same adapter lays it out: a
metric with a suppressed part is a suppressed estimate (no rate, no
interval), a suppressed count is a ``None`` cell, a withheld kappa is a
suppressed kappa, and the header and notes state the disclosure rule. With
``sort="rate"`` a suppressed rate sorts last, with the slices without trials.
Its labels' metrics, their F1, the macro F1 and the coefficients (AC1 or AC2,
alpha) are laid out as a report's: a withheld one is suppressed, never
undefined, where the shared report could not have shown it. It has no pooled
("all labels") label rows: share withholds them (docs/disclosure.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final, Protocol

import attrs

from chartscore.disclosure.rule import IGNORED_COUNT, SHARED_FORMAT
from chartscore.documents.gates import Counted
from chartscore.documents.plugin_layout import PluginStamp
from chartscore.documents.report import (
    REPORT_FORMAT,
    REPORT_FORMAT_VERSION,
    CoefficientResult,
    MagnitudeResult,
    Report,
    SliceReport,
    UncertaintyResult,
)
from chartscore.documents.shared_figures import SharedMagnitude, SharedUncertainty
from chartscore.documents.shared_labels import SharedCoefficient, SharedLabel
from chartscore.documents.shared_quantities import hidden_counts
from chartscore.documents.shared_report import SharedReport, SharedSlice
from chartscore.documents.tally import ERROR_METRICS, LABEL_METRICS, TYPE_METRICS
from chartscore.errors import ChartscoreError, ErrorCode, word_option
from chartscore.render._numbers import count_text, interval_text
from chartscore.render.definitions import (
    COEFFICIENTS,
    LEGEND_ORDER,
    METRIC_ORDER,
    WEIGHTED_KAPPA,
    definition,
    interval_note,
    plugin_definitions,
    plugin_order,
    title,
)
from chartscore.render.evidence_view import NOT_PROVIDED_NOTE, not_provided, support_shown
from chartscore.render.report_tables import (
    RATE_CELLS,
    count_table,
    kappa_table,
    plugin_metric_table,
    type_metric_table,
)
from chartscore.render.run_view import run_facts, run_table
from chartscore.render.view import (
    Cell,
    Column,
    Estimate,
    Kind,
    LabelText,
    Plot,
    PlotRow,
    Row,
    Table,
    View,
    level_text,
    ordered_slices,
    slice_label,
)

SORTS: Final = ("name", "rate")
"""Row orders: by name, or by normalized agreement rate (lowest first)."""
SORT_METRIC: Final = "normalized_agreement"

AGREEMENT_METRICS: Final = (
    "exact_agreement",
    "normalized_agreement",
    "abstention_correctness",
    "evidence_support",
    "evidence_provided",
)
"""The core metrics where higher is better, in the agreement table."""
ERROR_TABLE_METRICS: Final = ("answerable_abstention", "unanswerable_answer", "wrong_type_answer")
"""The core error metrics, in their own table: lower is better."""

_RATE_CELLS = RATE_CELLS
_ERROR_CELLS = "Each cell: errors/trials, rate, [{level} interval]; rates in percent."

_ONE_FIELD_PER_TYPE = (
    "Each field type has exactly one field here, so the tables and plots show no type rows: "
    "they would repeat their field's row (the CSV keeps them)."
)


class Binomial(Counted, Protocol):
    """A binomial metric of a report, a shared report (``None``: suppressed) or a comparison."""

    @property
    def interval(self) -> tuple[float, float] | None: ...


class KappaLike(Protocol):
    """A field's kappa in a report, a shared report (``pairs`` None: suppressed) or, one
    system's, in a comparison."""

    @property
    def value(self) -> float | None: ...

    @property
    def interval(self) -> tuple[float, float] | None: ...

    @property
    def pairs(self) -> int | None: ...


class SliceLike(Protocol):
    """A slice of a report or a shared report: counts (``None``: suppressed), metrics, kappa."""

    @property
    def counts(self) -> Mapping[str, int | None]: ...

    @property
    def metrics(self) -> Mapping[str, Binomial]: ...

    @property
    def kappa(self) -> KappaLike | None: ...


ReportLike = Report | SharedReport
"""What :func:`report_view` lays out."""

Slice = tuple[str, str, SliceLike]
"""(slice kind, name, slice)."""


def binomial_rate(result: Binomial) -> float | None:
    """``success_count / total_count``; None with no trials or a suppressed part."""
    k, n = result.success_count, result.total_count
    if k is None or n is None or n == 0:
        return None
    return k / n


def metric_estimate(
    kind: str, name: str, metric: str, part: SliceLike, level: str = "95%"
) -> Estimate:
    """The estimate of one binomial metric of a slice (``level``: the report's, ``95%``)."""
    return rate_estimate(kind, name, metric, part.metrics[metric], level)


def rate_estimate(
    kind: str, name: str, metric: str, result: Binomial, level: str = "95%"
) -> Estimate:
    """The estimate of one binomial metric's result (of a report or one side of a comparison).

    A metric with a suppressed part (a shared report's ``None``) is a
    suppressed estimate: no rate and no interval, whatever the document holds.
    """
    suppressed = result.success_count is None or result.total_count is None
    interval = None if suppressed else result.interval
    low, high = interval if interval is not None else (None, None)
    # A pooled slice's case-clustered figures (none in a field slice or where suppressed).
    clustered = None if suppressed else getattr(result, "clustered_interval", None)
    # A shared report's bound of a suppressed rate (docs/disclosure.md, "Provable bounds").
    bound = getattr(result, "rate_bound", None) if suppressed else None
    return Estimate(
        slice=kind,
        name=name,
        metric=metric,
        kind=Kind.RATE,
        success_count=result.success_count,
        total_count=result.total_count,
        value=binomial_rate(result),
        lower=low,
        upper=high,
        error=metric in ERROR_METRICS,
        suppressed=suppressed,
        design_effect=None if clustered is None else getattr(result, "design_effect", None),
        clustered_lower=None if clustered is None else clustered[0],
        clustered_upper=None if clustered is None else clustered[1],
        bound=None if bound is None else (bound.lower, bound.upper),
        bound_kind="" if bound is None else bound.kind,
        bound_level=level,
        # A shared report's published ranges of its suppressed counts (docs/disclosure.md).
        success_range=getattr(result, "success_range", None) if suppressed else None,
        total_range=getattr(result, "total_range", None) if suppressed else None,
    )


ORDINAL_MARK: Final = "ordinal_within_one"
"""A metric only ordinal fields have: its slice's kappa is the quadratic-weighted one."""


def kappa_estimate(name: str, part: SliceLike, *, shared: bool = False) -> Estimate | None:
    """The kappa estimate of a field slice, or None if the field has no kappa.

    In a shared report (``shared``), a kappa without a value is withheld
    (suppressed) unless it had no pairs: the shared report does not tell a
    withheld kappa from an undefined one, so it is never called undefined.
    """
    if part.kappa is None:
        return None
    return kappa_figure(name, part.kappa, weighted=ORDINAL_MARK in part.metrics, shared=shared)


def kappa_figure(name: str, kappa: KappaLike, *, weighted: bool, shared: bool = False) -> Estimate:
    """A field's kappa as an estimate: a report's, a shared report's or one system's of a
    comparison (``weighted``: the quadratic-weighted kappa of an ordinal field); ``shared``
    as for :func:`kappa_estimate`."""
    suppressed = kappa.pairs is None or (shared and kappa.value is None and kappa.pairs != 0)
    interval = None if kappa.pairs is None else kappa.interval
    low, high = interval if interval is not None else (None, None)
    return Estimate(
        slice="field",
        name=name,
        metric="kappa",
        kind=Kind.KAPPA,
        success_count=None,
        total_count=kappa.pairs,
        value=None if suppressed else kappa.value,
        lower=low,
        upper=high,
        suppressed=suppressed,
        weighted=weighted,
    )


def _slices(report: ReportLike, sort: str) -> list[Slice]:
    def rate(part: SliceLike) -> float | None:
        return binomial_rate(part.metrics[SORT_METRIC])

    pooled = ordered_slices(report.overall, report.by_field, report.by_field_type, sort, rate)
    return [*pooled, *_stratum_slices(report)]


def _stratum_slices(report: ReportLike) -> list[Slice]:
    # A report's stratum slices by name, each followed by its type slices (a shared report
    # has none: share withholds them).
    strata: Mapping[str, SliceLike] = getattr(report, "by_stratum", {})
    by_type: Mapping[str, Mapping[str, SliceLike]] = getattr(report, "by_stratum_field_type", {})
    out: list[Slice] = []
    for name, part in sorted(strata.items()):
        out.append(("stratum", name, part))
        out += [
            ("stratum", f"{name}/type:{kind}", typed)
            for kind, typed in sorted(by_type.get(name, {}).items())
        ]
    return out


def _stratum_type(kind: str, name: str) -> bool:
    return kind == "stratum" and "/" in name


def one_field_per_type(report: ReportLike) -> bool:
    """True when every field type has exactly one field, so type rows repeat field rows.

    Each field has one type and each type slice at least one field, so as many
    types as fields means one field each (the pigeonhole principle).
    """
    return len(report.by_field_type) == len(report.by_field)


def score_estimate(
    kind: str, name: str, metric: str, value: float | None, label: str = ""
) -> Estimate:
    """An F1 figure (``f1``, ``micro_f1``, ``macro_f1``): a value with no counts or interval."""
    return Estimate(kind, name, metric, Kind.SCORE, None, None, value, None, None, label=label)


def coefficient_estimate(name: str, metric: str, coefficient: CoefficientResult) -> Estimate:
    """AC1, AC2 or alpha of a field slice, drawn like kappa (pairs in ``total_count``)."""
    low, high = coefficient.interval if coefficient.interval is not None else (None, None)
    return Estimate(
        "field", name, metric, Kind.KAPPA, None, coefficient.pairs, coefficient.value, low, high
    )


def shared_score_estimate(
    kind: str, name: str, metric: str, value: float | None, *, hidden: bool, label: str = ""
) -> Estimate:
    """A shared report's F1 figure: without a value, suppressed where a count it needs is
    ``hidden`` (it was withheld), else undefined (its counts give none)."""
    estimate = score_estimate(kind, name, metric, value, label)
    return attrs.evolve(estimate, suppressed=value is None and hidden)


def shared_coefficient_estimate(
    name: str, metric: str, coefficient: SharedCoefficient, *, kappa_shown: bool
) -> Estimate:
    """A shared report's AC1, AC2 or alpha (pairs in ``total_count``; None: suppressed).

    Like a shared kappa (:func:`kappa_estimate`): a coefficient without a value
    is suppressed unless it had no pairs, or the field's kappa value is shown
    (the coefficients are shown wherever kappa's value is, so then it is
    undefined); the shared report does not otherwise tell withheld from undefined.
    """
    pairs = coefficient.pairs
    suppressed = pairs is None or (coefficient.value is None and pairs != 0 and not kappa_shown)
    interval = None if suppressed else coefficient.interval
    low, high = interval if interval is not None else (None, None)
    value = None if suppressed else coefficient.value
    return Estimate(
        "field", name, metric, Kind.KAPPA, None, pairs, value, low, high, suppressed=suppressed
    )


def _f1_counts_shown(label: SharedLabel) -> bool:
    # A label's F1 needs its true positives, gold positives and answered positives.
    sensitivity, ppv = label.metrics["sensitivity"], label.metrics["ppv"]
    counts = (sensitivity.success_count, sensitivity.total_count, ppv.total_count)
    return None not in counts


def shared_label_estimates(kind: str, name: str, part: SharedSlice, level: str) -> list[Estimate]:
    """A shared slice's labels (four rates and F1 each), macro F1 and coefficients.

    A suppressed label rate shows its bound where it has one; an F1 (macro F1)
    without a value is suppressed where one of its (any label's) counts is
    hidden. No pooled label rows: a shared report has none.
    """
    out: list[Estimate] = []
    if part.labels is not None:
        for label, result in part.labels.items():
            for metric in LABEL_METRICS:
                estimate = rate_estimate(kind, name, metric, result.metrics[metric], level)
                out.append(attrs.evolve(estimate, label=label))
            hidden = not _f1_counts_shown(result)
            out.append(
                shared_score_estimate(kind, name, "f1", result.f1, hidden=hidden, label=label)
            )
        hidden = not all(_f1_counts_shown(result) for result in part.labels.values())
        macro = part.scores.get("macro_f1")
        out.append(shared_score_estimate(kind, name, "macro_f1", macro, hidden=hidden))
    kappa_shown = part.kappa is not None and part.kappa.value is not None
    for metric, coefficient in part.coefficients.items():
        out.append(shared_coefficient_estimate(name, metric, coefficient, kappa_shown=kappa_shown))
    return out


def _label_estimates(kind: str, name: str, part: SliceLike, level: str = "95%") -> list[Estimate]:
    # A slice's label figures, coefficients and validation figures.
    out: list[Estimate] = []
    if isinstance(part, SharedSlice):
        return [
            *shared_label_estimates(kind, name, part, level),
            *_shared_figure_estimates(name, part),
        ]
    if not isinstance(part, SliceReport):
        return out
    if "sensitivity" in part.metrics:
        out.append(score_estimate(kind, name, "micro_f1", part.micro_f1))
        out.append(score_estimate(kind, name, "pooled_kappa", part.pooled_kappa))
    for label, result in (part.labels or {}).items():
        for metric in LABEL_METRICS:
            estimate = rate_estimate(kind, name, metric, result.metrics[metric])
            out.append(attrs.evolve(estimate, label=label))
        out.append(score_estimate(kind, name, "f1", result.f1, label))
    if part.labels is not None:
        out.append(score_estimate(kind, name, "macro_f1", part.macro_f1))
    for metric, coefficient in (part.coefficients or {}).items():
        out.append(coefficient_estimate(name, metric, coefficient))
    if part.magnitude is not None:
        out += magnitude_estimates(name, part.magnitude)
    if part.uncertainty is not None:
        out += uncertainty_estimates(name, part.uncertainty)
    return out


RISK_COVERAGE_LABELS: Final = tuple(f"{10 * k}%" for k in range(1, 11))
"""The ``label`` of each risk-coverage estimate: the share of rows kept, most certain first."""


def uncertainty_estimates(name: str, uncertainty: UncertaintyResult) -> list[Estimate]:
    """AUROC (``total_count``: rows with an uncertainty), Brier score, rows without one,
    and agreement among the most certain 10%, ..., 100% of the rows (``label``)."""
    sums = uncertainty.sums
    out = _uncertainty_figures(
        name,
        rows=sums.rows,
        auroc=uncertainty.auroc,
        auroc_interval=uncertainty.auroc_interval,
        brier_score=uncertainty.brier_score,
        without=sums.without,
    )
    for label, step in zip(RISK_COVERAGE_LABELS, uncertainty.risk_coverage, strict=True):
        estimate = rate_estimate("field", name, "risk_coverage", step)
        out.append(attrs.evolve(estimate, label=label))
    return out


def _uncertainty_figures(
    name: str,
    *,
    rows: int | None,
    auroc: float | None,
    auroc_interval: tuple[float, float] | None,
    brier_score: float | None,
    without: int | None,
    auroc_hidden: bool = False,
    brier_hidden: bool = False,
) -> list[Estimate]:
    # AUROC, Brier score and the rows without an uncertainty; a withheld count is suppressed.
    low, high = auroc_interval or (None, None)
    return [
        Estimate(
            "field",
            name,
            "uncertainty_auroc",
            Kind.KAPPA,
            None,
            rows,
            auroc,
            low,
            high,
            suppressed=auroc_hidden,
        ),
        Estimate(
            "field",
            name,
            "brier_score",
            Kind.SCORE,
            None,
            rows,
            brier_score,
            None,
            None,
            True,
            brier_hidden,
        ),
        Estimate(
            "field",
            name,
            "without_uncertainty",
            Kind.SCORE,
            None,
            without,
            None,
            None,
            None,
            suppressed=without is None,
        ),
    ]


FieldCells = Mapping[str, Estimate]
"""One field's figures in a per-field table, by the table's own name for each."""


def _by_field(
    estimates: Iterable[Estimate], name_of: Callable[[Estimate], str | None]
) -> dict[str, dict[str, Estimate]]:
    # Each field's estimates that a per-field table shows (``name_of``: its name in the
    # table, None for one it does not show), in the estimates' order.
    rows: dict[str, dict[str, Estimate]] = {}
    for e in estimates:
        name = name_of(e)
        if name is not None:
            rows.setdefault(e.name, {})[name] = e
    return rows


def _field_rows(
    rows: Mapping[str, FieldCells], cells: Callable[[str, FieldCells], tuple[Cell, ...]]
) -> tuple[Row, ...]:
    # A per-field table's rows: ``cells`` lays out one field's figures (field id, figures).
    return tuple(Row("field", name, cells(name, found)) for name, found in rows.items())


def _uncertainty_name(e: Estimate) -> str | None:
    if e.metric in ("uncertainty_auroc", "brier_score", "without_uncertainty"):
        return e.metric
    if e.metric == "risk_coverage" and e.label in ("10%", "50%", "100%"):
        return e.label
    return None


def _uncertainty_cells(_: str, cells: FieldCells) -> tuple[Cell, ...]:
    return (
        cells["uncertainty_auroc"].total_count,
        cells["without_uncertainty"].total_count,
        cells["uncertainty_auroc"],
        cells["brier_score"],
        cells["10%"],
        cells["50%"],
        cells["100%"],
    )


def _uncertainty_table(estimates: list[Estimate], level: str) -> Table | None:
    rows = {
        name: cells
        for name, cells in _by_field(estimates, _uncertainty_name).items()
        if cells["uncertainty_auroc"].total_count != 0
    }
    if not rows:
        return None
    table_rows = _field_rows(rows, _uncertainty_cells)
    columns = (
        Column("rows"),
        Column("without"),
        Column(title("uncertainty_auroc"), "uncertainty_auroc"),
        Column(title("brier_score"), "brier_score", True),
        Column("agreement, most certain 10%", "risk_coverage"),
        Column("50%", "risk_coverage"),
        Column("all", "risk_coverage"),
    )
    return Table(
        "uncertainty",
        "Declared uncertainty (does it separate right answers from wrong ones?)",
        "Over answered answerable rows with an uncertainty (rows; without: rows that declared "
        f"none): AUROC of 1 - uncertainty for normalized agreement [{level} DeLong] (0.5 is "
        "no better than chance), Brier score of 1 - uncertainty (lower is better), and "
        "agreement among the most certain rows when the others abstain.",
        "field",
        columns,
        table_rows,
    )


def magnitude_estimates(name: str, magnitude: MagnitudeResult) -> list[Estimate]:
    """A number or date field's error figures (pairs, or gold rows, in ``total_count``)."""

    def figure(
        metric: str, value: float | None, bounds: tuple[float, float] | None, n: int
    ) -> Estimate:
        low, high = bounds if bounds is not None else (None, None)
        error = metric != "chance_level"
        return Estimate("field", name, metric, Kind.MAGNITUDE, None, n, value, low, high, error)

    pairs = magnitude.pairs
    return [
        figure("mean_absolute_error", magnitude.mean_absolute_error, None, pairs),
        figure("mean_signed_error", magnitude.bias, magnitude.bias_interval, pairs),
        figure("limits_of_agreement", magnitude.bias, magnitude.limits_of_agreement, pairs),
        figure("chance_level", magnitude.chance_level, None, magnitude.gold_rows),
    ]


def _shared_figure_estimates(name: str, part: SliceLike) -> list[Estimate]:
    # A shared report's validation figures: a withheld figure (or count) is suppressed.
    out: list[Estimate] = []
    magnitude = getattr(part, "magnitude", None)
    if isinstance(magnitude, SharedMagnitude):
        out += shared_magnitude_estimates(name, magnitude)
    uncertainty = getattr(part, "uncertainty", None)
    if isinstance(uncertainty, SharedUncertainty):
        out += shared_uncertainty_estimates(name, uncertainty)
    return out


def shared_magnitude_estimates(name: str, magnitude: SharedMagnitude) -> list[Estimate]:
    """:func:`magnitude_estimates` of a shared report: withheld figures are suppressed."""
    withheld = magnitude.withheld

    def figure(
        metric: str,
        value: float | None,
        bounds: tuple[float, float] | None,
        n: int | None,
        group: str,
    ) -> Estimate:
        low, high = bounds if bounds is not None else (None, None)
        error = metric != "chance_level"
        suppressed = group in withheld or n is None
        return Estimate(
            "field", name, metric, Kind.MAGNITUDE, None, n, value, low, high, error, suppressed
        )

    pairs = magnitude.pairs
    return [
        figure(
            "mean_absolute_error", magnitude.mean_absolute_error, None, pairs, "mean_absolute_error"
        ),
        figure(
            "mean_signed_error",
            magnitude.bias,
            magnitude.bias_interval,
            pairs,
            "mean_absolute_error",
        ),
        figure(
            "limits_of_agreement",
            magnitude.bias if magnitude.limits_of_agreement is not None else None,
            magnitude.limits_of_agreement,
            pairs,
            "limits_of_agreement",
        ),
        figure("chance_level", magnitude.chance_level, None, magnitude.gold_rows, "chance"),
    ]


def shared_uncertainty_estimates(name: str, uncertainty: SharedUncertainty) -> list[Estimate]:
    """:func:`uncertainty_estimates` of a shared report: withheld figures are suppressed."""
    withheld = uncertainty.withheld
    rows = uncertainty.rows
    out = _uncertainty_figures(
        name,
        rows=rows,
        auroc=uncertainty.auroc,
        auroc_interval=uncertainty.auroc_interval,
        brier_score=uncertainty.brier_score,
        without=uncertainty.without,
        auroc_hidden="auroc" in withheld or rows is None,
        brier_hidden="brier_score" in withheld or rows is None,
    )
    for label, step in zip(RISK_COVERAGE_LABELS, uncertainty.risk_coverage, strict=True):
        if step is None:
            estimate = Estimate(
                "field",
                name,
                "risk_coverage",
                Kind.RATE,
                None,
                None,
                None,
                None,
                None,
                suppressed=True,
            )
        else:
            estimate = rate_estimate("field", name, "risk_coverage", step)
        out.append(attrs.evolve(estimate, label=label))
    return out


def _magnitude_table(
    estimates: list[Estimate], units: Mapping[str, str], level: str
) -> Table | None:
    def magnitude_cells(name: str, cells: FieldCells) -> tuple[Cell, ...]:
        return (
            "days" if units.get(name) == "days" else "field's unit",
            cells["mean_absolute_error"].total_count,
            cells["mean_absolute_error"],
            cells["mean_signed_error"],
            _limits(cells["limits_of_agreement"]),
            cells["chance_level"],
            cells["chance_level"].total_count,
        )

    rows = _by_field(estimates, lambda e: e.metric if e.kind is Kind.MAGNITUDE else None)
    if not rows:
        return None
    table_rows = _field_rows(rows, magnitude_cells)
    columns = (
        Column("unit"),
        Column("pairs"),
        Column(title("mean_absolute_error"), "mean_absolute_error", True),
        Column(f"bias [{level} interval]", "mean_signed_error"),
        Column(title("limits_of_agreement"), "limits_of_agreement"),
        Column(title("chance_level"), "chance_level"),
        Column("gold rows"),
    )
    return Table(
        "magnitude",
        "Error magnitude (numbers and dates)",
        "Over answered answerable rows with a distance (pairs); errors are answer - gold. "
        "The chance level is the mean distance of gold from its median (over gold rows): "
        f"what a constant answer scores. Limits of agreement: Bland-Altman, bias -/+ z SD "
        f"(z of the {level} level).",
        "field",
        columns,
        table_rows,
    )


def _limits(estimate: Estimate) -> str:
    text = interval_text(estimate)
    return text or ("suppressed" if estimate.suppressed else "undefined")


def _estimates(
    slices: Iterable[Slice], *, shared: bool, plugins: tuple[str, ...] = (), level: str = "95%"
) -> list[Estimate]:
    out: list[Estimate] = []
    for kind, name, part in slices:
        out += [
            metric_estimate(kind, name, metric, part, level)
            for metric in (*METRIC_ORDER, *plugins)
            if metric in part.metrics
        ]
        kappa = kappa_estimate(name, part, shared=shared) if kind == "field" else None
        if kappa is not None:
            out.append(kappa)
        out += _label_estimates(kind, name, part, level)
    return out


_LABEL_COLUMNS: Final = (*LABEL_METRICS, "f1")
POOLED_LABELS: Final = "all labels"
"""The label cell of a slice's labels pooled (micro-average): a report's only, never shared."""
MACRO_AVERAGE: Final = "macro average"
"""The label cell of a field's macro F1 row (F1 column only)."""


def _label_row_key(e: Estimate) -> tuple[tuple[str, str, str, str], str] | None:
    # (row key, column) of a label figure: a slice's pooled row, a label's, the macro F1's.
    if e.metric == "micro_f1":
        return (e.slice, e.name, POOLED_LABELS, ""), "f1"
    if e.metric == "pooled_kappa":
        return (e.slice, e.name, POOLED_LABELS, ""), "pooled_kappa"
    if e.metric == "macro_f1":
        return (e.slice, e.name, MACRO_AVERAGE, ""), "f1"
    if e.metric in _LABEL_COLUMNS:
        return (e.slice, e.name, "label" if e.label else POOLED_LABELS, e.label), e.metric
    return None


def _label_table(estimates: list[Estimate], level: str, *, shared: bool = False) -> Table | None:
    # One row per (slice, label): a slice's pooled row (reports only), each declared label,
    # then the field's macro F1 (in the F1 column; the rate columns blank).
    rows: dict[tuple[str, str, str, str], dict[str, Estimate]] = {}
    for e in estimates:
        found = _label_row_key(e)
        if found is not None:
            rows.setdefault(found[0], {})[found[1]] = e
    if not rows:
        return None
    # A report's pooled rows add chart-review's pooled kappa; a shared report has none.
    with_kappa = any("pooled_kappa" in cells for cells in rows.values())
    metrics = (*_LABEL_COLUMNS, "pooled_kappa") if with_kappa else _LABEL_COLUMNS
    table_rows = tuple(
        Row(
            kind,
            name,
            (
                LabelText(label) if which == "label" else which,
                *(cells.get(metric, "") for metric in metrics),
            ),
        )
        for (kind, name, which, label), cells in rows.items()
    )
    pooled = any(key[2] == POOLED_LABELS for key in rows)
    note = _RATE_CELLS.format(level=level) + " F1 = 2 TP / (gold positives + answered positives)"
    if pooled:
        note += """; "all labels" pools the labels' counts (micro-average)"""
    if with_kappa:
        note += (
            "; pooled kappa is Cohen's kappa of those pooled cells (chart-review's), "
            "with no interval"
        )
    note += """; "macro average" is the mean F1 of the labels that have one."""
    if shared:
        note += (
            " A shared report does not pool the labels (their pooled counts are the core "
            "numbers in another form); an F1 is suppressed where one of its counts is."
        )
    note += (
        " Missing and abstained answers are not negatives: they fail sensitivity and "
        "specificity and are in neither PPV nor NPV."
    )
    columns = (Column("label"), *(Column(title(m), m) for m in metrics))
    return Table(
        "labels",
        "Per-label confusion metrics (higher is better)",
        note,
        "slice",
        columns,
        table_rows,
        repeat=1,
    )


def _units(report: ReportLike) -> dict[str, str]:
    return {
        name: part.magnitude.unit
        for name, part in report.by_field.items()
        if part.magnitude is not None
    }


def _coefficient_name(e: Estimate) -> str | None:
    # AC1 or AC2 (a field has one of them) and alpha, beside kappa.
    if e.kind is Kind.KAPPA and e.metric in COEFFICIENTS and e.metric != "kappa":
        return "ac" if e.metric != "alpha" else "alpha"
    return None


def _coefficient_cells(_: str, cells: FieldCells) -> tuple[Cell, ...]:
    return (
        cells.get("ac") or "not applicable",
        cells.get("alpha") or "not applicable",
        (cells.get("alpha") or cells["ac"]).total_count,
    )


def _coefficient_table(estimates: list[Estimate], level: str) -> Table | None:
    rows = _by_field(estimates, _coefficient_name)
    if not rows:
        return None
    table_rows = _field_rows(rows, _coefficient_cells)
    return Table(
        "coefficients",
        "Prevalence-robust agreement (higher is better)",
        "Gwet's AC1 (AC2: quadratic weights, ordinal fields) and Krippendorff's alpha "
        f"(nominal; ordinal for ordinal fields; interval for numbers and dates) [{level} interval] "
        "over kappa's pairs (numbers and dates: the error magnitude's pairs); beside kappa, "
        "which can fall to 0 at high prevalence.",
        "field",
        (Column("AC1 / AC2", "ac1"), Column("alpha", "alpha"), Column("pairs")),
        table_rows,
    )


def _metric_table(
    key: str, heading: str, level: str, metrics: tuple[str, ...], slices: list[Slice]
) -> Table:
    # A column of a metric no slice reports (evidence_provided in an older document) is left out.
    # ``level`` (the report's, "90%") words the note and each suppressed rate's bound.
    metrics = tuple(m for m in metrics if any(m in part.metrics for _, _, part in slices))
    columns = tuple(Column(title(m), m, m in ERROR_METRICS) for m in metrics)
    note = (_ERROR_CELLS if key == "errors" else _RATE_CELLS).format(level=level)
    rows = tuple(
        Row(
            kind,
            name,
            tuple(
                support_shown(metric_estimate(kind, name, m, part, level), part) for m in metrics
            ),
        )
        for kind, name, part in slices
    )
    return Table(key, heading, note, "slice", columns, rows)


def _plot_row(estimate: Estimate, *, with_metric: bool = False) -> PlotRow:
    label = slice_label(estimate.slice, estimate.name)
    if not with_metric:
        return PlotRow(label, estimate, estimate.slice)
    return PlotRow(
        f"{label}: {title(estimate.metric)}", estimate, f"{estimate.slice} {estimate.name}"
    )


def kappa_plot_row(estimate: Estimate) -> PlotRow:
    """A kappa's plot row, named ``weighted kappa (quadratic)`` on an ordinal field."""
    label = slice_label(estimate.slice, estimate.name)
    if estimate.weighted:
        label = f"{label}: {WEIGHTED_KAPPA}"
    return PlotRow(label, estimate, estimate.slice)


def _label_plot_row(estimate: Estimate) -> PlotRow:
    label = slice_label(estimate.slice, estimate.name)
    which = estimate.label or "all labels"
    return PlotRow(f"{label}: {which}", estimate, f"{estimate.slice} {estimate.name}")


def _risk_coverage_plot(estimates: list[Estimate], level: str) -> Plot | None:
    # Ten rows per field with rows that declared an uncertainty (a shared report's withheld
    # row count included): its steps, most certain 10% first.
    fields = {e.name for e in estimates if e.metric == "uncertainty_auroc" and e.total_count != 0}
    rows = tuple(
        PlotRow(f"{e.name}: {e.label}", e, f"field {e.name}")
        for e in estimates
        if e.metric == "risk_coverage" and e.name in fields
    )
    if not rows:
        return None
    note = (
        "Per field, agreement among the most certain 10%, 20%, ..., 100% of its rows with an "
        "uncertainty, the others abstaining: a reliable uncertainty keeps agreement high on "
        f"the most certain rows. Point = rate, line = {level} Wilson interval."
    )
    return Plot(
        "risk_coverage",
        "Risk and coverage (declared uncertainty)",
        note,
        "risk_coverage",
        (0.0, 1.0),
        rows,
    )


_TYPE_METRICS_NOTE: Final = (
    "Each field's type-specific metrics; squares are errors (lower is better)."
)
_PLUGIN_METRICS_NOTE: Final = (
    "Each plugin label's share of the answerable rows (the plugin defines the label)."
)


def _plots(
    estimates: list[Estimate],
    plugins: tuple[str, ...] = (),
    level: str = "95%",
    *,
    shared: bool = False,
) -> list[Plot]:
    plots = []
    line = f"line = {level} interval (case-clustered where a row pools fields)."
    for metric in (*AGREEMENT_METRICS, *ERROR_TABLE_METRICS):
        error = metric in ERROR_METRICS
        note = ("error rate: lower is better" if error else "higher is better") + (
            f"; point = rate, {line}"
        )
        rows = tuple(_plot_row(e) for e in estimates if e.metric == metric)
        if not rows:  # a metric an older document does not report
            continue
        plots.append(Plot(metric, title(metric), note, metric, (0.0, 1.0), rows))
    grouped = (
        ("type_metrics", "Type-specific metrics", TYPE_METRICS, _TYPE_METRICS_NOTE),
        ("plugin_metrics", "Plugin metrics", plugins, _PLUGIN_METRICS_NOTE),
    )
    for key, heading, names, what in grouped:
        rows = tuple(_plot_row(e, with_metric=True) for e in estimates if e.metric in names)
        if rows:
            note = f"{what} Point = rate, {line}"
            plots.append(Plot(key, heading, note, "", (0.0, 1.0), rows))
    for metric in LABEL_METRICS:
        rows = tuple(_label_plot_row(e) for e in estimates if e.metric == metric)
        if rows:
            pooled = "" if shared else ", and each slice's labels pooled (micro-average)"
            note = f"Each declared label{pooled}; point = rate, {line}"
            plots.append(
                Plot(
                    f"labels_{metric}",
                    f"Per label: {title(metric)}",
                    note,
                    metric,
                    (0.0, 1.0),
                    rows,
                )
            )
    coefficients = tuple(
        _plot_row(e, with_metric=True)
        for e in estimates
        if e.kind is Kind.KAPPA and e.metric in COEFFICIENTS and e.metric != "kappa"
    )
    if coefficients:
        note = f"AC1 or AC2 and alpha with {level} intervals; 0 is chance agreement, 1 perfect."
        plots.append(
            Plot(
                "coefficients",
                "Prevalence-robust agreement",
                note,
                "",
                (-1.0, 1.0),
                coefficients,
                0.0,
            )
        )
    kappas = tuple(
        kappa_plot_row(e) for e in estimates if e.kind is Kind.KAPPA and e.metric == "kappa"
    )
    if kappas:
        note = (
            f"kappa and {level} interval: Cohen's kappa, and on an ordinal field weighted kappa "
            "(quadratic); 0 is chance agreement, 1 perfect agreement."
        )
        plots.append(Plot("kappa", title("kappa"), note, "kappa", (-1.0, 1.0), kappas, 0.0))
    risk = _risk_coverage_plot(estimates, level)
    if risk is not None:
        plots.append(risk)
    return plots


def plugin_facts(stamps: Iterable[PluginStamp]) -> tuple[tuple[str, str], ...]:
    """One header line naming every plugin with its version and code digest."""
    listed = [f"{s.name} {s.version} (code {s.code_digest[:19]})" for s in stamps]
    return (("plugins", "; ".join(listed)),) if listed else ()


def _order_note(sort: str, *, shared: bool) -> str:
    if sort == "rate":
        last = "; suppressed rates and no trials last" if shared else ""
        return f"fields and types by normalized agreement rate, lowest first{last}"
    return "fields and types by name"


def _ignored(count: int | None, present: bool) -> tuple[tuple[str, str], ...]:
    if not present:
        return ()
    if count is None:
        return (("ignored", "suppressed (predictions not in gold, skipped)"),)
    return (("ignored", f"{count} prediction{'s' * (count != 1)} not in gold, skipped"),)


def _summary(report: ReportLike) -> tuple[tuple[str, str], ...]:
    counts = report.overall.counts
    fields, types = len(report.by_field), len(report.by_field_type)
    if isinstance(report, SharedReport):
        kind = f"{SHARED_FORMAT}, format version {report.format_version}"
        ignored = _ignored(counts.get(IGNORED_COUNT), IGNORED_COUNT in counts)
    else:
        kind = f"{REPORT_FORMAT}, format version {REPORT_FORMAT_VERSION}"
        count = report.ignored_prediction_count
        ignored = _ignored(count, count is not None)

    def shown(name: str) -> str:
        return count_text(counts[name])

    return (
        ("report", kind),
        ("scorer", f"chartscore {report.scorer_version}"),
        (
            "gold rows",
            f"{shown('field_count')} in {fields} field{'s' * (fields != 1)} of "
            f"{types} type{'s' * (types != 1)}: {shown('answerable_count')} answerable, "
            f"{shown('unanswerable_count')} unanswerable",
        ),
        (
            "answers",
            f"{shown('answered_count')} answered, {shown('abstained_count')} "
            f"abstained, {shown('missing_count')} missing",
        ),
        *ignored,
    )


def _disclosure(report: SharedReport) -> tuple[tuple[str, str], str]:
    """The header line and the note that state a shared report's disclosure rule."""
    rule = report.disclosure
    total = sum(1 for _ in report.numbers())
    level = level_text(report.confidence)
    suppressed, derived = hidden_counts(report)
    fact = (
        "disclosure",
        f"cell-size rule, min_cell {rule.min_cell}, unit {rule.unit}: "
        f"{rule.suppressed_count} of {total} numbers suppressed, primary and complementary; "
        f"the audit also checks {derived} quantities derived from them (failures, disagreed "
        f"rows): {suppressed + derived} hidden numbers in all",
    )
    note = (
        f"Shared report: a number backed by 1 to {rule.min_cell - 1} {rule.unit} (distinct "
        "patients' charts, not rows) is suppressed, and so are enough others that none can be "
        f"worked out from the rest; {rule.suppressed_count} of the report's {total} counts, "
        "success and total counts and kappa pairs are suppressed (docs/disclosure.md): the "
        "primary ones for their own small counts, the complementary ones so that no primary one "
        "can be worked back out (how many of each is not published: it would say how many "
        f"counts are small). chartscore audit checks these {suppressed} and the {derived} "
        "quantities derived from them (a metric's failures, total minus successes; a field's "
        f"disagreed rows), so it reports {suppressed + derived} hidden numbers checked. A "
        "suppressed number reads suppressed, never 0. A metric with a suppressed part shows no "
        "rate and no interval, but its bound where the published ranges give one: in field rows "
        f"the widest {level} Wilson interval over every count those ranges allow (for example "
        f"'<= 9.1% ({level} upper bound)'), in rows that pool fields the range of the rate "
        "itself, which is not an interval; a suppressed kappa was withheld by the kappa rule (or "
        "had no value: the shared report does not say which), and a suppressed AC1, AC2 or "
        "alpha with it (a number or date field's alpha: with the error magnitude's limits, or "
        "by the dominance rule); a suppressed F1 has one of its counts suppressed."
    )
    return fact, note


def report_view(report: ReportLike, *, sort: str = "name") -> View:
    """Lay out a report or a shared report for people: tables, forest plots and the legend.

    Args:
        report: A value-free report (from ``chartscore.score`` or
            :meth:`Report.from_json`) or shared report (from
            ``chartscore.workflows.share.share`` or :meth:`SharedReport.from_json`):
            its suppressed numbers read ``suppressed``.
        sort: ``"name"`` or ``"rate"`` (normalized agreement, lowest first;
            a slice with no rate, for no trials or a suppressed part, last).

    Returns:
        The :class:`View` every renderer draws.

    Raises:
        ChartscoreError: ``usage`` for an unknown ``sort``, or a ``report``
            that is not exactly a Report or SharedReport (checked by type, so
            a caller's object never runs code here).
    """
    word_option(sort, SORTS)
    if type(report) is not Report and type(report) is not SharedReport:
        raise ChartscoreError(ErrorCode.USAGE)
    shared = type(report) is SharedReport
    level = level_text(report.confidence)
    every_slice = _slices(report, sort)
    plugins = plugin_order(report.plugins)
    # Machine-readable output keeps every estimate.
    estimates = _estimates(every_slice, shared=shared, plugins=plugins, level=level)
    notes: tuple[str, ...] = ()
    # The tables show each stratum pooled; its slices by type are in the CSV (and JSON).
    slices = [part for part in every_slice if not _stratum_type(part[0], part[1])]
    if one_field_per_type(report):
        slices = [part for part in slices if part[0] != "field_type"]
        notes = (_ONE_FIELD_PER_TYPE,)
    shown = not_provided(every_slice, [e for e in estimates if not _stratum_type(e.slice, e.name)])
    if notes:
        shown = [e for e in shown if e.slice != "field_type"]
    if any(e.not_provided for e in shown):
        notes = (*notes, NOT_PROVIDED_NOTE)
    tables: list[Table | None] = [
        _metric_table(
            "agreement", "Agreement (higher is better)", level, AGREEMENT_METRICS, slices
        ),
        _metric_table("errors", "Errors (lower is better)", level, ERROR_TABLE_METRICS, slices),
        type_metric_table(shown, level),
        _label_table(shown, level, shared=shared),
        plugin_metric_table(shown, plugins, level),
        kappa_table(shown, level),
        _coefficient_table(shown, level),
        _magnitude_table(shown, _units(report), level),
        _uncertainty_table(shown, level),
        count_table(slices),
    ]
    facts = (*_summary(report), *plugin_facts(report.plugins))
    run = report.run if type(report) is Report else None
    if run is not None:  # run cost beside accuracy (docs/reports.md, "Run cost")
        tables.append(run_table(run))
        facts = (*facts, *run_facts(run))
    facts = (*facts, ("order", _order_note(sort, shared=shared)))
    if isinstance(report, SharedReport):
        disclosure_fact, disclosure_note = _disclosure(report)
        facts = (*facts, disclosure_fact)
        notes = (disclosure_note, *notes)
    present = {"f1" if e.metric.endswith("f1") else e.metric for e in estimates}
    return View(
        title="chartscore shared report" if shared else "chartscore report",
        facts=facts,
        plots=tuple(_plots(shown, plugins, level, shared=shared)),
        tables=tuple(table for table in tables if table is not None),
        estimates=tuple(estimates),
        definitions=(
            *(definition(m) for m in LEGEND_ORDER if m in present),
            *plugin_definitions(report.plugins, present),
        ),
        notes=(
            *notes,
            interval_note(level),
            "A missing answer is never an abstention: it counts against agreement and "
            "abstention correctness. Definitions: docs/metrics.md.",
        ),
        shared=shared,
        confidence=report.confidence,
    )
