"""A shared comparison: the core paired metrics of a comparison, small cells suppressed.

The document (format ``chartscore.shared_comparison``, docs/formats.md) has
the comparison's shape for what it publishes: per slice the gold counts,
each system's missing, answered and abstained counts, and the paired metrics
of :data:`SHARED_PAIRED_METRICS`
(each system's counts, the discordant counts, the difference and McNemar's
tests). A suppressed number is ``null`` with its proven range beside it
(``<name>_range``); a side with a suppressed part carries a rate bound as a
shared report does, and a difference with a suppressed part a
:class:`~chartscore.documents.shared_metric.RateBound` of its own
(:func:`difference_bound`). docs/disclosure.md, "Sharing a comparison".

Reading (:meth:`SharedComparison.from_json`) is strict: every figure shown
is recomputed from the shown counts, every bound from the published ranges.
Value-free.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from functools import lru_cache, partial
from typing import Any, Final, NoReturn

import attrs

from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents._shell import (
    COUNT_SUMS,
    TOP_KEYS,
    check_slices,
    check_sums,
    check_trials,
    read_shell,
)
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.comparison import (
    Comparison,
    ComparisonSlice,
    PairedBinomial,
    PairedClustering,
    PairedMetricResult,
    read_clustering,
)
from chartscore.documents.display import Displayed
from chartscore.documents.report import CORE_TOTALS, MetricResult
from chartscore.documents.shared_disclosure import read_disclosure
from chartscore.documents.shared_metric import (
    CaseFloor,
    Range,
    RateBound,
    SharedMetric,
    beside,
    plain_metric,
    rate_bound,
    read_count,
)
from chartscore.documents.shared_report import Disclosure, Key, KeyedNumbers
from chartscore.documents.shared_rule import (
    RANGE_SUFFIX,
    RATE_RANGE,
    SUCCESS,
    TOTAL,
    WILSON_BOUND,
)
from chartscore.documents.tally import Binomial
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.binomial import Z95, widest_wilson
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, clustered_wilson, z_for
from chartscore.stats.paired import newcombe_difference

SHARED_PAIRED_METRICS: Final = (
    "exact_agreement",
    "normalized_agreement",
    "abstention_correctness",
    "answerable_abstention",
    "unanswerable_answer",
)
"""The paired metrics a shared comparison publishes (the core ones, in every slice)."""

GOLD_COUNTS: Final = ("field_count", "answerable_count", "unanswerable_count")
SYSTEM_COUNTS: Final = ("missing_count", "answered_count", "abstained_count")
SYSTEMS: Final = ("baseline", "candidate")

BASELINE_ONLY: Final = "baseline_only"
CANDIDATE_ONLY: Final = "candidate_only"
BOTH: Final = "both"
NEITHER: Final = "neither"


def side_quantity(metric: str, system: str, part: str) -> str:
    """``exact_agreement.baseline.success_count`` (or ``.failures``)."""
    return f"{metric}.{system}.{part}"


def paired_quantity(metric: str, cell: str) -> str:
    """``exact_agreement.baseline_only``, ``.candidate_only``, ``.both``, ``.neither``."""
    return f"{metric}.{cell}"


def total_quantity(metric: str) -> str:
    """``exact_agreement.total_count``: the trials, the same for both systems."""
    return f"{metric}.{TOTAL}"


def system_count(system: str, count: str) -> str:
    """``baseline.missing_count``."""
    return f"{system}.{count}"


SHARED_COMPARISON_FORMAT: Final = "chartscore.shared_comparison"
SHARED_COMPARISON_FORMAT_VERSION: Final = 2
"""2: clustered intervals on Student's t over the cases the published numbers prove."""
READABLE_SHARED_COMPARISON_VERSIONS: Final = (1, 2)
"""Format 1 documents are read, and written back, as they are: clustered intervals on ``z``."""

NEWCOMBE_BOUND: Final = "newcombe"
"""A field slice's difference bound: the widest Newcombe interval over the tables allowed."""
DIFFERENCE_RANGE: Final = "difference_range"
"""A pooled slice's difference bound: the range of the observed difference itself."""

TABLE_LIMIT: Final = 5000
"""Above this many paired tables, a field slice's bound is the outer bound (never narrower)."""

_TOP_KEYS: Final = (*TOP_KEYS, "disclosure")
_SIDE_KEYS: Final = (SUCCESS, TOTAL, "interval")
_POOLED_SIDE_KEYS: Final = (*_SIDE_KEYS, "design_effect", "clustered_interval")
_SIDE_EXTRAS: Final = (SUCCESS + RANGE_SUFFIX, TOTAL + RANGE_SUFFIX, "rate_bound")
_PAIRED_KEYS: Final = (
    "baseline",
    "candidate",
    BASELINE_ONLY,
    CANDIDATE_ONLY,
    "difference",
    "mcnemar",
)
_PAIRED_EXTRAS: Final = (BASELINE_ONLY + RANGE_SUFFIX, CANDIDATE_ONLY + RANGE_SUFFIX)
_DIFFERENCE_KEYS: Final = ("estimate", "interval")
_POOLED_DIFFERENCE_KEYS: Final = (*_DIFFERENCE_KEYS, "design_effect", "clustered_interval")
_BOUND_KEYS: Final = ("kind", "lower", "upper")


