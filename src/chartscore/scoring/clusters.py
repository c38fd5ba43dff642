"""Per-case sums for the clustered intervals of pooled slices: row classes in, sums out.

Each gold row ends in a *row class*: its outcome bit mask
(:mod:`chartscore.scoring.agreement`), ``MISSING`` for a row with no prediction, for
a multi-select row its item counts in the bits above the mask, and for a row of a
field with declared labels its label counts above those (:func:`with_labels`). The rows of
one case add up, per pooled slice (overall, each field type) and per metric, to
the case's successes ``y_i`` and trials ``m_i``; :func:`pooled_sums` turns
every case's totals into the exact sums of :class:`~chartscore.clustered.ClusterSums`
(and :func:`paired_pooled_sums` into :class:`~chartscore.clustered.PairedClusterSums`).

How: every (field group, row class) has a packed contribution, one fixed-width
bit field per (metric, y or m), so a case's totals are one integer addition per
row. Cases with the same totals are then counted once (``Counter``) and each
distinct total is unpacked once. A slice with one field has one row per case,
so its rows are counted without a per-case table at all.

This module holds case ids (the keys of the per-case tables): private, in
memory only. What it returns holds integers only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from chartscore.clustered import ClusterSums, PairedClusterSums
from chartscore.scoring.agreement import ANSWERABLE, ANSWERED, MISSING, WRONG_TYPE, item_flags
from chartscore.scoring.outcomes import METRIC_ROWS
from chartscore.tally import CORE_METRICS, LABEL_METRICS, TYPE_METRICS

ROW_BITS: Final = (1 << 16) - 1
"""The outcome bit mask (with item flags) of a row class; item counts sit above it."""
ITEM_BITS: Final = 32
_GOLD_SHIFT: Final = 16
_ANSWERED_SHIFT: Final = _GOLD_SHIFT + ITEM_BITS
_MATCHED_SHIFT: Final = _ANSWERED_SHIFT + ITEM_BITS
_LABEL_GOLD_SHIFT: Final = _MATCHED_SHIFT + ITEM_BITS
_LABEL_ANSWERED_SHIFT: Final = _LABEL_GOLD_SHIFT + ITEM_BITS
_LABEL_MATCHED_SHIFT: Final = _LABEL_ANSWERED_SHIFT + ITEM_BITS
_LABEL_COUNT_SHIFT: Final = _LABEL_MATCHED_SHIFT + ITEM_BITS
_ITEM_MASK: Final = (1 << ITEM_BITS) - 1
PAIR_SHIFT: Final = _LABEL_COUNT_SHIFT + ITEM_BITS
"""A paired row's class is ``baseline class | candidate class << PAIR_SHIFT``."""

OVERALL: Final = "overall"
"""The key of the overall slice (type slices are keyed by their type name)."""

Group = tuple[str, tuple[str, ...]]
"""A field's (type name, the type metrics it reports)."""

FieldClasses = tuple[Group, Callable[[], Iterable[tuple[str, int]]]]
"""One field's group, and a function giving its rows as (case id, row class) (read twice)."""


def with_items(mask: int, gold: int, answered: int, matched: int) -> int:
    """A multi-select row's class: its mask with its item counts above it."""
    return mask | gold << _GOLD_SHIFT | answered << _ANSWERED_SHIFT | matched << _MATCHED_SHIFT


def with_labels(row: int, gold: int, answered: int, matched: int, labels: int) -> int:
    """A labelled field's row class: its class with its label counts above the items.

    ``gold`` is the number of declared labels gold holds (1, or a multi-select
    row's gold items), ``answered`` the declared labels a right-type answer
    names, ``matched`` those among gold's, and ``labels`` the field's number of
    declared labels. An unanswerable row adds nothing to label metrics.
    """
    return (
        row
        | gold << _LABEL_GOLD_SHIFT
        | answered << _LABEL_ANSWERED_SHIFT
        | matched << _LABEL_MATCHED_SHIFT
        | labels << _LABEL_COUNT_SHIFT
    )


