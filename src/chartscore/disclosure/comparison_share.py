"""Cell suppression for a comparison: primary by distinct cases, complementary until it audits.

:func:`share_comparison` turns a full :class:`~chartscore.documents.comparison.Comparison`
into a :class:`~chartscore.documents.shared_comparison.SharedComparison`
under the cell-size rule, as :mod:`chartscore.disclosure.suppress` does for a
report, on the paired model
(:class:`~chartscore.disclosure.comparison_model.ComparisonModel`):

1. **Primary.** Every protected quantity whose distinct cases (counted inside
   the boundary) number from 1 to ``min_cell - 1`` is hidden; for a derived
   one (a system's failures, the paired ``both`` or ``neither``), the
   cheapest number it follows from. Numbers another product of the
   publication hides (``hidden``) are hidden too.
2. **Complementary, greedy.** The exact attack checks every sensitive
   quantity: one from 1 to ``min_cell - 1`` must have a consistent table at 0
   or at ``min_cell`` or more, and none may be derivable. For each that
   fails, the cheapest published number sharing a paired class with it is
   hidden (its own slice's first), and the check repeats. Hiding only removes
   equalities, so ranges only widen, and hiding everything passes: it ends.
   It is the report's loop (:func:`chartscore.disclosure.complement.complement`)
   with the comparison's view (:class:`_Greedy`: no certificate, no trials, and a
   hidden number forces nothing).
3. **Self-audit** on the JSON. A hidden number that the audit proves exactly
   and that is neither sensitive nor hidden for another product is published
   after all (its equality holds on every consistent table already: the
   feasible tables, and so every range, stay the same, and no second audit is
   needed).
4. **The exact choice, for small comparisons.** When at most
   :data:`~chartscore.disclosure.optimal.EXACT_LIMIT` numbers remain
   candidates after primary suppression, the shared report's cutting-plane
   loop (:func:`chartscore.disclosure.optimal.solve`: a 0-1 master over
   scipy's HiGHS chooses the cheapest pattern by the declared cost below,
   the same attack checks it, and a cut is added where it exposes a
   quantity) finds a minimum-cost passing pattern. Its master starts with the
   comparison's identities (:func:`_identities`) and, for each sensitive
   derived quantity, the numbers it follows from (one of them is hidden). It
   replaces the greedy's pattern (after step 3) only where its declared cost
   is lower, and is audited in turn (should that audit fail, the greedy's
   stands). Above the limit, or when the loop does not finish in its rounds
   (:data:`~chartscore.disclosure.optimal.ROUNDS`), the greedy's stands.
5. Then the audit's ranges and the bounds are written, and the result read
   back and checked once more.

**Declared cost** (:data:`COMPARISON_PRICING`: the report's prices of
:mod:`chartscore.disclosure.cost` where the concepts match). A pattern is
priced by the rates it destroys, each once, plus its cells (1 in a field
slice, 2 in a field-type slice, 3 overall). A paired metric has three rates:
each system's (its success of the common trials) and the difference (shown,
with Newcombe's interval and McNemar's tests, only when the trials, both
successes and both discordant counts are). Each is priced as the report
prices a rate of that metric's family at that level: agreement (``exact``,
``normalized``) 10 in a field slice, 12 pooled, 16 overall; the safety rates
(``abstention_correctness``, ``answerable_abstention``,
``unanswerable_answer``) 6, 10 and 14. So a metric's trials cost all three of
its rates, a system's success its own rate and the difference, a discordant
count the difference alone, and a gold or system count its cell (a gold
count's twins, a metric's trials, cost their rates: the exact choice hides
them together, or the count would be given back).

**The greedy keeps its tiers**: field-type slices first, then a field's
other numbers, then a field's gold counts and agreement counts (``exact`` and
``normalized``: both systems' successes and the trials), then the overall
slice; within a tier, smaller numbers first; then a fixed order of names.
The greedy hides one number per failing quantity without checking that it
protects it, so the order is a heuristic, not the objective; ordered by the
declared cost instead (a number's added price, its twins with it), it hid
more numbers at a higher declared cost on 7 of the 8 cohorts measured (2
fields, 12 to 100 cases; for example 170 numbers at cost 1,080 against the
tiers' 150 at 1,044, and 166 at 1,074 against 116 at 905), and 4 fewer at the
same cost on the eighth: plain field counts are cheap and rarely protect
anything. So a large comparison's bytes are as before, and the declared cost
decides the exact choice and whether it replaces the greedy's.

**The cohort's composition is public** (docs/disclosure.md): every chart has
every field, so each field's ``field_count`` is known to the outsider whatever is
published. The attack holds them at their values
(:attr:`~chartscore.disclosure.comparison_model.ComparisonModel.composition`;
a field of 1 to ``min_cell - 1`` charts stays a protected cell), and they, their
same-definition twins and (with every field's known) the pooled ``field_count``
are shown and never complementary cells. ``known`` numbers (another product of
the publication shows them) join the composition in the same way. A sensitive
quantity that these known numbers pin by themselves cannot be protected by any
suppression: ``disclosure_audit_failed`` at once.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Final

from chartscore.disclosure.audits.document import (
    DERIVABLE,
    AuditResult,
    audit_comparison,
    comparison_range_failures,
    proven_ranges,
)
from chartscore.disclosure.comparison_model import (
    ComparisonModel,
    comparison_values,
    derived_terms,
)
from chartscore.disclosure.complement import (
    complement,
    exact_choice,
    protected,
    range_solver,
    seed_point,
)
from chartscore.disclosure.cost import RATE, Pricing, Rate, cell_price, family, level
from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.model import Quantity
from chartscore.disclosure.optimal import EXACT_LIMIT, Problem
from chartscore.disclosure.rule import FAILURES, SUCCESS, TOTAL
from chartscore.documents.comparison import Comparison
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
    build_shared_comparison,
    paired_quantity,
    side_quantity,
    system_count,
    with_ranges,
)
from chartscore.documents.shared_report import Key, check_min_cell
from chartscore.errors import ChartscoreError, ErrorCode

_KIND_RANK: Final = {"field_type": 0, "field": 1, "overall": 2}
_PEOPLE_NEED: Final = ("exact_agreement", "normalized_agreement")
_DERIVED: Final = (f".{FAILURES}", f".{BOTH}", f".{NEITHER}")
DIFFERENCE: Final = "difference"
"""A paired metric's third rate: the difference and its tests (besides each system's)."""


def comparison_rates(key: Key) -> tuple[Rate, ...]:
    """The rates a shared comparison's number is a part of (none for a plain count).

    A rate is ``(kind, name, "<metric>.baseline")``, ``".candidate"`` or
    ``".difference"``: the trials are all three's, a system's success its own
    rate's and the difference's, a discordant count the difference's.
    """
    kind, name, quantity = key
    metric, _, part = quantity.partition(".")
    if metric not in SHARED_PAIRED_METRICS:
        return ()
    owners: tuple[str, ...] = ()
    if part == TOTAL:
        owners = (*SYSTEMS, DIFFERENCE)
    elif part in (f"{system}.{SUCCESS}" for system in SYSTEMS):
        owners = (part.partition(".")[0], DIFFERENCE)
    elif part in (BASELINE_ONLY, CANDIDATE_ONLY):
        owners = (DIFFERENCE,)
    return tuple((kind, name, f"{metric}.{owner}") for owner in owners)


def comparison_rate_price(rate: Rate) -> int:
    """The report's price of a rate of the metric's family at the slice's level."""
    kind, _, name = rate
    return RATE[level(kind), family(name.partition(".")[0])]