def _invalid() -> NoReturn:
    raise ChartscoreError(ErrorCode.INVALID_REPORT)


# --------------------------------------------------------------------------- bounds


def _span(value: Range) -> Range:
    low, high = value
    if type(low) is not int or low < 0 or not (high is None or (type(high) is int and high >= low)):
        raise ValueError("need integers 0 <= lo <= hi")
    return low, high


def difference_bound(
    total: Range,
    baseline: Range,
    candidate: Range,
    baseline_only: Range,
    candidate_only: Range,
    *,
    pooled: bool,
    z: float = Z95,
) -> RateBound | None:
    """What the ranges prove about the difference (candidate - baseline); None with no trial.

    Field slices (``newcombe``): the union of Newcombe's intervals of every
    paired table ``(both, baseline_only, candidate_only, neither)`` whose
    numbers lie in their ranges, when the trials are published and there are
    at most :data:`TABLE_LIMIT` such tables; otherwise the outer bound, the
    candidate's widest Wilson lower end minus the baseline's widest upper end
    (and the other way round), which holds every Newcombe interval of those
    tables (Newcombe's half-widths are at most the sums of the Wilson ones).
    Pooled slices (``difference_range``): the range of ``(c - b) / n``
    itself, not an interval estimate (as a shared report's ``rate_range``).

    Raises:
        ValueError: if the ranges allow no table.
    """
    ranges = (total, baseline, candidate, baseline_only, candidate_only)
    spans = (*(_span(value) for value in ranges),)
    return _proven_difference(spans, pooled, z)


@lru_cache(maxsize=4096, typed=True)
def _proven_difference(spans: tuple[Range, ...], pooled: bool, z: float) -> RateBound | None:
    # difference_bound's answer, remembered: a pure function of checked integer ranges
    # (validated before the lookup, so a bool or a float never reaches the key), asked
    # again for the same ranges by every suppression, audit and reading of a comparison in
    # a publication (1,237 calls, 253 distinct ranges, on the study). A ValueError (no
    # table) is not cached, so it is raised again on every call.
    total, baseline, candidate, baseline_only, candidate_only = spans
    (n_lo, n_hi), (sb_lo, sb_hi), (sc_lo, sc_hi) = total, baseline, candidate
    (b_lo, b_hi), (c_lo, c_hi) = baseline_only, candidate_only
    if n_hi == 0:
        return None
    if pooled:
        return RateBound(DIFFERENCE_RANGE, *_difference_range(total, baseline_only, candidate_only))
    tables = None
    if n_lo == n_hi and None not in (sb_hi, sc_hi, b_hi, c_hi):
        assert sb_hi is not None and sc_hi is not None and b_hi is not None and c_hi is not None
        tables = _tables(n_lo, (sb_lo, sb_hi), (sc_lo, sc_hi), (b_lo, b_hi), (c_lo, c_hi))
    if tables is None:
        return _outer_bound(total, baseline, candidate, z)
    if not tables:
        raise ValueError("the ranges allow no paired table")
    found = _union(n_lo, tables, z)
    if found is None:
        lower, upper = 1.0, -1.0
        for both, b, c in tables:
            low, high = _newcombe_interval(both, c, b, n_lo - both - b - c, z)
            lower, upper = min(lower, low), max(upper, high)
        found = (lower, upper)
    return RateBound(NEWCOMBE_BOUND, *found)


_UNION_MOST_TRIALS: Final = 50_000
"""Above this many trials a table's margins product may pass 2**63: the loop instead."""


