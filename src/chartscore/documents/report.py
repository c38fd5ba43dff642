"""The value-free report: counts, Wilson intervals, kappa, and version stamps.

Built from a :class:`~chartscore.documents.tally.Tally` only. It holds field ids
(developer-authored schema names), closed type and metric names and numbers:
no values, case ids, digests, offsets, paths or per-case decisions.
``to_json`` is RFC 8785 canonical JSON, byte-identical for the same counts.

This module holds the documents, :class:`SliceReport` and :class:`Report`, and how they
are read back; the per-metric records a slice is made of are in
:mod:`chartscore.documents.metric_results`, the weighted estimate in
:mod:`chartscore.documents.weighted`. Both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Final, Protocol

import attrs

from chartscore import metrics as catalog
from chartscore._format import MAX_LABEL_NAME
from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents._shell import (
    COUNT_SUMS,
    FIELD_TYPE_NAMES,
    SCORER_NAME,
    STRATA_KEYS,
    STRATUM_NAME,
    check_slices,
    check_strata,
    check_sums,
    check_trials,
    read_confidence,
    read_scorer,
    read_shell,
    read_slices,
    read_strata,
    shell_members,
)
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.display import Displayed
from chartscore.documents.metric_results import (
    Clustering,
    CoefficientResult,
    Interval,
    KappaResult,
    LabelResult,
    MagnitudeResult,
    MetricResult,
    UncertaintyResult,
    check_figure,
    f1_of_metrics,
    lookup_name,
    read_case_count,
    read_design_effect,
)
from chartscore.documents.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    is_plugin_metric,
    split_metric,
    stamps_to_dict,
)
from chartscore.documents.run import RUN_KEY, RunSection
from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    LABEL_METRICS,
    NOT_APPLICABLE_COUNTS,
    OPTIONAL_CORE_METRICS,
    REQUIRED_CORE_METRICS,
    SHARE_WITHHELD_METRICS,
    TYPE_METRICS,
    Binomial,
    SliceTally,
    Tally,
    pool_not_applicable,
    valid_not_applicable,
)
from chartscore.documents.weighted import (
    WeightedEstimate,
    WeightedMetric,
    fraction_text,
    is_fraction_text,
    weighted_of_tally,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.binomial import Z95
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, z_for
from chartscore.stats.confusion import macro_f1, pooled_kappa
from chartscore.stats.reliability import alpha_interval

__all__ = [
    "COEFFICIENT_NAMES",
    "CORE_TOTALS",
    "FIELD_TYPE_NAMES",
    "MAX_LABEL_NAME",
    "READABLE_REPORT_VERSIONS",
    "REPORT_FORMAT",
    "REPORT_FORMAT_VERSION",
    "SCORER_NAME",
    "STRATUM_NAME",
    "Clustering",
    "CoefficientResult",
    "Interval",
    "KappaResult",
    "LabelResult",
    "MagnitudeResult",
    "MetricResult",
    "Report",
    "SliceReport",
    "UncertaintyResult",
    "WeightedEstimate",
    "WeightedMetric",
    "fraction_text",
    "is_fraction_text",
    "read_case_count",
    "read_confidence",
    "read_design_effect",
    "read_scorer",
    "trials_of",
]

REPORT_FORMAT: Final = "chartscore.report"
REPORT_FORMAT_VERSION: Final = 3
"""Format 3 added each pooled metric's ``case_count`` (its clustered interval's degrees of freedom);
2 added the confidence level and the pooled slices' clustered figures; 1 is refused."""
READABLE_REPORT_VERSIONS: Final = (2, 3)
"""Format 2 documents are read, and written back, as they were: clustered intervals on ``z``."""


_SLICE_KINDS: Final = ("overall", "field_type", "field")


class _Pooled(Protocol):
    @property
    def clusters(self) -> object: ...


def pooled_z(confidence: float, pooled: Iterable[_Pooled]) -> float:
    """The quantile of ``confidence`` for a new document, whose pooled slices need per-case sums.

    Raises:
        ValueError: a pooled slice without its per-case sums (a scorer bug), or a
            confidence level that is not 0.9, 0.95 or 0.99.
    """
    z = z_for(confidence)
    if any(part.clusters is None for part in pooled):
        raise ValueError("pooled slices need their per-case sums")
    return z


