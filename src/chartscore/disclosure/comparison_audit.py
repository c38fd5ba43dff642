"""The outsider's audit of a shared comparison: the shared report's attack, on paired classes.

:func:`audit_comparison` reads only the shared comparison. It builds the
paired model (:class:`~chartscore.disclosure.comparison_model.ComparisonModel`)
from the field types, adds every published number as an equality, and for
every protected quantity that is not published (hidden numbers, and derived
ones: each system's failures, the paired table's ``both`` and ``neither``)
computes its exact integer range with the same solver
(:class:`~chartscore.disclosure.ranges.RangeSolver`). It fails exactly as the
shared report's audit does (:mod:`chartscore.disclosure.attack`): a number
from 1 to ``min_cell - 1`` shown or proven, inconsistent published numbers,
an unresolved range, or a published range or bound that is not the one the
attack proves. Value-free.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from chartscore.disclosure.attack import (
    DERIVABLE,
    DISCLOSED,
    PROTECTED,
    SMALL_PUBLISHED,
    UNRESOLVED,
    AuditResult,
    AuditRow,
    bound_status,
    proven_ranges,
    published_solver,
    range_status,
)
from chartscore.disclosure.comparison_model import ComparisonModel, derived_terms
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.disclosure.rule import RANGE_SUFFIX
from chartscore.documents.shared_comparison import SharedComparison, difference_bound
from chartscore.documents.shared_metric import Range, rate_bound
from chartscore.documents.shared_report import Key
from chartscore.stats.clustered import z_for


def published_values(shared: SharedComparison, model: ComparisonModel) -> dict[Key, int | None]:
    """Every protected quantity's value as an outsider reads it: JSON numbers, and derived ones.

    A derived quantity is known when every number it follows from is shown.
    """
    values: dict[Key, int | None] = dict(shared.numbers())
    for key, quantity in model.quantities.items():
        if not quantity.derived:
            continue
        kind, name, label = key
        total = 0
        for term, sign in derived_terms(label):
            value = values[kind, name, term]
            if value is None:
                values[key] = None
                break
            total += sign * value
        else:
            values[key] = total
    return values


def _derived_range(
    key: Key, values: Mapping[Key, int | None], found: Mapping[Key, Range]
) -> Range | None:
    """A derived quantity's range from its one hidden term's (exact: the identity holds on
    every consistent table, so its extremes are the term's, shifted); else None."""
    kind, name, label = key
    try:
        terms = derived_terms(label)
    except ValueError:
        return None
    constant = 0
    hidden: list[tuple[Key, int]] = []
    for term, sign in terms:
        value = values[kind, name, term]
        if value is None:
            hidden.append(((kind, name, term), sign))
        else:
            constant += sign * value
    if len(hidden) != 1 or hidden[0][0] not in found:
        return None
    sign = hidden[0][1]
    low, high = found[hidden[0][0]]
    if sign > 0:
        return constant + low, None if high is None else constant + high
    if high is None:
        return None  # unbounded term subtracted: the solver knows the floor (0)
    return constant - high, constant - low


def _status(low: int, high: int | None, min_cell: int) -> str:
    if low >= 1 and high is not None and high < min_cell:
        return DISCLOSED
    return DERIVABLE if low == high else PROTECTED


def range_failures(shared: SharedComparison, proven: Mapping[Key, Range]) -> list[AuditRow]:
    """A row for every published range, rate bound or difference bound that is not proven."""
    rows: list[AuditRow] = []
    for key, shown in shared.ranges():
        expected = proven.get(key)
        if expected is None:
            continue  # unresolved: its own row fails
        status = range_status(shown, expected)
        if status is not None:
            rows.append(AuditRow(key[0], key[1], key[2] + RANGE_SUFFIX, *expected, status))
    z = z_for(shared.confidence)
    for kind, name, part in shared.slices():
        for metric, item in part.paired.items():
            keys = [quantity for quantity, _ in item.numbers(metric)]
            ranges = [proven[kind, name, q] for q in keys if (kind, name, q) in proven]
            if len(ranges) != len(keys):
                continue
            total, baseline, candidate, b, c = ranges
            for system, side, success in (
                ("baseline", item.baseline, baseline),
                ("candidate", item.candidate, candidate),
            ):
                if side.rate_bound is None:
                    continue
                expected_bound = rate_bound(success, total, pooled=side.pooled, z=z)
                status = bound_status(side.rate_bound, expected_bound)
                if status is not None:
                    rows.append(
                        AuditRow(kind, name, f"{metric}.{system}.rate_bound", None, None, status)
                    )
            if item.difference_bound is not None:
                expected_bound = difference_bound(
                    total, baseline, candidate, b, c, pooled=item.pooled, z=z
                )
                status = bound_status(item.difference_bound, expected_bound)
                if status is not None:
                    rows.append(
                        AuditRow(kind, name, f"{metric}.difference.bound", None, None, status)
                    )
    return rows


def audit_comparison(document: SharedComparison | str | bytes) -> AuditResult:
    """Attack a shared comparison with everything it publishes; fail if a small cell shows.

    Raises:
        ChartscoreError: ``unknown_report_format`` or ``invalid_report`` when
            the JSON is not a shared comparison.
    """
    shared = (
        document if isinstance(document, SharedComparison) else SharedComparison.from_json(document)
    )
    min_cell = shared.disclosure.min_cell
    model = ComparisonModel(shared.disclosure.field_types)
    values = published_values(shared, model)
    order = list(model.quantities)
    rows: list[AuditRow] = []
    for key in order:
        value = values.get(key)
        if value is not None and 1 <= value < min_cell:
            rows.append(AuditRow(*key, value, value, SMALL_PUBLISHED))
    published = {
        key: value
        for key, value in values.items()
        if value is not None and not model.quantities[key].derived
    }
    solver = published_solver(lambda: RangeSolver(model, published))
    if isinstance(solver, AuditRow):
        rows.append(solver)
        return AuditResult(False, min_cell, tuple(rows))
    hidden = [model.quantities[key] for key in order if values.get(key) is None]
    with contextlib.suppress(Unresolved, Inconsistent):
        solver.spread([q.form for q in hidden])  # a speed-up only
    found: dict[Key, Range] = {}
    # JSON numbers first: a derived quantity with one hidden term follows from its range.
    for quantity in sorted(hidden, key=lambda q: q.derived):
        try:
            low, high = _derived_range(quantity.key, values, found) or solver.range_of(
                quantity.form
            )
        except Unresolved:
            rows.append(AuditRow(*quantity.key, None, None, UNRESOLVED))
            continue
        found[quantity.key] = (low, high)
        rows.append(AuditRow(*quantity.key, low, high, _status(low, high, min_cell)))
    rows += range_failures(shared, proven_ranges(shared, tuple(rows)))
    position = {key: index for index, key in enumerate(order)}
    rank = {"overall": 0, "field": 1, "field_type": 2}
    rows.sort(
        key=lambda r: (
            rank[r.slice_kind],
            r.slice_name,
            position.get((r.slice_kind, r.slice_name, r.name), len(position)),
            r.name,
        )
    )
    passed = all(row.passed for row in rows)
    return AuditResult(passed, min_cell, tuple(rows), solver.solves)
