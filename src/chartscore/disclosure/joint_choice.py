"""The publication's joint choice: complementary cells chosen on the joint model itself.

A publication (docs/disclosure.md, "One publication") first suppresses each product
under the numbers the others hide and show; held together they may still leak: the
joint attack pins a hidden number into 1..min cell - 1. Before, every product was then
suppressed again with the leaking slices forced hidden, until no leak was left (7 or 8
rounds on the study, each every product's suppression and a joint attack).
:func:`joint_choice` instead chooses the further numbers to hide on the
:class:`~chartscore.disclosure.publication.PublicationModel` that the joint audit
attacks, in one or a few steps:

1. **A relaxed escape per pinned number.** One linear program over the joint model:
   a real table that keeps every shown number it does not move (and the rule's rows
   of what is shown), puts the pinned number at 0 (else at min cell or more), and
   moves shown numbers of the least declared price
   (:func:`~chartscore.disclosure.cost.key_price`). The numbers it moves are the ones
   to hide: with them hidden, such a table is consistent with what is published.
   Across products the ties do the linking: a comparison's paired cell pinned through
   the reports' counts moves whichever of them is cheapest.
2. **One decision.** A gold-only number
   (:func:`~chartscore.disclosure.publication.gold_only_keys`) is hidden in every
   product that shows it, a number of one system in every product of that system.
   The composition (``field_count``) is never moved: it is known whatever is hidden.
3. **The check.** Everything chosen in a step is hidden at once, the joint solver is
   built once over what is then shown, and only the numbers still pinned (and any newly
   hidden small one, beside a stricter product) are asked again. A number the
   relaxation frees but no whole table does (integrality) falls back to its cheapest
   linked number (same slice and metric first). Hiding only removes equalities and
   the rule's rows, so a number once protected stays protected.

The steps are the rounds of the one complementary loop,
:func:`chartscore.disclosure.complement.complement`, that a shared report, a shared
comparison and a release run too, here over the joint view (:class:`_JointView`): its
quantities are the pinned numbers, its attack the check above, a pinned number's
candidates its escape's moves (else the fallback's linked numbers), what one forces the
escape's other moves and their one decision; its hides wait for the next check. The loop
decides the order of events; the view, what each step asks and moves.

At most :data:`STEPS` steps; a pinned number nothing can free, or a solver that cannot
settle, gives up (``extra`` None) and the caller hides whole slices as before. The
caller then suppresses each product again with its old hidden numbers and these forced
(each keeps its own audit: hiding more widens every range), and the joint attack runs
once more on the documents themselves, given this choice's proofs (:class:`Proof`): it asks
only the numbers they do not cover. Value-free: numbers and counts (the true values
stay inside), never a value or case id.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final

import attrs
import numpy as np

from chartscore.disclosure.audits.publication import PublicationRow, joint_leaks
from chartscore.disclosure.complement import complement
from chartscore.disclosure.cost import key_price
from chartscore.disclosure.forms import Form
from chartscore.disclosure.lp import OPTIMAL, columnwise, solve_as_linprog
from chartscore.disclosure.model import Key
from chartscore.disclosure.publication import (
    JointPublication,
    Product,
    System,
    product_key,
)
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved

STEPS: Final = 24
"""The most joint solves one choice makes before it gives up (each hides more)."""
_TOLERANCE: Final = 1e-6
"""A relaxed escape's move smaller than this is the solver's rounding, not a move."""
_PUBLIC: Final = "field_count"
"""Counts the cohort's composition makes known whatever is hidden: never a candidate."""