@attrs.frozen
class SliceReport:
    """Counts and metrics for one slice: overall, one field id, or one field type.

    Attributes:
        counts: The six counts by name; read one with :meth:`count`.
        metrics: Every binomial metric by name; read one with :meth:`metric`.
        kappa: Cohen's kappa (:class:`KappaResult`) for a categorical, boolean or
            ordinal field slice; None for other fields and for pooled slices.
        labels: Each declared label's :class:`LabelResult` (a field slice of
            a field with declared labels), by name; None otherwise.
        coefficients: A field slice's prevalence-robust coefficients beside
            kappa (:class:`CoefficientResult`): ``ac1`` or ``ac2`` and
            ``alpha``, by name; a number or date field's interval ``alpha``;
            None otherwise.
        magnitude: A number or date field's error magnitude
            (:class:`MagnitudeResult`); None otherwise.
        uncertainty: A field slice's declared-uncertainty figures
            (:class:`UncertaintyResult`); None for pooled slices.
        not_applicable: ``not_applicable_count`` and ``not_applicable_answer`` of a slice
            with not-applicable gold rows (docs/metrics.md, "Not applicable"); None (and
            absent from the JSON) without such rows.
    """

    counts: Mapping[str, int]
    metrics: Mapping[str, MetricResult]
    kappa: KappaResult | None = None
    labels: Mapping[str, LabelResult] | None = None
    coefficients: Mapping[str, CoefficientResult] | None = None
    magnitude: MagnitudeResult | None = None
    uncertainty: UncertaintyResult | None = None
    not_applicable: Mapping[str, int] | None = None
    pooled_kappa_written: bool = attrs.field(default=True, eq=False, repr=False)
    """Whether the JSON holds ``pooled_kappa`` (a slice with labels): False for a report
    written before it was added (format 2, or format 3 before 0.1.0), which keeps its bytes
    when read and written back."""

    @property
    def micro_f1(self) -> float | None:
        """F1 of the label counts pooled over labels (and fields); None without labels."""
        if "sensitivity" not in self.metrics:
            return None
        return f1_of_metrics(self.metrics)

    @property
    def macro_f1(self) -> float | None:
        """The mean F1 of the field's labels with a defined F1; None without labels."""
        if self.labels is None:
            return None
        return macro_f1(
            (
                label.metrics["sensitivity"].success_count,
                label.metrics["sensitivity"].total_count,
                label.metrics["ppv"].total_count,
            )
            for label in self.labels.values()
        )

    @property
    def pooled_kappa(self) -> float | None:
        """Cohen's kappa of the label cells pooled into one two-by-two table; None without labels.

        chart-review's pooled (``*``) kappa: TP and FN are the pooled
        sensitivity's successes and failures, TN and FP the pooled
        specificity's (:func:`chartscore.stats.confusion.pooled_kappa`). In the
        report JSON as ``pooled_kappa`` beside ``micro_f1``, in every slice with labels.
        """
        if "sensitivity" not in self.metrics:
            return None
        sensitivity, specificity = self.metrics["sensitivity"], self.metrics["specificity"]
        tp, tn = sensitivity.success_count, specificity.success_count
        return pooled_kappa(tp, sensitivity.total_count - tp, tn, specificity.total_count - tn)

    def label(self, name: str) -> LabelResult:
        """One declared label's metrics, e.g. ``"current"``.

        Raises:
            KeyError: the slice has no label ``name``.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        if self.labels is None:
            raise KeyError(lookup_name(name))
        return self.labels[lookup_name(name)]

    @classmethod
    def from_tally(cls, part: SliceTally, z: float = Z95) -> SliceReport:
        """Attach intervals (clustered ones for a pooled slice, and kappa) to a slice's counts."""
        clusters = part.clusters
        return cls(
            counts=dict(part.counts),
            metrics={
                name: MetricResult.from_binomial(b, z, None if clusters is None else clusters[name])
                for name, b in part.metrics.items()
            },
            kappa=None if part.kappa is None else KappaResult.from_table(part.kappa, z),
            coefficients=_coefficients(part, z),
            magnitude=None if part.magnitude is None else MagnitudeResult(part.magnitude.sums, z),
            uncertainty=None
            if part.uncertainty is None
            else UncertaintyResult(part.uncertainty, z),
            labels=None
            if part.labels is None
            else {
                name: LabelResult.from_binomials(table, z) for name, table in part.labels.items()
            },
            not_applicable=None if part.not_applicable is None else dict(part.not_applicable),
        )

    @classmethod
    def from_dict(
        cls,
        value: object,
        *,
        kind: str,
        z: float = Z95,
        plugin_metrics: tuple[str, ...] = (),
        format_version: int = REPORT_FORMAT_VERSION,
    ) -> SliceReport:
        """Rebuild a slice from its report JSON, checking its shape.

        Args:
            value: The decoded slice.
            kind: ``"overall"`` (core metrics only), ``"field_type"`` (core and
                type metrics) or ``"field"`` (core and type metrics, and kappa).
                The metrics of the two pooled kinds carry clustered figures.
            z: The normal quantile of the document's confidence level.
            plugin_metrics: The plugin metrics the document's ``plugins``
                declare, in report order; a field or type slice may hold them.
            format_version: The document's format: 2 for pooled metrics
                without ``case_count`` and Hanley and McNeil's AUROC interval.

        Raises:
            ChartscoreError: ``invalid_report`` for a missing count or core
                metric, a key outside the slice vocabulary for ``kind``, or a
                malformed count, metric or kappa; ``usage`` for a ``kind``
                that is not exactly one of the three.
        """
        if type(kind) is not str or kind not in _SLICE_KINDS or type(z) is not float:
            raise ChartscoreError(ErrorCode.USAGE)
        if format_version not in READABLE_REPORT_VERSIONS:
            raise ChartscoreError(ErrorCode.USAGE)
        current = format_version >= 3
        pooled = kind != "field"
        optional: tuple[str, ...] = (
            *OPTIONAL_CORE_METRICS,
            *LABEL_METRICS,
            "micro_f1",
            "pooled_kappa",
            *NOT_APPLICABLE_COUNTS,
        )
        if kind != "overall":
            optional += TYPE_METRICS + plugin_metrics
        if kind == "field":
            optional += (
                "kappa",
                "macro_f1",
                "labels",
                "error_magnitude",
                "declared_uncertainty",
                *COEFFICIENT_NAMES,
            )
        members = _strict_json.members(value, COUNT_NAMES + REQUIRED_CORE_METRICS, optional)
        counts: dict[str, int] = {name: _strict_json.count(members[name]) for name in COUNT_NAMES}
        metrics: dict[str, MetricResult] = {
            name: MetricResult.from_dict(members[name], z, pooled=pooled, case_counts=current)
            for name in CORE_METRICS + TYPE_METRICS + LABEL_METRICS + plugin_metrics
            if name in members
        }
        kappa = KappaResult.from_dict(members["kappa"]) if "kappa" in members else None
        labels = _read_labels(members, z) if kind == "field" else None
        coefficients: dict[str, CoefficientResult] = {
            name: CoefficientResult.from_dict(name, members[name])
            for name in COEFFICIENT_NAMES
            if name in members
        }
        magnitude = None
        if "error_magnitude" in members:
            magnitude = MagnitudeResult.from_dict(members["error_magnitude"], z, student=current)
            if (
                magnitude.pairs > counts["answerable_count"]
                or magnitude.gold_rows > counts["answerable_count"]
            ):
                _strict_json.invalid()
        uncertainty = None
        if "declared_uncertainty" in members:
            uncertainty = UncertaintyResult.from_dict(
                members["declared_uncertainty"], z, delong=current
            )
            sums = uncertainty.sums
            answered_answerable = (
                counts["answered_count"] - metrics["unanswerable_answer"].success_count
            )
            if sums.rows + sums.without != answered_answerable or (
                sums.agreed > metrics["normalized_agreement"].success_count
            ):
                _strict_json.invalid()
        elif kind == "field":
            _strict_json.invalid()  # every field slice has them
        _check_identities(counts, metrics, kind)
        _check_coefficients(kappa, coefficients, magnitude)
        not_applicable = _read_not_applicable(members)
        result = cls(
            counts=counts,
            metrics=metrics,
            kappa=kappa,
            labels=labels,
            coefficients=coefficients or None,
            magnitude=magnitude,
            uncertainty=uncertainty,
            not_applicable=not_applicable,
            pooled_kappa_written="pooled_kappa" in members,
        )
        _check_label_figures(members, result)
        return result

    def quantities(self) -> dict[str, int]:
        """The slice's integers by name: counts, then each metric's two counts."""
        out: dict[str, int] = dict(self.counts)
        out.update(self.not_applicable or {})
        for name, metric in self.metrics.items():
            out.update(metric.quantities(name))
        return out

    def count(self, name: str) -> int:
        """One of the six counts, e.g. ``"missing_count"``.

        Raises:
            KeyError: ``name`` is not a count of this slice.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.counts[lookup_name(name)]

    def metric(self, name: str) -> MetricResult:
        """One metric by name, e.g. ``"exact_agreement"``.

        Raises:
            KeyError: ``name`` is not a metric of this slice.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.metrics[lookup_name(name)]

    def to_dict(self) -> dict[str, object]:
        """The slice as report JSON: counts, then each metric, then kappa if any."""
        out: dict[str, object] = {name: self.counts[name] for name in COUNT_NAMES}
        out.update(self.not_applicable or {})
        for name, metric in self.metrics.items():
            out[name] = metric.to_dict()
        if self.kappa is not None:
            out["kappa"] = self.kappa.to_dict()
        for name, coefficient in (self.coefficients or {}).items():
            out[name] = coefficient.to_dict()
        if self.magnitude is not None:
            out["error_magnitude"] = self.magnitude.to_dict()
        if self.uncertainty is not None:
            out["declared_uncertainty"] = self.uncertainty.to_dict()
        if "sensitivity" in self.metrics:
            out["micro_f1"] = self.micro_f1
            if self.pooled_kappa_written:
                out["pooled_kappa"] = self.pooled_kappa
        if self.labels is not None:
            out["macro_f1"] = self.macro_f1
            out["labels"] = {name: label.to_dict() for name, label in self.labels.items()}
        return out


