"""The attacker's model: every number of a report as a linear function of integer counts.

For one field, every gold row falls in exactly one *outcome class*
(:class:`OutcomeClass`): answerable or not; missing, abstained or answered;
for answers, of the wrong type or not and their evidence (none, evidence that does not
support them, or support; supported or not in a report without ``evidence_provided``); for answered
answerable rows of the right type, exact, normalized-only or disagreeing
agreement (with the tolerance and ordinal splits of disagreement); and for
fields with a majority baseline, whether an answerable row is in the majority
gold category. Multi-select fields add three item counts (matched, answered
and gold items). Every count, success, total, failure and kappa ``pairs`` of a
field slice is a sum of class counts (or item counts); a pooled slice's number
is the sum of its fields' numbers. docs/disclosure.md states the model in full.

The attacker also knows the published rule: a shown nonzero number has at
least ``min_cell`` cases. For item counts, whose cases are rows with items
(five more unknowns per multi-select field, :data:`ITEM_ROWS`), that is a
fact beyond the equalities: :meth:`ReportModel.knowledge`.

:class:`ReportModel` builds those linear forms for every protected quantity of
a report from its shape alone (field types and metric names), which is all
the audit may know. It is value-free: names and integers only.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Final

import attrs

from chartscore import metrics as catalog
from chartscore.disclosure.error_counts import nonzero_bounds, public_unit
from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.label_model import ClassSums, LabelLayout
from chartscore.disclosure.rule import (
    FAILURES,
    IGNORED_COUNT,
    PAIRS,
    SUCCESS,
    TOTAL,
    metric_quantity,
)
from chartscore.documents.plugin_layout import metric_name, split_metric
from chartscore.documents.shared_figures import (
    AGREED_Q,
    DISAGREED_Q,
    GOLD_ROWS_Q,
    PAIRS_Q,
    ROWS_Q,
    WITHOUT_Q,
)
from chartscore.documents.shared_report import SharedReport
from chartscore.documents.tally import CORE_METRICS, COUNT_NAMES
from chartscore.documents.tally import OPTIONAL_CORE_METRICS as OPTIONAL_CORE
from chartscore.stats.clustered import z_for

MIN_NONZERO_ERRORS: Final = 3
"""A positive magnitude whose two largest parts are at most 85% of it has three nonzero parts."""

Key = tuple[str, str, str]
"""A protected quantity: (slice kind, slice name, quantity name)."""


MISSING: Final = "missing"
ABSTAINED: Final = "abstained"
ANSWERED: Final = "answered"
EXACT: Final = "exact"
NORMALIZED: Final = "normalized"
DISAGREE: Final = "disagree"


@attrs.frozen
class OutcomeClass:
    """One outcome class of a gold row (see the module docstring).

    ``agreement`` is ``""`` unless the row is answerable, answered and of the
    right type. ``within_tolerance``, ``similar`` (fuzzy) and ``within_one``
    hold for exact and normalized agreement too; ``later`` and ``earlier`` only
    for disagreement; ``matches_pattern`` (regex fields) with any agreement (a
    pattern need not match its own text); ``labels`` holds one label per plugin
    of the field (its shape's order) for such rows, and is empty otherwise.
    """

    answerable: bool
    status: str
    wrong_type: bool = False
    supported: bool = False
    evidenced: bool = False
    agreement: str = ""
    within_tolerance: bool = False
    later: bool = False
    earlier: bool = False
    within_one: bool = False
    majority: bool = False
    similar: bool = False
    matches_pattern: bool = False
    labels: tuple[str, ...] = ()


@attrs.frozen
class FieldShape:
    """What the attacker knows about one field: its type and which metrics it reports.

    Attributes:
        field_type: The field's type name.
        tolerance: It reports ``tolerance_agreement``.
        ordinal: It reports the ordinal metrics.
        majority: It reports ``majority_baseline``.
        items: It reports ``item_precision`` and ``item_recall``.
        kappa: Its slice holds kappa ``pairs``.
        fuzzy: It reports ``fuzzy_agreement``.
        pattern: It reports ``pattern_agreement``.
        plugins: Its plugins and their labels, sorted: each labels every
            answerable row answered with a value of the type exactly once.
        magnitude: ``"number"`` or ``"date"`` when its slice publishes an error
            magnitude (its pairs and gold rows are quantities), else ``""``.
        uncertainty: Its slice publishes declared-uncertainty counts.
        nonzero_errors: Its mean absolute error is shown: the pairs with a
            nonzero error are an unknown of the model, at least ``min_cell`` by
            the threshold rule and bounded by the published moments
            (:mod:`chartscore.disclosure.error_counts`).
        labels: Its declared labels, in report order, when its slice publishes
            per-label confusion metrics (:mod:`chartscore.disclosure.label_model`).
        evidenced: It reports ``evidence_provided`` (a document written before that
            metric does not): an answer's evidence is then one of three (none, evidence
            that does not support it, support), else one of two (supported or not).
    """

    field_type: str
    tolerance: bool = False
    ordinal: bool = False
    majority: bool = False
    items: bool = False
    kappa: bool = False
    fuzzy: bool = False
    pattern: bool = False
    plugins: tuple[tuple[str, tuple[str, ...]], ...] = ()
    magnitude: str = ""
    evidenced: bool = False
    uncertainty: bool = False
    nonzero_errors: bool = False
    labels: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        field_type: str,
        metric_names: Iterable[str],
        *,
        kappa: bool,
        magnitude: bool = False,
        uncertainty: bool = False,
        nonzero_errors: bool = False,
        labels: Iterable[str] = (),
    ) -> FieldShape:
        """The shape of a field slice holding ``metric_names`` (and the figures' counts).

        ``labels``: the declared labels whose confusion metrics the slice publishes.
        """
        names = set(metric_names)
        plugin_labels: dict[str, list[str]] = {}
        for name in sorted(names):
            parts = split_metric(name)
            if parts is not None:
                plugin_labels.setdefault(parts[0], []).append(parts[1])
        return cls(
            field_type=field_type,
            tolerance="tolerance_agreement" in names,
            ordinal="ordinal_later" in names,
            majority="majority_baseline" in names,
            items="item_precision" in names,
            kappa=kappa,
            fuzzy="fuzzy_agreement" in names,
            pattern="pattern_agreement" in names,
            plugins=tuple(
                (plugin, tuple(found)) for plugin, found in sorted(plugin_labels.items())
            ),
            magnitude=field_type if magnitude else "",
            uncertainty=uncertainty,
            nonzero_errors=nonzero_errors and magnitude,
            labels=tuple(labels),
            evidenced="evidence_provided" in names,
        )

    def figure_variables(self) -> tuple[str, ...]:
        """The unknowns the figures' counts add (docs/disclosure.md, "Validation figures").

        A date field's pairs and gold rows with a distance (a number always has
        one: its pairs are its answered answerable rows of the type, its gold
        rows its answerable rows), the answered answerable rows with an
        uncertainty that agree and that do not, and the pairs with a nonzero
        error when the mean absolute error is shown.
        """
        names: tuple[str, ...] = ()
        if self.magnitude == "date":
            names += ("distance_pairs", "distance_gold")
        if self.uncertainty:
            names += ("uncertain_agreed", "uncertain_disagreed")
        if self.nonzero_errors:
            names += ("nonzero_errors",)
        return names

    def metric_names(self) -> tuple[str, ...]:
        """The binomial metrics of this field's slice, in report order."""
        names = [name for name in CORE_METRICS if self.evidenced or name not in OPTIONAL_CORE]
        if self.tolerance:
            names.append("tolerance_agreement")
        if self.fuzzy:
            names.append("fuzzy_agreement")
        if self.pattern:
            names.append("pattern_agreement")
        if self.ordinal:
            names += ["ordinal_later", "ordinal_earlier", "ordinal_within_one"]
        if self.items:
            names += ["item_precision", "item_recall"]
        if self.majority:
            names.append("majority_baseline")
        names += [metric_name(plugin, label) for plugin, labels in self.plugins for label in labels]
        return tuple(names)


