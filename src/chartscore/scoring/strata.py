"""Stratum slices (``site=A``): each stratum's row classes per field, and its per-case sums.

A stratum slice pools every field over the cases of one declared stratum label;
a stratum-and-type slice pools the fields of one type over them. Both are read
off the row classes (:mod:`chartscore.scoring.clusters`) of their rows: a
:class:`StrataParts` holds, per stratum and field, how many rows ended in each
class, and per stratum the exact per-case sums of its pooled slices. Both add
across partitions of disjoint cases, so stratum slices merge like the others.

``majority_baseline`` is a figure of a whole field's gold set, not of its
rows: stratum slices do not report it.

This module reads case ids (to place rows in strata) in memory only; what
:class:`StrataParts` keeps is integers keyed by declared stratum names, field
ids and type names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Final

from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    OPTIONAL_CORE_METRICS,
    Binomial,
    SliceTally,
    empty_sums,
)
from chartscore.metrics import ANSWERABLE, ANSWERED, MISSING
from chartscore.records.schema import Strata
from chartscore.records.strata import CaseStrata, stratum_name
from chartscore.scoring.clusters import (
    OVERALL,
    FieldClasses,
    Group,
    RowCoding,
    merge_sums,
    pooled_sums,
    slice_metrics,
    without_optional_sums,
)
from chartscore.stats.clustered import ClusterSums

UNREPORTED: Final = frozenset({"majority_baseline"})
"""Metrics of pooled slices that stratum slices leave out (not a sum over rows)."""

ClassCounts = dict[int, int]


class StrataParts:
    """One partition's stratum counts. Private (mergeable, value-free, but kept in memory).

    Attributes:
        declared: The schema's declared strata.
        classes: Stratum name -> field id -> row class -> rows.
        clusters: Stratum name -> pooled slice (``"overall"`` or a type) ->
            metric -> per-case sums.
    """

    __slots__ = ("classes", "clusters", "declared", "fractions")

    def __init__(
        self,
        declared: Strata,
        classes: Mapping[str, Mapping[str, ClassCounts]],
        clusters: Mapping[str, Mapping[str, Mapping[str, ClusterSums]]],
        fractions: Mapping[str, Decimal] | None = None,
    ) -> None:
        self.declared = declared
        self.fractions = dict(fractions or {})
        self.classes = _copy(classes)
        self.clusters = {
            name: {key: dict(sums) for key, sums in part.items()} for name, part in clusters.items()
        }

    def __repr__(self) -> str:
        return f"StrataParts(<{len(self.classes)} strata; counts hidden>)"

    def names(self) -> list[str]:
        """Every declared stratum's name, key by key, labels in declared order."""
        return [stratum_name(key, label) for key, labels in self.declared for label in labels]

    def merge(self, other: StrataParts) -> StrataParts:
        """Both partitions' counts (disjoint cases); neither input changes."""
        if other.declared != self.declared or other.fractions != self.fractions:
            raise ValueError("strata partials with different declared strata")
        classes = _copy(self.classes)
        for name, part in other.classes.items():
            mine = classes.setdefault(name, {})
            for field_id, counted in part.items():
                into = mine.setdefault(field_id, {})
                for row, rows in counted.items():
                    into[row] = into.get(row, 0) + rows
        clusters = {
            name: merge_sums(self.clusters.get(name, {}), other.clusters.get(name, {}))
            for name in sorted(self.clusters.keys() | other.clusters.keys())
        }
        return StrataParts(self.declared, classes, clusters, self.fractions)

    def without_optional(self) -> StrataParts:
        """These counts without the optional core metrics' per-case sums (unknown evidence)."""
        clusters = {name: without_optional_sums(part) for name, part in self.clusters.items()}
        return StrataParts(self.declared, self.classes, clusters, self.fractions)


def _copy(classes: Mapping[str, Mapping[str, ClassCounts]]) -> dict[str, dict[str, ClassCounts]]:
    return {name: {f: dict(c) for f, c in part.items()} for name, part in classes.items()}


def split_fields(
    strata: CaseStrata, fields: Sequence[tuple[str, FieldClasses]]
) -> Iterator[tuple[str, list[tuple[str, FieldClasses]]]]:
    """Every declared stratum's name and its fields, each holding the stratum's rows only.

    A field with no row in a stratum is left out of it.

    Raises:
        ChartscoreError: ``strata_case_missing`` for a gold case the strata file lacks.
    """
    positions: dict[str, tuple[int, ...]] = {}
    for _, (_, entries, _) in fields:
        for case_id in entries:
            if case_id not in positions:
                positions[case_id] = strata.positions(case_id)
    for index, (key, labels) in enumerate(strata.declared):
        buckets: list[list[tuple[str, FieldClasses]]] = [[] for _ in labels]
        for field_id, (group, entries, to_class) in fields:
            split: list[dict[str, object]] = [{} for _ in labels]
            for case_id, entry in entries.items():
                split[positions[case_id][index]][case_id] = entry
            for position, part in enumerate(split):
                if part:
                    buckets[position].append((field_id, (group, part, to_class)))
        for position, label in enumerate(labels):
            yield stratum_name(key, label), buckets[position]


