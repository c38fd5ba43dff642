"""The value-free report: counts, Wilson intervals, kappa, and version stamps.

Built from a :class:`~chartscore.documents.tally.Tally` only. It holds field ids
(developer-authored schema names), closed type and metric names and numbers:
no values, case ids, digests, offsets, paths or per-case decisions.
``to_json`` is RFC 8785 canonical JSON, byte-identical for the same counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Final

import attrs

from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    split_metric,
    stamps_from_dict,
    stamps_to_dict,
)
from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    LABEL_METRICS,
    SHARE_WITHHELD_METRICS,
    TYPE_METRICS,
    Binomial,
    KappaTable,
    SliceTally,
    Tally,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.errors import valid_field_id as is_valid_field_id
from chartscore.stats.binomial import Z95, cohen_kappa, wilson_interval
from chartscore.stats.clustered import (
    CONFIDENCE_LEVELS,
    DEFAULT_CONFIDENCE,
    ClusterSums,
    clustered_wilson,
    design_effect,
    is_published_design_effect,
    published_design_effect,
    z_for,
)
from chartscore.stats.confusion import f1_score, macro_f1
from chartscore.stats.magnitude import UNITS as MAGNITUDE_UNITS
from chartscore.stats.magnitude import (
    ErrorSums,
    bias_interval,
    chance_level,
    exact_decimal,
    limits_of_agreement,
    mean_absolute_error,
    mean_signed_error,
    parse_exact_decimal,
)
from chartscore.stats.reliability import (
    ALPHA_METRICS,
    LOWEST,
    alpha_interval,
    gwet_ac,
    krippendorff_alpha,
    too_few_pairs,
)
from chartscore.stats.uncertainty import (
    DECILES,
    UncertaintySums,
    auroc,
    brier_score,
    delong_interval,
    hanley_mcneil_interval,
    is_published_standard_error,
    published_standard_error,
)
from chartscore.stats.weighting import (
    weighted_design_effect,
    weighted_quantile,
    weighted_rate,
    weighted_wilson,
)

REPORT_FORMAT: Final = "chartscore.report"
REPORT_FORMAT_VERSION: Final = 3
"""Format 3 added each pooled metric's ``case_count`` (its clustered interval's degrees of freedom);
2 added the confidence level and the pooled slices' clustered figures; 1 is refused."""
READABLE_REPORT_VERSIONS: Final = (2, 3)
"""Format 2 documents are read, and written back, as they were: clustered intervals on ``z``."""
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
_POOLED_METRIC_KEYS: Final = (*_METRIC_KEYS, "design_effect", "clustered_interval", "case_count")
_FORMAT_2_POOLED_METRIC_KEYS: Final = _POOLED_METRIC_KEYS[:-1]
_KAPPA_KEYS: Final = ("value", "interval", "pairs")
_LABEL_KEYS: Final = (*LABEL_METRICS, "f1")
MAX_LABEL_NAME: Final = 256
"""The longest label name a document may hold (a normalized schema choice)."""
_SCORER_VERSION = re.compile(
    r"(?=.{1,64}$)[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?"
    r"(\+[a-z0-9]+(\.[a-z0-9]+)*)?"
)
"""A PEP 440 version as chartscore writes it (lowercase local label), at most 64 characters."""

Interval = tuple[float, float]


_SLICE_KINDS: Final = ("overall", "field_type", "field")

STRATUM_NAME: Final = re.compile(r"([a-z][a-z0-9_]{0,31})=([A-Za-z0-9][A-Za-z0-9_.-]{0,63})")
"""A stratum slice's name in a report: ``key=label`` (declared names, docs/formats.md)."""

_STRATA_KEYS: Final = ("by_stratum", "by_stratum_field_type")
_FRACTION: Final = re.compile(r"1|0\.[0-9]{0,29}[1-9]")
"""A sampling fraction as a document writes it: ``0.25``, ``1``."""


def is_fraction_text(text: str) -> bool:
    """Whether ``text`` is a sampling fraction as a document writes it (``0.25``, ``1``)."""
    return _FRACTION.fullmatch(text) is not None


def fraction_text(fraction: Decimal) -> str:
    """A declared sampling fraction as plain decimal text, without trailing zeros."""
    return format(fraction.normalize(), "f")