def _read_not_applicable(members: Mapping[str, object]) -> dict[str, int] | None:
    # Both not-applicable counts or neither; at least one row, at most that many answers.
    present = [name for name in NOT_APPLICABLE_COUNTS if name in members]
    if not present:
        return None
    if len(present) != len(NOT_APPLICABLE_COUNTS):
        _strict_json.invalid()
    counts = {name: _strict_json.count(members[name]) for name in NOT_APPLICABLE_COUNTS}
    if not valid_not_applicable(counts):
        _strict_json.invalid()
    return counts


def check_not_applicable(
    overall: SliceReport, fields: Iterable[SliceReport], types: Mapping[str, SliceReport]
) -> None:
    """The pooled slices' not-applicable counts are their fields' sums (an edited file is not).

    Raises:
        ChartscoreError: ``invalid_report`` when they are not.
    """
    fields = list(fields)
    if pool_not_applicable(part.not_applicable for part in fields) != (
        None if overall.not_applicable is None else dict(overall.not_applicable)
    ):
        _strict_json.invalid()
    for part in types.values():
        if part.not_applicable is not None and not valid_not_applicable(part.not_applicable):
            _strict_json.invalid()
    pooled = pool_not_applicable(part.not_applicable for part in types.values())
    if pooled != (None if overall.not_applicable is None else dict(overall.not_applicable)):
        _strict_json.invalid()


