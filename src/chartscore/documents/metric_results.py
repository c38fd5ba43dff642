"""What one metric of a report slice holds: counts, intervals and figures, read back strictly.

A slice of a :class:`~chartscore.documents.report.Report` is made of these records: a binomial
:class:`MetricResult` (with its case-clustered :class:`Clustering` in a pooled slice), Cohen's
:class:`KappaResult`, the prevalence-robust :class:`CoefficientResult`, a number or date
field's :class:`MagnitudeResult`, the declared-uncertainty :class:`UncertaintyResult` and
each declared label's :class:`LabelResult`. Each computes its figures from counts or exact
sums and rebuilds itself from report JSON, checking every figure against them. They live
apart from the documents that hold them, which :mod:`chartscore.documents.report` re-exports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Final

import attrs

from chartscore.documents import _strict_json
from chartscore.documents.tally import LABEL_METRICS, Binomial, KappaTable
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.binomial import Z95, cohen_kappa, wilson_interval
from chartscore.stats.clustered import (
    ClusterSums,
    clustered_wilson,
    design_effect,
    is_published_design_effect,
    published_design_effect,
)
from chartscore.stats.confusion import f1_score
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

_METRIC_KEYS: Final = ("success_count", "total_count", "interval")
_POOLED_METRIC_KEYS: Final = (*_METRIC_KEYS, "design_effect", "clustered_interval", "case_count")
_FORMAT_2_POOLED_METRIC_KEYS: Final = _POOLED_METRIC_KEYS[:-1]
_KAPPA_KEYS: Final = ("value", "interval", "pairs")
_LABEL_KEYS: Final = (*LABEL_METRICS, "f1")

Interval = tuple[float, float]


def lookup_name(name: object) -> str:
    """``name`` as a look-up key, by exact type (``usage`` otherwise).

    A str subclass's ``__hash__`` and ``__eq__`` are the caller's code.
    """
    if type(name) is not str:
        raise ChartscoreError(ErrorCode.USAGE)
    return name


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
        exact = _strict_json.built(
            ErrorSums,
            unit,
            pairs,
            absolute,  # type: ignore[arg-type]
            total,  # type: ignore[arg-type]
            squares,  # type: ignore[arg-type]
            gold_rows,
            deviation,  # type: ignore[arg-type]
        )
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
        sums = _strict_json.built(
            UncertaintySums,
            agreed,
            rows - agreed,
            ranked_twice,
            brier,
            tuple((step.success_count, step.total_count) for step in kept),
            without,
        )
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


def f1_of_metrics(metrics: Mapping[str, MetricResult]) -> float | None:
    """F1 from the label counts: 2 TP / (gold positives + answered positives)."""
    sensitivity, ppv = metrics["sensitivity"], metrics["ppv"]
    return f1_score(sensitivity.success_count, sensitivity.total_count, ppv.total_count)


@attrs.frozen
class LabelResult:
    """One declared label's confusion metrics in a field slice (docs/metrics.md).

    Attributes:
        metrics: ``sensitivity``, ``specificity``, ``ppv`` and ``npv`` as
            :class:`MetricResult` (Wilson intervals).
        f1: ``2 TP / (gold positives + answered positives)``; None when the
            label is in no gold or in no answer (sensitivity or PPV undefined).
    """

    metrics: Mapping[str, MetricResult]

    @property
    def f1(self) -> float | None:
        """The label's F1, from its counts."""
        return f1_of_metrics(self.metrics)

    def metric(self, name: str) -> MetricResult:
        """One of the four label metrics by name.

        Raises:
            KeyError: ``name`` is not a label metric.
            ChartscoreError: ``usage`` when ``name`` is not exactly a ``str``.
        """
        return self.metrics[lookup_name(name)]

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
        check_figure(members["f1"], result.f1)
        return result

    def to_dict(self) -> dict[str, object]:
        """``{"sensitivity", "specificity", "ppv", "npv", "f1"}``."""
        out: dict[str, object] = {name: self.metrics[name].to_dict() for name in LABEL_METRICS}
        out["f1"] = self.f1
        return out


def check_figure(shown: object, recomputed: float | None) -> None:
    """A derived figure in a document must be the one its counts give, exactly.

    Raises:
        ChartscoreError: ``invalid_report`` otherwise.
    """
    if recomputed is None:
        if shown is not None:
            _strict_json.invalid()
    elif shown is None or _strict_json.number(shown, -1e308, 1e308) != recomputed:
        _strict_json.invalid()
