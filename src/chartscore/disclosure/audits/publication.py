"""The audit of a publication: several products of one cohort held together.

The outsider holds every product (each system's shared report, each shared comparison) and
attacks them in the joint model of :mod:`chartscore.disclosure.publication`; every hidden
number is judged as the package judges one (:func:`~chartscore.disclosure.audits.judge`).
docs/disclosure.md, "One publication".

Value-free: products, keys and integers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from chartscore.disclosure.audits.document import (
    DISCLOSED,
    INCONSISTENT,
    PASSING,
    UNRESOLVED,
    WHOLE,
    audit,
    audit_comparison,
    judge,
    ranges_of,
)
from chartscore.disclosure.limits import check_audit_size
from chartscore.disclosure.publication import JointPublication, Product, System, product_key
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.documents.shared_report import Key, SharedReport


@attrs.frozen
class PublicationRow:
    """One hidden number of one product, as the whole publication proves it."""

    product: int
    key: Key
    low: int | None
    high: int | None
    status: str

    @property
    def passed(self) -> bool:
        """Protected or derivable (not small): the publication keeps it safe."""
        return self.status in PASSING

    @classmethod
    def whole(cls, problem: str) -> PublicationRow:
        """The row that fails a publication as a whole (``inconsistent``, ``unresolved``)."""
        return cls(0, ("overall", "", WHOLE), None, None, problem)


@attrs.frozen
class PublicationAudit:
    """The joint audit of a publication: each product's own verdict and the joint rows."""

    own: tuple[bool, ...]
    rows: tuple[PublicationRow, ...]
    min_cell: int

    @property
    def passed(self) -> bool:
        """Every product passes alone, and no hidden number is pinned jointly."""
        return all(self.own) and all(row.passed for row in self.rows)

    def table(self) -> str:
        """Counts and statuses only: one line per failing row, a line per product, the verdict."""
        lines = [
            f"product {index + 1}: own audit {'PASS' if ok else 'FAIL'}\n"
            for index, ok in enumerate(self.own)
        ]
        for row in self.rows:
            if row.passed:
                continue
            kind, name, quantity = row.key
            span = "-" if row.low is None else f"{row.low}..{'' if row.high is None else row.high}"
            lines.append(
                f"product {row.product + 1}: {kind} {name} {quantity} {span} {row.status}\n"
            )
        failing = sum(not row.passed for row in self.rows)
        verdict = "PASS" if self.passed else "FAIL"
        lines.append(
            f"audit {verdict}: {len(self.own)} products together, min_cell {self.min_cell}, "
            f"{len(self.rows)} hidden numbers checked, {failing} failing\n"
        )
        return "".join(lines)


def _own_audit(product: Product) -> bool:
    # A product's own audit, of its kind: a publication fails when any product fails alone.
    if isinstance(product, SharedReport):
        return audit(product).passed
    return audit_comparison(product).passed


def audit_publication(products: Sequence[Product], systems: Sequence[System]) -> PublicationAudit:
    """The outsider's attack on several shared documents of one cohort held together.

    ``systems``: each product's system: a report's label (equal labels: the same
    predictions), a comparison's (baseline, candidate) labels. A number is judged
    under the largest min cell of the publication: a count one product shows under
    a smaller rule is then a failure of the others' rule.

    Labels are not modelled jointly yet: each report is read without its labels
    (each product's own audit, which models them, still runs).

    Raises:
        ChartscoreError: ``usage`` for no products, a system count that differs, or a
            report given a comparison's systems (or the other way round).
    """
    reports = [(len(p.by_field), p.by_stratum) for p in products if isinstance(p, SharedReport)]
    check_audit_size(reports, len(products) - len(reports))  # before any model
    joint = JointPublication(products, systems)
    own = tuple(_own_audit(product) for product in products)
    min_cell = joint.min_cell
    solver, problem = joint.solver()
    if solver is None:
        return PublicationAudit(own, (PublicationRow.whole(problem),), min_cell)
    forms = (joint.model.quantities[product_key(index, key)].form for index, key in joint.hidden)
    rows = (
        PublicationRow(index, key, *judge(answer, min_cell))
        for (index, key), answer in zip(joint.hidden, ranges_of(solver, forms), strict=True)
    )
    return PublicationAudit(own, tuple(rows), min_cell)


def publication_leaks(
    products: Sequence[Product],
    systems: Sequence[System],
    values: Sequence[Mapping[Key, int]],
) -> list[PublicationRow]:
    """Inside only: the hidden numbers the publication pins into 1..min_cell-1.

    ``values``: each product's true values. Only a hidden number whose true value
    is from 1 to ``min_cell - 1`` can be pinned there (a range holds the truth), so
    only those are checked, each by a consistent table at 0 or at ``min_cell`` or
    more (:meth:`~chartscore.disclosure.ranges.RangeSolver.protected`): what
    :func:`audit_publication` would fail, found without a range for every hidden
    number. An inconsistent or unresolved publication is one failing row.
    """
    joint = JointPublication(products, systems)
    solver, problem = joint.solver()
    if solver is None:
        return [PublicationRow.whole(problem)]
    return joint_leaks(joint, solver, values, joint.hidden)


def joint_leaks(
    joint: JointPublication,
    solver: RangeSolver,
    values: Sequence[Mapping[Key, int]],
    hidden: Sequence[tuple[int, Key]],
) -> list[PublicationRow]:
    """Of ``hidden``, the numbers ``solver`` pins into 1..min_cell-1 (see
    :func:`publication_leaks`): only a true value there can be pinned there.

    The joint choice (:mod:`chartscore.disclosure.joint_choice`) asks it of its own
    solver, so it ends exactly the leaks this audit finds.
    """
    rows: list[PublicationRow] = []
    for index, key in hidden:
        value = values[index].get(key)
        if value is None or not 1 <= value < joint.min_cell:
            continue
        form = joint.model.quantities[product_key(index, key)].form
        failed = False
        try:
            safe = solver.protected(form, value, joint.min_cell)
        except (Unresolved, Inconsistent):
            failed = True
        if failed or not safe:
            status = UNRESOLVED if failed else DISCLOSED
            rows.append(PublicationRow(index, key, None, None, status))
    return rows


def publication_consistent(products: Sequence[Product], systems: Sequence[System]) -> bool:
    """Whether some cohort could give all these products' published numbers at once.

    A cheap test (the solver's set-up only, no range): ``audit --comparisons`` uses it
    to read which two systems a shared comparison compares.
    """
    return JointPublication(products, systems).solver()[1] != INCONSISTENT


__all__ = [
    "PublicationAudit",
    "PublicationRow",
    "audit_publication",
    "joint_leaks",
    "publication_consistent",
    "publication_leaks",
]