def _answered_right_type(shape: FieldShape) -> list[dict[str, object]]:
    # The agreement splits of an answered answerable row of the right type.
    # A boolean answer of the right type is a boolean: normalized equals exact.
    boolean = shape.field_type == "boolean"
    agreements = [EXACT, DISAGREE] if boolean else [EXACT, NORMALIZED, DISAGREE]
    out: list[dict[str, object]] = []
    for agreement in agreements:
        agrees = agreement != DISAGREE
        base: dict[str, object] = {"agreement": agreement}
        tolerance_options = [agrees] if agrees or not shape.tolerance else [False, True]
        for within_tolerance in tolerance_options:
            with_tolerance = {**base, "within_tolerance": within_tolerance and shape.tolerance}
            if not shape.ordinal:
                out.append(with_tolerance)
            elif agrees:
                out.append({**with_tolerance, "within_one": True})
            else:
                for later, within_one in itertools.product((True, False), (True, False)):
                    out.append(
                        {
                            **with_tolerance,
                            "later": later,
                            "earlier": not later,
                            "within_one": within_one,
                        }
                    )
    if shape.fuzzy:  # agreement is similarity 1; a disagreeing answer may be similar or not
        out = [
            {**split, "similar": similar}
            for split in out
            for similar in ([True] if split["agreement"] != DISAGREE else [False, True])
        ]
    if shape.pattern:  # any answer, even gold's own text, may match the pattern or not
        out = [{**split, "matches_pattern": match} for split in out for match in (False, True)]
    if shape.plugins:  # each plugin gives one of its labels, whatever the agreement
        choices = itertools.product(*(labels for _, labels in shape.plugins))
        out = [{**split, "labels": labels} for labels in choices for split in out]
    return out


_SUPPORT_STATES: Final = ((False, False), (False, True))
"""(evidenced, supported) of an answer in a slice without ``evidence_provided``."""
_EVIDENCE_STATES: Final = ((False, False), (True, False), (True, True))
"""(evidenced, supported) of an answer in a slice with it: support needs a span."""


def field_classes(shape: FieldShape) -> tuple[OutcomeClass, ...]:
    """Every outcome class a row of a field with this shape can fall in, in a fixed order."""
    classes: list[OutcomeClass] = []
    for answerable in (True, False):
        splits: list[dict[str, object]] = [{"status": MISSING}, {"status": ABSTAINED}]
        evidence = _EVIDENCE_STATES if shape.evidenced else _SUPPORT_STATES
        for wrong_type, (evidenced, supported) in itertools.product((False, True), evidence):
            answered: dict[str, object] = {
                "status": ANSWERED,
                "wrong_type": wrong_type,
                "supported": supported,
                "evidenced": evidenced,
            }
            if answerable and not wrong_type:
                splits += [{**answered, **extra} for extra in _answered_right_type(shape)]
            else:
                splits.append(answered)
        majority_options = (True, False) if answerable and shape.majority else (False,)
        for split in splits:
            for majority in majority_options:
                classes.append(
                    OutcomeClass(answerable=answerable, majority=majority, **split)  # type: ignore[arg-type]
                )
    return tuple(classes)


Predicate = Callable[[OutcomeClass], bool]


def _answered(c: OutcomeClass) -> bool:
    return c.status == ANSWERED


def _agrees(c: OutcomeClass) -> bool:
    return c.agreement in (EXACT, NORMALIZED)


