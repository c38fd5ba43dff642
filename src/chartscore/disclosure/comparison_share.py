"""Cell suppression for a comparison: primary by distinct cases, complementary until it audits.

:func:`share_comparison` turns a full :class:`~chartscore.documents.comparison.Comparison`
into a :class:`~chartscore.documents.shared_comparison.SharedComparison`
under the cell-size rule, as :mod:`chartscore.disclosure.suppress` does for a
report, on the paired model
(:class:`~chartscore.disclosure.comparison_model.ComparisonModel`):

1. **Primary.** Every protected quantity whose distinct cases (counted inside
   the boundary) number from 1 to ``min_cell - 1`` is hidden; for a derived
   one (a system's failures, the paired ``both`` or ``neither``), the
   cheapest number it follows from.
2. **Complementary.** The exact attack checks every sensitive quantity:
   one from 1 to ``min_cell - 1`` must have a consistent table at 0 or at
   ``min_cell`` or more, and none may be derivable. For each that fails, the
   cheapest published number sharing a paired class with it is hidden (its
   own slice's first), and the check repeats. Hiding only removes
   equalities, so ranges only widen, and hiding everything passes: it ends.
3. **Self-audit** on the JSON. A hidden number that the audit proves exactly
   and that is not sensitive is published after all (its equality holds on
   every consistent table already: the feasible tables, and so every range,
   stay the same, and no second audit is needed). Then the audit's ranges and
   the bounds are written, and the result read back and checked once more.

Cost order (cheapest hidden first): field-type slices, then a field's other
numbers, then a field's gold counts and agreement counts (``exact`` and
``normalized``: both systems' successes and the trials), then the overall
slice; within a tier, smaller numbers first; then a fixed order of names.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from chartscore.disclosure.attack import DERIVABLE, AuditResult, proven_ranges
from chartscore.disclosure.comparison_audit import (
    audit_comparison,
    published_values,
    range_failures,
)
from chartscore.disclosure.comparison_model import (
    ComparisonModel,
    derived_terms,
)
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.disclosure.rule import SUCCESS, TOTAL
from chartscore.documents.comparison import Comparison
from chartscore.documents.shared_comparison import (
    GOLD_COUNTS,
    SharedComparison,
    build_shared_comparison,
    with_ranges,
)
from chartscore.documents.shared_report import Key, check_min_cell
from chartscore.errors import ChartscoreError, ErrorCode

_PEOPLE_NEED = ("exact_agreement", "normalized_agreement")
_KIND_RANK = {"field_type": 0, "field": 1, "overall": 2}


def _tier(key: Key) -> int:
    kind, _, quantity = key
    if kind == "field_type":
        return 0
    if kind == "overall":
        return 3
    metric, _, part = quantity.partition(".")
    needed = metric in _PEOPLE_NEED and (part == TOTAL or part.endswith(SUCCESS))
    return 2 if quantity in GOLD_COUNTS or needed else 1


def _failed() -> ChartscoreError:
    return ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)


def share_comparison(
    comparison: Comparison,
    case_counts: Mapping[Key, int],
    field_types: Mapping[str, str],
    min_cell: int,
) -> SharedComparison:
    """Suppress small cells of a comparison so it may be shared; audited before it returns.

    Args:
        comparison: The full, value-free comparison.
        case_counts: The distinct cases behind every protected quantity of
            the paired model (computed inside the boundary; never shared).
        field_types: Every field id's type.
        min_cell: Publish 0 or at least this many cases.

    Raises:
        ChartscoreError: ``invalid_min_cell``; ``invalid_sensitivity`` when
            the case counts do not cover the quantities exactly or contradict
            the numbers; ``disclosure_audit_failed`` if the result would fail
            its own audit (a bug: nothing is returned).
    """
    min_cell = check_min_cell(min_cell)
    if set(field_types) != set(comparison.by_field):
        raise ChartscoreError(ErrorCode.INVALID_SENSITIVITY)
    model = ComparisonModel(field_types)
    full = build_shared_comparison(comparison, field_types, min_cell, set())
    values = {k: v for k, v in published_values(full, model).items() if v is not None}
    if set(case_counts) != set(model.quantities) or set(values) != set(model.quantities):
        raise ChartscoreError(ErrorCode.INVALID_SENSITIVITY)
    for key, cases in case_counts.items():
        value = values[key]
        if type(cases) is not int or not 0 <= cases <= value or (cases == 0) != (value == 0):
            raise ChartscoreError(ErrorCode.INVALID_SENSITIVITY)
    order = {key: index for index, key in enumerate(model.quantities)}
    numbers = [key for key, q in model.quantities.items() if not q.derived]

    def cost(key: Key) -> tuple[object, ...]:
        return (_tier(key), values[key], _KIND_RANK[key[0]], key[1], order[key])

    sensitive = [q for key, q in model.quantities.items() if 1 <= case_counts[key] < min_cell]
    hidden: set[Key] = set()
    for quantity in sensitive:
        kind, name, label = quantity.key
        if not quantity.derived:
            hidden.add(quantity.key)
        else:
            terms = [(kind, name, term) for term, _ in derived_terms(label)]
            hidden.add(min(terms, key=cost))
    by_variable: dict[int, list[Key]] = {}
    for key in numbers:
        for variable, _ in model.quantities[key].form:
            by_variable.setdefault(variable, []).append(key)
    seed = _solver(model, {key: values[key] for key in numbers}, None).point()
    pending = list(sensitive)
    while pending:
        solver = _solver(model, {k: values[k] for k in numbers if k not in hidden}, seed)
        pending = [q for q in pending if not _safe(solver, q.form, values[q.key], min_cell)]
        before = len(hidden)
        for quantity in pending:
            linked = {
                key
                for variable, _ in quantity.form
                for key in by_variable.get(variable, ())
                if key not in hidden
            }
            if linked:  # else hidden for an earlier one this round: rechecked next round
                same = quantity.key[:2]
                hidden.add(min(linked, key=lambda k: (k[:2] != same, cost(k))))
        if pending and len(hidden) == before:
            raise _failed()  # nothing left to hide, yet not protected: cannot happen
    sensitive_keys = {q.key for q in sensitive}
    shared = build_shared_comparison(comparison, field_types, min_cell, hidden)
    verdict = audit_comparison(shared.to_json())
    _check(verdict, sensitive_keys)
    # A hidden number the audit proves exactly (and not sensitive) is published: its
    # equality holds on every consistent table already, so no range changes.
    derivable = {
        (row.slice_kind, row.slice_name, row.name)
        for row in verdict.rows
        if row.status == DERIVABLE
    }
    shown_again = (derivable & hidden) - sensitive_keys
    proven = proven_ranges(shared, verdict.rows)
    if shown_again:
        # No second audit: the feasible tables, and so every row, are the same; the
        # published numbers' rows leave the table (docs/disclosure.md).
        hidden -= shown_again
        shared = build_shared_comparison(comparison, field_types, min_cell, hidden)
    final = SharedComparison.from_json(with_ranges(shared, proven).to_json())
    if range_failures(final, proven) or dict(final.numbers()) != dict(shared.numbers()):
        raise _failed()
    return final


def _check(verdict: AuditResult, sensitive: set[Key]) -> None:
    # The self-audit passes, and no sensitive quantity is derivable exactly.
    exposed = any(
        row.status == DERIVABLE and (row.slice_kind, row.slice_name, row.name) in sensitive
        for row in verdict.rows
    )
    if not verdict.passed or exposed:
        raise _failed()


def _solver(
    model: ComparisonModel, published: Mapping[Key, int], seed: np.ndarray | None
) -> RangeSolver:
    failed = False
    solver: RangeSolver | None = None
    try:
        solver = RangeSolver(model, published, eager=False, seed=seed)
    except (Inconsistent, Unresolved):
        failed = True
    if failed or solver is None:
        raise _failed()
    return solver


def _safe(
    solver: RangeSolver, form: tuple[tuple[int, int], ...], value: int, min_cell: int
) -> bool:
    failed = False
    safe = False
    try:
        safe = solver.protected(form, value, min_cell)
    except (Inconsistent, Unresolved):
        failed = True
    if failed:
        raise _failed()
    return safe