class _Chooser:
    """One joint choice's state: the shown numbers, their links, what is hidden so far."""

    def __init__(
        self,
        joint: JointPublication,
        systems: Sequence[System],
        values: Sequence[Mapping[Key, int]],
        gold_keys: frozenset[Key],
    ) -> None:
        self.joint = joint
        self.systems = list(systems)
        self.values = values
        self.gold_keys = gold_keys
        self.published = dict(joint.published)
        self.extra: list[set[Key]] = [set() for _ in systems]
        model = joint.model
        # Each shown number by the variables of its form (its own product's key too).
        self.owner: dict[Key, tuple[int, Key]] = {}
        self.by_variable: dict[int, list[Key]] = {}
        for index, product in enumerate(model.products):
            for own in product.quantities:
                joint_key = product_key(index, own)
                if joint_key not in self.published or own[2] == _PUBLIC:
                    continue
                self.owner[joint_key] = (index, own)
                for variable, _ in model.quantities[joint_key].form:
                    self.by_variable.setdefault(variable, []).append(joint_key)
        # Each variable's neighbours through a row of the model (ties, inequalities).
        self.rows_of: dict[int, list[int]] = {}
        for number, row in enumerate(model.inequalities):
            for variable, _ in row:
                self.rows_of.setdefault(variable, []).append(number)

    def candidates(self, index: int, key: Key) -> list[Key]:
        """The shown numbers linked to a product's hidden ``key`` (joint keys): of its slice
        and metric first, then of its slice, then the rest; cheapest first in each.

        Linked: the form shares a variable with ``key``'s, or with a row of the model
        (a tie, an inequality) that touches it. The fallback when the relaxed escape
        moves nothing (a pin by integrality alone)."""
        model = self.joint.model
        form = model.quantities[product_key(index, key)].form
        reach = {variable for variable, _ in form}
        for variable, _ in form:
            for number in self.rows_of.get(variable, ()):
                reach.update(v for v, _ in model.inequalities[number])
        linked = {
            joint_key
            for variable in reach
            for joint_key in self.by_variable.get(variable, ())
            if joint_key in self.published
        }
        near = key[:2]
        metric = key[2].split(".", 1)[0]

        def rank(joint_key: Key) -> tuple[int, int, int, int, Key]:
            own = self.owner[joint_key][1]
            tier = 2 - (own[:2] == near) - (own[:2] == near and own[2].split(".", 1)[0] == metric)
            return (tier, *self._cost(joint_key))

        return sorted(linked, key=rank)

    def group(self, joint_key: Key) -> list[tuple[int, Key]]:
        """What hiding a shown number hides: the same number wherever it gets one decision."""
        index, own = self.owner[joint_key]
        out = []
        for other, system in enumerate(self.systems):
            same = system == self.systems[index]
            decided = other == index or same or own in self.gold_keys
            if decided and product_key(other, own) in self.published:
                out.append((other, own))
        return out

    def _cost(self, joint_key: Key) -> tuple[int, int, int, Key]:
        index, own = self.owner[joint_key]
        price = sum(key_price(key) for _, key in self.group(joint_key))
        return price, self.values[index].get(own, 0), index, own

    def relaxation(self) -> _Relaxation:
        """The relaxed escapes over what is shown now, each movable number at its price."""
        prices = {joint_key: key_price(self.owner[joint_key][1]) for joint_key in self.owner}
        return _Relaxation(self.joint, self.published, prices)

    def hide(self, joint_key: Key) -> None:
        """Hide a shown number and every number of its decision."""
        for index, own in self.group(joint_key):
            self.published.pop(product_key(index, own), None)
            self.extra[index].add(own)


@attrs.frozen(repr=False)  # inside only: keys and nothing else, but no repr to widen
class JointChoice:
    """The joint attack's verdict on a publication and, where it fails, the joint choice.

    Attributes:
        leaks: The hidden numbers the publication pins into 1..min cell - 1
            (:func:`~chartscore.disclosure.audits.publication_leaks`'s rows).
        extra: Each product's further numbers to hide (all empty when nothing
            leaks), or None when the choice cannot protect a pinned number
            (nothing reaches it, the solver cannot settle it, or :data:`STEPS`
            pass): the caller then hides whole slices.
        proofs: What this attack and the earlier ones (``proofs`` given) proved
            protected, for the next round's attack (the last :data:`PROOFS`).
    """

    leaks: list[PublicationRow]
    extra: list[set[Key]] | None
    proofs: tuple[Proof, ...] = ()


PROOFS: Final = 4
"""How many proofs a joint choice hands on (each holds a region's rows and forms)."""

Region = frozenset[tuple[str, Form, int]]
"""Every row of a joint attack: ``("=", form, value)`` per shown number, ``(">=", form,
bound)`` per row of the model and of the rule; with the variables, its whole feasible set."""