COMPARISON_PRICING: Final = Pricing(comparison_rates, cell_price, comparison_rate_price)
"""A shared comparison's declared cost (module docstring: cost order)."""


def _failed() -> ChartscoreError:
    return ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)


def _invalid() -> ChartscoreError:
    return ChartscoreError(ErrorCode.INVALID_SENSITIVITY)


def share_comparison(
    comparison: Comparison,
    case_counts: Mapping[Key, int],
    field_types: Mapping[str, str],
    min_cell: int,
    *,
    hidden: Collection[Key] = (),
    known: Mapping[Key, int] | None = None,
    exact: bool = True,
) -> SharedComparison:
    """Suppress small cells of a comparison so it may be shared; audited before it returns.

    Args:
        comparison: The full, value-free comparison.
        case_counts: The distinct cases behind every protected quantity of
            the paired model (computed inside the boundary; never shared).
        field_types: Every field id's type.
        min_cell: Publish 0 or at least this many cases.
        hidden: Numbers hidden whatever else is (primary cells as far as the
            choice goes, and never published again): the ones another product
            of the publication hides. Keys that are not numbers of the
            comparison are ignored.
        known: Numbers another product of the publication shows (meant for the
            gold-only ones: ``field_count``, ``answerable_count``,
            ``unanswerable_count`` of any slice), with their values: known to
            the outsider, so held at their values by the attack, shown, and
            never complementary cells (nor are numbers of the same definition:
            a metric's trials beside ``answerable_count``), like each field's
            ``field_count`` (the composition, known anyway). A key also in
            ``hidden`` is hidden (and not taken as known; a field's
            ``field_count`` stays known to the attack); keys that are not
            numbers of the comparison are ignored.
        exact: Try the exact choice on a small problem (seconds to minutes);
            False keeps the greedy's (a publication, which suppresses the
            comparison again in every round and order).

    Returns:
        The shared comparison: its published numbers equal the comparison's, it
        passes :func:`~chartscore.disclosure.audits.audit_comparison`,
        and no sensitive quantity can be derived exactly.

    Raises:
        ChartscoreError: ``invalid_min_cell``; ``invalid_sensitivity`` when
            the case counts do not cover the quantities exactly or contradict
            the numbers, a ``known`` value is not the comparison's own, or
            ``hidden`` is a string or ``known`` not a mapping;
            ``disclosure_audit_failed`` when a ``known`` number is itself
            sensitive here (it would be shown) or the known numbers alone pin
            a sensitive quantity, or if the result would fail its own audit (a
            bug: nothing is returned).
    """
    min_cell = check_min_cell(min_cell)
    if set(field_types) != set(comparison.by_field):
        raise _invalid()
    model = ComparisonModel(field_types)
    full = build_shared_comparison(comparison, field_types, min_cell, set())
    values = {k: v for k, v in comparison_values(full, model).items() if v is not None}
    if set(case_counts) != set(model.quantities) or set(values) != set(model.quantities):
        raise _invalid()
    for key, cases in case_counts.items():
        value = values[key]
        if type(cases) is not int or not 0 <= cases <= value or (cases == 0) != (value == 0):
            raise _invalid()
    numbers = [key for key, q in model.quantities.items() if not q.derived]
    forced = frozenset(_keys(hidden)) & frozenset(numbers)
    model.composition = _composition(values, field_types, min_cell)
    model.composition.update(_known(model, values, known, forced))
    public = _public(model, numbers, forced)
    sensitive = [q for key, q in model.quantities.items() if 1 <= case_counts[key] < min_cell]
    sensitive_keys = {q.key for q in sensitive}
    if sensitive_keys & public:
        raise _failed()  # another product shows a number this rule must hide
    primary = forced | {q.key for q in sensitive if not q.derived}
    chooser = _Greedy(model, values, min_cell, numbers, public)
    if public:  # what the outsider knows alone must not pin a sensitive quantity
        solver = range_solver(model, {k: values[k] for k in public}, min_cell, seed=chooser.seed)
        if not all(protected(solver, q, values, min_cell) for q in sensitive):
            raise _failed()  # no suppression can protect it
    finish = functools.partial(
        _finish, comparison, field_types, min_cell, sensitive=sensitive_keys, forced=forced
    )
    result = finish(chooser.choose(primary, sensitive))
    candidates = len(numbers) - len(public) - len(primary)
    if exact and candidates <= EXACT_LIMIT:
        choice = _exact(chooser, primary, sensitive, forced, field_types)
        greedy_price = COMPARISON_PRICING.pattern(result[1])
        if choice is not None and COMPARISON_PRICING.pattern(choice) < greedy_price:
            result = _attempt(finish, choice) or result
    return result[0]


