"""Cell suppression: primary by distinct cases, complementary until the audit passes.

:func:`share` turns a full :class:`~chartscore.documents.report.Report` into a
:class:`~chartscore.documents.shared_report.SharedReport` under the cell-size rule:

1. **Primary.** A protected quantity is *sensitive* when the distinct cases
   behind it (:class:`Sensitivity`, counted inside the boundary while
   scoring) number from 1 to ``min_cell - 1``. A sensitive number is hidden;
   for sensitive failures, the metric's ``success_count`` is hidden.
2. **Structural pass.** No identity of the report may have exactly one hidden
   term (it could be solved for): the count identities, numbers with the same
   definition (a metric's total and its count), each pooled slice as the sum
   of its fields, and the overall slice as the sum of the field-type slices.
   While one has, the cheapest published term of that identity is hidden.
3. **Audit loop.** The integer-programming attack
   (:class:`~chartscore.disclosure.ranges.RangeSolver`) checks every sensitive
   quantity: one from 1 to ``min_cell - 1`` must not be provable to lie in
   that range, and none may be derivable exactly (a pooled number can have
   many rows from few cases). For each that fails, published numbers linked
   to it (sharing an outcome class) are tried in cost order, and the first
   whose hiding protects it is hidden; if none alone does, the cheapest is
   hidden and the check repeats. The attack knows the rule as the audit does
   (:meth:`~chartscore.disclosure.model.ReportModel.knowledge`). Hiding only
   removes equalities (and the rows the rule adds for them), so ranges only
   widen, and hiding everything passes: the loop ends.
   The loop is :func:`chartscore.disclosure.complement.complement`, the one a
   comparison runs too; :class:`_ReportView` is the report's side of it.
4. **Kappa.** A kappa value and interval are shown only when ``pairs`` and
   the field's ``normalized_agreement`` numerator are shown and the smallest
   nonzero gold or answer category among the pairs has at least ``min_cell``
   cases (kappa with the observed agreement lets an outsider solve for the
   category margins).

Cost order (:mod:`chartscore.disclosure.cost`): a pattern is priced by the
rates it destroys (a rate with a hidden part, each once) and its cells; plain
counts go first, then a field's safety and error rates, its agreement rates,
pooled and stratum rates, the overall slice's last; within one price, smaller
numbers first; then a fixed order of names. Everything is sorted, so the same
inputs give the same bytes.

On a small report (:data:`~chartscore.disclosure.optimal.EXACT_LIMIT`), the
greedy's pattern is then replaced by the minimum-cost passing one
(:mod:`chartscore.disclosure.optimal`, cutting planes over HiGHS); a larger
report keeps the greedy's, with a lower bound on any passing pattern's cost
(:attr:`SharedReport.complement`, inside only).

Finally :func:`share` runs :func:`~chartscore.disclosure.audits.audit` on its
own JSON output and refuses (``disclosure_audit_failed``) rather than return
a report that fails.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from fractions import Fraction
from typing import Final, Protocol

import attrs
import numpy as np

from chartscore.disclosure.around import around, proven_shown
from chartscore.disclosure.audits.document import (
    DERIVABLE,
    audit_with_hints,
    proven_ranges,
    range_failures,
)
from chartscore.disclosure.complement import (
    CHOOSING,
    SUPPRESSING,
    Overlay,
    complement,
    exact_choice,
    protected,
    range_solver,
    seed_point,
    settle,
)
from chartscore.disclosure.cost import (
    ComplementCost,
    Rate,
    cell_price,
    key_price,
    marginal_price,
    pattern_price,
    rate_of,
    rate_price,
)
from chartscore.disclosure.evidence_rule import evidence_shared, with_evidence, without_evidence
from chartscore.disclosure.forms import Form
from chartscore.disclosure.label_model import label_identities
from chartscore.disclosure.limits import check_share_size
from chartscore.disclosure.model import Quantity, ReportModel, model_of, primary_cells
from chartscore.disclosure.optimal import EXACT_LIMIT, Problem
from chartscore.disclosure.ranges import LocalCheck, RangeSolver
from chartscore.disclosure.rule import (
    DEFAULT_MIN_CELL,
    KAPPA_TYPES,
    SLICE_KINDS,
    STRATUM,
    STRATUM_FIELD_TYPE,
    SUCCESS,
    TOTAL,
    metric_quantity,
)
from chartscore.disclosure.sensitivity import Sensitivity
from chartscore.documents.report import Report
from chartscore.documents.shared_figures import (
    FIGURE_QUANTITIES,
    MAGNITUDE,
    UNCERTAINTY,
    FieldFigures,
)
from chartscore.documents.shared_labels import LABEL_PREFIX
from chartscore.documents.shared_metric import Range
from chartscore.documents.shared_report import (
    Key,
    SharedReport,
    SharedSlice,
    check_min_cell,
    shared_from_report,
    shown_weighted,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.clustered import z_for

__all__ = [  # the progress stages are the complementary loop's (complement.py)
    "CHOOSING",
    "SUPPRESSING",
    "JointStep",
    "SuppressionState",
    "protected_keys",
    "share",
    "true_values",
]

_TRIALS: Final = 4
"""How many candidate numbers to try for one failing cell before hiding the cheapest."""
_CANDIDATES: Final = 40
"""How many linked numbers (cheapest first) are priced for one failing cell."""
_LABEL_CANDIDATES: Final = 12
"""The same in the labels' step, where each is a label number (its closure long)."""
_LOOKAHEAD: Final = 8
"""How many of an identity's cheapest terms the structural pass prices."""
_PRICES: Final = 10**12
"""More than any closure step's price (a few cells and rates): frozen numbers rank after
every price."""
_WIDE: Final = 1000
"""The widest component (columns) from which a round's exact checks use two processes."""


def _invalid_sensitivity() -> ChartscoreError:
    return ChartscoreError(ErrorCode.INVALID_SENSITIVITY)


