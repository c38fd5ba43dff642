"""The complementary choice: one greedy loop over a view of the model, and the exact choice.

Primary suppression hides the small cells; the complementary choice hides further
numbers until the attack finds every sensitive quantity protected. A shared
report (:mod:`chartscore.disclosure.suppress`), a shared comparison
(:mod:`chartscore.disclosure.comparison_share`), a release in a ledger
(:class:`~chartscore.disclosure.releases.ReleaseStep`) and a publication's joint
choice (:mod:`chartscore.disclosure.joint_choice`) make it by the same loop,
:func:`complement`, each through a :class:`View` of its own model: which numbers
are candidates for an exposed quantity (the release's: an atom's; the joint
choice's: a pinned number's, by its relaxed escape) and in which order, what
hiding one forces, a cheap certificate (if any) and the candidates when a round
hid nothing. The loop alone decides the order of events, so the four cannot
drift apart.

The loop, round by round: the view's attack keeps the quantities still exposed
(hiding only widens ranges, so a protected one stays protected and only those are
rechecked); for each, unless the certificate shows that numbers hidden earlier in
the round protect it, the view's best-ranked candidates are tried (up to
:attr:`View.trials`, with the certificate) and the first that protects it, or else
the best, is hidden with everything it forces. A round that hid nothing tries the
view's fallback candidates; when there are none either, nothing is left to hide:
``disclosure_audit_failed`` (hiding everything protects every quantity, so the
loop ends). Small problems then get the minimum-cost pattern of
:mod:`chartscore.disclosure.optimal` (:func:`exact_choice`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, Protocol, TypeVar

import numpy as np

from chartscore.disclosure import split
from chartscore.disclosure.forms import Form
from chartscore.disclosure.model import Key, Quantity, ReportModel
from chartscore.disclosure.optimal import Problem, Unsolved, lower_bound, solve
from chartscore.disclosure.progress import step
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.errors import ChartscoreError, ErrorCode

_T = TypeVar("_T")
_Q = TypeVar("_Q")
"""What a view's attack judges: a report's or comparison's quantity, a release's atom target."""

SUPPRESSING: Final = "suppressing"
"""The progress stage of checking small cells (done: how many are protected so far)."""
CHOOSING: Final = "choosing complementary cells"
"""The progress stage of hiding numbers for the cells still exposed in a pass."""


class View(Protocol[_Q]):
    """One document's side of the complementary choice (the loop reads nothing else)."""

    @property
    def trials(self) -> int:
        """How many of the best-ranked candidates the certificate tries (0: the best)."""
        ...

    def exposed(self, pending: list[_Q]) -> list[_Q]:
        """The pending quantities the attack does not find protected under the hidden set."""
        ...

    def certified(self, quantity: _Q, extra: AbstractSet[Key] = frozenset()) -> bool:
        """A cheap proof that ``quantity`` is protected with ``extra`` hidden too (or False)."""
        ...

    def candidates(self, quantity: _Q) -> Collection[Key]:
        """Published numbers whose hiding may protect ``quantity`` (none: hidden already)."""
        ...

    def fallback(self, quantity: _Q) -> Collection[Key]:
        """The candidates once a round hid nothing (its linked numbers are all hidden)."""
        ...

    def rank(self, quantity: _Q, candidates: Collection[Key]) -> Sequence[Key]:
        """Candidates best first (at least the first ``max(trials, 1)``)."""
        ...

    def forces(self, key: Key) -> AbstractSet[Key]:
        """What hiding ``key`` hides: itself and what it forces (not hidden yet)."""
        ...

    def hide(self, keys: AbstractSet[Key]) -> None:
        """Add ``keys`` to the hidden set."""
        ...


def complement(view: View[_Q], sensitive: Sequence[_Q]) -> None:
    """Hide numbers through ``view`` until every sensitive quantity is protected.

    Raises:
        ChartscoreError: ``disclosure_audit_failed`` when a quantity stays exposed with
            nothing left to hide (cannot happen: hiding everything protects it).
    """
    pending = list(sensitive)
    while pending:
        pending = view.exposed(pending)
        if not pending or _round(view, pending, view.candidates):
            continue
        if not _round(view, pending, view.fallback):
            raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)


def _round(view: View[_Q], pending: list[_Q], source: Callable[[_Q], Collection[Key]]) -> bool:
    """One number (and what it forces) per exposed quantity; whether any was hidden."""
    hid = False
    for done, quantity in enumerate(pending):
        step(CHOOSING, done, len(pending))
        if view.certified(quantity):
            continue  # protected by a number hidden for an earlier one
        linked = source(quantity)
        if not linked:
            continue  # what this round hid may protect it: the attack rechecks
        ranked = view.rank(quantity, linked)
        chosen = ranked[0]
        for key in ranked[: view.trials]:
            if view.certified(quantity, view.forces(key)):
                chosen = key
                break
        view.hide(view.forces(chosen))
        hid = True
    return hid