COEFFICIENT_NAMES: Final[tuple[str, ...]] = ("ac1", "ac2", "alpha")
"""The prevalence-robust coefficients a field slice may hold beside kappa."""


def _coefficients(part: SliceTally, z: float) -> dict[str, CoefficientResult] | None:
    # AC1 with nominal alpha for unweighted tables; AC2 with ordinal alpha for ordinal fields;
    # interval alpha for numbers and dates.
    table, magnitude = part.kappa, part.magnitude
    if magnitude is not None:
        pairs = magnitude.sums.pairs
        if magnitude.alpha is None:
            return {"alpha": CoefficientResult("alpha", None, None, pairs, "interval")}
        interval = alpha_interval(magnitude.alpha, magnitude.alpha_variance, z)
        value = float(magnitude.alpha)
        return {"alpha": CoefficientResult("alpha", value, interval, pairs, "interval")}
    if table is None:
        return None
    metric = "nominal" if table.weighting == "none" else "ordinal"
    gwet = CoefficientResult.gwet(table, z)
    return {gwet.name: gwet, "alpha": CoefficientResult.alpha(table, metric, z)}


def _check_coefficients(
    kappa: KappaResult | None,
    coefficients: Mapping[str, CoefficientResult],
    magnitude: MagnitudeResult | None = None,
) -> None:
    # Kappa's fields hold one Gwet coefficient and alpha, over kappa's pairs; a number or
    # date field holds interval alpha over its error magnitude's pairs.
    if magnitude is not None:
        alpha = coefficients.get("alpha")
        if kappa is not None or set(coefficients) != {"alpha"} or alpha is None:
            _strict_json.invalid()
        if alpha.metric != "interval" or alpha.pairs != magnitude.pairs:
            _strict_json.invalid()
        return
    if kappa is None:
        if coefficients:
            _strict_json.invalid()
        return
    gwet = [name for name in ("ac1", "ac2") if name in coefficients]
    if len(gwet) != 1 or "alpha" not in coefficients:
        _strict_json.invalid()
    expected = "nominal" if gwet[0] == "ac1" else "ordinal"
    if coefficients["alpha"].metric != expected or any(
        c.pairs != kappa.pairs for c in coefficients.values()
    ):
        _strict_json.invalid()