def _union(n: int, tables: list[tuple[int, int, int]], z: float) -> tuple[float, float] | None:
    """The loop's union of Newcombe's intervals, every table at once (None: no numpy).

    Each step is the scalar code's binary64 operation in its order, on integers
    converted exactly (every product stays below 2**53 with at most
    :data:`_UNION_MOST_TRIALS` trials; the margins below 2**63), and each ``max`` /
    ``min`` is written as the scalar one decides ties, so every bound has the same
    bits (a property test compares them). On the study's publication the loop was a
    third of a comparison's finishing, 50,000 tables an order.
    """
    try:
        import numpy as np  # noqa: PLC0415 (the share extra's; reading works without it)
    except ImportError:
        return None
    if n > _UNION_MOST_TRIALS:
        return None
    cells = np.array(tables, dtype=np.int64).reshape(-1, 3)
    # newcombe_difference(both, c, b, n - both - b - c): first_only is c, second_only b.
    a, first_only, second_only = cells[:, 0], cells[:, 2], cells[:, 1]
    d = n - a - first_only - second_only
    z2 = z * z

    def wilson(k: Any) -> tuple[Any, Any]:
        s = (k + z2 / 2) + z * np.sqrt((k * (n - k)).astype(np.float64) / n + z2 / 4)
        lower = (k * k).astype(np.float64) / (n * s)
        ratio = s / (n + z2)
        upper = np.where(k == n, 1.0, np.where(ratio < 1.0, ratio, 1.0))
        return lower, upper

    def combined(x: Any, y: Any, phi: Any) -> Any:
        inside = (x * x + y * y) - 2.0 * phi * (x * y)
        return np.sqrt(np.where(inside > 0.0, inside, 0.0))

    first, second = wilson(a + first_only), wilson(a + second_only)
    p1 = (a + first_only).astype(np.float64) / n
    p2 = (a + second_only).astype(np.float64) / n
    theta = (first_only - second_only).astype(np.float64) / n
    margins = (a + first_only) * (second_only + d) * (a + second_only) * (first_only + d)
    twice = 2 * (a * d - first_only * second_only)
    twice = np.where(twice > 0, np.maximum(twice - n, 0), twice)
    root = 2 * np.sqrt(margins.astype(np.float64))
    phi = np.where(margins == 0, 0.0, twice.astype(np.float64) / np.where(margins == 0, 1.0, root))
    delta = combined(p1 - first[0], second[1] - p2, phi)
    epsilon = combined(first[1] - p1, p2 - second[0], phi)
    low, high = theta - delta, theta + epsilon
    low = np.where(low > -1.0, low, -1.0)
    high = np.where(high < 1.0, high, 1.0)
    return min([1.0, *low.tolist()]), max([-1.0, *high.tolist()])


@lru_cache(maxsize=65536, typed=True)
def _newcombe_interval(
    both: int, first_only: int, second_only: int, neither: int, z: float
) -> tuple[float, float]:
    """Newcombe's interval of one paired table with ``n > 0``, remembered.

    Neighbouring range sets share most of their tables (on the study 477,201
    intervals over 59,683 distinct tables), so each is computed once. Only
    :func:`difference_bound` calls it, with non-negative ints from checked ranges.
    """
    found = newcombe_difference(both, first_only, second_only, neither, z)
    assert found is not None
    return found[1]


def _tables(
    n: int, baseline: Range, candidate: Range, b_range: Range, c_range: Range
) -> list[tuple[int, int, int]] | None:
    # Every (both, b, c) of n trials with both + b and both + c in range; None above the limit.
    (sb_lo, sb_hi), (sc_lo, sc_hi), (b_lo, b_hi), (c_lo, c_hi) = (
        baseline,
        candidate,
        b_range,
        c_range,
    )
    assert sb_hi is not None and sc_hi is not None and b_hi is not None and c_hi is not None
    if (b_hi - b_lo + 1) * (c_hi - c_lo + 1) > TABLE_LIMIT:
        return None
    out: list[tuple[int, int, int]] = []
    for b in range(b_lo, b_hi + 1):
        for c in range(c_lo, c_hi + 1):
            low = max(0, sb_lo - b, sc_lo - c)
            high = min(sb_hi - b, sc_hi - c, n - b - c)
            if high >= low:
                if len(out) + high - low + 1 > TABLE_LIMIT:
                    return None
                out += [(both, b, c) for both in range(low, high + 1)]
    return out


def _outer_bound(total: Range, baseline: Range, candidate: Range, z: float) -> RateBound | None:
    first = widest_wilson(candidate, total, z)
    second = widest_wilson(baseline, total, z)
    if first is None or second is None:
        return None
    lower = max(-1.0, first[0] - second[1])
    upper = min(1.0, first[1] - second[0])
    return RateBound(NEWCOMBE_BOUND, lower, upper)


def _difference_range(total: Range, b_range: Range, c_range: Range) -> tuple[float, float]:
    # (c - b) / n over the box: the most negative numerator over the fewest trials, etc.
    (n_lo, n_hi), (b_lo, b_hi), (c_lo, c_hi) = total, b_range, c_range
    smallest_n = max(1, n_lo)
    if b_hi is None:
        lower = -1.0
    else:
        low = c_lo - b_hi
        lower = low / smallest_n if low < 0 else (0.0 if n_hi is None else low / n_hi)
    if c_hi is None:
        upper = 1.0
    else:
        high = c_hi - b_lo
        upper = high / smallest_n if high > 0 else (0.0 if n_hi is None else high / n_hi)
    return max(-1.0, lower), min(1.0, upper)


# --------------------------------------------------------------------------- document


def _known(value: int | None, proven: Range | None) -> Range | None:
    return (value, value) if value is not None else proven


