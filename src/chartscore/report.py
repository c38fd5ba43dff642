"""The value-free report: counts, Wilson intervals, kappa, and version stamps.

Built from a :class:`~chartscore.tally.Tally` only. It holds field ids
(developer-authored schema names), closed type and metric names and numbers:
no values, case ids, digests, offsets, paths or per-case decisions.
``to_json`` is RFC 8785 canonical JSON, byte-identical for the same counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import attrs

from chartscore import _strict_json
from chartscore._version import __version__
from chartscore.canonical_json import canonical_json
from chartscore.clustered import (
    CONFIDENCE_LEVELS,
    DEFAULT_CONFIDENCE,
    ClusterSums,
    clustered_wilson,
    design_effect,
    is_published_design_effect,
    published_design_effect,
    z_for,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.errors import valid_field_id as is_valid_field_id
from chartscore.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    split_metric,
    stamps_from_dict,
    stamps_to_dict,
)
from chartscore.stats import Z95, cohen_kappa, wilson_interval
from chartscore.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    TYPE_METRICS,
    Binomial,
    KappaTable,
    SliceTally,
    Tally,
)

REPORT_FORMAT: Final = "chartscore.report"
REPORT_FORMAT_VERSION: Final = 2
"""Format 2 added the confidence level and the pooled slices' clustered figures; 1 is refused."""
SCORER_NAME: Final = "chartscore"
FIELD_TYPE_NAMES: Final = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")
"""The field types a ``by_field_type`` slice may be named after (``chartscore.FieldType``)."""

_TOP_KEYS: Final = (
    "format",
    "format_version",
    "scorer",
    "confidence",
    "overall",
    "by_field",
    "by_field_type",
)
_METRIC_KEYS: Final = ("success_count", "total_count", "interval")
_POOLED_METRIC_KEYS: Final = (*_METRIC_KEYS, "design_effect", "clustered_interval")
_KAPPA_KEYS: Final = ("value", "interval", "pairs")
_SCORER_VERSION = re.compile(
    r"(?=.{1,64}$)[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?"
    r"(\+[a-z0-9]+(\.[a-z0-9]+)*)?"
)
"""A PEP 440 version as chartscore writes it (lowercase local label), at most 64 characters."""

Interval = tuple[float, float]


_SLICE_KINDS: Final = ("overall", "field_type", "field")


def _name(name: object) -> str:
    # A look-up key by exact type: a str subclass's __hash__ and __eq__ are the caller's code.
    if type(name) is not str:
        raise ChartscoreError(ErrorCode.USAGE)
    return name


def read_scorer(value: object) -> str:
    """The version from a document's ``{"name": "chartscore", "version": ...}``.

    Raises:
        ChartscoreError: ``invalid_report`` for another name, or a version that
            is not a version string as chartscore writes it.
    """
    scorer = _strict_json.members(value, ("name", "version"))
    version = scorer["version"]
    if scorer["name"] != SCORER_NAME or type(version) is not str:
        _strict_json.invalid()
    if _SCORER_VERSION.fullmatch(version) is None:
        _strict_json.invalid()
    return version


def read_confidence(value: object) -> float:
    """A document's confidence level: exactly one of 0.9, 0.95 and 0.99.

    Raises:
        ChartscoreError: ``invalid_report`` otherwise.
    """
    if type(value) is not float or value not in CONFIDENCE_LEVELS:
        _strict_json.invalid()
    return value


