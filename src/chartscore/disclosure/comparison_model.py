"""The attacker's model of a shared comparison: paired outcome classes, and their sums.

A comparison scores two systems on the same gold rows, so a row's outcome is
the *pair* of the two systems' outcome classes. For the numbers a shared
comparison publishes (the gold counts, each system's missing, answered and
abstained counts, and the core paired metrics: :data:`SHARED_PAIRED_METRICS`),
one system's class of a row needs only:

- answerable rows: missing, abstained, answered with an exact agreement,
  answered with a normalized-only agreement (not for boolean fields, whose
  answers of the type agree exactly or not at all), or answered otherwise
  (a disagreement or an answer of the wrong type);
- unanswerable rows: missing, abstained or answered.

A paired class is an answerability and one such state per system: 25 (16
boolean) answerable and 9 unanswerable classes per field, any of which a real
row can fall in. Every protected quantity of a field slice is a sum of paired
classes; a pooled slice's is the sum of its fields'. Each quantity has its own
identity (:func:`quantity_names`): which system, or which cell of the paired
table, it counts.

The published rule adds nothing here (the ``ReportModel.knowledge`` of the
shared report gets its rows from item counts, which a shared comparison does
not publish): a field slice's number counts rows, one per case, and a pooled
number's cases are at most its rows, which its own equality already states.

Value-free: names and integers only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Final, cast

import attrs

from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.model import FieldLayout, Key, Quantity, ReportModel
from chartscore.disclosure.rule import FAILURES, SUCCESS
from chartscore.documents.shared_comparison import (
    BASELINE_ONLY,
    BOTH,
    CANDIDATE_ONLY,
    GOLD_COUNTS,
    NEITHER,
    SHARED_PAIRED_METRICS,
    SYSTEM_COUNTS,
    SYSTEMS,
    SharedComparison,
    paired_quantity,
    side_quantity,
    system_count,
    total_quantity,
)

# One system's state of a row (see the module docstring).
MISSING: Final = "missing"
ABSTAINED: Final = "abstained"
EXACT: Final = "exact"
NORMALIZED: Final = "normalized"
OTHER: Final = "other"
ANSWERED: Final = "answered"

_ANSWERED_STATES: Final = frozenset({EXACT, NORMALIZED, OTHER, ANSWERED})


@attrs.frozen
class Cell:
    """Which rows a quantity counts, in terms of one system's row tests.

    ``test`` names a count (``answerable_count``...) or a metric; a row is
    counted when it is in the test's trials (every row, for a count) and each
    system's success (the count's own test, for a count) is as required
    (``None``: either).
    """

    test: str
    baseline: bool | None = None
    candidate: bool | None = None

    def counts(
        self,
        trial: Callable[[str, object], bool],
        hit: Callable[[str, object], bool],
        baseline: object,
        candidate: object,
    ) -> bool:
        """Whether a row whose systems' classes are ``baseline`` and ``candidate`` is counted."""
        if not trial(self.test, baseline):
            return False
        for wanted, row in ((self.baseline, baseline), (self.candidate, candidate)):
            if wanted is not None and hit(self.test, row) != wanted:
                return False
        return True


