"""The value-free comparison of two systems scored on the same gold rows.

A baseline and a candidate answer the same gold set. For every metric whose
trials are gold rows (the same rows for both systems), the scorer counts each
row into one cell of a paired 2 x 2 table (:class:`PairedBinomial`); this module
turns those integers into each system's Wilson interval, the paired difference
(candidate - baseline) with Newcombe's interval, and McNemar's exact and mid-p
tests. Metrics whose trials differ between the systems (answered rows, items)
are reported side by side, unpaired. ``to_json`` is RFC 8785 canonical JSON;
:meth:`Comparison.from_json` reads it back, strictly.

Pooled slices (overall, each field type) also carry case-clustered figures
(:mod:`chartscore.stats.clustered`): each system's clustered interval, the clustered
difference and Durkalski's clustered McNemar test.

Value-free: this module imports only ``tally``, ``stats``, ``report``,
``canonical_json``, ``_strict_json`` and ``_shell`` (the readers every document shares),
``plugin_layout`` and ``_version`` (a test checks the import graph).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from chartscore import metrics as catalog
from chartscore._version import __version__
from chartscore.documents import _shell, _strict_json
from chartscore.documents._shell import (
    check_slices,
    check_strata,
    read_shell,
    read_slices,
    read_strata,
    shell_members,
)
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.display import Displayed
from chartscore.documents.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    is_plugin_metric,
    stamps_to_dict,
)
from chartscore.documents.report import (
    KappaResult,
    MetricResult,
    pooled_z,
    read_case_count,
    read_design_effect,
)
from chartscore.documents.run import RUN_KEY, RunSection
from chartscore.documents.system_names import SystemNames
from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    OPTIONAL_CORE_METRICS,
    TYPE_METRICS,
    Binomial,
    SliceTally,
)
from chartscore.stats.binomial import Z95
from chartscore.stats.clustered import (
    DEFAULT_CONFIDENCE,
    PairedClusterSums,
    clustered_mcnemar_p,
    clustered_newcombe,
    difference_design_effect,
    mcnemar_design_effect,
    published_design_effect,
)
from chartscore.stats.paired import mcnemar, newcombe_difference
from chartscore.stats.run_cost import RunCost

COMPARISON_FORMAT: Final = "chartscore.comparison"
COMPARISON_FORMAT_VERSION: Final = 3
"""3 added each pooled metric's and pooled difference's ``case_count``."""
READABLE_COMPARISON_VERSIONS: Final = (2, 3)
"""Format 2 documents are read, and written back, as they were: clustered intervals on ``z``."""
"""Format 2 added the confidence level and the pooled slices' clustered figures; 1 is refused."""

UNPAIRED_METRICS: Final[tuple[str, ...]] = catalog.names(
    lambda m: m.family != catalog.LABEL and m.pairing == catalog.UNPAIRED
)
"""Metrics whose trials depend on the system (its answered rows, its items): side by side."""

GOLD_ONLY_METRICS: Final[tuple[str, ...]] = catalog.names(lambda m: m.pairing == catalog.GOLD_ONLY)
"""Metrics of the gold set alone, the same for both systems: left out of a comparison."""

PAIRED_METRICS: Final[tuple[str, ...]] = tuple(
    metric
    for metric in (*CORE_METRICS, *TYPE_METRICS)
    if metric not in UNPAIRED_METRICS and metric not in GOLD_ONLY_METRICS
)
"""Metrics whose trials are gold rows, the same rows for both systems: compared paired
(every core and type-specific metric that is neither unpaired nor of the gold alone)."""

GOLD_COUNT_NAMES: Final = COUNT_NAMES[:3]
"""``field_count``, ``answerable_count``, ``unanswerable_count``: shared by both systems."""

SYSTEM_COUNT_NAMES: Final = COUNT_NAMES[3:]
"""``missing_count``, ``answered_count``, ``abstained_count``: one set per system."""

FIELD_TYPE_NAMES: Final = _shell.FIELD_TYPE_NAMES
"""The seven field types, the only names a ``by_field_type`` slice may have."""

MISSING_GAP_POINTS: Final = 2
"""``compare`` warns when the systems' missing rates differ by more than this many points."""

MISSING_COUNTS_DIFFER: Final = "missing_counts_differ"
"""The warning recorded when the systems' missing rates differ materially."""

WARNINGS: Final[tuple[str, ...]] = (MISSING_COUNTS_DIFFER,)
"""The closed vocabulary of a comparison's ``warnings``."""

Interval = tuple[float, float]