@attrs.frozen
class Clustering:
    """A pooled metric's case-clustered figures (docs/metrics.md, "Case-clustered intervals").

    Attributes:
        design_effect: The published design effect: the exact one rounded up
            to two significant digits, at least 1; None with no trials.
        interval: The Wilson interval with ``z**2`` times ``design_effect``
            (it contains the plain Wilson interval); None with no trials.
    """

    design_effect: float | None
    interval: Interval | None

    @classmethod
    def from_sums(cls, counts: Binomial, sums: ClusterSums, z: float = Z95) -> Clustering:
        """The clustered figures of a pooled metric from its counts and per-case sums."""
        shown = published_design_effect(
            design_effect(counts.success_count, counts.total_count, sums)
        )
        return cls.from_design_effect(counts, shown, z)

    @classmethod
    def from_design_effect(
        cls, counts: Binomial, shown: float | None, z: float = Z95
    ) -> Clustering:
        """The clustered figures from the counts and a published design effect."""
        if shown is None:
            return cls(None, None)
        return cls(shown, clustered_wilson(counts.success_count, counts.total_count, shown, z))

    def to_dict(self) -> dict[str, object]:
        """``{"design_effect", "clustered_interval"}``, the keys a pooled metric adds."""
        return {
            "design_effect": self.design_effect,
            "clustered_interval": None if self.interval is None else list(self.interval),
        }


def read_design_effect(value: object, total_count: int) -> float | None:
    """A document's published design effect: on the grid, or null exactly with no trials.

    Raises:
        ChartscoreError: ``invalid_report`` otherwise.
    """
    if total_count == 0:
        if value is not None:
            _strict_json.invalid()
        return None
    shown = _strict_json.number(value, 1.0, float("inf"))
    if not is_published_design_effect(shown):
        _strict_json.invalid()
    return shown


@attrs.frozen
class MetricResult:
    """One binomial metric: successes (or errors), trials and the Wilson interval.

    The rate is ``success_count / total_count`` when ``total_count > 0``;
    ``interval`` is None when there were no trials. ``clustering`` holds the
    case-clustered figures of a pooled slice's metric (overall, field type);
    None in a field slice.
    """

    success_count: int
    total_count: int
    interval: Interval | None
    clustering: Clustering | None = None

    @property
    def rate(self) -> float | None:
        """``success_count / total_count``, or None when there were no trials."""
        if not self.total_count:
            return None
        return self.success_count / self.total_count

    @property
    def clustered_interval(self) -> Interval | None:
        """The case-clustered interval (pooled slices), else None."""
        return None if self.clustering is None else self.clustering.interval

    @property
    def design_effect(self) -> float | None:
        """The published design effect (pooled slices), else None."""
        return None if self.clustering is None else self.clustering.design_effect

    @classmethod
    def from_binomial(
        cls, counts: Binomial, z: float = Z95, sums: ClusterSums | None = None
    ) -> MetricResult:
        """Attach the Wilson interval (and, given per-case sums, the clustered one)."""
        return cls(
            counts.success_count,
            counts.total_count,
            wilson_interval(counts.success_count, counts.total_count, z),
            None if sums is None else Clustering.from_sums(counts, sums, z),
        )

    @classmethod
    def from_dict(cls, value: object, z: float = Z95, *, pooled: bool = False) -> MetricResult:
        """Rebuild a metric from its report JSON, checking its shape and its figures.

        Args:
            value: The decoded metric.
            z: The normal quantile of the document's confidence level.
            pooled: A pooled slice's metric, which also holds
                ``design_effect`` and ``clustered_interval``.

        Raises:
            ChartscoreError: ``invalid_report`` unless ``value`` is exactly
                ``{"success_count", "total_count", "interval"}`` (pooled: and
                ``"design_effect"``, ``"clustered_interval"``) with counts
                ``0 <= success_count <= total_count``, intervals that are the
                ones its counts give (``null`` exactly when ``total_count`` is
                0), and a design effect on the published grid; ``usage``
                when ``z`` is not a float or ``pooled`` not a bool.
        """
        if type(z) is not float or type(pooled) is not bool:
            raise ChartscoreError(ErrorCode.USAGE)
        keys = _POOLED_METRIC_KEYS if pooled else _METRIC_KEYS
        members = _strict_json.members(value, keys)
        success_count = _strict_json.count(members["success_count"])
        total_count = _strict_json.count(members["total_count"])
        if success_count > total_count:
            _strict_json.invalid()
        shown: Interval | None = None
        if total_count == 0:
            if members["interval"] is not None:
                _strict_json.invalid()
        else:
            shown = _strict_json.interval(members["interval"], 0, 1)
        metric = cls.recomputed(success_count, total_count, shown, z)
        if not pooled:
            return metric
        counts = Binomial(success_count, total_count)
        clustering = Clustering.from_design_effect(
            counts, read_design_effect(members["design_effect"], total_count), z
        )
        listed = members["clustered_interval"]
        clustered = None if listed is None else _strict_json.interval(listed, 0, 1)
        if clustered != clustering.interval:
            _strict_json.invalid()
        return attrs.evolve(metric, clustering=clustering)

    @classmethod
    def recomputed(
        cls, success_count: int, total_count: int, shown: Interval | None, z: float = Z95
    ) -> MetricResult:
        """The metric computed from its counts, if ``shown`` is its interval exactly.

        Raises:
            ChartscoreError: ``invalid_report`` when the interval a document
                shows is not the Wilson interval of its counts (an edited file).
        """
        metric = cls.from_binomial(Binomial(success_count, total_count), z)
        if shown != metric.interval:
            _strict_json.invalid()
        return metric

    def quantities(self, name: str) -> dict[str, int]:
        """``{"<name>.success_count": ..., "<name>.total_count": ...}`` for sum checks."""
        return {
            f"{name}.success_count": self.success_count,
            f"{name}.total_count": self.total_count,
        }

    def to_dict(self) -> dict[str, object]:
        """``{"success_count", "total_count", "interval"}``, and the clustered figures if any."""
        out: dict[str, object] = {
            "success_count": self.success_count,
            "total_count": self.total_count,
            "interval": None if self.interval is None else list(self.interval),
        }
        if self.clustering is not None:
            out.update(self.clustering.to_dict())
        return out