def quantity_cells() -> dict[str, tuple[Cell, bool]]:
    """Every protected quantity of a slice: its rows, and whether it is derived.

    A derived quantity (each system's failures, and the paired table's
    ``both`` and ``neither``) is never a JSON number: it is known exactly when
    the numbers it follows from are published.
    """
    # A gold count's test is the same on either system's row: read on the baseline's.
    out: dict[str, tuple[Cell, bool]] = {
        name: (Cell(name, baseline=True), False) for name in GOLD_COUNTS
    }
    for system in SYSTEMS:
        for count in SYSTEM_COUNTS:
            wanted = {"baseline": True} if system == "baseline" else {"candidate": True}
            out[system_count(system, count)] = (Cell(count, **wanted), False)
    for metric in SHARED_PAIRED_METRICS:
        out[total_quantity(metric)] = (Cell(metric), False)
        out[side_quantity(metric, "baseline", SUCCESS)] = (Cell(metric, baseline=True), False)
        out[side_quantity(metric, "candidate", SUCCESS)] = (Cell(metric, candidate=True), False)
        out[side_quantity(metric, "baseline", FAILURES)] = (Cell(metric, baseline=False), True)
        out[side_quantity(metric, "candidate", FAILURES)] = (Cell(metric, candidate=False), True)
        out[paired_quantity(metric, BASELINE_ONLY)] = (Cell(metric, True, False), False)
        out[paired_quantity(metric, CANDIDATE_ONLY)] = (Cell(metric, False, True), False)
        out[paired_quantity(metric, BOTH)] = (Cell(metric, True, True), True)
        out[paired_quantity(metric, NEITHER)] = (Cell(metric, False, False), True)
    return out


def derived_terms(name: str) -> tuple[tuple[str, int], ...]:
    """A derived quantity as a sum of published JSON numbers of its slice (name, coefficient)."""
    metric, _, rest = name.partition(".")
    total = total_quantity(metric)
    if rest.endswith("." + FAILURES):
        system = rest.split(".", 1)[0]
        return ((total, 1), (side_quantity(metric, system, SUCCESS), -1))
    if rest == BOTH:
        return (
            (side_quantity(metric, "baseline", SUCCESS), 1),
            (paired_quantity(metric, BASELINE_ONLY), -1),
        )
    if rest == NEITHER:
        return (
            (total, 1),
            (side_quantity(metric, "baseline", SUCCESS), -1),
            (paired_quantity(metric, CANDIDATE_ONLY), -1),
        )
    raise ValueError("not a derived quantity")


# --------------------------------------------------------------------------- states


def _state_trial(test: str, state: object) -> bool:
    answerable = cast("tuple[bool, str]", state)[0]
    if test in ("exact_agreement", "normalized_agreement", "answerable_abstention"):
        return answerable
    if test == "unanswerable_answer":
        return not answerable
    return True  # counts, abstention_correctness


def _state_hit(test: str, state: object) -> bool:
    answerable, s = cast("tuple[bool, str]", state)
    answered = s in _ANSWERED_STATES
    tests: dict[str, bool] = {
        "field_count": True,
        "answerable_count": answerable,
        "unanswerable_count": not answerable,
        "missing_count": s == MISSING,
        "answered_count": answered,
        "abstained_count": s == ABSTAINED,
        "exact_agreement": answerable and s == EXACT,
        "normalized_agreement": answerable and s in (EXACT, NORMALIZED),
        "abstention_correctness": (answerable and answered) or (not answerable and s == ABSTAINED),
        "answerable_abstention": answerable and s == ABSTAINED,
        "unanswerable_answer": not answerable and answered,
    }
    return tests[test]


PairedClass = tuple[bool, str, str]
"""(answerable, the baseline's state, the candidate's state)."""


def paired_classes(field_type: str) -> tuple[PairedClass, ...]:
    """Every paired class of a field of this type, in a fixed order."""
    answerable = [MISSING, ABSTAINED, EXACT, OTHER]
    if field_type != "boolean":
        answerable.insert(3, NORMALIZED)
    unanswerable = [MISSING, ABSTAINED, ANSWERED]
    out: list[PairedClass] = []
    for flag, states in ((True, answerable), (False, unanswerable)):
        out += [(flag, b, c) for b in states for c in states]
    return tuple(out)