@attrs.frozen
class WeightedMetric:
    """One metric's weighted overall estimate (docs/metrics.md, "Weighted estimate").

    Attributes:
        estimate: ``sum w_h Y_h / sum w_h M_h``; None with no trials.
        design_effect: The published design effect of its linearized variance.
        interval: Wilson's interval on ``M / design_effect`` rows.
    """

    estimate: float | None
    design_effect: float | None
    interval: Interval | None

    @classmethod
    def of(
        cls,
        parts: list[tuple[Decimal, int, int]],
        z: float,
        sums: list[ClusterSums] | None = None,
        shown: float | None = None,
        cases: list[int] | None = None,
    ) -> WeightedMetric:
        """The figures from each stratum's (fraction, successes, trials), and either its
        per-case sums (scoring) or the published design effect and each stratum's cases
        with trials (reading a document; ``cases`` None for a format 2 document)."""
        rate = weighted_rate(parts)
        if rate is None:
            return cls(None, None, None)
        if sums is not None:
            shown = published_design_effect(weighted_design_effect(parts, sums, rate))
            cases = [part.cases for part in sums]
        assert shown is not None
        trials = sum(m for _, _, m in parts)
        census = all(fraction == 1 for fraction, _, _ in parts)  # no variance is estimated
        quantile = z if cases is None or census else weighted_quantile(z, cases)
        if quantile is None:
            return cls(float(rate), shown, (0.0, 1.0))
        return cls(float(rate), shown, weighted_wilson(rate, trials, shown, quantile))

    def to_dict(self) -> dict[str, object]:
        """``{"estimate", "design_effect", "interval"}``."""
        return {
            "estimate": self.estimate,
            "design_effect": self.design_effect,
            "interval": None if self.interval is None else list(self.interval),
        }