class _Suppressor:
    """The state of one suppression run: values, forms, hidden numbers, identities."""

    def __init__(
        self,
        model: ReportModel,
        values: Mapping[Key, int],
        min_cell: int,
        frozen: frozenset[Key] = frozenset(),
    ) -> None:
        self.model = model
        self.values = values
        self.min_cell = min_cell
        # Numbers hidden only when nothing else protects a cell (labels: the core's).
        self.frozen = frozen
        self.numbers = [key for key, q in model.quantities.items() if not q.derived]
        # The composition, known whatever is published: hiding it would protect nothing.
        self.public = _public_keys(model, self.numbers)
        kind_rank = {kind: i for i, kind in enumerate(SLICE_KINDS)}
        position = {key: i for i, key in enumerate(model.quantities)}
        self.cost = {
            key: (key_price(key), values[key], kind_rank[key[0]], key[1], position[key])
            for key in self.numbers
        }
        # Each number's cell price, its rate and the rate's other part (docs: cost order).
        self.cell = {key: cell_price(key) for key in self.numbers}
        self.rate = {key: rate_of(key) for key in self.numbers}
        self.partner: dict[Key, Key] = {}
        for key, rate in self.rate.items():
            if rate is not None:
                for part in (SUCCESS, TOTAL):
                    other = (rate[0], rate[1], metric_quantity(rate[2], part))
                    if other != key and other in self.cost:
                        self.partner[key] = other
        self.rate_price = {r: rate_price(r) for r in set(self.rate.values()) if r is not None}
        # Each number's place in the cost order (costs differ: each holds the position).
        self.rank = {
            key: i for i, key in enumerate(sorted(self.numbers, key=self.cost.__getitem__))
        }
        self.hidden: set[Key] = set()  # replaced when it grows, never changed in place
        self.seed: np.ndarray | None = None  # a feasible point of the full report
        self.points: list[np.ndarray] = []  # the last exact solver's witnesses
        self.binding: set[tuple[Form, int]] = set()  # the rule's rows found to bind the LP
        # A success count hidden only because its failures are sensitive -> its total.
        self.proxies: dict[Key, Key] = {}
        self.identities = self._identities()
        self.by_term: dict[Key, list[int]] = {}
        for index, identity in enumerate(self.identities):
            for key in identity:
                self.by_term.setdefault(key, []).append(index)
        # For the closure's inner loop, computed once: each identity's terms cheapest
        # first, each number's weight, and its equal-definition twins.
        self.by_cost = [sorted(identity, key=self.cost.__getitem__) for identity in self.identities]
        self.twins: dict[Key, list[Key]] = {}
        for identity in self.identities:
            if len(identity) == 2:
                for key in identity:
                    self.twins.setdefault(key, []).extend(identity)
        # Each number's twins other than itself, once each (what hiding it forces).
        self.partners = {
            key: tuple(sorted(set(twins) - {key})) for key, twins in self.twins.items()
        }
        self.by_variable: dict[int, list[Key]] = {}
        for key in self.numbers:
            # An item count also reaches the classes its rule row bounds (its carriers).
            reach = {v for v, _ in (*model.quantities[key].form, *model.carriers.get(key, ()))}
            for variable in sorted(reach):
                self.by_variable.setdefault(variable, []).append(key)
        self._readers: dict[Key, list[int]] | None = None  # see readers()
        self._counts: list[int] = []  # see _base_counts()
        self._counted: set[Key] | None = None
        # Each field's variables: with the composition known, a cell's linked numbers may all
        # be hidden while numbers elsewhere in its field still pin it.
        self.field_variables = [
            range(layout.offset, layout.offset + layout.size) for layout in model.layouts.values()
        ]

    def _identities(self) -> list[tuple[Key, ...]]:
        # Identities among published numbers that a one-line subtraction solves.
        model = self.model
        out: list[tuple[Key, ...]] = []
        slices = sorted({(kind, name) for kind, name, _ in self.numbers})
        for kind, name in slices:
            k = (kind, name)
            out.append(
                (
                    (*k, "field_count"),
                    (*k, "answerable_count"),
                    (*k, "unanswerable_count"),
                )
            )
            out.append(
                (
                    (*k, "field_count"),
                    (*k, "missing_count"),
                    (*k, "answered_count"),
                    (*k, "abstained_count"),
                )
            )
        by_form: dict[Form, list[Key]] = {}
        for key in self.numbers:
            by_form.setdefault(model.quantities[key].form, []).append(key)
        for keys in by_form.values():
            out += [(a, b) for a, b in itertools.pairwise(keys)]
        out += label_identities(
            (field_id, layout.shape.labels, layout.shape.kappa, layout.shape.field_type)
            for field_id, layout in model.layouts.items()
        )
        field_types = {
            field_id: layout.shape.field_type for field_id, layout in model.layouts.items()
        }
        type_names = sorted(set(field_types.values()))
        for kind, name, quantity in self.numbers:
            if kind == "field":
                continue
            members = sorted(f for f, t in field_types.items() if kind == "overall" or t == name)
            parts = [("field", f, quantity) for f in members]
            parts = [p for p in parts if p in model.quantities]
            if parts and self._sums((kind, name, quantity), parts):
                out.append(((kind, name, quantity), *parts))
            if kind == "overall":
                types = [("field_type", t, quantity) for t in type_names]
                types = [p for p in types if p in model.quantities]
                if types and self._sums((kind, name, quantity), types):
                    out.append(((kind, name, quantity), *types))
            for listed in self._stratum_parts(kind, name, quantity, type_names):
                terms = [p for p in listed if p in model.quantities]
                if terms and self._sums((kind, name, quantity), terms):
                    out.append(((kind, name, quantity), *terms))
        return out

    def _stratum_parts(
        self, kind: str, name: str, quantity: str, type_names: list[str]
    ) -> list[list[Key]]:
        # Strata's identities: for each key, the overall (or a type) slice is the sum of
        # its strata's (type) slices; a stratum slice is the sum of its type slices.
        if kind == STRATUM:
            return [[(STRATUM_FIELD_TYPE, f"{name}/{t}", quantity) for t in type_names]]
        if kind not in ("overall", "field_type"):
            return []
        out = []
        for key, labels in self.model.strata:
            strata = [f"{key}={label}" for label in labels]
            if kind == "overall":
                out.append([(STRATUM, s, quantity) for s in strata])
            else:
                out.append([(STRATUM_FIELD_TYPE, f"{s}/{name}", quantity) for s in strata])
        return out

    def _sums(self, total: Key, parts: list[Key]) -> bool:
        # Whether ``total``'s form is exactly the sum of the parts' forms.
        combined: dict[int, int] = {}
        for part in parts:
            for variable, coefficient in self.model.quantities[part].form:
                combined[variable] = combined.get(variable, 0) + coefficient
        form = tuple(sorted((v, c) for v, c in combined.items() if c))
        return form == self.model.quantities[total].form

    def closure(self, keys: Iterable[Key], hidden: set[Key] | None = None) -> set[Key]:
        """The hidden set after hiding ``keys`` and closing under the identities.

        While an identity has exactly one hidden term, its published term whose
        hiding costs least (:meth:`price` of its own closure, approximately:
        the next step only) is hidden.
        """
        base = self.hidden if hidden is None else hidden
        return base | self.added(keys, base)

    def added(
        self,
        keys: Iterable[Key],
        hidden: AbstractSet[Key] | None = None,
        *,
        visited: set[int] | None = None,
    ) -> set[Key]:
        """What :meth:`closure` adds to ``hidden`` (default: the current set), without copying it.

        The same choices as :meth:`closure`, found over the hidden set and the
        additions together: a candidate's closure costs its additions, not the
        whole hidden set (thousands of numbers on a wide report).

        ``visited``: filled with the identities where the closure found one hidden
        term (an identity with two or more keeps them whatever else is hidden, and
        is passed over). The result depends on ``hidden`` only through the numbers
        :meth:`readers` lists for those identities (and ``keys``): while hiding
        adds none of them, it stands.
        """
        base = self.hidden if hidden is None else hidden
        new: set[Key] = set()
        by_term = self.by_term
        todo: list[int] = []
        # Each identity's hidden terms in ``base`` (when it is the current set: counted
        # once per set) and among ``new``: an identity with two is passed over unscanned.
        counted = self._base_counts() if base is self.hidden else None
        fresh: dict[int, int] = {}
        for key in keys:
            if key not in base and key not in new:
                new.add(key)
                for index in by_term.get(key, ()):
                    fresh[index] = fresh.get(index, 0) + 1
                    todo.append(index)
        identities, by_cost, proxies = self.identities, self.by_cost, self.proxies
        # Each candidate term is priced by what hiding it adds to ``base`` and ``new`` (one
        # set, looked up in both): its cell, its equal-definition twins' (the other terms
        # of two-term identities, hidden with it at once) and each rate they destroy, once.
        frozen, partners, rank = self.frozen, self.partners, self.rank
        cell, rate_of_key, partner, rate_price = self.cell, self.rate, self.partner, self.rate_price
        while todo:
            index = todo.pop()
            if counted is not None and counted[index] + fresh[index] > 1:
                continue  # two hidden terms or more: whatever else is hidden, passed over
            alone: Key | None = None
            count = 0
            for key in identities[index]:
                if key in base or key in new:
                    count += 1
                    if count > 1:
                        break
                    alone = key
            if count != 1:
                continue  # and so whatever else is hidden: the step does not depend on it
            if visited is not None:
                visited.add(index)
            if alone in proxies:
                proxy = proxies[alone]
                if proxy in base or proxy in new:
                    continue  # hidden only for its failures, which its hidden total protects
            cheapest: Key | None = None
            lowest = -1
            tried = 0
            for key in by_cost[index]:
                if key in base or key in new:
                    continue
                # What hiding ``key`` adds, with the twins it forces: cells and rates.
                total = cell[key]
                rates: set[Rate] = set()
                rate = rate_of_key[key]
                if rate is not None:
                    other = partner.get(key)
                    if other not in base and other not in new:
                        rates.add(rate)
                for twin in partners.get(key, ()):
                    if twin in base or twin in new:
                        continue
                    total += cell[twin]
                    rate = rate_of_key[twin]
                    if rate is not None:
                        other = partner.get(twin)
                        if other not in base and other not in new:
                            rates.add(rate)
                for rate in rates:
                    total += rate_price[rate]
                # (frozen, price, cost) in that order, as one integer: the cost by its rank
                price = ((key in frozen) * _PRICES + total) * len(rank) + rank[key]
                if lowest < 0 or price < lowest:
                    cheapest, lowest = key, price
                tried += 1
                if tried == _LOOKAHEAD:
                    break
            assert cheapest is not None  # an identity with one hidden term has others
            new.add(cheapest)
            for following in by_term.get(cheapest, ()):
                fresh[following] = fresh.get(following, 0) + 1
                todo.append(following)
        return new

    def _base_counts(self) -> list[int]:
        """Each identity's terms in the current hidden set (counted once per set: the
        hidden set is replaced when it changes, never changed in place)."""
        if self._counted is not self.hidden:
            counts = [0] * len(self.identities)
            by_term = self.by_term
            for key in self.hidden:
                for index in by_term.get(key, ()):
                    counts[index] += 1
            self._counts, self._counted = counts, self.hidden
        return self._counts

    def readers(self) -> dict[Key, list[int]]:
        """Per number, the identities whose closure step reads whether it is hidden.

        A step at an identity reads its terms, a term's proxy (hidden only for its
        failures), and, pricing a term, its twins and the rates' other parts of both.
        Built once (after the proxies are set: the suppression's first closure).
        """
        if self._readers is None:
            readers: dict[Key, list[int]] = {}
            for index, identity in enumerate(self.identities):
                read: set[Key | None] = set()
                for term in identity:
                    twins = self.partners.get(term, ())
                    read.update((term, self.proxies.get(term), self.partner.get(term), *twins))
                    read.update(self.partner.get(twin) for twin in twins)
                for key in read:
                    if key is not None:
                        readers.setdefault(key, []).append(index)
            self._readers = readers
        return self._readers

    def destroyed(self) -> dict[Rate, int]:
        """Each rate with a hidden part, with how many parts are hidden."""
        out: dict[Rate, int] = {}
        for key in self.hidden:
            rate = self.rate.get(key)
            if rate is not None:
                out[rate] = out.get(rate, 0) + 1
        return out

    def price(self, hidden: set[Key]) -> int:
        """The declared cost of a hidden set (:func:`~chartscore.disclosure.cost.pattern_price`)."""
        return pattern_price(hidden)

    def hide(self, keys: Iterable[Key]) -> None:
        """Hide numbers, closing under the identities."""
        self.hidden = self.hidden | self.added(keys)  # a new set: callers may hold the old

    def published(self, hidden: AbstractSet[Key] | None = None) -> dict[Key, int]:
        """The published numbers when ``hidden`` (default: the current set) is hidden."""
        hidden = self.hidden if hidden is None else hidden
        return {key: self.values[key] for key in self.numbers if key not in hidden}

    def local_safe(
        self, local: LocalCheck, quantity: Quantity, published: Mapping[Key, int]
    ) -> bool:
        """Whether a restriction certifies the (hidden) quantity protected under ``published``.

        Never with strata: every stratum number touches every field, so each
        restriction carries every stratum row (or is the whole report), built
        once per candidate; the exact solver settles them all at once, faster.
        """
        if self.model.strata:
            return False
        return local.protected(quantity.form, self.values[quantity.key], self.min_cell, published)

    def unlinked(self) -> list[Key]:
        """Every published number, cheapest first: the candidates when none is linked.

        In the labels' step (frozen numbers), the free ones first and only the first few:
        each candidate's closure is priced, and there are hundreds.
        """
        shown = [k for k in self.numbers if k not in self.hidden and k not in self.public]
        if not self.frozen:
            return sorted(shown, key=self.cost.__getitem__)
        order = sorted(shown, key=lambda k: (k in self.frozen, self.cost[k]))
        return order[:_LABEL_CANDIDATES]

    def candidates(self, quantity: Quantity) -> list[Key]:
        """Published numbers sharing an outcome class with ``quantity``, cheapest first.

        Frozen numbers only when no other is linked.
        """
        linked = {
            key
            for variable, _ in quantity.form
            for key in self.by_variable.get(variable, ())
            if key not in self.hidden and key not in self.public
        }
        if not linked and self.public:  # its field's other numbers, then the fallback's
            touched = {v for v, _ in quantity.form}
            linked = {
                key
                for variables in self.field_variables
                if not touched.isdisjoint(variables)
                for variable in variables
                for key in self.by_variable.get(variable, ())
                if key not in self.hidden and key not in self.public
            }
        free = linked - self.frozen
        width = _LABEL_CANDIDATES if self.frozen else _CANDIDATES
        return sorted(free or linked, key=self.cost.__getitem__)[:width]


