"""One integer program, solved exactly: rows ``lower <= A x <= upper`` over ``x >= 0``.

:class:`IntegerProgram` is the unit every question of the attack ends in: the range
solver's components and blocks (:mod:`chartscore.disclosure.ranges`) and the local
check's restrictions (:mod:`chartscore.disclosure.local_check`) each build one and
minimize objectives over it. It tries the LP relaxation first (warm, in HiGHS), repairs
a fractional vertex locally (around its own rounding, then around a known integer point),
and only then runs branch and bound afresh; every point is
checked against every row in exact integer arithmetic. What it cannot settle raises
:class:`Unresolved`; rows no integer point satisfies raise :class:`Inconsistent`.

:data:`FAST_PATHS` switches the fast paths off for tests: set it on this module.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Final

import numpy as np

from chartscore.disclosure.lp import INFEASIBLE, OPTIMAL, UNBOUNDED, WarmLP, rowwise, solve_afresh
from chartscore.disclosure.native_output import stdout_closed

_DIVE_WIDTH: Final = 1000
"""Problems this wide or wider try the repair first: each dive loads the whole problem again
(on the 200-field benchmark's 3,831-column component, tens of milliseconds), the repair only
its few free columns."""
_DIVE_DEPTH: Final = 40
"""How many columns a dive fixes before it gives up (then the repair, branch and bound)."""
_WIDE_DIVE_SHARES: Final = (2, 8)
"""A wide problem's dives: each fixes 1 / this of the fractional columns at each step (a
second, gentler dive where the first emptied the face)."""
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


NO_LOWER: Final = -(2**62)
"""An exact lower bound that stands for none."""
NO_UPPER: Final = 2**62
"""An exact upper bound that stands for none."""


def _rounded_up(bound: float) -> int:
    # An LP bound rounded up to the integer no integer point's (integral) value is below.
    return math.ceil(bound - 1e-6 * (1 + abs(bound)))


class Unresolved(Exception):  # noqa: N818 - a state, not a programming error
    """The solver could not settle a question exactly (numerics, limits)."""


class Inconsistent(Exception):  # noqa: N818
    """The published numbers admit no integer table at all: a damaged or edited report."""


class _Result:
    """One solve from scratch: scipy's status code (0 optimal, 2 infeasible), the point,
    its value and, for integer programs, the proven bound (as ``milp`` returns them)."""

    def __init__(
        self, status: int, x: np.ndarray | None, fun: float | None, bound: float | None
    ) -> None:
        self.status, self.x, self.fun, self.bound = status, x, fun, bound


def _milp(problem: IntegerProgram, c: np.ndarray, *, integer: bool) -> _Result:
    # scipy's own milp: the fallback when its HiGHS binding cannot be used directly.
    from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415
    from scipy.sparse import csr_array  # noqa: PLC0415

    indptr, indices, data = problem.sparse
    matrix = csr_array(
        (data.astype(np.float64), indices, indptr), shape=(len(problem.rows), problem.width)
    )
    constraints = (
        [LinearConstraint(matrix, problem.lower, problem.upper)] if problem.row_count else []
    )
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


def _afresh(problem: IntegerProgram, c: np.ndarray, *, integer: bool) -> _Result:
    """``min c x`` from scratch, as ``milp`` solves it (by its binding when loadable)."""
    solved = solve_afresh(
        problem.width, problem.sparse, problem.lower, problem.upper, c, integer=integer
    )
    if solved is None:
        return _milp(problem, c, integer=integer)
    status, x, fun, bound = solved
    code = 0 if status == OPTIMAL else 2 if status == INFEASIBLE else 4
    return _Result(code, x, fun if status == OPTIMAL else None, bound)


class Relaxation:
    """What :meth:`IntegerProgram.relax` learnt of one objective's integer optimum.

    Attributes:
        point: The optimum, when the relaxation settled it (else None).
        low, high: Otherwise, when the LP solved: the integer optimum's bounds (the LP's
            value rounded up, and a known point's value); None when nothing is known.
        incumbent: The known point (for :meth:`IntegerProgram.complete`'s repair).
    """

    __slots__ = ("bound", "high", "incumbent", "low", "point", "vertex")

    def __init__(
        self,
        point: np.ndarray | None,
        low: int | None,
        high: int | None,
        bound: float | None,
        vertex: np.ndarray | None,
        *,
        incumbent: np.ndarray | None = None,
    ) -> None:
        self.point, self.low, self.high, self.bound, self.vertex = point, low, high, bound, vertex
        self.incumbent = incumbent


class IntegerProgram:
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
        listed = list(rows)
        self._set(
            width,
            rowwise(listed),
            np.array([NO_LOWER if v is None else v for v in lower], dtype=np.int64),
            np.array([NO_UPPER if v is None else v for v in upper], dtype=np.int64),
        )
        self._rows: list[Row] | None = listed

    @classmethod
    def from_sparse(
        cls,
        width: int,
        matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
        lower: np.ndarray,
        upper: np.ndarray,
    ) -> IntegerProgram:
        """The same problem from its rows in compressed sparse row form (:func:`rowwise`'s,
        columns sorted within each row) and its exact bounds as integer arrays, with
        :data:`NO_LOWER` and :data:`NO_UPPER` for none: no dictionaries built."""
        problem = cls.__new__(cls)
        problem._set(width, matrix, lower, upper)
        problem._rows = None
        return problem

    def _set(
        self,
        width: int,
        matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
        lower: np.ndarray,
        upper: np.ndarray,
    ) -> None:
        self.width = width
        self.sparse = matrix
        self.row_count = len(matrix[0]) - 1
        # Exact integer bounds for checking points; the sentinels stand for no bound.
        self.exact_lower = np.asarray(lower, dtype=np.int64)
        self.exact_upper = np.asarray(upper, dtype=np.int64)
        self.lower = np.where(self.exact_lower == NO_LOWER, -np.inf, self.exact_lower)
        self.upper = np.where(self.exact_upper == NO_UPPER, np.inf, self.exact_upper)
        self._warm: WarmLP | None = None
        self._rows_of_entries: np.ndarray | None = None
        self._bounded: np.ndarray | None = None

    @property
    def rows(self) -> list[Row]:
        """The rows, each as column -> coefficient."""
        if self._rows is None:
            indptr, indices, data = self.sparse
            columns, values = indices.tolist(), data.tolist()
            self._rows = [
                dict(zip(columns[a:b], values[a:b], strict=True))
                for a, b in itertools.pairwise(indptr.tolist())
            ]
        return self._rows

    def check(self, x: np.ndarray) -> bool:
        """Whether the integer point ``x`` satisfies every row exactly."""
        if (x < 0).any():
            return False
        if not self.row_count:
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
        bound is needed; otherwise a fractional vertex is also repaired around it
        (:meth:`_repaired_near`) before branch and bound.

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
            target = _rounded_up(bound)
            if incumbent is not None and self._reaches(c, incumbent, target):
                return incumbent.copy()
        return self._finish(c, counter, bound, vertex, incumbent)

    def relax(self, c: np.ndarray, counter: list[int], *, incumbent: np.ndarray) -> Relaxation:
        """The first, cheap half of :meth:`solve` (warm): the optimum when the LP settles it.

        ``incumbent`` must be a point of this problem. When the LP relaxation's optimum is
        an integer point, or the incumbent reaches its bound, that is the optimum;
        otherwise the integer optimum lies between the bound rounded up (no integer point
        does better) and the incumbent's value, which may already answer the caller's
        question: :meth:`complete` finds it only when asked (the repair, or branch and
        bound, is the costly half).

        Raises:
            Inconsistent: the relaxation, hence the integer program, has no point.
            Unresolved: the relaxation has no finite optimum.
        """
        counter[0] += 1
        if not FAST_PATHS:
            return Relaxation(self._relaxed(c), None, None, None, None)
        point, bound, vertex = self._warm_relaxed(c)
        if point is not None or bound is None:
            return Relaxation(point, None, None, None, None)
        target = _rounded_up(bound)
        if self._reaches(c, incumbent, target):
            return Relaxation(incumbent.copy(), None, None, None, None)
        return Relaxation(
            None, target, int(np.rint(c @ incumbent)), bound, vertex, incumbent=incumbent
        )

    def complete(self, c: np.ndarray, counter: list[int], relaxation: Relaxation) -> np.ndarray:
        """The optimum :meth:`relax` left open (the same objective ``c``), as :meth:`solve`
        finds it.

        Raises:
            Inconsistent: no integer point satisfies the rows.
            Unresolved: the solver stopped short of a proven optimum.
        """
        if relaxation.point is not None:
            return relaxation.point
        return self._finish(c, counter, relaxation.bound, relaxation.vertex, relaxation.incumbent)

    def feasible(self, points: np.ndarray) -> np.ndarray:
        """Which rows of ``points`` (integer points, one per row) satisfy every row exactly."""
        points = np.asarray(points, dtype=np.int64)
        ok = np.all(points >= 0, axis=1)
        if not self.row_count or not ok.any():
            return np.asarray(ok, dtype=bool)
        indptr, indices, data = self.sparse
        running = np.zeros((len(points), len(indices) + 1), dtype=np.int64)
        np.cumsum(points[:, indices] * data, axis=1, out=running[:, 1:])
        values = running[:, indptr[1:]] - running[:, indptr[:-1]]
        ok &= np.all(values >= self.exact_lower, axis=1)
        ok &= np.all(values <= self.exact_upper, axis=1)
        return np.asarray(ok, dtype=bool)

    def bounded(self) -> np.ndarray:
        """Which columns every point of this problem bounds above (computed once).

        A column is bounded when a row with an upper bound and only positive
        coefficients holds it (every published number is one), or a row without an
        upper bound (``form >= low``) bounds its negative columns by its positive ones,
        all bounded. Sufficient, not necessary: a column left out may be bounded too.
        """
        if self._bounded is None:
            indptr, indices, data = self.sparse
            bounded = np.zeros(self.width, dtype=bool)
            if len(indices):
                rows = self.row_count
                row_of = self._row_of()
                capped = (self.exact_upper != NO_UPPER)[row_of]  # each entry's row has one
                # Capped rows with only positive coefficients (and some) bound their columns.
                not_positive = np.bincount(row_of, weights=data <= 0, minlength=rows)
                held = (not_positive == 0) & (np.diff(indptr) > 0)
                bounded[indices[capped & held[row_of]]] = True
                # An uncapped row whose positive columns are all bounded bounds its
                # negative ones; repeated until nothing changes.
                positive = ~capped & (data > 0)
                negative = ~capped & (data < 0)
                while True:
                    loose = np.bincount(
                        row_of, weights=positive & ~bounded[indices], minlength=rows
                    )
                    grown = negative & (loose == 0)[row_of] & ~bounded[indices]
                    if not grown.any():
                        break
                    bounded[indices[grown]] = True
            self._bounded = bounded
        return self._bounded

    def _finish(
        self,
        c: np.ndarray,
        counter: list[int],
        bound: float | None,
        vertex: np.ndarray | None,
        incumbent: np.ndarray | None = None,
    ) -> np.ndarray:
        # After a fractional (or failed) relaxation: dive, else repair its vertex (around its
        # rounding, then around the known point), else branch and bound.
        if bound is not None and vertex is not None:
            target = _rounded_up(bound)
            narrow = self.width < _DIVE_WIDTH
            dived = self._dive(c, target) if narrow else None
            if dived is not None:
                return dived
            repaired = self._repaired(c, vertex, target)
            if repaired is None and incumbent is not None:
                repaired = self._repaired_near(c, vertex, incumbent, target)
            if repaired is not None:
                return repaired
            for share in () if narrow else _WIDE_DIVE_SHARES:
                dived = self._wide_dive(c, target, share)
                if dived is not None:
                    return dived
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

    def _capped(self, c: np.ndarray, target: int) -> WarmLP | None:
        # A dive's start: the warm LP relaxation with the row ``c x <= target`` (None: no
        # warm LP, or no point reaches the target).
        relaxation = WarmLP(self.width, self.sparse, self.lower, self.upper)
        if not relaxation.available:
            return None
        if self._warm is not None and self._warm.available:
            relaxation.start_from(self._warm)  # its last basis: optimal for ``c``
        return relaxation if relaxation.cap_objective(c, target) else None

    def _dive(self, c: np.ndarray, target: int) -> np.ndarray | None:
        """An integer point at ``target`` (the LP bound rounded up, so optimal), or None.

        The LP relaxation with the row ``c x <= target`` (its optimal face, when the
        target is reachable), solved again and again, each time with one more fractional
        column fixed at its nearest integer (the nearest first), until the vertex is
        integral or the face has no point left (then the last column goes to its other
        side, once). Each step is a warm LP, a fraction of a
        millisecond; the repair and branch and bound it spares take ten or more. On the
        200-case study it finds the optimum for 28 of the 29 integer programs of the
        suppression's local checks. A point it returns satisfies every row exactly.
        """
        relaxation = self._capped(c, target)
        if relaxation is None:
            return None
        other: tuple[int, float] | None = None  # the last fixing's other side, untried
        for _ in range(_DIVE_DEPTH):
            status, x, _ = relaxation.minimize(c)
            if status != OPTIMAL or x is None:
                if other is None or not relaxation.fix(*other):
                    return None
                other = None  # the last fixing emptied the face: its other side, once
                continue
            rounded = np.rint(x)
            gap = np.abs(x - rounded)
            if gap.max(initial=0.0) <= 1e-9:
                point = rounded.astype(np.int64)
                return point if self._reaches(c, point, target) else None
            column = int(np.argmin(np.where(gap > 1e-9, gap, np.inf)))
            side = float(rounded[column])
            other = (
                column,
                float(math.floor(x[column]) if side > x[column] else math.ceil(x[column])),
            )
            if not relaxation.fix(column, side):
                return None
        return None

    def _wide_dive(self, c: np.ndarray, target: int, share: int) -> np.ndarray | None:
        """:meth:`_dive` for a wide problem: 1 / ``share`` of the fractional columns fixed
        at each step.

        Why: with strata, a component's LP vertex has about 80 fractional columns (issue
        39, 600 charts over 6 sites), so the one-column dive ran out of depth in 314 of
        340 wide problems (70 ms each) and branch and bound followed (0.2 to 0.35 s each,
        though every one of them ended at the LP bound rounded up). Fixing the nearest
        half at once reaches an integer vertex in a few steps, or empties the face (then
        None: an eighth at a time, then branch and bound, as before). Exact either way: a
        point is returned only when it satisfies every row and reaches ``target``, which no
        integer point beats.
        Narrow problems keep the one-column dive (so their points, and the 200-case
        study's bytes, are unchanged).
        """
        relaxation = self._capped(c, target)
        if relaxation is None:
            return None
        for _ in range(_DIVE_DEPTH):
            status, x, _ = relaxation.minimize(c)
            if status != OPTIMAL or x is None:
                return None  # the face emptied: branch and bound decides
            rounded = np.rint(x)
            gap = np.abs(x - rounded)
            fractional = np.flatnonzero(gap > 1e-9)
            if not len(fractional):
                point = rounded.astype(np.int64)
                return point if self._reaches(c, point, target) else None
            most = -(-len(fractional) // share)  # rounded up: at least one
            nearest = fractional[np.argsort(gap[fractional], kind="stable")][:most]
            if not all(relaxation.fix(int(column), float(rounded[column])) for column in nearest):
                return None
        return None

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
        if not fractional.any() or not self.row_count or self.width < _REPAIR_WIDTH:
            return None
        indptr, indices, _ = self.sparse
        base = rounded.astype(np.int64)
        free = fractional
        row_of = self._row_of()
        short = np.diff(indptr) <= _REPAIR_ROW
        for _ in range(_REPAIR_HOPS):
            touched = np.zeros(self.row_count, dtype=bool)
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

    def _repaired_near(
        self, c: np.ndarray, vertex: np.ndarray, incumbent: np.ndarray, target: int
    ) -> np.ndarray | None:
        """An integer point at the rounded LP bound, found around a known point, or None.

        The columns where the LP vertex and the known integer point (a witness) differ are
        freed, every other column stays at the known point's value, and the small integer
        program left is solved. The known point lies in it, so it is never empty, and where
        the two agree the optimum usually does too. Why: after a failed dive and repair, the
        wide components of a stratified self-audit went to branch and bound afresh (0.1 to
        0.4 s each), and every one of those ended at the rounded LP bound (issue 39, 600
        charts over 6 sites: 224 of 224); freed this way, 360 of 363 such problems reached it.
        A point it returns satisfies every row and reaches ``target`` (no integer point does
        better), so it is an optimum, as branch and bound's would be.
        """
        base = np.asarray(incumbent, dtype=np.int64)
        free = np.abs(vertex - base) > 1e-9
        if not free.any() or self.width < _REPAIR_WIDTH or free.sum() * 2 > self.width:
            return None
        return self._repair(c, base, free, target)

    def _row_of(self) -> np.ndarray:
        # The row of every stored coefficient (built once).
        if self._rows_of_entries is None:
            indptr = self.sparse[0]
            self._rows_of_entries = np.repeat(np.arange(self.row_count), np.diff(indptr))
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
        outside = np.bincount(row_of, weights=fixed_part, minlength=self.row_count)
        inside = free[indices]
        kept_rows = np.unique(row_of[inside])
        rows: list[Row] = []
        for row in kept_rows:
            start, stop = indptr[row], indptr[row + 1]
            rows.append(
                {int(where[indices[k]]): int(data[k]) for k in range(start, stop) if inside[k]}
            )
        shift = np.rint(outside[kept_rows])
        sub = IntegerProgram(
            len(columns),
            rows,
            [
                None if self.exact_lower[r] == NO_LOWER else int(self.exact_lower[r] - s)
                for r, s in zip(kept_rows, shift, strict=True)
            ],
            [
                None if self.exact_upper[r] == NO_UPPER else int(self.exact_upper[r] - s)
                for r, s in zip(kept_rows, shift, strict=True)
            ],
        )
        point = base.copy()
        # The small problem's LP first (primal simplex, warm-loaded: a millisecond): its
        # vertex is often integral, and then, when it reaches the target, no integer program
        # is needed. Otherwise the small integer program, as before.
        relaxed = sub._warm_lp()
        if relaxed is not None:
            status, x, _ = relaxed.minimize(c[columns])
            if status == OPTIMAL and x is not None:
                vertex = np.rint(x)
                if np.abs(x - vertex).max(initial=0.0) <= 1e-9:
                    point[columns] = vertex.astype(np.int64)
                    if self._reaches(c, point, target):
                        return point
        solved = solve_afresh(sub.width, sub.sparse, sub.lower, sub.upper, c[columns], integer=True)
        if solved is None or solved[0] != OPTIMAL or solved[1] is None:
            return None
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