@attrs.frozen
class KappaResult:
    """Cohen's kappa for one field: value and 95% interval (None if undefined), pairs."""

    value: float | None
    interval: Interval | None
    pairs: int

    @classmethod
    def from_table(cls, table: KappaTable, z: float = Z95) -> KappaResult:
        """Compute kappa and its Fleiss-Cohen-Everitt interval from the table."""
        result = cohen_kappa(table.cells, table.size, table.weighting, z)
        if result is None:
            return cls(None, None, table.pairs)
        value, interval, pairs = result
        return cls(value, interval, pairs)

    @classmethod
    def from_dict(cls, value: object) -> KappaResult:
        """Rebuild kappa from its report JSON, checking its shape.

        Raises:
            ChartscoreError: ``invalid_report`` unless ``value`` is exactly
                ``{"value", "interval", "pairs"}`` with ``pairs`` a count, and
                ``value`` in [-1, 1] with an interval of two numbers in [-1, 1],
                or both ``null`` (undefined kappa; always so with no pairs).
        """
        members = _strict_json.members(value, _KAPPA_KEYS)
        pairs = _strict_json.count(members["pairs"])
        if members["value"] is None and members["interval"] is None:
            return cls(None, None, pairs)
        if members["value"] is None or members["interval"] is None or pairs == 0:
            _strict_json.invalid()
        kappa = _strict_json.number(members["value"], -1, 1)
        interval = _strict_json.interval(members["interval"], -1, 1)
        if not interval[0] <= kappa <= interval[1]:
            _strict_json.invalid()
        return cls(kappa, interval, pairs)

    def to_dict(self) -> dict[str, object]:
        """``{"value", "interval", "pairs"}``."""
        return {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "pairs": self.pairs,
        }