def _values(model: ReportModel, shared: SharedReport) -> dict[Key, int]:
    values: dict[Key, int] = {}
    for key, value in shared.numbers():
        assert value is not None
        values[key] = value
    for key, quantity in model.quantities.items():
        parts = quantity.parts
        if parts is not None:
            values[key] = values[parts[1]] - values[parts[0]]
    return values


def _check_sensitivity(
    counts: Mapping[Key, int], model: ReportModel, values: Mapping[Key, int]
) -> None:
    if not isinstance(counts, Mapping) or set(counts) != set(model.quantities):
        raise _invalid_sensitivity()
    for key, cases in counts.items():
        value = values[key]
        if type(cases) is not int or not 0 <= cases <= value or (cases == 0) != (value == 0):
            raise _invalid_sensitivity()


def _withheld_kappa(
    report: SharedReport, sensitivity: Sensitivity, hidden: set[Key], min_cell: int
) -> set[str]:
    # Kappa's rule, for kappa and the coefficients over its table (AC1 can be defined where
    # kappa is not: one category): fields whose kappa and coefficients may not be shown.
    # They are functions of the field's table that the attack does not model: with its
    # answered margins (the labels' ppv totals) kappa gives the gold margins, and a 2 x 2
    # table is its margins and diagonal, so a boolean field's false positives (9) were
    # pinned; a weighted kappa, AC2 and ordinal alpha pinned an ordinal field's later and
    # earlier rows. So they are shown only where every number of the field is: then they
    # tell nothing of a hidden one (docs/disclosure.md, "What is protected").
    withheld: set[str] = set()
    partly_hidden = {key[1] for key in hidden if key[0] == "field"}
    margins = sensitivity.kappa_smallest_margin
    for field_id, part in report.by_field.items():
        if part.kappa is None:
            continue
        shown = [c.value for c in part.coefficients.values()]
        if part.kappa.value is None and all(value is None for value in shown):
            continue
        margin = margins.get(field_id)
        if type(margin) is not int or margin < 0:
            raise _invalid_sensitivity()
        if field_id in partly_hidden or margin < min_cell:
            withheld.add(field_id)
    return withheld