def label_values(metric: str, row: int) -> tuple[int, int]:
    """``(successes, trials)`` that one row adds to a micro-averaged label metric.

    With ``L`` labels, gold's ``g``, the answer's declared ``d`` and ``t`` of them
    in common, an answerable row adds ``t`` of ``g`` to sensitivity and ``t`` of
    ``d`` to PPV; when its answer is of the right type it adds the ``L - g - d +
    t`` labels neither names to specificity (of ``L - g``) and to NPV (of ``L -
    d``). A missing, abstained or wrong-type answer is no negative: it adds
    failures to sensitivity and specificity and nothing to PPV and NPV.
    """
    labels = row >> _LABEL_COUNT_SHIFT & _ITEM_MASK
    if not labels or not row & ANSWERABLE:
        return 0, 0
    gold = row >> _LABEL_GOLD_SHIFT & _ITEM_MASK
    answered = row >> _LABEL_ANSWERED_SHIFT & _ITEM_MASK
    matched = row >> _LABEL_MATCHED_SHIFT & _ITEM_MASK
    right_type = row & (ANSWERED | WRONG_TYPE) == ANSWERED
    negatives = labels - gold - answered + matched if right_type else 0
    if metric == "sensitivity":
        return matched, gold
    if metric == "specificity":
        return negatives, labels - gold
    if metric == "ppv":
        return matched, answered
    return negatives, (labels - answered if right_type else 0)


def missing_class(gold_items: int | None) -> int:
    """The class of a row with no prediction: gold items for multi, None if unanswerable."""
    if gold_items is None:
        return MISSING
    return with_items(MISSING | ANSWERABLE | item_flags(gold_items, 0, 0), gold_items, 0, 0)


def _items(row: int) -> tuple[int, int, int]:
    return (
        row >> _GOLD_SHIFT & _ITEM_MASK,
        row >> _ANSWERED_SHIFT & _ITEM_MASK,
        row >> _MATCHED_SHIFT & _ITEM_MASK,
    )


def metric_values(metric: str, row: int) -> tuple[int, int]:
    """``(successes, trials)`` that one row of class ``row`` adds to ``metric``.

    ``majority_baseline``'s successes depend on the whole gold set, not the
    row: it gives its trials (answerable rows) with 0 successes, and its sums
    are marked unknown.
    """
    if metric == "item_precision":
        _, answered, matched = _items(row)
        return matched, answered
    if metric == "item_recall":
        gold, _, matched = _items(row)
        return matched, gold
    if metric == "majority_baseline":
        return 0, int(bool(row & ANSWERABLE))
    if metric in LABEL_METRICS:
        return label_values(metric, row)
    in_trials, succeeds = METRIC_ROWS[metric]
    mask = row & ROW_BITS
    if not in_trials(mask):
        return 0, 0
    return int(succeeds(mask)), 1


def slice_metrics(groups: Iterable[Group], *, overall: bool) -> tuple[str, ...]:
    """The metrics of a pooled slice of fields in these groups, in report order."""
    reported = {name for _, extra in groups for name in extra}
    labels = tuple(name for name in LABEL_METRICS if name in reported)
    if overall:
        return CORE_METRICS + labels
    return CORE_METRICS + tuple(name for name in TYPE_METRICS if name in reported) + labels


class _Packing:
    """Fixed-width bit fields, one per column, and each (group, class)'s packed value."""

    def __init__(
        self,
        columns: int,
        widths: Sequence[int],
        values: Callable[[Group, int], Sequence[int]],
    ) -> None:
        self.offsets: list[int] = []
        offset = 0
        for width in widths:
            self.offsets.append(offset)
            offset += width
        self.masks = [(1 << width) - 1 for width in widths]
        self._values = values
        self._cache: dict[tuple[Group, int], int] = {}
        assert len(widths) == columns

    def packed(self, group: Group, row: int) -> int:
        key = (group, row)
        found = self._cache.get(key)
        if found is None:
            found = 0
            for offset, value in zip(self.offsets, self._values(group, row), strict=True):
                found |= value << offset
            self._cache[key] = found
        return found

    def unpack(self, vector: int) -> list[int]:
        return [
            vector >> offset & mask for offset, mask in zip(self.offsets, self.masks, strict=True)
        ]


def _case_totals(fields: Sequence[FieldClasses], packing: _Packing) -> Counter[int]:
    """Each case's packed totals over its rows, counted by distinct total."""
    if len(fields) == 1:  # one row per case: no per-case table
        group, rows = fields[0]
        classes = Counter(row for _, row in rows())
        totals: Counter[int] = Counter()
        for row, count in classes.items():
            totals[packing.packed(group, row)] += count
        return totals
    by_case: dict[str, int] = {}
    get = by_case.get
    for group, rows in fields:
        packed = packing.packed
        for case_id, row in rows():
            by_case[case_id] = get(case_id, 0) + packed(group, row)
    return Counter(by_case.values())


def _row_width(fields: Sequence[FieldClasses]) -> int:
    # A case has at most one row per field: a column of row counts stays below 2**width.
    return len(fields).bit_length()


def _item_width(fields: Sequence[FieldClasses]) -> int:
    return ITEM_BITS + len(fields).bit_length()


def _width(metric: str, fields: Sequence[FieldClasses]) -> int:
    if metric.startswith("item_") or metric in LABEL_METRICS:
        return _item_width(fields)
    return _row_width(fields)


