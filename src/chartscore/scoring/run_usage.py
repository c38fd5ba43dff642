"""Counting a run's usage as its rows arrive: the private side of run cost.

Each prediction line that carries ``usage`` counts once, for that line: its tokens,
latency and cost are added to the run's totals, whatever field the line answers, so a
chart's usage is the sum over its lines and nothing is counted twice. Charts are the
distinct case ids of those lines, per quantity; the case ids stay here and only their
number crosses into :class:`~chartscore.stats.run_cost.RunCost`.
"""

from __future__ import annotations

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.stats.run_cost import (
    QUANTITIES,
    QuantityTotal,
    RunCost,
    RunHeader,
    histogram,
    latency_bucket,
)


class UsageCounter:
    """The usage of one run's prediction lines, and its run header (private: case ids)."""

    __slots__ = ("_cases", "_charts", "_header", "_latencies", "_row_counts", "_rows", "_totals")

    def __init__(self) -> None:
        self._rows = 0
        self._cases: set[str] = set()
        self._charts: list[set[str]] = [set() for _ in QUANTITIES]
        self._totals = [0] * len(QUANTITIES)
        self._row_counts = [0] * len(QUANTITIES)
        self._latencies: dict[int, int] = {}
        self._header: RunHeader | None = None

    def __repr__(self) -> str:
        return f"UsageCounter(<{self._rows} rows; case ids hidden>)"

    def add(self, case_id: str, usage: object, source: InputKind) -> bool:
        """Count one row's usage; True when the row is a run header (no prediction).

        Raises:
            ChartscoreError: ``run_headers_differ`` for a second, different header (the
                first line of two part files of one input).
        """
        if type(usage) is RunHeader:
            if self._header is not None and self._header != usage:
                raise ChartscoreError(ErrorCode.RUN_HEADERS_DIFFER, input=source)
            self._header = usage
            return True
        self._rows += 1
        self._cases.add(case_id)
        amounts: tuple[int | None, ...] = usage  # type: ignore[assignment]
        for index, amount in enumerate(amounts):
            if amount is not None:
                self._totals[index] += amount
                self._row_counts[index] += 1
                self._charts[index].add(case_id)
        latency = amounts[2]
        if latency is not None:
            bucket = latency_bucket(latency)
            self._latencies[bucket] = self._latencies.get(bucket, 0) + 1
        return False

    def run_cost(self) -> RunCost | None:
        """The value-free counts, or None when no line carried usage (a header alone adds none)."""
        if not self._rows:
            return None
        totals = tuple(
            QuantityTotal(self._row_counts[index], len(self._charts[index]), self._totals[index])
            for index in range(len(QUANTITIES))
        )
        return RunCost(
            self._rows, len(self._cases), totals, histogram(self._latencies), self._header
        )