_AGREEMENT_BITS: Final = {EXACT: catalog.EXACT | catalog.NORMALIZED, NORMALIZED: catalog.NORMALIZED}
_STATUS_BITS: Final = {MISSING: catalog.MISSING, ANSWERED: catalog.ANSWERED, ABSTAINED: 0}


def class_mask(c: OutcomeClass) -> int:
    """The outcome bits a row of class ``c`` has: the catalog's tests then apply to classes."""
    return (
        (catalog.ANSWERABLE if c.answerable else 0)
        | _STATUS_BITS[c.status]
        | (catalog.WRONG_TYPE if c.wrong_type else 0)
        | (catalog.SUPPORTED if c.supported else 0)
        | (catalog.EVIDENCED if c.evidenced else 0)
        | _AGREEMENT_BITS.get(c.agreement, 0)
        | (catalog.TOLERANCE if c.within_tolerance else 0)
        | (catalog.LATER if c.later else 0)
        | (catalog.EARLIER if c.earlier else 0)
        | (catalog.WITHIN_ONE if c.within_one else 0)
        | (catalog.FUZZY if c.similar else 0)
        | (catalog.PATTERN if c.matches_pattern else 0)
    )


def _test(test: catalog.Test) -> Predicate:
    return lambda c: catalog.passes(test, class_mask(c))


_COUNTS: Final[Mapping[str, Predicate]] = {
    name: _test(test) for name, test in catalog.COUNT_TESTS.items()
}


def _majority(c: OutcomeClass) -> bool:
    return c.answerable and c.majority


# Each row metric as (success, total) predicates: the catalog's tests (docs/metrics.md).
_ROW_METRICS: Final[Mapping[str, tuple[Predicate, Predicate]]] = {
    m.name: (_majority if m.counts == catalog.MAJORITY else _test(m.successes), _COUNTS[m.trials])
    for m in catalog.CATALOG
    if m.counts in (catalog.ROWS, catalog.MAJORITY)
}


def _pairs(c: OutcomeClass) -> bool:
    return c.answerable and c.agreement != ""


@functools.lru_cache(maxsize=1024)
def _both(first: Predicate, second: Predicate) -> Predicate:
    # One predicate per pair (cached, bounded: a plugin label makes a new one per call), so
    # that FieldLayout.where finds its classes once per predicate.
    return lambda c: first(c) and second(c)


@functools.lru_cache(maxsize=1024)
def _but_not(first: Predicate, second: Predicate) -> Predicate:
    return lambda c: first(c) and not second(c)


ITEM_VARIABLES: Final = ("matched_items", "answered_items", "gold_items")
# item metric -> (success variable, total variable)
_ITEM_METRICS: Final = {
    "item_precision": ("matched_items", "answered_items"),
    "item_recall": ("matched_items", "gold_items"),
}
ITEM_ROWS: Final = (
    "matched_rows",
    "answered_rows",
    "gold_rows",
    "unmatched_answer_rows",
    "unmatched_gold_rows",
)
"""A multi-select field's rows with at least one item of each kind: the cases behind its
item counts (the rule's unit), unknowns of the rule-aware attacker."""
# item quantity -> the rows (cases) behind it
_ITEM_CASES: Final = {
    metric_quantity("item_precision", SUCCESS): "matched_rows",
    metric_quantity("item_recall", SUCCESS): "matched_rows",
    metric_quantity("item_precision", TOTAL): "answered_rows",
    metric_quantity("item_recall", TOTAL): "gold_rows",
    metric_quantity("item_precision", FAILURES): "unmatched_answer_rows",
    metric_quantity("item_recall", FAILURES): "unmatched_gold_rows",
}
# Which classes can hold a row of each kind (docs/disclosure.md, the attacker knows the rule):
# gold items need an answerable row; answered items an answer of the type; matched items
# both; an exact or normalized agreement matches every item, so unmatched items need a
# disagreement, an unanswerable answer, or (gold) no answer of the type.
_ITEM_ROW_CLASSES: Final[Mapping[str, Predicate]] = {
    "matched_rows": _pairs,
    "answered_rows": lambda c: _answered(c) and not c.wrong_type,
    "gold_rows": lambda c: c.answerable,
    "unmatched_answer_rows": lambda c: _answered(c) and not c.wrong_type and not _agrees(c),
    "unmatched_gold_rows": lambda c: c.answerable and not _agrees(c),
}


_CHOSEN_LIMIT: Final = 4096
"""The most predicates remembered for one tuple of classes."""


@functools.lru_cache(maxsize=256)
def chosen_classes(classes: tuple[OutcomeClass, ...]) -> dict[Predicate, tuple[int, ...]]:
    """The classes each predicate holds for, by predicate, shared by every layout of
    ``classes`` (a predicate reads a class alone): each model built afresh finds them
    once, not per model."""
    return {}


