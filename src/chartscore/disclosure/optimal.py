"""Minimum-cost complementary suppression, exactly, by cutting planes (small reports).

sdcTable's OPT idea, with scipy's HiGHS (``scipy.optimize.milp``) as the solver:

- **Master.** A 0-1 program chooses which published numbers to hide, at the
  least declared cost (:mod:`chartscore.disclosure.cost`: each hidden cell,
  and each rate with a hidden part once). The primary cells are hidden, and
  every identity of the structural pass holds: no identity has exactly one
  hidden term (the greedy's closure keeps the same rule, with the same
  exception for a success hidden only for its failures, once its total is
  hidden), so the greedy's pattern is one of the master's points.
- **Check.** The attack (:class:`~chartscore.disclosure.ranges.RangeSolver`,
  with the rule's knowledge) checks every sensitive quantity under the
  master's pattern, as the greedy's loop does.
- **Cut.** For each quantity it exposes, the published numbers are shrunk
  (by deleting chunks while the quantity stays exposed) to a set that alone
  still exposes it; since hiding only widens ranges, every pattern that
  publishes that whole set exposes it too, so one of them must be hidden:
  ``sum(h) >= 1``. The cut removes no passing pattern.
- Repeat until the master's pattern passes: it is then a minimum-cost
  passing pattern. The master's optimum is always a lower bound on the cost
  of any passing pattern, which gives the greedy's cost gap where the loop
  does not finish within its rounds.

Deterministic: the variables follow the model's order, which the sorted
report fixes, and HiGHS is deterministic for one input.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs
import numpy as np

from chartscore.disclosure.cost import REPORT_PRICING, Pricing, Rate
from chartscore.disclosure.lp import OPTIMAL, solve_afresh
from chartscore.disclosure.model import Quantity, ReportModel
from chartscore.disclosure.native_output import stdout_closed
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved

Key = tuple[str, str, str]

EXACT_LIMIT: Final = 160
"""The largest number of candidate cells (published numbers the master may hide) solved
exactly; above it the greedy decides (docs/disclosure.md states the measurement)."""
ROUNDS: Final = 40
"""How many master solves the loop may take before the greedy's pattern is kept."""


class Unsolved(Exception):  # noqa: N818 - a state, not a programming error
    """HiGHS did not return an optimal master (never seen in testing)."""


@attrs.frozen
class Problem:
    """What the master needs: the candidates, the identities and what must stay hidden.

    Attributes:
        model: The report's linear model.
        values: Every quantity's true value (inside only).
        min_cell: The rule's minimum cell.
        numbers: Every published-or-hidden JSON number, in model order.
        identities: The structural pass's identities (tuples of numbers).
        proxies: A success hidden only for its failures -> its total.
        primary: The primary cells (hidden whatever the master chooses).
        sensitive: The quantities the pattern must protect.
        seed: A feasible point of the report with only the primary cells hidden.
        pricing: The declared cost the master minimises (default: the report's).
        cuts: Sets of numbers of which every passing pattern hides one, known before
            the loop (a derived sensitive quantity's terms): the master starts with
            them, as with the cuts it finds.
    """

    model: ReportModel
    values: Mapping[Key, int]
    min_cell: int
    numbers: Sequence[Key]
    identities: Sequence[tuple[Key, ...]]
    proxies: Mapping[Key, Key]
    primary: frozenset[Key]
    sensitive: Sequence[Quantity]
    seed: np.ndarray | None = None
    pricing: Pricing = REPORT_PRICING
    cuts: Sequence[tuple[Key, ...]] = ()


@attrs.frozen
class Solution:
    """The exact loop's outcome: a passing pattern (or None) and the best lower bound."""

    hidden: frozenset[Key] | None
    lower_bound: int
    rounds: int