def _figures(report: Report, sensitivity: Sensitivity) -> Mapping[str, FieldFigures] | None:
    figures = sensitivity.figures
    if figures is None:
        return None
    if not isinstance(figures, Mapping) or not set(figures) <= set(report.by_field):
        raise _invalid_sensitivity()
    if not all(isinstance(value, FieldFigures) for value in figures.values()):
        raise _invalid_sensitivity()
    return figures


def _public_keys(model: ReportModel, keys: Iterable[Key]) -> frozenset[Key]:
    # The composition is known whatever is published, so hiding it protects nothing: of
    # ``keys``, each whose form is a field's field_count in the composition (a metric whose
    # total is the field's rows too), or a field type's or the overall field_count when every
    # field's is known (their sums).
    known = model.composition
    if not known:
        return frozenset()
    forms = {model.quantities[key].form for key in known}
    if all(("field", field_id, "field_count") in known for field_id in model.layouts):
        forms |= {
            quantity.form
            for key, quantity in model.quantities.items()
            if key[2] == "field_count" and key[0] in ("field_type", "overall")
        }
    return frozenset(key for key in keys if model.quantities[key].form in forms)


def _known(
    model: ReportModel, values: Mapping[Key, int], known: Mapping[Key, int] | None
) -> dict[Key, int]:
    # Another product's shown gold-only numbers: this report's must be the same.
    out = {key: value for key, value in (known or {}).items() if key in model.quantities}
    if any(values[key] != value for key, value in out.items()):
        raise _invalid_sensitivity()  # not the same gold
    return out