@attrs.frozen
class FieldLayout:
    """One field's variables in the model: per stratum cell, its classes, then item counts.

    A report with strata splits every variable into one copy per stratum cell
    (the cross-classification of the declared keys: a case has one label per
    key); without strata there is one cell, and the layout is that cell's.

    Attributes:
        shape: The field's shape.
        classes: Its outcome classes (cell ``c``'s variables start at
            ``offset + c * cell_size``).
        offset: The index of its first variable.
        cells: How many stratum cells it is split into (1 without strata).
    """

    shape: FieldShape
    classes: tuple[OutcomeClass, ...]
    offset: int
    cells: int = 1
    _chosen: dict[Predicate, tuple[int, ...]] = attrs.field(
        default=attrs.Factory(lambda self: chosen_classes(self.classes), takes_self=True),
        init=False,
        eq=False,
        repr=False,
    )
    """Each predicate's classes, found once for every layout of these classes: a stratified
    model asks for every cell's forms, a publication builds a model of each report often."""

    @property
    def cell_size(self) -> int:
        """The number of variables of one stratum cell of this field."""
        return len(self.classes) + (len(ITEM_VARIABLES) + len(ITEM_ROWS) if self.shape.items else 0)

    @property
    def size(self) -> int:
        """The number of variables of this field: all its cells, its figures', its labels'."""
        labels = self.label_layout()
        extra = 0 if labels is None else labels.size
        return self.cells * self.cell_size + len(self.shape.figure_variables()) + extra

    def label_layout(self) -> LabelLayout | None:
        """Its label unknowns (after the figures'), or None without published labels."""
        shape = self.shape
        if not shape.labels:
            return None
        items = [self._items(name, None) for name in ITEM_VARIABLES] if shape.items else None
        sums = ClassSums(
            answerable=self.where(_COUNTS["answerable_count"]),
            agreeing=self.where(lambda c: c.answerable and _agrees(c)),
            disagreeing=self.where(lambda c: c.answerable and c.agreement == DISAGREE),
            majority=self.where(lambda c: c.answerable and c.majority) if shape.majority else None,
            matched_items=None if items is None else items[0],
            answered_items=None if items is None else items[1],
            gold_items=None if items is None else items[2],
        )
        start = self.offset + self.cells * self.cell_size + len(shape.figure_variables())
        return LabelLayout(shape.labels, shape.field_type, start, sums)

    def figure_variable(self, name: str) -> int:
        """The index of one of :meth:`FieldShape.figure_variables` (once, after every cell)."""
        start = self.offset + self.cells * self.cell_size
        return start + self.shape.figure_variables().index(name)

    def _cells(self, cells: Sequence[int] | None) -> Sequence[int]:
        return range(self.cells) if cells is None else cells

    def _start(self, cell: int) -> int:
        return self.offset + cell * self.cell_size

    def item_variable(self, name: str, cell: int = 0) -> int:
        """The index of one item count variable of one cell (multi-select fields)."""
        return self._start(cell) + len(self.classes) + ITEM_VARIABLES.index(name)

    def item_rows(self, name: str, cell: int = 0) -> int:
        """The index of one rows-with-items variable (:data:`ITEM_ROWS`) of one cell."""
        return self._start(cell) + len(self.classes) + len(ITEM_VARIABLES) + ITEM_ROWS.index(name)

    def _items(self, name: str, cells: Sequence[int] | None) -> Form:
        return tuple((self.item_variable(name, cell), 1) for cell in self._cells(cells))

    def cases(self, cells: Sequence[int] | None = None) -> dict[str, Form]:
        """The item quantities whose cases are not their own rows, each as its rows' variables.

        Every other quantity of a field slice counts rows, one per case (each
        label's counts too). The variables are used only where a pooled slice
        sums two fields' rows (or a stratum slice some cells' rows). ``cells``:
        those cells only.
        """
        if not self.shape.items:
            return {}
        return {
            name: tuple((self.item_rows(rows, cell), 1) for cell in self._cells(cells))
            for name, rows in _ITEM_CASES.items()
        }

    def carriers(self, cells: Sequence[int] | None = None) -> dict[str, Form]:
        """The item quantities of :meth:`cases`, each as the classes that can hold its rows."""
        if not self.shape.items:
            return {}
        return {
            name: self.where(_ITEM_ROW_CLASSES[rows], cells) for name, rows in _ITEM_CASES.items()
        }

    def cell_atoms(
        self, quantity: str, cell: int, forms: Mapping[str, Form]
    ) -> tuple[Form, Form, Form]:
        """One cell's (rows, carrier, items) of an item quantity of :meth:`cases`.

        ``forms``: the cell's :meth:`forms` (computed once by the caller).
        """
        rows = _ITEM_CASES[quantity]
        return (
            ((self.item_rows(rows, cell), 1),),
            self.where(_ITEM_ROW_CLASSES[rows], [cell]),
            forms[quantity],
        )

    def where(self, predicate: Predicate, cells: Sequence[int] | None = None) -> Form:
        """The form summing the classes for which ``predicate`` holds (in ``cells``: all)."""
        chosen = self._chosen.get(predicate)
        if chosen is None:
            chosen = tuple(i for i, outcome in enumerate(self.classes) if predicate(outcome))
            if len(self._chosen) < _CHOSEN_LIMIT:  # a plugin label's predicate is new per call
                self._chosen[predicate] = chosen
        return tuple(
            (self._start(cell) + index, 1) for cell in self._cells(cells) for index in chosen
        )

    def forms(self, cells: Sequence[int] | None = None) -> dict[str, Form]:
        """Every protected quantity of the field slice as a linear form (over ``cells``: all)."""
        out: dict[str, Form] = {name: self.where(p, cells) for name, p in _COUNTS.items()}
        for metric in self.shape.metric_names():
            if metric in _ITEM_METRICS:
                success_name, total_name = _ITEM_METRICS[metric]
                success = self._items(success_name, cells)
                total = self._items(total_name, cells)
                failures = add((total, 1), (success, -1))
            else:
                success_p, total_p = self._row_metric(metric)
                success = self.where(_both(total_p, success_p), cells)
                total = self.where(total_p, cells)
                failures = self.where(_but_not(total_p, success_p), cells)
            out[metric_quantity(metric, SUCCESS)] = success
            out[metric_quantity(metric, TOTAL)] = total
            out[metric_quantity(metric, FAILURES)] = failures
        if self.shape.kappa:
            out[PAIRS] = self.where(_pairs, cells)
        if cells is None:  # the figures and labels are the field slice's alone
            out.update(self._figure_forms())
            labels = self.label_layout()
            if labels is not None:
                out.update(labels.forms())
        return out

    def _figure_forms(self) -> dict[str, Form]:
        # The figures' counts (docs/disclosure.md, "Validation figures").
        out: dict[str, Form] = {}
        shape = self.shape
        if shape.magnitude == "number":
            out[PAIRS_Q] = self.where(_pairs)
            out[GOLD_ROWS_Q] = self.where(_COUNTS["answerable_count"])
        elif shape.magnitude == "date":
            out[PAIRS_Q] = ((self.figure_variable("distance_pairs"), 1),)
            out[GOLD_ROWS_Q] = ((self.figure_variable("distance_gold"), 1),)
        if shape.uncertainty:
            agreed = ((self.figure_variable("uncertain_agreed"), 1),)
            disagreed = ((self.figure_variable("uncertain_disagreed"), 1),)
            out[AGREED_Q] = agreed
            out[ROWS_Q] = add((agreed, 1), (disagreed, 1))
            out[DISAGREED_Q] = disagreed
            answered = self.where(lambda c: c.answerable and _answered(c))
            out[WITHOUT_Q] = add((answered, 1), (agreed, -1), (disagreed, -1))
        return out

    def _row_metric(self, metric: str) -> tuple[Predicate, Predicate]:
        # A plugin label: answerable rows answered with a value of the type, so labelled.
        parts = split_metric(metric)
        if parts is None:
            return _ROW_METRICS[metric]
        plugin, label = parts
        position = [name for name, _ in self.shape.plugins].index(plugin)

        def labelled(c: OutcomeClass) -> bool:
            return c.answerable and c.agreement != "" and c.labels[position] == label

        return labelled, _COUNTS["answerable_count"]

    def inequalities(self, *, majority: bool = True) -> list[Form]:
        """Structural facts beyond non-negativity, each as ``form >= 0``.

        Items, in every cell: matched <= answered, matched <= gold. Boolean
        majority baseline: the majority holds at least half of the answerable
        rows (of the whole field: its majority is the field's). The figures'
        unknowns within their classes, and the labels' exact facts
        (:meth:`LabelLayout.rows`). ``majority``: with the facts about the
        majority category (an earlier release's may be another category than
        the one its classes count: :mod:`chartscore.disclosure.releases`).
        """
        out: list[Form] = []
        if self.shape.items:
            for cell in range(self.cells):
                matched = ((self.item_variable("matched_items", cell), 1),)
                for other in ("answered_items", "gold_items"):
                    out.append(add((((self.item_variable(other, cell), 1),), 1), (matched, -1)))
        if majority and self.shape.majority and self.shape.field_type == "boolean":
            most = self.where(lambda c: c.answerable and c.majority)
            rest = self.where(lambda c: c.answerable and not c.majority)
            out.append(add((most, 1), (rest, -1)))
        shape = self.shape
        if shape.magnitude == "date":  # pairs <= answers of the type; pairs <= gold rows <= A
            pairs = ((self.figure_variable("distance_pairs"), 1),)
            gold = ((self.figure_variable("distance_gold"), 1),)
            out.append(add((self.where(_pairs), 1), (pairs, -1)))
            out.append(add((gold, 1), (pairs, -1)))
            out.append(add((self.where(_COUNTS["answerable_count"]), 1), (gold, -1)))
        if shape.nonzero_errors:  # a nonzero error is a pair, and a disagreement
            nonzero: Form = ((self.figure_variable("nonzero_errors"), 1),)
            with_distance: Form = (
                ((self.figure_variable("distance_pairs"), 1),)
                if shape.magnitude == "date"
                else self.where(_pairs)
            )
            disagreeing = self.where(lambda c: c.answerable and c.agreement == DISAGREE)
            out.append(add((with_distance, 1), (nonzero, -1)))
            out.append(add((disagreeing, 1), (nonzero, -1)))
        if shape.uncertainty:  # each kind of row with an uncertainty within its classes
            agreed = ((self.figure_variable("uncertain_agreed"), 1),)
            disagreed = ((self.figure_variable("uncertain_disagreed"), 1),)
            agreeing = self.where(lambda c: c.answerable and _agrees(c))
            rest = self.where(lambda c: c.answerable and _answered(c) and not _agrees(c))
            out.append(add((agreeing, 1), (agreed, -1)))
            out.append(add((rest, 1), (disagreed, -1)))
        labels = self.label_layout()
        if labels is not None:
            out += labels.rows(majority=majority)
        return out

    def figure_knowledge(
        self, least: int, bounds: tuple[int, int | None] | None
    ) -> list[tuple[Form, int]]:
        """What a shown mean absolute error says beyond its counts, as ``form >= bound``.

        At least ``least`` pairs have a nonzero error (the threshold rule's
        ``min_cell``; three by the dominance rule alone, which every format
        kept); the moments bound their number (``bounds``, from
        :func:`chartscore.disclosure.error_counts.nonzero_bounds`).
        """
        if not self.shape.nonzero_errors:
            return []
        nonzero = ((self.figure_variable("nonzero_errors"), 1),)
        rows: list[tuple[Form, int]] = [(nonzero, least)]
        if bounds is not None:
            lower, upper = bounds
            rows.append((nonzero, lower))
            if upper is not None:
                rows.append((((nonzero[0][0], -1),), -upper))
        return rows