# The count each core metric's trials equal, in every slice (a consistency check
# when reading a document back). Type metrics pool over the fields that report
# them, so in a type slice their totals need not equal any count.
_CORE_TRIALS: Final = {m.name: m for m in catalog.CATALOG if m.family == catalog.CORE}
_GOLD_TOTALS: Final = {
    name: m.trials for name, m in _CORE_TRIALS.items() if m.pairing == catalog.PAIRED
}
_SYSTEM_TOTALS: Final = {
    name: m.trials for name, m in _CORE_TRIALS.items() if m.pairing == catalog.UNPAIRED
}


# --------------------------------------------------------------------------- tallies


@attrs.frozen
class PairedBinomial:
    """One paired metric over the same gold rows for both systems: the 2 x 2 cells.

    ``both + baseline_only`` is the baseline's success count,
    ``both + candidate_only`` the candidate's, and the four cells add up to the
    metric's trials (``total_count``).
    """

    both: int
    baseline_only: int
    candidate_only: int
    neither: int

    def __attrs_post_init__(self) -> None:
        cells = (self.both, self.baseline_only, self.candidate_only, self.neither)
        if any(type(cell) is not int for cell in cells):
            raise TypeError("paired cells must be int")
        if any(cell < 0 for cell in cells):
            raise ValueError("paired cells must be non-negative")

    @property
    def total_count(self) -> int:
        """The trials: gold rows in the metric's denominator."""
        return self.both + self.baseline_only + self.candidate_only + self.neither

    @property
    def baseline(self) -> Binomial:
        """The baseline's own success count out of the trials."""
        return Binomial(self.both + self.baseline_only, self.total_count)

    @property
    def candidate(self) -> Binomial:
        """The candidate's own success count out of the trials."""
        return Binomial(self.both + self.candidate_only, self.total_count)


@attrs.frozen
class PairedSliceTally:
    """One slice of a paired run: each system's own tally and the paired metrics.

    Raises ValueError (a scorer bug, not a user error) when the parts disagree:
    different gold counts or metric names, a paired metric missing or extra, a
    paired table whose margins are not the systems' own counts, or kappa for
    one system only.
    """

    baseline: SliceTally
    candidate: SliceTally
    paired: Mapping[str, PairedBinomial]
    clusters: Mapping[str, PairedClusterSums] | None = None

    def __attrs_post_init__(self) -> None:
        for name in GOLD_COUNT_NAMES:
            if self.baseline.counts[name] != self.candidate.counts[name]:
                raise ValueError("both systems must be scored on the same gold rows")
        if set(self.baseline.metrics) != set(self.candidate.metrics):
            raise ValueError("both systems must report the same metrics")
        expected = {
            name
            for name in self.baseline.metrics
            if name in PAIRED_METRICS or is_plugin_metric(name)
        }
        if set(self.paired) != expected:
            raise ValueError("paired metrics must be exactly the slice's paired metrics")
        for name, cells in self.paired.items():
            if type(cells) is not PairedBinomial:
                raise TypeError("paired metrics must be PairedBinomial")
            if cells.baseline != self.baseline.metrics[name]:
                raise ValueError("paired cells disagree with the baseline's counts")
            if cells.candidate != self.candidate.metrics[name]:
                raise ValueError("paired cells disagree with the candidate's counts")
        if (self.baseline.kappa is None) != (self.candidate.kappa is None):
            raise ValueError("kappa must be present for both systems or neither")
        pooled = self.baseline.clusters is not None
        if (self.candidate.clusters is not None) != pooled or (self.clusters is not None) != pooled:
            raise ValueError("a pooled slice has cluster sums for both systems and the pairs")
        if self.clusters is not None and set(self.clusters) != set(self.paired):
            raise ValueError("paired cluster sums must cover exactly the paired metrics")


@attrs.frozen
class IgnoredPredictions:
    """Each system's predictions skipped because their key is not in gold."""

    baseline: int
    candidate: int

    def to_dict(self) -> dict[str, object]:
        """``{"baseline": COUNT, "candidate": COUNT}``."""
        return {"baseline": self.baseline, "candidate": self.candidate}


@attrs.frozen
class PairedTally:
    """All slices of a paired run; the lead's scorer fills it inside the boundary.

    ``ignored_prediction_count`` is None unless extra predictions were ignored
    (``extra_predictions="ignore"``), as in a report. ``plugins`` are the
    stamps of the plugin metrics, which both systems were scored with. ``run`` holds
    each system's run cost (baseline, candidate), None for a system whose lines
    carried no ``usage``.
    """

    overall: PairedSliceTally
    by_field: Mapping[str, PairedSliceTally]
    by_field_type: Mapping[str, PairedSliceTally]
    ignored_prediction_count: IgnoredPredictions | None = None
    plugins: tuple[PluginStamp, ...] = ()
    by_stratum: Mapping[str, PairedSliceTally] = attrs.field(factory=dict)
    run: tuple[RunCost | None, RunCost | None] = (None, None)


