"""Run cost: the mergeable totals of a run's token counts, latency and cost.

A prediction line may carry a ``usage`` object (docs/formats.md, "Run cost"). These are
magnitudes of the system's behaviour, not patient values, and they add: a partition's
:class:`RunCost` merges with another's by adding integers, in any order or grouping.

Every quantity is held as an exact integer in its smallest unit: tokens, latency in
nanoseconds (milliseconds with at most six decimals), cost in billionths of the declared
currency (at most nine decimals). Latency percentiles come from a bounded, mergeable
histogram whose buckets are the latencies in nanoseconds truncated to three significant
digits, so a reported percentile is *exactly* the nearest-rank percentile truncated to three
significant digits (less than 1% below it; exact below 1000 ns): see docs/metrics.md,
"Run cost and latency".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode

QUANTITIES: Final = ("input_tokens", "output_tokens", "latency_ms", "cost")
"""The four quantities of a ``usage`` object, in report order."""

UNITS_PER: Final = {"input_tokens": 1, "output_tokens": 1, "latency_ms": 10**6, "cost": 10**9}
"""How many of a quantity's integer units make one reported unit (ns per ms; 1e-9 currency)."""

PERCENTILES: Final = (50, 95)
"""The latency percentiles a report gives (nearest rank)."""

SIGNIFICANT_DIGITS: Final = 3
"""The latency histogram's resolution: each bucket is one value of this many digits."""


def latency_bucket(nanoseconds: int) -> int:
    """The lower bound of a latency's bucket: the latency truncated to three significant digits.

    Below 1000 ns every value is its own bucket. The buckets are fixed (the same for every
    run), so histograms of partitions add; a run has at most 900 per decade of latency.
    """
    if nanoseconds < 10**SIGNIFICANT_DIGITS:
        return nanoseconds
    scale: int = 10 ** (len(str(nanoseconds)) - SIGNIFICANT_DIGITS)
    return nanoseconds // scale * scale


def nearest_rank(counts: Iterable[tuple[int, int]], percent: int) -> int | None:
    """The nearest-rank ``percent``-th percentile of a histogram's bucket bounds, or None if empty.

    ``counts`` are (bucket lower bound, count) pairs in increasing order; the result is the
    bound of the bucket holding the value of rank ceil(percent * n / 100) (at least 1).
    """
    pairs = list(counts)
    total = sum(count for _, count in pairs)
    if total == 0:
        return None
    rank = max(1, -(-percent * total // 100))
    seen = 0
    for bound, count in pairs:
        seen += count
        if seen >= rank:
            return bound
    raise AssertionError("unreachable: the ranks add up to the total")  # pragma: no cover


@attrs.frozen
class RunHeader:
    """A predictions file's run header: model, version and price, as the operator declared them.

    The strings are limited to a small character set when read (docs/formats.md), so a report
    may carry them; ``share`` never publishes them (docs/disclosure.md, "Run cost").
    Prices are in billionths of ``currency`` per million tokens.
    """

    model: str | None = None
    model_version: str | None = None
    currency: str | None = None
    input_price: int | None = None
    output_price: int | None = None

    def __repr__(self) -> str:
        return "RunHeader(<model, version and price hidden>)"


@attrs.frozen
class QuantityTotal:
    """One quantity's rows (lines that gave it), charts (distinct cases) and exact total."""

    rows: int = 0
    charts: int = 0
    total: int = 0

    def __add__(self, other: QuantityTotal) -> QuantityTotal:
        return QuantityTotal(
            self.rows + other.rows, self.charts + other.charts, self.total + other.total
        )


_NO_TOTALS: Final = tuple(QuantityTotal() for _ in QUANTITIES)


@attrs.frozen
class RunCost:
    """The run-cost counts of one run or partition (value-free; mergeable).

    Attributes:
        rows: Prediction lines that carried a ``usage`` object.
        charts: Distinct charts (case ids) with such a line.
        totals: Per quantity of :data:`QUANTITIES`, in order: its rows, charts and total.
        latency_buckets: (bucket lower bound in ns, rows) for every latency given, sorted.
        header: The run header, or None when the input had none.

    Charts add across partitions because a partition holds every row of its cases (as for
    the clustered intervals); a case split over two partitions counts twice.
    """

    rows: int
    charts: int
    totals: tuple[QuantityTotal, ...] = _NO_TOTALS
    latency_buckets: tuple[tuple[int, int], ...] = ()
    header: RunHeader | None = None

    def __repr__(self) -> str:
        return f"RunCost(rows={self.rows}, charts={self.charts})"

    def total(self, quantity: str) -> QuantityTotal:
        """The totals of one of :data:`QUANTITIES`."""
        return self.totals[QUANTITIES.index(quantity)]

    def latency_percentile(self, percent: int) -> int | None:
        """The nearest-rank latency percentile in ns, truncated to three significant digits."""
        return nearest_rank(self.latency_buckets, percent)

    def merge(self, other: RunCost) -> RunCost:
        """Both runs' counts together; neither changes.

        Raises:
            ChartscoreError: ``run_headers_differ`` when both have a header and they differ,
                or only one has one.
        """
        if self.header != other.header:
            raise ChartscoreError(ErrorCode.RUN_HEADERS_DIFFER)
        return RunCost(
            self.rows + other.rows,
            self.charts + other.charts,
            tuple(mine + theirs for mine, theirs in zip(self.totals, other.totals, strict=True)),
            merge_buckets(self.latency_buckets, other.latency_buckets),
            self.header,
        )


def merge_buckets(*histograms: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The sum of latency histograms, as sorted (bound, count) pairs."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for bound, count in histogram:
            counts[bound] = counts.get(bound, 0) + count
    return tuple(sorted(counts.items()))


def merge_optional(first: RunCost | None, second: RunCost | None) -> RunCost | None:
    """Merge two runs' counts where either may have none (no line carried usage)."""
    if first is None:
        return second
    if second is None:
        return first
    return first.merge(second)


def per_chart_mean(total: QuantityTotal) -> Fraction | None:
    """A quantity's mean per chart that gave it (total / charts), exactly; None without charts."""
    return Fraction(total.total, total.charts) if total.charts else None


def histogram(latencies: Mapping[int, int]) -> tuple[tuple[int, int], ...]:
    """Sorted (bound, count) pairs from a bucket -> count mapping (zero counts dropped)."""
    return tuple(sorted((bound, count) for bound, count in latencies.items() if count))