def _read_labels(members: Mapping[str, object], z: float) -> dict[str, LabelResult] | None:
    # A field slice's labels: present together with its micro metrics and macro F1.
    present = [name in members for name in ("labels", "macro_f1", "sensitivity")]
    if any(present) != all(present):
        _strict_json.invalid()
    if not present[0]:
        return None
    labels = _strict_json.mapping(members["labels"])
    if not labels or any(
        not (type(name) is str and 0 < len(name) <= MAX_LABEL_NAME and name.isprintable())
        for name in labels
    ):
        _strict_json.invalid()
    return {name: LabelResult.from_dict(labels[name], z) for name in sorted(labels)}


def _check_label_figures(members: Mapping[str, object], part: SliceReport) -> None:
    # Label metrics come as a set, with micro F1 (and pooled kappa, since 0.1.0: a report
    # written before has none); a field's are the sums of its labels'.
    present = [name in members for name in (*LABEL_METRICS, "micro_f1")]
    if any(present) != all(present) or ("pooled_kappa" in members and not all(present)):
        _strict_json.invalid()
    if not present[0]:
        return
    metrics = part.metrics
    if (
        metrics["sensitivity"].success_count != metrics["ppv"].success_count
        or metrics["specificity"].success_count != metrics["npv"].success_count
    ):
        _strict_json.invalid()
    check_figure(members["micro_f1"], part.micro_f1)
    if "pooled_kappa" in members:  # absent from a report written before it was added
        check_figure(members["pooled_kappa"], part.pooled_kappa)
    if part.labels is None:
        return
    check_figure(members["macro_f1"], part.macro_f1)
    answerable = part.counts["answerable_count"]
    for name in LABEL_METRICS:
        for which in ("success_count", "total_count"):
            total = sum(getattr(label.metrics[name], which) for label in part.labels.values())
            if total != getattr(metrics[name], which):
                _strict_json.invalid()
    rows = set()
    for label in part.labels.values():
        # Every answerable row is a gold positive or negative of each label, and the
        # answered rows of the right type are its answered positives or negatives.
        if label.metrics["sensitivity"].total_count + label.metrics["specificity"].total_count != (
            answerable
        ):
            _strict_json.invalid()
        rows.add(label.metrics["ppv"].total_count + label.metrics["npv"].total_count)
    if len(rows) != 1 or rows.pop() > min(answerable, part.counts["answered_count"]):
        _strict_json.invalid()


CORE_TOTALS: Final = {
    metric.name: metric.trials
    for metric in catalog.CATALOG
    if metric.counts in (catalog.ROWS, catalog.MAJORITY)
}
"""The count each metric's ``total_count`` equals (docs/metrics.md); item metrics count items."""


def trials_of(name: str, kind: str) -> str | None:
    """The count a metric's trials equal in a slice of ``kind``, or None if not checked.

    :data:`CORE_TOTALS`; a plugin label's trials are the answerable rows. A pooled
    slice pools a type metric over only the fields that report it, so there only
    the core metrics are checked.
    """
    if kind != "field" and name not in CORE_METRICS:
        return None
    if is_plugin_metric(name):
        return "answerable_count"
    return CORE_TOTALS.get(name)


def _check_identities(
    counts: Mapping[str, int], metrics: Mapping[str, MetricResult], kind: str
) -> None:
    # A report's counts obey the identities of docs/metrics.md; an edited one may not.
    check_sums(counts, COUNT_SUMS)
    check_trials(counts, ((trials_of(name, kind), m.total_count) for name, m in metrics.items()))
    # A plugin labels each answered answerable row of the type once: its labels add up to
    # at most the answered rows.
    labelled: dict[str, int] = {}
    for name, metric in metrics.items():
        parts = split_metric(name) if kind == "field" else None
        if parts is not None:
            labelled[parts[0]] = labelled.get(parts[0], 0) + metric.success_count
    if any(total > counts["answered_count"] for total in labelled.values()):
        _strict_json.invalid()
    if not supported_within_evidenced(metrics):
        _strict_json.invalid()


