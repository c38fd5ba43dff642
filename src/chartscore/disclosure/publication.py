"""One publication: the attacker holds several shared documents of one cohort at once.

A registry publishes several products of one cohort: each system's shared report,
variants of one system's (with and without strata, at another min cell), shared
comparisons of two systems. Each passes its own audit; together they may not
(docs/disclosure.md, "One publication"). :class:`PublicationModel` is the
attacker's model of them all:

- every product keeps its own model's variables (its outcome classes, item and
  figure counts), side by side;
- products are tied by what they share. Two products of **one system** count the
  same rows into the same classes: each class (summed over stratum cells where
  their strata differ), each item count and each figure count is equal in both.
  Two products of **different systems** share only the gold: per cell, the rows
  of each gold part (answerable or not; in or out of the majority category when
  both split it), the gold items and the dates with a distance are equal.
- a **shared comparison** counts the same rows as both systems' reports, by the
  pair of states a row has; its paired classes are split by the stratum cell and
  the majority bit (:mod:`chartscore.disclosure.paired_block`), so that per cell,
  gold part and state a report and its side of the comparison count the same rows.

These ties are exact: given each product's class counts with equal gold-part
totals, a table of the rows by every product's class exists (a transportation
problem with only its margins fixed always has one), so the model admits
exactly what the products together admit (docs/disclosure.md, "One
publication", says where a comparison's strata differ). Labels are not modelled
yet: the joint audit (:func:`chartscore.disclosure.audits.audit_publication`) reads each
report without its labels.

The audit of a publication lives in the one audit module, :mod:`chartscore.disclosure.audits`,
which attacks this model; its old names here (``audit_publication``, ``PublicationAudit``, ...)
are the audit module's own objects.

Value-free: shared documents in, counts and statuses out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from chartscore.disclosure.comparison_model import ComparisonModel, comparison_values
from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.model import (
    ITEM_ROWS,
    ITEM_VARIABLES,
    FieldLayout,
    Key,
    Quantity,
    ReportModel,
    model_of,
    stratum_cells,
)
from chartscore.disclosure.old_paths import moved_to
from chartscore.disclosure.paired_block import PairedBlock, state_of
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_labels import LABEL_PREFIX
from chartscore.documents.shared_quantities import published_values
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


System = str | tuple[str, str]
"""A product's system: a report's label, or a comparison's (baseline, candidate) labels."""


def _systems(system: System) -> tuple[str, ...]:
    return (system,) if isinstance(system, str) else system


@attrs.frozen
class _Descriptors:
    # One field's variables of one product, described for a tie: (variable, stratum cell,
    # answerable, in the majority, the states of the tied systems); its cell count; whether
    # it splits answerable rows by the majority bit.
    rows: list[tuple[int, int, bool, bool, tuple[str, ...]]]
    cells: int
    split: bool


def _descriptors(
    model: ReportModel, system: System, field_id: str, common: tuple[str, ...]
) -> _Descriptors:
    if isinstance(model, PairedBlock):
        assert not isinstance(system, str)
        sides = [system.index(name) + 1 for name in common]
        start = model.layouts[field_id].offset
        rows = [
            (start + i, v.cell, v.paired[0], v.majority, tuple(str(v.paired[s]) for s in sides))
            for i, v in enumerate(model.variables[field_id])
        ]
        cells = 1 + max(v.cell for v in model.variables[field_id])
        return _Descriptors(rows, cells, field_id in model.majority)
    layout = model.layouts[field_id]
    rows = [
        (_class(layout, k, j), k, c.answerable, c.majority, (state_of(c),) * len(common))
        for k in range(layout.cells)
        for j, c in enumerate(layout.classes)
    ]
    return _Descriptors(rows, layout.cells, layout.shape.majority)


