"""A binomial metric of a shared report, and the strict readers every shared document shares.

A :class:`SharedMetric` is a metric with ``None`` for a suppressed part; beside a
suppressed part stands its proven range, and then the metric's
:class:`RateBound` (docs/disclosure.md, "Provable bounds"). The readers here
check a shared document's numbers, intervals, ranges and metrics by exact type
and raise ``invalid_report`` without quoting the document.

Value-free: closed names and numbers only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Final, NoReturn

import attrs

from chartscore.documents import _strict_json
from chartscore.documents.report import read_design_effect
from chartscore.documents.shared_rule import RANGE_SUFFIX, RATE_RANGE, SUCCESS, TOTAL, WILSON_BOUND
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.binomial import Z95, CountRange, rate_range, widest_wilson, wilson_interval
from chartscore.stats.clustered import clustered_wilson

Interval = tuple[float, float]
Range = CountRange
"""A suppressed number's proven range ``(lo, hi)``; hi None when unbounded."""

_METRIC_KEYS: Final = frozenset({SUCCESS, TOTAL, "interval"})
_POOLED_METRIC_KEYS: Final = _METRIC_KEYS | {"design_effect", "clustered_interval"}
_METRIC_EXTRAS: Final = frozenset({SUCCESS + RANGE_SUFFIX, TOTAL + RANGE_SUFFIX, "rate_bound"})
_BOUND_KEYS: Final = frozenset({"kind", "lower", "upper"})


@attrs.frozen
class RateBound:
    """What the published ranges prove about a metric with a suppressed part.

    Attributes:
        kind: ``wilson`` in a field slice: the widest Wilson interval, at the
            report's level, over every count pair the ranges allow; or
            ``rate_range`` in a pooled slice: the range of the rate itself (a
            pooled slice's honest interval is clustered, and its design effect
            is not published where a count is hidden, so no interval is).
        lower: The smallest lower bound (or rate).
        upper: The largest upper bound (or rate).
    """

    kind: str
    lower: float
    upper: float

    def to_dict(self) -> dict[str, object]:
        """``{"kind", "lower", "upper"}``."""
        return {"kind": self.kind, "lower": self.lower, "upper": self.upper}


def rate_bound(success: Range, total: Range, *, pooled: bool, z: float = Z95) -> RateBound | None:
    """The rate bound of a metric whose counts lie in these ranges (docs/disclosure.md).

    A function of the ranges alone, so it publishes nothing they do not.
    None when no count pair has a trial.

    Raises:
        ValueError: if the ranges allow no pair with successes <= trials.
    """
    if pooled:
        found = rate_range(success, total)
        return None if found is None else RateBound(RATE_RANGE, *found)
    found = widest_wilson(success, total, z)
    return None if found is None else RateBound(WILSON_BOUND, *found)


def range_list(value: Range) -> list[int | None]:
    """A range as its JSON list."""
    return [value[0], value[1]]


ITEM_METRICS: Final = frozenset({"item_precision", "item_recall"})
"""Metrics whose trials are items, several to a row: a case's share of them has no bound."""


def rows_per_case(fields: Iterable[Collection[str]]) -> dict[str, int]:
    """The most trials one case can add to each row metric of a pooled slice.

    ``fields`` holds the metric names of each field the slice pools: a case has
    at most one row per field, so one trial per field that reports the metric.
    Item metrics are left out (no bound).
    """
    out: dict[str, int] = {}
    for names in fields:
        for name in names:
            if name not in ITEM_METRICS:
                out[name] = out.get(name, 0) + 1
    return out


