"""The identities a site's partial tally satisfies: what reading a partial file checks.

The numbers of a partial (docs/partials.md) are not independent. Every gold row
has one row class, and the partial lists them per field (the case bookkeeping's
``by_field``): they give the field's rows, its answerable rows and its outcome
counts exactly, and bound its item, label, kappa and uncertainty counts. Each
case's combination of row classes (``patterns``) must be one those rows can
form; it gives every pooled slice's number of cases with trials exactly, and
bounds (exactly, where every field group has one field) the per-case sums of
the clustered intervals. The strata's row classes add up, key by key, to the
same rows, and their per-case sums to the pooled slices' sums.

A partial edited by hand in a way that breaks any of these is refused. One
that keeps all of them (every count tripled, as three copies of each patient
would give) cannot be told from a real one by its numbers alone.

Holds counts only: no value, no case id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import product
from typing import Any, Final, NoReturn

from chartscore.documents.plugin_layout import PluginLayout, is_plugin_metric
from chartscore.documents.tally import (
    CORE_METRICS,
    LABEL_METRICS,
    OPTIONAL_CORE_METRICS,
    SliceTally,
    Tally,
)
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.metrics import (
    ANSWERABLE,
    ANSWERED,
    ANSWERED_ITEMS,
    EARLIER,
    EVIDENCED,
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
    FieldType,
)
from chartscore.records.strata import stratum_name
from chartscore.scoring.agreement import item_flags
from chartscore.scoring.case_classes import CaseClasses
from chartscore.scoring.clusters import ITEM_BITS, OVERALL, Group, RowCoding, slice_metrics
from chartscore.scoring.outcomes import RowTest, row_tests
from chartscore.scoring.partial import LABEL_ROW_KINDS, FieldCounts, PartialTally, RuleBook
from chartscore.scoring.strata import StrataParts
from chartscore.stats.clustered import ClusterSums

__all__ = ["check_identities"]

_EVIDENCE: Final = SUPPORTED | EVIDENCED
"""An answer's evidence bits: supported implies evidenced implies answered."""
_AGREEMENT: Final = EXACT | NORMALIZED
"""Bits only an answered answerable row of the right type earns (with the type's own)."""
_TYPE_BITS: Final = {
    "tolerance_agreement": TOLERANCE,
    "fuzzy_agreement": FUZZY,
    "pattern_agreement": PATTERN,
    "ordinal_later": LATER | EARLIER | WITHIN_ONE,
}
_ITEM_FLAGS: Final = (
    GOLD_ITEMS | ANSWERED_ITEMS | MATCHED_ITEMS | UNMATCHED_ANSWERED | UNMATCHED_GOLD
)
_FLAG_SETS: Final = frozenset(
    item_flags(gold, answered, matched)
    for gold, answered in product(range(3), repeat=2)
    for matched in range(min(gold, answered) + 1)
)  # every combination of item flags some row has (the flags depend on counts up to 2)
_COUNT_MASK: Final = (1 << ITEM_BITS) - 1
_ITEM_METRICS: Final = ("item_precision", "item_recall")


def _refuse(field_id: str | None = None) -> NoReturn:
    raise ChartscoreError(ErrorCode.INVALID_PARTIAL, input=InputKind.PARTIAL, field_id=field_id)


def check_identities(partial: PartialTally) -> None:
    """Check every identity of a partial read from a site's file (see the module docstring).

    Raises:
        ChartscoreError: ``invalid_partial`` (with the field id where one
            field's own counts disagree).
    """
    cases = partial.cases
    if cases is None or set(cases.by_field) != set(partial.fields):
        _refuse()
    rules = RuleBook()
    coding = RowCoding(partial.plugins)
    groups = partial.groups(rules)
    for field_id, counts in partial.fields.items():
        rows = cases.by_field[field_id]
        _check_rows(field_id, counts, rows, coding, groups[field_id])
        _check_kappa(field_id, counts)
        _check_uncertainty(field_id, counts)
        _check_items(field_id, counts, rows)
        _check_labels(field_id, counts)
    sizes = _check_patterns(partial, cases, groups)
    failed = False
    tally: Tally | None = None
    try:
        tally = partial.tally(rules)  # its slices check their sums against their trials
    except ValueError:
        failed = True
    if failed or tally is None:
        _refuse()
    for part in (tally.overall, *tally.by_field_type.values()):
        _check_sums(part)
    _check_clusters(partial, cases, groups, sizes, tally)
    if partial.strata is not None:
        _check_strata(partial, partial.strata, coding, rules, tally)
    ignored = cases.ignored_count
    if partial.ignored_predictions is None:
        if ignored:
            _refuse()
    elif ignored > partial.ignored_predictions or (ignored == 0) != (
        partial.ignored_predictions == 0
    ):
        _refuse()  # each such case has one ignored prediction or more


