"""Per-case sums for the clustered intervals of pooled slices: row classes in, sums out.

Each gold row ends in a *row class* (:class:`RowCoding`): its outcome bit mask
(:mod:`chartscore.scoring.agreement`, with the run's plugin labels), ``MISSING``
for a row with no prediction, and for a multi-select row its item counts in the
bits above the mask. The rows of
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
from chartscore.plugin_layout import FIRST_BIT, PluginLayout, is_plugin_metric
from chartscore.scoring.agreement import ANSWERABLE, MISSING, item_flags
from chartscore.scoring.outcomes import METRIC_ROWS
from chartscore.tally import CORE_METRICS, TYPE_METRICS

ITEM_BITS: Final = 32
"""Bits for each of a multi-select row's three item counts in its class."""

OVERALL: Final = "overall"
"""The key of the overall slice (type slices are keyed by their type name)."""

Group = tuple[str, tuple[str, ...]]
"""A field's (type name, the type and plugin metrics it reports)."""

FieldClasses = tuple[Group, Callable[[], Iterable[tuple[str, int]]]]
"""One field's group, and a function giving its rows as (case id, row class) (read twice)."""


class RowCoding:
    """How one run packs a row class into an int: the outcome mask, then item counts.

    The mask holds chartscore's outcome bits and, from
    :data:`~chartscore.plugin_layout.FIRST_BIT` up, the run's plugin labels;
    a multi-select row's gold, answered and matched item counts sit above
    the highest of them (``item_shift``). A paired row is ``baseline |
    candidate << pair_shift``. Every partition of a run builds the same
    coding from the same schema.
    """

    __slots__ = ("item_shift", "pair_shift", "plugins", "row_bits")

    def __init__(self, plugins: PluginLayout | None = None) -> None:
        self.plugins = plugins
        self.item_shift = max(FIRST_BIT, 16 if plugins is None else plugins.end_bit)
        self.row_bits = (1 << self.item_shift) - 1
        self.pair_shift = self.item_shift + 3 * ITEM_BITS

    def with_items(self, mask: int, gold: int, answered: int, matched: int) -> int:
        """A multi-select row's class: its mask with its item counts above it."""
        shift = self.item_shift
        return mask | (gold | answered << ITEM_BITS | matched << 2 * ITEM_BITS) << shift

    def items(self, row: int) -> tuple[int, int, int]:
        """(gold, answered, matched) items of a row class."""
        counts = row >> self.item_shift
        low = (1 << ITEM_BITS) - 1
        return counts & low, counts >> ITEM_BITS & low, counts >> 2 * ITEM_BITS & low

    def missing_class(self, gold_items: int | None) -> int:
        """The class of a row with no prediction: its gold items (multi), None if unanswerable."""
        if gold_items is None:
            return MISSING
        flags = MISSING | ANSWERABLE | item_flags(gold_items, 0, 0)
        return self.with_items(flags, gold_items, 0, 0)

    def metric_values(self, metric: str, row: int) -> tuple[int, int]:
        """``(successes, trials)`` that one row of class ``row`` adds to ``metric``.

        ``majority_baseline``'s successes depend on the whole gold set, not the
        row: it gives its trials (answerable rows) with 0 successes, and its sums
        are marked unknown. A plugin label's trials are the answerable rows.
        """
        if metric == "item_precision":
            _, answered, matched = self.items(row)
            return matched, answered
        if metric == "item_recall":
            gold, _, matched = self.items(row)
            return matched, gold
        mask = row & self.row_bits
        if metric == "majority_baseline":
            return 0, int(bool(mask & ANSWERABLE))
        if is_plugin_metric(metric):
            assert self.plugins is not None
            shift, width, value = self.plugins.label_test(metric)
            answerable = bool(mask & ANSWERABLE)
            return int(answerable and (mask >> shift) & width == value), int(answerable)
        in_trials, succeeds = METRIC_ROWS[metric]
        if not in_trials(mask):
            return 0, 0
        return int(succeeds(mask)), 1


def slice_metrics(groups: Iterable[Group], *, overall: bool) -> tuple[str, ...]:
    """The metrics of a pooled slice of fields in these groups (type metrics, then plugins')."""
    if overall:
        return CORE_METRICS
    reported = {name for _, extra in groups for name in extra}
    plugins = sorted(name for name in reported if name not in TYPE_METRICS)
    return CORE_METRICS + tuple(name for name in TYPE_METRICS if name in reported) + tuple(plugins)


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
    return _item_width(fields) if metric.startswith("item_") else _row_width(fields)


def _grouped(fields: Iterable[FieldClasses]) -> dict[str, list[FieldClasses]]:
    slices: dict[str, list[FieldClasses]] = {OVERALL: []}
    for field in fields:
        slices[OVERALL].append(field)
        slices.setdefault(field[0][0], []).append(field)
    if not slices[OVERALL]:
        del slices[OVERALL]
    return slices


def pooled_sums(
    fields: Iterable[FieldClasses], coding: RowCoding
) -> dict[str, dict[str, ClusterSums]]:
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
                out.extend(coding.metric_values(metric, row) if reported else (0, 0))
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
    fields: Iterable[FieldClasses], coding: RowCoding, paired_metrics: Sequence[str]
) -> dict[str, dict[str, PairedClusterSums]]:
    """Per pooled slice and paired metric, the per-case sums of the paired difference.

    Each row's class is ``baseline class | candidate class << coding.pair_shift``
    (plugin metrics are paired too); a row is in a metric's trials by the
    baseline's class (trials are gold rows, the same for both), and adds 1 to
    ``c_i`` when only the candidate succeeds, to ``b_i`` when only the
    baseline does.
    """
    result: dict[str, dict[str, PairedClusterSums]] = {}
    for name, members in _grouped(fields).items():
        present = slice_metrics((group for group, _ in members), overall=name == OVERALL)
        metrics = tuple(
            metric for metric in present if metric in paired_metrics or is_plugin_metric(metric)
        )
        width = _row_width(members)

        def values(group: Group, row: int, metrics: tuple[str, ...] = metrics) -> list[int]:
            low = (1 << coding.pair_shift) - 1
            baseline, candidate = row & low, row >> coding.pair_shift
            out: list[int] = []
            for metric in metrics:
                if not (metric in CORE_METRICS or metric in group[1]):
                    out.extend((0, 0, 0))
                    continue
                first, trials = coding.metric_values(metric, baseline)
                second, _ = coding.metric_values(metric, candidate)
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