@attrs.frozen(repr=False)  # inside only: true values
class Proof:
    """Hidden numbers proven protected over one region of a joint model.

    Why: protected means some table of the region frees the number (puts it at 0 or
    at min cell or more), and that table lies in every region with fewer rows over
    the same variables. A later round hides only more, so its attack usually has a
    subset of these rows: it need not ask these numbers again (it checks the subset,
    never assumes it). The region had a feasible table (its solver was built), so a
    later one with a subset of its rows is consistent too.

    Attributes:
        size: The joint model's variables.
        min_cell: The min cell each number was judged by.
        rows: The region's rows.
        protected: Each proven number's form and true value.
    """

    size: int
    min_cell: int
    rows: Region
    protected: frozenset[tuple[Form, int]]

    def holds(self, joint: JointPublication, rows: Region) -> bool:
        """Whether every table of this proof's region is in ``joint``'s region ``rows``."""
        return (
            self.size == joint.model.size and self.min_cell == joint.min_cell and rows <= self.rows
        )


def _region(
    joint: JointPublication, shown: Mapping[Key, int], knowledge: Sequence[tuple[Form, int]]
) -> Region:
    # The rows of the joint attack over ``shown`` (the solver's: see RangeSolver).
    quantities = joint.model.quantities
    equal = (("=", quantities[key].form, value) for key, value in shown.items())
    model = ((">=", form, 0) for form in joint.model.inequalities)
    return frozenset([*equal, *model, *((">=", form, bound) for form, bound in knowledge)])


def joint_choice(
    products: Sequence[Product],
    systems: Sequence[System],
    values: Sequence[Mapping[Key, int]],
    gold_keys: frozenset[Key],
    proofs: Sequence[Proof] = (),
) -> JointChoice:
    """The joint leaks of a publication, and what each product must hide besides to end them.

    One joint model serves both: the leak check is
    :func:`~chartscore.disclosure.audits.publication_leaks`'s, and the choice
    starts from its solver (see the module). A hidden number an earlier round's
    :class:`Proof` covers (its region holds this one's) is not asked again, and
    where none is left to ask no solver is built: the same verdicts.

    Args:
        products: The publication's shared products (each passes its own audit).
        systems: Each product's system, as for
            :func:`~chartscore.disclosure.audits.audit_publication`.
        values: Each product's true values (inside only).
        gold_keys: The gold-only numbers: one decision for every product.
        proofs: An earlier round's :attr:`JointChoice.proofs` (values: the same).
    """
    joint = JointPublication(products, systems)
    known = joint.model.knowledge(joint.published, joint.min_cell)
    rows = _region(joint, joint.published, known)
    held = [proof for proof in proofs if proof.holds(joint, rows)]
    proven = frozenset().union(*(proof.protected for proof in held))
    ask = [(i, key) for i, key in joint.hidden if _asked(joint, values, i, key) not in proven]
    kept = tuple(proofs)
    if held and not any(_small(joint, values, i, key) for i, key in ask):
        return JointChoice([], [set() for _ in systems], kept[-PROOFS:])
    solver, problem = joint.solver(knowledge=known)
    if solver is None:
        return JointChoice([PublicationRow.whole(problem)], None)
    leaks = joint_leaks(joint, solver, values, ask)
    kept += (_proof(joint, rows, values, ask, leaks, proven=proven),)
    chooser = _Chooser(joint, systems, values, gold_keys)
    view = _JointView(chooser, values)
    try:
        complement(view, [(row.product, row.key) for row in leaks])
    except _UnreachableError:
        return JointChoice(leaks, None)
    kept += tuple(view.proofs)
    return JointChoice(leaks, None if view.gave_up else chooser.extra, kept[-PROOFS:])


class _UnreachableError(Exception):
    """A pinned number that no relaxed escape frees and no shown number is linked to."""


