"""Exact integer feasible ranges of hidden quantities, by integer programming.

Given a :class:`~chartscore.disclosure.model.ReportModel` and the numbers
published (each one an equality on the class counts), :class:`RangeSolver`
computes, for any linear form, the smallest and largest value it takes over
all non-negative integer class counts consistent with everything published:
what an outsider can prove about it. Every optimum comes from HiGHS through
``scipy.optimize.milp``; this module prepares the problem and keeps it small.

Preparing (once per set of published numbers):

- *rows*: one equality per distinct published form; a pooled slice's number
  minus its published field-type and field numbers leaves only its hidden
  parts, so fields are coupled only where something is hidden on both sides;
- *fixings*: a published zero fixes every class in it to 0, a row with one
  unknown fixes it; repeated until nothing changes;
- *the rule's rows* (``form >= bound``, what the published rule implies):
  kept only where the LP relaxation does not already satisfy them;
- *merging*: variables that no row tells apart become one (exact: a
  minimized objective then takes the smallest coefficient of the group, a
  maximized one the largest);
- *components*: the problem splits into independent parts, solved apart;
- *blocks*: inside a component, the variables linked by rows of one field.

Answering (per form and direction, cached):

1. structurally: a form with a positive coefficient on an unbounded variable
   has no maximum; a feasible point already found (a *witness*) that reaches
   a trivial bound (0 below) settles it. :meth:`RangeSolver.spread` finds
   witnesses that push all hidden forms at once;
2. on large components, by a sandwich: a *relaxation* bounds the optimum on
   one side (the touched blocks alone; then with the rows they share, the
   other blocks' contributions loosened to ranges), a *restriction* (the
   other blocks fixed at a witness) on the other; when they meet, that is
   the exact optimum, and the restriction's point is a new witness;
3. otherwise on the whole component.

Every problem tries its LP relaxation first: an integral LP optimum that
satisfies every row exactly is the integer optimum. Every point is rounded
and checked against every row in exact integer arithmetic, and branch and
bound runs with a zero gap; anything the solver cannot settle raises
:class:`Unresolved`, which the audit treats as a failure.

:class:`LocalCheck` is the suppression loop's cheap certificate: a
restriction that can prove a quantity protected, never the opposite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from chartscore.disclosure.forms import Form
from chartscore.disclosure.lp import (
    INFEASIBLE,
    OPTIMAL,
    UNBOUNDED,
    WarmLP,
    rowwise,
    solve_afresh,
)
from chartscore.disclosure.model import Key, ReportModel
from chartscore.disclosure.native_output import stdout_closed

_MAX_WITNESSES: Final = 64
"""Feasible points kept per component (each one can settle a question without a solve)."""
_NEIGHBOURHOOD: Final = 12
"""The most blocks a sandwich may span before the whole component is solved instead."""
_PARTNERS: Final = 2
"""How many partner blocks a sandwich adds, one at a time, before solving the whole."""
_SANDWICH_WIDTH: Final = 400
"""Components narrower than this are solved whole: cheaper than any sandwich."""
_REPAIR_WIDTH: Final = 64
"""Problems narrower than this go straight to branch and bound (a repair would not pay)."""
_REPAIR_HOPS: Final = 2
"""How many times the repair widens its free columns (rows away from the fractional ones)."""
_REPAIR_ROW: Final = 40
"""Rows longer than this (pooled slices) do not widen a repair: they would free everything."""

Row = dict[int, int]

FAST_PATHS = True
"""Whether the fast paths are on: warm LPs (:mod:`chartscore.disclosure.lp`), the local
check's widest area first, its seed shortcut and its cache. Off (tests only), every
question is solved the plain way, by ``milp`` afresh; the answers must be the same."""


class Unresolved(Exception):  # noqa: N818 - a state, not a programming error
    """The solver could not settle a question exactly (numerics, limits)."""


class Inconsistent(Exception):  # noqa: N818
    """The published numbers admit no integer table at all: a damaged or edited report."""


# --- small helpers ------------------------------------------------------------------------


class _Result:
    """One solve from scratch: scipy's status code (0 optimal, 2 infeasible), the point,
    its value and, for integer programs, the proven bound (as ``milp`` returns them)."""

    def __init__(
        self, status: int, x: np.ndarray | None, fun: float | None, bound: float | None
    ) -> None:
        self.status, self.x, self.fun, self.bound = status, x, fun, bound


def _milp(problem: _Problem, c: np.ndarray, *, integer: bool) -> _Result:
    # scipy's own milp: the fallback when its HiGHS binding cannot be used directly.
    from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415
    from scipy.sparse import csr_array  # noqa: PLC0415

    indptr, indices, data = problem.sparse
    matrix = csr_array(
        (data.astype(np.float64), indices, indptr), shape=(len(problem.rows), problem.width)
    )
    constraints = [LinearConstraint(matrix, problem.lower, problem.upper)] if problem.rows else []
    with stdout_closed():
        result = milp(
            c,
            integrality=np.ones(problem.width, dtype=np.int64) if integer else None,
            bounds=Bounds(0, np.inf),
            constraints=constraints,
            options={"mip_rel_gap": 0.0, "presolve": True} if integer else {"presolve": True},
        )
    x = None if result.x is None else np.asarray(result.x)
    return _Result(result.status, x, result.fun, result.get("mip_dual_bound"))


def _afresh(problem: _Problem, c: np.ndarray, *, integer: bool) -> _Result:
    """``min c x`` from scratch, as ``milp`` solves it (by its binding when loadable)."""
    solved = solve_afresh(
        problem.width, problem.sparse, problem.lower, problem.upper, c, integer=integer
    )
    if solved is None:
        return _milp(problem, c, integer=integer)
    status, x, fun, bound = solved
    code = 0 if status == OPTIMAL else 2 if status == INFEASIBLE else 4
    return _Result(code, x, fun if status == OPTIMAL else None, bound)


class _Problem:
    """One integer program over some columns: rows ``lower <= A x <= upper``, ``x >= 0``.

    Infinite bounds are ``None``. Built once, solved for many objectives: its LP
    relaxation stays loaded in HiGHS (:class:`~chartscore.disclosure.lp.WarmLP`)
    and each objective starts from the last optimal basis.
    """

    def __init__(
        self,
        width: int,
        rows: Sequence[Row],
        lower: Sequence[int | None],
        upper: Sequence[int | None],
    ) -> None:
        self.width = width
        self.rows = list(rows)
        self.lower = np.array([-np.inf if v is None else v for v in lower], dtype=float)
        self.upper = np.array([np.inf if v is None else v for v in upper], dtype=float)
        self.sparse = rowwise(self.rows)
        # Exact integer bounds for checking points; the sentinels stand for no bound.
        self.exact_lower = np.array([-(2**62) if v is None else v for v in lower], dtype=np.int64)
        self.exact_upper = np.array([2**62 if v is None else v for v in upper], dtype=np.int64)
        self._warm: WarmLP | None = None
        self._rows_of_entries: np.ndarray | None = None

    def check(self, x: np.ndarray) -> bool:
        """Whether the integer point ``x`` satisfies every row exactly."""
        if (x < 0).any():
            return False
        if not self.rows:
            return True
        values = self.values(x)
        return bool((values >= self.exact_lower).all() and (values <= self.exact_upper).all())

    def values(self, x: np.ndarray) -> np.ndarray:
        """Each row's value at the integer point ``x``, exactly."""
        indptr, indices, data = self.sparse
        running = np.zeros(len(indices) + 1, dtype=np.int64)
        np.cumsum(data * x.astype(np.int64)[indices], out=running[1:])
        result: np.ndarray = running[indptr[1:]] - running[indptr[:-1]]
        return result

    def solve(
        self,
        c: np.ndarray,
        counter: list[int],
        *,
        warm: bool = True,
        incumbent: np.ndarray | None = None,
    ) -> np.ndarray:
        """An optimal integer point for ``min c x``.

        ``warm``: try the loaded LP relaxation first (fast); without it, the LP is
        solved afresh by ``milp``, whose vertex is the reproducible first witness
        a suppression run is seeded with. ``incumbent``: a known integer point of
        this problem (a witness); when the LP's bound, rounded up (the objective
        is integral), already reaches its value, it is optimal and no branch and
        bound is needed.

        Raises:
            Inconsistent: no integer point satisfies the rows.
            Unresolved: the solver stopped short of a proven optimum.
        """
        counter[0] += 1
        bound: float | None = None
        vertex: np.ndarray | None = None
        if warm and FAST_PATHS:
            point, bound, vertex = self._warm_relaxed(c)
        else:
            point = self._relaxed(c)
        if point is not None:
            return point
        if bound is not None:
            target = math.ceil(bound - 1e-6 * (1 + abs(bound)))
            if incumbent is not None and self._reaches(c, incumbent, target):
                return incumbent.copy()
            if vertex is not None:
                repaired = self._repaired(c, vertex, target)
                if repaired is not None:
                    return repaired
        counter[1] += 1
        result = _afresh(self, c, integer=True)
        if result.status == 2:
            raise Inconsistent
        if result.status != 0 or result.x is None:
            raise Unresolved
        found: np.ndarray = np.rint(result.x).astype(np.int64)
        if not self.check(found):
            raise Unresolved
        dual_bound = result.bound
        if (
            dual_bound is not None
            and np.isfinite(dual_bound)
            and dual_bound < float(c @ found) - 0.5
        ):
            raise Unresolved
        return found

    def lp_minimum(self, c: np.ndarray) -> float | None:
        """The LP relaxation's optimal value (None: unbounded or not settled).

        Raises:
            Inconsistent: the relaxation, hence the integer program, is infeasible.
        """
        warm = self._warm_lp() if FAST_PATHS else None
        if warm is not None:
            status, _, value = warm.minimize(c)
            if status == INFEASIBLE:
                raise Inconsistent
            if status == OPTIMAL:
                return value
            if status == UNBOUNDED:
                return None
        result = _afresh(self, c, integer=False)
        if result.status == 2:
            raise Inconsistent
        if result.status != 0 or result.fun is None:
            return None
        return float(result.fun)

    def _warm_lp(self) -> WarmLP | None:
        if self._warm is None:
            self._warm = WarmLP(self.width, self.sparse, self.lower, self.upper)
        return self._warm if self._warm.available else None

    def _integral(self, c: np.ndarray, x: np.ndarray, value: float) -> np.ndarray | None:
        # An LP optimum that is an integer point is optimal for the integer program too
        # (it reaches a bound no integer point can beat).
        point: np.ndarray = np.rint(x).astype(np.int64)
        if np.abs(x - point).max(initial=0.0) > 1e-9 or not self.check(point):
            return None
        if float(c @ point) > value + 1e-6 * (1 + abs(value)):
            return None
        return point

    def _warm_relaxed(
        self, c: np.ndarray
    ) -> tuple[np.ndarray | None, float | None, np.ndarray | None]:
        # The loaded LP, warm (``milp``'s LP when HiGHS cannot be used directly): its
        # optimum when integral, its optimal value (a lower bound) and its vertex.
        warm = self._warm_lp()
        if warm is None:
            return self._relaxed(c), None, None
        status, x, value = warm.minimize(c)
        if status == INFEASIBLE:
            raise Inconsistent
        if status == UNBOUNDED:
            raise Unresolved  # feasible (or not) with no finite optimum: nothing to settle
        if status != OPTIMAL or x is None:
            return self._relaxed(c), None, None
        return self._integral(c, x, value), value, x

    def _reaches(self, c: np.ndarray, point: np.ndarray, target: int) -> bool:
        # Whether the integer point satisfies every row and its value is at most ``target``.
        return int(np.rint(c @ point)) <= target and self.check(point)

    def _repaired(self, c: np.ndarray, vertex: np.ndarray, target: int) -> np.ndarray | None:
        """An integer point at the rounded LP bound, found near the LP's vertex, or None.

        The LP vertex of a large problem is usually fractional in a handful of
        columns only. Those columns, and every column sharing a short row with
        them (a field's own rows, not the pooled slices' long ones; then their
        neighbours too), are freed; every other column stays at its
        integral LP value; the small integer program left is solved. A point it
        finds that satisfies every row and reaches ``target`` (the LP bound
        rounded up: no integer point does better) is optimal for the whole
        problem, with no branch and bound over it. Anything else: None.
        """
        rounded = np.rint(vertex)
        fractional = np.abs(vertex - rounded) > 1e-9
        if not fractional.any() or not self.rows or self.width < _REPAIR_WIDTH:
            return None
        indptr, indices, _ = self.sparse
        base = rounded.astype(np.int64)
        free = fractional
        row_of = self._row_of()
        short = np.diff(indptr) <= _REPAIR_ROW
        for _ in range(_REPAIR_HOPS):
            touched = np.zeros(len(self.rows), dtype=bool)
            touched[row_of[free[indices]]] = True
            touched &= short
            grown = np.zeros(self.width, dtype=bool)
            grown[indices[touched[row_of]]] = True
            free = free | grown
            if free.sum() * 2 > self.width:
                return None  # not a small repair: branch and bound on the whole instead
            point = self._repair(c, base, free, target)
            if point is not None:
                return point
        return None

    def _row_of(self) -> np.ndarray:
        # The row of every stored coefficient (built once).
        if self._rows_of_entries is None:
            indptr = self.sparse[0]
            self._rows_of_entries = np.repeat(np.arange(len(self.rows)), np.diff(indptr))
        return self._rows_of_entries

    def _repair(
        self, c: np.ndarray, base: np.ndarray, free: np.ndarray, target: int
    ) -> np.ndarray | None:
        # The integer program over the ``free`` columns, every other one fixed at ``base``.
        indptr, indices, data = self.sparse
        row_of = self._row_of()
        columns = np.flatnonzero(free)
        where = np.full(self.width, -1, dtype=np.int64)
        where[columns] = np.arange(len(columns))
        fixed_part = np.where(free[indices], 0, data * base[indices])
        outside = np.bincount(row_of, weights=fixed_part, minlength=len(self.rows))
        inside = free[indices]
        kept_rows = np.unique(row_of[inside])
        rows: list[Row] = []
        for row in kept_rows:
            start, stop = indptr[row], indptr[row + 1]
            rows.append(
                {int(where[indices[k]]): int(data[k]) for k in range(start, stop) if inside[k]}
            )
        shift = np.rint(outside[kept_rows])
        sub = _Problem(
            len(columns),
            rows,
            [
                None if self.exact_lower[r] == -(2**62) else int(self.exact_lower[r] - s)
                for r, s in zip(kept_rows, shift, strict=True)
            ],
            [
                None if self.exact_upper[r] == 2**62 else int(self.exact_upper[r] - s)
                for r, s in zip(kept_rows, shift, strict=True)
            ],
        )
        solved = solve_afresh(sub.width, sub.sparse, sub.lower, sub.upper, c[columns], integer=True)
        if solved is None or solved[0] != OPTIMAL or solved[1] is None:
            return None
        point = base.copy()
        point[columns] = np.rint(solved[1]).astype(np.int64)
        return point if self._reaches(c, point, target) else None

    def _relaxed(self, c: np.ndarray) -> np.ndarray | None:
        # The LP relaxation's optimum by ``milp`` (solved afresh), when it is an integer point.
        result = _afresh(self, c, integer=False)
        if result.status == 2:
            raise Inconsistent
        if result.status != 0 or result.x is None or result.fun is None:
            return None
        return self._integral(c, result.x, result.fun)