@attrs.frozen
class CaseFloor:
    """The fewest cases a shown pooled metric can have, from published numbers alone.

    A shared report never publishes a pooled metric's case count (the overlap of
    two fields' cases would be a count the audit does not model), so its
    clustered interval counts the cases its own numbers prove: at least
    ``min_cell`` (the rule puts that many cases behind every shown nonzero
    count) and at least ``ceil(total / rows)`` for a row metric whose cases add
    at most ``rows`` trials each (docs/disclosure.md, "Clustered intervals").
    Never more than the true count, so the interval is never narrower than
    the full report's.
    """

    min_cell: int
    rows: Mapping[str, int]

    def cases(self, metric: str, total: int) -> int:
        """The floor for ``metric`` with ``total`` trials (``total > 0``)."""
        rows = self.rows.get(metric)
        floor = self.min_cell
        if rows:
            floor = max(floor, -(-total // rows))
        return floor

    def of(self, metric: str) -> Callable[[int], int]:
        """:meth:`cases` for one metric."""
        return lambda total: self.cases(metric, total)


@attrs.frozen
class SharedMetric:
    """One binomial metric of a shared report; ``None`` marks a suppressed part.

    A pooled slice's metric (``pooled``) also has the report's ``design_effect``
    and a ``clustered_interval`` over ``clustered_cases``, the fewest cases its
    published numbers allow (:class:`CaseFloor`; never written, None in a
    document before format 5, whose clustered intervals used ``z``), shown
    only where both counts are shown (docs/disclosure.md, "Clustered
    intervals"). A suppressed part may carry its proven range
    (``success_range``, ``total_range``), and then the metric its
    :class:`RateBound`.
    """

    success_count: int | None
    total_count: int | None
    interval: Interval | None
    design_effect: float | None = None
    clustered_interval: Interval | None = None
    pooled: bool = False
    success_range: Range | None = None
    total_range: Range | None = None
    rate_bound: RateBound | None = None
    clustered_cases: int | None = None

    def ranges(self) -> tuple[Range, Range] | None:
        """Both parts' ranges (a published part as ``(v, v)``), or None if one is not known."""
        success = _known(self.success_count, self.success_range)
        total = _known(self.total_count, self.total_range)
        if success is None or total is None:
            return None
        return success, total

    def to_dict(self) -> dict[str, object]:
        """``{"success_count", "total_count", "interval"}``, nulls for suppressed parts."""
        out: dict[str, object] = {
            SUCCESS: self.success_count,
            TOTAL: self.total_count,
            "interval": None if self.interval is None else list(self.interval),
        }
        if self.pooled:
            out["design_effect"] = self.design_effect
            clustered = self.clustered_interval
            out["clustered_interval"] = None if clustered is None else list(clustered)
        if self.success_range is not None:
            out[SUCCESS + RANGE_SUFFIX] = range_list(self.success_range)
        if self.total_range is not None:
            out[TOTAL + RANGE_SUFFIX] = range_list(self.total_range)
        if self.rate_bound is not None:
            out["rate_bound"] = self.rate_bound.to_dict()
        return out


def _known(value: int | None, proven: Range | None) -> Range | None:
    return (value, value) if value is not None else proven


def invalid() -> NoReturn:
    """Raise ``invalid_report`` (a shared document that is not well formed)."""
    raise ChartscoreError(ErrorCode.INVALID_REPORT)


def exact_keys(value: Mapping[str, object], keys: Collection[str]) -> None:
    """``invalid_report`` unless ``value`` has exactly ``keys``."""
    if set(value) != set(keys):
        invalid()


def read_count(value: object, *, nullable: bool = True) -> int | None:
    """A count (an int from 0 to 2**53 - 1, exact in binary64), or None where ``nullable``."""
    if value is None and nullable:
        return None
    if type(value) is not int or not 0 <= value <= _strict_json.MAX_COUNT:
        invalid()
    return value


def read_number(value: object, low: float, high: float) -> float:
    """A JSON number from ``low`` to ``high``."""
    return _strict_json.number(value, low, high)


def read_interval(value: object, low: float, high: float) -> Interval | None:
    """``[lower, upper]`` within ``[low, high]``, or None."""
    if value is None:
        return None
    if type(value) is not list or len(value) != 2:
        invalid()
    lower, upper = read_number(value[0], low, high), read_number(value[1], low, high)
    if lower > upper:
        invalid()
    return lower, upper


def read_range(value: object) -> Range:
    """A proven range ``[lo, hi]``."""
    # ``[lo, hi]``: integers with 0 <= lo <= hi, hi null when unbounded.
    if type(value) is not list or len(value) != 2:
        invalid()
    low, high = read_count(value[0], nullable=False), read_count(value[1])
    assert low is not None
    if high is not None and high < low:
        invalid()
    return low, high


def beside(value: Mapping[str, object], name: str, number: int | None) -> Range | None:
    """The range beside ``name`` in ``value``: present only where the number is suppressed."""
    # The range beside a number: only where the number is suppressed.
    key = name + RANGE_SUFFIX
    if key not in value:
        return None
    if number is not None:
        invalid()
    return read_range(value[key])


def read_metric(
    value: object,
    z: float = Z95,
    *,
    pooled: bool = False,
    cases: Callable[[int], int] | None = None,
) -> SharedMetric:
    """A metric: both counts (or null), its interval, ranges and rate bound, all checked.

    ``cases`` gives a pooled metric's case floor from its trials
    (:meth:`CaseFloor.of`); None for a document before format 5.
    """
    if type(value) is not dict:
        invalid()
    keys = _POOLED_METRIC_KEYS if pooled else _METRIC_KEYS
    if not keys <= set(value) or not set(value) <= keys | _METRIC_EXTRAS:
        invalid()
    success, total = read_count(value[SUCCESS]), read_count(value[TOTAL])
    success_range = beside(value, SUCCESS, success)
    total_range = beside(value, TOTAL, total)
    metric = plain_metric(value, success, total, z, pooled=pooled, cases=cases)
    metric = attrs.evolve(metric, success_range=success_range, total_range=total_range)
    both = metric.ranges()
    expected = None
    if both is not None and (success is None or total is None):
        # Ranges that allow no count pair are refused.
        expected = _strict_json.built(rate_bound, *both, pooled=pooled, z=z)
    if "rate_bound" in value:
        if expected is None or _bound(value["rate_bound"]) != expected:
            invalid()  # a bound stands exactly where its ranges give one, and is theirs
    elif expected is not None:
        invalid()
    return attrs.evolve(metric, rate_bound=expected)


def _bound(value: object) -> RateBound:
    if type(value) is not dict:
        invalid()
    exact_keys(value, _BOUND_KEYS)
    if value["kind"] not in (WILSON_BOUND, RATE_RANGE):
        invalid()
    lower, upper = read_number(value["lower"], 0.0, 1.0), read_number(value["upper"], 0.0, 1.0)
    return RateBound(value["kind"], lower, upper)


def plain_metric(
    value: Mapping[str, object],
    success: int | None,
    total: int | None,
    z: float,
    *,
    pooled: bool,
    cases: Callable[[int], int] | None,
) -> SharedMetric:
    """A metric's counts with the intervals ``value`` lists, checked: no ranges, no bound yet.

    Raises:
        ChartscoreError: ``invalid_report`` for an interval its counts do not give.
    """
    if success is not None and total is not None and success > total:
        invalid()
    shown = read_interval(value["interval"], 0.0, 1.0)
    # Shown exactly when both counts are, and then the Wilson interval of those counts.
    both = success is not None and total is not None
    expected = wilson_interval(success, total, z) if both else None  # type: ignore[arg-type]
    if shown != expected:
        invalid()
    if not pooled:
        return SharedMetric(success, total, shown)
    # The clustered figures: the same rule, and the interval its design effect gives.
    design_effect = None
    clustered = None
    floor = None
    if both and total:
        design_effect = read_design_effect(value["design_effect"], total)
        assert design_effect is not None and success is not None
        floor = None if cases is None else cases(total)
        clustered = clustered_wilson(success, total, design_effect, z, cases=floor)
    elif value["design_effect"] is not None:
        invalid()
    if read_interval(value["clustered_interval"], 0.0, 1.0) != clustered:
        invalid()
    return SharedMetric(
        success, total, shown, design_effect, clustered, pooled=True, clustered_cases=floor
    )