class _JointView:
    """The joint choice's :class:`~chartscore.disclosure.complement.View`: pinned numbers.

    The quantities are the pinned hidden numbers (a product and its key), the candidates
    shown numbers of the joint model (joint keys). A round is one step: every escape is
    computed against what the round began with showing (one relaxation, built at its
    first question), each chosen escape's moves cost the round's later escapes nothing,
    and they are hidden together (each with its one decision, in sorted order) when the
    attack next looks: :meth:`exposed` builds the joint solver once over what is then
    shown and asks only the numbers still pinned and the newly hidden ones. The first
    look keeps what the leak check pinned (nothing is hidden yet). After :data:`STEPS`
    steps with a number still pinned, or when the solver cannot settle, the view gives
    up (:attr:`gave_up`) and reports nothing exposed, which ends the loop. No
    certificate: a pinned number is the joint attack's, which only the joint solver sees.
    """

    trials = 0

    def __init__(self, chooser: _Chooser, values: Sequence[Mapping[Key, int]]) -> None:
        self.chooser = chooser
        self.values = values
        self.steps = 0
        """The steps so far (each one joint solve over what is then shown)."""
        self._started = False
        self.gave_up = False
        """Whether the choice gave up: :data:`STEPS` steps, or a solver that cannot settle."""
        self.proofs: list[Proof] = []
        """What each step's attack proved protected."""
        self.chosen: set[Key] = set()
        """The round's moves, hidden (with their decisions) when the attack next looks."""
        self._relaxation: _Relaxation | None = None
        self._escape: frozenset[Key] = frozenset()
        self._moves: frozenset[Key] = frozenset()

    def exposed(self, pending: list[tuple[int, Key]]) -> list[tuple[int, Key]]:
        chooser = self.chooser
        if not self._started:
            self._started = True
            return pending  # the leak check's own verdict: nothing is hidden yet
        for joint_key in sorted(self.chosen):
            chooser.hide(joint_key)
        self.chosen = set()
        self._relaxation = None
        extra = [(i, k) for i, keys in enumerate(chooser.extra) for k in sorted(keys)]
        found = _still_pinned(
            chooser.joint, chooser.published, self.values, [*dict.fromkeys(pending + extra)]
        )
        if found is None:
            self.gave_up = True
            return []
        pinned, proof = found
        self.proofs.append(proof)
        self.steps += 1
        if pinned and self.steps >= STEPS:
            self.gave_up = True
            return []
        return pinned

    def certified(self, quantity: tuple[int, Key], extra: AbstractSet[Key] = frozenset()) -> bool:
        return False

    def candidates(self, quantity: tuple[int, Key]) -> list[Key]:
        """The shown numbers a cheapest relaxed escape of the pinned number moves, else (no
        table, or the relaxation's is not whole: a pin by integrality) the fallback's."""
        index, key = quantity
        if self._relaxation is None:
            self._relaxation = self.chooser.relaxation()
        form = self.chooser.joint.model.quantities[product_key(index, key)].form
        moved = self._relaxation.moved(form)
        self._escape = frozenset(moved or ())
        linked = sorted(moved) if moved else self.fallback(quantity)
        if not linked:
            raise _UnreachableError
        return linked

    def fallback(self, quantity: tuple[int, Key]) -> list[Key]:
        return self.chooser.candidates(*quantity)

    def rank(self, quantity: tuple[int, Key], candidates: Collection[Key]) -> list[Key]:
        return list(candidates)  # an escape's moves go together; the fallback's: ranked

    def forces(self, key: Key) -> set[Key]:
        """Every number the escape that moves ``key`` moves (else ``key``), each with the
        same number wherever it gets one decision."""
        self._moves = self._escape if key in self._escape else frozenset([key])
        group = self.chooser.group
        return {product_key(i, own) for moved in self._moves for i, own in group(moved)}

    def hide(self, keys: AbstractSet[Key]) -> None:
        # ``keys`` is what the last moves force; the moves alone are recorded (hiding one
        # hides its decision) and, as a step's moves did, cost the later escapes nothing.
        self.chosen |= self._moves
        if self._relaxation is not None:
            self._relaxation.free(self._moves)


def _asked(
    joint: JointPublication, values: Sequence[Mapping[Key, int]], index: int, key: Key
) -> tuple[Form, int | None]:
    # What a leak check asks of a product's hidden number: its joint form and true value.
    return joint.model.quantities[product_key(index, key)].form, values[index].get(key)


def _small(joint: JointPublication, values: Sequence[Mapping[Key, int]], i: int, key: Key) -> bool:
    # Whether the leak check asks about this number at all (only a small one can be pinned).
    value = values[i].get(key)
    return value is not None and 1 <= value < joint.min_cell