def _composition(model: ReportModel, values: Mapping[Key, int], min_cell: int) -> dict[Key, int]:
    # What an outsider knows of the cohort's shape: how many cases have each field (every
    # chart of an abstraction form has every field, so one field's count gives another's).
    # A field of 1..min_cell-1 cases stays a protected cell: it is left out.
    return {
        key: values[key]
        for key in model.quantities
        if key[0] == "field" and key[2] == "field_count" and not 1 <= values[key] < min_cell
    }


def _error_units(
    figures: Mapping[str, FieldFigures] | None, field_types: Mapping[str, str]
) -> dict[str, Fraction]:
    # Each number field's error step, known inside only: the suppression's attacker knows
    # it too, so the moments' bound on the nonzero errors is as tight as it can be.
    out: dict[str, Fraction] = {}
    for field_id, inside in (figures or {}).items():
        absolute = inside.absolute
        if field_types.get(field_id) == "number" and absolute is not None and absolute.unit:
            out[field_id] = absolute.unit
    return out


def _with_figures(document: dict[str, object], report: Report) -> dict[str, object]:
    # The core document with each field slice's error magnitude and declared uncertainty.
    by_field = document["by_field"]
    assert isinstance(by_field, dict)
    for field_id, part in report.by_field.items():
        extra: dict[str, object] = {}
        if part.magnitude is not None:
            extra[MAGNITUDE] = part.magnitude.to_dict()
            for name, coefficient in (part.coefficients or {}).items():
                extra[name] = coefficient.to_dict()  # interval alpha, with the magnitude
        if part.uncertainty is not None:
            extra[UNCERTAINTY] = part.uncertainty.to_dict()
        by_field[field_id] = {**by_field[field_id], **extra}
    return document


def _field_types(report: Report, sensitivity: Sensitivity) -> dict[str, str]:
    types = sensitivity.field_types
    if not isinstance(types, Mapping) or set(types) != set(report.by_field):
        raise _invalid_sensitivity()
    if set(types.values()) != set(report.by_field_type):
        raise _invalid_sensitivity()
    for field_id, part in report.by_field.items():
        if (part.kappa is not None) != (types[field_id] in KAPPA_TYPES):
            raise _invalid_sensitivity()
    return {field_id: types[field_id] for field_id in sorted(types)}


def protected_keys(report: Report, field_types: Mapping[str, str]) -> list[Key]:
    """Every protected quantity of ``report``: exactly the keys :class:`Sensitivity` needs.

    For the scorer, which fills ``case_counts`` inside the boundary: counts,
    ``<metric>.success_count``, ``<metric>.total_count``, ``<metric>.failures``,
    ``kappa.pairs`` (and ``ignored_prediction_count`` where present), for the
    overall slice, every field and every field type, in report order.

    Raises:
        ChartscoreError: ``invalid_sensitivity`` when ``field_types`` does not
            match the report's fields and field types.
    """
    types = _field_types(report, Sensitivity({}, {}, field_types))
    full = shared_from_report(report.core().to_dict(), types, DEFAULT_MIN_CELL, set(), set())
    return list(model_of(full).quantities)


SuppressionState = _Suppressor
"""The state a :class:`JointStep` works on: ``model``, ``values``, ``numbers``, ``hidden``,
``hide``, ``closure``, ``price``, ``cost``, ``candidates`` and ``published``."""


class JointStep(Protocol):
    """An extra suppression step after the single-release one (successive releases).

    It hides further numbers through ``state.hide`` and returns the field ids
    whose kappa must be withheld too (:class:`~chartscore.disclosure.releases.ReleaseStep`).
    """

    @property
    def earlier_releases(self) -> int:
        """How many earlier releases the report is audited with (published)."""
        ...

    def __call__(self, state: SuppressionState) -> set[str]: ...