# --------------------------------------------------------------------------- results


@attrs.frozen
class PairedClustering:
    """A pooled paired metric's case-clustered figures (docs/metrics.md).

    Attributes:
        design_effect: The published design effect of the difference
            (Obuchowski's ratio variance over the row-wise one, rounded up);
            None with no trials.
        interval: Newcombe's interval with ``t**2`` times ``design_effect``, ``t``
            Student's quantile over ``cases - 1`` degrees of freedom.
        mcnemar_design_effect: The published design effect of the paired test
            (McNemar's statistic over Durkalski's); None when the clustered
            statistic is 0 or undefined (then ``p`` is 1) or with no trials.
        p: The clustered McNemar p-value; None with no trials.
        cases: The cases with a paired trial; None in a format 2 document,
            whose intervals used ``z``.
    """

    design_effect: float | None
    interval: Interval | None
    mcnemar_design_effect: float | None
    p: float | None
    cases: int | None = None

    @classmethod
    def from_sums(
        cls, cells: PairedBinomial, sums: PairedClusterSums, z: float = Z95
    ) -> PairedClustering:
        """Every clustered figure from the paired cells and the per-case sums."""
        b, c, n = cells.baseline_only, cells.candidate_only, cells.total_count
        return cls.from_design_effects(
            cells,
            published_design_effect(difference_design_effect(b, c, n, sums)),
            published_design_effect(mcnemar_design_effect(b, c, sums)) if n else None,
            z,
            cases=sums.cases,
        )

    @classmethod
    def from_design_effects(
        cls,
        cells: PairedBinomial,
        difference: float | None,
        test: float | None,
        z: float = Z95,
        *,
        cases: int | None,
    ) -> PairedClustering:
        """The clustered figures from the cells, the two published design effects and the cases."""
        if cells.total_count == 0 or difference is None:
            return cls(None, None, None, None, cases)
        interval = clustered_newcombe(
            cells.both,
            cells.candidate_only,
            cells.baseline_only,
            cells.neither,
            design_effect_shown=difference,
            z=z,
            cases=cases,
        )
        p = clustered_mcnemar_p(cells.baseline_only, cells.candidate_only, test)
        return cls(difference, interval, test, p, cases)


@attrs.frozen
class PairedMetricResult:
    """One paired metric: both systems, the discordant counts, the difference, McNemar.

    Attributes:
        baseline, candidate: Each system's success count, trials and Wilson
            interval (the same trials for both).
        baseline_only, candidate_only: Trials where only that system succeeded
            (for an error metric: only that system erred).
        estimate: ``(candidate_only - baseline_only) / total_count``, the
            candidate's rate minus the baseline's; None with no trials.
        interval: Newcombe's interval for the difference; None with no trials.
        exact_p, mid_p: McNemar's two-sided exact and mid-p values; None with no
            trials.
        clustering: A pooled slice's case-clustered figures; None in a field slice.
    """

    baseline: MetricResult
    candidate: MetricResult
    baseline_only: int
    candidate_only: int
    estimate: float | None
    interval: Interval | None
    exact_p: float | None
    mid_p: float | None
    clustering: PairedClustering | None = None

    @property
    def clustered_interval(self) -> Interval | None:
        """The difference's case-clustered interval (pooled slices), else None."""
        return None if self.clustering is None else self.clustering.interval

    @classmethod
    def from_counts(cls, cells: PairedBinomial, z: float = Z95) -> PairedMetricResult:
        """Compute every figure of a field slice's paired metric from its four cells."""
        return cls.from_parts(cells, z)

    @classmethod
    def from_parts(
        cls,
        cells: PairedBinomial,
        z: float = Z95,
        sums: PairedClusterSums | None = None,
        sides: tuple[MetricResult, MetricResult] | None = None,
        clustering: PairedClustering | None = None,
    ) -> PairedMetricResult:
        """Every figure from the cells; the sides and clustering as given, or computed."""
        difference = newcombe_difference(
            cells.both, cells.candidate_only, cells.baseline_only, cells.neither, z
        )
        estimate: float | None = None
        interval: Interval | None = None
        exact_p: float | None = None
        mid_p: float | None = None
        if difference is not None:
            estimate, interval = difference
            exact_p, mid_p = mcnemar(cells.baseline_only, cells.candidate_only)
        if clustering is None and sums is not None:
            clustering = PairedClustering.from_sums(cells, sums, z)
        baseline, candidate = sides or (
            MetricResult.from_binomial(cells.baseline, z),
            MetricResult.from_binomial(cells.candidate, z),
        )
        return cls(
            baseline=baseline,
            candidate=candidate,
            baseline_only=cells.baseline_only,
            candidate_only=cells.candidate_only,
            estimate=estimate,
            interval=interval,
            exact_p=exact_p,
            mid_p=mid_p,
            clustering=clustering,
        )

    @property
    def cells(self) -> PairedBinomial:
        """The four paired cells, from the counts."""
        b, c = self.baseline_only, self.candidate_only
        both = self.baseline.success_count - b
        return PairedBinomial(both, b, c, self.baseline.total_count - both - b - c)

    def to_dict(self) -> dict[str, object]:
        """The paired metric as comparison JSON."""
        difference: dict[str, object] = {
            "estimate": self.estimate,
            "interval": None if self.interval is None else list(self.interval),
        }
        out: dict[str, object] = {
            "baseline": self.baseline.to_dict(),
            "candidate": self.candidate.to_dict(),
            "baseline_only": self.baseline_only,
            "candidate_only": self.candidate_only,
            "difference": difference,
            "mcnemar": {"exact_p": self.exact_p, "mid_p": self.mid_p},
        }
        clustering = self.clustering
        if clustering is not None:
            difference["design_effect"] = clustering.design_effect
            difference["clustered_interval"] = (
                None if clustering.interval is None else list(clustering.interval)
            )
            if clustering.cases is not None:
                difference["case_count"] = clustering.cases
            out["clustered_mcnemar"] = {
                "design_effect": clustering.mcnemar_design_effect,
                "p": clustering.p,
            }
        return out