@attrs.frozen
class SharedPaired:
    """One paired metric of a shared comparison; ``None`` marks a suppressed number.

    The difference, its interval and McNemar's tests (and a pooled slice's
    clustered figures) are shown only when every number of the metric is.

    Attributes:
        baseline, candidate: Each system's counts (the same trials), interval
            and, with a suppressed part, ranges and rate bound.
        baseline_only, candidate_only: The discordant counts.
        result: Every paired figure, when everything is shown; else None.
        difference_bound: With a suppressed part: what the ranges prove about
            the difference (:func:`difference_bound`).
    """

    baseline: SharedMetric
    candidate: SharedMetric
    baseline_only: int | None
    candidate_only: int | None
    result: PairedMetricResult | None = None
    baseline_only_range: Range | None = None
    candidate_only_range: Range | None = None
    difference_bound: RateBound | None = None

    @property
    def pooled(self) -> bool:
        """Whether this is a pooled slice's metric (with clustered figures)."""
        return self.baseline.pooled

    @property
    def total_count(self) -> int | None:
        """The trials (the same for both systems)."""
        return self.baseline.total_count

    def numbers(self, metric: str) -> Iterator[tuple[str, int | None]]:
        """Its protected JSON numbers as (quantity, value)."""
        yield total_quantity(metric), self.total_count
        yield side_quantity(metric, "baseline", SUCCESS), self.baseline.success_count
        yield side_quantity(metric, "candidate", SUCCESS), self.candidate.success_count
        yield paired_quantity(metric, BASELINE_ONLY), self.baseline_only
        yield paired_quantity(metric, CANDIDATE_ONLY), self.candidate_only

    def ranges(self, metric: str) -> Iterator[tuple[str, Range]]:
        """Its published ranges as (quantity, range)."""
        if self.baseline.total_range is not None:
            yield total_quantity(metric), self.baseline.total_range
        for system, side in (("baseline", self.baseline), ("candidate", self.candidate)):
            if side.success_range is not None:
                yield side_quantity(metric, system, SUCCESS), side.success_range
        if self.baseline_only_range is not None:
            yield paired_quantity(metric, BASELINE_ONLY), self.baseline_only_range
        if self.candidate_only_range is not None:
            yield paired_quantity(metric, CANDIDATE_ONLY), self.candidate_only_range

    def all_ranges(self) -> tuple[Range, Range, Range, Range, Range] | None:
        """The ranges of total, both successes, both discordant counts; None if one is unknown."""
        found = (
            _known(self.total_count, self.baseline.total_range),
            _known(self.baseline.success_count, self.baseline.success_range),
            _known(self.candidate.success_count, self.candidate.success_range),
            _known(self.baseline_only, self.baseline_only_range),
            _known(self.candidate_only, self.candidate_only_range),
        )
        if any(value is None for value in found):
            return None
        return found  # type: ignore[return-value]

    def to_dict(self) -> dict[str, object]:
        """The paired metric as JSON-ready data."""
        result = self.result
        difference: dict[str, object] = {
            "estimate": None if result is None else result.estimate,
            "interval": None
            if result is None or result.interval is None
            else list(result.interval),
        }
        out: dict[str, object] = {
            "baseline": self.baseline.to_dict(),
            "candidate": self.candidate.to_dict(),
            BASELINE_ONLY: self.baseline_only,
            CANDIDATE_ONLY: self.candidate_only,
            "difference": difference,
            "mcnemar": {
                "exact_p": None if result is None else result.exact_p,
                "mid_p": None if result is None else result.mid_p,
            },
        }
        if self.pooled:
            clustering = None if result is None else result.clustering
            clustered = None if clustering is None else clustering.interval
            difference["design_effect"] = None if clustering is None else clustering.design_effect
            difference["clustered_interval"] = None if clustered is None else list(clustered)
            out["clustered_mcnemar"] = {
                "design_effect": None if clustering is None else clustering.mcnemar_design_effect,
                "p": None if clustering is None else clustering.p,
            }
        if self.difference_bound is not None:
            difference["bound"] = self.difference_bound.to_dict()
        if self.baseline_only_range is not None:
            out[BASELINE_ONLY + RANGE_SUFFIX] = list(self.baseline_only_range)
        if self.candidate_only_range is not None:
            out[CANDIDATE_ONLY + RANGE_SUFFIX] = list(self.candidate_only_range)
        return out


@attrs.frozen
class SharedComparisonSlice:
    """One slice: gold counts, each system's counts and the paired metrics, ``None`` if hidden.

    Attributes:
        counts: The protected counts by quantity name: the gold counts and
            ``baseline.missing_count`` and the like.
        count_ranges: The proven range of every suppressed count, by name.
        paired: The paired metrics, by name.
    """

    counts: Mapping[str, int | None]
    paired: Mapping[str, SharedPaired]
    count_ranges: Mapping[str, Range] = attrs.field(factory=dict)

    def numbers(self) -> Iterator[tuple[str, int | None]]:
        """Every protected JSON number as (quantity, value)."""
        yield from self.counts.items()
        for metric, paired in self.paired.items():
            yield from paired.numbers(metric)

    def quantities(self) -> dict[str, int | None]:
        """Every protected number by quantity, for the checks that pooled slices are sums."""
        return dict(self.numbers())

    def ranges(self) -> Iterator[tuple[str, Range]]:
        """Every published range as (quantity, range)."""
        yield from self.count_ranges.items()
        for metric, paired in self.paired.items():
            yield from paired.ranges(metric)

    def to_dict(self) -> dict[str, object]:
        """The slice as JSON-ready data."""
        out: dict[str, object] = {}
        for name in GOLD_COUNTS:
            out[name] = self.counts[name]
            if name in self.count_ranges:
                out[name + RANGE_SUFFIX] = list(self.count_ranges[name])
        for system in SYSTEMS:
            own: dict[str, object] = {}
            for name in SYSTEM_COUNTS:
                key = system_count(system, name)
                own[name] = self.counts[key]
                if key in self.count_ranges:
                    own[name + RANGE_SUFFIX] = list(self.count_ranges[key])
            out[f"{system}_counts"] = own
        for metric, paired in self.paired.items():
            out[metric] = paired.to_dict()
        return out