@attrs.frozen
class SliceReport:
    """Counts and metrics for one slice: overall, one field id, or one field type.

    Attributes:
        counts: The six counts by name; read one with :meth:`count`.
        metrics: Every binomial metric by name; read one with :meth:`metric`.
        kappa: Cohen's kappa (:class:`KappaResult`) for a categorical, boolean or
            ordinal field slice; None for other fields and for pooled slices.
    """

    counts: Mapping[str, int]
    metrics: Mapping[str, MetricResult]
    kappa: KappaResult | None = None

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
        )

    @classmethod
    def from_dict(
        cls,
        value: object,
        *,
        kind: str,
        z: float = Z95,
        plugin_metrics: tuple[str, ...] = (),
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

        Raises:
            ChartscoreError: ``invalid_report`` for a missing count or core
                metric, a key outside the slice vocabulary for ``kind``, or a
                malformed count, metric or kappa; ``usage`` for a ``kind``
                that is not exactly one of the three.
        """
        if type(kind) is not str or kind not in _SLICE_KINDS or type(z) is not float:
            raise ChartscoreError(ErrorCode.USAGE)
        pooled = kind != "field"
        optional: tuple[str, ...] = ()
        if kind != "overall":
            optional = TYPE_METRICS + plugin_metrics + (("kappa",) if kind == "field" else ())
        members = _strict_json.members(value, COUNT_NAMES + CORE_METRICS, optional)
        counts: dict[str, int] = {name: _strict_json.count(members[name]) for name in COUNT_NAMES}
        metrics: dict[str, MetricResult] = {
            name: MetricResult.from_dict(members[name], z, pooled=pooled)
            for name in CORE_METRICS + TYPE_METRICS + plugin_metrics
            if name in members
        }
        kappa = KappaResult.from_dict(members["kappa"]) if "kappa" in members else None
        _check_identities(counts, metrics, kind)
        return cls(counts=counts, metrics=metrics, kappa=kappa)

    def quantities(self) -> dict[str, int]:
        """The slice's integers by name: counts, then each metric's two counts."""
        out: dict[str, int] = dict(self.counts)
        for name, metric in self.metrics.items():
            out.update(metric.quantities(name))
        return out

    def count(self, name: str) -> int:
        """One of the six counts, e.g. ``"missing_count"``.

        Raises:
            KeyError: ``name`` is not a count of this slice.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.counts[_name(name)]

    def metric(self, name: str) -> MetricResult:
        """One metric by name, e.g. ``"exact_agreement"``.

        Raises:
            KeyError: ``name`` is not a metric of this slice.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.metrics[_name(name)]

    def to_dict(self) -> dict[str, object]:
        """The slice as report JSON: counts, then each metric, then kappa if any."""
        out: dict[str, object] = {name: self.counts[name] for name in COUNT_NAMES}
        for name, metric in self.metrics.items():
            out[name] = metric.to_dict()
        if self.kappa is not None:
            out["kappa"] = self.kappa.to_dict()
        return out


CORE_TOTALS: Final = {
    "exact_agreement": "answerable_count",
    "normalized_agreement": "answerable_count",
    "abstention_correctness": "field_count",
    "answerable_abstention": "answerable_count",
    "unanswerable_answer": "unanswerable_count",
    "wrong_type_answer": "answered_count",
    "evidence_support": "answered_count",
    "tolerance_agreement": "answerable_count",
    "fuzzy_agreement": "answerable_count",
    "pattern_agreement": "answerable_count",
    "ordinal_later": "answerable_count",
    "ordinal_earlier": "answerable_count",
    "ordinal_within_one": "answerable_count",
    "majority_baseline": "answerable_count",
}
"""The count each metric's ``total_count`` equals (docs/metrics.md); item metrics count items."""


def _check_identities(
    counts: Mapping[str, int], metrics: Mapping[str, MetricResult], kind: str
) -> None:
    # A report's counts obey the identities of docs/metrics.md; an edited one may not.
    # (A type slice pools a type metric over the fields that report it, so only
    # core metrics are checked there.)
    field_count = counts["field_count"]
    if field_count != counts["answerable_count"] + counts["unanswerable_count"] or (
        field_count
        != counts["missing_count"] + counts["answered_count"] + counts["abstained_count"]
    ):
        _strict_json.invalid()
    labelled: dict[str, int] = {}
    for name, metric in metrics.items():
        count = CORE_TOTALS.get(name)
        if kind != "field" and name not in CORE_METRICS:
            continue
        parts = split_metric(name)
        if parts is not None:  # a plugin label's trials are the answerable rows
            count = "answerable_count"
            labelled[parts[0]] = labelled.get(parts[0], 0) + metric.success_count
        if count is not None and metric.total_count != counts[count]:
            _strict_json.invalid()
    # A plugin labels each answered answerable row of the type once: its labels add up to
    # at most the answered rows.
    if any(total > counts["answered_count"] for total in labelled.values()):
        _strict_json.invalid()


@attrs.frozen
class Report:
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
    """

    overall: SliceReport
    by_field: Mapping[str, SliceReport]
    by_field_type: Mapping[str, SliceReport]
    scorer_version: str = __version__
    ignored_prediction_count: int | None = None
    confidence: float = DEFAULT_CONFIDENCE
    plugins: tuple[PluginStamp, ...] = ()

    @classmethod
    def from_tally(cls, tally: Tally, confidence: float = DEFAULT_CONFIDENCE) -> Report:
        """Compute every interval from a value-free tally, at ``confidence``.

        Raises:
            ValueError: a pooled slice without its per-case sums (a scorer
                bug), or a confidence level that is not 0.9, 0.95 or 0.99.
        """
        z = z_for(confidence)
        if tally.overall.clusters is None or any(
            part.clusters is None for part in tally.by_field_type.values()
        ):
            raise ValueError("pooled slices need their per-case sums")
        return cls(
            overall=SliceReport.from_tally(tally.overall, z),
            by_field={k: SliceReport.from_tally(v, z) for k, v in tally.by_field.items()},
            by_field_type={k: SliceReport.from_tally(v, z) for k, v in tally.by_field_type.items()},
            ignored_prediction_count=tally.ignored_prediction_count,
            confidence=confidence,
            plugins=tally.plugins,
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
        document = _strict_json.check_format(
            _strict_json.parse(text), REPORT_FORMAT, REPORT_FORMAT_VERSION
        )
        members = _strict_json.members(document, _TOP_KEYS, ("ignored_prediction_count", "plugins"))
        version = read_scorer(members["scorer"])
        confidence = read_confidence(members["confidence"])
        z = z_for(confidence)
        plugins = stamps_from_dict(members["plugins"]) if "plugins" in members else ()
        plugin_metrics = tuple(name for stamp in plugins for name in stamp.metric_names())
        by_field = _strict_json.mapping(members["by_field"])
        by_field_type = _strict_json.mapping(members["by_field_type"])
        if not all(is_valid_field_id(name) for name in by_field):
            _strict_json.invalid()
        if not all(name in FIELD_TYPE_NAMES for name in by_field_type):
            _strict_json.invalid()
        overall = SliceReport.from_dict(members["overall"], kind="overall", z=z)
        fields = {
            name: SliceReport.from_dict(part, kind="field", z=z, plugin_metrics=plugin_metrics)
            for name, part in by_field.items()
        }
        types = {
            name: SliceReport.from_dict(part, kind="field_type", z=z, plugin_metrics=plugin_metrics)
            for name, part in by_field_type.items()
        }
        check_plugin_metrics(
            plugins,
            [("overall", overall.metrics)]
            + [("field", part.metrics) for part in fields.values()]
            + [("field_type", part.metrics) for part in types.values()],
        )
        _strict_json.check_pooled(
            overall.quantities(),
            [part.quantities() for part in fields.values()],
            [part.quantities() for part in types.values()],
        )
        return cls(
            overall=overall,
            by_field=fields,
            by_field_type=types,
            scorer_version=version,
            ignored_prediction_count=(
                _strict_json.count(members["ignored_prediction_count"])
                if "ignored_prediction_count" in members
                else None
            ),
            confidence=confidence,
            plugins=plugins,
        )

    def to_dict(self) -> dict[str, object]:
        """The report as plain JSON-ready data."""
        out: dict[str, object] = {
            "format": REPORT_FORMAT,
            "format_version": REPORT_FORMAT_VERSION,
            "scorer": {"name": SCORER_NAME, "version": self.scorer_version},
            "confidence": self.confidence,
            "overall": self.overall.to_dict(),
            "by_field": {k: v.to_dict() for k, v in self.by_field.items()},
            "by_field_type": {k: v.to_dict() for k, v in self.by_field_type.items()},
        }
        if self.ignored_prediction_count is not None:
            out["ignored_prediction_count"] = self.ignored_prediction_count
        if self.plugins:
            out["plugins"] = stamps_to_dict(self.plugins)
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())