# --------------------------------------------------------------------------- one field


def _possible(mask: int, field_type: FieldType, allowed: int) -> bool:
    # Whether a row with an answer (present, not missing) can earn this outcome mask.
    answered = mask & ANSWERED != 0
    right_type = answered and not mask & WRONG_TYPE
    if mask & ~allowed or mask & MISSING:
        return False
    if mask & (SUPPORTED | EVIDENCED | WRONG_TYPE) and not answered:
        return False
    if mask & SUPPORTED and not mask & EVIDENCED:  # support needs a clinical-record span
        return False
    earned = mask & allowed & ~(ANSWERED | ANSWERABLE | _EVIDENCE | WRONG_TYPE | _ITEM_FLAGS)
    if earned and not (right_type and mask & ANSWERABLE):  # agreement and plugin bits
        return False
    if field_type is FieldType.MULTI:
        flags = mask & _ITEM_FLAGS
        if flags not in _FLAG_SETS:
            return False
        if flags & (GOLD_ITEMS | UNMATCHED_GOLD) and not mask & ANSWERABLE:
            return False
        if flags & (ANSWERED_ITEMS | MATCHED_ITEMS | UNMATCHED_ANSWERED) and not right_type:
            return False
    return True


def _allowed_bits(field_type: FieldType, group: Group, plugins: PluginLayout | None) -> int:
    # Every outcome bit a row of this field can earn.
    bits = ANSWERED | ANSWERABLE | _EVIDENCE | WRONG_TYPE | _AGREEMENT
    for metric in group[1]:
        bits |= _TYPE_BITS.get(metric, 0)
        if is_plugin_metric(metric) and plugins is not None:
            shift, width, _ = plugins.label_test(metric)
            bits |= width << shift
    if field_type is FieldType.MULTI:
        bits |= _ITEM_FLAGS
    return bits


def _check_rows(
    field_id: str, counts: FieldCounts, rows: Counter[int], coding: RowCoding, group: Group
) -> None:
    # Every gold row has one class: the classes give the rows, answerable rows and outcomes.
    allowed = _allowed_bits(counts.field_type, group, coding.plugins)
    multi = counts.field_type is FieldType.MULTI
    missing = {MISSING, MISSING | ANSWERABLE}
    if multi:
        missing.add(MISSING | ANSWERABLE | item_flags(1, 0, 0))
    present: dict[int, int] = {}
    for row, n in rows.items():
        if row & MISSING:
            if row not in missing:
                _refuse(field_id)
        elif not _possible(row, counts.field_type, allowed):
            _refuse(field_id)
        else:
            present[row] = n
    if present != counts.outcomes or sum(rows.values()) != counts.field_count:
        _refuse(field_id)
    if sum(n for row, n in rows.items() if row & ANSWERABLE) != counts.answerable:
        _refuse(field_id)


def _check_kappa(field_id: str, counts: FieldCounts) -> None:
    # Kappa's pairs are the answered answerable rows of the right type; on the diagonal, the
    # rows that agree after normalization; an ordinal answer above gold is later.
    pairs, gold = counts.kappa_pairs, counts.gold_keys
    if pairs is None or gold is None:
        return
    count = counts.count
    if sum(pairs.values()) != count(ANSWERED | ANSWERABLE, WRONG_TYPE):
        _refuse(field_id)
    by_gold: Counter[object] = Counter()
    for (gold_key, _), n in pairs.items():
        by_gold[gold_key] += n
    if any(n > gold.get(key, 0) for key, n in by_gold.items()):
        _refuse(field_id)
    tests: dict[int, Callable[[Any, Any], bool]] = {NORMALIZED: lambda g, a: g == a}
    if counts.field_type is FieldType.ORDINAL:  # keys are level positions
        tests[LATER] = lambda g, a: a > g
        tests[EARLIER] = lambda g, a: a < g
        tests[WITHIN_ONE] = lambda g, a: abs(a - g) <= 1
    for bit, test in tests.items():
        found = sum(n for (g, a), n in pairs.items() if test(g, a))
        if found != count(ANSWERED | ANSWERABLE | bit):
            _refuse(field_id)