@attrs.frozen
class WeightedEstimate:
    """The overall slice's weighted estimates, from a declared sampling design.

    Attributes:
        fractions: Each sampled stratum's declared fraction, by name (``"site=A"``).
        metrics: Each overall binomial metric's :class:`WeightedMetric`.
    """

    fractions: Mapping[str, Decimal]
    metrics: Mapping[str, WeightedMetric]

    def to_dict(self) -> dict[str, object]:
        """``{"fractions": {"site=A": "0.25"}, "metrics": {name: {...}}}``."""
        return {
            "fractions": {name: fraction_text(f) for name, f in self.fractions.items()},
            "metrics": {name: metric.to_dict() for name, metric in self.metrics.items()},
        }


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
        interval: The Wilson interval with ``t**2`` times ``design_effect``, ``t``
            Student's quantile over ``cases - 1`` degrees of freedom (it contains
            the plain Wilson interval; [0, 1] with one case); None with no trials.
        cases: The cases (charts) with at least one of the metric's trials;
            None in a format 2 document, whose intervals used ``z``.
    """

    design_effect: float | None
    interval: Interval | None
    cases: int | None = None

    @classmethod
    def from_sums(cls, counts: Binomial, sums: ClusterSums, z: float = Z95) -> Clustering:
        """The clustered figures of a pooled metric from its counts and per-case sums."""
        shown = published_design_effect(
            design_effect(counts.success_count, counts.total_count, sums)
        )
        return cls.from_design_effect(counts, shown, z, cases=sums.cases)

    @classmethod
    def from_design_effect(
        cls, counts: Binomial, shown: float | None, z: float = Z95, *, cases: int | None
    ) -> Clustering:
        """The clustered figures from the counts, a published design effect and the cases."""
        if shown is None:
            return cls(None, None, cases)
        interval = clustered_wilson(counts.success_count, counts.total_count, shown, z, cases=cases)
        return cls(shown, interval, cases)

    def to_dict(self) -> dict[str, object]:
        """``{"design_effect", "clustered_interval", "case_count"}``: a pooled metric's extra keys.

        A format 2 document's metric (``cases`` None) has no ``case_count``.
        """
        out: dict[str, object] = {
            "design_effect": self.design_effect,
            "clustered_interval": None if self.interval is None else list(self.interval),
        }
        if self.cases is not None:
            out["case_count"] = self.cases
        return out


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


def read_case_count(value: object, total_count: int) -> int:
    """A pooled metric's case count: from 1 to its trials, or 0 exactly with no trials.

    Raises:
        ChartscoreError: ``invalid_report`` otherwise.
    """
    cases = _strict_json.count(value)
    if (cases == 0) != (total_count == 0) or cases > total_count:
        _strict_json.invalid()
    return cases


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

    @property
    def clustered_cases(self) -> int | None:
        """The cases behind the clustered interval's degrees of freedom (pooled slices)."""
        return None if self.clustering is None else self.clustering.cases

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
    def from_dict(
        cls, value: object, z: float = Z95, *, pooled: bool = False, case_counts: bool = True
    ) -> MetricResult:
        """Rebuild a metric from its report JSON, checking its shape and its figures.

        Args:
            value: The decoded metric.
            z: The normal quantile of the document's confidence level.
            pooled: A pooled slice's metric, which also holds
                ``design_effect``, ``clustered_interval`` and ``case_count``.
            case_counts: False for a format 2 document's pooled metric, which
                has no ``case_count`` (its clustered interval used ``z``).

        Raises:
            ChartscoreError: ``invalid_report`` unless ``value`` is exactly
                ``{"success_count", "total_count", "interval"}`` (pooled: and
                ``"design_effect"``, ``"clustered_interval"``, ``"case_count"``)
                with counts ``0 <= success_count <= total_count``, intervals
                that are the ones its counts give (``null`` exactly when
                ``total_count`` is 0), a design effect on the published grid
                and a case count from 1 to ``total_count`` (0 exactly with no
                trials); ``usage`` when ``z`` is not a float or ``pooled`` or
                ``case_counts`` not a bool.
        """
        if type(z) is not float or type(pooled) is not bool or type(case_counts) is not bool:
            raise ChartscoreError(ErrorCode.USAGE)
        keys: tuple[str, ...] = _METRIC_KEYS
        if pooled:
            keys = _POOLED_METRIC_KEYS if case_counts else _FORMAT_2_POOLED_METRIC_KEYS
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
        cases = read_case_count(members["case_count"], total_count) if case_counts else None
        clustering = Clustering.from_design_effect(
            counts, read_design_effect(members["design_effect"], total_count), z, cases=cases
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

    @property
    def too_few_pairs(self) -> bool:
        """Whether its interval is unreliable: fewer than ``MIN_COEFFICIENT_PAIRS`` pairs."""
        return too_few_pairs(self.pairs)

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
class CoefficientResult:
    """Gwet's AC1/AC2 or Krippendorff's alpha for one field (docs/metrics.md).

    Attributes:
        name: ``"ac1"``, ``"ac2"`` (quadratic weights) or ``"alpha"``.
        value: The coefficient, or None when undefined.
        interval: Its interval at the document's confidence, or None.
        pairs: The answered answerable rows it is computed over (kappa's pairs).
        metric: Alpha's difference function (``nominal``, ``ordinal`` or
            ``interval``); ``""`` for AC1 and AC2.
    """

    name: str
    value: float | None
    interval: Interval | None
    pairs: int
    metric: str = ""

    @property
    def too_few_pairs(self) -> bool:
        """Whether its interval is unreliable: fewer than ``MIN_COEFFICIENT_PAIRS`` pairs."""
        return too_few_pairs(self.pairs)

    @classmethod
    def gwet(cls, table: KappaTable, z: float = Z95) -> CoefficientResult:
        """AC1 (unweighted) or AC2 (quadratic weights) of kappa's table."""
        name = "ac1" if table.weighting == "none" else "ac2"
        found = gwet_ac(table.cells, table.size, table.weighting, z)
        if found is None:
            return cls(name, None, None, table.pairs)
        return cls(name, found[0], found[1], found[2])

    @classmethod
    def alpha(
        cls,
        table: KappaTable,
        metric: str,
        z: float = Z95,
        values: tuple[Fraction, ...] | None = None,
    ) -> CoefficientResult:
        """Krippendorff's alpha of a table (``values``: each category's number, for interval)."""
        found = krippendorff_alpha(table.cells, table.size, metric, z, values)
        if found is None:
            return cls("alpha", None, None, table.pairs, metric)
        return cls("alpha", found[0], found[1], found[2], metric)

    @classmethod
    def from_dict(cls, name: str, value: object) -> CoefficientResult:
        """Rebuild a coefficient from its report JSON, checking its shape.

        Its table is not in the report (its categories may be patient values),
        so, as for kappa, the value is checked only to be at most 1 (alpha and
        AC2 can fall below -1 on small tables) and to lie in its interval.

        Raises:
            ChartscoreError: ``invalid_report`` for another shape, a value or
                interval out of range, or a value with no pairs.
        """
        keys = ("value", "interval", "pairs", "metric") if name == "alpha" else _KAPPA_KEYS
        members = _strict_json.members(value, keys)
        pairs = _strict_json.count(members["pairs"])
        metric = members.get("metric", "")
        if name == "alpha" and metric not in ALPHA_METRICS:
            _strict_json.invalid()
        if members["value"] is None:
            if members["interval"] is not None:
                _strict_json.invalid()
            return cls(name, None, None, pairs, metric)  # type: ignore[arg-type]
        if pairs == 0 or (members["interval"] is None and name != "alpha"):
            _strict_json.invalid()
        number = _strict_json.number(members["value"], LOWEST, 1)
        interval = None
        if members["interval"] is not None:
            interval = _strict_json.interval(members["interval"], LOWEST, 1)
            if not interval[0] <= number <= interval[1]:
                _strict_json.invalid()
        return cls(name, number, interval, pairs, metric)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        """``{"value", "interval", "pairs"}`` (alpha: and ``"metric"``)."""
        out: dict[str, object] = {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "pairs": self.pairs,
        }
        if self.name == "alpha":
            out["metric"] = self.metric
        return out


_MAGNITUDE_KEYS: Final = (
    "unit",
    "pairs",
    "sum_absolute",
    "sum_signed",
    "sum_squares",
    "mean_absolute_error",
    "mean_signed_error",
    "limits_of_agreement",
    "chance",
)
_CHANCE_KEYS: Final = ("gold_rows", "sum_deviation", "mean_absolute_deviation")


def _pair_or_none(value: Interval | None) -> list[float] | None:
    return None if value is None else list(value)


@attrs.frozen
class MagnitudeResult:
    """A number or date field's error magnitude (docs/metrics.md, "Error magnitude").

    Every figure is computed from the exact sums (:class:`~chartscore.stats.magnitude.ErrorSums`),
    which the document holds as exact decimals, at the document's ``z``.

    Attributes:
        sums: The exact sums.
        z: The normal quantile of the interval and the limits of agreement.
        student: False for a format 2 document, whose bias interval used ``z``
            (today's uses Student's t with ``pairs - 1`` degrees of freedom).
    """

    sums: ErrorSums
    z: float = Z95
    student: bool = True

    @property
    def unit(self) -> str:
        """``"field"`` (the field's own unit) or ``"days"``."""
        return self.sums.unit

    @property
    def pairs(self) -> int:
        """Answered answerable rows with a distance: the denominator."""
        return self.sums.pairs

    @property
    def gold_rows(self) -> int:
        """Answerable rows whose gold has a distance: the chance level's denominator."""
        return self.sums.gold_rows

    @property
    def mean_absolute_error(self) -> float | None:
        """``sum |answer - gold| / pairs``."""
        return mean_absolute_error(self.sums)

    @property
    def bias(self) -> float | None:
        """The mean signed error ``sum (answer - gold) / pairs``."""
        return mean_signed_error(self.sums)

    @property
    def bias_interval(self) -> Interval | None:
        """``bias -/+ t s / sqrt(pairs)``; None with fewer than two pairs."""
        return bias_interval(self.sums, self.z, student=self.student)

    @property
    def limits_of_agreement(self) -> Interval | None:
        """Bland and Altman's ``bias -/+ z s``; None with fewer than two pairs."""
        return limits_of_agreement(self.sums, self.z)

    @property
    def chance_level(self) -> float | None:
        """The mean distance of gold from its median: a constant answer's error."""
        return chance_level(self.sums)

    @classmethod
    def from_dict(cls, value: object, z: float = Z95, *, student: bool = True) -> MagnitudeResult:
        """Rebuild a magnitude from its report JSON, recomputing every figure.

        ``student`` False reads a format 2 document (a ``z`` bias interval).

        Raises:
            ChartscoreError: ``invalid_report`` for another shape, a sum that
                is not an exact decimal, sums no rows could give, or a figure
                that is not the one its sums give.
        """
        members = _strict_json.members(value, _MAGNITUDE_KEYS)
        chance = _strict_json.members(members["chance"], _CHANCE_KEYS)
        signed = _strict_json.members(members["mean_signed_error"], ("estimate", "interval"))
        sums = [
            parse_exact_decimal(raw)
            for raw in (
                members["sum_absolute"],
                members["sum_signed"],
                members["sum_squares"],
                chance["sum_deviation"],
            )
        ]
        unit = members["unit"]
        if any(found is None for found in sums) or unit not in MAGNITUDE_UNITS:
            _strict_json.invalid()
        absolute, total, squares, deviation = sums
        pairs = _strict_json.count(members["pairs"])
        gold_rows = _strict_json.count(chance["gold_rows"])
        exact: ErrorSums | None
        try:
            exact = ErrorSums(
                unit,
                pairs,
                absolute,  # type: ignore[arg-type]
                total,  # type: ignore[arg-type]
                squares,  # type: ignore[arg-type]
                gold_rows,
                deviation,  # type: ignore[arg-type]
            )
        except ValueError:
            exact = None  # raised below, outside the handler: no chained context
        if exact is None:
            _strict_json.invalid()
        result = cls(exact, z, student)
        for figure in (members["mean_absolute_error"], signed["estimate"]):
            if figure is not None:
                _strict_json.number(figure, -math.inf, math.inf)
        if chance["mean_absolute_deviation"] is not None:
            _strict_json.number(chance["mean_absolute_deviation"], 0, math.inf)
        for bounds in (members["limits_of_agreement"], signed["interval"]):
            if bounds is not None:
                _strict_json.interval(bounds, -math.inf, math.inf)
        shown = {**members, "mean_signed_error": dict(signed), "chance": dict(chance)}
        if result.to_dict() != shown:
            _strict_json.invalid()
        return result

    def to_dict(self) -> dict[str, object]:
        """The sums as exact decimals, and the figures they give."""
        return {
            "unit": self.unit,
            "pairs": self.pairs,
            "sum_absolute": exact_decimal(self.sums.sum_absolute),
            "sum_signed": exact_decimal(self.sums.sum_signed),
            "sum_squares": exact_decimal(self.sums.sum_squares),
            "mean_absolute_error": self.mean_absolute_error,
            "mean_signed_error": {
                "estimate": self.bias,
                "interval": _pair_or_none(self.bias_interval),
            },
            "limits_of_agreement": _pair_or_none(self.limits_of_agreement),
            "chance": {
                "gold_rows": self.gold_rows,
                "sum_deviation": exact_decimal(self.sums.sum_deviation),
                "mean_absolute_deviation": self.chance_level,
            },
        }


_UNCERTAINTY_KEYS: Final = (
    "rows",
    "agreed",
    "without_uncertainty",
    "ranked_twice",
    "auroc",
    "auroc_interval",
    "auroc_standard_error",
    "brier_sum",
    "brier_score",
    "risk_coverage",
)
_FORMAT_2_UNCERTAINTY_KEYS: Final = tuple(
    k for k in _UNCERTAINTY_KEYS if k != "auroc_standard_error"
)


@attrs.frozen
class UncertaintyResult:
    """A field's declared uncertainty as a predictor of agreement (docs/metrics.md).

    Attributes:
        sums: The sufficient statistics (:class:`~chartscore.stats.uncertainty.UncertaintySums`).
        z: The normal quantile of the intervals.
        standard_error: DeLong's standard error of the AUROC, rounded up to two
            significant digits; None with fewer than 2 rows in a class. By
            default, the one ``sums`` gives.
        delong: False for a format 2 document, whose AUROC interval is Hanley
            and McNeil's (and which has no standard error).
    """

    sums: UncertaintySums
    z: float = Z95
    standard_error: float | None = attrs.field()
    delong: bool = True

    @standard_error.default
    def _standard_error(self) -> float | None:
        return published_standard_error(self.sums.delong_variance)

    @property
    def auroc(self) -> float | None:
        """The AUROC of ``1 - uncertainty`` for agreement; None with one class empty."""
        return auroc(self.sums)

    @property
    def auroc_interval(self) -> Interval | None:
        """DeLong's interval of the AUROC on the logit scale (format 2: Hanley and McNeil's)."""
        if not self.delong:
            return hanley_mcneil_interval(self.sums, self.z)
        sums = self.sums
        return delong_interval(
            sums.agreed, sums.disagreed, sums.ranked_twice, self.standard_error, self.z
        )

    @property
    def brier_score(self) -> float | None:
        """Mean ``(1 - uncertainty - agreed)**2``; None with no rows."""
        return brier_score(self.sums)

    @property
    def risk_coverage(self) -> tuple[MetricResult, ...]:
        """Agreement among the most certain 10%, 20%, ..., 100% of the rows (Wilson intervals)."""
        return tuple(
            MetricResult.from_binomial(Binomial(agreed, rows), self.z)
            for agreed, rows in self.sums.kept
        )

    @classmethod
    def from_dict(cls, value: object, z: float = Z95, *, delong: bool = True) -> UncertaintyResult:
        """Rebuild the figures from report JSON, recomputing every one.

        ``delong`` False reads a format 2 document (no standard error; Hanley
        and McNeil's interval).

        Raises:
            ChartscoreError: ``invalid_report`` for another shape, sums no rows
                could give, a standard error off the published grid (or
                beside fewer than 2 rows in a class), or a figure that is not
                the one its sums give.
        """
        members = _strict_json.members(
            value, _UNCERTAINTY_KEYS if delong else _FORMAT_2_UNCERTAINTY_KEYS
        )
        steps = members["risk_coverage"]
        if type(steps) is not list or len(steps) != DECILES:
            _strict_json.invalid()
        kept = tuple(MetricResult.from_dict(step, z) for step in steps)
        rows = _strict_json.count(members["rows"])
        agreed = _strict_json.count(members["agreed"])
        brier = parse_exact_decimal(members["brier_sum"])
        if brier is None or agreed > rows:
            _strict_json.invalid()
        ranked_twice = _strict_json.count(members["ranked_twice"])
        without = _strict_json.count(members["without_uncertainty"])
        sums: UncertaintySums | None
        try:
            sums = UncertaintySums(
                agreed,
                rows - agreed,
                ranked_twice,
                brier,
                tuple((step.success_count, step.total_count) for step in kept),
                without,
            )
        except ValueError:
            sums = None  # raised below, outside the handler: no chained context
        if sums is None:
            _strict_json.invalid()
        standard_error = None
        if delong:
            standard_error = _read_standard_error(members["auroc_standard_error"], sums)
        result = cls(sums, z, standard_error, delong)
        for figure in (members["auroc"], members["brier_score"]):
            if figure is not None:
                _strict_json.number(figure, 0, 1)
        if members["auroc_interval"] is not None:
            _strict_json.interval(members["auroc_interval"], 0, 1)
        if result.to_dict() != {**members, "risk_coverage": [step.to_dict() for step in kept]}:
            _strict_json.invalid()
        return result

    def to_dict(self) -> dict[str, object]:
        """The sufficient statistics and the figures they give."""
        out: dict[str, object] = {
            "rows": self.sums.rows,
            "agreed": self.sums.agreed,
            "without_uncertainty": self.sums.without,
            "ranked_twice": self.sums.ranked_twice,
            "auroc": self.auroc,
            "auroc_interval": _pair_or_none(self.auroc_interval),
            "brier_sum": exact_decimal(self.sums.brier_sum),
            "brier_score": self.brier_score,
            "risk_coverage": [step.to_dict() for step in self.risk_coverage],
        }
        if self.delong:
            out["auroc_standard_error"] = self.standard_error
        return out


def _read_standard_error(value: object, sums: UncertaintySums) -> float | None:
    # Null exactly with fewer than 2 rows in a class; else 0 or two significant digits, at most
    # 1/2 (an AUROC's variance is at most A (1 - A) / min(n1, n0) <= 1/4).
    if min(sums.agreed, sums.disagreed) < 2:
        if value is not None:
            _strict_json.invalid()
        return None
    shown = _strict_json.number(value, 0.0, 0.5)
    if not is_published_standard_error(shown):
        _strict_json.invalid()
    return shown


def _f1(metrics: Mapping[str, MetricResult]) -> float | None:
    # F1 from the label counts: 2 TP / (gold positives + answered positives).
    sensitivity, ppv = metrics["sensitivity"], metrics["ppv"]
    return f1_score(sensitivity.success_count, sensitivity.total_count, ppv.total_count)


@attrs.frozen
class LabelResult:
    """One declared label's confusion metrics in a field slice (docs/metrics.md).

    Attributes:
        metrics: ``sensitivity``, ``specificity``, ``ppv`` and ``npv`` as
            :class:`MetricResult` (Wilson intervals).
        f1: ``2 TP / (gold positives + answered positives)``; None when the
            label is neither in gold nor in any answer.
    """

    metrics: Mapping[str, MetricResult]

    @property
    def f1(self) -> float | None:
        """The label's F1, from its counts."""
        return _f1(self.metrics)

    def metric(self, name: str) -> MetricResult:
        """One of the four label metrics by name.

        Raises:
            KeyError: ``name`` is not a label metric.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.metrics[_name(name)]

    @classmethod
    def from_binomials(cls, table: Mapping[str, Binomial], z: float = Z95) -> LabelResult:
        """Attach Wilson intervals to a label's four binomials."""
        return cls({name: MetricResult.from_binomial(table[name], z) for name in LABEL_METRICS})

    @classmethod
    def from_dict(cls, value: object, z: float = Z95) -> LabelResult:
        """Rebuild a label from its report JSON, recomputing every figure.

        Raises:
            ChartscoreError: ``invalid_report`` unless ``value`` holds exactly
                the four metrics and ``f1``, each the figure its counts give,
                and counts that fit one confusion table (PPV's successes are
                sensitivity's, NPV's specificity's).
        """
        members = _strict_json.members(value, _LABEL_KEYS)
        metrics = {name: MetricResult.from_dict(members[name], z) for name in LABEL_METRICS}
        if (
            metrics["sensitivity"].success_count != metrics["ppv"].success_count
            or metrics["specificity"].success_count != metrics["npv"].success_count
        ):
            _strict_json.invalid()
        result = cls(metrics)
        _check_figure(members["f1"], result.f1)
        return result

    def to_dict(self) -> dict[str, object]:
        """``{"sensitivity", "specificity", "ppv", "npv", "f1"}``."""
        out: dict[str, object] = {name: self.metrics[name].to_dict() for name in LABEL_METRICS}
        out["f1"] = self.f1
        return out


def _check_figure(shown: object, recomputed: float | None) -> None:
    # A derived figure in a document must be the one its counts give, exactly.
    if recomputed is None:
        if shown is not None:
            _strict_json.invalid()
    elif shown is None or _strict_json.number(shown, -1e308, 1e308) != recomputed:
        _strict_json.invalid()


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
    """

    counts: Mapping[str, int]
    metrics: Mapping[str, MetricResult]
    kappa: KappaResult | None = None
    labels: Mapping[str, LabelResult] | None = None
    coefficients: Mapping[str, CoefficientResult] | None = None
    magnitude: MagnitudeResult | None = None
    uncertainty: UncertaintyResult | None = None

    @property
    def micro_f1(self) -> float | None:
        """F1 of the label counts pooled over labels (and fields); None without labels."""
        if "sensitivity" not in self.metrics:
            return None
        return _f1(self.metrics)

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

    def label(self, name: str) -> LabelResult:
        """One declared label's metrics, e.g. ``"current"``.

        Raises:
            KeyError: the slice has no label ``name``.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        if self.labels is None:
            raise KeyError(_name(name))
        return self.labels[_name(name)]

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
        optional: tuple[str, ...] = (*LABEL_METRICS, "micro_f1")
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
        members = _strict_json.members(value, COUNT_NAMES + CORE_METRICS, optional)
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
        result = cls(
            counts=counts,
            metrics=metrics,
            kappa=kappa,
            labels=labels,
            coefficients=coefficients or None,
            magnitude=magnitude,
            uncertainty=uncertainty,
        )
        _check_label_figures(members, result)
        return result

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
        for name, coefficient in (self.coefficients or {}).items():
            out[name] = coefficient.to_dict()
        if self.magnitude is not None:
            out["error_magnitude"] = self.magnitude.to_dict()
        if self.uncertainty is not None:
            out["declared_uncertainty"] = self.uncertainty.to_dict()
        if "sensitivity" in self.metrics:
            out["micro_f1"] = self.micro_f1
        if self.labels is not None:
            out["macro_f1"] = self.macro_f1
            out["labels"] = {name: label.to_dict() for name, label in self.labels.items()}
        return out


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
    # Label metrics come as a set, with micro F1; a field's are the sums of its labels'.
    present = [name in members for name in (*LABEL_METRICS, "micro_f1")]
    if any(present) != all(present):
        _strict_json.invalid()
    if not present[0]:
        return
    metrics = part.metrics
    if (
        metrics["sensitivity"].success_count != metrics["ppv"].success_count
        or metrics["specificity"].success_count != metrics["npv"].success_count
    ):
        _strict_json.invalid()
    _check_figure(members["micro_f1"], part.micro_f1)
    if part.labels is None:
        return
    _check_figure(members["macro_f1"], part.macro_f1)
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
        by_stratum: Each declared stratum's pooled slice, by ``key=label``
            (``"site=A"``); empty (and absent from the JSON) without a strata file.
        by_stratum_field_type: Each stratum's pooled slice per field type,
            ``{"site=A": {"date": slice}}``; empty without a strata file.
        overall_weighted: With a declared sampling design, the overall slice's
            weighted estimates (:class:`WeightedEstimate`); None otherwise.
        format_version: The format the report was read in (2 or 3), which
            :meth:`to_json` writes back; a new report is format 3.
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
            by_stratum={k: SliceReport.from_tally(v, z) for k, v in tally.by_stratum.items()},
            by_stratum_field_type={
                k: {name: SliceReport.from_tally(part, z) for name, part in v.items()}
                for k, v in tally.by_stratum_field_type.items()
            },
            overall_weighted=_weighted_of_tally(tally, z),
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
            _strict_json.parse(text), REPORT_FORMAT, READABLE_REPORT_VERSIONS
        )
        format_version = document["format_version"]
        assert type(format_version) is int
        members = _strict_json.members(
            document,
            _TOP_KEYS,
            ("ignored_prediction_count", "plugins", *_STRATA_KEYS, "overall_weighted"),
        )
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

        def read(part: object, kind: str) -> SliceReport:
            plugged = () if kind == "overall" else plugin_metrics
            return SliceReport.from_dict(
                part, kind=kind, z=z, plugin_metrics=plugged, format_version=format_version
            )

        overall = read(members["overall"], "overall")
        fields = {name: read(part, "field") for name, part in by_field.items()}
        types = {name: read(part, "field_type") for name, part in by_field_type.items()}
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
        strata, strata_types = _read_strata(
            members, overall, types, z, plugin_metrics, format_version=format_version
        )
        weighted = None
        if "overall_weighted" in members:
            weighted = _read_weighted(members["overall_weighted"], overall, strata, z)
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
            by_stratum=strata,
            by_stratum_field_type=strata_types,
            overall_weighted=weighted,
            format_version=format_version,
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

        return attrs.evolve(
            self,
            overall=core_slice(self.overall),
            by_field={name: core_slice(part) for name, part in self.by_field.items()},
            by_field_type={name: core_slice(part) for name, part in self.by_field_type.items()},
            by_stratum={name: core_slice(part) for name, part in self.by_stratum.items()},
            by_stratum_field_type={
                name: {t: core_slice(part) for t, part in parts.items()}
                for name, parts in self.by_stratum_field_type.items()
            },
            overall_weighted=None,
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
        out: dict[str, object] = {
            "format": REPORT_FORMAT,
            "format_version": self.format_version,
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
        if self.by_stratum:
            out["by_stratum"] = {k: v.to_dict() for k, v in self.by_stratum.items()}
            out["by_stratum_field_type"] = {
                k: {name: part.to_dict() for name, part in v.items()}
                for k, v in self.by_stratum_field_type.items()
            }
        if self.overall_weighted is not None:
            out["overall_weighted"] = self.overall_weighted.to_dict()
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())


def _read_strata(
    members: Mapping[str, object],
    overall: SliceReport,
    types: Mapping[str, SliceReport],
    z: float,
    plugin_metrics: tuple[str, ...],
    *,
    format_version: int,
) -> tuple[dict[str, SliceReport], dict[str, dict[str, SliceReport]]]:
    # Stratum slices, if any: the strata of each key partition the cases, so for every key
    # its slices add up to the overall slice, and its type slices to the type slices
    # (without majority_baseline, which stratum slices do not report).
    present = [name in members for name in _STRATA_KEYS]
    if not any(present):
        return {}, {}
    if not all(present):
        _strict_json.invalid()
    listed = _strict_json.mapping(members["by_stratum"])
    listed_types = _strict_json.mapping(members["by_stratum_field_type"])
    if not listed or set(listed) != set(listed_types):
        _strict_json.invalid()
    by_key: dict[str, list[str]] = {}
    for name in listed:
        found = STRATUM_NAME.fullmatch(name) if type(name) is str else None
        if found is None:
            _strict_json.invalid()
        by_key.setdefault(found.group(1), []).append(name)
    strata = {
        name: SliceReport.from_dict(
            listed[name], kind="overall", z=z, format_version=format_version
        )
        for name in sorted(listed)
    }
    strata_types: dict[str, dict[str, SliceReport]] = {}
    for name in sorted(listed):
        parts = _strict_json.mapping(listed_types[name])
        if set(parts) != set(types):
            _strict_json.invalid()
        strata_types[name] = {
            type_name: SliceReport.from_dict(
                parts[type_name],
                kind="field_type",
                z=z,
                plugin_metrics=plugin_metrics,
                format_version=format_version,
            )
            for type_name in sorted(parts)
        }
        if any("majority_baseline" in part.metrics for part in strata_types[name].values()):
            _strict_json.invalid()
    for names in by_key.values():
        slices = [strata[name].quantities() for name in names]
        _strict_json.check_pooled(overall.quantities(), slices, slices)
        for type_name, whole in types.items():
            quantities = {
                k: v for k, v in whole.quantities().items() if not k.startswith("majority_baseline")
            }
            parts_of = [strata_types[name][type_name].quantities() for name in names]
            _strict_json.check_pooled(quantities, parts_of, parts_of)
    return strata, strata_types


def _weighted_of_tally(tally: Tally, z: float) -> WeightedEstimate | None:
    # The overall slice's metrics weighted by 1 / fraction over the sampled key's strata.
    if not tally.sampling:
        return None
    names = list(tally.sampling)
    metrics: dict[str, WeightedMetric] = {}
    for metric in tally.by_stratum[names[0]].metrics:
        parts = [
            (tally.sampling[name], *_counts(tally.by_stratum[name].metrics[metric]))
            for name in names
        ]
        sums = [tally.by_stratum[name].clusters[metric] for name in names]  # type: ignore[index]
        metrics[metric] = WeightedMetric.of(parts, z, sums=sums)
    return WeightedEstimate(dict(tally.sampling), metrics)


def _counts(binomial: Binomial) -> tuple[int, int]:
    return binomial.success_count, binomial.total_count


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
        if name not in strata or type(text) is not str or _FRACTION.fullmatch(text) is None:
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