def _block(
    comparison: ComparisonModel,
    system: System,
    products: Sequence[ReportModel],
    systems: Sequence[System],
) -> PairedBlock:
    # The comparison's block, split by the cells of its systems' report with the most cells
    # (the first such) and by the majority bit where any of their reports splits it.
    tied = [
        model
        for model, label in zip(products, systems, strict=True)
        if isinstance(label, str)
        and label in _systems(system)
        and not isinstance(model, ComparisonModel)
    ]
    reference = max(tied, key=lambda m: len(stratum_cells(m.strata)), default=None)
    if reference is None:
        return PairedBlock(comparison, (), {}, frozenset())
    cells = {field_id: layout.cells for field_id, layout in reference.layouts.items()}
    majority = frozenset(
        field_id
        for model in tied
        for field_id, layout in model.layouts.items()
        if layout.shape.majority
    )
    return PairedBlock(comparison, reference.strata, cells, majority)


class PublicationModel(ReportModel):
    """The attacker's model of several shared reports of one cohort (see the module).

    Args:
        products: Each product's own model.
        systems: Each product's system label: products with equal labels scored
            the same predictions.
        rules: Each product's min cell (its rule, which the attacker knows).
    """

    def __init__(
        self,
        products: Sequence[ReportModel],
        systems: Sequence[System],
        rules: Sequence[int],
    ) -> None:
        if not products or not len(products) == len(systems) == len(rules):
            raise ChartscoreError(ErrorCode.USAGE)
        self.product_rules = list(rules)
        self.knows_rule = True
        self.threshold = False
        self.composition = {}
        self.error_counts = {}
        self.strata = ()
        self.systems = list(systems)
        self.products = [
            _block(model, system, products, systems)
            if isinstance(model, ComparisonModel)
            else model
            for model, system in zip(products, systems, strict=True)
        ]
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
        self.ties: list[Form] = []
        """The rows ``form == 0`` tying the products (each is two inequalities)."""
        for second in range(1, len(self.products)):
            for first in range(second):
                for row in self._tie(first, second):
                    self.ties.append(row)
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
            own = own_numbers(published, index)
            for form, bound in model.knowledge(own, self.product_rules[index]):
                rows[_shift(form, self.offsets[index]), bound] = None
        return list(rows)

    # --- ties ---------------------------------------------------------------------------

    def _tie(self, first: int, second: int) -> list[Form]:
        # Rows ``form == 0`` that tie two products' shared counts.
        one, other = self.products[first], self.products[second]
        if isinstance(one, PairedBlock) or isinstance(other, PairedBlock):
            return self._block_ties(first, second)
        return self._ties(first, second)

    def _block_ties(self, first: int, second: int) -> list[Form]:
        # A comparison and another product: per cell (under the same strata), gold part and
        # the states of the systems both count, the same rows (see paired_block).
        one, other = self.products[first], self.products[second]
        common = tuple(
            sorted(set(_systems(self.systems[first])) & set(_systems(self.systems[second])))
        )
        same_cells = one.strata == other.strata
        out: list[Form] = []
        for field_id in one.layouts:
            if field_id not in other.layouts:
                continue
            left = _descriptors(one, self.systems[first], field_id, common)
            right = _descriptors(other, self.systems[second], field_id, common)
            split = left.split and right.split
            cells = same_cells and left.cells == right.cells
            groups: dict[tuple[int, bool, bool, tuple[str, ...]], tuple[list[int], list[int]]] = {}
            for side, found in ((0, left), (1, right)):
                for variable, cell, answerable, bit, states in found.rows:
                    key = (cell if cells else 0, answerable, bit and split, states)
                    groups.setdefault(key, ([], []))[side].append(variable)
            for key in sorted(groups, key=repr):
                mine, theirs = groups[key]
                out.append(self._difference(first, second, mine, theirs))
        return [row for row in out if row]

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


def own_numbers(published: Mapping[Key, int], index: int) -> dict[Key, int]:
    """Product ``index``'s numbers of ``published`` (joint keys), by its own keys
    (:func:`product_key`'s inverse)."""
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


