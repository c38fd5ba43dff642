"""Which gold rows each number of a report counts, as tests on a row's outcome class.

A gold row's *class* is the outcome bit mask of its prediction (see
:mod:`chartscore.scoring.agreement`), or ``MISSING`` (plus ``ANSWERABLE`` and item
flags) for a row with no prediction. Every count and metric of a slice counts
the rows whose class passes its test in the catalog (:mod:`chartscore.metrics`), made
functions here; docs/metrics.md defines the same numbers in words. Disclosure control
uses the tests to count distinct cases, and the paired comparison to split each
metric's trials between two systems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from chartscore.documents.plugin_layout import PluginLayout
from chartscore.metrics import (
    ANSWERABLE,
    CATALOG,
    COUNT_TESTS,
    ITEMS,
    ROWS,
    Test,
    passes,
    trial_rows,
)

RowTest = Callable[[int], bool]


def _row_test(test: Test) -> RowTest:
    # The catalog's test as a function of a row's mask; one (required, 0) pair, the usual
    # case, is a single mask comparison.
    if len(test) == 1 and test[0][1] == 0:
        bits = test[0][0]
        return lambda row: row & bits == bits
    return lambda row: passes(test, row)


def _answerable(row: int) -> bool:
    return bool(row & ANSWERABLE)


COUNT_ROWS: Final[Mapping[str, RowTest]] = {
    name: _row_test(test) for name, test in COUNT_TESTS.items()
}
"""Which rows each count counts."""

METRIC_ROWS: Final[Mapping[str, tuple[RowTest, RowTest]]] = {
    # metric: (rows in its trials, rows among them that succeed)
    metric.name: (_row_test(trial_rows(metric)), _row_test(metric.successes))
    for metric in CATALOG
    if metric.counts in (ROWS, ITEMS)
}
"""Which rows each metric's trials and successes come from (majority_baseline aside)."""

ITEM_FAILURES: Final[Mapping[str, RowTest]] = {
    # Item metrics count items: a row is behind the failures if it has an unmatched item.
    metric.name: _row_test(metric.failures)
    for metric in CATALOG
    if metric.failures
}


def row_tests(metric: str, plugins: PluginLayout | None = None) -> tuple[RowTest, RowTest]:
    """(rows in the trials, rows among them that succeed) of any row metric.

    A plugin metric ``<plugin>:<label>`` (docs/plugins.md) has the answerable
    rows as trials and succeeds on the rows the plugin gave that label: its
    bits in the mask, laid out by ``plugins``.

    Raises:
        KeyError: ``metric`` is neither a row metric nor a plugin metric of ``plugins``.
    """
    found = METRIC_ROWS.get(metric)
    if found is not None:
        return found
    if plugins is None:
        raise KeyError(metric)
    shift, width, value = plugins.label_test(metric)

    def labelled(row: int) -> bool:
        return bool(row & ANSWERABLE) and (row >> shift) & width == value

    return _answerable, labelled