def _attempt(
    finish: Callable[[set[Key]], tuple[SharedComparison, set[Key]]], pattern: set[Key]
) -> tuple[SharedComparison, set[Key]] | None:
    # The exact pattern finished and audited; None if its audit fails (never seen).
    done = None
    with contextlib.suppress(ChartscoreError):
        done = finish(pattern)
    return done


def _keys(keys: Iterable[object]) -> list[Key]:
    # The caller's keys that can be a number's: (kind, name, quantity) strings.
    if isinstance(keys, str | bytes):
        raise _invalid()
    out: list[Key] = []
    for key in keys:
        if isinstance(key, tuple) and len(key) == 3 and all(isinstance(p, str) for p in key):
            out.append((key[0], key[1], key[2]))
    return out


def _known(
    model: ComparisonModel,
    values: Mapping[Key, int],
    known: Mapping[Key, int] | None,
    forced: frozenset[Key],
) -> dict[Key, int]:
    # Another product's shown numbers, the comparison's own value each (a hidden one wins).
    if known is None:
        return {}
    if not isinstance(known, Mapping):
        raise _invalid()
    out: dict[Key, int] = {}
    for key in _keys(known):
        quantity = model.quantities.get(key)
        if quantity is None or quantity.derived:
            continue
        value = known[key]
        if type(value) is not int or value != values[key]:
            raise _invalid()  # not the same gold
        if key not in forced:
            out[key] = value
    return out