@attrs.frozen
class UnpairedMetricResult:
    """A metric whose trials differ between the systems: each system's result alone."""

    baseline: MetricResult
    candidate: MetricResult

    def to_dict(self) -> dict[str, object]:
        """``{"baseline": METRIC, "candidate": METRIC}``."""
        return {"baseline": self.baseline.to_dict(), "candidate": self.candidate.to_dict()}


@attrs.frozen
class KappaComparison:
    """Each system's own Cohen's kappa against gold (field slices of kappa fields)."""

    baseline: KappaResult
    candidate: KappaResult

    def to_dict(self) -> dict[str, object]:
        """``{"baseline": KAPPA, "candidate": KAPPA}``."""
        return {"baseline": self.baseline.to_dict(), "candidate": self.candidate.to_dict()}


@attrs.frozen
class ComparisonSlice:
    """One slice of a comparison: overall, one field id, or one field type.

    Attributes:
        counts: The gold counts both systems share (``field_count``,
            ``answerable_count``, ``unanswerable_count``).
        baseline_counts, candidate_counts: Each system's ``missing_count``,
            ``answered_count`` and ``abstained_count``.
        paired: The paired metrics present in the slice, by name.
        unpaired: The unpaired metrics present in the slice, by name.
        kappa: Both systems' kappa (field slices of kappa fields), else None.
    """

    counts: Mapping[str, int]
    baseline_counts: Mapping[str, int]
    candidate_counts: Mapping[str, int]
    paired: Mapping[str, PairedMetricResult]
    unpaired: Mapping[str, UnpairedMetricResult]
    kappa: KappaComparison | None = None

    @classmethod
    def from_tally(cls, part: PairedSliceTally, z: float = Z95) -> ComparisonSlice:
        """Attach intervals, differences and tests (clustered ones when pooled) to a slice."""
        baseline, candidate = part.baseline, part.candidate
        kappa = None
        if baseline.kappa is not None and candidate.kappa is not None:
            kappa = KappaComparison(
                KappaResult.from_table(baseline.kappa, z),
                KappaResult.from_table(candidate.kappa, z),
            )

        def side(tally: SliceTally, name: str) -> MetricResult:
            sums = None if tally.clusters is None else tally.clusters[name]
            return MetricResult.from_binomial(tally.metrics[name], z, sums)

        def paired(name: str) -> PairedMetricResult:
            sums = None if part.clusters is None else part.clusters[name]
            sides = (side(baseline, name), side(candidate, name))
            return PairedMetricResult.from_parts(part.paired[name], z, sums, sides)

        return cls(
            counts={name: baseline.counts[name] for name in GOLD_COUNT_NAMES},
            baseline_counts={name: baseline.counts[name] for name in SYSTEM_COUNT_NAMES},
            candidate_counts={name: candidate.counts[name] for name in SYSTEM_COUNT_NAMES},
            paired={
                name: paired(name)
                for name in (*PAIRED_METRICS, *(n for n in part.paired if is_plugin_metric(n)))
                if name in part.paired
            },
            unpaired={
                name: UnpairedMetricResult(side(baseline, name), side(candidate, name))
                for name in UNPAIRED_METRICS
                if name in baseline.metrics
            },
            kappa=kappa,
        )

    def quantities(self) -> dict[str, int]:
        """The slice's integers by name, for the checks that pooled slices are sums."""
        out: dict[str, int] = dict(self.counts)
        for side, counts in (
            ("baseline", self.baseline_counts),
            ("candidate", self.candidate_counts),
        ):
            out.update({f"{side}.{name}": value for name, value in counts.items()})
        for name, paired in self.paired.items():
            out[f"{name}.baseline_only"] = paired.baseline_only
            out[f"{name}.candidate_only"] = paired.candidate_only
        sides = [(name, metric.baseline, metric.candidate) for name, metric in self.paired.items()]
        sides += [
            (name, metric.baseline, metric.candidate) for name, metric in self.unpaired.items()
        ]
        for name, baseline, candidate in sides:
            out.update(baseline.quantities(f"{name}.baseline"))
            out.update(candidate.quantities(f"{name}.candidate"))
        return out

    def to_dict(self) -> dict[str, object]:
        """The slice as comparison JSON (CSLICE in docs/formats.md)."""
        out: dict[str, object] = {name: self.counts[name] for name in GOLD_COUNT_NAMES}
        out["baseline_counts"] = {name: self.baseline_counts[name] for name in SYSTEM_COUNT_NAMES}
        out["candidate_counts"] = {name: self.candidate_counts[name] for name in SYSTEM_COUNT_NAMES}
        for name, paired in self.paired.items():
            out[name] = paired.to_dict()
        for name, unpaired in self.unpaired.items():
            out[name] = unpaired.to_dict()
        if self.kappa is not None:
            out["kappa"] = self.kappa.to_dict()
        return out