class _Master:
    """The 0-1 master program: one variable per candidate, one per rate it may destroy."""

    def __init__(self, problem: Problem) -> None:
        primary = problem.primary
        pricing = problem.pricing
        self.candidates = [key for key in problem.numbers if key not in primary]
        self.column = {key: i for i, key in enumerate(self.candidates)}
        destroyed = {rate for key in primary for rate in pricing.rates(key)}
        rates: dict[Rate, list[int]] = {}
        for key in self.candidates:
            for rate in pricing.rates(key):
                if rate not in destroyed:
                    rates.setdefault(rate, []).append(self.column[key])
        self.rates = sorted(rates)
        width = len(self.candidates) + len(self.rates)
        self.width = width
        self.constant = sum(pricing.cell(k) for k in primary) + sum(
            pricing.rate(r) for r in destroyed
        )
        c = np.zeros(width)
        for key, i in self.column.items():
            c[i] = pricing.cell(key)
        for j, rate in enumerate(self.rates):
            c[len(self.candidates) + j] = pricing.rate(rate)
        self.c = c
        self.rows: list[tuple[dict[int, float], float]] = []  # sum(a x) >= lower
        for j, rate in enumerate(self.rates):
            for i in rates[rate]:  # d_r >= h_k
                self.rows.append(({len(self.candidates) + j: 1.0, i: -1.0}, 0.0))
        self._identities(problem)
        for keys in problem.cuts:
            if keys and primary.isdisjoint(keys) and all(key in self.column for key in keys):
                self.cut(keys)
        self.integrality = np.zeros(width, dtype=np.int64)
        self.integrality[: len(self.candidates)] = 1

    def _identities(self, problem: Problem) -> None:
        # h_t <= sum of the identity's other terms (a proxy's total counts as another).
        seen: set[tuple[tuple[int, float], ...]] = set()
        for identity in problem.identities:
            for term in identity:
                extra = problem.proxies.get(term)
                others = [k for k in identity if k != term]
                if extra is not None and extra not in identity:
                    others.append(extra)
                if any(k in problem.primary for k in others):
                    continue
                row: dict[int, float] = {self.column[k]: 1.0 for k in others}
                lower = 0.0
                if term in problem.primary:
                    lower = 1.0
                else:
                    row[self.column[term]] = row.get(self.column[term], 0.0) - 1.0
                signature = (*sorted(row.items()), (-1, lower))
                if signature not in seen:
                    seen.add(signature)
                    self.rows.append((row, lower))

    def cut(self, keys: Sequence[Key]) -> None:
        """At least one of ``keys`` (candidates) is hidden."""
        self.rows.append(({self.column[k]: 1.0 for k in keys}, 1.0))

    def solve(self, *, relaxed: bool = False) -> tuple[frozenset[Key], float]:
        """The optimal pattern's candidates and cost (of the LP relaxation if ``relaxed``).

        Through scipy's HiGHS binding as the range solver uses it (no ``scipy.optimize``
        start-up), else ``scipy.optimize.milp``; each candidate and rate is at most 1.
        """
        if self.width == 0:
            return frozenset(), float(self.constant)
        rows = [*self.rows, *(({i: 1.0}, 0.0) for i in range(self.width))]
        upper = np.array([np.inf] * len(self.rows) + [1.0] * self.width)
        lower = np.array([low for _, low in rows])
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for row, _ in rows:
            for column, value in sorted(row.items()):
                indices.append(column)
                data.append(value)
            indptr.append(len(indices))
        matrix = (np.array(indptr), np.array(indices, dtype=np.int64), np.array(data))
        solved = solve_afresh(self.width, matrix, lower, upper, self.c, integer=not relaxed)
        if solved is None:
            x, value = _milp(self.width, matrix, lower, upper, self.c, integer=not relaxed)
        else:
            status, x, value, _ = solved
            if status != OPTIMAL:
                x = None
        if x is None:
            raise Unsolved
        chosen = frozenset(key for key, i in self.column.items() if round(float(x[i])) == 1)
        return chosen, self.constant + value


def _milp(
    width: int,
    matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    c: np.ndarray,
    *,
    integer: bool,
) -> tuple[np.ndarray | None, float]:
    # scipy's own milp: the fallback when its HiGHS binding cannot be used directly.
    from scipy.optimize import LinearConstraint, milp  # noqa: PLC0415
    from scipy.sparse import csr_array  # noqa: PLC0415

    indptr, indices, data = matrix
    matrix_csr = csr_array((data, indices, indptr), shape=(len(lower), width))
    constraint = LinearConstraint(matrix_csr, lower, upper)
    result = milp(
        c,
        integrality=np.ones(width, dtype=np.int64) if integer else None,
        constraints=[constraint],
        options={"mip_rel_gap": 0.0, "presolve": True} if integer else {"presolve": True},
    )
    if result.status != 0 or result.x is None:
        return None, 0.0
    return np.asarray(result.x), float(result.fun)