@attrs.frozen
class SharedComparison(KeyedNumbers, Displayed):
    """A comparison that passed disclosure control (docs/disclosure.md).

    Attributes:
        overall, by_field, by_field_type: The slices.
        disclosure: The rule, ``min_cell``, the suppressed count and the field types.
        scorer_version: The chartscore version that compared the systems.
        confidence: The level of every interval and bound.
        format_version: The format it was read in (1: clustered intervals on
            ``z``), which :meth:`to_json` writes back; a new one is format 2.
    """

    overall: SharedComparisonSlice
    by_field: Mapping[str, SharedComparisonSlice]
    by_field_type: Mapping[str, SharedComparisonSlice]
    disclosure: Disclosure
    scorer_version: str = __version__
    confidence: float = DEFAULT_CONFIDENCE
    format_version: int = attrs.field(
        default=SHARED_COMPARISON_FORMAT_VERSION, eq=False, repr=False
    )

    def slices(self) -> Iterator[tuple[str, str, SharedComparisonSlice]]:
        """Every slice as (kind, name, slice): overall, fields, then field types."""
        yield "overall", "", self.overall
        for field_id in sorted(self.by_field):
            yield "field", field_id, self.by_field[field_id]
        for type_name in sorted(self.by_field_type):
            yield "field_type", type_name, self.by_field_type[type_name]

    def to_dict(self) -> dict[str, object]:
        """The shared comparison as JSON-ready data."""
        return {
            "format": SHARED_COMPARISON_FORMAT,
            "format_version": self.format_version,
            "scorer": {"name": "chartscore", "version": self.scorer_version},
            "confidence": self.confidence,
            "disclosure": self.disclosure.to_dict(),
            "overall": self.overall.to_dict(),
            "by_field": {k: v.to_dict() for k, v in self.by_field.items()},
            "by_field_type": {k: v.to_dict() for k, v in self.by_field_type.items()},
        }

    def to_json(self) -> str:
        """RFC 8785 canonical JSON."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_json(cls, text: str | bytes) -> SharedComparison:
        """Read a shared comparison back, strictly.

        Raises:
            ChartscoreError: ``unknown_report_format`` for another format or
                version; ``invalid_report`` for anything malformed: unknown or
                missing keys, a figure or bound that the shown counts or the
                published ranges do not give, a range beside a shown number,
                broken identities among shown numbers, a ``suppressed_count``
                that does not match the nulls. Never quotes the document.
        """
        return _read(_strict_json.parse(text))


# --------------------------------------------------------------------------- building


def slice_floor(min_cell: int, field_types: Mapping[str, str], kind: str, name: str) -> CaseFloor:
    """A pooled slice's case floor: each case adds at most one trial per field it pools."""
    fields = sum(1 for t in field_types.values() if kind == "overall" or t == name)
    return CaseFloor(min_cell, dict.fromkeys(SHARED_PAIRED_METRICS, fields))


def _side(
    result: MetricResult,
    success: int | None,
    total: int | None,
    z: float,
    *,
    pooled: bool,
    cases: int | None,
) -> SharedMetric:
    # ``cases`` is a pooled side's case floor (None where its trials are hidden or none).
    shown = success is not None and total is not None
    interval = result.interval if shown else None
    if not pooled:
        return SharedMetric(success, total, interval)
    clustering = result.clustering
    if not shown or not total or clustering is None or clustering.design_effect is None:
        return SharedMetric(success, total, interval, pooled=True)
    assert success is not None and cases is not None
    clustered = clustered_wilson(success, total, clustering.design_effect, z, cases=cases)
    return SharedMetric(
        success,
        total,
        interval,
        clustering.design_effect,
        clustered,
        pooled=True,
        clustered_cases=cases,
    )