LABEL_GOLD_TOTALS: Final = (".sensitivity.total_count", ".specificity.total_count")
"""A label's gold positives and gold negatives (its sensitivity's and specificity's trials):
answerable rows whose gold holds the label or not, the same in every system's report."""


def label_gold_keys(model: ReportModel) -> frozenset[Key]:
    """A report's per-label gold totals: gold-only numbers the labels' own model holds.

    :func:`gold_only_keys` reads the core classes; a label's counts are variables of its
    own. A publication decides these once too: before, system B's report showed 27 gold
    totals that system A's hid, and copied into A's they let its own audit pin 33 numbers.
    """
    return frozenset(
        key
        for key in model.quantities
        if key[0] == "field"
        and key[2].startswith(LABEL_PREFIX)
        and key[2].endswith(LABEL_GOLD_TOTALS)
    )


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


Product = SharedReport | SharedComparison
"""A product of a publication: a shared report or a shared comparison."""


class JointPublication:
    """The joint model of a publication, its published numbers and its hidden ones.

    Inside the disclosure engine only (the audit, the leak check and the joint choice
    of :mod:`chartscore.disclosure.joint_choice` share it, so the choice attacks
    exactly what the audit attacks).

    Attributes:
        model: The :class:`PublicationModel` of every product.
        min_cell: The publication's largest min cell (the one a number is judged by).
        published: Every shown number, in joint keys (:func:`product_key`).
        hidden: Each hidden number as (product index, the product's own key).
    """

    def __init__(self, products: Sequence[Product], systems: Sequence[System]) -> None:
        if not products or len(products) != len(systems):
            raise ChartscoreError(ErrorCode.USAGE)
        pairs = zip(products, systems, strict=True)
        if any(isinstance(p, SharedReport) != isinstance(s, str) for p, s in pairs):
            raise ChartscoreError(ErrorCode.USAGE)
        models: list[ReportModel] = []
        values: list[Mapping[Key, int | None]] = []
        for product in products:
            if isinstance(product, SharedReport):
                report = _without_labels(product)
                models.append(model_of(report))
                values.append(published_values(report))
            else:
                paired = ComparisonModel(product.disclosure.field_types)
                models.append(paired)
                values.append(comparison_values(product, paired))
        rules = [product.disclosure.min_cell for product in products]
        self.model = PublicationModel(models, systems, rules)
        self.min_cell = max(rules)
        self.published: dict[Key, int] = {}
        self.hidden: list[tuple[int, Key]] = []
        for index, found in enumerate(values):
            for key, value in found.items():
                quantity = models[index].quantities.get(key)
                if quantity is None:
                    continue
                if value is None:
                    self.hidden.append((index, key))
                elif not quantity.derived:
                    self.published[product_key(index, key)] = value

    def solver(
        self,
        published: Mapping[Key, int] | None = None,
        knowledge: Sequence[tuple[Form, int]] | None = None,
    ) -> tuple[RangeSolver | None, str]:
        """The solver of the published numbers (default: the products' own), or None and
        why (inconsistent, unresolved). ``knowledge``: the rule's rows of ``published``
        (:meth:`PublicationModel.knowledge`), when the caller has them already."""
        shown = self.published if published is None else published
        if knowledge is None:
            knowledge = self.model.knowledge(shown, self.min_cell)
        try:
            return RangeSolver(self.model, shown, knowledge=knowledge), ""
        except Inconsistent:
            return None, "inconsistent"
        except Unresolved:
            return None, "unresolved"


__getattr__ = moved_to(
    __name__,
    "chartscore.disclosure.audits.publication",
    (
        "PublicationAudit",
        "PublicationRow",
        "audit_publication",
        "publication_consistent",
        "publication_leaks",
    ),
)
"""The old path of the audit's names that moved (:mod:`chartscore.disclosure.old_paths`)."""


__all__ = [
    "JointPublication",
    "Product",
    "PublicationModel",
    "System",
    "gold_only_keys",
    "label_gold_keys",
    "own_numbers",
    "product_key",
]