def _composition(
    values: Mapping[Key, int], field_types: Mapping[str, str], min_cell: int
) -> dict[Key, int]:
    # The cohort's composition, known whatever is published (every chart has every field:
    # docs/disclosure.md): each field's field_count, but one of 1..min_cell-1 charts (a
    # protected cell). One hidden for another product stays known to the attack.
    return {
        key: values[key]
        for key in (("field", field_id, "field_count") for field_id in sorted(field_types))
        if not 1 <= values[key] < min_cell
    }


def _public(model: ComparisonModel, numbers: list[Key], forced: frozenset[Key]) -> frozenset[Key]:
    # The known numbers and their twins (same form), and a field type's and the overall
    # field_count when every field's is known (their sums): hiding one protects nothing.
    known = model.composition
    forms = {model.quantities[key].form for key in known}
    fields = {key[1] for key in numbers if key[0] == "field"}
    if all(("field", field_id, "field_count") in known for field_id in fields):
        forms |= {
            model.quantities[key].form
            for key in numbers
            if key[2] == "field_count" and key[0] in ("field_type", "overall")
        }
    return frozenset(k for k in numbers if model.quantities[k].form in forms and k not in forced)


def _tier(key: Key) -> int:
    # The greedy's order (module docstring: why it keeps its tiers).
    kind, _, quantity = key
    if kind == "field_type":
        return 0
    if kind == "overall":
        return 3
    metric, _, part = quantity.partition(".")
    needed = metric in _PEOPLE_NEED and (part == TOTAL or part.endswith(SUCCESS))
    return 2 if quantity in GOLD_COUNTS or needed else 1