def _paired(
    metric: str,
    full: PairedMetricResult,
    hidden: Callable[[str], bool],
    z: float,
    *,
    floor: CaseFloor | None,
) -> SharedPaired:
    total = None if hidden(total_quantity(metric)) else full.baseline.total_count
    numbers = {
        system: None if hidden(side_quantity(metric, system, SUCCESS)) else side.success_count
        for system, side in (("baseline", full.baseline), ("candidate", full.candidate))
    }
    b = None if hidden(paired_quantity(metric, BASELINE_ONLY)) else full.baseline_only
    c = None if hidden(paired_quantity(metric, CANDIDATE_ONLY)) else full.candidate_only
    shown = total is not None and None not in numbers.values() and b is not None and c is not None
    cases = None if floor is None or not total else floor.cases(metric, total)
    result = None
    if shown:
        result = full
        clustering = full.clustering
        if floor is not None and clustering is not None:
            result = attrs.evolve(
                full,
                clustering=PairedClustering.from_design_effects(
                    full.cells, clustering.design_effect, clustering.mcnemar_design_effect, z,
                    cases=cases,
                ),
            )  # fmt: skip
    return SharedPaired(
        baseline=_side(
            full.baseline, numbers["baseline"], total, z, pooled=floor is not None, cases=cases
        ),
        candidate=_side(
            full.candidate, numbers["candidate"], total, z, pooled=floor is not None, cases=cases
        ),
        baseline_only=b,
        candidate_only=c,
        result=result,
    )


def build_shared_comparison(
    comparison: Comparison,
    field_types: Mapping[str, str],
    min_cell: int,
    hidden: Collection[Key],
) -> SharedComparison:
    """The shared comparison of a full comparison with the ``hidden`` numbers suppressed.

    Only the core paired metrics are kept (:data:`SHARED_PAIRED_METRICS`);
    unpaired and type-specific metrics, kappa, warnings, strata and the
    ignored-prediction counts are withheld. :func:`with_ranges` adds the
    ranges and bounds once the audit has proven them.
    """
    hidden_set = set(hidden)
    z = z_for(comparison.confidence)

    def build(kind: str, name: str, part: ComparisonSlice) -> SharedComparisonSlice:
        def is_hidden(quantity: str) -> bool:
            return (kind, name, quantity) in hidden_set

        counts: dict[str, int | None] = {
            count: None if is_hidden(count) else part.counts[count] for count in GOLD_COUNTS
        }
        for system, own in (
            ("baseline", part.baseline_counts),
            ("candidate", part.candidate_counts),
        ):
            for count in SYSTEM_COUNTS:
                key = system_count(system, count)
                counts[key] = None if is_hidden(key) else own[count]
        floor = None if kind == "field" else slice_floor(min_cell, field_types, kind, name)
        paired = {
            metric: _paired(metric, part.paired[metric], is_hidden, z, floor=floor)
            for metric in SHARED_PAIRED_METRICS
        }
        return SharedComparisonSlice(counts=counts, paired=paired)

    draft = SharedComparison(
        overall=build("overall", "", comparison.overall),
        by_field={
            k: build("field", k, comparison.by_field[k]) for k in sorted(comparison.by_field)
        },
        by_field_type={
            k: build("field_type", k, comparison.by_field_type[k])
            for k in sorted(comparison.by_field_type)
        },
        disclosure=Disclosure(min_cell, 0, {k: field_types[k] for k in sorted(field_types)}),
        scorer_version=comparison.scorer_version,
        confidence=comparison.confidence,
    )
    suppressed = sum(1 for _, value in draft.numbers() if value is None)
    return attrs.evolve(
        draft, disclosure=attrs.evolve(draft.disclosure, suppressed_count=suppressed)
    )


def with_ranges(shared: SharedComparison, found: Mapping[Key, Range]) -> SharedComparison:
    """``shared`` with every suppressed number's range (from ``found``) and the bounds."""
    z = z_for(shared.confidence)

    def ranged(kind: str, name: str, part: SharedComparisonSlice) -> SharedComparisonSlice:
        def proven(quantity: str, value: int | None) -> Range | None:
            return None if value is not None else found[kind, name, quantity]

        count_ranges = {
            quantity: found[kind, name, quantity]
            for quantity, value in part.counts.items()
            if value is None
        }
        paired = {}
        for metric, original in part.paired.items():
            total_range = proven(total_quantity(metric), original.total_count)
            sides = []
            for system, plain in (
                ("baseline", original.baseline),
                ("candidate", original.candidate),
            ):
                success_range = proven(side_quantity(metric, system, SUCCESS), plain.success_count)
                side = attrs.evolve(plain, success_range=success_range, total_range=total_range)
                both = side.ranges()
                if both is not None and (side.success_count is None or side.total_count is None):
                    side = attrs.evolve(side, rate_bound=rate_bound(*both, pooled=side.pooled, z=z))
                sides.append(side)
            item = attrs.evolve(
                original,
                baseline=sides[0],
                candidate=sides[1],
                baseline_only_range=proven(
                    paired_quantity(metric, BASELINE_ONLY), original.baseline_only
                ),
                candidate_only_range=proven(
                    paired_quantity(metric, CANDIDATE_ONLY), original.candidate_only
                ),
            )
            everything = item.all_ranges()
            if item.result is None and everything is not None:
                bound = difference_bound(*everything, pooled=item.pooled, z=z)
                item = attrs.evolve(item, difference_bound=bound)
            paired[metric] = item
        return attrs.evolve(part, paired=paired, count_ranges=count_ranges)

    return attrs.evolve(
        shared,
        overall=ranged("overall", "", shared.overall),
        by_field={k: ranged("field", k, v) for k, v in shared.by_field.items()},
        by_field_type={k: ranged("field_type", k, v) for k, v in shared.by_field_type.items()},
    )