class _Component:
    """One independent part of the reduced problem: columns, rows, blocks, witnesses."""

    def __init__(
        self,
        columns: list[int],
        owners: Sequence[frozenset[int]],
        eq_rows: list[tuple[Row, int]],
        ge_rows: list[tuple[Row, int]],
    ) -> None:
        self.columns = columns
        self.position = {column: i for i, column in enumerate(columns)}
        width = len(columns)
        self.width = width
        # Equalities (lower == upper), then ">= low" rows (no upper bound).
        self.rows: list[Row] = [
            {self.position[c]: a for c, a in row.items()} for row, _ in [*eq_rows, *ge_rows]
        ]
        self.lower: list[int | None] = [value for _, value in [*eq_rows, *ge_rows]]
        self.upper: list[int | None] = [value for _, value in eq_rows] + [None] * len(ge_rows)
        self.problem = _Problem(width, self.rows, self.lower, self.upper)
        self.witnesses: list[np.ndarray] = []
        self._stacked: np.ndarray | None = None
        self.bounded = self._bounded()
        # Blocks: columns linked by rows whose columns all belong to one field.
        owner = [owners[c] for c in columns]
        parent = list(range(width))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        self.local_rows: list[int] = []
        self.coupling_rows: list[int] = []
        for index, row in enumerate(self.rows):
            fields = {f for c in row for f in owner[c]}
            if len(fields) == 1 and all(len(owner[c]) == 1 for c in row):
                self.local_rows.append(index)
                first = next(iter(row))
                for column in row:
                    ra, rb = find(first), find(column)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
            else:
                self.coupling_rows.append(index)
        self.block_of = [find(c) for c in range(width)]
        blocks: dict[int, list[int]] = {}
        for column in range(width):
            blocks.setdefault(self.block_of[column], []).append(column)
        self.blocks = blocks
        self.rows_of_block: dict[int, list[int]] = {}
        for index in self.local_rows:
            block = self.block_of[next(iter(self.rows[index]))]
            self.rows_of_block.setdefault(block, []).append(index)
        self.coupling_of_block: dict[int, list[int]] = {}
        for index in self.coupling_rows:
            for block in sorted({self.block_of[c] for c in self.rows[index]}):
                self.coupling_of_block.setdefault(block, []).append(index)
        self._block_problems: dict[int, _Problem] = {}

    def _bounded(self) -> np.ndarray:
        # A column is bounded above when an equality with only non-negative coefficients
        # holds it (every published number is one), or a ">= 0" row bounds it by bounded
        # columns (matched <= answered items; minority <= majority rows).
        bounded = np.zeros(self.width, dtype=bool)
        for row, high in zip(self.rows, self.upper, strict=True):
            if high is not None and all(a > 0 for a in row.values()):
                bounded[list(row)] = True
        changed = True
        while changed:
            changed = False
            for row, high in zip(self.rows, self.upper, strict=True):
                if high is not None:
                    continue
                if all(bounded[c] for c, a in row.items() if a > 0):
                    for column, coefficient in row.items():
                        if coefficient < 0 and not bounded[column]:
                            bounded[column] = True
                            changed = True
        return bounded

    def stacked(self) -> np.ndarray:
        """The witnesses as the rows of one matrix (witnesses are only ever appended)."""
        if self._stacked is None or len(self._stacked) != len(self.witnesses):
            self._stacked = np.stack(self.witnesses)
        return self._stacked

    def block_problem(self, block: int) -> tuple[list[int], _Problem]:
        """The block's own columns and rows, as a problem (built once)."""
        columns = self.blocks[block]
        if block not in self._block_problems:
            where = {c: i for i, c in enumerate(columns)}
            indices = self.rows_of_block.get(block, [])
            self._block_problems[block] = _Problem(
                len(columns),
                [{where[c]: a for c, a in self.rows[i].items()} for i in indices],
                [self.lower[i] for i in indices],
                [self.upper[i] for i in indices],
            )
        return columns, self._block_problems[block]


