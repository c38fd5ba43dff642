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
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.errors import valid_field_id as is_valid_field_id
from chartscore.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    split_metric,
    stamps_from_dict,
    stamps_to_dict,
)
from chartscore.stats import cohen_kappa, wilson_interval
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
REPORT_FORMAT_VERSION: Final = 1
SCORER_NAME: Final = "chartscore"
FIELD_TYPE_NAMES: Final = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")
"""The field types a ``by_field_type`` slice may be named after (``chartscore.FieldType``)."""

_TOP_KEYS: Final = ("format", "format_version", "scorer", "overall", "by_field", "by_field_type")
_METRIC_KEYS: Final = ("success_count", "total_count", "interval")
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


@attrs.frozen
class MetricResult:
    """One binomial metric: successes (or errors), trials and the 95% Wilson interval.

    The rate is ``success_count / total_count`` when ``total_count > 0``;
    ``interval`` is None when there were no trials.
    """

    success_count: int
    total_count: int
    interval: Interval | None

    @property
    def rate(self) -> float | None:
        """``success_count / total_count``, or None when there were no trials."""
        if not self.total_count:
            return None
        return self.success_count / self.total_count

    @classmethod
    def from_binomial(cls, counts: Binomial) -> MetricResult:
        """Attach the Wilson interval to a success/trial count."""
        return cls(
            counts.success_count,
            counts.total_count,
            wilson_interval(counts.success_count, counts.total_count),
        )

    @classmethod
    def from_dict(cls, value: object) -> MetricResult:
        """Rebuild a metric from its report JSON, checking its shape.

        Raises:
            ChartscoreError: ``invalid_report`` unless ``value`` is exactly
                ``{"success_count", "total_count", "interval"}`` with counts
                ``0 <= success_count <= total_count`` and an interval of two
                numbers ``0 <= lower <= upper <= 1`` (``null`` exactly when
                ``total_count`` is 0).
        """
        members = _strict_json.members(value, _METRIC_KEYS)
        success_count = _strict_json.count(members["success_count"])
        total_count = _strict_json.count(members["total_count"])
        if success_count > total_count:
            _strict_json.invalid()
        if total_count == 0:
            if members["interval"] is not None:
                _strict_json.invalid()
            return cls(success_count, total_count, None)
        shown = _strict_json.interval(members["interval"], 0, 1)
        return cls.recomputed(success_count, total_count, shown)

    @classmethod
    def recomputed(
        cls, success_count: int, total_count: int, shown: Interval | None
    ) -> MetricResult:
        """The metric computed from its counts, if ``shown`` is its interval exactly.

        Raises:
            ChartscoreError: ``invalid_report`` when the interval a document
                shows is not the Wilson interval of its counts (an edited file).
        """
        metric = cls.from_binomial(Binomial(success_count, total_count))
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
        """``{"success_count", "total_count", "interval"}``."""
        return {
            "success_count": self.success_count,
            "total_count": self.total_count,
            "interval": None if self.interval is None else list(self.interval),
        }


