"""Per-label confusion counts in the attacker's model (docs/disclosure.md, "Per-label metrics").

A field whose labels are declared (a categorical or multi-select field with
``choices``, every boolean field) reports, for each label, sensitivity,
specificity, PPV and NPV, and those four pooled over its labels. They are not
sums of the field's outcome classes: they depend on which label each row's
gold and answer name. So a labelled field adds, per label, unknowns that split
its answerable rows by that label, tied to its classes by exact facts.

**Single-label fields** (categorical, boolean). Every answerable gold names
one declared label (gold must lie within the choices); an answer of the type
names one label, or, in a categorical field, none (an answer outside the
choices). Per label ``L``: ``agreed`` (agreeing rows whose gold is ``L``),
``gold`` and ``answered`` (disagreeing pairs whose gold, or whose answer, is
``L``) and ``unpaired`` (answerable rows without an answer of the type, whose
gold is ``L``). Facts: the ``agreed`` add up to the agreeing rows, the
``gold`` to the disagreeing ones, the ``unpaired`` to the answerable rows
without a pair; the ``answered`` to at most the disagreeing rows (exactly,
for booleans); and ``gold + answered <= disagreeing`` for every label. These
are exact: margins satisfying them are the margins of some table of
disagreements with an empty diagonal (a max-flow cut argument), so no linear
fact about the published counts is left out. With a majority baseline, its
rows are at least every label's gold positives (the majority is the most
common gold label).

**Multi-select fields.** Gold and answer are sets. Per label ``L``:
``agreed`` (agreeing rows holding ``L``), ``both`` (disagreeing pairs holding
``L`` on both sides), ``gold`` and ``answered`` (on one side only) and
``unpaired``. Facts: each at most its rows; matched items are the true
positives summed over the labels and gold items the gold positives (gold
holds declared labels only); answered items at least the answered positives.

A label's counts are rows, one per case, so the rule adds nothing for them.
The labels' counts pooled over the labels (micro-averaged) are not shared
(docs/disclosure.md, "Per-label metrics"), and so are not modelled.

Value-free: label names are the schema's declared choices; no count.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Final

import attrs

from chartscore.disclosure.forms import Form, add, equal, variable
from chartscore.disclosure.rule import FAILURES, PAIRS, SUCCESS, TOTAL, metric_quantity
from chartscore.documents.shared_labels import LABEL_PREFIX, label_metric
from chartscore.documents.shared_report import Key
from chartscore.documents.tally import LABEL_METRICS

SINGLE_PARTS: Final = ("agreed", "gold", "answered", "unpaired")
"""A single-label field's unknowns per label."""
MULTI_PARTS: Final = ("agreed", "both", "gold", "answered", "unpaired")
"""A multi-select field's unknowns per label."""


@attrs.frozen
class ClassSums:
    """A labelled field's class sums (over every stratum cell) that its label unknowns split.

    Attributes:
        answerable: Its answerable rows.
        agreeing: Answerable rows answered with a value that agrees (exact or normalized).
        disagreeing: Answerable rows answered with a value of the type that disagrees.
        majority: Answerable rows in the majority gold category (a majority baseline).
        matched_items, gold_items, answered_items: A multi-select field's item counts.
    """

    answerable: Form
    agreeing: Form
    disagreeing: Form
    majority: Form | None = None
    matched_items: Form | None = None
    gold_items: Form | None = None
    answered_items: Form | None = None

    @property
    def pairs(self) -> Form:
        """Answerable rows answered with a value of the type: kappa's pairs."""
        return add((self.agreeing, 1), (self.disagreeing, 1))

    @property
    def unpaired(self) -> Form:
        """Answerable rows without an answer of the type (missing, abstained, wrong type)."""
        return add((self.answerable, 1), (self.pairs, -1))