class RangeSolver:
    """Exact integer ranges of linear forms under a report's published numbers.

    Args:
        model: The report's linear model.
        published: The published value of every published (non-derived) quantity.
        eager: Check every component's feasibility now (the audit); otherwise a
            component is checked when a range first needs it.
        seed: A feasible point (model variables) of a report that published more
            numbers (see :meth:`point`): it is feasible here too, so no solve is
            needed to find a first witness.
        hints: Further points believed feasible (a suppression run's witnesses, for
            its self-audit): each one that satisfies a component's rows exactly is a
            witness there. A speed-up only: witnesses settle questions sooner, and
            every answer is exact whichever points are known.
        knowledge: Further rows ``form >= bound`` that the published numbers imply
            (:meth:`~chartscore.disclosure.model.ReportModel.knowledge`: the rule).
        binding: Rows of ``knowledge`` known to bind the LP relaxation under more
            published numbers (a suppression run's earlier solvers): they bind here
            too, so they are kept without the LP solve that checks it. Updated with
            every row this solver keeps. Leaves the problem exactly as without it
            (up to rows the LP could not settle, which are kept either way).

    Raises:
        Inconsistent: when the published numbers contradict each other (no
            non-negative integer table satisfies them all).
        Unresolved: when the solver cannot settle feasibility exactly.

    Attributes:
        counts: ``[solves, integer programs]``: how many optima were computed, and
            how many of those needed branch and bound (the others were integral LPs).
    """

    def __init__(
        self,
        model: ReportModel,
        published: Mapping[Key, int],
        *,
        eager: bool = True,
        seed: np.ndarray | None = None,
        hints: Sequence[np.ndarray] = (),
        knowledge: Sequence[tuple[Form, int]] = (),
        binding: set[tuple[Form, int]] | None = None,
    ) -> None:
        self.model = model
        self.counts = [0, 0]
        self._cache: dict[tuple[int, tuple[tuple[int, int], ...], bool], int | None] = {}
        self._block_cache: dict[tuple[int, int, tuple[tuple[int, int], ...], bool], int | None] = {}
        self._parts: dict[tuple[int, int, bool], dict[int, tuple[Row, int | None, int | None]]] = {}
        self._areas: dict[tuple[int, frozenset[int], str, int], tuple[list[int], _Problem]] = {}
        self._around: dict[tuple[int, frozenset[int]], list[frozenset[int]]] = {}
        owner = self._owners()
        self._owner = owner
        rows = self._reduced_rows(published, owner)
        inequalities = [(dict(form), 0) for form in model.inequalities]
        self.fixed = self._fix(rows, inequalities)
        rule: list[tuple[Row, int]] = []
        bound_before: list[bool] = []  # whether each is known to bind (``binding``)
        for form, bound in knowledge:  # the rule's rows, with the fixings substituted
            low = bound - sum(c * self.fixed[v] for v, c in form if v in self.fixed)
            rest = {v: c for v, c in form if v not in self.fixed}
            if rest:
                rule.append((rest, low))
                bound_before.append(binding is not None and (form, bound) in binding)
            elif low > 0:
                raise Inconsistent
        kept = self._binding(rows, inequalities, rule, bound_before)
        if binding is not None:
            originals = [(f, b) for f, b in knowledge if any(v not in self.fixed for v, _ in f)]
            binding.update(originals[i] for i in kept)
        inequalities += [rule[i] for i in kept]
        self._merge_and_split(rows, inequalities, owner)
        for known in [*([] if seed is None else [seed]), *hints]:
            self._seed(known)
        if eager:
            for index in range(len(self.components)):
                self._witness(index)

    def _seed(self, seed: np.ndarray) -> None:
        # A point feasible for more published numbers is feasible for these: reuse it.
        for variable, value in self.fixed.items():
            if seed[variable] != value:
                return
        for component in self.components:
            point = np.zeros(component.width, dtype=np.int64)
            for position, group in enumerate(component.columns):
                point[position] = int(seed[self.members[group]].sum())
            full = len(component.witnesses) >= _MAX_WITNESSES
            if not full and component.problem.check(point):
                component.witnesses.append(point)

    @property
    def widest(self) -> int:
        """The width (columns) of the largest component: how hard its questions are."""
        return max((component.width for component in self.components), default=0)

    @property
    def solves(self) -> int:
        """How many optima the solver computed."""
        return self.counts[0]

    # --- preparing -----------------------------------------------------------------------

    def _owners(self) -> list[int]:
        # The field index of every variable; a pooled slice's own variable gets -1 - index.
        owner = [-1] * self.model.size
        for index, layout in enumerate(self.model.layouts.values()):
            for variable in range(layout.offset, layout.offset + layout.size):
                owner[variable] = index
        extra = -1
        for variable in range(self.model.size):
            if owner[variable] == -1:
                owner[variable] = extra
                extra -= 1
        return owner

    def _reduced_rows(
        self, published: Mapping[Key, int], owner: Sequence[int]
    ) -> list[tuple[Row, int]]:
        # One equality per distinct published form; pooled rows lose their published parts.
        by_form: dict[Form, int] = {}
        for key, value in sorted(published.items()):
            quantity = self.model.quantities[key]
            if quantity.derived:
                continue
            if not quantity.form:
                if value != 0:
                    raise Inconsistent
                continue
            if by_form.setdefault(quantity.form, value) != value:
                raise Inconsistent
        single: dict[Form, int] = {}
        multi: list[tuple[Form, int]] = []
        for form, value in by_form.items():
            if len({owner[v] for v, _ in form}) == 1:
                single[form] = value
            else:
                multi.append((form, value))
        multi.sort(key=lambda item: (len(item[0]), item[0]))
        self._single, self._multi = single, multi
        rows: dict[Form, int] = dict(single)
        for form, value in multi:
            residual, reduced = self._reduce(form, skip=form)
            reduced_form = tuple(sorted(reduced.items()))
            residual = value - residual
            if not reduced_form:
                if residual != 0:
                    raise Inconsistent
                continue
            if rows.setdefault(reduced_form, residual) != residual:
                raise Inconsistent
        return [(dict(form), value) for form, value in sorted(rows.items())]

    def _reduce(self, form: Form, skip: Form | None = None) -> tuple[int, dict[int, int]]:
        """Split ``form`` into published parts (their total) and the rest.

        Published pooled sub-rows come off first, largest first (a field type
        before its fields); then every field part that is itself published.
        """
        remaining = dict(form)
        known = 0
        for other, other_value in reversed(self._multi):
            if other == skip or len(other) > len(remaining):
                continue
            if all(remaining.get(v) == c for v, c in other):
                for v, _ in other:
                    del remaining[v]
                known += other_value
        by_field: dict[int, list[tuple[int, int]]] = {}
        for v, c in remaining.items():
            by_field.setdefault(self._owner[v], []).append((v, c))
        for part in by_field.values():
            part_form = tuple(sorted(part))
            if part_form in self._single:
                for v, _ in part_form:
                    del remaining[v]
                known += self._single[part_form]
        return known, remaining

    def _fix(
        self, rows: list[tuple[Row, int]], inequalities: list[tuple[Row, int]]
    ) -> dict[int, int]:
        # Presolve: published zeros and one-unknown rows fix variables; substitute them.
        fixed: dict[int, int] = {}
        changed = True
        while changed:
            changed = False
            for index, (original, total) in enumerate(rows):
                row, value = original, total
                known = [v for v in row if v in fixed]
                if known:
                    value -= sum(row[v] * fixed[v] for v in known)
                    row = {v: c for v, c in row.items() if v not in fixed}
                    rows[index] = (row, value)
                if not row:
                    if value != 0:
                        raise Inconsistent
                    continue
                positive = all(c > 0 for c in row.values())
                if positive and value < 0:
                    raise Inconsistent
                if positive and value == 0:
                    fixed.update(dict.fromkeys(row, 0))
                    changed = True
                elif len(row) == 1:
                    ((variable, coefficient),) = row.items()
                    if value % coefficient or value // coefficient < 0:
                        raise Inconsistent
                    fixed[variable] = value // coefficient
                    changed = True
        rows[:] = [(row, value) for row, value in rows if row]
        kept: list[tuple[Row, int]] = []
        for row, bound in inequalities:
            low = bound - sum(c * fixed[v] for v, c in row.items() if v in fixed)
            rest = {v: c for v, c in row.items() if v not in fixed}
            if rest:
                kept.append((rest, low))
            elif low > 0:
                raise Inconsistent
        inequalities[:] = kept
        return fixed

    def _binding(
        self,
        rows: list[tuple[Row, int]],
        inequalities: list[tuple[Row, int]],
        rule: list[tuple[Row, int]],
        known: list[bool],
    ) -> list[int]:
        """The rule's rows that can bind: those whose LP minimum is below their bound.

        A row the LP relaxation (a lower bound of every integer point's value)
        already keeps at its bound adds nothing, and would only make the LP
        optima of later problems less often integral. Exact: only rows that
        cannot cut off any integer point are dropped. A row ``known`` to bind
        (it did with more numbers published: fewer only widen the LP) is kept
        without a solve.

        Returns:
            The positions in ``rule`` of the rows kept.
        """
        if not rule:
            return []
        if all(known):
            return list(range(len(rule)))
        problem = _Problem(
            self.model.size,
            [row for row, _ in [*rows, *inequalities]],
            [value for _, value in [*rows, *inequalities]],
            [value for _, value in rows] + [None] * len(inequalities),
        )
        kept: list[int] = []
        for position, (row, bound) in enumerate(rule):
            if known[position]:
                kept.append(position)
                continue
            c = np.zeros(self.model.size)
            for variable, coefficient in row.items():
                c[variable] = coefficient
            value: float | None = None
            try:
                value = problem.lp_minimum(c)
            except Inconsistent:
                value = None
            if value is None or value < bound - 1e-6:
                kept.append(position)
        return kept

    def _merge_and_split(
        self,
        rows: list[tuple[Row, int]],
        inequalities: list[tuple[Row, int]],
        owner: Sequence[int],
    ) -> None:
        # Merge variables with identical columns; split into independent components.
        size = self.model.size
        signature: list[list[tuple[int, int]]] = [[] for _ in range(size)]
        for index, (row, _) in enumerate([*rows, *inequalities]):
            for variable, coefficient in row.items():
                signature[variable].append((index, coefficient))
        groups: dict[tuple[tuple[int, int], ...], int] = {}
        self.group_of = np.full(size, -1, dtype=np.int64)
        members: list[list[int]] = []
        for variable in range(size):
            if variable in self.fixed:
                continue
            group = groups.setdefault(tuple(signature[variable]), len(groups))
            if group == len(members):
                members.append([])
            members[group].append(variable)
            self.group_of[variable] = group
        self.members = members
        self.free_group = groups.get(())
        group_owners = [frozenset(owner[v] for v in m) for m in members]

        def merged(row: Mapping[int, int]) -> Row:
            # Identical columns: every member of a group has the same coefficient.
            return {int(self.group_of[v]): c for v, c in row.items()}

        eq = [(merged(row), value) for row, value in rows]
        ge = [(merged(row), low) for row, low in inequalities]
        parent = list(range(len(members)))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for row, _ in [*eq, *ge]:
            first = next(iter(row))
            for column in row:
                ra, rb = find(first), find(column)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
        by_root: dict[int, list[int]] = {}
        for group in range(len(members)):
            if group != self.free_group:
                by_root.setdefault(find(group), []).append(group)
        eq_by_root: dict[int, list[tuple[Row, int]]] = {}
        ge_by_root: dict[int, list[tuple[Row, int]]] = {}
        for row, value in eq:
            eq_by_root.setdefault(find(next(iter(row))), []).append((row, value))
        for row, low in ge:
            ge_by_root.setdefault(find(next(iter(row))), []).append((row, low))
        self.components: list[_Component] = []
        self.component_of = np.full(len(members), -1, dtype=np.int64)
        for root in sorted(by_root):
            columns = sorted(by_root[root])
            self.component_of[columns] = len(self.components)
            self.components.append(
                _Component(
                    columns, group_owners, eq_by_root.get(root, []), ge_by_root.get(root, [])
                )
            )

    # --- solving -------------------------------------------------------------------------

    def _witness(self, index: int) -> np.ndarray:
        """A feasible point of the component (computed once; raises Inconsistent if none)."""
        component = self.components[index]
        if not component.witnesses:
            # Solved afresh (not warm): the first witness seeds suppression, and must
            # be the same point whatever was solved before.
            point = component.problem.solve(np.zeros(component.width), self.counts, warm=False)
            component.witnesses.append(point)
        return component.witnesses[0]

    def _pieces(
        self, form: Form
    ) -> tuple[int, dict[int, dict[int, int]], dict[int, dict[int, int]], int, int]:
        """A form as: its published constant, per-component pieces to minimize and to
        maximize (merged groups take their smallest / largest member coefficient),
        and the coefficient range on variables that no row constrains."""
        constant, rest = self._reduce(tuple(sorted(form)))
        by_group: dict[int, list[int]] = {}
        for variable, coefficient in rest.items():
            if variable in self.fixed:
                constant += coefficient * self.fixed[variable]
                continue
            by_group.setdefault(int(self.group_of[variable]), []).append(coefficient)
        low_pieces: dict[int, dict[int, int]] = {}
        high_pieces: dict[int, dict[int, int]] = {}
        low_free = high_free = 0
        for group, coefficients in by_group.items():
            full = len(coefficients) == len(self.members[group])
            smallest = min(coefficients) if full else min(0, *coefficients)
            largest = max(coefficients) if full else max(0, *coefficients)
            if group == self.free_group:
                low_free, high_free = min(low_free, smallest), max(high_free, largest)
                continue
            index = int(self.component_of[group])
            position = self.components[index].position[group]
            if smallest:
                low_pieces.setdefault(index, {})[position] = smallest
            if largest:
                high_pieces.setdefault(index, {})[position] = largest
        if low_free < 0:
            raise Unresolved  # a form that can be driven below zero: not a protected quantity
        return constant, low_pieces, high_pieces, low_free, high_free

    def range_of(self, form: Form) -> tuple[int, int | None]:
        """The exact integer range ``[lo, hi]`` of ``form`` (``hi`` None: unbounded).

        Raises:
            Unresolved: when the solver cannot settle it exactly.
            Inconsistent: when a component turns out to have no integer point.
        """
        constant, low_pieces, high_pieces, _, high_free = self._pieces(form)
        low = constant
        for index, piece in sorted(low_pieces.items()):
            value = self._extreme(index, piece, maximize=False)
            assert value is not None
            low += value
        high: int | None = None if high_free > 0 else constant
        for index, piece in sorted(high_pieces.items()):
            if high is None:
                break
            value = self._extreme(index, piece, maximize=True)
            high = None if value is None else high + value
        return low, high

    def protected(self, form: Form, value: int, min_cell: int) -> bool:
        """Whether an outsider cannot pin the quantity down (cheaply, when possible).

        For a true ``value`` from 1 to ``min_cell - 1``: some consistent table puts
        it at 0 or at ``min_cell`` or more. For any other value: it is not
        derivable exactly. Feasible points (witnesses, then restrictions around
        the blocks it touches) settle most cases; otherwise the exact range does.
        """
        small = 1 <= value < min_cell
        constant, low_pieces, high_pieces, _, high_free = self._pieces(form)
        if high_free > 0:
            return True  # unbounded above
        for index, piece in high_pieces.items():
            bounded = self.components[index].bounded
            if any(a > 0 and not bounded[c] for c, a in piece.items()):
                return True  # unbounded above
        if not low_pieces and not high_pieces:
            return False  # derivable: every part is published or fixed
        for effort in range(2):
            low = constant
            high = constant
            for index, piece in sorted(low_pieces.items()):
                self._witness(index)
                if effort:
                    self._restricted_best(index, piece)
                low += self._best_witness(self.components[index], piece)
            for index, piece in sorted(high_pieces.items()):
                negated = {c: -a for c, a in piece.items()}
                self._witness(index)  # a component only maximized has none yet (lazy)
                if effort:
                    self._restricted_best(index, negated)
                high -= self._best_witness(self.components[index], negated)
            if (small and (low == 0 or high >= min_cell)) or (not small and low != high):
                return True
        low_exact, high_exact = self.range_of(form)
        if small:
            return low_exact == 0 or high_exact is None or high_exact >= min_cell
        return low_exact != high_exact

    def spread(self, forms: Sequence[Form]) -> None:
        """Find witnesses that push many forms to their extremes at once.

        One solve per component minimizes the sum of all the forms, one maximizes it
        (over bounded columns): many minima are 0 and many maxima are reached at such
        points, which then settle those questions without a solve of their own.
        """
        low_total: dict[int, dict[int, int]] = {}
        high_total: dict[int, dict[int, int]] = {}
        for form in forms:
            _, low_pieces, high_pieces, _, _ = self._pieces(form)
            for index, piece in low_pieces.items():
                target = low_total.setdefault(index, {})
                for column, coefficient in piece.items():
                    target[column] = target.get(column, 0) + coefficient
            for index, piece in high_pieces.items():
                bounded = self.components[index].bounded
                target = high_total.setdefault(index, {})
                for column, coefficient in piece.items():
                    if bounded[column]:
                        target[column] = target.get(column, 0) - coefficient
        for totals in (low_total, high_total):
            for index, objective in sorted(totals.items()):
                component = self.components[index]
                self._witness(index)
                c = np.zeros(component.width)
                for column, weight in objective.items():
                    c[column] = weight
                if len(component.witnesses) < _MAX_WITNESSES:
                    known = component.witnesses[self._best_index(component, objective)]
                    point = component.problem.solve(c, self.counts, incumbent=known)
                    component.witnesses.append(point)

    def point(self) -> np.ndarray:
        """A feasible point in the model's own variables (a seed for a wider solver)."""
        x = np.zeros(self.model.size, dtype=np.int64)
        for variable, value in self.fixed.items():
            x[variable] = value
        for index, component in enumerate(self.components):
            witness = self._witness(index)
            for position, group in enumerate(component.columns):
                x[self.members[group][0]] = witness[position]
        return x

    def points(self) -> list[np.ndarray]:
        """Feasible points in the model's own variables: every witness found, component by
        component (hints for a solver of fewer published numbers: :class:`RangeSolver`)."""
        out: list[np.ndarray] = []
        most = max((len(c.witnesses) for c in self.components), default=0)
        for at in range(most):
            x = np.zeros(self.model.size, dtype=np.int64)
            for variable, value in self.fixed.items():
                x[variable] = value
            for component in self.components:
                if not component.witnesses:
                    continue
                witness = component.witnesses[min(at, len(component.witnesses) - 1)]
                for position, group in enumerate(component.columns):
                    x[self.members[group][0]] = witness[position]
            out.append(x)
        return out

    def _extreme(self, index: int, piece: dict[int, int], *, maximize: bool) -> int | None:
        # The exact max (or min) of ``piece`` over one component; None: unbounded above.
        cache_key = (index, tuple(sorted(piece.items())), maximize)
        if cache_key in self._cache:
            return self._cache[cache_key]
        component = self.components[index]
        sign = -1 if maximize else 1
        objective = {c: sign * a for c, a in piece.items()}  # always minimized below
        result: int | None
        if maximize and any(a > 0 and not component.bounded[c] for c, a in piece.items()):
            result = None
        else:
            self._witness(index)
            best = self._best_witness(component, objective)
            if best == self._trivial_bound(objective):
                result = sign * best
            else:
                result = sign * self._minimum(index, objective, best)
        self._cache[cache_key] = result
        return result

    @staticmethod
    def _trivial_bound(objective: Mapping[int, int]) -> int | None:
        # A minimized form with non-negative coefficients is at least 0.
        return 0 if all(a >= 0 for a in objective.values()) else None

    @staticmethod
    def _best_witness(component: _Component, objective: Mapping[int, int]) -> int:
        columns = np.fromiter(objective.keys(), dtype=np.int64)
        weights = np.fromiter(objective.values(), dtype=np.int64)
        values = component.stacked()[:, columns] @ weights
        return int(values.min())

    @staticmethod
    def _best_index(component: _Component, objective: Mapping[int, int]) -> int:
        # The witness with the smallest objective (the first of equals).
        columns = np.fromiter(objective.keys(), dtype=np.int64)
        weights = np.fromiter(objective.values(), dtype=np.int64)
        values = component.stacked()[:, columns] @ weights
        return int(np.argmin(values))

    def _minimum(self, index: int, objective: Mapping[int, int], best: int) -> int:
        """The exact minimum of ``objective`` over the component: sandwich, else whole."""
        component = self.components[index]
        areas = self._areas_around(index, objective)
        if areas:
            # The blocks alone, their shared rows dropped: the cheapest relaxation.
            by_block: dict[int, dict[int, int]] = {}
            for column, weight in objective.items():
                by_block.setdefault(component.block_of[column], {})[column] = weight
            parts = [self._block_minimum(index, b, part) for b, part in sorted(by_block.items())]
            if None not in parts and sum(parts) == best:  # type: ignore[arg-type]
                return best
        for area in areas:
            # Cheap bounds first: the loose relaxation; then a restriction (a new
            # witness); then the relaxation with the outside blocks' exact ranges.
            bound = self._relaxed_minimum(index, objective, area, "loose")
            if bound is not None and bound == best:
                return best
            value, point = self._restricted_minimum(
                index, objective, area, self._best_index(component, objective)
            )
            if len(component.witnesses) < _MAX_WITNESSES:
                component.witnesses.append(point)
            best = min(best, value)
            if bound is not None and bound == best:
                return best
            bound = self._relaxed_minimum(index, objective, area, "exact")
            if bound is not None and bound == best:
                return best
        c = np.zeros(component.width)
        for column, weight in objective.items():
            c[column] = weight
        known = component.witnesses[self._best_index(component, objective)]
        point = component.problem.solve(c, self.counts, incumbent=known)
        if len(component.witnesses) < _MAX_WITNESSES:
            component.witnesses.append(point)
        return int(sum(a * int(point[col]) for col, a in objective.items()))

    def _areas_around(self, index: int, objective: Mapping[int, int]) -> list[frozenset[int]]:
        """The sandwich areas for an objective: its blocks, then with partners added."""
        component = self.components[index]
        touched = frozenset(component.block_of[c] for c in objective)
        cached = self._around.get((index, touched))
        if cached is not None:
            return cached
        areas: list[frozenset[int]] = []
        self._around[index, touched] = areas  # the component's structure alone decides
        if component.width >= _SANDWICH_WIDTH and len(touched) <= _NEIGHBOURHOOD:
            areas.append(touched)
            # Then grow by partners: the outside blocks sharing the most rows with it.
            area = set(touched)
            for _ in range(_PARTNERS):
                shared: dict[int, int] = {}
                for block in sorted(area):
                    for row in component.coupling_of_block.get(block, []):
                        for other in self._row_parts(index, row, exact=False):
                            if other not in area:
                                shared[other] = shared.get(other, 0) + 1
                if not shared or len(area) >= _NEIGHBOURHOOD:
                    break
                area.add(min(shared, key=lambda b: (-shared[b], b)))
                areas.append(frozenset(area))
        return areas

    def _restricted_best(self, index: int, objective: Mapping[int, int]) -> None:
        """Add the restrictions' optima around the objective's blocks as witnesses."""
        component = self.components[index]
        for area in self._areas_around(index, objective):
            _, point = self._restricted_minimum(index, objective, area)
            if len(component.witnesses) < _MAX_WITNESSES:
                component.witnesses.append(point)

    def _known(
        self, index: int, objective: Mapping[int, int], columns: list[int]
    ) -> np.ndarray | None:
        # The best witness for ``objective``, on ``columns`` (a point of any relaxation).
        component = self.components[index]
        if not component.witnesses:
            return None
        return component.witnesses[self._best_index(component, objective)][columns]

    def _block_minimum(self, index: int, block: int, objective: Mapping[int, int]) -> int | None:
        # The minimum over the block alone (its own rows); None: unbounded below.
        key = (index, block, tuple(sorted(objective.items())), False)
        if key in self._block_cache:
            return self._block_cache[key]
        component = self.components[index]
        columns, problem = component.block_problem(block)
        where = {c: i for i, c in enumerate(columns)}
        local = {where[c]: a for c, a in objective.items() if c in where}
        result: int | None = 0
        if local:
            c = np.zeros(problem.width)
            for i, a in local.items():
                c[i] = a
            known = self._known(index, objective, columns)
            try:
                point = problem.solve(c, self.counts, incumbent=known)
                result = int(sum(a * int(point[i]) for i, a in local.items()))
            except Unresolved:  # unbounded within the block alone: no finite bound
                result = None
        self._block_cache[key] = result
        return result

    def _cover(
        self, index: int, block: int, part: Mapping[int, int]
    ) -> tuple[int | None, int | None]:
        """A cheap valid range of a block's part of a row, from the block's own rows.

        Below: 0 when every coefficient is positive. Above: the smallest published
        row of the block that dominates the part column by column.
        """
        component = self.components[index]
        low = 0 if all(a > 0 for a in part.values()) else None
        high: int | None = None
        if low is not None:
            for row in component.rows_of_block.get(block, []):
                value = component.upper[row]
                form = component.rows[row]
                if value is None or not all(a > 0 for a in form.values()):
                    continue
                if all(form.get(c, 0) >= a for c, a in part.items()):
                    high = value if high is None else min(high, value)
        return low, high

    def _row_parts(
        self, index: int, row: int, *, exact: bool = True
    ) -> dict[int, tuple[Row, int | None, int | None]]:
        """A shared row split by block: each block's part and a valid range of it.

        ``exact``: each part's own range within its block (small integer
        programs); otherwise cheap cover bounds (:meth:`_cover`).
        """
        key = (index, row, exact)
        if key not in self._parts:
            component = self.components[index]
            split: dict[int, Row] = {}
            for column, coefficient in component.rows[row].items():
                split.setdefault(component.block_of[column], {})[column] = coefficient
            parts: dict[int, tuple[Row, int | None, int | None]] = {}
            for block, part in sorted(split.items()):
                if exact:
                    low = self._block_minimum(index, block, part)
                    negated = self._block_minimum(index, block, {c: -a for c, a in part.items()})
                    parts[block] = (part, low, None if negated is None else -negated)
                else:
                    parts[block] = (part, *self._cover(index, block, part))
            self._parts[key] = parts
        return self._parts[key]

    def _area_problem(
        self, index: int, area: frozenset[int], kind: str, base: int = 0
    ) -> tuple[list[int], _Problem]:
        """The problem over an area's columns (built once per area and kind).

        Its own rows are kept; a row it shares with blocks outside keeps its part
        inside, with the outside's contribution loosened to a range (a
        relaxation: ``"loose"`` sums cheap cover bounds, ``"exact"`` the outside
        blocks' own ranges) or fixed at the first witness (``"restricted"``).
        """
        relaxed = kind != "restricted"
        key = (index, area, kind, base)
        if key in self._areas:
            return self._areas[key]
        component = self.components[index]
        columns = sorted(c for block in area for c in component.blocks[block])
        where = {c: i for i, c in enumerate(columns)}
        witness = component.witnesses[base]
        at_witness = None if relaxed else component.problem.values(witness)
        rows: list[Row] = []
        lower: list[int | None] = []
        upper: list[int | None] = []
        for block in sorted(area):
            for row in component.rows_of_block.get(block, []):
                rows.append({where[c]: a for c, a in component.rows[row].items()})
                lower.append(component.lower[row])
                upper.append(component.upper[row])
        shared = sorted({r for block in area for r in component.coupling_of_block.get(block, [])})
        for row in shared:
            parts = self._row_parts(index, row, exact=kind == "exact")
            inner: Row = {}
            for block in area & parts.keys():
                inner.update({where[c]: a for c, a in parts[block][0].items()})
            outside = [parts[b] for b in parts.keys() - area]
            if relaxed:
                lows = [low for _, low, _ in outside]
                highs = [high for _, _, high in outside]
                out_low = None if None in lows else sum(lows)  # type: ignore[arg-type]
                out_high = None if None in highs else sum(highs)  # type: ignore[arg-type]
            else:  # the row's value at the witness, less the area's part of it
                inside = sum(a * int(witness[columns[i]]) for i, a in inner.items())
                assert at_witness is not None
                out_low = out_high = int(at_witness[row]) - inside
            low, high = component.lower[row], component.upper[row]
            low = None if low is None or out_high is None else low - out_high
            high = None if high is None or out_low is None else high - out_low
            if low is None and high is None:
                continue  # no bound left: the relaxation drops the row
            rows.append(inner)
            lower.append(low)
            upper.append(high)
        result = columns, _Problem(len(columns), rows, lower, upper)
        self._areas[key] = result
        return result

    def _relaxed_minimum(
        self, index: int, objective: Mapping[int, int], area: frozenset[int], kind: str
    ) -> int | None:
        """A lower bound: the area's rows, outside contributions loosened to ranges.

        None when the relaxation has no finite minimum (or the solver balks): then
        it bounds nothing and the caller falls back to a larger problem.
        """
        columns, problem = self._area_problem(index, area, kind)
        known = self._known(index, objective, columns)
        bound: int | None = None
        try:
            bound = self._solve_area(columns, problem, objective, known)[0]
        except Unresolved:
            bound = None
        return bound

    def _restricted_minimum(
        self, index: int, objective: Mapping[int, int], area: frozenset[int], base: int = 0
    ) -> tuple[int, np.ndarray]:
        """An upper bound: the area free, every other block fixed at witness ``base``.

        Returns the bound and the whole component's point (a new witness).
        """
        component = self.components[index]
        columns, problem = self._area_problem(index, area, "restricted", base)
        known = component.witnesses[base][columns]
        value, local_point = self._solve_area(columns, problem, objective, known)
        point = component.witnesses[base].copy()
        point[columns] = local_point
        if not component.problem.check(point):
            raise Unresolved
        return value, point

    def _solve_area(
        self,
        columns: list[int],
        problem: _Problem,
        objective: Mapping[int, int],
        known: np.ndarray | None,
    ) -> tuple[int, np.ndarray]:
        # Minimize over an area's columns; ``known``: a witness's values there.
        where = {c: i for i, c in enumerate(columns)}
        c = np.zeros(len(columns))
        for column, weight in objective.items():
            c[where[column]] = weight
        point = problem.solve(c, self.counts, incumbent=known)
        value = sum(weight * int(point[where[col]]) for col, weight in objective.items())
        return value, point