def missing_counts_differ(part: ComparisonSlice) -> bool:
    """Whether the two systems' missing rates differ by more than :data:`MISSING_GAP_POINTS`.

    The missing rate is ``missing_count / field_count`` (gold rows with no
    prediction, of gold rows). The rule, in exact integers:
    ``100 * |candidate missing - baseline missing| > 2 * field_count``. A
    missing row counts against agreement, so a coverage gap larger than a
    typical 2-point non-inferiority margin can decide a comparison on its own.
    """
    gap = abs(part.candidate_counts["missing_count"] - part.baseline_counts["missing_count"])
    return 100 * gap > MISSING_GAP_POINTS * part.counts["field_count"]


def comparison_warnings(overall: ComparisonSlice) -> tuple[str, ...]:
    """The warnings a comparison records, from its overall counts (docs/compare.md)."""
    return (MISSING_COUNTS_DIFFER,) if missing_counts_differ(overall) else ()


@attrs.frozen
class Comparison(Displayed):
    """A comparison of two systems on the same gold set; it may leave the environment.

    Holds counts, intervals, differences, p-values, field ids, closed type and
    metric names and the scorer version: nothing from any input value.

    Attributes:
        overall: All gold rows.
        by_field: One slice per field id.
        by_field_type: One slice per field type present in the gold set.
        scorer_version: The chartscore version that computed it.
        ignored_prediction_count: Each system's predictions skipped because
            their key is not in gold (``extra_predictions="ignore"``), else None.
        warnings: What the comparison warns about, from :data:`WARNINGS`
            (:func:`comparison_warnings`); empty when there is nothing to say.
        confidence: The confidence level of every interval (0.9, 0.95 or 0.99).
        plugins: The stamps of the plugin metrics (both systems were scored
            with the same ones), sorted by name; empty without plugins.
        by_stratum: Each declared stratum's pooled paired slice (``"site=A"``),
            with a strata file; empty (and absent from the JSON) otherwise.
        names: What the systems are called (``--baseline-name``, ``--candidate-name``;
            never a file's name), or None; renderings show them,
            the gates and the figures ignore them, and a shared comparison never
            carries them.
        format_version: The format the comparison was read in (2 or 3), which
            :meth:`to_json` writes back; a new comparison is format 3.
        run: Each system's run cost (:class:`~chartscore.documents.run.RunSection`) by
            ``baseline`` / ``candidate``, for the systems whose lines carried ``usage``;
            empty (and absent from the JSON) when neither did.
    """

    overall: ComparisonSlice
    by_field: Mapping[str, ComparisonSlice]
    by_field_type: Mapping[str, ComparisonSlice]
    scorer_version: str = __version__
    ignored_prediction_count: IgnoredPredictions | None = None
    warnings: tuple[str, ...] = ()
    confidence: float = DEFAULT_CONFIDENCE
    plugins: tuple[PluginStamp, ...] = ()
    by_stratum: Mapping[str, ComparisonSlice] = attrs.field(factory=dict)
    names: SystemNames | None = None
    format_version: int = attrs.field(default=COMPARISON_FORMAT_VERSION, eq=False, repr=False)
    run: Mapping[str, RunSection] = attrs.field(factory=dict)

    @classmethod
    def from_tally(cls, tally: PairedTally, confidence: float = DEFAULT_CONFIDENCE) -> Comparison:
        """Compute every figure from a value-free paired tally, at ``confidence``.

        Raises:
            ValueError: a pooled slice without its per-case sums (a scorer
                bug), or a confidence level that is not 0.9, 0.95 or 0.99.
        """
        z = pooled_z(confidence, [tally.overall, *tally.by_field_type.values()])
        overall = ComparisonSlice.from_tally(tally.overall, z)
        return cls(
            overall=overall,
            by_field={k: ComparisonSlice.from_tally(v, z) for k, v in tally.by_field.items()},
            by_field_type={
                k: ComparisonSlice.from_tally(v, z) for k, v in tally.by_field_type.items()
            },
            ignored_prediction_count=tally.ignored_prediction_count,
            warnings=comparison_warnings(overall),
            confidence=confidence,
            plugins=tally.plugins,
            by_stratum={k: ComparisonSlice.from_tally(v, z) for k, v in tally.by_stratum.items()},
            run={
                side: RunSection.of(cost)
                for side, cost in zip(("baseline", "candidate"), tally.run, strict=True)
                if cost is not None
            },
        )

    def to_dict(self) -> dict[str, object]:
        """The comparison as plain JSON-ready data."""
        out = shell_members(COMPARISON_FORMAT, self)
        if self.ignored_prediction_count is not None:
            out["ignored_prediction_count"] = self.ignored_prediction_count.to_dict()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.plugins:
            out["plugins"] = stamps_to_dict(self.plugins)
        if self.by_stratum:
            out["by_stratum"] = {k: v.to_dict() for k, v in self.by_stratum.items()}
        if self.run:
            out[RUN_KEY] = {side: section.to_dict() for side, section in self.run.items()}
        if self.names is not None:
            out["names"] = self.names.to_dict()
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_json(cls, text: str | bytes) -> Comparison:
        """Read a comparison back from its JSON, strictly.

        Checks ``format`` and ``format_version`` first, then the whole shape:
        a closed key vocabulary, non-negative integer counts, intervals of two
        numbers in range (or null exactly when there are no trials), valid
        field ids and type names, and the identities between counts
        (``baseline_only`` and ``candidate_only`` within each system's
        successes, the same trials for both systems, core metric totals equal
        to their counts, pooled slices that are the sums of the field slices).
        Every derived figure is recomputed from the counts with the library's
        own functions and must equal the document's exactly: each system's
        Wilson interval, the difference and its Newcombe interval, McNemar's
        p-values (kappa's table is not in the document: kappa must lie in its
        interval). ``to_json()`` of the result gives back the same bytes as a
        document chartscore wrote.

        Raises:
            ChartscoreError: ``unknown_report_format`` for a missing or other
                format or format_version; ``invalid_report`` for anything else
                (including JSON that is not strict: duplicate keys, NaN).
                Never echoes the document.
        """
        return _read_comparison(_strict_json.parse(text))

    @classmethod
    def from_dict(cls, document: Mapping[str, object]) -> Comparison:
        """Read a comparison from its parsed JSON; the checks of :meth:`from_json`.

        Raises:
            ChartscoreError: ``unknown_report_format`` or ``invalid_report``
                (also for any value that ``json.loads`` would not give: a
                ``str`` subclass, a tuple, a Decimal, ...).
        """
        _strict_json.require_plain(document)
        return _read_comparison(document)


