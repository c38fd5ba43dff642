"""The privacy boundary: integer tallies with no values, ids or labels from the data.

Scoring produces a :class:`Tally`; everything after it (statistics, the report,
renderers) sees only these integers, field ids and closed metric names. This
module, like ``stats`` and ``report``, must not import the value-holding
modules (``model``, ``normalize``, ``agreement``, ``scoring``, ``io``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Final

import attrs

from chartscore import metrics as catalog
from chartscore.documents.plugin_layout import PluginStamp, is_plugin_metric
from chartscore.stats.clustered import ClusterSums
from chartscore.stats.magnitude import ErrorSums
from chartscore.stats.run_cost import RunCost
from chartscore.stats.uncertainty import UncertaintySums

COUNT_NAMES: Final = catalog.COUNT_NAMES
"""The six counts every slice reports."""

NOT_APPLICABLE_COUNTS: Final = catalog.NOT_APPLICABLE_COUNTS
"""The two counts a slice with not-applicable gold rows reports beside its six."""

CORE_METRICS: Final = catalog.names(lambda m: m.family == catalog.CORE)
"""The eight binomial metrics every slice reports, in report order."""

OPTIONAL_CORE_METRICS: Final = catalog.names(lambda m: m.family == catalog.CORE and m.optional)
"""The core metrics added after documents of the current formats were first written
(``evidence_provided``): every slice of a new document reports them; a document, a partial or
a pooled slice without them still reads, and leaves them out (catalog ``Metric.optional``)."""

REQUIRED_CORE_METRICS: Final = tuple(m for m in CORE_METRICS if m not in OPTIONAL_CORE_METRICS)
"""The core metrics every slice of every readable document holds."""

TYPE_METRICS: Final = catalog.names(lambda m: m.family == catalog.TYPE)
"""Type-specific binomial metrics; they appear only in slices of their type."""

LABEL_METRICS: Final = catalog.names(lambda m: m.family == catalog.LABEL)
"""Per-label confusion metrics (docs/metrics.md, "Per-label confusion metrics").

A field with declared labels reports them for each label (``SliceTally.labels``)
and, pooled over its labels, in its ``metrics``; pooled slices (overall too)
sum those micro-averaged counts over their fields.
"""

SHARE_WITHHELD_METRICS: Final = frozenset(LABEL_METRICS)
"""Binomial metrics ``share`` withholds: the labels pooled (micro-averaged), which are core
numbers in another form (docs/disclosure.md, "Per-label metrics"). Each label's are shared."""

ERROR_METRICS: Final = frozenset(catalog.names(lambda m: m.error))
"""Metrics whose "successes" are errors: lower is better."""


@attrs.frozen
class Binomial:
    """A success count out of a trial count (an error metric counts errors)."""

    success_count: int
    total_count: int

    def __attrs_post_init__(self) -> None:
        if not (type(self.success_count) is int and type(self.total_count) is int):
            raise TypeError("counts must be int")
        if not 0 <= self.success_count <= self.total_count:
            raise ValueError("need 0 <= success_count <= total_count")

    def __add__(self, other: Binomial) -> Binomial:
        return Binomial(
            self.success_count + other.success_count, self.total_count + other.total_count
        )


@attrs.frozen
class KappaTable:
    """A sparse square agreement table (gold rows, answer columns) for Cohen's kappa.

    ``cells`` holds (row, column, count) for nonzero cells, sorted. Rows and
    columns are category positions only: ordinal levels in schema order,
    otherwise a deterministic order that carries no label.
    """

    cells: tuple[tuple[int, int, int], ...]
    size: int
    weighting: str  # "none" or "quadratic"

    def __attrs_post_init__(self) -> None:
        if any(not (0 <= i < self.size and 0 <= j < self.size and n > 0) for i, j, n in self.cells):
            raise ValueError("kappa cells must lie inside the table and be positive")
        if self.weighting not in ("none", "quadratic"):
            raise ValueError("unknown kappa weighting")

    @property
    def pairs(self) -> int:
        """The number of (gold, answer) pairs in the table."""
        return sum(n for _, _, n in self.cells)