def _proof(
    joint: JointPublication,
    rows: Region,
    values: Sequence[Mapping[Key, int]],
    asked: Sequence[tuple[int, Key]],
    leaks: Sequence[PublicationRow],
    *,
    proven: frozenset[tuple[Form, int]] = frozenset(),
) -> Proof:
    # The numbers of ``asked`` that the leak check over ``rows`` found protected (with
    # ``proven``: covered there by earlier proofs).
    pinned = {(row.product, row.key) for row in leaks}
    protected = {
        (form, value)
        for i, key in asked
        if (i, key) not in pinned and _small(joint, values, i, key)
        for form, value in [_asked(joint, values, i, key)]
        if value is not None
    }
    return Proof(joint.model.size, joint.min_cell, rows, frozenset(protected) | proven)


class _Relaxation:
    """The relaxed escapes of one step: linear programs over the joint model, built once.

    An escape of a pinned number is a real table ``x`` of the joint model that keeps
    every shown number it does not move (and the rule's rows of what is shown), puts
    the number at 0 (else at min cell or more), and minimizes the price of the shown
    numbers it moves (``prices``: the movable ones; any other is held, like the
    composition). Hiding what it moves lets such a table stand, up to integrality,
    which the joint solver then checks: one linear program in place of a solve per
    candidate. The rows are the same for every pinned number of a step; only the
    target row and the prices (of numbers this step already hides: 0) change.
    """

    def __init__(
        self, joint: JointPublication, shown: Mapping[Key, int], prices: Mapping[Key, int]
    ) -> None:
        model = joint.model
        self.size = model.size
        self.min_cell = joint.min_cell
        self.movable = sorted(key for key in shown if key in prices)
        self.position = {key: position for position, key in enumerate(self.movable)}
        ordered = [*sorted(key for key in shown if key not in prices), *self.movable]
        self.width = model.size + 2 * len(self.movable)
        equal = _Rows()
        for joint_key in ordered:
            equal.add(model.quantities[joint_key].form, shown[joint_key])
        first = len(ordered) - len(self.movable)
        for position in range(len(self.movable)):  # form - up + down == value
            column = model.size + 2 * position
            equal.extend(first + position, ((column, -1), (column + 1, 1)))
        self.equal = equal
        below = _Rows()  # form >= bound, written -form <= -bound
        lower = [*((row, 0) for row in model.inequalities)]
        for row, bound in [*lower, *model.knowledge(shown, joint.min_cell)]:
            below.add(tuple((v, -c) for v, c in row), -bound)
        self.below = below
        # The rows every escape shares, as arrays once: the model's and the rule's, a gap
        # for the escape's own row (after them, as linprog stacks them), the equalities.
        gap = len(below.targets)
        self._fixed = (
            np.asarray([*below.rows, *(row + gap + 1 for row in equal.rows)], dtype=np.int64),
            np.asarray([*below.columns, *equal.columns], dtype=np.int64),
            np.asarray([*below.data, *equal.data], dtype=np.int64),
        )
        self._upper = np.asarray([*below.targets, 0, *equal.targets], dtype=np.float64)
        self._lower = self._upper.copy()
        self._lower[: gap + 1] = -np.inf
        self.cost = np.zeros(self.width)
        for position, joint_key in enumerate(self.movable):
            start = model.size + 2 * position
            self.cost[start : start + 2] = prices[joint_key]

    def free(self, keys: Iterable[Key]) -> None:
        """Numbers hidden already: moving them costs nothing."""
        for key in keys:
            position = self.position.get(key)
            if position is not None:
                start = self.size + 2 * position
                self.cost[start : start + 2] = 0

    def moved(self, form: Form) -> set[Key] | None:
        """The shown numbers a cheapest escape of ``form`` moves (None: no escape)."""
        for at, sign in ((0, 1), (self.min_cell, -1)):  # at 0, else at min cell or more
            target = _Rows()
            target.add(tuple((v, sign * c) for v, c in form), sign * at)
            x = self._solve(target)
            if x is not None:
                moves = x[self.size :].reshape(-1, 2).sum(axis=1)
                return {k for k, step in zip(self.movable, moves, strict=True) if step > _TOLERANCE}
        return None

    def _solve(self, target: _Rows) -> np.ndarray | None:
        """The optimal point of ``min cost`` over the shared rows and ``target`` (one ``<=``
        row), or None. By HiGHS's binding when it loads (the model and options ``linprog``
        builds, so the same point); else by ``scipy.optimize.linprog``."""
        gap = len(self.below.targets)
        rows, columns, data = self._fixed
        entries = (
            np.concatenate([rows, np.full(len(target.rows), gap, dtype=np.int64)]),
            np.concatenate([columns, np.asarray(target.columns, dtype=np.int64)]),
            np.concatenate([data, np.asarray(target.data, dtype=np.int64)]),
        )
        upper = self._upper.copy()
        upper[gap] = target.targets[0]
        matrix = columnwise(len(upper), self.width, entries)
        solved = solve_as_linprog(self.width, matrix, self._lower, upper, self.cost)
        if solved is not None:
            return solved[1] if solved[0] == OPTIMAL else None
        from scipy.optimize import linprog  # noqa: PLC0415 (scipy: the share extra)
        from scipy.sparse import coo_array  # noqa: PLC0415

        below = self.below.joined(target)
        result = linprog(
            self.cost,
            A_ub=below.matrix(self.width, coo_array),
            b_ub=below.targets,
            A_eq=self.equal.matrix(self.width, coo_array),
            b_eq=self.equal.targets,
            bounds=(0, None),
            method="highs",
        )
        if result.status == 0 and result.x is not None:
            return np.asarray(result.x)
        return None