@attrs.frozen
class KappaResult:
    """Cohen's kappa for one field: value and 95% interval (None if undefined), pairs."""

    value: float | None
    interval: Interval | None
    pairs: int

    @classmethod
    def from_table(cls, table: KappaTable) -> KappaResult:
        """Compute kappa and its Fleiss-Cohen-Everitt interval from the table."""
        result = cohen_kappa(table.cells, table.size, table.weighting)
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
    def from_tally(cls, part: SliceTally) -> SliceReport:
        """Attach intervals (and kappa) to a slice's counts."""
        return cls(
            counts=dict(part.counts),
            metrics={name: MetricResult.from_binomial(b) for name, b in part.metrics.items()},
            kappa=None if part.kappa is None else KappaResult.from_table(part.kappa),
        )

    @classmethod
    def from_dict(
        cls, value: object, *, kind: str, plugin_metrics: tuple[str, ...] = ()
    ) -> SliceReport:
        """Rebuild a slice from its report JSON, checking its shape.

        Args:
            value: The decoded slice.
            kind: ``"overall"`` (core metrics only), ``"field_type"`` (core and
                type metrics) or ``"field"`` (core and type metrics, and kappa).
            plugin_metrics: The plugin metrics the document's ``plugins``
                declare, in report order; a field or type slice may hold them.

        Raises:
            ChartscoreError: ``invalid_report`` for a missing count or core
                metric, a key outside the slice vocabulary for ``kind``, or a
                malformed count, metric or kappa; ``usage`` for a ``kind``
                that is not exactly one of the three.
        """
        if type(kind) is not str or kind not in _SLICE_KINDS:
            raise ChartscoreError(ErrorCode.USAGE)
        optional: tuple[str, ...] = ()
        if kind != "overall":
            optional = TYPE_METRICS + plugin_metrics + (("kappa",) if kind == "field" else ())
        members = _strict_json.members(value, COUNT_NAMES + CORE_METRICS, optional)
        counts: dict[str, int] = {name: _strict_json.count(members[name]) for name in COUNT_NAMES}
        metrics: dict[str, MetricResult] = {
            name: MetricResult.from_dict(members[name])
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
        plugins: The stamps (name, version, code digest, labels) of the plugin
            metrics the report holds, sorted by name; empty (and absent from
            the JSON) without plugins.
    """

    overall: SliceReport
    by_field: Mapping[str, SliceReport]
    by_field_type: Mapping[str, SliceReport]
    scorer_version: str = __version__
    ignored_prediction_count: int | None = None
    plugins: tuple[PluginStamp, ...] = ()

    @classmethod
    def from_tally(cls, tally: Tally) -> Report:
        """Compute every interval from a value-free tally."""
        return cls(
            overall=SliceReport.from_tally(tally.overall),
            by_field={k: SliceReport.from_tally(v) for k, v in tally.by_field.items()},
            by_field_type={k: SliceReport.from_tally(v) for k, v in tally.by_field_type.items()},
            ignored_prediction_count=tally.ignored_prediction_count,
            plugins=tally.plugins,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """Load a report saved with :meth:`to_json`, checking it strictly.

        The rebuilt report gives back the same bytes:
        ``Report.from_json(r.to_json()).to_json() == r.to_json()``. Every
        derived figure is checked against the counts: each interval must be
        the Wilson interval of its counts (recomputed with
        :func:`~chartscore.stats.wilson_interval`, compared exactly), each slice's
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
                ``"chartscore.report"`` or ``format_version`` is not 1;
                ``invalid_report`` for text that is not strict JSON (NaN,
                duplicate keys), a key outside the report's vocabulary, a count
                that is not a non-negative integer, an interval that is not two
                ordered numbers in [0, 1] (kappa: [-1, 1]), a field id that is
                not a valid field id or a field type name that is not a type,
                or any figure that disagrees with the counts (an edited file).
                The optional ``ignored_prediction_count`` must be a count.
                ``file_too_large (report)`` over 16 MiB; the text must be UTF-8
                with no byte order mark.
                The message never contains the document's text.
        """
        document = _strict_json.check_format(
            _strict_json.parse(text), REPORT_FORMAT, REPORT_FORMAT_VERSION
        )
        members = _strict_json.members(document, _TOP_KEYS, ("ignored_prediction_count", "plugins"))
        version = read_scorer(members["scorer"])
        plugins = stamps_from_dict(members["plugins"]) if "plugins" in members else ()
        plugin_metrics = tuple(name for stamp in plugins for name in stamp.metric_names())
        by_field = _strict_json.mapping(members["by_field"])
        by_field_type = _strict_json.mapping(members["by_field_type"])
        if not all(is_valid_field_id(name) for name in by_field):
            _strict_json.invalid()
        if not all(name in FIELD_TYPE_NAMES for name in by_field_type):
            _strict_json.invalid()
        overall = SliceReport.from_dict(members["overall"], kind="overall")
        fields = {
            name: SliceReport.from_dict(part, kind="field", plugin_metrics=plugin_metrics)
            for name, part in by_field.items()
        }
        types = {
            name: SliceReport.from_dict(part, kind="field_type", plugin_metrics=plugin_metrics)
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
            plugins=plugins,
        )

    def to_dict(self) -> dict[str, object]:
        """The report as plain JSON-ready data."""
        out: dict[str, object] = {
            "format": REPORT_FORMAT,
            "format_version": REPORT_FORMAT_VERSION,
            "scorer": {"name": SCORER_NAME, "version": self.scorer_version},
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