def share(
    report: Report,
    sensitivity: Sensitivity,
    min_cell: int = DEFAULT_MIN_CELL,
    *,
    joint: JointStep | None = None,
    hidden: Collection[Key] = (),
    known: Mapping[Key, int] | None = None,
) -> SharedReport:
    """Suppress small cells (primary and complementary) so the report may be shared.

    A report with stratum slices is shared in two steps, so that strata do not cost the
    field level (docs/disclosure.md#stratum-slices): the report without them first, then
    the stratum slices around its choice (every number it shows shown, every one it hides
    hidden again, unless the stratified attack proves it exactly). ``hidden``, ``known`` or
    ``joint`` (a product of a publication, a release) keep the one step. Cells are chosen
    without ``evidence_provided``, which is added around that choice only where no answer
    carries evidence (:mod:`chartscore.disclosure.evidence_rule`).

    Args:
        report: The full, value-free report.
        sensitivity: Distinct-case counts behind every protected quantity,
            kappa category margins and field types, computed inside the
            boundary while scoring.
        min_cell: Publish 0 or at least this many cases (default 11).
        joint: The joint audit with earlier releases (``share --releases``),
            run after the single-release suppression; the result then records
            ``ledger_cost`` (inside only) and ``disclosure.earlier_releases``.
        hidden: Numbers hidden whatever else is (primary cells as far as the
            choice goes): the ones another product of the publication hides
            (:func:`chartscore.workflows.publication.share_publication`).
        known: Gold-only numbers another product of the publication shows, with
            their values: known to the outsider, so treated like the cohort's
            composition (shown, and never a complementary cell).

    Returns:
        The :class:`SharedReport`: published numbers equal the report's; it
        passes :func:`~chartscore.disclosure.audits.audit`, and no sensitive
        quantity can be derived exactly.

    Raises:
        ChartscoreError: ``invalid_min_cell``; ``invalid_sensitivity`` when
            the case counts do not cover the report's quantities exactly or
            contradict its numbers; ``share_too_large`` for a stratified report
            beyond :data:`~chartscore.disclosure.limits.MAX_STRATUM_BLOCKS`;
            ``disclosure_audit_failed`` if the result would fail its own audit
            (a bug: nothing is returned).
    """
    min_cell = check_min_cell(min_cell)
    if not isinstance(report, Report) or not isinstance(sensitivity, Sensitivity):
        raise _invalid_sensitivity()
    alone = joint is None and not hidden and known is None  # not a product of several
    bare, bare_counts = without_evidence(report, sensitivity)
    if bare.by_stratum and alone:
        shared = _stratified(bare, bare_counts, min_cell)
    else:
        shared = _share_alone(bare, bare_counts, min_cell, joint=joint, hidden=hidden, known=known)
    if alone and evidence_shared(report, min_cell):
        # Around a stratified choice, the step still shows the site numbers its audit proves
        # exactly (as the stratum step does): the metric may prove more of them.
        fixed = _share_alone
        if shared.field_level_kept:
            fixed = functools.partial(_share_alone, show_proven=True)
        return with_evidence(report, sensitivity, min_cell, shared, share_fixed=fixed)
    return shared


def _stratified(report: Report, sensitivity: Sensitivity, min_cell: int) -> SharedReport:
    """The stratified report, its field and pooled slices as the report without strata chose.

    Should the stratum slices fail to be protected around that choice (known numbers that
    alone pin a stratum's small cell), the stratified report chooses alone instead.
    """
    check_share_size(len(report.by_field), report.by_stratum)  # before the plain share too
    plain_report = attrs.evolve(report, by_stratum={}, by_stratum_field_type={})
    if not isinstance(sensitivity.case_counts, Mapping):
        raise _invalid_sensitivity()
    plain_counts = attrs.evolve(
        sensitivity,
        case_counts={
            key: cases
            for key, cases in sensitivity.case_counts.items()
            if key[0] not in (STRATUM, STRATUM_FIELD_TYPE)
        },
    )
    plain = _share_alone(plain_report, plain_counts, min_cell)
    shown_proven = functools.partial(_share_alone, show_proven=True)
    kept = around(plain, report, sensitivity, min_cell, share_fixed=shown_proven)
    if kept is not None:
        return attrs.evolve(kept, field_level_kept=True)
    # Else the one step.
    return attrs.evolve(_share_alone(report, sensitivity, min_cell), field_level_kept=False)


