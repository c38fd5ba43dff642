"""The suppression loop's cheap certificate that a quantity is protected.

:class:`LocalCheck` is a restriction of the attack: the fields a quantity touches are
free, every other field is fixed at a seed table. Any table it finds is consistent with
what is published, so it can prove a quantity protected, never the opposite; what it
cannot certify goes to the exact :class:`~chartscore.disclosure.ranges.RangeSolver`,
which re-exports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from chartscore.disclosure import integer_program
from chartscore.disclosure.forms import Form
from chartscore.disclosure.integer_program import (
    NO_UPPER,
    Inconsistent,
    IntegerProgram,
    Relaxation,
    Row,
    Unresolved,
)
from chartscore.disclosure.model import Key, ReportModel

PARTNERS: Final = 2
"""How many partner blocks a sandwich adds, one at a time, before solving the whole (the
range solver), and how many partner fields a local check frees beside a quantity's own."""
_PROBLEMS: Final = 64
"""How many restrictions' problems a local check keeps loaded (the most recent)."""
_POOL: Final = 128
"""How many integer points a local check keeps per area, to bracket later extremes."""


class LocalCheck:
    """Cheap certificates that a quantity is protected, for many candidate hidden sets.

    A *restriction* of the attack: the fields a quantity touches are free, every
    other field is fixed at ``seed`` (a point consistent with every number the
    report could publish). Any table it finds is consistent with what is
    published, so if one puts the quantity at 0 or at ``min_cell`` or more (or
    anywhere but its true value), an outsider cannot pin it down. It proves
    protection, never its absence: a quantity it cannot certify goes to the
    exact :class:`~chartscore.disclosure.ranges.RangeSolver`.

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
        # Integer points of earlier restrictions, per area (see _solve_area).
        self._pool: dict[tuple[int, ...], list[np.ndarray]] = {}
        # The last restrictions' problems, by their rows (see _solve_area).
        self._problems: dict[tuple[object, ...], IntegerProgram] = {}
        # Per area: its columns' positions, its rows' parts inside it, its own rows, and
        # whether the seed satisfies those (each built once: see _solve_area).
        self._wheres: dict[tuple[int, ...], dict[int, int]] = {}
        self._insides: dict[tuple[tuple[int, ...], Form], tuple[np.ndarray, np.ndarray]] = {}
        self._inequality_rows: dict[tuple[int, ...], list[tuple[np.ndarray, np.ndarray]]] = {}
        self._seed_fit: dict[tuple[int, ...], bool] = {}
        self._area_rule_rows: dict[
            tuple[int, ...], dict[Form, tuple[dict[int, Row], bool, int, int]]
        ] = {}
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
        for partner in self._partners(fields, published)[:PARTNERS]:
            areas.append(sorted({*areas[-1], partner}))
        knowledge = self._knowledge(published, min_cell)
        if not integer_program.FAST_PATHS:
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

    def _where(self, area: tuple[int, ...], columns: list[int]) -> dict[int, int]:
        # Each of the area's variables' column in its restrictions (built once per area).
        found = self._wheres.get(area)
        if found is None:
            found = self._wheres[area] = {v: i for i, v in enumerate(columns)}
        return found

    def _inside(
        self, area: tuple[int, ...], form: Form, parts: dict[int, Row], where: dict[int, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        # A row's part inside the area: its columns (sorted) and coefficients (built once).
        cache_key = (area, form)
        found = self._insides.get(cache_key)
        if found is None:
            entries = sorted(
                (where[variable], coefficient)
                for field in area
                if field in parts
                for variable, coefficient in parts[field].items()
            )
            found = (
                np.fromiter((c for c, _ in entries), dtype=np.int64, count=len(entries)),
                np.fromiter((a for _, a in entries), dtype=np.int64, count=len(entries)),
            )
            self._insides[cache_key] = found
        return found

    def _area_inequalities(
        self, area: tuple[int, ...], where: dict[int, int]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        # The area's fields' own rows ``form >= 0``, as :meth:`_inside` gives rows.
        found = self._inequality_rows.get(area)
        if found is None:
            found = []
            for field in area:
                for inequality in self.inequalities.get(field, []):
                    entries = sorted((where[v], c) for v, c in inequality)
                    found.append(
                        (
                            np.array([c for c, _ in entries], dtype=np.int64),
                            np.array([a for _, a in entries], dtype=np.int64),
                        )
                    )
            self._inequality_rows[area] = found
        return found

    def _seed_fits(self, area: tuple[int, ...]) -> bool:
        # Whether the seed satisfies the area's fields' own rows (computed once per area).
        found = self._seed_fit.get(area)
        if found is None:
            found = self._seed_fit[area] = all(
                sum(c * int(self.seed[v]) for v, c in inequality) >= 0
                for field in area
                for inequality in self.inequalities.get(field, [])
            )
        return found

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
        rows: list[tuple[Form, dict[int, Row], int, bool]] = []
        seed_feasible = True  # whether the seed is a table of this restriction
        quantities = self.model.quantities
        for key, parts, outside, total in self._area_rows(area):
            shown = published.get(key)
            if shown is None:
                continue
            names.append(key)
            rows.append((quantities[key].form, parts, shown - outside, True))
            if total != shown:
                seed_feasible = False
        split_rows = self._area_rule_rows.setdefault(area, {})
        for knowledge_row, bound in knowledge:
            found = split_rows.get(knowledge_row)
            if found is None:  # its parts, whether one is inside, the seed's value outside
                parts, values, total = self._part(knowledge_row)
                inside = [values[f] for f in fields if f in parts]
                found = split_rows[knowledge_row] = (
                    parts,
                    bool(inside),
                    total - sum(inside),
                    total,
                )
            parts, touches, outside, total = found
            if not touches:
                if outside < bound:
                    return False, True  # no table of this restriction fits the rule
                continue
            names.append(knowledge_row)
            rows.append((knowledge_row, parts, bound - outside, False))
            if total < bound:
                seed_feasible = False
        small = 1 <= value < min_cell
        seed_feasible = seed_feasible and self._seed_fits(area)
        if fast and seed_feasible and all(c >= 0 for _, c in form):
            # The seed is a table of this restriction: its value bounds the minimum.
            at_seed = self._part(form)[2]
            if (small and at_seed == 0) or (not small and at_seed < value):
                return True, True
        if not fast:
            return self._solve_area(
                fields, columns, rows, form, value=value, min_cell=min_cell, fast=False
            )
        restriction = (
            area,
            tuple(names),
            tuple((bound, equality) for _, _, bound, equality in rows),
        )
        signature = (restriction, form, value, min_cell)
        if signature not in self._results:
            self._results[signature] = self._solve_area(
                fields,
                columns,
                rows,
                form,
                value=value,
                min_cell=min_cell,
                restriction=restriction,
            )
        return self._results[signature]

    def _restriction_problem(
        self,
        area: tuple[int, ...],
        columns: list[int],
        rows: list[tuple[Form, dict[int, Row], int, bool]],
    ) -> IntegerProgram:
        # The restriction as an integer program: each row's part inside the area with its
        # bound, then the area's own rows ``form >= 0``; assembled from cached arrays.
        where = self._where(area, columns)
        pieces = [self._inside(area, row_form, parts, where) for row_form, parts, _, _ in rows]
        pieces += self._area_inequalities(area, where)
        count = len(pieces)
        indptr = np.zeros(count + 1, dtype=np.int64)
        np.cumsum([len(piece[0]) for piece in pieces], out=indptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        indices = np.concatenate([piece[0] for piece in pieces]) if pieces else empty
        data = np.concatenate([piece[1] for piece in pieces]) if pieces else empty
        lower = np.zeros(count, dtype=np.int64)  # the inequalities' 0 after the rows' bounds
        upper = np.full(count, NO_UPPER, dtype=np.int64)
        for at, (_, _, bound, equality) in enumerate(rows):
            lower[at] = bound
            if equality:
                upper[at] = bound
        return IntegerProgram.from_sparse(len(columns), (indptr, indices, data), lower, upper)

    def _solve_area(
        self,
        fields: list[int],
        columns: list[int],
        rows: list[tuple[Form, dict[int, Row], int, bool]],
        form: Form,
        *,
        value: int,
        min_cell: int,
        fast: bool = True,
        restriction: tuple[object, ...] | None = None,
    ) -> tuple[bool, bool]:
        """The restriction's minimum and maximum of ``form`` (warm, on one loaded problem).

        Certified when either extreme, read as the quantity's value, is one the rule
        allows an outsider to believe: 0 or at least ``min_cell`` for a small value,
        anything but the true value otherwise. With ``fast``, the points found earlier
        in the same area (:meth:`_pool`) that satisfy this restriction's rows bound each
        extreme from one side and the LP relaxation from the other; where that bracket
        already decides the question, no integer program is solved. Either way the
        answer is the one the exact extremes give.

        ``restriction``: what identifies the restriction's rows (the area, the rows and
        their bounds). The problem built for it is kept for the next quantities of the
        same area under the same published numbers (a round's checks): only the objective
        changes, and its LP resumes from the last basis.
        """
        area = tuple(fields)
        problem = None if restriction is None else self._problems.get(restriction)
        if problem is None:
            problem = self._restriction_problem(area, columns, rows)
            if restriction is not None:
                while len(self._problems) >= _PROBLEMS:
                    del self._problems[next(iter(self._problems))]
                self._problems[restriction] = problem
        where = self._where(area, columns)
        known = self.seed[columns]  # a table of this restriction when the seed fits the rule
        small = 1 <= value < min_cell
        weights = np.zeros(len(columns), dtype=np.int64)
        for variable, coefficient in form:
            weights[where[variable]] = coefficient

        def certifies(low: int, high: int) -> bool | None:
            # Whether every value from low to high certifies (True), none does (False).
            if small:
                if low >= min_cell or low == high == 0:
                    return True
                if high < min_cell and not low <= 0 <= high:
                    return False
                return None
            if high < value or low > value:
                return True
            return False if low == high == value else None

        pool = self._pool.setdefault(tuple(fields), [])
        points = np.empty((0, len(columns)), dtype=np.int64)
        if fast:  # the seed's restriction and the area's earlier points that fit these rows
            stacked = np.stack([known, *pool]).astype(np.int64, copy=False)
            points = stacked[problem.feasible(stacked)]
        if len(points):
            # A point of the restriction bounds each extreme from one side: where that
            # alone certifies, and the extreme is finite (its columns bounded, so the
            # solve below would have reached it), the answer is the exact extremes' one.
            values = points @ weights
            bounded = problem.bounded()
            below = bool(bounded[weights < 0].all())  # the minimum is finite
            above = bool(bounded[weights > 0].all())  # the maximum is finite
            low, high = int(values.min()), int(values.max())
            if below and (
                (small and low == 0 and (weights >= 0).all()) or (not small and low < value)
            ):
                return True, True
            if above and ((small and high >= min_cell) or (not small and high > value)):
                return True, True
        counts = [0, 0]
        settled = True
        if not len(points):  # nothing to bracket with: each extreme solved in turn
            for sign in (1, -1):
                failed = False
                point: np.ndarray | None = None
                try:
                    point = problem.solve(
                        (sign * weights).astype(np.float64), counts, incumbent=known
                    )
                except (Unresolved, Inconsistent):
                    failed = True
                if failed or point is None:
                    settled = False
                    continue
                if fast and len(pool) < _POOL:
                    pool.append(point)
                reached = int(point @ weights)
                if certifies(reached, reached):
                    return True, True
            return False, settled
        # Both extremes' LPs first (cheap); each settles its extreme, or brackets it between
        # its bound and the best known point. Certified as soon as one extreme is known or
        # bracketed to certify; the costly integer programs only for the extremes still
        # open after that. Either extreme certifying is what certifies, so the order of the
        # solves changes no answer.
        open_: list[tuple[int, np.ndarray, Relaxation]] = []
        for sign in (1, -1):
            c = (sign * weights).astype(np.float64)
            best = points[int(np.argmin(points @ (sign * weights)))]
            failed = False
            relaxation: Relaxation | None = None
            try:
                relaxation = problem.relax(c, counts, incumbent=best)
            except (Unresolved, Inconsistent):
                failed = True
            if failed or relaxation is None:
                settled = False
                continue
            if relaxation.point is not None:
                reached = int(relaxation.point @ weights)
                if certifies(reached, reached):
                    return True, True
                continue
            least, most = relaxation.low, relaxation.high
            if least is not None and most is not None:
                # ``least..most`` bounds the minimum of sign * form; the form's range is
                # that, or its negation for the maximum.
                verdict = certifies(least, most) if sign == 1 else certifies(-most, -least)
                if verdict is not None:
                    if verdict:
                        return True, True
                    continue
            open_.append((sign, c, relaxation))
        for _, c, relaxation in open_:
            failed = False
            point = None
            try:
                point = problem.complete(c, counts, relaxation)
            except (Unresolved, Inconsistent):
                failed = True
            if failed or point is None:
                settled = False
                continue
            if len(pool) < _POOL and not (points == point).all(axis=1).any():
                pool.append(point)
                points = np.vstack([points, point[None, :]])
            reached = int(point @ weights)
            if certifies(reached, reached):
                return True, True
        return False, settled