# --------------------------------------------------------------------------- reading


_SYSTEM_COUNT_KEYS: Final = frozenset(SYSTEM_COUNT_NAMES)
_PAIRED_KEYS: Final = frozenset(
    {"baseline", "candidate", "baseline_only", "candidate_only", "difference", "mcnemar"}
)
_POOLED_PAIRED_KEYS: Final = _PAIRED_KEYS | {"clustered_mcnemar"}
_DIFFERENCE_KEYS: Final = ("estimate", "interval")
_POOLED_DIFFERENCE_KEYS: Final = (
    *_DIFFERENCE_KEYS,
    "design_effect",
    "clustered_interval",
    "case_count",
)
_FORMAT_2_POOLED_DIFFERENCE_KEYS: Final = _POOLED_DIFFERENCE_KEYS[:-1]
_SIDES: Final = frozenset({"baseline", "candidate"})
_CORE_KEYS: Final = (
    frozenset(GOLD_COUNT_NAMES)
    | {"baseline_counts", "candidate_counts"}
    | set(CORE_METRICS).difference(OPTIONAL_CORE_METRICS)
)
_OPTIONAL_KEYS: Final = (
    frozenset(name for name in TYPE_METRICS if name not in GOLD_ONLY_METRICS)
    | {"kappa"}
    | frozenset(OPTIONAL_CORE_METRICS)
)