def _share_alone(
    report: Report,
    sensitivity: Sensitivity,
    min_cell: int,
    *,
    joint: JointStep | None = None,
    hidden: Collection[Key] = (),
    known: Mapping[Key, int] | None = None,
    show_proven: bool = False,
) -> SharedReport:
    # One suppression of the whole report (share's docstring), audited before it returns.
    min_cell = check_min_cell(min_cell)
    if not isinstance(report, Report) or not isinstance(sensitivity, Sensitivity):
        raise _invalid_sensitivity()
    if joint is not None:  # the joint audit of releases does not model labels yet
        report = report.without_labels()
    field_types = _field_types(report, sensitivity)
    check_share_size(len(field_types), report.by_stratum)
    document = report.core().to_dict()  # the figures share models (docs/disclosure.md)
    figures = _figures(report, sensitivity)
    if figures is not None:
        document = _with_figures(document, report)
    full = shared_from_report(document, field_types, min_cell, set(), set(), figures=figures)
    units = _error_units(figures, field_types)
    model = model_of(full, units=units, threshold=True)
    values = _values(model, full)
    model.composition = _composition(model, values, min_cell)
    model.composition.update(_known(model, values, known))
    if not isinstance(sensitivity.case_counts, Mapping):
        raise _invalid_sensitivity()
    counts = dict(sensitivity.case_counts)
    if joint is not None:  # the labels' case counts, of labels not shared here
        counts = {key: n for key, n in counts.items() if not key[2].startswith(LABEL_PREFIX)}
    if figures is not None:  # the figures' counts are field-slice rows: one case each
        counts.update({key: values[key] for key in model.quantities if key[2] in FIGURE_QUANTITIES})
    _check_sensitivity(counts, model, values)
    forced = frozenset(
        k for k in hidden if k in model.quantities and not model.quantities[k].derived
    )
    start: set[Key] = set()
    frozen: frozenset[Key] = frozenset()
    complement = None
    if any(layout.shape.labels for layout in model.layouts.values()):
        # The core first, as without labels; then the labels, hiding core numbers only
        # where nothing else protects a label's cell (docs/disclosure.md).
        core = _without_labels(full)
        core_model = model_of(core, units=units, threshold=True)
        core_model.composition = _composition(core_model, values, min_cell)
        core_model.composition.update(_known(core_model, values, known))
        core_values = {key: values[key] for key in core_model.quantities}
        core_counts = {key: counts[key] for key in core_model.quantities}
        first, _, _, complement = _suppress(
            core_model,
            core_values,
            core_counts,
            min_cell,
            exact=joint is None,
            forced=forced,
        )
        start = first.hidden
        frozen = frozenset(first.numbers) - start
    state, sensitive, _, found = _suppress(
        model,
        values,
        counts,
        min_cell,
        exact=joint is None and not frozen,
        start=start,
        frozen=frozen,
        forced=forced,
    )
    complement = found if complement is None else _labelled(complement, state)

    def hidden_now() -> set[Key]:
        # The public numbers (the composition) are shown whatever was chosen.
        return state.hidden - _public_keys(model, state.hidden)

    withheld = _withheld_kappa(full, sensitivity, hidden_now(), min_cell)
    shown_again: frozenset[Key] = frozenset()  # show_proven's (below)

    def shared_now() -> SharedReport:
        hidden = hidden_now() - shown_again
        return shared_from_report(
            document, field_types, min_cell, hidden, withheld, figures=figures
        )

    alone: int | None = None
    if joint is not None:
        alone = shared_now().disclosure.suppressed_count
        withheld |= joint(state)
        withheld |= _withheld_kappa(full, sensitivity, hidden_now(), min_cell)
    shared = shared_now()
    if joint is not None:
        disclosure = attrs.evolve(shared.disclosure, earlier_releases=joint.earlier_releases)
        shared = attrs.evolve(shared, disclosure=disclosure)
    hints = [*([] if state.seed is None else [state.seed]), *state.points]
    verdict = audit_with_hints(shared.to_json(), hints)  # the audit's rows, found sooner
    sensitive_keys = {q.key for q in sensitive}
    exposed = any(
        row.status == DERIVABLE and (row.slice_kind, row.slice_name, row.name) in sensitive_keys
        for row in verdict.rows
    )
    if not verdict.passed or exposed:
        raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
    proven = proven_ranges(shared, verdict.rows)  # published numbers: (v, v)
    # The stratum step (docs/disclosure.md#stratum-slices) publishes a hidden site number
    # its audit proves exactly (not sensitive) where showing it adds none of the rule's
    # rows (around.proven_shown): then no range changes and no second audit is needed. A
    # site's rate with no trials is then 0/0, not hidden. The field level stays as the
    # plain step chose; ``evidence_provided``'s step around a stratified choice (which
    # holds the site numbers it hid hidden) may prove more site numbers and show them.
    if show_proven:
        exact = {key for key, (low, high) in proven.items() if low == high}
        published = state.published(hidden_now())
        candidates = {
            key
            for key in exact & state.hidden - sensitive_keys
            if key[0] in (STRATUM, STRATUM_FIELD_TYPE)
        }
        shown_again = proven_shown(model, published, values, candidates, min_cell)
        shared = shared_now()
    if report.overall_weighted is not None and shared.by_stratum:
        weighted = shown_weighted(
            report.overall_weighted, shared.by_stratum, z_for(report.confidence)
        )
        shared = attrs.evolve(shared, overall_weighted=weighted)
    final = _with_ranges(shared, proven_ranges(shared, verdict.rows))
    cost = None if alone is None else final.disclosure.suppressed_count - alone
    # What another product hides is complementary; a primary cell shown again is not hidden.
    own = len(set(primary_cells(sensitive)) - shown_again)
    return attrs.evolve(final, primary_count=own, ledger_cost=cost, complement=complement)


def true_values(report: Report, sensitivity: Sensitivity) -> dict[Key, int]:
    """Every protected number of the report's shared form, with its true value (inside only).

    What :func:`share` reads before it hides anything: the publication's joint check
    (:func:`chartscore.disclosure.audits.publication_leaks`) needs it.
    """
    field_types = _field_types(report, sensitivity)
    document = report.core().to_dict()
    figures = _figures(report, sensitivity)
    if figures is not None:
        document = _with_figures(document, report)
    full = shared_from_report(
        document, field_types, DEFAULT_MIN_CELL, set(), set(), figures=figures
    )
    return _values(model_of(full), full)


def _suppress(
    model: ReportModel,
    values: Mapping[Key, int],
    counts: Mapping[Key, int],
    min_cell: int,
    *,
    exact: bool,
    start: set[Key] | None = None,
    frozen: frozenset[Key] = frozenset(),
    forced: frozenset[Key] = frozenset(),
) -> tuple[_Suppressor, list[Quantity], list[Key], ComplementCost | None]:
    """Primary and complementary suppression of one model (``start``: hidden already).

    ``forced``: numbers hidden as if primary (another product of the publication hides
    them: :mod:`chartscore.workflows.publication`).

    Returns the state, the sensitive quantities, the primary cells and, with
    ``exact``, how the complementary cells were chosen.
    """
    sensitive = [
        quantity for key, quantity in model.quantities.items() if 1 <= counts[key] < min_cell
    ]
    state = _Suppressor(model, values, min_cell, frozen)
    primary = primary_cells(sensitive)
    sensitive_keys = {quantity.key for quantity in sensitive}
    for quantity in sensitive:
        parts = quantity.parts
        if parts is not None and parts[0] not in sensitive_keys:
            state.proxies[parts[0]] = parts[1]
    primary += sorted(k for k in forced if k in model.quantities and k not in primary)
    state.hide([*sorted(start or ()), *primary])
    _complement(state, sensitive)
    state.hidden = state.hidden - state.public  # forced by a closure, maybe: known, so shown
    complement = None
    if exact:  # with releases the greedy's: their patterns then differ less
        complement = _exact(state, frozenset(primary), sensitive)
    return state, sensitive, primary, complement


def _without_labels(full: SharedReport) -> SharedReport:
    # The report without its labels: its core, as shared without them.
    def core(part: SharedSlice) -> SharedSlice:
        return attrs.evolve(part, labels=None, scores={})

    return attrs.evolve(full, by_field={k: core(v) for k, v in full.by_field.items()})


def _labelled(core: ComplementCost, state: _Suppressor) -> ComplementCost:
    # The core's choice (exact or greedy, with its bound), then what the labels' greedy
    # step added to its price.
    return attrs.evolve(core, labels=pattern_price(state.hidden) - core.cost)