@attrs.frozen
class Quantity:
    """One protected quantity: its key, its linear form and whether it is a JSON number.

    ``derived`` quantities (a metric's failures) are never published on
    their own: they are known exactly when both parts of the metric are.
    """

    key: Key
    form: Form
    derived: bool = False

    @property
    def parts(self) -> tuple[Key, Key] | None:
        """For failures, the keys of (success_count, total_count); else None."""
        kind, name, quantity = self.key
        if quantity == DISAGREED_Q:  # the rows with an uncertainty less the agreeing ones
            return (kind, name, AGREED_Q), (kind, name, ROWS_Q)
        if not quantity.endswith("." + FAILURES):
            return None
        metric = quantity[: -len(FAILURES) - 1]
        return (kind, name, metric_quantity(metric, SUCCESS)), (
            kind,
            name,
            metric_quantity(metric, TOTAL),
        )


@attrs.frozen
class SliceShape:
    """The quantities a pooled slice holds: metric names, and (overall only) the ignored count.

    ``stratum`` (``"site=A"``) restricts the slice to the stratum cells with
    that label (a stratum slice); empty, it pools every cell.
    """

    metric_names: tuple[str, ...]
    kappa: bool = False
    ignored: bool = False
    stratum: str = ""


Strata = tuple[tuple[str, tuple[str, ...]], ...]
"""Declared strata: (key, labels) pairs sorted by key (public: the schema declares them)."""