def _grouped(fields: Iterable[FieldClasses]) -> dict[str, list[FieldClasses]]:
    slices: dict[str, list[FieldClasses]] = {OVERALL: []}
    for field in fields:
        slices[OVERALL].append(field)
        slices.setdefault(field[0][0], []).append(field)
    if not slices[OVERALL]:
        del slices[OVERALL]
    return slices


def pooled_sums(fields: Iterable[FieldClasses]) -> dict[str, dict[str, ClusterSums]]:
    """Per pooled slice and metric, the exact per-case sums (docs/metrics.md).

    Args:
        fields: Each field's group and a function giving its rows (case id,
            row class); every gold row of the field appears once.

    Returns:
        ``{slice: {metric: ClusterSums}}`` for ``"overall"`` and each type.
    """
    result: dict[str, dict[str, ClusterSums]] = {}
    for name, members in _grouped(fields).items():
        metrics = slice_metrics((group for group, _ in members), overall=name == OVERALL)
        widths = [w for metric in metrics for w in (_width(metric, members),) * 2]

        def values(group: Group, row: int, metrics: tuple[str, ...] = metrics) -> list[int]:
            out: list[int] = []
            for metric in metrics:
                reported = metric in CORE_METRICS or metric in group[1]
                out.extend(metric_values(metric, row) if reported else (0, 0))
            return out

        packing = _Packing(2 * len(metrics), widths, values)
        totals = _case_totals(members, packing)
        sums = {metric: [0, 0, 0, 0] for metric in metrics}  # cases, yy, ym, mm
        for vector, cases in totals.items():
            columns = packing.unpack(vector)
            for index, metric in enumerate(metrics):
                y, m = columns[2 * index], columns[2 * index + 1]
                if m:
                    entry = sums[metric]
                    entry[0] += cases
                    entry[1] += cases * y * y
                    entry[2] += cases * y * m
                    entry[3] += cases * m * m
        result[name] = {
            metric: ClusterSums(
                cases,
                None if metric == "majority_baseline" else yy,
                None if metric == "majority_baseline" else ym,
                mm,
            )
            for metric, (cases, yy, ym, mm) in sums.items()
        }
    return result


def paired_pooled_sums(
    fields: Iterable[FieldClasses], paired_metrics: Sequence[str]
) -> dict[str, dict[str, PairedClusterSums]]:
    """Per pooled slice and paired metric, the per-case sums of the paired difference.

    Each row's class is ``baseline class | candidate class << PAIR_SHIFT``; a
    row is in a metric's trials by the baseline's class (trials are gold rows,
    the same for both), and adds 1 to ``c_i`` when only the candidate
    succeeds, to ``b_i`` when only the baseline does.
    """
    result: dict[str, dict[str, PairedClusterSums]] = {}
    for name, members in _grouped(fields).items():
        present = slice_metrics((group for group, _ in members), overall=name == OVERALL)
        metrics = tuple(metric for metric in present if metric in paired_metrics)
        width = _row_width(members)

        def values(group: Group, row: int, metrics: tuple[str, ...] = metrics) -> list[int]:
            baseline, candidate = row & ((1 << PAIR_SHIFT) - 1), row >> PAIR_SHIFT
            out: list[int] = []
            for metric in metrics:
                if not (metric in CORE_METRICS or metric in group[1]):
                    out.extend((0, 0, 0))
                    continue
                first, trials = metric_values(metric, baseline)
                second, _ = metric_values(metric, candidate)
                out.extend((trials, first & (1 - second), second & (1 - first)))
            return out

        packing = _Packing(3 * len(metrics), [width] * (3 * len(metrics)), values)
        totals = _case_totals(members, packing)
        entries: dict[str, list[tuple[int, int, int, int]]] = {metric: [] for metric in metrics}
        for vector, cases in totals.items():
            columns = packing.unpack(vector)
            for index, metric in enumerate(metrics):
                m, b, c = columns[3 * index : 3 * index + 3]
                if m:
                    d = c - b
                    entries[metric].append((m, cases, cases * d, cases * d * d))
        result[name] = {metric: PairedClusterSums.of(found) for metric, found in entries.items()}
    return result


def merge_sums(
    first: Mapping[str, Mapping[str, ClusterSums]], second: Mapping[str, Mapping[str, ClusterSums]]
) -> dict[str, dict[str, ClusterSums]]:
    """The sums of two partitions with disjoint cases, slice by slice and metric by metric."""
    merged = {name: dict(metrics) for name, metrics in first.items()}
    for name, metrics in second.items():
        mine = merged.setdefault(name, {})
        for metric, sums in metrics.items():
            before = mine.get(metric)
            mine[metric] = sums if before is None else before + sums
    return merged
