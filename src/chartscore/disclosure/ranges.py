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

This module holds the range solver: preparing the problem, splitting it and answering
questions. Each integer program it solves is a
:class:`~chartscore.disclosure.integer_program.IntegerProgram` (with :class:`Unresolved`
and :class:`Inconsistent`); :class:`LocalCheck` is in :mod:`chartscore.disclosure.local_check`.
All are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from chartscore.disclosure.forms import Form
from chartscore.disclosure.integer_program import (
    Inconsistent,
    IntegerProgram,
    Row,
    Unresolved,
)
from chartscore.disclosure.local_check import PARTNERS, LocalCheck
from chartscore.disclosure.model import Key, ReportModel

__all__ = [
    "Inconsistent",
    "LocalCheck",
    "RangeSolver",
    "Row",
    "Unresolved",
]
# The fast paths' switch (FAST_PATHS) is not re-exported: a copy here could be set to no
# effect. Tests switch it on chartscore.disclosure.integer_program, where it is read.

_MAX_WITNESSES: Final = 1024
"""Feasible points kept per component (each one can settle a question without a solve): an
exact range's optimum is kept as a witness, and later questions about the component (the
audit asks two per hidden number) are often settled by one, with no branch and bound."""
_WITNESS_ENTRIES: Final = 1 << 21
"""The most witness entries (points times columns) kept per component: wide components keep
fewer points (at least :data:`_MIN_WITNESSES`), so memory stays bounded."""
_MIN_WITNESSES: Final = 64
_NEIGHBOURHOOD: Final = 12
"""The most blocks a sandwich may span before the whole component is solved instead."""
_SANDWICH_WIDTH: Final = 400
"""Components narrower than this are solved whole: cheaper than any sandwich."""
_AREA_PROBLEMS: Final = 32
"""How many sandwich area problems a range solver keeps (the most recently used). Each keeps
its LP loaded in HiGHS, about a megabyte at 1,600 columns and growing with width x rows; most
are asked once (198 of the 314 in the 600-chart stratified self-audit), and kept all they
were its memory's growth. A problem dropped is built again if asked later: its answers are
the same, its LP starts cold."""


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
        self.problem = IntegerProgram(width, self.rows, self.lower, self.upper)
        self.witnesses: list[np.ndarray] = []
        self._stacked: np.ndarray | None = None  # the witnesses' rows, with room to grow
        self._filled = 0  # how many of its rows hold witnesses
        self.capacity = max(_MIN_WITNESSES, min(_MAX_WITNESSES, _WITNESS_ENTRIES // max(width, 1)))
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
        self._block_problems: dict[int, IntegerProgram] = {}

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

    def room(self) -> bool:
        """Whether another witness may be kept (:attr:`capacity`)."""
        return len(self.witnesses) < self.capacity

    def stacked(self) -> np.ndarray:
        """The witnesses as the rows of one matrix (witnesses are only ever appended).

        Kept in one buffer that doubles when full, so a new witness costs one row
        copied, not the whole matrix again.
        """
        count = len(self.witnesses)
        buffer = self._stacked
        if buffer is None or len(buffer) < count:
            grown = np.empty((max(8, 2 * count), self.width), dtype=np.int64)
            if buffer is not None:
                grown[: self._filled] = buffer[: self._filled]
            buffer = self._stacked = grown
        for at in range(self._filled, count):
            buffer[at] = self.witnesses[at]
        self._filled = count
        return buffer[:count]

    def block_problem(self, block: int) -> tuple[list[int], IntegerProgram]:
        """The block's own columns and rows, as a problem (built once)."""
        columns = self.blocks[block]
        if block not in self._block_problems:
            where = {c: i for i, c in enumerate(columns)}
            indices = self.rows_of_block.get(block, [])
            self._block_problems[block] = IntegerProgram(
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
        self._areas: dict[
            tuple[int, frozenset[int], str, int], tuple[list[int], IntegerProgram]
        ] = {}
        self._around: dict[tuple[int, frozenset[int]], list[frozenset[int]]] = {}
        self._gathered: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._fixed_cache: tuple[np.ndarray, np.ndarray] | None = None
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
        fixed_variables, fixed_values = self._fixed_arrays()
        if (np.asarray(seed)[fixed_variables] != fixed_values).any():
            return
        for index, component in enumerate(self.components):
            if not component.room():
                continue
            flat, starts, _ = self._gather(index)
            point = np.add.reduceat(np.asarray(seed, dtype=np.int64)[flat], starts)
            if component.problem.check(point):
                component.witnesses.append(point)

    def _fixed_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        # The fixed variables and their values, as arrays (built once).
        if self._fixed_cache is None:
            self._fixed_cache = (
                np.fromiter(self.fixed.keys(), dtype=np.int64, count=len(self.fixed)),
                np.fromiter(self.fixed.values(), dtype=np.int64, count=len(self.fixed)),
            )
        return self._fixed_cache

    def _gather(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A component's columns as model variables (built once): every member of each
        group in column order, where each group starts among them, and each group's first
        member (the variable a point in the model's own variables carries the group in)."""
        if index not in self._gathered:
            groups = [self.members[group] for group in self.components[index].columns]
            sizes = np.fromiter((len(g) for g in groups), dtype=np.int64, count=len(groups))
            starts = np.zeros(len(groups), dtype=np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            flat = np.fromiter(
                (v for g in groups for v in g), dtype=np.int64, count=int(sizes.sum())
            )
            self._gathered[index] = (flat, starts, flat[starts])
        return self._gathered[index]

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
        problem = IntegerProgram(
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
        return self._lowest(constant, low_pieces), self._highest(constant, high_pieces, high_free)

    def _lowest(self, constant: int, low_pieces: dict[int, dict[int, int]]) -> int:
        # The exact minimum of a form, from its pieces (range_of's lower end).
        low = constant
        for index, piece in sorted(low_pieces.items()):
            value = self._extreme(index, piece, maximize=False)
            assert value is not None
            low += value
        return low

    def _highest(
        self, constant: int, high_pieces: dict[int, dict[int, int]], high_free: int
    ) -> int | None:
        # The exact maximum of a form, from its pieces (None: unbounded; range_of's upper end).
        high: int | None = None if high_free > 0 else constant
        for index, piece in sorted(high_pieces.items()):
            if high is None:
                break
            value = self._extreme(index, piece, maximize=True)
            high = None if value is None else high + value
        return high

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
        # The exact range, its lower end first: that alone may settle it (a table at 0; or,
        # for a value that is not small, a minimum below a witness's value: two values).
        low_exact = self._lowest(constant, low_pieces)
        if (small and low_exact == 0) or (not small and low_exact != high):
            return True
        high_exact = self._highest(constant, high_pieces, high_free)
        if small:
            return high_exact is None or high_exact >= min_cell
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
                if component.room():
                    known = component.witnesses[self._best_index(component, objective)]
                    point = component.problem.solve(c, self.counts, incumbent=known)
                    component.witnesses.append(point)

    def point(self) -> np.ndarray:
        """A feasible point in the model's own variables (a seed for a wider solver)."""
        x = np.zeros(self.model.size, dtype=np.int64)
        fixed_variables, fixed_values = self._fixed_arrays()
        x[fixed_variables] = fixed_values
        for index in range(len(self.components)):
            witness = self._witness(index)
            x[self._gather(index)[2]] = witness
        return x

    def points(self) -> list[np.ndarray]:
        """Feasible points in the model's own variables: every witness found, component by
        component (hints for a solver of fewer published numbers: :class:`RangeSolver`)."""
        out: list[np.ndarray] = []
        most = max((len(c.witnesses) for c in self.components), default=0)
        fixed_variables, fixed_values = self._fixed_arrays()
        for at in range(most):
            x = np.zeros(self.model.size, dtype=np.int64)
            x[fixed_variables] = fixed_values
            for index, component in enumerate(self.components):
                if not component.witnesses:
                    continue
                witness = component.witnesses[min(at, len(component.witnesses) - 1)]
                x[self._gather(index)[2]] = witness
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
            if component.room():
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
        if component.room():
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
            for _ in range(PARTNERS):
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
            if component.room():
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
    ) -> tuple[list[int], IntegerProgram]:
        """The problem over an area's columns (built once per area and kind).

        Its own rows are kept; a row it shares with blocks outside keeps its part
        inside, with the outside's contribution loosened to a range (a
        relaxation: ``"loose"`` sums cheap cover bounds, ``"exact"`` the outside
        blocks' own ranges) or fixed at the first witness (``"restricted"``).
        """
        relaxed = kind != "restricted"
        key = (index, area, kind, base)
        if key in self._areas:
            self._areas[key] = self._areas.pop(key)  # the most recently used last
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
        result = columns, IntegerProgram(len(columns), rows, lower, upper)
        while len(self._areas) >= _AREA_PROBLEMS:
            del self._areas[next(iter(self._areas))]  # the least recently used
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
        problem: IntegerProgram,
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