def stratum_cells(strata: Strata) -> list[tuple[int, ...]]:
    """Every stratum cell, the cross-classification of the keys' labels (one cell without)."""
    return list(itertools.product(*(range(len(labels)) for _, labels in strata)))


def cells_of(strata: Strata, stratum: str) -> list[int]:
    """The cells (indices of :func:`stratum_cells`) of one stratum ``key=label``."""
    key, _, label = stratum.partition("=")
    keys = [name for name, _ in strata]
    position = keys.index(key)
    wanted = strata[position][1].index(label)
    return [i for i, cell in enumerate(stratum_cells(strata)) if cell[position] == wanted]


class ReportModel:
    """The linear model of one report's shape.

    Args:
        fields: Each field id's :class:`FieldShape`.
        pooled: Each pooled slice as (kind, name) -> (member field ids, shape):
            ``("overall", "")`` and ``("field_type", type_name)``; with strata
            also ``("stratum", "site=A")`` and ``("stratum_field_type",
            "site=A/date")``, whose shape names the stratum.

        knows_rule: The attacker knows the published rule (:meth:`knowledge`);
            False only to compare with the attacker that does not.
        strata: The declared strata: every field's variables split into one
            copy per stratum cell (:func:`stratum_cells`); none, one cell.
        error_counts: Per field whose mean absolute error is shown, the bounds
            ``(lower, upper)`` its moments put on its nonzero errors
            (:func:`chartscore.disclosure.error_counts.nonzero_bounds`).
        threshold: The attacker knows that a shown magnitude has at least
            ``min_cell`` nonzero errors (``share``'s own model); else at least
            three, which holds for documents of every format (the audit's).

    Attributes:
        layouts: Each field's variables.
        size: The number of variables.
        quantities: Every protected quantity of the report, by key, in a fixed order.
        inequalities: Structural facts as forms that must be ``>= 0``.
        cases: For every quantity whose distinct cases are not its own rows (item
            counts, and pooled sums of them), a form at least its cases.
        carriers: For the same quantities, the classes that can hold those cases
            (what the rule, through :meth:`knowledge`, can bound).
    """

    def __init__(
        self,
        fields: Mapping[str, FieldShape],
        pooled: Mapping[tuple[str, str], tuple[Sequence[str], SliceShape]],
        *,
        knows_rule: bool = True,
        strata: Strata = (),
        error_counts: Mapping[str, tuple[int, int | None]] | None = None,
        threshold: bool = False,
    ) -> None:
        self.knows_rule = knows_rule
        self.threshold = threshold
        self.composition: dict[Key, int] = {}
        """Quantities the attacker knows whatever is published, with their values: each
        field's ``field_count`` (every case of an abstraction form has every field), set
        by ``share`` inside; the outside audit knows only what the document shows."""
        self._fixed_rows: dict[tuple[object, ...], dict[tuple[Form, int], None]] = {}
        self.strata = strata
        self.error_counts = dict(error_counts or {})
        cell_count = len(stratum_cells(strata))
        offset = 0
        self.layouts: dict[str, FieldLayout] = {}
        for field_id in sorted(fields):
            classes = field_classes(fields[field_id])
            layout = FieldLayout(fields[field_id], classes, offset, cell_count)
            self.layouts[field_id] = layout
            offset += layout.size
        self.quantities: dict[Key, Quantity] = {}
        field_forms = {field_id: layout.forms() for field_id, layout in self.layouts.items()}
        for field_id, forms in field_forms.items():
            for name, form in forms.items():
                key = ("field", field_id, name)
                derived = name.endswith(FAILURES) or name == DISAGREED_Q
                self.quantities[key] = Quantity(key, form, derived=derived)
        slice_cells: dict[tuple[str, str], list[int] | None] = {}
        for (kind, name), (members, shape) in sorted(pooled.items()):
            cells = cells_of(strata, shape.stratum) if shape.stratum else None
            slice_cells[kind, name] = cells
            member_forms = (
                field_forms if cells is None else {f: self.layouts[f].forms(cells) for f in members}
            )
            names = [*COUNT_NAMES]
            for metric in shape.metric_names:
                names += [metric_quantity(metric, p) for p in (SUCCESS, TOTAL, FAILURES)]
            for quantity in names:
                parts = [member_forms[f][quantity] for f in members if quantity in member_forms[f]]
                key = (kind, name, quantity)
                self.quantities[key] = Quantity(
                    key, add(*((p, 1) for p in parts)), derived=quantity.endswith(FAILURES)
                )
            if shape.ignored:
                # Predictions outside gold: tied to no other number, a variable of its own.
                key = (kind, name, IGNORED_COUNT)
                self.quantities[key] = Quantity(key, ((offset, 1),))
                offset += 1
        self.size = offset
        self.inequalities: list[Form] = [
            row for layout in self.layouts.values() for row in layout.inequalities()
        ]
        self.cases: dict[Key, Form] = {}
        self.carriers: dict[Key, Form] = {}
        # Per item quantity, per field behind it: (its rows, the classes that can hold
        # them, the field's own items of the quantity), each over the slice's cells.
        self._behind: dict[Key, list[tuple[str, Form, Form, Form]]] = {}
        # Per item quantity of a slice of some cells only (a stratum slice): each
        # field's (rows, carrier, items) cell by cell; absent for every other slice.
        self._cell_atoms: dict[Key, list[list[tuple[Form, Form, Form]]]] = {}
        self._forms_of_cell: dict[tuple[str, int], dict[str, Form]] = {}
        for (kind, name), (members, _) in [
            *((("field", f), ([f], None)) for f in self.layouts),
            *sorted(pooled.items()),
        ]:
            cells = slice_cells.get((kind, name))
            layouts = {f: self.layouts[f] for f in members}
            cases = {f: layout.cases(cells) for f, layout in layouts.items()}
            carriers = {f: layout.carriers(cells) for f, layout in layouts.items()}
            slice_forms = (
                field_forms if cells is None else {f: layouts[f].forms(cells) for f in members}
            )
            for quantity in sorted({q for f in members for q in cases[f]}):
                key = (kind, name, quantity)
                if key not in self.quantities:
                    continue
                behind = [
                    (f, cases[f][quantity], carriers[f][quantity], slice_forms[f][quantity])
                    for f in members
                    if quantity in cases[f]
                ]
                self._behind[key] = behind
                self.cases[key] = add(*((rows, 1) for _, rows, _, _ in behind))
                self.carriers[key] = add(*((carrier, 1) for _, _, carrier, _ in behind))
                if cells is not None:
                    self._cell_atoms[key] = [
                        [
                            layouts[f].cell_atoms(quantity, cell, self._cell_forms(f, cell))
                            for cell in cells
                        ]
                        for f, *_ in behind
                    ]
        self._field_keys: dict[str, list[Key]] = {}
        for key in self.quantities:
            if key[0] == "field":
                self._field_keys.setdefault(key[1], []).append(key)

    def knowledge(self, published: Mapping[Key, int], min_cell: int) -> list[tuple[Form, int]]:
        """What the published rule adds to the published numbers, as rows ``form >= bound``.

        The rule: a shown nonzero number is backed by at least ``min_cell``
        cases. A field slice's number counts rows, one per case, so its own
        equality already says so; an item count's cases are its rows with
        such an item, which only some classes can hold (:attr:`carriers`), so
        a shown item count (or failures of two shown parts) of at least
        ``min_cell`` adds ``carrier >= min_cell``. A pooled item count over
        two or more fields has at most the sum of its fields' rows as cases:
        ``sum(rows) >= min_cell``, each field's rows at most its carrier and
        at most its items (a stratum slice's: cell by cell). A number from 1
        to ``min_cell - 1`` breaks the rule (the audit fails it as it stands)
        and adds nothing. docs/disclosure.md states each row.

        Before the rule: the cohort's composition (:attr:`composition`), which
        the attacker knows whatever is published.
        """
        rows = dict(self._fixed_knowledge(min_cell))  # in a fixed order, without repeats
        if not self.knows_rule:
            return list(rows)
        for key, behind in self._behind.items():
            if not self._shown(key, published, min_cell):
                continue
            atoms = self._cell_atoms.get(key)
            if len(behind) == 1:  # its items are published: only the carrier is new
                field_id, _, carrier, _ = behind[0]
                if atoms is not None or not self._implied(field_id, carrier, published, min_cell):
                    rows[carrier, min_cell] = None
                continue
            if atoms is None and any(
                self._shown(("field", f, key[2]), published, min_cell) for f, *_ in behind
            ):
                continue  # one field's own rows reach min_cell: its carrier row says more
            rows[add(*((field_rows, 1) for _, field_rows, _, _ in behind)), min_cell] = None
            for index, (_, field_rows, carrier, items) in enumerate(behind):
                for cell_rows, cell_carrier, cell_items in (
                    [(field_rows, carrier, items)] if atoms is None else atoms[index]
                ):
                    rows[add((cell_carrier, 1), (cell_rows, -1)), 0] = None
                    rows[add((cell_items, 1), (cell_rows, -1)), 0] = None
        return list(rows)

    def _fixed_knowledge(self, min_cell: int) -> dict[tuple[Form, int], None]:
        """The rows of :meth:`knowledge` that no published number changes: the composition
        (both ways) and, with the rule, the figures' rows; built once per composition and
        min cell (``composition`` may be set after the model is built)."""
        composition = tuple(sorted(self.composition.items()))
        errors = tuple(sorted(self.error_counts.items()))
        cache_key = (composition, min_cell, self.knows_rule, self.threshold, errors)
        found = self._fixed_rows.get(cache_key)
        if found is None:
            found = {}
            for key, value in composition:
                form = self.quantities[key].form
                found[form, value] = None
                found[tuple((v, -c) for v, c in form), -value] = None
            if self.knows_rule:
                least = min_cell if self.threshold else MIN_NONZERO_ERRORS
                for field_id, layout in self.layouts.items():
                    for row in layout.figure_knowledge(least, self.error_counts.get(field_id)):
                        found[row] = None
            self._fixed_rows[cache_key] = found
        return found

    def most_item_rows(self, point: Sequence[int]) -> dict[int, int]:
        """Every rows-with-items unknown at its largest value given a point's other values.

        Rows appear only in rows ``rows <= carrier``, ``rows <= items`` and
        ``sum(rows) >= min_cell``, so the largest value keeps a point feasible
        for every row :meth:`knowledge` can add for any numbers the point fits
        (a seed stays a seed when fewer numbers are published).
        """
        out: dict[int, int] = {}
        for field_id, layout in self.layouts.items():
            if not layout.shape.items:
                continue
            for cell in range(layout.cells):
                forms = self._cell_forms(field_id, cell)
                for quantity in _ITEM_CASES:
                    rows, carrier, items = layout.cell_atoms(quantity, cell, forms)
                    out[rows[0][0]] = max(
                        0, min(sum(c * point[v] for v, c in form) for form in (carrier, items))
                    )
        return out

    def _cell_forms(self, field_id: str, cell: int) -> dict[str, Form]:
        # One stratum cell's forms of a field, computed once.
        forms = self._forms_of_cell.get((field_id, cell))
        if forms is None:
            forms = self._forms_of_cell[field_id, cell] = self.layouts[field_id].forms([cell])
        return forms

    def _shown(self, key: Key, published: Mapping[Key, int], min_cell: int) -> bool:
        # Whether a quantity is shown (failures: both parts) with at least min_cell.
        value = published.get(key)
        parts = self.quantities[key].parts
        if value is None and parts is not None and parts[0] in published:
            total = published.get(parts[1])
            value = None if total is None else total - published[parts[0]]
        return value is not None and value >= min_cell

    def _implied(
        self, field_id: str, carrier: Form, published: Mapping[Key, int], min_cell: int
    ) -> bool:
        # Whether a shown number of the field sums only classes of the carrier and reaches
        # min_cell: then ``carrier >= min_cell`` already holds (and would only slow the
        # solver: its LP optima are less often integral).
        classes = {v for v, _ in carrier}
        return any(
            self._shown(key, published, min_cell)
            and all(c > 0 and v in classes for v, c in self.quantities[key].form)
            for key in self._field_keys[field_id]
        )