class _Rows:
    """Sparse rows and their right-hand sides, built row by row (one linear program's)."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.columns: list[int] = []
        self.data: list[int] = []
        self.targets: list[int] = []

    def add(self, form: Form, target: int) -> None:
        """A new row ``form`` with its right-hand side."""
        self.extend(len(self.targets), form)
        self.targets.append(target)

    def extend(self, row: int, form: Form) -> None:
        """More terms of an existing row."""
        for variable, coefficient in form:
            self.rows.append(row)
            self.columns.append(variable)
            self.data.append(coefficient)

    def joined(self, other: _Rows) -> _Rows:
        """These rows, then ``other``'s (neither changed)."""
        out = _Rows()
        offset = len(self.targets)
        out.rows = [*self.rows, *(row + offset for row in other.rows)]
        out.columns = [*self.columns, *other.columns]
        out.data = [*self.data, *other.data]
        out.targets = [*self.targets, *other.targets]
        return out

    def matrix(self, width: int, build: Any) -> Any:
        """The rows as a compressed sparse matrix (``build``: scipy's ``coo_array``)."""
        shape = (len(self.targets), width)
        return build((self.data, (self.rows, self.columns)), shape=shape).tocsr()


def _still_pinned(
    joint: JointPublication,
    published: Mapping[Key, int],
    values: Sequence[Mapping[Key, int]],
    pending: Sequence[tuple[int, Key]],
) -> tuple[list[tuple[int, Key]], Proof] | None:
    # Of ``pending``, the numbers the joint attack pins with only ``published`` shown (None:
    # the solver fails), and the proof of the others. Numbers once protected stay so: only
    # the pinned ones and the newly hidden (small only beside a stricter product) are asked
    # again.
    solver: RangeSolver | None
    known = joint.model.knowledge(published, joint.min_cell)
    solver, _ = joint.solver(published, known)
    if solver is None:
        return None
    # Witnesses that push every asked number down and up at once: most of these were
    # pinned, and a table at 0 (or at min cell or more) for one settles it and others
    # without their own sandwiches (595 solves for 40 numbers on the study became 5). A
    # speed-up only: what it cannot settle, the leak check asks (and reports) itself.
    with contextlib.suppress(Unresolved, Inconsistent):
        solver.spread(
            [
                _asked(joint, values, i, key)[0]
                for i, key in pending
                if _small(joint, values, i, key)
            ]
        )
    leaks = joint_leaks(joint, solver, values, pending)
    proof = _proof(joint, _region(joint, published, known), values, pending, leaks)
    return [(row.product, row.key) for row in leaks], proof


__all__ = ["PROOFS", "STEPS", "JointChoice", "Proof", "joint_choice"]