def strata_parts(
    strata: CaseStrata, fields: Sequence[tuple[str, FieldClasses]], coding: RowCoding
) -> StrataParts:
    """Place every gold row in its case's strata; count classes and per-case sums.

    Raises:
        ChartscoreError: ``strata_case_missing`` for a gold case the strata file lacks.
    """
    classes: dict[str, dict[str, ClassCounts]] = {}
    clusters: dict[str, dict[str, dict[str, ClusterSums]]] = {}
    packings: dict[tuple[object, ...], object] = {}  # reused: strata share row classes
    for name, members in split_fields(strata, fields):
        classes[name] = {
            field_id: dict(Counter(e if type(e) is int else to_class(e) for e in entries.values()))
            for field_id, (_, entries, to_class) in members
        }
        clusters[name] = pooled_sums([field for _, field in members], coding, packings)
    return StrataParts(strata.declared, classes, clusters, strata.fractions)


def class_slice(
    parts: Sequence[tuple[Group, ClassCounts]],
    coding: RowCoding,
    metrics: Sequence[str],
    clusters: Mapping[str, ClusterSums],
    memo: dict[tuple[str, int], tuple[int, int]] | None = None,
) -> SliceTally:
    """A pooled slice's counts and binomials from its fields' row classes.

    Args:
        parts: Each field's group and its rows' classes in the slice.
        metrics: The slice's metrics (a metric counts only in the fields that report it).
        clusters: The slice's per-case sums by metric (an absent one has none).
        memo: ``(metric, row class) -> (successes, trials)``, kept between slices.
    """
    field = answerable = missing = answered = 0
    sums = {name: [0, 0] for name in metrics}
    known = {} if memo is None else memo
    for group, counted in parts:
        reported = [name for name in metrics if name in CORE_METRICS or name in group[1]]
        for row, rows in counted.items():
            mask = row & coding.row_bits
            field += rows
            if mask & ANSWERABLE:
                answerable += rows
            if mask & MISSING:
                missing += rows
            elif mask & ANSWERED:
                answered += rows
            for name in reported:
                found = known.get((name, row))
                if found is None:
                    found = known[name, row] = coding.metric_values(name, row)
                success, trials = found
                total = sums[name]
                total[0] += success * rows
                total[1] += trials * rows
    values = (field, answerable, field - answerable, missing, answered, field - missing - answered)
    return SliceTally(
        counts=dict(zip(COUNT_NAMES, values, strict=True)),
        metrics={name: Binomial(s, t) for name, (s, t) in sums.items()},
        clusters={name: clusters.get(name) or empty_sums(name) for name in metrics},
    )


def stratum_slices(
    parts: StrataParts, groups: Mapping[str, Group], coding: RowCoding, *, evidence: bool = True
) -> tuple[dict[str, SliceTally], dict[str, dict[str, SliceTally]]]:
    """Every stratum's slice, and its slice per field type present in ``groups``.

    Args:
        groups: Field id -> its group, for every field of the run (sorted).
        evidence: Whether the rows' evidence is known (else the optional core metrics,
            ``evidence_provided``, are left out: :class:`~chartscore.scoring.partial.PartialTally`).

    Returns:
        ``(by_stratum, by_stratum_field_type)``: ``{"site=A": slice}`` and
        ``{"site=A": {type: slice}}``, every declared stratum (an empty one too).
    """
    types: dict[str, list[str]] = {}
    for field_id, group in groups.items():
        types.setdefault(group[0], []).append(field_id)
    overall_metrics = _metrics(groups.values(), overall=True, evidence=evidence)
    type_metrics = {
        name: _metrics((groups[f] for f in members), overall=False, evidence=evidence)
        for name, members in types.items()
    }
    by_stratum: dict[str, SliceTally] = {}
    by_type: dict[str, dict[str, SliceTally]] = {}
    memo: dict[tuple[str, int], tuple[int, int]] = {}
    for name in parts.names():
        counted = parts.classes.get(name, {})
        sums = parts.clusters.get(name, {})
        by_stratum[name] = class_slice(
            [(groups[f], counted[f]) for f in groups if f in counted],
            coding,
            overall_metrics,
            sums.get(OVERALL, {}),
            memo,
        )
        by_type[name] = {
            type_name: class_slice(
                [(groups[f], counted[f]) for f in members if f in counted],
                coding,
                type_metrics[type_name],
                sums.get(type_name, {}),
                memo,
            )
            for type_name, members in sorted(types.items())
        }
    return by_stratum, by_type


def slice_metric_names(groups: object, *, overall: bool) -> tuple[str, ...]:
    """The metrics of a stratum slice of fields in these groups (no ``majority_baseline``)."""
    return _metrics(groups, overall=overall)


def _metrics(groups: object, *, overall: bool, evidence: bool = True) -> tuple[str, ...]:
    found = slice_metrics(groups, overall=overall)  # type: ignore[arg-type]
    left_out = UNREPORTED if evidence else UNREPORTED | frozenset(OPTIONAL_CORE_METRICS)
    return tuple(name for name in found if name not in left_out)