def _check_uncertainty(field_id: str, counts: FieldCounts) -> None:
    # Declared uncertainties are counted on answered answerable rows, by their agreement.
    agreed = sum(n for (_, right), n in counts.uncertain.items() if right)
    disagreed = sum(n for (_, right), n in counts.uncertain.items() if not right)
    if agreed > counts.count(ANSWERED | ANSWERABLE | NORMALIZED):
        _refuse(field_id)
    if disagreed > counts.count(ANSWERED | ANSWERABLE, NORMALIZED):
        _refuse(field_id)


def _check_items(field_id: str, counts: FieldCounts, rows: Counter[int]) -> None:
    # A row has an item flag exactly when its count is positive: each count is at least the
    # rows with its flag, and 0 exactly when none has it.
    gold, answered, matched = counts.gold_items, counts.answered_items, counts.matched_items
    if counts.field_type is not FieldType.MULTI:
        if gold or answered or matched:
            _refuse(field_id)
        return
    totals = {
        GOLD_ITEMS: gold,
        ANSWERED_ITEMS: answered,
        MATCHED_ITEMS: matched,
        UNMATCHED_ANSWERED: answered - matched,
        UNMATCHED_GOLD: gold - matched,
    }
    for flag, total in totals.items():
        flagged = sum(n for row, n in rows.items() if row & flag)
        if total < flagged or (total == 0) != (flagged == 0):
            _refuse(field_id)


def _check_labels(field_id: str, counts: FieldCounts) -> None:
    # A multi-select field's label counts: its answered answerable rows of the right type;
    # gold's labels are its gold items (gold stays inside the choices), and the labels
    # answered in gold are the matched items.
    label_gold, label_rows = counts.label_gold, counts.label_rows
    if label_gold is None or label_rows is None:
        return
    kinds = LABEL_ROW_KINDS
    if label_rows[kinds["rows"], None] != counts.count(ANSWERED | ANSWERABLE, WRONG_TYPE):
        _refuse(field_id)
    totals = dict.fromkeys(kinds.values(), 0)
    for (kind, _), n in label_rows.items():
        totals[kind] += n
    if sum(label_gold.values()) != counts.gold_items:
        _refuse(field_id)
    if totals[kinds["both"]] != counts.matched_items:
        _refuse(field_id)
    if totals[kinds["answer"]] > counts.answered_items:
        _refuse(field_id)


# --------------------------------------------------------------------------- cases


def _check_patterns(
    partial: PartialTally, cases: CaseClasses, groups: Mapping[str, Group]
) -> list[int]:
    """Check each case's combination against the rows; return each position's group size.

    Position ``p`` (a field group and row class) is set in the cases that have a row of that
    class in a field of that group: at least one row each, and at most one per field.
    """
    positions = cases.groups()
    place = {position: bit for bit, position in enumerate(positions)}
    used = {(groups[f], row) for f, rows in cases.by_field.items() for row in rows}
    if set(positions) != used:
        _refuse()
    patterns = cases.patterns()
    if 0 in patterns:
        _refuse()
    with_bit = [0] * len(positions)
    for pattern, n in patterns.items():
        bits = pattern
        while bits:
            low = bits & -bits
            with_bit[low.bit_length() - 1] += n
            bits ^= low
    members = Counter(groups.values())
    rows_at = [0] * len(positions)
    for field_id, rows in cases.by_field.items():
        for row, n in rows.items():
            bit = place[groups[field_id], row]
            if n > with_bit[bit]:  # one row per field and case
                _refuse(field_id)
            rows_at[bit] += n
    if any(cases_at > rows for cases_at, rows in zip(with_bit, rows_at, strict=True)):
        _refuse()
    in_group: dict[Group, int] = {}
    for bit, (group, _) in enumerate(positions):
        in_group[group] = in_group.get(group, 0) | 1 << bit
    for field_id, counts in partial.fields.items():
        wanted = in_group[groups[field_id]]
        if counts.field_count > sum(n for bits, n in patterns.items() if bits & wanted):
            _refuse(field_id)
    return [members[group] for group, _ in positions]


class _Bounds:
    """Per-case bounds of a metric's trials and successes, summed over the case patterns."""

    __slots__ = ("cases", "high", "low")

    def __init__(self) -> None:
        self.cases = 0
        self.low = [0, 0, 0, 0, 0]  # sum y, sum m, sum y*y, sum y*m, sum m*m
        self.high = [0, 0, 0, 0, 0]