def _exposed(problem: Problem, published: Mapping[Key, int], quantity: Quantity) -> bool:
    # Proven exposed only: a step the solver cannot settle keeps the numbers in the cut.
    knowledge = problem.model.knowledge(published, problem.min_cell)
    safe = True
    try:
        solver = RangeSolver(
            problem.model, published, eager=False, seed=problem.seed, knowledge=knowledge
        )
        safe = solver.protected(quantity.form, problem.values[quantity.key], problem.min_cell)
    except (Inconsistent, Unresolved):
        safe = True
    return not safe


def _failing(problem: Problem, published: Mapping[Key, int]) -> list[Quantity]:
    knowledge = problem.model.knowledge(published, problem.min_cell)
    failed = False
    out: list[Quantity] = []
    try:
        solver = RangeSolver(
            problem.model, published, eager=False, seed=problem.seed, knowledge=knowledge
        )
        for quantity in problem.sensitive:
            value = problem.values[quantity.key]
            if not solver.protected(quantity.form, value, problem.min_cell):
                out.append(quantity)
    except (Inconsistent, Unresolved):
        failed = True
    if failed:
        raise Unsolved
    return out


@attrs.frozen
class _Exposes:
    """Whether a subset of the published numbers, published alone, exposes the quantity."""

    problem: Problem
    published: Mapping[Key, int]
    quantity: Quantity

    def __call__(self, subset: list[Key]) -> bool:
        return _exposed(self.problem, {k: self.published[k] for k in subset}, self.quantity)


def _reach(model: ReportModel, key: Key) -> set[int]:
    # The variables a number's equality and its rule row (an item count's carrier) touch.
    quantity = model.quantities[key]
    return {v for v, _ in (*quantity.form, *model.carriers.get(key, ()))}


def _ring(
    problem: Problem,
    published: Mapping[Key, int],
    quantity: Quantity,
    exposes: Callable[[list[Key]], bool],
) -> list[Key]:
    """The published numbers near the quantity that already expose it, in model order.

    Rings grow by shared variables (the numbers touching the quantity's classes, then
    theirs, ...); the first ring that exposes it (at last, all) starts the deletion.
    """
    order = {key: i for i, key in enumerate(problem.numbers)}
    reach = {key: _reach(problem.model, key) for key in published}
    variables = {v for v, _ in quantity.form}
    ring: set[Key] = set()
    while True:
        grown = {key for key, touched in reach.items() if touched & variables}
        if grown == ring:
            break
        ring = grown
        for key in ring:
            variables |= reach[key]
        keys = sorted(ring, key=order.__getitem__)
        if len(ring) < len(published) and exposes(keys):
            return keys
    return sorted(published, key=order.__getitem__)


def _exposing_set(
    keys: list[Key], exposed: Callable[[list[Key]], bool], step: int | None = None
) -> list[Key]:
    """A subset of ``keys`` that still exposes the quantity: chunks deleted while it does."""
    size = max(1, len(keys) // 4) if step is None else step
    kept = list(keys)
    while True:
        start = 0
        while start < len(kept):
            trial = kept[:start] + kept[start + size :]
            if exposed(trial):
                kept = trial
            else:
                start += size
        if size == 1:
            return kept
        size = max(1, size // 4)


def solve(problem: Problem, rounds: int = ROUNDS) -> Solution:
    """The minimum-cost passing pattern, or None with a lower bound after ``rounds`` solves.

    Raises:
        Unsolved: when HiGHS or the attack cannot settle a step exactly.
    """
    with stdout_closed():
        return _solve(problem, rounds)


def _solve(problem: Problem, rounds: int) -> Solution:
    master = _Master(problem)
    lower = master.constant
    for done in range(1, rounds + 1):
        chosen, value = master.solve()
        cost = round(value)
        lower = cost
        hidden = problem.primary | chosen
        published = {k: problem.values[k] for k in problem.numbers if k not in hidden}
        failing = _failing(problem, published)
        if not failing:
            return Solution(frozenset(hidden), cost, done)
        found: list[list[Key]] = []
        for quantity in failing:
            exposes = _Exposes(problem, published, quantity)
            if any(exposes(keys) for keys in found):
                continue  # a cut of this round already forces a change that may protect it
            found.append(_exposing_set(_ring(problem, published, quantity, exposes), exposes))
            master.cut(found[-1])
    return Solution(None, lower, rounds)


def lower_bound(problem: Problem) -> int:
    """A lower bound on any passing pattern's cost: the master's LP relaxation, no cuts."""
    with stdout_closed():
        _, bound = _Master(problem).solve(relaxed=True)
    return math.ceil(bound - 1e-6)