@attrs.frozen
class MagnitudeTally:
    """A number or date field's error sums and interval alpha (docs/metrics.md).

    Attributes:
        sums: The exact sums of its errors and of its gold's deviations.
        alpha: Krippendorff's interval alpha of the (gold, answer) pairs, or
            None when undefined (no pairs, or no spread).
        alpha_variance: alpha's jackknife variance, or None (fewer than two pairs).
    """

    sums: ErrorSums
    alpha: Fraction | None = None
    alpha_variance: float | None = None


@attrs.frozen
class SliceTally:
    """Counts and binomials for one slice (overall, a field, or a field type).

    ``clusters`` holds, for a pooled slice (overall, a field type), each
    metric's per-case sums (:class:`~chartscore.stats.clustered.ClusterSums`) for its
    clustered interval; None for a field slice, whose rows are one per case.
    ``labels`` holds, for a field slice with declared labels, each label's
    :data:`LABEL_METRICS` (by the label's name in the schema, normalized), in
    report order; None otherwise. ``magnitude`` holds a number or date field's
    error sums (:class:`MagnitudeTally`); None otherwise. ``uncertainty`` holds a
    field slice's declared-uncertainty sums; None for pooled slices.
    ``not_applicable`` holds :data:`NOT_APPLICABLE_COUNTS` (the slice's not-applicable gold
    rows, at least one, and the answers on them), None when it has none: those rows are in
    no other count (docs/metrics.md, "Not applicable").
    """

    counts: Mapping[str, int]
    metrics: Mapping[str, Binomial]
    kappa: KappaTable | None = None
    clusters: Mapping[str, ClusterSums] | None = None
    labels: Mapping[str, Mapping[str, Binomial]] | None = None
    magnitude: MagnitudeTally | None = None
    uncertainty: UncertaintySums | None = None
    not_applicable: Mapping[str, int] | None = None

    def __attrs_post_init__(self) -> None:
        if tuple(self.counts) != COUNT_NAMES:
            raise ValueError("counts must be the six core counts in order")
        if self.not_applicable is not None and not valid_not_applicable(self.not_applicable):
            raise ValueError("not-applicable counts: rows at least 1, answers at most rows")
        unknown = {
            name
            for name in set(self.metrics).difference(CORE_METRICS, TYPE_METRICS, LABEL_METRICS)
            if not is_plugin_metric(name)
        }
        if unknown or not set(REQUIRED_CORE_METRICS) <= set(self.metrics):
            raise ValueError("metrics must include the core metrics and known names only")
        if self.labels is not None and any(
            tuple(table) != LABEL_METRICS for table in self.labels.values()
        ):
            raise ValueError("every label has the four label metrics")
        if self.clusters is not None:
            if set(self.clusters) != set(self.metrics):
                raise ValueError("a pooled slice has cluster sums for every metric")
            for name, sums in self.clusters.items():
                trials = self.metrics[name].total_count
                if type(sums) is not ClusterSums or not (
                    (sums.cases == 0) == (trials == 0) and sums.cases <= trials <= sums.sum_mm
                ):
                    raise ValueError("cluster sums disagree with the metric's trials")


def valid_not_applicable(counts: Mapping[str, int]) -> bool:
    """Whether ``counts`` are a slice's not-applicable counts: both, in order, rows >= 1."""
    if tuple(counts) != NOT_APPLICABLE_COUNTS:
        return False
    rows, answers = (counts[name] for name in NOT_APPLICABLE_COUNTS)
    return type(rows) is int and type(answers) is int and 0 <= answers <= rows and rows > 0


def pool_not_applicable(parts: Iterable[Mapping[str, int] | None]) -> dict[str, int] | None:
    """The not-applicable counts of a union of slices (None when none of them has any)."""
    total = dict.fromkeys(NOT_APPLICABLE_COUNTS, 0)
    for part in parts:
        if part is not None:
            for name in NOT_APPLICABLE_COUNTS:
                total[name] += part[name]
    return total if total[NOT_APPLICABLE_COUNTS[0]] else None