# --------------------------------------------------------------------------- reading


def _interval(value: object, low: float, high: float) -> tuple[float, float] | None:
    return None if value is None else _strict_json.interval(value, low, high)


def _bound(value: object, kinds: Collection[str], low: float) -> RateBound:
    data = _strict_json.members(value, _BOUND_KEYS)
    kind = data["kind"]
    if kind not in kinds:
        _invalid()
    return RateBound(
        str(kind),
        _strict_json.number(data["lower"], low, 1.0),
        _strict_json.number(data["upper"], low, 1.0),
    )


def _proven_bound(
    prove: Callable[[], RateBound | None] | None,
    data: Mapping[str, object],
    key: str,
    kind: str,
    low: float,
) -> RateBound | None:
    # What the published ranges prove (``prove``; None when nothing is hidden): the
    # document lists it under ``key`` exactly when there is one, and as it is.
    bound = None if prove is None else _strict_json.built(prove)
    if key in data:
        if bound is None or _bound(data[key], (kind,), low) != bound:
            _invalid()
    elif bound is not None:
        _invalid()
    return bound


def _read_side(
    value: object, z: float, *, pooled: bool, floor: Callable[[int], int] | None
) -> SharedMetric:
    data = _strict_json.members(value, _POOLED_SIDE_KEYS if pooled else _SIDE_KEYS, _SIDE_EXTRAS)
    success, total = read_count(data[SUCCESS]), read_count(data[TOTAL])
    side = plain_metric(data, success, total, z, pooled=pooled, cases=floor)
    both = success is not None and total is not None
    side = attrs.evolve(
        side,
        success_range=beside(data, SUCCESS, success),
        total_range=beside(data, TOTAL, total),
    )
    known = side.ranges()
    prove = None if known is None or both else partial(rate_bound, *known, pooled=pooled, z=z)
    kind = RATE_RANGE if pooled else WILSON_BOUND
    return attrs.evolve(side, rate_bound=_proven_bound(prove, data, "rate_bound", kind, 0.0))


def _read_paired(
    value: object, z: float, *, pooled: bool, floor: Callable[[int], int] | None
) -> SharedPaired:
    data = _strict_json.members(
        value, (*_PAIRED_KEYS, *(("clustered_mcnemar",) if pooled else ())), _PAIRED_EXTRAS
    )
    baseline = _read_side(data["baseline"], z, pooled=pooled, floor=floor)
    candidate = _read_side(data["candidate"], z, pooled=pooled, floor=floor)
    if (baseline.total_count, baseline.total_range) != (
        candidate.total_count,
        candidate.total_range,
    ):
        _invalid()  # the same trials for both systems
    b, c = read_count(data[BASELINE_ONLY]), read_count(data[CANDIDATE_ONLY])
    item = SharedPaired(
        baseline,
        candidate,
        b,
        c,
        baseline_only_range=beside(data, BASELINE_ONLY, b),
        candidate_only_range=beside(data, CANDIDATE_ONLY, c),
    )
    n, sb, sc = baseline.total_count, baseline.success_count, candidate.success_count
    for part, whole in ((b, sb), (c, sc)):
        if part is not None and whole is not None and part > whole:
            _invalid()
    difference = _strict_json.members(
        data["difference"], _POOLED_DIFFERENCE_KEYS if pooled else _DIFFERENCE_KEYS, ("bound",)
    )
    tests = _strict_json.members(data["mcnemar"], ("exact_p", "mid_p"))
    figures = [difference[k] for k in _DIFFERENCE_KEYS] + [tests["exact_p"], tests["mid_p"]]
    clustered_tests: Mapping[str, object] = {}
    if pooled:
        clustered_tests = _strict_json.members(data["clustered_mcnemar"], ("design_effect", "p"))
        figures += [difference["design_effect"], difference["clustered_interval"]]
        figures += [clustered_tests["design_effect"], clustered_tests["p"]]
    shown = n is not None and sb is not None and sc is not None and b is not None and c is not None
    if not shown:
        if any(figure is not None for figure in figures):
            _invalid()  # every paired figure would reveal the hidden numbers
    else:
        assert n is not None and sb is not None and sc is not None and b is not None
        assert c is not None
        both = sb - b
        if sc - c != both or both + b + c > n:
            _invalid()
        cells = PairedBinomial(both, b, c, n - both - b - c)
        cases = None if floor is None or not n else floor(n)
        found = _read_result(cells, difference, tests, clustered_tests, z, cases=cases)
        item = attrs.evolve(item, result=found)
    everything = item.all_ranges()
    prove = None
    if not shown and everything is not None:
        prove = partial(difference_bound, *everything, pooled=pooled, z=z)
    kind = DIFFERENCE_RANGE if pooled else NEWCOMBE_BOUND
    bound = _proven_bound(prove, difference, "bound", kind, -1.0)
    return attrs.evolve(item, difference_bound=bound)