def _bounds(
    patterns: Mapping[int, int], trials: int, successes: int, shared: Mapping[int, int]
) -> _Bounds:
    """The sums' bounds for the cases whose patterns have a position among ``trials``.

    A case with positions P in the trials has between |P| rows in them and |P| plus, for
    each position of a group of ``k`` fields (``shared``: k -> those positions, k >= 2),
    ``k - 1`` more: one row per field at most. So between those many trials (row metrics),
    and likewise successes.
    """
    projected: Counter[int] = Counter()  # patterns cut to the positions that matter, counted
    wanted = trials | successes
    for bits, n in patterns.items():
        if bits & trials:
            projected[bits & wanted] += n
    found = _Bounds()
    for bits, n in projected.items():
        in_trials, succeeding = bits & trials, bits & successes
        found.cases += n
        m_low, y_low = in_trials.bit_count(), succeeding.bit_count()
        m_high, y_high = m_low, y_low
        for size, mask in shared.items():
            m_high += (size - 1) * (in_trials & mask).bit_count()
            y_high += (size - 1) * (succeeding & mask).bit_count()
        for target, (y, m) in ((found.low, (y_low, m_low)), (found.high, (y_high, m_high))):
            for index, value in enumerate((y, m, y * y, y * m, m * m)):
                target[index] += n * value
    return found


def _row_tests(metric: str, plugins: PluginLayout | None) -> tuple[RowTest, RowTest | None]:
    # The rows in a metric's trials, and those that succeed (None: not known from the class).
    if metric == "majority_baseline":
        return lambda row: bool(row & ANSWERABLE), None
    return row_tests(metric, plugins)


def _check_clusters(
    partial: PartialTally,
    cases: CaseClasses,
    groups: Mapping[str, Group],
    sizes: list[int],
    tally: Tally,
) -> None:
    # Every pooled slice has sums for exactly its metrics; their cases are the cases with a row
    # in the trials; the sums lie within what the cases' rows allow.
    slices: dict[str, set[Group]] = {OVERALL: set(groups.values())}
    for group in groups.values():
        slices.setdefault(group[0], set()).add(group)
    if set(partial.clusters) != set(slices):
        _refuse()
    positions = cases.groups()
    patterns = cases.patterns()
    shared: dict[int, int] = {}  # group size k >= 2 -> the positions of such groups
    for bit, size in enumerate(sizes):
        if size > 1:
            shared[size] = shared.get(size, 0) | 1 << bit
    memo: dict[tuple[int, int], _Bounds] = {}
    for name, members in slices.items():
        metrics = slice_metrics(members, overall=name == OVERALL)
        if not partial.evidence:  # an old site's partial: no sums for evidence_provided
            metrics = tuple(m for m in metrics if m not in OPTIONAL_CORE_METRICS)
        given = partial.clusters[name]
        if set(given) != set(metrics):
            _refuse()
        part = tally.overall if name == OVERALL else tally.by_field_type[name]
        for metric in metrics:
            sums = given[metric]
            if (sums.sum_yy is None) != (metric == "majority_baseline"):
                _refuse()
            reports = [
                group in members and (metric in CORE_METRICS or metric in group[1])
                for group, _ in positions
            ]
            if metric in LABEL_METRICS:  # a label row's trials are not in its outcome mask
                wanted = _mask(positions, reports, lambda row: bool(row & ANSWERABLE))
                if sums.cases > sum(n for bits, n in patterns.items() if bits & wanted):
                    _refuse()
                continue
            in_trials, succeeds = _row_tests(metric, partial.plugins)
            trials = _mask(positions, reports, in_trials)
            successes = 0 if succeeds is None else _mask(positions, reports, succeeds)
            found = memo.get((trials, successes))
            if found is None:
                found = memo[trials, successes] = _bounds(patterns, trials, successes, shared)
            binomial = part.metrics[metric]
            values = (
                binomial.success_count,
                binomial.total_count,
                sums.sum_yy,
                sums.sum_ym,
                sums.sum_mm,
            )
            if sums.cases != found.cases:
                _refuse()
            bounded = (1, 4) if succeeds is None else range(5)
            row_metric = metric not in _ITEM_METRICS  # an item row has any number of trials
            for index in bounded:
                value = values[index]
                assert value is not None
                if value < found.low[index] or (row_metric and value > found.high[index]):
                    _refuse()


def _mask(
    positions: list[tuple[Group, int]], reports: list[bool], test: Callable[[int], bool]
) -> int:
    bits = 0
    for bit, ((_, row), reported) in enumerate(zip(positions, reports, strict=True)):
        if reported and test(row):
            bits |= 1 << bit
    return bits