def range_solver(
    model: ReportModel,
    published: Mapping[Key, int],
    min_cell: int,
    *,
    seed: np.ndarray | None,
    binding: set[tuple[Form, int]] | None = None,
) -> RangeSolver:
    """A lazy range solver of the published numbers with the rule's knowledge (a view's attack).

    ``seed``: a known feasible point; ``binding``: the rule's rows found to bind so far.
    """

    def build() -> RangeSolver:
        knowledge = beyond_published(model, published, model.knowledge(published, min_cell))
        return RangeSolver(
            model, published, eager=False, seed=seed, knowledge=knowledge, binding=binding
        )

    return _solved(build)


def _solved(compute: Callable[[], _T]) -> _T:
    """``compute()``, the solver's own failures turned into ``disclosure_audit_failed``.

    Why: the solver's exceptions carry its problem; the error is raised outside the
    handler, so none of it is chained to what the caller sees.
    """
    failed = False
    result: _T | None = None
    try:
        result = compute()
    except (Inconsistent, Unresolved):
        failed = True
    if failed or result is None:
        raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
    return result


def beyond_published(
    model: ReportModel, published: Mapping[Key, int], knowledge: Sequence[tuple[Form, int]]
) -> list[tuple[Form, int]]:
    """The rows of ``knowledge`` that a published number of the same form does not imply.

    A row ``form >= bound`` (or ``-form >= bound``) beside a published ``form == value``
    with ``value >= bound`` (``-value >= bound``) never binds the LP relaxation: the
    solver would spend a linear program to drop it (a comparison's known numbers, each
    two such rows, in every round). Where the LP cannot settle, it would keep it: a row
    the published equality implies, so every answer is the same.
    """
    shown: dict[Form, int | None] = {}
    for key, value in published.items():
        quantity = model.quantities[key]
        if quantity.derived or not quantity.form:
            continue
        if shown.setdefault(quantity.form, value) != value:
            shown[quantity.form] = None  # contradictory: the solver says so
    out: list[tuple[Form, int]] = []
    for form, bound in knowledge:
        held = shown.get(form)
        if held is not None and held >= bound:
            continue
        held = shown.get(tuple((variable, -coefficient) for variable, coefficient in form))
        if held is not None and -held >= bound:
            continue
        out.append((form, bound))
    return out


def seed_point(solver: RangeSolver) -> np.ndarray:
    """A feasible point of the solver's published numbers (feasible for any subset of them:
    a seed for the solvers of larger hidden sets)."""
    return _solved(solver.point)


def protected(
    solver: RangeSolver, quantity: Quantity, values: Mapping[Key, int], min_cell: int
) -> bool:
    """Whether a sensitive quantity is protected under the solver's published numbers."""
    return _solved(lambda: solver.protected(quantity.form, values[quantity.key], min_cell))


def settle(
    pending: list[Quantity], safe: Callable[[Quantity], bool], total: int, *, wide: bool = False
) -> list[Quantity]:
    """The pending quantities ``safe`` does not settle; reports how many of ``total`` are.

    ``wide``: the questions are hard enough to split over two processes (each answer
    is exact, so the split changes none; :mod:`chartscore.disclosure.split`).
    """
    settled = [total - len(pending)]

    def check(quantity: Quantity) -> bool:
        verdict = safe(quantity)
        settled[0] += verdict
        step(SUPPRESSING, settled[0], total)
        return verdict

    verdicts = split.answers(check, pending, worth=wide)
    kept = [quantity for quantity, verdict in zip(pending, verdicts, strict=True) if not verdict]
    if wide:  # this process counted only its own half
        step(SUPPRESSING, total - len(kept), total)
    return kept


class Overlay(AbstractSet[Key]):
    """A hidden set and the numbers a candidate adds to it, seen as one set (neither copied)."""

    __slots__ = ("added", "base")

    def __init__(self, base: AbstractSet[Key], added: AbstractSet[Key]) -> None:
        self.base, self.added = base, added

    def __contains__(self, key: object) -> bool:
        return key in self.base or key in self.added

    def __iter__(self) -> Iterator[Key]:
        yield from self.base
        yield from (key for key in self.added if key not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(1 for key in self.added if key not in self.base)


def exact_choice(problem: Problem, *, small: bool) -> tuple[frozenset[Key] | None, int | None]:
    """The minimum-cost passing pattern of a small problem, and a lower bound on any.

    A large problem gets the bound alone (the master's relaxation); either is None
    where HiGHS does not settle it, and the pattern is None when the loop does not
    finish in its rounds: the greedy's pattern then stands, and the audit decides.
    """
    found: frozenset[Key] | None = None
    bound: int | None = None
    with contextlib.suppress(Unsolved):
        if small:
            solution = solve(problem)
            found, bound = solution.hidden, solution.lower_bound
        else:
            bound = lower_bound(problem)
    return found, bound