def shape_of(
    report: SharedReport,
) -> tuple[dict[str, FieldShape], dict[tuple[str, str], tuple[list[str], SliceShape]]]:
    """The field shapes and pooled slices of a shared report, from its shape alone."""
    types = report.disclosure.field_types
    fields = {
        field_id: FieldShape.of(
            types[field_id],
            part.metrics,
            kappa=part.kappa is not None,
            magnitude=part.magnitude is not None,
            uncertainty=part.uncertainty is not None,
            nonzero_errors=part.magnitude is not None
            and part.magnitude.mean_absolute_error is not None,
            labels=() if part.labels is None else tuple(part.labels),
        )
        for field_id, part in report.by_field.items()
    }
    pooled: dict[tuple[str, str], tuple[list[str], SliceShape]] = {
        ("overall", ""): (
            sorted(fields),
            SliceShape(
                tuple(report.overall.metrics), ignored=IGNORED_COUNT in report.overall.counts
            ),
        )
    }
    for type_name, part in report.by_field_type.items():
        members = sorted(f for f, t in types.items() if t == type_name)
        pooled["field_type", type_name] = (
            members,
            SliceShape(tuple(part.metrics)),
        )
    for stratum, part in report.by_stratum.items():
        pooled["stratum", stratum] = (
            sorted(fields),
            SliceShape(tuple(part.metrics), stratum=stratum),
        )
        for type_name, type_part in report.by_stratum_field_type[stratum].items():
            members = sorted(f for f, t in types.items() if t == type_name)
            pooled["stratum_field_type", stratum_type_name(stratum, type_name)] = (
                members,
                SliceShape(tuple(type_part.metrics), stratum=stratum),
            )
    return fields, pooled