def check_optional_metrics(slices: Iterable[SliceReport]) -> None:
    """Refuse a document whose slices do not all hold, or all lack, each optional core metric
    (``evidence_provided``: a document written before it has it nowhere).

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    found = {frozenset(OPTIONAL_CORE_METRICS).intersection(part.metrics) for part in slices}
    if len(found) > 1:
        _strict_json.invalid()


def supported_within_evidenced(metrics: Mapping[str, Binomial | MetricResult]) -> bool:
    """Whether a slice's supported answers are among its evidenced ones (when it has both).

    Support needs a clinical-record span, so ``evidence_support`` successes are at most
    ``evidence_provided`` successes (docs/metrics.md, "Evidence provided").
    """
    support, provided = metrics.get("evidence_support"), metrics.get("evidence_provided")
    return support is None or provided is None or support.success_count <= provided.success_count


@attrs.frozen
class Report(Displayed):
    """A scoring report that may leave the protected environment.

    Attributes:
        overall: All gold fields.
        by_field: One slice per field id.
        by_field_type: One slice per field type present in the gold set.
        scorer_version: The chartscore version that computed it.
        ignored_prediction_count: Predictions skipped because their key is not
            in gold (``extra_predictions="ignore"``); None when such predictions
            are refused, and then absent from the JSON.
        confidence: The confidence level of every interval (0.9, 0.95 or 0.99).
        plugins: The stamps (name, version, code digest, labels) of the plugin
            metrics the report holds, sorted by name; empty (and absent from
            the JSON) without plugins.
        by_stratum: Each declared stratum's pooled slice, by ``key=label``
            (``"site=A"``); empty (and absent from the JSON) without a strata file.
        by_stratum_field_type: Each stratum's pooled slice per field type,
            ``{"site=A": {"date": slice}}``; empty without a strata file.
        overall_weighted: With a declared sampling design, the overall slice's
            weighted estimates (:class:`WeightedEstimate`); None otherwise.
        format_version: The format the report was read in (2 or 3), which
            :meth:`to_json` writes back; a new report is format 3.
        run: Run cost and latency (:class:`~chartscore.documents.run.RunSection`) when some
            prediction line carried ``usage``; None (and absent from the JSON) otherwise.
    """

    overall: SliceReport
    by_field: Mapping[str, SliceReport]
    by_field_type: Mapping[str, SliceReport]
    scorer_version: str = __version__
    ignored_prediction_count: int | None = None
    confidence: float = DEFAULT_CONFIDENCE
    plugins: tuple[PluginStamp, ...] = ()
    by_stratum: Mapping[str, SliceReport] = attrs.field(factory=dict)
    by_stratum_field_type: Mapping[str, Mapping[str, SliceReport]] = attrs.field(factory=dict)
    overall_weighted: WeightedEstimate | None = None
    format_version: int = attrs.field(default=REPORT_FORMAT_VERSION, eq=False, repr=False)
    run: RunSection | None = None

    @classmethod
    def from_tally(cls, tally: Tally, confidence: float = DEFAULT_CONFIDENCE) -> Report:
        """Compute every interval from a value-free tally, at ``confidence``.

        Raises:
            ValueError: a pooled slice without its per-case sums (a scorer
                bug), or a confidence level that is not 0.9, 0.95 or 0.99.
        """
        z = pooled_z(confidence, [tally.overall, *tally.by_field_type.values()])
        return cls(
            overall=SliceReport.from_tally(tally.overall, z),
            by_field={k: SliceReport.from_tally(v, z) for k, v in tally.by_field.items()},
            by_field_type={k: SliceReport.from_tally(v, z) for k, v in tally.by_field_type.items()},
            ignored_prediction_count=tally.ignored_prediction_count,
            confidence=confidence,
            plugins=tally.plugins,
            by_stratum={k: SliceReport.from_tally(v, z) for k, v in tally.by_stratum.items()},
            by_stratum_field_type={
                k: {name: SliceReport.from_tally(part, z) for name, part in v.items()}
                for k, v in tally.by_stratum_field_type.items()
            },
            overall_weighted=weighted_of_tally(tally, z),
            run=None if tally.run is None else RunSection.of(tally.run),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """Load a report saved with :meth:`to_json`, checking it strictly.

        The rebuilt report gives back the same bytes:
        ``Report.from_json(r.to_json()).to_json() == r.to_json()``. Every
        derived figure is checked against the counts: each interval must be
        the Wilson interval of its counts at the document's ``confidence``
        (recomputed with :func:`~chartscore.stats.wilson_interval`, compared
        exactly), each pooled metric's clustered interval must be the one its
        counts and its published design effect give, each slice's
        counts must obey the identities of docs/metrics.md, and the overall and
        field-type slices must be the sums of the field slices. Kappa's table
        is not in the report, so kappa is checked only to lie in its interval.

        Args:
            text: The report's JSON text (``str``, or UTF-8 ``bytes``); one
                trailing line end, as the command line writes it, is fine.

        Returns:
            The :class:`Report`.

        Raises:
            ChartscoreError: ``unknown_report_format`` when ``format`` is not
                ``"chartscore.report"`` or ``format_version`` is not 2;
                ``invalid_report`` for text that is not strict JSON (NaN,
                duplicate keys), a key outside the report's vocabulary, a count
                that is not a non-negative integer, an interval that is not two
                ordered numbers in [0, 1] (kappa: [-1, 1]), a field id that is
                not a valid field id or a field type name that is not a type,
                or any figure that disagrees with the counts (an edited file).
                The optional ``ignored_prediction_count`` must be a count;
                ``confidence`` must be 0.9, 0.95 or 0.99.
                ``file_too_large (report)`` over 16 MiB; the text must be UTF-8
                with no byte order mark.
                The message never contains the document's text.
        """
        shell = read_shell(
            _strict_json.parse(text),
            REPORT_FORMAT,
            READABLE_REPORT_VERSIONS,
            optional=(
                "ignored_prediction_count",
                "plugins",
                *STRATA_KEYS,
                "overall_weighted",
                RUN_KEY,
            ),
        )
        members, format_version, z = shell.members, shell.format_version, shell.z
        plugin_metrics = shell.plugin_metrics

        def read(part: object, kind: str) -> SliceReport:
            plugged = () if kind == "overall" else plugin_metrics
            return SliceReport.from_dict(
                part, kind=kind, z=z, plugin_metrics=plugged, format_version=format_version
            )

        overall, fields, types = read_slices(members, read)
        check_plugin_metrics(
            shell.plugins,
            [("overall", overall.metrics)]
            + [("field", part.metrics) for part in fields.values()]
            + [("field_type", part.metrics) for part in types.values()],
        )
        check_slices(overall, fields.values(), types.values())
        check_not_applicable(overall, fields.values(), types)
        check_optional_metrics([overall, *fields.values(), *types.values()])
        strata, strata_types = read_strata(
            members,
            lambda part: read(part, "overall"),
            lambda _, part: _stratum_type(read(part, "field_type")),
            types,
        )
        check_strata(overall, types, strata, strata_types)
        weighted = None
        if "overall_weighted" in members:
            weighted = _read_weighted(members["overall_weighted"], overall, strata, z)
        return cls(
            overall=overall,
            by_field=fields,
            by_field_type=types,
            scorer_version=shell.scorer_version,
            ignored_prediction_count=(
                _strict_json.count(members["ignored_prediction_count"])
                if "ignored_prediction_count" in members
                else None
            ),
            confidence=shell.confidence,
            plugins=shell.plugins,
            by_stratum=strata,
            by_stratum_field_type=strata_types,
            overall_weighted=weighted,
            format_version=format_version,
            run=RunSection.from_dict(members[RUN_KEY]) if RUN_KEY in members else None,
        )

    def core(self) -> Report:
        """This report as disclosure control starts from it (docs/disclosure.md).

        Without what needs the values' rules, which ``share`` adds itself
        under the dominance rule (error magnitudes with interval alpha, and
        declared uncertainty), without the weighted estimate (``share``
        publishes it only where its inputs are), and without the labels'
        pooled (micro-averaged) metrics: in a single-label field they are the
        agreement rate and kappa's pairs in another form, and as cells of
        their own they would turn differences of those into cells. Each
        label's metrics, F1 and the macro F1 stay.
        """

        def core_slice(part: SliceReport) -> SliceReport:
            metrics = {k: v for k, v in part.metrics.items() if k not in SHARE_WITHHELD_METRICS}
            coefficients = part.coefficients if part.magnitude is None else None
            return attrs.evolve(
                part, metrics=metrics, coefficients=coefficients, magnitude=None, uncertainty=None
            )

        return attrs.evolve(self.each_slice(core_slice), overall_weighted=None)

    def without_metric(self, name: str) -> Report:
        """This report with the metric ``name`` in no slice (an optional one: ``share``)."""

        def without(part: SliceReport) -> SliceReport:
            metrics = {k: v for k, v in part.metrics.items() if k != name}
            return attrs.evolve(part, metrics=metrics)

        return self.each_slice(without)

    def each_slice(self, change: Callable[[SliceReport], SliceReport]) -> Report:
        """This report with ``change`` applied to every slice, stratum slices included."""
        return attrs.evolve(
            self,
            overall=change(self.overall),
            by_field={name: change(part) for name, part in self.by_field.items()},
            by_field_type={name: change(part) for name, part in self.by_field_type.items()},
            by_stratum={name: change(part) for name, part in self.by_stratum.items()},
            by_stratum_field_type={
                name: {t: change(part) for t, part in parts.items()}
                for name, parts in self.by_stratum_field_type.items()
            },
        )

    def without_labels(self) -> Report:
        """This report without per-label metrics (``share --releases``: docs/disclosure.md).

        The joint audit of successive releases does not model labels yet, so a
        release shared with earlier ones carries none (each label's metrics,
        F1 and the macro F1 go; the labels pooled are never shared).
        """

        def unlabelled(part: SliceReport) -> SliceReport:
            return part if part.labels is None else attrs.evolve(part, labels=None)

        return attrs.evolve(
            self, by_field={name: unlabelled(part) for name, part in self.by_field.items()}
        )

    def without_magnitudes(self) -> Report:
        """This report without what needs the values themselves (docs/partials.md).

        A number or date field's error magnitude (its chance level needs gold's
        median) and its interval alpha (a jackknife over every pair's distance)
        cannot be computed from counts: a report merged from sites' partials
        has neither, and equals the pooled data's report without them.
        """

        def counts_only(part: SliceReport) -> SliceReport:
            if part.magnitude is None:
                return part
            return attrs.evolve(part, magnitude=None, coefficients=None)

        return attrs.evolve(
            self, by_field={name: counts_only(part) for name, part in self.by_field.items()}
        )

    def to_dict(self) -> dict[str, object]:
        """The report as plain JSON-ready data."""
        out = shell_members(REPORT_FORMAT, self)
        if self.ignored_prediction_count is not None:
            out["ignored_prediction_count"] = self.ignored_prediction_count
        if self.plugins:
            out["plugins"] = stamps_to_dict(self.plugins)
        if self.by_stratum:
            out["by_stratum"] = {k: v.to_dict() for k, v in self.by_stratum.items()}
            out["by_stratum_field_type"] = {
                k: {name: part.to_dict() for name, part in v.items()}
                for k, v in self.by_stratum_field_type.items()
            }
        if self.overall_weighted is not None:
            out["overall_weighted"] = self.overall_weighted.to_dict()
        if self.run is not None:
            out[RUN_KEY] = self.run.to_dict()
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())


def _stratum_type(part: SliceReport) -> SliceReport:
    # A stratum's slice of a field type: a type slice without majority_baseline.
    if "majority_baseline" in part.metrics:
        _strict_json.invalid()
    return part


def _read_weighted(
    value: object, overall: SliceReport, strata: Mapping[str, SliceReport], z: float
) -> WeightedEstimate:
    # Every estimate recomputed from the strata's counts and the declared fractions, every
    # interval from its published design effect: a document's figures must be those.
    members = _strict_json.members(value, ("fractions", "metrics"))
    listed = _strict_json.mapping(members["fractions"])
    keys = {name.partition("=")[0] for name in listed if type(name) is str}
    fractions: dict[str, Decimal] = {}
    for name, text in listed.items():
        if name not in strata or type(text) is not str or not is_fraction_text(text):
            _strict_json.invalid()
        fractions[name] = Decimal(text)
    sampled = {name for name in strata if name.partition("=")[0] in keys}
    if len(keys) != 1 or sampled != set(fractions):
        _strict_json.invalid()
    names = sorted(fractions)
    shown = _strict_json.mapping(members["metrics"])
    if set(shown) != set(overall.metrics):
        _strict_json.invalid()
    metrics: dict[str, WeightedMetric] = {}
    for metric in overall.metrics:
        figures = _strict_json.members(shown[metric], ("estimate", "design_effect", "interval"))
        parts = [
            (fractions[name], strata[name].metrics[metric].success_count,
             strata[name].metrics[metric].total_count)
            for name in names
        ]  # fmt: skip
        trials = sum(m for _, _, m in parts)
        design = read_design_effect(figures["design_effect"], trials)
        clusterings = [strata[name].metrics[metric].clustering for name in names]
        cases = [c.cases for c in clusterings if c is not None and c.cases is not None]
        found = WeightedMetric.of(
            parts, z, shown=design, cases=cases if len(cases) == len(names) else None
        )
        if found.to_dict() != {**figures, "interval": figures["interval"]}:
            _strict_json.invalid()
        metrics[metric] = found
    return WeightedEstimate(fractions, metrics)