_OPTIONAL_TOP_KEYS: Final = (
    "ignored_prediction_count",
    "warnings",
    "plugins",
    "by_stratum",
    RUN_KEY,
    "names",
)


def _read_comparison(document: object) -> Comparison:
    shell = read_shell(
        document, COMPARISON_FORMAT, READABLE_COMPARISON_VERSIONS, optional=_OPTIONAL_TOP_KEYS
    )
    data = shell.members
    reading = _Reading(shell.z, shell.format_version >= 3)
    plugin_metrics = shell.plugin_metrics
    overall, by_field, by_type = read_slices(
        data, lambda value, kind: _read_slice(value, kind, plugin_metrics, reading)
    )
    check_plugin_metrics(
        shell.plugins,
        [("overall", overall.paired)]
        + [("field", part.paired) for part in by_field.values()]
        + [("field_type", part.paired) for part in by_type.values()],
    )
    ignored = None
    if "ignored_prediction_count" in data:
        pair = _strict_json.members(data["ignored_prediction_count"], _SIDES)
        ignored = IgnoredPredictions(
            _strict_json.count(pair["baseline"]), _strict_json.count(pair["candidate"])
        )
    warnings: tuple[str, ...] = ()
    if "warnings" in data:
        # Derived from the counts: present only when non-empty, and exactly what they give.
        listed = data["warnings"]
        expected = comparison_warnings(overall)
        if not isinstance(listed, list) or not expected or tuple(listed) != expected:
            _strict_json.invalid()
        warnings = expected
    check_slices(overall, by_field.values(), by_type.values())
    strata, _ = read_strata(data, lambda value: _read_slice(value, "overall", (), reading))
    check_strata(overall, {}, strata, {})
    run: dict[str, RunSection] = {}
    if RUN_KEY in data:
        sides = _strict_json.members(data[RUN_KEY], (), _SIDES)
        if not sides:
            _strict_json.invalid()
        run = {side: RunSection.from_dict(sides[side]) for side in sorted(sides)}
    return Comparison(
        overall,
        by_field,
        by_type,
        scorer_version=shell.scorer_version,
        ignored_prediction_count=ignored,
        warnings=warnings,
        confidence=shell.confidence,
        plugins=shell.plugins,
        by_stratum=strata,
        names=SystemNames.from_dict(data["names"]) if "names" in data else None,
        format_version=shell.format_version,
        run=run,
    )


@attrs.frozen
class _Reading:
    # How a document's figures are recomputed: its quantile, and whether its pooled
    # metrics carry case counts (format 3; a format 2 document's clustered intervals used z).
    z: float
    case_counts: bool


def read_clustering(
    cells: PairedBinomial,
    difference: Mapping[str, object],
    clustered: Mapping[str, object],
    z: float,
    *,
    cases: int | None,
) -> PairedClustering:
    """A pooled difference's case-clustered figures, recomputed from its cells and published
    design effects; what ``difference`` and ``clustered`` (``clustered_mcnemar``) list must match.

    Raises:
        ChartscoreError: ``invalid_report`` for a listed figure the recomputed ones differ from.
    """
    n = cells.total_count
    test = clustered["design_effect"]
    clustering = PairedClustering.from_design_effects(
        cells,
        read_design_effect(difference["design_effect"], n),
        None if test is None else read_design_effect(test, n),
        z,
        cases=cases,
    )
    listed = difference["clustered_interval"]
    shown = PairedClustering(
        None if n == 0 else read_design_effect(difference["design_effect"], n),
        None if listed is None else _strict_json.interval(listed, -1.0, 1.0),
        None if test is None else read_design_effect(test, n),
        None if clustered["p"] is None else _strict_json.number(clustered["p"], 0.0, 1.0),
        cases,
    )
    if shown != clustering:
        _strict_json.invalid()
    return clustering


def _read_slice(
    value: object, kind: str, plugin_metrics: tuple[str, ...], reading: _Reading
) -> ComparisonSlice:
    pooled = kind != "field"
    optional = _OPTIONAL_KEYS if kind == "field" else _OPTIONAL_KEYS - {"kappa"}
    if kind != "overall":
        optional = optional | frozenset(plugin_metrics)
    data = _strict_json.members(value, _CORE_KEYS, optional)
    counts = {name: _strict_json.count(data[name]) for name in GOLD_COUNT_NAMES}
    if counts["field_count"] != counts["answerable_count"] + counts["unanswerable_count"]:
        _strict_json.invalid()
    sides = {side: _read_system_counts(data[f"{side}_counts"], counts) for side in _SIDES}
    paired = {
        name: _read_paired(data[name], name, counts, kind, reading)
        for name in PAIRED_METRICS + plugin_metrics
        if name in data
    }
    unpaired = {
        name: _read_unpaired(data[name], name, sides, reading, pooled)
        for name in UNPAIRED_METRICS
        if name in data
    }
    kappa = None
    if "kappa" in data:
        pair = _strict_json.members(data["kappa"], _SIDES)
        kappa = KappaComparison(
            KappaResult.from_dict(pair["baseline"]), KappaResult.from_dict(pair["candidate"])
        )
    return ComparisonSlice(
        counts=counts,
        baseline_counts=sides["baseline"],
        candidate_counts=sides["candidate"],
        paired=paired,
        unpaired=unpaired,
        kappa=kappa,
    )