def _check_sums(part: SliceTally) -> None:
    # What per-case sums with 0 <= y_i <= m_i (integers) allow, given the slice's totals
    # Y = sum y_i and M = sum m_i over the cases with m_i > 0 (Cauchy-Schwarz for the last).
    for metric, sums in (part.clusters or {}).items():
        binomial = part.metrics[metric]
        y, m, cases, mm = binomial.success_count, binomial.total_count, sums.cases, sums.sum_mm
        if not (m <= mm <= m * m and m * m <= cases * mm):
            _refuse()
        if sums.sum_yy is None or sums.sum_ym is None:
            continue
        yy, ym = sums.sum_yy, sums.sum_ym
        if not (y <= yy <= ym <= mm and yy <= y * y and y * y <= cases * yy):
            _refuse()
        if ym * ym > yy * mm:
            _refuse()


# --------------------------------------------------------------------------- strata


def _check_strata(
    partial: PartialTally, strata: StrataParts, coding: RowCoding, rules: RuleBook, tally: Tally
) -> None:
    # For every key, the strata's row classes are the field's rows (their outcome masks the
    # case bookkeeping's classes, their item counts the field's), and their sums the pooled.
    assert partial.cases is not None
    for part in tally.by_stratum.values():
        _check_sums(part)
    for types in tally.by_stratum_field_type.values():
        for part in types.values():
            _check_sums(part)
    for field_id, counts in partial.fields.items():
        size = len(rules.rule(counts.field_type, counts.spec).labels)
        for name in strata.names():
            for row in strata.classes[name].get(field_id, {}):
                _check_class(field_id, row, coding, counts.field_type, size)
    for key, labels in strata.declared:
        names = [stratum_name(key, label) for label in labels]
        for field_id, counts in partial.fields.items():
            masks: Counter[int] = Counter()
            items = [0, 0, 0]
            for name in names:
                for row, n in strata.classes[name].get(field_id, {}).items():
                    masks[row & coding.row_bits] += n
                    for index, value in enumerate(coding.items(row)):
                        items[index] += n * value
            if masks != partial.cases.by_field[field_id]:
                _refuse(field_id)
            if items != [counts.gold_items, counts.answered_items, counts.matched_items]:
                _refuse(field_id)
        _check_strata_sums(partial.clusters, [strata.clusters.get(name, {}) for name in names])
        _check_strata_slices(tally, names)


def _check_class(
    field_id: str, row: int, coding: RowCoding, field_type: FieldType, labels: int
) -> None:
    # Item counts only in a multi-select row; label counts only in an answerable row of a
    # field with declared labels: the field's number of labels, gold's labels (a multi-select
    # row's gold items, else one) and those answered (its matched items, else one at most).
    multi = field_type is FieldType.MULTI
    items = coding.items(row)
    if any(items) and not multi:
        _refuse(field_id)
    counts = row >> coding.label_shift
    if not row & ANSWERABLE or not labels:
        if counts:
            _refuse(field_id)
        return
    gold, declared, matched = (counts >> k * ITEM_BITS & _COUNT_MASK for k in range(3))
    if counts >> 3 * ITEM_BITS != labels or not matched <= declared <= (labels if multi else 1):
        _refuse(field_id)
    if (gold, matched) != ((items[0], items[2]) if multi else (1, matched)):
        _refuse(field_id)


def _check_strata_sums(
    pooled: Mapping[str, Mapping[str, ClusterSums]],
    parts: Iterable[Mapping[str, Mapping[str, ClusterSums]]],
) -> None:
    # Each case is in one stratum of a key: the strata's per-case sums add up to the pooled.
    totals: dict[tuple[str, str], ClusterSums] = {}
    for part in parts:
        for name, metrics in part.items():
            for metric, sums in metrics.items():
                if metric not in pooled.get(name, {}):
                    _refuse()
                before = totals.get((name, metric))
                totals[name, metric] = sums if before is None else before + sums
    for name, metrics in pooled.items():
        for metric, sums in metrics.items():
            found = totals.get((name, metric))
            if found is None:
                if sums.cases:
                    _refuse()
            elif found != sums:
                _refuse()


def _check_strata_slices(tally: Tally, names: list[str]) -> None:
    # The strata of one key partition the rows: their slices add up to the pooled slices.
    pairs: list[tuple[SliceTally, list[SliceTally]]] = [
        (tally.overall, [tally.by_stratum[name] for name in names])
    ]
    for type_name, whole in tally.by_field_type.items():
        pairs.append((whole, [tally.by_stratum_field_type[name][type_name] for name in names]))
    for whole, parts in pairs:
        for count_name, count in whole.counts.items():
            if sum(part.counts[count_name] for part in parts) != count:
                _refuse()
        for metric in parts[0].metrics:
            found = [part.metrics[metric] for part in parts]
            if sum(b.success_count for b in found) != whole.metrics[metric].success_count:
                _refuse()
            if sum(b.total_count for b in found) != whole.metrics[metric].total_count:
                _refuse()
