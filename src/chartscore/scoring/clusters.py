"""Per-case sums for the clustered intervals of pooled slices: row classes in, sums out.

Each gold row ends in a *row class* (:class:`RowCoding`): its outcome bit mask
(:mod:`chartscore.scoring.agreement`, with the run's plugin labels), ``MISSING``
for a row with no prediction, for a multi-select row its item counts in the bits
above the mask, and for a row of a field with declared labels its label counts
above those (:meth:`RowCoding.with_labels`). The rows of
one case add up, per pooled slice (overall, each field type) and per metric, to
the case's successes ``y_i`` and trials ``m_i``; :func:`pooled_sums` turns
every case's totals into the exact sums of :class:`~chartscore.stats.clustered.ClusterSums`
(and :func:`paired_pooled_sums` into :class:`~chartscore.stats.clustered.PairedClusterSums`).

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
from itertools import compress, repeat
from operator import add, and_, mul, rshift, sub
from typing import Final

from chartscore.documents.plugin_layout import FIRST_BIT, PluginLayout, is_plugin_metric
from chartscore.documents.tally import (
    CORE_METRICS,
    LABEL_METRICS,
    OPTIONAL_CORE_METRICS,
    TYPE_METRICS,
)
from chartscore.metrics import ANSWERABLE, ANSWERED, MISSING, WRONG_TYPE
from chartscore.scoring.agreement import item_flags
from chartscore.scoring.outcomes import METRIC_ROWS
from chartscore.stats.clustered import ClusterSums, PairedClusterSums

ITEM_BITS: Final = 32
"""Bits for each of a row's item and label counts in its class."""
_COUNT_MASK: Final = (1 << ITEM_BITS) - 1

OVERALL: Final = "overall"
"""The key of the overall slice (type slices are keyed by their type name)."""

Group = tuple[str, tuple[str, ...]]
"""A field's (type name, the type and plugin metrics it reports)."""

FieldClasses = tuple[Group, Mapping[str, object], Callable[[object], int]]
"""One field's group, its rows as case id -> entry, and the class of an entry that is not
an int (a gold row with no prediction); an int entry is its row's class."""


class RowCoding:
    """How one run packs a row class into an int: the outcome mask, then item counts.

    The mask holds chartscore's outcome bits and, from
    :data:`~chartscore.documents.plugin_layout.FIRST_BIT` up, the run's plugin labels;
    a multi-select row's gold, answered and matched item counts sit above
    the highest of them (``item_shift``), and a labelled field's four label
    counts above those (``label_shift``). A paired row is ``baseline |
    candidate << pair_shift``. Every partition of a run builds the same
    coding from the same schema.
    """

    __slots__ = ("item_shift", "label_shift", "pair_shift", "plugins", "row_bits")

    def __init__(self, plugins: PluginLayout | None = None) -> None:
        self.plugins = plugins
        self.item_shift = max(FIRST_BIT, 16 if plugins is None else plugins.end_bit)
        self.row_bits = (1 << self.item_shift) - 1
        self.label_shift = self.item_shift + 3 * ITEM_BITS
        self.pair_shift = self.label_shift + 4 * ITEM_BITS

    def with_items(self, mask: int, gold: int, answered: int, matched: int) -> int:
        """A multi-select row's class: its mask with its item counts above it."""
        shift = self.item_shift
        return mask | (gold | answered << ITEM_BITS | matched << 2 * ITEM_BITS) << shift

    def with_labels(self, row: int, gold: int, answered: int, matched: int, labels: int) -> int:
        """A labelled field's row class: its class with its label counts above the items.

        ``gold`` is the number of declared labels gold holds (1, or a multi-select
        row's gold items), ``answered`` the declared labels a right-type answer
        names, ``matched`` those among gold's, and ``labels`` the field's number of
        declared labels. An unanswerable row adds nothing to label metrics.
        """
        counts = gold | answered << ITEM_BITS | matched << 2 * ITEM_BITS | labels << 3 * ITEM_BITS
        return row | counts << self.label_shift

    def items(self, row: int) -> tuple[int, int, int]:
        """(gold, answered, matched) items of a row class."""
        counts = row >> self.item_shift
        low = _COUNT_MASK
        return counts & low, counts >> ITEM_BITS & low, counts >> 2 * ITEM_BITS & low

    def missing_class(self, gold_items: int | None) -> int:
        """The class of a row with no prediction: its gold items (multi), None if unanswerable."""
        if gold_items is None:
            return MISSING
        flags = MISSING | ANSWERABLE | item_flags(gold_items, 0, 0)
        return self.with_items(flags, gold_items, 0, 0)

    def label_values(self, metric: str, row: int) -> tuple[int, int]:
        """``(successes, trials)`` that one row adds to a micro-averaged label metric.

        With ``L`` labels, gold's ``g``, the answer's declared ``d`` and ``t`` of them
        in common, an answerable row adds ``t`` of ``g`` to sensitivity and ``t`` of
        ``d`` to PPV; when its answer is of the right type it adds the ``L - g - d +
        t`` labels neither names to specificity (of ``L - g``) and to NPV (of ``L -
        d``). A missing, abstained or wrong-type answer is no negative: it adds
        failures to sensitivity and specificity and nothing to PPV and NPV.
        """
        counts = row >> self.label_shift
        labels = counts >> 3 * ITEM_BITS & _COUNT_MASK
        if not labels or not row & ANSWERABLE:
            return 0, 0
        gold = counts & _COUNT_MASK
        answered = counts >> ITEM_BITS & _COUNT_MASK
        matched = counts >> 2 * ITEM_BITS & _COUNT_MASK
        right_type = row & (ANSWERED | WRONG_TYPE) == ANSWERED
        negatives = labels - gold - answered + matched if right_type else 0
        if metric == "sensitivity":
            return matched, gold
        if metric == "specificity":
            return negatives, labels - gold
        if metric == "ppv":
            return matched, answered
        return negatives, (labels - answered if right_type else 0)

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
        if metric in LABEL_METRICS:
            return self.label_values(metric, row)
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
    """The metrics of a pooled slice of fields in these groups, in report order.

    Core metrics, then (type slices) the type metrics, then the label metrics
    any field reports, then (type slices) plugin metrics by name.
    """
    reported = {name for _, extra in groups for name in extra}
    labels = tuple(name for name in LABEL_METRICS if name in reported)
    if overall:
        return CORE_METRICS + labels
    types = tuple(name for name in TYPE_METRICS if name in reported)
    plugins = sorted(name for name in reported if is_plugin_metric(name))
    return CORE_METRICS + types + labels + tuple(plugins)


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
        self.width = offset
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

    def column(self, vectors: Sequence[int], index: int) -> list[int]:
        """Column ``index`` of every packed vector."""
        shift, mask = self.offsets[index], self.masks[index]
        return list(map(and_, map(rshift, vectors, repeat(shift)), repeat(mask)))

    def unpack(self, vector: int) -> list[int]:
        return [
            vector >> offset & mask for offset, mask in zip(self.offsets, self.masks, strict=True)
        ]


