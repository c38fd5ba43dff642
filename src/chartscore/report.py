"""The value-free report: counts, Wilson intervals, kappa, and version stamps.

Built from a :class:`~chartscore.tally.Tally` only. It holds field ids
(developer-authored schema names), closed type and metric names and numbers:
no values, case ids, digests, offsets, paths or per-case decisions.
``to_json`` is RFC 8785 canonical JSON, byte-identical for the same counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from chartscore._version import __version__
from chartscore.canonical_json import canonical_json
from chartscore.stats import cohen_kappa, wilson_interval
from chartscore.tally import COUNT_NAMES, Binomial, KappaTable, SliceTally, Tally

REPORT_FORMAT: Final = "chartscore.report"
REPORT_FORMAT_VERSION: Final = 1
SCORER_NAME: Final = "chartscore"

Interval = tuple[float, float]


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

    def count(self, name: str) -> int:
        """One of the six counts, e.g. ``"missing_count"``."""
        return self.counts[name]

    def metric(self, name: str) -> MetricResult:
        """One metric by name, e.g. ``"exact_agreement"``."""
        return self.metrics[name]

    def to_dict(self) -> dict[str, object]:
        """The slice as report JSON: counts, then each metric, then kappa if any."""
        out: dict[str, object] = {name: self.counts[name] for name in COUNT_NAMES}
        for name, metric in self.metrics.items():
            out[name] = metric.to_dict()
        if self.kappa is not None:
            out["kappa"] = self.kappa.to_dict()
        return out


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
    """

    overall: SliceReport
    by_field: Mapping[str, SliceReport]
    by_field_type: Mapping[str, SliceReport]
    scorer_version: str = __version__
    ignored_prediction_count: int | None = None

    @classmethod
    def from_tally(cls, tally: Tally) -> Report:
        """Compute every interval from a value-free tally."""
        return cls(
            overall=SliceReport.from_tally(tally.overall),
            by_field={k: SliceReport.from_tally(v) for k, v in tally.by_field.items()},
            by_field_type={k: SliceReport.from_tally(v) for k, v in tally.by_field_type.items()},
            ignored_prediction_count=tally.ignored_prediction_count,
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
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())