class _Greedy:
    """The greedy choice: one number per failing quantity and round, cheapest first.

    The comparison's :class:`~chartscore.disclosure.complement.View` of the one loop.
    """

    def __init__(
        self,
        model: ComparisonModel,
        values: Mapping[Key, int],
        min_cell: int,
        numbers: list[Key],
        public: frozenset[Key],
    ) -> None:
        self.model = model
        self.values = values
        self.min_cell = min_cell
        self.numbers = numbers
        self.public = public
        order = {key: index for index, key in enumerate(model.quantities)}
        self.cost = {
            key: (_tier(key), values[key], _KIND_RANK[key[0]], key[1], order[key])
            for key in numbers
        }
        self.by_variable: dict[int, list[Key]] = {}
        for key in numbers:
            for variable, _ in model.quantities[key].form:
                self.by_variable.setdefault(variable, []).append(key)
        everything = {key: values[key] for key in numbers}
        self.seed = seed_point(range_solver(model, everything, min_cell, seed=None))
        self.hidden: set[Key] = set()

    def choose(self, primary: frozenset[Key], sensitive: list[Quantity]) -> set[Key]:
        """The greedy's hidden set: the primary cells, then until every quantity passes."""
        self.hidden = set(primary)
        for quantity in sensitive:
            terms = [k for k in _terms(quantity.key) if k not in self.public]
            if quantity.derived and terms:  # else the attack decides (known: shown)
                self.hidden.add(min(terms, key=self.cost.__getitem__))
        complement(self, sensitive)
        return self.hidden

    # The comparison's View (chartscore.disclosure.complement): no cheap certificate, one
    # number per failing quantity (hiding it forces nothing), its own slice's first.
    trials = 0

    def exposed(self, pending: list[Quantity]) -> list[Quantity]:
        """The pending quantities the exact attack does not find protected."""
        published = {k: self.values[k] for k in self.numbers if k not in self.hidden}
        solver = range_solver(self.model, published, self.min_cell, seed=self.seed)
        return [q for q in pending if not protected(solver, q, self.values, self.min_cell)]

    def certified(self, quantity: Quantity, extra: AbstractSet[Key] = frozenset()) -> bool:
        """No cheap certificate: the attack decides, round by round."""
        return False

    def candidates(self, quantity: Quantity) -> set[Key]:
        """The published numbers (not known) sharing a paired class with ``quantity``."""
        return {
            key
            for variable, _ in quantity.form
            for key in self.by_variable.get(variable, ())
            if key not in self.hidden and key not in self.public
        }

    def fallback(self, quantity: Quantity) -> list[Key]:
        """Every linked number is hidden, yet the known composition still pins one: its
        fields' other numbers, else any."""
        return self.around(quantity, self.hidden) or [
            k for k in self.numbers if k not in self.hidden and k not in self.public
        ]

    def rank(self, quantity: Quantity, candidates: Collection[Key]) -> list[Key]:
        """The best alone (no trials): its own slice's first, then the tiers."""
        same = quantity.key[:2]
        return [min(candidates, key=lambda k: (k[:2] != same, self.cost[k]))]

    def forces(self, key: Key) -> set[Key]:
        """Itself: the comparison's greedy does not close over its identities."""
        return {key}

    def hide(self, keys: AbstractSet[Key]) -> None:
        """Add ``keys`` to the hidden set."""
        self.hidden |= keys

    def around(self, quantity: Quantity, hidden: set[Key]) -> list[Key]:
        """The published numbers (not known) touching the fields ``quantity`` touches."""
        touched = {variable for variable, _ in quantity.form}
        out: set[Key] = set()
        for layout in self.model.layouts.values():
            variables = range(layout.offset, layout.offset + layout.size)
            if not touched.isdisjoint(variables):
                for variable in variables:
                    out.update(self.by_variable.get(variable, ()))
        return sorted(k for k in out if k not in hidden and k not in self.public)


def _identities(
    model: ComparisonModel, numbers: list[Key], field_types: Mapping[str, str]
) -> list[tuple[Key, ...]]:
    """The comparison's identities among its numbers, each checked on the forms.

    In every slice: the gold counts' sum; each system's counts' sum; numbers of
    one definition (a metric's trials and a gold count); each metric's ``both``
    two ways (``S_A - baseline_only = S_B - candidate_only``); each system's
    abstention correctness from its counts and safety successes. A pooled
    number is the sum of its fields', the overall one also of the field types'.
    An identity with exactly one hidden term gives that term back, so no
    minimum-cost passing pattern has one: the exact choice's master keeps none.
    """
    signed: list[tuple[tuple[Key, int], ...]] = []
    for kind, name in sorted({key[:2] for key in numbers}):

        def k(quantity: str, kind: str = kind, name: str = name) -> Key:
            return (kind, name, quantity)

        signed.append(
            ((k("field_count"), 1), (k("answerable_count"), -1), (k("unanswerable_count"), -1))
        )
        for system in SYSTEMS:
            counts = [k(system_count(system, count)) for count in SYSTEM_COUNTS]
            signed.append(((k("field_count"), 1), *((count, -1) for count in counts)))
            success = f".{system}.{SUCCESS}"
            signed.append(
                (
                    (k("abstention_correctness" + success), 1),
                    (k(system_count(system, "answered_count")), -1),
                    (k(system_count(system, "abstained_count")), -1),
                    (k("unanswerable_answer" + success), 1),
                    (k("answerable_abstention" + success), 1),
                )
            )
        for metric in SHARED_PAIRED_METRICS:
            signed.append(
                (
                    (k(side_quantity(metric, "baseline", SUCCESS)), 1),
                    (k(paired_quantity(metric, BASELINE_ONLY)), -1),
                    (k(side_quantity(metric, "candidate", SUCCESS)), -1),
                    (k(paired_quantity(metric, CANDIDATE_ONLY)), 1),
                )
            )
    by_form: dict[Form, list[Key]] = {}
    for key in numbers:
        by_form.setdefault(model.quantities[key].form, []).append(key)
    for keys in by_form.values():
        signed += [((a, 1), (b, -1)) for a, b in itertools.pairwise(keys)]
    types = sorted(set(field_types.values()))
    for kind, name, quantity in numbers:
        if kind == "field":
            continue
        members = sorted(f for f, t in field_types.items() if kind == "overall" or t == name)
        total = ((kind, name, quantity), 1)
        signed.append((total, *((("field", f, quantity), -1) for f in members)))
        if kind == "overall":
            signed.append((total, *((("field_type", t, quantity), -1) for t in types)))
    out: list[tuple[Key, ...]] = []
    for identity in signed:
        if all(key in model.quantities for key, _ in identity) and not add(
            *((model.quantities[key].form, sign) for key, sign in identity)
        ):
            out.append(tuple(key for key, _ in identity))
    return out