class _Classes(dict[object, int]):
    """A field's row entry -> its row class: an int is one; a gold entry is ``to_class``'s."""

    __slots__ = ("_to_class",)

    def __init__(self, to_class: Callable[[object], int]) -> None:
        super().__init__()
        self._to_class = to_class

    def __missing__(self, entry: object) -> int:
        row = entry if type(entry) is int else self._to_class(entry)
        self[entry] = row
        return row


def _row_classes(entries: Mapping[str, object], to_class: Callable[[object], int]) -> list[int]:
    """Every row's class, in the field's order (a C-level map where the entries allow)."""
    classes = _Classes(to_class)
    try:
        return list(map(classes.__getitem__, entries.values()))
    except TypeError:  # an unhashable gold entry (a multi-select list): one by one
        return [e if type(e) is int else to_class(e) for e in entries.values()]


def _case_totals(
    slices: Mapping[str, Sequence[FieldClasses]], packings: Mapping[str, _Packing]
) -> dict[str, Counter[int]]:
    """Each slice's per-case packed totals, counted by distinct total.

    A slice with one field has one row per case: its rows are counted by class.
    For the slices with several fields (overall, and a type of several fields),
    one integer per case holds their columns side by side; a row adds to the
    overall columns and its type's. Each case's integer is then cut into its
    slices' totals. The per-row work (once per gold row) runs in the
    interpreter's own loops (``map``, ``zip``, ``Counter``), field by field.
    """
    joint = [name for name, members in slices.items() if len(members) > 1]
    placed: dict[str, int] = {}
    offset = 0
    for name in joint:
        placed[name] = offset
        offset += packings[name].width
    totals: dict[str, Counter[int]] = {name: Counter() for name in slices}
    # Fields whose rows list the same cases in the same order (a gold file in case
    # order, every case with every field) add up position by position; any other
    # field adds up through a table by case id.
    order: list[str] | None = None
    sums: list[int] = []
    by_case: dict[str, int] | None = None
    for group, entries, to_class in slices.get(OVERALL, ()):
        classes = _row_classes(entries, to_class)
        counted = Counter(classes)
        for name in (OVERALL, group[0]):
            if name in placed:
                continue
            packing = packings[name]
            for row, count in counted.items():  # one row per case: rows are cases
                totals[name][packing.packed(group, row)] += count
        joined = {
            row: sum(
                packings[name].packed(group, row) << placed[name]
                for name in (OVERALL, group[0])
                if name in placed
            )
            for row in counted
        }
        if not joined or not any(joined.values()):
            continue
        values = list(map(joined.__getitem__, classes))
        keys = list(entries)
        if by_case is None and order is None:
            order, sums = keys, values
        elif by_case is None and keys == order:
            sums = list(map(add, sums, values))
        else:
            if by_case is None:
                by_case = dict(zip(order or (), sums, strict=True))
            get = by_case.get
            by_case.update(zip(keys, map(add, map(get, keys, repeat(0)), values), strict=True))
    per_case = sums if by_case is None else list(by_case.values())
    for name, start in placed.items():  # each joint slice's part of every case, counted in C
        mask = (1 << packings[name].width) - 1
        found = Counter(map(and_, map(rshift, per_case, repeat(start)), repeat(mask)))
        found.pop(0, None)  # cases with no row in the slice
        totals[name] = found
    return totals


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