@attrs.frozen
class LabelLayout:
    """One labelled field's label unknowns and the forms of its label quantities.

    Attributes:
        labels: The declared labels' names, in report order.
        field_type: ``categorical``, ``boolean`` or ``multi``.
        offset: The index of the first label unknown.
        sums: The field's class sums the unknowns are tied to.
    """

    labels: tuple[str, ...]
    field_type: str
    offset: int
    sums: ClassSums

    @property
    def multi(self) -> bool:
        """Whether gold and answers are sets of labels."""
        return self.field_type == "multi"

    @property
    def parts(self) -> tuple[str, ...]:
        """The unknowns of one label."""
        return MULTI_PARTS if self.multi else SINGLE_PARTS

    @property
    def size(self) -> int:
        """How many unknowns the labels add."""
        return len(self.labels) * len(self.parts)

    def unknown(self, label: int, part: str) -> Form:
        """One label's unknown (by the label's position)."""
        return variable(self.offset + label * len(self.parts) + self.parts.index(part))

    def _counts(self, label: int) -> tuple[Form, Form, Form, Form]:
        # (true positives, gold positives, answered positives, true negatives) of one label.
        def part(name: str) -> Form:
            return self.unknown(label, name)

        positive = add((part("agreed"), 1), *([(part("both"), 1)] if self.multi else []))
        gold = add((positive, 1), (part("gold"), 1), (part("unpaired"), 1))
        answered = add((positive, 1), (part("answered"), 1))
        negative = add(
            (self.sums.agreeing, 1),
            (part("agreed"), -1),
            (self.sums.disagreeing, 1),
            (add((positive, 1), (part("agreed"), -1)), -1),
            (part("gold"), -1),
            (part("answered"), -1),
        )
        return positive, gold, answered, negative

    def _quantities(self, counts: tuple[Form, Form, Form, Form]) -> dict[str, Form]:
        # The four metrics' success, total and failures from one table's counts.
        positive, gold, answered, negative = counts
        parts = {
            "sensitivity": (positive, gold),
            "specificity": (negative, add((self.sums.answerable, 1), (gold, -1))),
            "ppv": (positive, answered),
            "npv": (negative, add((self.sums.pairs, 1), (answered, -1))),
        }
        out: dict[str, Form] = {}
        for metric in LABEL_METRICS:
            success, total = parts[metric]
            out[metric_quantity(metric, SUCCESS)] = success
            out[metric_quantity(metric, TOTAL)] = total
            out[metric_quantity(metric, FAILURES)] = add((total, 1), (success, -1))
        return out

    def forms(self) -> dict[str, Form]:
        """Every label quantity: ``labels.<label>.<metric>.<part>``."""
        out: dict[str, Form] = {}
        for index, label in enumerate(self.labels):
            for name, form in self._quantities(self._counts(index)).items():
                out[LABEL_PREFIX + label + "." + name] = form
        return out

    def rows(self, *, majority: bool = True) -> list[Form]:
        """The exact facts (see the module), each as ``form >= 0``.

        ``majority``: with the majority baseline's (the majority is the field's
        most common gold label): not within one atom of cases, whose most common
        label may be another (:mod:`chartscore.disclosure.releases`).
        """
        sums = self.sums
        count = len(self.labels)

        def total(part: str) -> Form:
            return add(*((self.unknown(i, part), 1) for i in range(count)))

        out: list[Form] = []
        tables = [self._counts(index) for index in range(count)]
        if not self.multi:
            out += equal(total("agreed"), sums.agreeing)
            out += equal(total("gold"), sums.disagreeing)
            out += equal(total("unpaired"), sums.unpaired)
            if self.field_type == "boolean":  # every answer of the type names a label
                out += equal(total("answered"), sums.disagreeing)
            else:
                out.append(add((sums.disagreeing, 1), (total("answered"), -1)))
            for index in range(count):
                one_side = add(
                    (self.unknown(index, "gold"), 1), (self.unknown(index, "answered"), 1)
                )
                out.append(add((sums.disagreeing, 1), (one_side, -1)))
            if majority and sums.majority is not None:
                out += [add((sums.majority, 1), (gold, -1)) for _, gold, _, _ in tables]
            return out
        for index in range(count):
            disagreeing = add(
                *((self.unknown(index, part), 1) for part in ("both", "gold", "answered"))
            )
            out.append(add((sums.agreeing, 1), (self.unknown(index, "agreed"), -1)))
            out.append(add((sums.disagreeing, 1), (disagreeing, -1)))
            out.append(add((sums.unpaired, 1), (self.unknown(index, "unpaired"), -1)))
        assert sums.matched_items is not None and sums.gold_items is not None
        assert sums.answered_items is not None
        out += equal(sums.matched_items, add(*((table[0], 1) for table in tables)))
        out += equal(sums.gold_items, add(*((table[1], 1) for table in tables)))
        out.append(add((sums.answered_items, 1), *((table[2], -1) for table in tables)))
        return out


def label_identities(
    fields: Iterable[tuple[str, tuple[str, ...], bool, str]],
) -> list[tuple[Key, ...]]:
    """A labelled field's identities among its label numbers (and its counts).

    Each label's gold positives and negatives add up to the answerable rows;
    its answered positives and negatives to the pairs (kappa's, or, without
    kappa, every other label's two); the labels' true and gold positives to
    the agreeing and answerable rows (multi-select: the matched and gold
    items); and a boolean field's two labels mirror each other. ``fields``: each
    field's id, declared labels, whether it has kappa, and its type name.
    """
    out: list[tuple[Key, ...]] = []
    for field_id, labels, kappa, field_type in fields:
        if not labels:
            continue

        def part(label: str, metric: str, which: str, field_id: str = field_id) -> Key:
            return ("field", field_id, metric_quantity(label_metric(label, metric), which))

        answerable = ("field", field_id, "answerable_count")
        for label in labels:
            out.append(
                (answerable, part(label, "sensitivity", TOTAL), part(label, "specificity", TOTAL))
            )
        answered = [(part(label, "ppv", TOTAL), part(label, "npv", TOTAL)) for label in labels]
        if kappa:
            out += [(("field", field_id, PAIRS), *pair) for pair in answered]
        else:
            out += [(*first, *second) for first, second in itertools.pairwise(answered)]
        # The labels' true and gold positives add up to a core number: in a single-label
        # field the agreeing and the answerable rows, in a multi-select one the matched and
        # the gold items.
        multi = field_type == "multi"
        sums = (
            (metric_quantity("item_precision", SUCCESS), "sensitivity", SUCCESS),
            (metric_quantity("item_recall", TOTAL), "sensitivity", TOTAL),
        )
        if not multi:
            sums = (
                (metric_quantity("normalized_agreement", SUCCESS), "sensitivity", SUCCESS),
                ("answerable_count", "sensitivity", TOTAL),
            )
        for whole, metric, which in sums:
            terms = [part(label, metric, which) for label in labels]
            out.append((("field", field_id, whole), *terms))
        if field_type == "boolean" and len(labels) == 2:
            # One label's negatives are the other's positives: true negatives of `false`
            # are true positives of `true`, and so on.
            first, second = labels
            for one, two in ((first, second), (second, first)):
                out.append((part(one, "specificity", SUCCESS), part(two, "sensitivity", SUCCESS)))
                out.append((part(one, "specificity", TOTAL), part(two, "sensitivity", TOTAL)))
                out.append((part(one, "npv", TOTAL), part(two, "ppv", TOTAL)))
    return out