def _read_result(
    cells: PairedBinomial,
    difference: Mapping[str, object],
    tests: Mapping[str, object],
    clustered_tests: Mapping[str, object],
    z: float,
    *,
    cases: int | None,
) -> PairedMetricResult:
    # Every figure recomputed from the cells (and the published design effects), compared.
    n = cells.total_count
    sides = (
        MetricResult.from_binomial(Binomial(cells.both + cells.baseline_only, n), z),
        MetricResult.from_binomial(Binomial(cells.both + cells.candidate_only, n), z),
    )
    clustering = None
    if clustered_tests:
        clustering = read_clustering(cells, difference, clustered_tests, z, cases=cases)
    expected = PairedMetricResult.from_parts(cells, z, None, sides, clustering)
    listed_interval = difference["interval"]
    found = (
        None
        if difference["estimate"] is None
        else _strict_json.number(difference["estimate"], -1.0, 1.0),
        None if listed_interval is None else _strict_json.interval(listed_interval, -1.0, 1.0),
        None if tests["exact_p"] is None else _strict_json.number(tests["exact_p"], 0.0, 1.0),
        None if tests["mid_p"] is None else _strict_json.number(tests["mid_p"], 0.0, 1.0),
    )
    if found != (expected.estimate, expected.interval, expected.exact_p, expected.mid_p):
        _invalid()
    return expected


def _read_slice(
    value: object, z: float, *, floor: CaseFloor | None, pooled: bool
) -> SharedComparisonSlice:
    optional = [name + RANGE_SUFFIX for name in GOLD_COUNTS]
    required = (*GOLD_COUNTS, "baseline_counts", "candidate_counts", *SHARED_PAIRED_METRICS)
    data = _strict_json.members(value, required, optional)
    counts: dict[str, int | None] = {}
    count_ranges: dict[str, Range] = {}
    for name in GOLD_COUNTS:
        counts[name] = read_count(data[name])
        found = beside(data, name, counts[name])
        if found is not None:
            count_ranges[name] = found
    for system in SYSTEMS:
        own = _strict_json.members(
            data[f"{system}_counts"], SYSTEM_COUNTS, [n + RANGE_SUFFIX for n in SYSTEM_COUNTS]
        )
        for name in SYSTEM_COUNTS:
            key = system_count(system, name)
            counts[key] = read_count(own[name])
            found = beside(own, name, counts[key])
            if found is not None:
                count_ranges[key] = found
    paired = {
        metric: _read_paired(
            data[metric], z, pooled=pooled, floor=None if floor is None else floor.of(metric)
        )
        for metric in SHARED_PAIRED_METRICS
    }
    part = SharedComparisonSlice(counts=counts, paired=paired, count_ranges=count_ranges)
    _check_identities(part)
    return part


def _check_identities(part: SharedComparisonSlice) -> None:
    # The comparison's identities, wherever every number in them is shown.
    systems = [("field_count", [system_count(s, n) for n in SYSTEM_COUNTS]) for s in SYSTEMS]
    check_sums(part.counts, [COUNT_SUMS[0], *systems])
    check_trials(part.counts, ((CORE_TOTALS[m], p.total_count) for m, p in part.paired.items()))


def _read(document: object) -> SharedComparison:
    shell = read_shell(
        document, SHARED_COMPARISON_FORMAT, READABLE_SHARED_COMPARISON_VERSIONS, _TOP_KEYS
    )
    data, z, format_version = shell.members, shell.z, shell.format_version
    disclosure = read_disclosure(data["disclosure"], recorded=False)
    field_types = disclosure.field_types
    by_field_raw = _strict_json.mapping(data["by_field"])
    by_type_raw = _strict_json.mapping(data["by_field_type"])
    if set(by_field_raw) != set(field_types) or set(by_type_raw) != set(field_types.values()):
        _invalid()

    def floor(kind: str, name: str) -> CaseFloor | None:
        if format_version < SHARED_COMPARISON_FORMAT_VERSION:
            return None  # format 1: clustered intervals on z
        return slice_floor(disclosure.min_cell, field_types, kind, name)

    shared = SharedComparison(
        overall=_read_slice(data["overall"], z, floor=floor("overall", ""), pooled=True),
        by_field={
            k: _read_slice(by_field_raw[k], z, floor=None, pooled=False)
            for k in sorted(by_field_raw)
        },
        by_field_type={
            k: _read_slice(by_type_raw[k], z, floor=floor("field_type", k), pooled=True)
            for k in sorted(by_type_raw)
        },
        disclosure=disclosure,
        scorer_version=shell.scorer_version,
        confidence=shell.confidence,
        format_version=format_version,
    )
    if sum(1 for _, value in shared.numbers() if value is None) != disclosure.suppressed_count:
        _invalid()
    check_slices(shared.overall, shared.by_field.values(), shared.by_field_type.values())
    return shared
