"""What a shared report's audit checks: every protected quantity, shown or hidden.

The audit attacks more than the JSON's numbers: a metric's failures (``total - successes``)
and a field's disagreed rows (``rows - agreed``) are quantities too, and they are hidden
whenever one of their parts is. So a shared report hides its suppressed numbers and the
quantities derived from them; :func:`hidden_counts` gives both, which is how a rendering and
``audit`` say how "N numbers suppressed" and "M hidden numbers checked" relate (M = N + D).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from chartscore.documents.shared_figures import AGREED_Q, DISAGREED_Q, ROWS_Q
from chartscore.documents.shared_labels import label_metric
from chartscore.documents.shared_metric import SharedMetric
from chartscore.documents.shared_report import Key, SharedReport, SharedSlice
from chartscore.documents.shared_rule import metric_quantity

__all__ = ["DERIVED_PARTS", "FAILURES", "hidden_counts", "published_values"]

FAILURES: Final = "failures"
"""A metric's derived part: ``total_count - success_count``."""

DERIVED_PARTS: Final = (FAILURES, DISAGREED_Q.rpartition(".")[2])
"""The last part of a derived quantity's name: ``failures`` and ``disagreed``."""


def binomials(part: SharedSlice) -> Iterator[tuple[str, SharedMetric]]:
    """A slice's binomial metrics by quantity name: its own, then each label's."""
    yield from part.metrics.items()
    for label, result in (part.labels or {}).items():
        for metric, shown in result.metrics.items():
            yield label_metric(label, metric), shown


def published_values(report: SharedReport) -> dict[Key, int | None]:
    """Every protected quantity's published value (None: hidden).

    The JSON numbers, and failures when both parts of their metric are published.
    """
    values: dict[Key, int | None] = dict(report.numbers())
    for kind, name, part in report.slices():
        for metric, result in binomials(part):
            success, total = result.success_count, result.total_count
            failures = None if success is None or total is None else total - success
            values[kind, name, metric_quantity(metric, FAILURES)] = failures
        if part.uncertainty is not None:
            agreed, rows = values[kind, name, AGREED_Q], values[kind, name, ROWS_Q]
            disagreed = None if agreed is None or rows is None else rows - agreed
            values[kind, name, DISAGREED_Q] = disagreed
    return values


def hidden_counts(report: SharedReport) -> tuple[int, int]:
    """``(suppressed, derived)``: the JSON numbers suppressed, and the derived quantities hidden.

    Their sum is what the audit checks.
    """
    numbers = dict(report.numbers())
    suppressed = sum(1 for value in numbers.values() if value is None)
    derived = sum(
        1 for key, value in published_values(report).items() if value is None and key not in numbers
    )
    return suppressed, derived