class LocalCheck:
    """Cheap certificates that a quantity is protected, for many candidate hidden sets.

    A *restriction* of the attack: the fields a quantity touches are free, every
    other field is fixed at ``seed`` (a point consistent with every number the
    report could publish). Any table it finds is consistent with what is
    published, so if one puts the quantity at 0 or at ``min_cell`` or more (or
    anywhere but its true value), an outsider cannot pin it down. It proves
    protection, never its absence: a quantity it cannot certify goes to the
    exact :class:`RangeSolver`.

    Args:
        model: The report's linear model.
        seed: A feasible point of the model (every published number satisfied).
        max_width: Areas with more variables than this are not tried.
    """

    def __init__(self, model: ReportModel, seed: np.ndarray, max_width: int = 2000) -> None:
        self.model = model
        self.seed = seed
        self.max_width = max_width
        owner = np.full(model.size, -1, dtype=np.int64)
        self.variables: dict[int, list[int]] = {}
        for index, layout in enumerate(model.layouts.values()):
            owner[layout.offset : layout.offset + layout.size] = index
            self.variables[index] = list(range(layout.offset, layout.offset + layout.size))
        extra = -1
        for variable in range(model.size):
            if owner[variable] == -1:
                owner[variable] = extra
                self.variables[extra] = [variable]
                extra -= 1
        self.owner = owner
        self.touching: dict[int, list[Key]] = {}
        for key, quantity in model.quantities.items():
            if quantity.derived:
                continue
            for field in sorted({int(owner[v]) for v, _ in quantity.form}):
                self.touching.setdefault(field, []).append(key)
        self.inequalities: dict[int, list[Form]] = {}
        for row in model.inequalities:
            self.inequalities.setdefault(int(owner[row[0][0]]), []).append(row)
        self.field_ids = list(model.layouts)
        self._split: dict[Form, tuple[dict[int, Row], dict[int, int], int]] = {}
        self._touching_area: dict[tuple[int, ...], list[tuple[Key, dict[int, Row], int, int]]] = {}
        self._results: dict[tuple[object, ...], tuple[bool, bool]] = {}
        self._rules: dict[tuple[int, frozenset[tuple[Key, int]]], list[tuple[Form, int]]] = {}
        self._last_rules: tuple[Mapping[Key, int], int, list[tuple[Form, int]]] | None = None
        self._partners_for: Mapping[Key, int] | None = None
        self._partners_of: dict[tuple[int, ...], list[int]] = {}
        # A pooled number's member fields (those whose variables it sums).
        self.members: dict[Key, list[int]] = {
            key: sorted({int(owner[v]) for v, _ in quantity.form})
            for key, quantity in model.quantities.items()
            if key[0] != "field" and not quantity.derived
        }

    def _partners(self, area: list[int], published: Mapping[Key, int]) -> list[int]:
        """Fields that can absorb a change of the area through a published pooled number.

        A field can when its own part of that pooled number is hidden; the fields
        that can through the most pooled numbers come first (then by position).
        """
        if self._partners_for is not published:  # a new mapping: earlier answers are stale
            self._partners_for = published
            self._partners_of.clear()
        cached = self._partners_of.get(tuple(area))
        if cached is not None:
            return cached
        inside = set(area)
        score: dict[int, int] = {}
        for field in area:
            for key in self.touching.get(field, []):
                if key not in published or key not in self.members:
                    continue
                for other in self.members[key]:
                    if other in inside or other < 0:
                        continue
                    part = ("field", self.field_ids[other], key[2])
                    if part not in published:
                        score[other] = score.get(other, 0) + 1
        found = sorted(score, key=lambda f: (-score[f], f))
        self._partners_of[tuple(area)] = found
        return found

    def protected(
        self, form: Form, value: int, min_cell: int, published: Mapping[Key, int]
    ) -> bool:
        """Whether a restriction around ``form``'s fields certifies it protected.

        Tried with the form's own fields free, then with one and two partner
        fields (:meth:`_partners`) free as well: certified when any of these
        areas certifies it. Each area holds the one before (its restriction
        fixes fewer variables, so its feasible tables include the smaller
        area's), so the widest area decides alone whenever its two solves
        settle: its minimum is at most, its maximum at least, the smaller
        areas'. Only when it cannot settle a direction (no finite optimum) are
        the smaller areas tried, in order.
        """
        fields = sorted({int(self.owner[v]) for v, _ in form})
        areas = [fields]
        for partner in self._partners(fields, published)[:_PARTNERS]:
            areas.append(sorted({*areas[-1], partner}))
        knowledge = self._knowledge(published, min_cell)
        if not FAST_PATHS:
            return any(
                self._certified(
                    area, form, value, min_cell, published, knowledge=knowledge, fast=False
                )[0]
                for area in areas
            )
        certified, settled = self._certified(
            areas[-1], form, value, min_cell, published, knowledge=knowledge
        )
        if certified or settled:
            return certified
        return any(
            self._certified(area, form, value, min_cell, published, knowledge=knowledge)[0]
            for area in areas[:-1]
        )

    def _knowledge(self, published: Mapping[Key, int], min_cell: int) -> Sequence[tuple[Form, int]]:
        # The rule's rows for these published numbers (the same numbers recur: cached; the
        # same mapping, passed again for check after check of one round, without a key).
        last = self._last_rules
        if last is not None and last[0] is published and last[1] == min_cell:
            return last[2]
        key = (min_cell, frozenset(published.items()))
        if key not in self._rules:
            self._rules[key] = self.model.knowledge(published, min_cell)
        self._last_rules = (published, min_cell, self._rules[key])
        return self._rules[key]

    def _part(self, form: Form) -> tuple[dict[int, Row], dict[int, int], int]:
        # A form split by field: each field's part, the seed's value of each part, and
        # the seed's value of the whole form.
        if form not in self._split:
            parts: dict[int, Row] = {}
            values: dict[int, int] = {}
            for variable, coefficient in form:
                field = int(self.owner[variable])
                parts.setdefault(field, {})[variable] = coefficient
                values[field] = values.get(field, 0) + coefficient * int(self.seed[variable])
            self._split[form] = (parts, values, sum(values.values()))
        return self._split[form]

    def _area_rows(self, fields: tuple[int, ...]) -> list[tuple[Key, dict[int, Row], int, int]]:
        """Every number touching the area, once, in order: its key, its parts by field,
        the seed's value outside the area, and the seed's value of the whole."""
        if fields not in self._touching_area:
            seen: set[Key] = set()
            out: list[tuple[Key, dict[int, Row], int, int]] = []
            for field in fields:
                for key in self.touching.get(field, []):
                    if key in seen:
                        continue
                    seen.add(key)
                    parts, values, total = self._part(self.model.quantities[key].form)
                    inside = sum(values.get(f, 0) for f in fields)
                    out.append((key, parts, total - inside, total))
            self._touching_area[fields] = out
        return self._touching_area[fields]

    def _certified(
        self,
        fields: list[int],
        form: Form,
        value: int,
        min_cell: int,
        published: Mapping[Key, int],
        *,
        knowledge: Sequence[tuple[Form, int]],
        fast: bool = True,
    ) -> tuple[bool, bool]:
        """Whether the restriction to ``fields`` certifies the quantity, and whether that
        answer is settled (both directions solved, or certified): a False that is not
        settled says nothing about smaller areas."""
        columns = [v for f in fields for v in self.variables[f]]
        if not columns or len(columns) > self.max_width:
            return False, False
        area = tuple(fields)
        # The published rows touching the area, and the rule's rows: each one's part
        # inside the area, and its bound less the seed's part outside.
        names: list[object] = []  # what identifies each row (a key, or a rule's form)
        rows: list[tuple[dict[int, Row], int, bool]] = []
        seed_feasible = True  # whether the seed is a table of this restriction
        for key, parts, outside, total in self._area_rows(area):
            shown = published.get(key)
            if shown is None:
                continue
            names.append(key)
            rows.append((parts, shown - outside, True))
            if total != shown:
                seed_feasible = False
        for knowledge_row, bound in knowledge:
            parts, values, total = self._part(knowledge_row)
            inside = [values[f] for f in fields if f in parts]
            outside = total - sum(inside)
            if not inside:
                if outside < bound:
                    return False, True  # no table of this restriction fits the rule
                continue
            names.append(knowledge_row)
            rows.append((parts, bound - outside, False))
            if total < bound:
                seed_feasible = False
        small = 1 <= value < min_cell
        seed_feasible = seed_feasible and all(
            sum(c * int(self.seed[v]) for v, c in inequality) >= 0
            for field in fields
            for inequality in self.inequalities.get(field, [])
        )
        if fast and seed_feasible and all(c >= 0 for _, c in form):
            # The seed is a table of this restriction: its value bounds the minimum.
            at_seed = self._part(form)[2]
            if (small and at_seed == 0) or (not small and at_seed < value):
                return True, True
        if not fast:
            return self._solve_area(fields, columns, rows, form, value=value, min_cell=min_cell)
        signature = (
            area,
            form,
            value,
            min_cell,
            tuple(names),
            tuple((bound, equality) for _, bound, equality in rows),
        )
        if signature not in self._results:
            self._results[signature] = self._solve_area(
                fields, columns, rows, form, value=value, min_cell=min_cell
            )
        return self._results[signature]

    def _solve_area(
        self,
        fields: list[int],
        columns: list[int],
        rows: list[tuple[dict[int, Row], int, bool]],
        form: Form,
        *,
        value: int,
        min_cell: int,
    ) -> tuple[bool, bool]:
        # The restriction's minimum and maximum of ``form`` (warm, on one loaded problem).
        where = {v: i for i, v in enumerate(columns)}
        area = set(fields)
        matrix: list[Row] = []
        lower: list[int | None] = []
        upper: list[int | None] = []
        for parts, bound, equality in rows:
            inside: Row = {}
            for field in sorted(area & parts.keys()):
                for variable, coefficient in parts[field].items():
                    inside[where[variable]] = coefficient
            matrix.append(inside)
            lower.append(bound)
            upper.append(bound if equality else None)
        for field in fields:
            for inequality in self.inequalities.get(field, []):
                matrix.append({where[v]: c for v, c in inequality})
                lower.append(0)
                upper.append(None)
        problem = _Problem(len(columns), matrix, lower, upper)
        known = self.seed[columns]  # a table of this restriction when the seed fits the rule
        small = 1 <= value < min_cell
        counts = [0, 0]
        settled = True
        for sign in (1, -1):
            c = np.zeros(len(columns))
            for variable, coefficient in form:
                c[where[variable]] = sign * coefficient
            failed = False
            point: np.ndarray | None = None
            try:
                point = problem.solve(c, counts, incumbent=known)
            except (Unresolved, Inconsistent):
                failed = True
            if failed or point is None:
                settled = False
                continue
            reached = sum(coefficient * int(point[where[v]]) for v, coefficient in form)
            if small and (reached == 0 or reached >= min_cell):
                return True, True
            if not small and reached != value:
                return True, True
        return False, settled
