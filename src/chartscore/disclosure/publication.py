"""One publication: the attacker holds several shared reports of one cohort at once.

A registry publishes several products of one cohort: each system's shared report,
variants of one system's (with and without strata, at another min cell). Each
passes its own audit; together they may not (docs/disclosure.md, "One
publication"). :class:`PublicationModel` is the attacker's model of them all:

- every product keeps its own model's variables (its outcome classes, item and
  figure counts), side by side;
- products are tied by what they share. Two products of **one system** count the
  same rows into the same classes: each class (summed over stratum cells where
  their strata differ), each item count and each figure count is equal in both.
  Two products of **different systems** share only the gold: per cell, the rows
  of each gold part (answerable or not; in or out of the majority category when
  both split it), the gold items and the dates with a distance are equal.

These ties are exact: given each product's class counts with equal gold-part
totals, a table of the rows by every product's class exists (a transportation
problem with only its margins fixed always has one), so the model admits
exactly what the products together admit. Labels and comparisons are not
modelled yet: :func:`audit_publication` reads each report without its labels.

Value-free: shared reports in, counts and statuses out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from chartscore.disclosure.attack import (
    DERIVABLE,
    PROTECTED,
    UNRESOLVED,
    audit,
    hidden_status,
    published_values,
)
from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.model import (
    ITEM_ROWS,
    ITEM_VARIABLES,
    FieldLayout,
    Key,
    Quantity,
    ReportModel,
    model_of,
)
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.documents.shared_report import SharedReport, SharedSlice
from chartscore.errors import ChartscoreError, ErrorCode

GOLD_FIGURES: Final = ("distance_gold",)
"""Figure unknowns of the gold alone (a date's gold rows with a distance)."""
GOLD_ITEMS: Final = ("gold_items", "gold_rows")
"""Item unknowns of the gold alone."""


def product_key(product: int, key: Key) -> Key:
    """A product's quantity in the publication's model."""
    return (f"product{product}:{key[0]}", key[1], key[2])


def _shift(form: Form, offset: int) -> Form:
    return tuple((variable + offset, coefficient) for variable, coefficient in form)


class PublicationModel(ReportModel):
    """The attacker's model of several shared reports of one cohort (see the module).

    Args:
        products: Each product's own model.
        systems: Each product's system label: products with equal labels scored
            the same predictions.
        rules: Each product's min cell (its rule, which the attacker knows).
    """

    def __init__(
        self, products: Sequence[ReportModel], systems: Sequence[str], rules: Sequence[int]
    ) -> None:
        if not products or not len(products) == len(systems) == len(rules):
            raise ChartscoreError(ErrorCode.USAGE)
        self.product_rules = list(rules)
        self.knows_rule = True
        self.threshold = False
        self.composition = {}
        self.error_counts = {}
        self.strata = ()
        self.products = list(products)
        self.systems = list(systems)
        self.offsets: list[int] = []
        self.layouts: dict[str, FieldLayout] = {}
        self.quantities: dict[Key, Quantity] = {}
        self.inequalities: list[Form] = []
        offset = 0
        for index, model in enumerate(self.products):
            self.offsets.append(offset)
            for field_id, layout in model.layouts.items():
                self.layouts[f"{index}/{field_id}"] = attrs.evolve(
                    layout, offset=layout.offset + offset
                )
            for key, quantity in model.quantities.items():
                joint = product_key(index, key)
                self.quantities[joint] = Quantity(
                    joint, _shift(quantity.form, offset), quantity.derived
                )
            self.inequalities += [_shift(row, offset) for row in model.inequalities]
            offset += model.size
        self.size = offset
        for index in range(1, len(self.products)):
            for row in self._ties(0, index):
                self.inequalities += [row, tuple((v, -c) for v, c in row)]
        self.cases = {}
        self.carriers = {}
        self._behind = {}
        self._field_keys = {}

    def knowledge(self, published: Mapping[Key, int], min_cell: int) -> list[tuple[Form, int]]:
        """Every product's own rule knowledge, under its own min cell, in joint variables.

        ``min_cell`` is unused: each product's rule is its own (``rules``).
        """
        rows: dict[tuple[Form, int], None] = {}
        for index, model in enumerate(self.products):
            own = _own(published, index)
            for form, bound in model.knowledge(own, self.product_rules[index]):
                rows[_shift(form, self.offsets[index]), bound] = None
        return list(rows)

    # --- ties --------------------------------------------------------------------------

    def _ties(self, first: int, second: int) -> list[Form]:
        # Rows ``form == 0`` that tie two products' shared counts.
        one, other = self.products[first], self.products[second]
        same = self.systems[first] == self.systems[second]
        out: list[Form] = []
        for field_id, left in one.layouts.items():
            right = other.layouts.get(field_id)
            if right is None:
                continue
            cells = _cell_pairs(one, other, left, right)
            for left_cells, right_cells in cells:
                if same and left.classes == right.classes:
                    groups = [([j], [j]) for j in range(len(left.classes))]
                else:
                    groups = _gold_groups(left, right)
                for left_classes, right_classes in groups:
                    out.append(
                        self._difference(
                            first,
                            second,
                            [_class(left, k, j) for k in left_cells for j in left_classes],
                            [_class(right, k, j) for k in right_cells for j in right_classes],
                        )
                    )
                if left.shape.items and right.shape.items:
                    names = (*ITEM_VARIABLES, *ITEM_ROWS) if same else GOLD_ITEMS
                    for name in names:
                        out.append(
                            self._difference(
                                first,
                                second,
                                [_item(left, name, k) for k in left_cells],
                                [_item(right, name, k) for k in right_cells],
                            )
                        )
            shared = set(left.shape.figure_variables()) & set(right.shape.figure_variables())
            for name in sorted(shared if same else shared & set(GOLD_FIGURES)):
                out.append(
                    self._difference(
                        first, second, [left.figure_variable(name)], [right.figure_variable(name)]
                    )
                )
        return [row for row in out if row]

    def _difference(
        self, first: int, second: int, left: Sequence[int], right: Sequence[int]
    ) -> Form:
        one = tuple((v + self.offsets[first], 1) for v in left)
        other = tuple((v + self.offsets[second], 1) for v in right)
        return add((one, 1), (other, -1))


def _without_labels(report: SharedReport) -> SharedReport:
    def core(part: SharedSlice) -> SharedSlice:
        return attrs.evolve(part, labels=None, scores={}, coefficients={})

    return attrs.evolve(report, by_field={k: core(v) for k, v in report.by_field.items()})


def _own(published: Mapping[Key, int], index: int) -> dict[Key, int]:
    prefix = f"product{index}:"
    return {
        (kind.removeprefix(prefix), name, quantity): value
        for (kind, name, quantity), value in published.items()
        if kind.startswith(prefix)
    }


def _class(layout: FieldLayout, cell: int, index: int) -> int:
    return layout.offset + cell * layout.cell_size + index


def _item(layout: FieldLayout, name: str, cell: int) -> int:
    if name in ITEM_VARIABLES:
        return layout.item_variable(name, cell)
    return layout.item_rows(name, cell)


def _cell_pairs(
    one: ReportModel, other: ReportModel, left: FieldLayout, right: FieldLayout
) -> list[tuple[list[int], list[int]]]:
    # Cell by cell under the same strata; otherwise every cell of one against every other's.
    if one.strata == other.strata and left.cells == right.cells:
        return [([k], [k]) for k in range(left.cells)]
    return [(list(range(left.cells)), list(range(right.cells)))]


def _gold_groups(left: FieldLayout, right: FieldLayout) -> list[tuple[list[int], list[int]]]:
    # The classes of each gold part: answerable or not, and in the majority category or not
    # when both split it.
    split = left.shape.majority and right.shape.majority

    def part(layout: FieldLayout) -> dict[tuple[bool, bool], list[int]]:
        out: dict[tuple[bool, bool], list[int]] = {}
        for index, c in enumerate(layout.classes):
            out.setdefault((c.answerable, c.majority and split), []).append(index)
        return out

    mine, theirs = part(left), part(right)
    return [(mine[key], theirs.get(key, [])) for key in sorted(mine)]


def gold_only_keys(model: ReportModel) -> frozenset[Key]:
    """The quantities of a report that count gold alone: the same in every system's report.

    A form is gold-only when it holds, of each gold part of each cell it touches (the
    classes of one answerable and majority value), every class with one coefficient, and
    no other unknown but a gold figure or gold item count: ``field_count``,
    ``answerable_count``, a total over the answerable rows, the majority baseline's
    success count, a chance level's gold rows.
    """
    group_of: dict[int, tuple[str, int, tuple[bool, bool]]] = {}
    sizes: dict[tuple[str, int, tuple[bool, bool]], int] = {}
    gold: set[int] = set()
    for field_id, layout in model.layouts.items():
        names = layout.shape.figure_variables()
        gold.update(layout.figure_variable(n) for n in GOLD_FIGURES if n in names)
        for cell in range(layout.cells):
            if layout.shape.items:
                gold.update(_item(layout, name, cell) for name in GOLD_ITEMS)
            for index, c in enumerate(layout.classes):
                group = (field_id, cell, (c.answerable, c.majority))
                group_of[_class(layout, cell, index)] = group
                sizes[group] = sizes.get(group, 0) + 1
    out: set[Key] = set()
    for key, quantity in model.quantities.items():
        touched: dict[tuple[str, int, tuple[bool, bool]], list[int]] = {}
        plain = True
        for variable, coefficient in quantity.form:
            part = group_of.get(variable)
            if part is None:
                plain = plain and variable in gold
            else:
                touched.setdefault(part, []).append(coefficient)
        if (
            plain
            and quantity.form
            and all(
                len(found) == sizes[group] and len(set(found)) == 1
                for group, found in touched.items()
            )
        ):
            out.add(key)
    return frozenset(out)


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
        return self.status in (PROTECTED, DERIVABLE)


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


def audit_publication(reports: Sequence[SharedReport], systems: Sequence[str]) -> PublicationAudit:
    """The outsider's attack on several shared reports of one cohort held together.

    ``systems``: each report's system label (equal labels: the same predictions).
    A number is judged under the largest min cell of the publication: a count one
    product shows under a smaller rule is then a failure of the others' rule.

    Labels are not modelled jointly yet: each report is read without its labels
    (each product's own audit, which models them, still runs).

    Raises:
        ChartscoreError: ``usage`` for no reports or a label count that differs.
    """
    if not reports or len(reports) != len(systems):
        raise ChartscoreError(ErrorCode.USAGE)
    own = tuple(audit(report).passed for report in reports)
    reports = [_without_labels(report) for report in reports]
    models = [model_of(report) for report in reports]
    rules = [report.disclosure.min_cell for report in reports]
    model = PublicationModel(models, systems, rules)
    min_cell = max(rules)
    published: dict[Key, int] = {}
    hidden: list[tuple[int, Key]] = []
    for index, report in enumerate(reports):
        for key, value in published_values(report).items():
            if key not in models[index].quantities:
                continue
            if value is None:
                hidden.append((index, key))
            else:
                published[product_key(index, key)] = value
    rows: list[PublicationRow] = []
    solver: RangeSolver | None = None
    problem = ""
    try:
        solver = RangeSolver(model, published, knowledge=model.knowledge(published, min_cell))
    except Inconsistent:
        problem = "inconsistent"
    except Unresolved:
        problem = UNRESOLVED
    if solver is None:
        row = PublicationRow(0, ("overall", "", "published_numbers"), None, None, problem)
        return PublicationAudit(own, (row,), min_cell)
    for index, key in hidden:
        form = model.quantities[product_key(index, key)].form
        try:
            low, high = solver.range_of(form)
        except (Unresolved, Inconsistent):
            rows.append(PublicationRow(index, key, None, None, UNRESOLVED))
            continue
        rows.append(PublicationRow(index, key, low, high, hidden_status(low, high, min_cell)))
    return PublicationAudit(own, tuple(rows), min_cell)


__all__ = [
    "PublicationAudit",
    "PublicationModel",
    "PublicationRow",
    "audit_publication",
    "gold_only_keys",
    "product_key",
]