def pooled_sums(
    fields: Iterable[FieldClasses],
    coding: RowCoding,
    packings: dict[tuple[object, ...], object] | None = None,
) -> dict[str, dict[str, ClusterSums]]:
    """Per pooled slice and metric, the exact per-case sums (docs/metrics.md).

    Args:
        fields: Each field's group, rows and the class of a row with no
            prediction (:data:`FieldClasses`); every gold row appears once.
        packings: Packings kept between calls on the same coding (stratum
            slices: one call per stratum, the same row classes in each).

    Returns:
        ``{slice: {metric: ClusterSums}}`` for ``"overall"`` and each type.
    """
    slices = _grouped(fields)
    layouts: dict[str, tuple[tuple[str, ...], _Packing]] = {}
    for name, members in slices.items():
        metrics = slice_metrics((field[0] for field in members), overall=name == OVERALL)
        widths = [w for metric in metrics for w in (_width(metric, members),) * 2]
        kept = None if packings is None else packings.get((name, metrics, *widths))
        if type(kept) is _Packing:
            layouts[name] = (metrics, kept)
            continue

        def values(group: Group, row: int, metrics: tuple[str, ...] = metrics) -> list[int]:
            out: list[int] = []
            for metric in metrics:
                reported = metric in CORE_METRICS or metric in group[1]
                out.extend(coding.metric_values(metric, row) if reported else (0, 0))
            return out

        layouts[name] = (metrics, _Packing(2 * len(metrics), widths, values))
        if packings is not None:
            packings[name, metrics, *widths] = layouts[name][1]
    totals = _case_totals(slices, {name: layout[1] for name, layout in layouts.items()})
    result: dict[str, dict[str, ClusterSums]] = {}
    for name, (metrics, packing) in layouts.items():
        vectors, counts = list(totals[name]), list(totals[name].values())
        result[name] = {}
        for index, metric in enumerate(metrics):  # column by column, in C-level maps
            y, m = packing.column(vectors, 2 * index), packing.column(vectors, 2 * index + 1)
            # A case with no trials has y = m = 0 and adds 0 to every product.
            yy = sum(map(mul, counts, map(mul, y, y)))
            ym = sum(map(mul, counts, map(mul, y, m)))
            mm = sum(map(mul, counts, map(mul, m, m)))
            cases = sum(compress(counts, m))
            if metric == "majority_baseline":  # per-case successes unknown
                result[name][metric] = ClusterSums(cases, None, None, mm, None, None)
                continue
            with_success = sum(compress(counts, y))
            with_failure = sum(compress(counts, map(sub, m, y)))
            result[name][metric] = ClusterSums(cases, yy, ym, mm, with_success, with_failure)
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
    slices = _grouped(fields)
    layouts: dict[str, tuple[tuple[str, ...], _Packing]] = {}
    low = (1 << coding.pair_shift) - 1
    for name, members in slices.items():
        present = slice_metrics((field[0] for field in members), overall=name == OVERALL)
        metrics = tuple(
            metric for metric in present if metric in paired_metrics or is_plugin_metric(metric)
        )
        width = _row_width(members)

        def values(group: Group, row: int, metrics: tuple[str, ...] = metrics) -> list[int]:
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

        layouts[name] = (metrics, _Packing(3 * len(metrics), [width] * (3 * len(metrics)), values))
    totals = _case_totals(slices, {name: layout[1] for name, layout in layouts.items()})
    result: dict[str, dict[str, PairedClusterSums]] = {}
    for name, (metrics, packing) in layouts.items():
        entries: dict[str, list[tuple[int, int, int, int]]] = {metric: [] for metric in metrics}
        for vector, cases in totals[name].items():
            columns = packing.unpack(vector)
            for index, metric in enumerate(metrics):
                m, b, c = columns[3 * index : 3 * index + 3]
                if m:
                    d = c - b
                    entries[metric].append((m, cases, cases * d, cases * d * d))
        result[name] = {metric: PairedClusterSums.of(found) for metric, found in entries.items()}
    return result


def without_optional_sums(
    sums: Mapping[str, Mapping[str, ClusterSums]],
) -> dict[str, dict[str, ClusterSums]]:
    """``sums`` without the optional core metrics' (a partial whose evidence is unknown)."""
    return {
        name: {m: v for m, v in metrics.items() if m not in OPTIONAL_CORE_METRICS}
        for name, metrics in sums.items()
    }


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