def _exact(
    chooser: _Greedy,
    primary: frozenset[Key],
    sensitive: list[Quantity],
    forced: frozenset[Key],
    field_types: Mapping[str, str],
) -> set[Key] | None:
    """The minimum-cost passing pattern (the report's exact choice), or None if it does not finish.

    The known numbers and their twins are no candidates (the attack knows them:
    the model's composition); an identity loses them as terms, since their values
    are known, and an identity with a number hidden only for another product is
    left out (that number may be derivable: it need not be protected).
    """
    numbers = [key for key in chooser.numbers if key not in chooser.public]
    identities: list[tuple[Key, ...]] = []
    sensitive_keys = {q.key for q in sensitive}
    for identity in _identities(chooser.model, chooser.numbers, field_types):
        terms = tuple(key for key in identity if key not in chooser.public)
        if len(terms) >= 2 and not any(k in forced and k not in sensitive_keys for k in terms):
            identities.append(terms)
    problem = Problem(
        model=chooser.model,
        values=chooser.values,
        min_cell=chooser.min_cell,
        numbers=numbers,
        identities=identities,
        proxies={},
        primary=primary,
        sensitive=sensitive,
        seed=chooser.seed,
        pricing=COMPARISON_PRICING,
        cuts=[
            tuple(k for k in _terms(q.key) if k not in chooser.public)
            for q in sensitive
            if q.derived
        ],
    )
    found, _ = exact_choice(problem, small=True)  # None: the greedy's pattern stands
    return None if found is None else set(found)


def _terms(key: Key) -> tuple[Key, ...]:
    """The numbers a derived quantity follows from (published together, they give it)."""
    kind, name, label = key
    if not label.endswith(_DERIVED):
        return ()
    return tuple((kind, name, term) for term, _ in derived_terms(label))


def _finish(
    comparison: Comparison,
    field_types: Mapping[str, str],
    min_cell: int,
    pattern: set[Key],
    *,
    sensitive: set[Key],
    forced: frozenset[Key],
) -> tuple[SharedComparison, set[Key]]:
    """The audited shared comparison of a pattern, with its ranges; and what it hides.

    The sensitive numbers and the ones hidden for another product (``forced``) stay
    hidden even where the audit proves them exactly.
    """
    hidden = set(pattern)
    shared = build_shared_comparison(comparison, field_types, min_cell, hidden)
    verdict = audit_comparison(shared.to_json())
    _check(verdict, sensitive)
    # A hidden number the audit proves exactly (and not sensitive) is published: its
    # equality holds on every consistent table already, so no range changes.
    derivable = {
        (row.slice_kind, row.slice_name, row.name)
        for row in verdict.rows
        if row.status == DERIVABLE
    }
    shown_again = (derivable & hidden) - sensitive - forced
    proven = proven_ranges(shared, verdict.rows)
    if shown_again:
        # No second audit: the feasible tables, and so every row, are the same; the
        # published numbers' rows leave the table (docs/disclosure.md).
        hidden -= shown_again
        shared = build_shared_comparison(comparison, field_types, min_cell, hidden)
    final = SharedComparison.from_json(with_ranges(shared, proven).to_json())
    if comparison_range_failures(final, proven) or dict(final.numbers()) != dict(shared.numbers()):
        raise _failed()
    return final, hidden


def _check(verdict: AuditResult, sensitive: set[Key]) -> None:
    # The self-audit passes, and no sensitive quantity is derivable exactly (a number
    # hidden only for another product may be).
    exposed = any(
        row.status == DERIVABLE and (row.slice_kind, row.slice_name, row.name) in sensitive
        for row in verdict.rows
    )
    if not verdict.passed or exposed:
        raise _failed()
