"""Which gold rows each number of a report counts, as tests on a row's outcome class.

A gold row's *class* is the outcome bit mask of its prediction (see
:mod:`chartscore.scoring.agreement`), or ``MISSING`` (plus ``ANSWERABLE`` and item
flags) for a row with no prediction. Every count and metric of a slice counts
the rows whose class passes a test below; docs/metrics.md defines the same
numbers in words. Disclosure control uses the tests to count distinct cases,
and the paired comparison to split each metric's trials between two systems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from chartscore.documents.plugin_layout import PluginLayout
from chartscore.scoring.agreement import (
    ANSWERABLE,
    ANSWERED,
    ANSWERED_ITEMS,
    EARLIER,
    EXACT,
    FUZZY,
    GOLD_ITEMS,
    LATER,
    MATCHED_ITEMS,
    MISSING,
    NORMALIZED,
    PATTERN,
    SUPPORTED,
    TOLERANCE,
    UNMATCHED_ANSWERED,
    UNMATCHED_GOLD,
    WITHIN_ONE,
    WRONG_TYPE,
)

RowTest = Callable[[int], bool]


def _has(bits: int) -> RowTest:
    return lambda row: row & bits == bits


def _answerable(row: int) -> bool:
    return bool(row & ANSWERABLE)


def _abstained(row: int) -> bool:
    return not row & (ANSWERED | MISSING)


COUNT_ROWS: Final[Mapping[str, RowTest]] = {
    "field_count": lambda row: True,
    "answerable_count": _answerable,
    "unanswerable_count": lambda row: not row & ANSWERABLE,
    "missing_count": _has(MISSING),
    "answered_count": _has(ANSWERED),
    "abstained_count": _abstained,
}
"""Which rows each count counts."""

METRIC_ROWS: Final[Mapping[str, tuple[RowTest, RowTest]]] = {
    # metric: (rows in its trials, rows among them that succeed)
    "exact_agreement": (_answerable, _has(ANSWERABLE | EXACT)),
    "normalized_agreement": (_answerable, _has(ANSWERABLE | NORMALIZED)),
    "abstention_correctness": (
        lambda row: True,
        lambda row: (
            row & (ANSWERED | ANSWERABLE) == ANSWERED | ANSWERABLE
            or not row & (ANSWERABLE | ANSWERED | MISSING)
        ),
    ),
    "answerable_abstention": (_answerable, lambda row: _answerable(row) and _abstained(row)),
    "unanswerable_answer": (
        lambda row: not row & ANSWERABLE,
        lambda row: row & (ANSWERED | ANSWERABLE) == ANSWERED,
    ),
    "wrong_type_answer": (_has(ANSWERED), _has(ANSWERED | WRONG_TYPE)),
    "evidence_support": (_has(ANSWERED), _has(ANSWERED | SUPPORTED)),
    "tolerance_agreement": (_answerable, _has(ANSWERABLE | TOLERANCE)),
    "fuzzy_agreement": (_answerable, _has(ANSWERABLE | FUZZY)),
    "pattern_agreement": (_answerable, _has(ANSWERABLE | PATTERN)),
    "ordinal_later": (_answerable, _has(ANSWERABLE | LATER)),
    "ordinal_earlier": (_answerable, _has(ANSWERABLE | EARLIER)),
    "ordinal_within_one": (_answerable, _has(ANSWERABLE | WITHIN_ONE)),
    "item_precision": (_has(ANSWERED_ITEMS), _has(MATCHED_ITEMS)),
    "item_recall": (_has(GOLD_ITEMS), _has(MATCHED_ITEMS)),
}
"""Which rows each metric's trials and successes come from (majority_baseline aside)."""

ITEM_FAILURES: Final[Mapping[str, RowTest]] = {
    # Item metrics count items: a row is behind the failures if it has an unmatched item.
    "item_precision": _has(UNMATCHED_ANSWERED),
    "item_recall": _has(UNMATCHED_GOLD),
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