def _exact(
    state: _Suppressor, primary: frozenset[Key], sensitive: list[Quantity]
) -> ComplementCost:
    """The minimum-cost pattern in place of the greedy's when the report is small enough.

    The greedy's pattern (already in ``state``) is kept for a large report, or when the
    exact loop does not finish in its rounds; either way a lower bound is recorded.
    """
    greedy = pattern_price(state.hidden)
    problem = Problem(
        model=state.model,
        values=state.values,
        min_cell=state.min_cell,
        numbers=state.numbers,
        identities=state.identities,
        proxies=state.proxies,
        primary=primary,
        sensitive=sensitive,
        seed=state.seed,
    )
    small = len(state.numbers) - len(primary) <= EXACT_LIMIT
    exact, bound = exact_choice(problem, small=small)  # the greedy's stands without one
    exact = None if exact is None else exact - state.public
    if exact is None or pattern_price(exact) > greedy:
        return ComplementCost("greedy", greedy, greedy, bound)
    state.hidden = set(exact)
    cost = pattern_price(exact)
    return ComplementCost("exact", cost, greedy, cost)


def _with_ranges(shared: SharedReport, proven: Mapping[Key, Range]) -> SharedReport:
    """The audited report with its ranges and rate bounds, read back from its own JSON.

    The ranges are the audit's (no second solve); reading the JSON back checks
    every bound against its ranges, and the ranges are checked against the
    audit's once more on what was read.
    """
    final = SharedReport.from_json(shared.with_ranges(proven).to_json())
    if range_failures(final, proven) or dict(final.numbers()) != dict(shared.numbers()):
        raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
    return final


def _solver(state: _Suppressor, hidden: set[Key] | None = None) -> RangeSolver:
    """A lazy range solver for a hidden set, seeded with a known feasible point."""
    binding = state.binding if hidden is None else None  # hiding only grows: still bind
    published = state.published(hidden)
    return range_solver(state.model, published, state.min_cell, seed=state.seed, binding=binding)


def _complement(state: _Suppressor, sensitive: list[Quantity]) -> None:
    """Hide further numbers until every sensitive quantity is protected: the one loop
    (:func:`~chartscore.disclosure.complement.complement`) over the report's view."""
    complement(_ReportView(state, len(sensitive)), sensitive)


class _ReportView:
    """The report's :class:`~chartscore.disclosure.complement.View`.

    A cheap local check (:class:`~chartscore.disclosure.ranges.LocalCheck`) certifies
    most quantities; the exact solver decides the rest. A candidate (a number sharing an
    outcome class, else any published one) is priced by everything its hiding forces
    (its closure under the identities), by what that adds to the pattern's price (the
    whole price's order); one that forces a frozen number goes last (labels:
    docs/disclosure.md). The cheapest :data:`_TRIALS` are tried.
    """

    trials = _TRIALS

    def __init__(self, state: _Suppressor, total: int) -> None:
        self.state, self.total = state, total
        self.local = LocalCheck(state.model, _seed(state))
        # Each candidate's closure, with the identities it looked at: kept while no number
        # those identities read is hidden (hidden numbers only ever join here), since it is
        # then the closure computed afresh (_Suppressor.added).
        self.closures: dict[Key, tuple[set[Key], set[int]]] = {}

    def exposed(self, pending: list[Quantity]) -> list[Quantity]:
        state = self.state
        locally = functools.partial(state.local_safe, self.local, published=state.published())
        pending = settle(pending, locally, self.total)
        if pending:
            solver = _solver(state)
            exactly = functools.partial(
                protected, solver, values=state.values, min_cell=state.min_cell
            )
            pending = settle(pending, exactly, self.total, wide=solver.widest >= _WIDE)
            state.points = solver.points()  # tables of every later hidden set: audit hints
        return pending

    def certified(self, quantity: Quantity, extra: AbstractSet[Key] = frozenset()) -> bool:
        hidden = Overlay(self.state.hidden, extra) if extra else None
        return self.state.local_safe(self.local, quantity, self.state.published(hidden))

    def candidates(self, quantity: Quantity) -> Collection[Key]:
        return self.state.candidates(quantity) or self.state.unlinked()

    def fallback(self, quantity: Quantity) -> Collection[Key]:
        return ()  # the candidates end with every published number: none is left

    def rank(self, quantity: Quantity, candidates: Collection[Key]) -> list[Key]:
        state = self.state
        forced = {key: self.forces(key) for key in candidates}
        destroyed = state.destroyed()
        added = {key: marginal_price(forced[key], state.hidden, destroyed) for key in candidates}
        frozen = {key: not forced[key].isdisjoint(state.frozen) for key in candidates}
        return sorted(candidates, key=lambda k: (frozen[k], added[k], state.cost[k]))

    def forces(self, key: Key) -> set[Key]:
        if key not in self.closures:
            visited: set[int] = set()
            self.closures[key] = (self.state.added([key], visited=visited), visited)
        return self.closures[key][0]

    def hide(self, keys: AbstractSet[Key]) -> None:
        self.state.hidden = self.state.hidden | keys  # a new set, never changed in place
        _forget(self.closures, keys, self.state.readers())


def _forget(
    closures: dict[Key, tuple[set[Key], set[int]]],
    newly: AbstractSet[Key],
    readers: Mapping[Key, list[int]],
) -> None:
    """Drop the closures that ``newly`` hidden numbers may change: those of a number now
    hidden, and those that stepped at an identity reading one of them."""
    touched: set[int] = set()
    for key in newly:
        touched.update(readers.get(key, ()))
    stale = [
        key
        for key, (_, visited) in closures.items()
        if key in newly or not visited.isdisjoint(touched)
    ]
    for key in stale:
        del closures[key]


def _seed(state: _Suppressor) -> np.ndarray:
    """A feasible point of the report with the primary cells hidden (feasible for any superset)."""
    if state.seed is None:
        state.seed = seed_point(_solver(state))
        for variable, value in state.model.most_item_rows(state.seed.tolist()).items():
            state.seed[variable] = value  # feasible for the rule's rows of any subset too
    return state.seed