def empty_sums(metric: str) -> ClusterSums:
    """The sums of a metric no case contributes to (successes unknown for majority_baseline)."""
    known = 0 if metric != "majority_baseline" else None
    return ClusterSums(0, known, known, 0, known, known)


def pool(
    slices: Iterable[SliceTally],
    *,
    keep_type_metrics: bool,
    clusters: Mapping[str, ClusterSums] | None = None,
) -> SliceTally:
    """Pool slices by adding their counts (a union of disjoint fields).

    Type-specific metrics are summed over the slices that report them when
    ``keep_type_metrics`` is true (a field-type slice) and dropped otherwise
    (the overall slice); label metrics are micro-averaged into every pooled
    slice. Kappa and per-label tables are never pooled. The per-case sums of the
    pooled slice cannot be pooled from its parts (a case has rows in several):
    the scorer gives them as ``clusters`` (a metric absent there has none).
    """
    counts = dict.fromkeys(COUNT_NAMES, 0)
    sums: dict[str, list[int]] = {}
    slices = list(slices)
    for part in slices:
        for name in COUNT_NAMES:
            counts[name] += part.counts[name]
        for name, binomial in part.metrics.items():
            if name in CORE_METRICS or name in LABEL_METRICS or keep_type_metrics:
                total = sums.get(name)
                if total is None:
                    sums[name] = [binomial.success_count, binomial.total_count]
                else:
                    total[0] += binomial.success_count
                    total[1] += binomial.total_count
    metrics = {
        name: Binomial(success, trials)
        for name, (success, trials) in sums.items()
        if name not in OPTIONAL_CORE_METRICS or all(name in part.metrics for part in slices)
    }  # an optional metric some part lacks (an old partial's) is unknown for the union
    pooled = None
    if clusters is not None:
        pooled = {name: clusters.get(name) or empty_sums(name) for name in metrics}
    return SliceTally(
        counts=counts,
        metrics=metrics,
        clusters=pooled,
        not_applicable=pool_not_applicable(part.not_applicable for part in slices),
    )


def without_optional(part: SliceTally) -> SliceTally:
    """``part`` without :data:`OPTIONAL_CORE_METRICS` (and their cluster sums): a slice whose
    rows' evidence is not known (an old site's partial in the merge)."""
    if not any(name in part.metrics for name in OPTIONAL_CORE_METRICS):
        return part
    metrics = {k: v for k, v in part.metrics.items() if k not in OPTIONAL_CORE_METRICS}
    clusters = None
    if part.clusters is not None:
        clusters = {k: v for k, v in part.clusters.items() if k not in OPTIONAL_CORE_METRICS}
    return attrs.evolve(part, metrics=metrics, clusters=clusters)


@attrs.frozen
class Tally:
    """All slices of one scoring run.

    ``ignored_prediction_count`` is the number of predictions skipped because
    their key is not in gold (``extra_predictions="ignore"``); None when such
    predictions are refused (the default). ``plugins`` are the stamps of the
    plugin metrics the fields report (docs/plugins.md), sorted by name.
    ``by_stratum`` holds each declared stratum's pooled slice (``"site=A"``)
    and ``by_stratum_field_type`` its slice per field type; both are empty
    without a strata file (docs/reports.md, "Stratum slices"). ``sampling`` holds
    the declared sampling fraction of each stratum of the sampled key, by
    stratum name: the overall slice's weighted estimate reads it. ``run`` holds the run
    cost of the prediction lines that carried ``usage`` (docs/metrics.md, "Run cost"),
    None when none did.
    """

    overall: SliceTally
    by_field: Mapping[str, SliceTally]
    by_field_type: Mapping[str, SliceTally]
    ignored_prediction_count: int | None = None
    plugins: tuple[PluginStamp, ...] = ()
    by_stratum: Mapping[str, SliceTally] = attrs.field(factory=dict)
    by_stratum_field_type: Mapping[str, Mapping[str, SliceTally]] = attrs.field(factory=dict)
    sampling: Mapping[str, Decimal] = attrs.field(factory=dict)
    run: RunCost | None = None