def stratum_type_name(stratum: str, type_name: str) -> str:
    """A stratum-and-type slice's name in keys and audit rows: ``site=A/date``."""
    return f"{stratum}/{type_name}"


def strata_of(stratum_names: Iterable[str]) -> Strata:
    """The declared strata that a report's stratum slice names (``key=label``) give."""
    labels: dict[str, list[str]] = {}
    for name in sorted(stratum_names):
        key, _, label = name.partition("=")
        labels.setdefault(key, []).append(label)
    return tuple((key, tuple(found)) for key, found in sorted(labels.items()))


def model_of(
    report: SharedReport,
    *,
    knows_rule: bool = True,
    units: Mapping[str, Fraction] | None = None,
    threshold: bool = False,
) -> ReportModel:
    """The attacker's model of a shared report: built from its shape and its shown moments.

    ``units``: per number field, the step its errors lie on, and ``threshold``:
    the threshold rule's ``min_cell`` nonzero errors; both known inside only
    (``share`` passes them; the outside audit assumes what every format kept).
    """
    fields, pooled = shape_of(report)
    strata = strata_of(report.by_stratum)
    z = z_for(report.confidence)
    error_counts: dict[str, tuple[int, int | None]] = {}
    for field_id, part in report.by_field.items():
        magnitude = part.magnitude
        if magnitude is None or not fields[field_id].nonzero_errors:
            continue
        unit = public_unit(magnitude) or (units or {}).get(field_id)
        bounds = nonzero_bounds(magnitude, z, unit)
        if bounds is not None:
            error_counts[field_id] = bounds
    return ReportModel(
        fields,
        pooled,
        knows_rule=knows_rule,
        strata=strata,
        error_counts=error_counts,
        threshold=threshold,
    )


def primary_cells(sensitive: Iterable[Quantity]) -> list[Key]:
    """The numbers the rule itself hides: each small quantity, or the number it follows from."""
    primary: list[Key] = []
    for quantity in sensitive:
        parts = quantity.parts
        primary.append(quantity.key if parts is None else parts[0])
        if quantity.key[2] == DISAGREED_Q:  # few disagreeing rows: withhold both counts
            primary.append((*quantity.key[:2], ROWS_Q))
    return primary