@cache
def counted_classes(field_type: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each quantity of a field of this type, with the indices of the paired classes it counts.

    In :func:`quantity_cells` order, indices in :func:`paired_classes` order. A function of
    the type name alone, remembered: every comparison model of a publication (eight on the
    study) asked the same 54 cell tests of every class of every field again.
    """
    classes = paired_classes(field_type)
    return tuple(
        (
            name,
            tuple(
                index
                for index, (answerable, b, c) in enumerate(classes)
                if cell.counts(_state_trial, _state_hit, (answerable, b), (answerable, c))
            ),
        )
        for name, (cell, _) in quantity_cells().items()
    )


@attrs.frozen
class _Layout:
    # What the range solver reads of a field's variables: where they start, how many.
    offset: int
    size: int


class ComparisonModel(ReportModel):
    """The linear model of a shared comparison's shape (field ids and types).

    A :class:`~chartscore.disclosure.model.ReportModel` for the range solver,
    which reads the variables' layout (``layouts``: each field's offset and
    size), ``quantities``, ``size`` and ``inequalities``.

    Args:
        field_types: Every field id's type name.

    Attributes:
        classes: Each field's paired classes, in variable order.
    """

    def __init__(self, field_types: Mapping[str, str]) -> None:
        self.knows_rule = True
        cells = quantity_cells()
        offset = 0
        layouts: dict[str, _Layout] = {}
        self.classes: dict[str, tuple[PairedClass, ...]] = {}
        field_forms: dict[str, dict[str, Form]] = {}
        for field_id in sorted(field_types):
            classes = paired_classes(field_types[field_id])
            self.classes[field_id] = classes
            layouts[field_id] = _Layout(offset, len(classes))
            field_forms[field_id] = {
                name: tuple((offset + index, 1) for index in indices)
                for name, indices in counted_classes(field_types[field_id])
            }
            offset += len(classes)
        self.size = offset
        # The solver reads only each layout's offset and size (a field's block of variables).
        self.layouts = cast("dict[str, FieldLayout]", layouts)
        self.quantities: dict[Key, Quantity] = {}
        for field_id, forms in field_forms.items():
            for name, form in forms.items():
                key = ("field", field_id, name)
                self.quantities[key] = Quantity(key, form, derived=cells[name][1])
        pooled: list[tuple[str, str, list[str]]] = [("overall", "", sorted(field_types))]
        for type_name in sorted(set(field_types.values())):
            members = sorted(f for f, t in field_types.items() if t == type_name)
            pooled.append(("field_type", type_name, members))
        for kind, name, members in pooled:
            for quantity, (_, derived) in cells.items():
                form = add(*((field_forms[f][quantity], 1) for f in members))
                key = (kind, name, quantity)
                self.quantities[key] = Quantity(key, form, derived=derived)
        self.inequalities: list[Form] = []
        self.cases: dict[Key, Form] = {}
        self.carriers: dict[Key, Form] = {}
        self._negated: dict[Form, Form] = {}
        self.composition: dict[Key, int] = {}
        """Numbers the attacker knows whatever the comparison publishes, with their values:
        each field's ``field_count`` (every chart has every field) and the gold-only numbers
        another product of the publication shows (set by ``share_comparison`` inside); the
        outside audit knows only what the document shows."""

    def knowledge(self, published: Mapping[Key, int], min_cell: int) -> list[tuple[Form, int]]:
        """What the outsider knows beyond the published numbers, as rows ``form >= bound``.

        The rule adds nothing: every shown number's cases are bounded by its own
        equality (module doc). The composition and what another product shows
        (:attr:`composition`) are known as equalities, whatever this comparison
        publishes.
        """
        rows: list[tuple[Form, int]] = []
        for key, value in sorted(self.composition.items()):
            form = self.quantities[key].form
            negated = self._negated.get(form)
            if negated is None:  # asked again by every solver of a suppression's rounds
                negated = self._negated[form] = add((form, -1))
            rows += [(form, value), (negated, -value)]
        return rows

    def most_item_rows(self, point: Sequence[int]) -> dict[int, int]:
        """No rows-with-items unknowns in a comparison."""
        return {}


def comparison_values(shared: SharedComparison, model: ComparisonModel) -> dict[Key, int | None]:
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