def _read_system_counts(value: object, gold: Mapping[str, int]) -> dict[str, int]:
    data = _strict_json.members(value, _SYSTEM_COUNT_KEYS)
    counts = {name: _strict_json.count(data[name]) for name in SYSTEM_COUNT_NAMES}
    if sum(counts.values()) != gold["field_count"]:
        _strict_json.invalid()
    return counts


def _read_paired(
    value: object, name: str, gold: Mapping[str, int], kind: str, reading: _Reading
) -> PairedMetricResult:
    pooled = kind != "field"
    z, case_counts = reading.z, reading.case_counts
    data = _strict_json.members(value, _POOLED_PAIRED_KEYS if pooled else _PAIRED_KEYS)
    baseline, candidate = (
        MetricResult.from_dict(data["baseline"], z, pooled=pooled, case_counts=case_counts),
        MetricResult.from_dict(data["candidate"], z, pooled=pooled, case_counts=case_counts),
    )
    b, c = _strict_json.count(data["baseline_only"]), _strict_json.count(data["candidate_only"])
    n = baseline.total_count
    both = baseline.success_count - b
    if candidate.total_count != n or both < 0 or candidate.success_count - c != both:
        _strict_json.invalid()
    count = _GOLD_TOTALS.get(name)
    if count is None and kind == "field" and is_plugin_metric(name):
        count = "answerable_count"  # a plugin label's trials are the field's answerable rows
    if both + b + c > n or (count is not None and n != gold[count]):
        _strict_json.invalid()
    cells = PairedBinomial(both, b, c, n - both - b - c)
    keys: tuple[str, ...] = _DIFFERENCE_KEYS
    if pooled:
        keys = _POOLED_DIFFERENCE_KEYS if case_counts else _FORMAT_2_POOLED_DIFFERENCE_KEYS
    difference = _strict_json.members(data["difference"], keys)
    tests = _strict_json.members(data["mcnemar"], ("exact_p", "mid_p"))
    clustering = None
    if pooled:
        clustered = _strict_json.members(data["clustered_mcnemar"], ("design_effect", "p"))
        cases = read_case_count(difference["case_count"], n) if case_counts else None
        clustering = read_clustering(cells, difference, clustered, z, cases=cases)
    figures = (difference["estimate"], difference["interval"], tests["exact_p"], tests["mid_p"])
    if n == 0:
        if any(figure is not None for figure in figures):
            _strict_json.invalid()
        return PairedMetricResult(baseline, candidate, b, c, None, None, None, None, clustering)
    estimate = _strict_json.number(difference["estimate"], -1.0, 1.0)
    interval = _strict_json.interval(difference["interval"], -1.0, 1.0)
    exact_p = _strict_json.number(tests["exact_p"], 0.0, 1.0)
    mid_p = _strict_json.number(tests["mid_p"], 0.0, 1.0)
    shown = PairedMetricResult(
        baseline, candidate, b, c, estimate, interval, exact_p, mid_p, clustering
    )
    # Recomputed from the four cells with the library's own functions, compared exactly.
    if shown != PairedMetricResult.from_parts(cells, z, None, (baseline, candidate), clustering):
        _strict_json.invalid()
    return shown


def _read_unpaired(
    value: object,
    name: str,
    sides: Mapping[str, Mapping[str, int]],
    reading: _Reading,
    pooled: bool = False,
) -> UnpairedMetricResult:
    data = _strict_json.members(value, _SIDES)
    z, case_counts = reading.z, reading.case_counts
    result = UnpairedMetricResult(
        MetricResult.from_dict(data["baseline"], z, pooled=pooled, case_counts=case_counts),
        MetricResult.from_dict(data["candidate"], z, pooled=pooled, case_counts=case_counts),
    )
    count = _SYSTEM_TOTALS.get(name)
    if count is not None and (
        result.baseline.total_count != sides["baseline"][count]
        or result.candidate.total_count != sides["candidate"][count]
    ):
        _strict_json.invalid()
    return result
