"""The solver's fast paths give exactly what the plain path gives.

``integer_program.FAST_PATHS`` off: every LP is solved afresh by ``milp``, the local check tries
every area in order with no seed shortcut and no cache. On: warm HiGHS solves, the widest area
first, the seed shortcut, the cache (docs/performance.md). Ranges, local certificates and the shared
bytes must not depend on which is used. Small random cohorts, so the test stays fast.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.attack as attack_module
import chartscore.disclosure.integer_program as program_module
from chartscore import score
from chartscore.disclosure import audit
from chartscore.disclosure.attack import audit_with_hints, published_values, remembering_attacks
from chartscore.disclosure.lp import INFEASIBLE, OPTIMAL, UNBOUNDED, WarmLP, rowwise
from chartscore.disclosure.model import model_of
from chartscore.disclosure.ranges import LocalCheck, RangeSolver
from chartscore.documents.shared_report import SharedReport, shared_from_report
from chartscore.workflows.share import share
from disclosure_reference import build_cohort

from helpers import examples, thorough_only

_THOROUGH_ONLY = thorough_only(
    "each example shares and audits twice, fast paths on and off (6 to 9 s in all); the "
    "local certificates' property runs by default"
)

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")


def cohort(seed: int, fields: int, cases: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return rng, build_cohort(rng.choice, [rng.choice(TYPES) for _ in range(fields)], cases)


def half_hidden(
    seed: int, fields: int, cases: int, min_cell: int
) -> tuple[random.Random, SharedReport]:
    # A random cohort's shared report with about half its numbers hidden at random (not a
    # suppression: any hidden set), and the generator to draw more from.
    rng, made = cohort(seed, fields, cases)
    gold, predictions = made.records()
    report = score(gold, predictions, schema=made.schema_document())
    types = made.sensitivity()[0].field_types
    full = shared_from_report(report.core().to_dict(), types, min_cell, set(), set())
    hidden = {key for key, _ in full.numbers() if rng.random() < 0.5}
    text = shared_from_report(report.core().to_dict(), types, min_cell, hidden, set(types))
    return rng, SharedReport.from_json(text.to_json())


@contextlib.contextmanager
def plain() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "FAST_PATHS", False)
        yield


@_THOROUGH_ONLY
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(3, 30), st.sampled_from([3, 11]))
def test_share_gives_the_same_bytes_with_and_without_the_fast_paths(
    seed: int, fields: int, cases: int, min_cell: int
) -> None:
    _, made = cohort(seed, fields, cases)
    gold, predictions = made.records()
    schema = made.schema_document()
    fast = share(gold, predictions, schema=schema, min_cell=min_cell).to_json()
    with plain():
        slow = share(gold, predictions, schema=schema, min_cell=min_cell).to_json()
    assert fast == slow
    with plain():
        slow_rows = audit(fast).rows
    assert audit(fast).rows == slow_rows


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(3, 25), st.sampled_from([3, 11]))
def test_local_certificates_are_the_same_with_and_without_the_fast_paths(
    seed: int, fields: int, cases: int, min_cell: int
) -> None:
    rng, shared = half_hidden(seed, fields, cases, min_cell)
    model = model_of(shared)
    published = {k: v for k, v in published_values(shared).items() if v is not None}
    seed_point = RangeSolver(model, published).point()
    numbers = {k: v for k, v in shared.numbers() if v is not None}
    fast_check = LocalCheck(model, seed_point)
    plain_check = LocalCheck(model, seed_point)
    hidden_quantities = [q for key, q in model.quantities.items() if key not in published]
    for quantity in rng.sample(hidden_quantities, min(12, len(hidden_quantities))):
        key = quantity.key
        for value in (rng.randint(1, min_cell - 1), rng.randint(0, 3 * min_cell)):
            fast = fast_check.protected(quantity.form, value, min_cell, numbers)
            with plain():
                slow = plain_check.protected(quantity.form, value, min_cell, numbers)
            assert fast == slow, key


def test_a_warm_lp_re_solves_for_new_objectives_and_reports_what_it_cannot_settle() -> None:
    # x0 + x1 = 3, x1 >= 1 (hand-computed optima below).
    indptr, indices, data = rowwise([{0: 1, 1: 1}, {1: 1}])
    lp = WarmLP(2, (indptr, indices, data), np.array([3.0, 1.0]), np.array([3.0, np.inf]))
    if not lp.available:
        pytest.skip("this scipy has no HiGHS binding the warm path can use")
    status, x, value = lp.minimize(np.array([1.0, 0.0]))
    assert status == OPTIMAL and value == 0.0 and x is not None and list(x) == [0.0, 3.0]
    status, x, value = lp.minimize(np.array([-1.0, 0.0]))  # max x0: x1 at its least, 1
    assert status == OPTIMAL and value == -2.0 and x is not None and list(x) == [2.0, 1.0]
    infeasible = WarmLP(2, (indptr, indices, data), np.array([3.0, 4.0]), np.array([3.0, np.inf]))
    assert infeasible.minimize(np.array([1.0, 0.0]))[0] == INFEASIBLE
    indptr, indices, data = rowwise([{1: 1}])
    open_above = WarmLP(2, (indptr, indices, data), np.array([1.0]), np.array([np.inf]))
    assert open_above.minimize(np.array([0.0, -1.0]))[0] == UNBOUNDED


@st.composite
def integer_programs(draw: st.DrawFn) -> tuple[int, list[dict[int, int]], list[int], np.ndarray]:
    """Small problems ``A x = A x0`` (x0 a random integer point) in independent groups of
    columns, with odd coefficients so that LP vertices are often fractional."""
    groups = draw(st.integers(2, 5))
    width = 0
    rows: list[dict[int, int]] = []
    x0: list[int] = []
    for _ in range(groups):
        size = draw(st.integers(2, 4))
        columns = list(range(width, width + size))
        width += size
        x0 += [draw(st.integers(0, 4)) for _ in columns]
        rows.append({c: draw(st.integers(1, 3)) for c in columns})  # bounds every column
        for _ in range(draw(st.integers(0, 2))):
            chosen = draw(st.lists(st.sampled_from(columns), min_size=1, unique=True))
            rows.append({c: draw(st.integers(1, 3)) for c in chosen})
    if draw(st.booleans()):  # a long row across the groups, as a pooled slice couples fields
        rows.append(dict.fromkeys(range(width), 1))
    values = [sum(a * x0[c] for c, a in row.items()) for row in rows]
    c = np.array([draw(st.integers(-3, 3)) for _ in range(width)], dtype=float)
    return width, rows, values, c


@settings(max_examples=examples(200), deadline=None)
@given(integer_programs())
def test_a_repaired_lp_vertex_is_an_optimum_exactly_when_it_reaches_the_rounded_bound(
    drawn: tuple[int, list[dict[int, int]], list[int], np.ndarray],
) -> None:
    width, rows, values, c = drawn
    problem = program_module.IntegerProgram(width, rows, values, values)
    repairs: list[bool] = []
    original = program_module.IntegerProgram._repair

    def spied(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        point = original(self, *args, **kwargs)
        repairs.append(point is not None)
        return point

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "_REPAIR_WIDTH", 0)  # small problems are repaired too
        patch.setattr(program_module, "_REPAIR_ROW", 4)  # the long row couples, never frees
        patch.setattr(program_module.IntegerProgram, "_repair", spied)
        patch.setattr(program_module.IntegerProgram, "_dive", lambda self, c, target: None)
        fast = problem.solve(c, [0, 0])
    with plain():
        slow = program_module.IntegerProgram(width, rows, values, values).solve(c, [0, 0])
    assert problem.check(fast)
    assert float(c @ fast) == float(c @ slow)


@settings(max_examples=examples(200), deadline=None)
@given(integer_programs())
def test_a_dive_s_point_is_an_optimum_of_the_integer_program(
    drawn: tuple[int, list[dict[int, int]], list[int], np.ndarray],
) -> None:
    # The dive (tried first on a fractional LP vertex) returns a point only at the LP bound
    # rounded up: the optimum, the value branch and bound on the plain path finds.
    width, rows, values, c = drawn
    problem = program_module.IntegerProgram(width, rows, values, values)
    dived: list[bool] = []
    original = program_module.IntegerProgram._dive

    def spied(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        point = original(self, *args, **kwargs)
        dived.append(point is not None)
        return point

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module.IntegerProgram, "_dive", spied)
        fast = problem.solve(c, [0, 0])
    with plain():
        slow = program_module.IntegerProgram(width, rows, values, values).solve(c, [0, 0])
    assert problem.check(fast)
    assert float(c @ fast) == float(c @ slow)


def test_the_repair_frees_the_fractional_columns_and_their_short_rows_only() -> None:
    # 2 x0 + x1 + x2 = 3, x3 + x4 = 5, x5 + x6 = 2; maximize x0 (minimize -x0). The LP puts
    # x0 at 1.5 (bound -1.5, rounded up -1): the repair frees x0, x1, x2 and finds x0 = 1
    # with x1 + x2 = 1, which reaches -1, so it is optimal with no branch and bound.
    rows = [{0: 2, 1: 1, 2: 1}, {3: 1, 4: 1}, {5: 1, 6: 1}]
    problem = program_module.IntegerProgram(7, rows, [3, 5, 2], [3, 5, 2])
    if not problem._warm_lp():
        pytest.skip("this scipy has no HiGHS binding the warm path can use")
    c = np.zeros(7)
    c[0] = -1.0
    counts = [0, 0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "_REPAIR_WIDTH", 0)
        freed = _freed_by_each_repair(patch)
        patch.setattr(program_module.IntegerProgram, "_dive", lambda self, c, target: None)
        point = problem.solve(c, counts)
    assert freed[0] == [0, 1, 2]
    assert int(point[0]) == 1 and int(point[1] + point[2]) == 1
    assert counts == [1, 0]  # one solve, no branch and bound


def _freed_by_each_repair(patch: pytest.MonkeyPatch) -> list[list[int]]:
    """The columns each repair frees, in order (the repairs still run)."""
    freed: list[list[int]] = []
    original = program_module.IntegerProgram._repair

    def spied(self, c, base, free, target):  # type: ignore[no-untyped-def]
        freed.append([int(i) for i in np.flatnonzero(free)])
        return original(self, c, base, free, target)

    patch.setattr(program_module.IntegerProgram, "_repair", spied)
    return freed


def test_a_repair_returns_a_point_only_when_it_reaches_the_rounded_bound() -> None:
    # x0 + x1 = 2 with x1 fixed at 0 leaves x0 = 2: the objective x0 is 2 there, which
    # proves nothing when the bound is 0 (x0 = 0, x1 = 2 is better) and everything at 2.
    problem = program_module.IntegerProgram(2, [{0: 1, 1: 1}], [2], [2])
    c = np.array([1.0, 0.0])
    base = np.array([2, 0], dtype=np.int64)
    free = np.array([True, False])
    assert problem._repair(c, base, free, 0) is None
    point = problem._repair(c, base, free, 2)
    assert point is not None and [int(v) for v in point] == [2, 0]


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(3, 25))
def test_the_self_audit_s_hints_change_no_row(seed: int, fields: int, cases: int) -> None:
    # share's self-audit starts from its suppression's points; the audit must give the rows
    # the plain audit of the file gives, even when a hint is no table at all (random counts).
    rng, made = cohort(seed, fields, cases)
    gold, predictions = made.records()
    shared = share(gold, predictions, schema=made.schema_document(), min_cell=11)
    text = shared.to_json()
    report = SharedReport.from_json(text)
    model = model_of(report)
    full = {k: v for k, v in published_values(report).items() if v is not None}
    solver = RangeSolver(model, full)
    true_like = solver.points()
    assume(true_like)  # a tiny cohort may leave the solver no point to start from
    junk = []  # the fixed classes kept (else a hint is dropped at once), the others moved
    for _ in range(3):
        point = true_like[0].copy()
        for variable in range(model.size):
            if variable not in solver.fixed:
                point[variable] += rng.randint(0, 2)
        junk.append(point)
    assert audit_with_hints(text, [*junk, *true_like]).rows == audit(text).rows


def test_rule_rows_known_to_bind_give_the_problem_the_lp_checks_give() -> None:
    # Hiding more only widens the LP relaxation, so a rule row that bound with more numbers
    # published binds with fewer: a suppression run's later solvers keep it unchecked. The
    # problem (every component's rows) must be the one the LP checks build.
    bound_somewhere = 0
    for seed in range(6):
        rng = random.Random(seed)
        made = build_cohort(rng.choice, ["multi", "multi", "boolean"], 40)
        gold, predictions = made.records()
        report = score(gold, predictions, schema=made.schema_document())
        sensitivity, _ = made.sensitivity()
        types = sensitivity.field_types
        full = shared_from_report(report.core().to_dict(), types, 11, set(), set())
        model = model_of(full)
        numbers = {key: value for key, value in full.numbers() if value is not None}
        more = {key: value for key, value in numbers.items() if rng.random() < 0.8}
        fewer = {key: value for key, value in more.items() if rng.random() < 0.8}
        binding: set[tuple[object, int]] = set()
        RangeSolver(model, more, eager=False, knowledge=model.knowledge(more, 11), binding=binding)
        bound_somewhere += len(binding)
        knowledge = model.knowledge(fewer, 11)
        cached = RangeSolver(model, fewer, eager=False, knowledge=knowledge, binding=binding)
        checked = RangeSolver(model, fewer, eager=False, knowledge=knowledge)
        assert [(c.rows, c.lower, c.upper) for c in cached.components] == [
            (c.rows, c.lower, c.upper) for c in checked.components
        ]
    assert bound_somewhere > 0


@thorough_only("audits a shared report three times, remembered and afresh (5 to 8 s)")
def test_a_remembered_attack_gives_the_rows_an_audit_afresh_gives() -> None:
    # Inside remembering_attacks, a document audited again (the same published numbers, so
    # the same integer programs) reuses the ranges: the same rows, with no solver built; a
    # document that publishes something else is attacked afresh. Outside, nothing is kept.
    _, made = cohort(11, 3, 30)
    gold, predictions = made.records()
    shared = share(gold, predictions, schema=made.schema_document(), min_cell=11)
    text = shared.to_json()
    _, other = cohort(12, 3, 30)
    other_gold, other_predictions = other.records()
    elsewhere = share(
        other_gold, other_predictions, schema=other.schema_document(), min_cell=11
    ).to_json()
    fresh = audit(text)
    built: list[int] = []
    real = attack_module.RangeSolver

    def counted(*args: object, **kwargs: object) -> RangeSolver:
        built.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(attack_module, "RangeSolver", counted)
        with remembering_attacks():
            first = audit(text)
            again = audit(shared)  # the same document as an object: the same problem
            assert len(built) == 1
            assert first.rows == again.rows == fresh.rows
            assert first.passed == again.passed == fresh.passed
            audit(elsewhere)  # other published numbers: attacked afresh
            assert len(built) == 2
        assert audit(text).rows == fresh.rows  # outside the block: solved afresh
        assert len(built) == 3


def test_a_dive_down_the_optimal_face_finds_the_integer_optimum_without_branching() -> None:
    # x0 + x1 <= 1, x1 + x2 <= 1, x0 + x2 <= 1; maximize x0 + x1 + x2 (minimize the
    # negation). The LP vertex is (1/2, 1/2, 1/2) at -3/2, rounded up -1. The dive keeps
    # -x0 - x1 - x2 <= -1, fixes x0 at 0 (nearest integer, first of equals) and the next
    # vertex is integral at -1: optimal, with no repair and no branch and bound.
    rows = [{0: 1, 1: 1}, {1: 1, 2: 1}, {0: 1, 2: 1}]
    problem = program_module.IntegerProgram(3, rows, [None] * 3, [1, 1, 1])
    if not problem._warm_lp():
        pytest.skip("this scipy has no HiGHS binding the warm path can use")
    c = np.array([-1.0, -1.0, -1.0])
    repairs: list[int] = []
    original = program_module.IntegerProgram._repaired

    def spied(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        repairs.append(1)
        return original(self, *args, **kwargs)

    counts = [0, 0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module.IntegerProgram, "_repaired", spied)
        point = problem.solve(c, counts)
    assert problem.check(point) and float(c @ point) == -1.0
    assert int(point[0]) == 0
    assert repairs == [] and counts == [1, 0]
    # A target below the optimum is out of the dive's reach: no point, never a wrong one.
    assert problem._dive(c, -2) is None


@settings(max_examples=examples(200), deadline=None)
@given(integer_programs(), st.sampled_from([1, 2, 8]))
def test_a_wide_dive_s_point_is_an_optimum_of_the_integer_program(
    drawn: tuple[int, list[dict[int, int]], list[int], np.ndarray], share: int
) -> None:
    # The wide problems' dive (a share of the fractional columns fixed at each step, issue
    # 39) returns a point only at the LP bound rounded up: the optimum branch and bound finds.
    width, rows, values, c = drawn
    problem = program_module.IntegerProgram(width, rows, values, values)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "_DIVE_WIDTH", 0)  # every problem is wide here
        patch.setattr(program_module, "_WIDE_DIVE_SHARES", (share,))
        patch.setattr(program_module.IntegerProgram, "_repaired", lambda *args: None)
        fast = problem.solve(c, [0, 0])
    with plain():
        slow = program_module.IntegerProgram(width, rows, values, values).solve(c, [0, 0])
    assert problem.check(fast)
    assert float(c @ fast) == float(c @ slow)


def _no_other_fast_path(patch: pytest.MonkeyPatch) -> None:
    # Only the repair near a known point may settle a fractional vertex (then branch and bound).
    patch.setattr(program_module, "_REPAIR_WIDTH", 0)  # small problems are repaired too
    patch.setattr(program_module.IntegerProgram, "_dive", lambda self, c, target: None)
    patch.setattr(program_module.IntegerProgram, "_repaired", lambda *args: None)
    patch.setattr(program_module.IntegerProgram, "_wide_dive", lambda *args: None)


@settings(max_examples=examples(200), deadline=None)
@given(integer_programs(), st.data())
def test_a_repair_near_a_known_point_returns_an_optimum_of_the_integer_program(
    drawn: tuple[int, list[dict[int, int]], list[int], np.ndarray], data: st.DataObject
) -> None:
    # The known point is an optimum of a nearby objective (as a witness is): the repair
    # frees where it and the LP vertex differ, and returns a point only at the LP bound
    # rounded up, the optimum branch and bound finds on the plain path.
    width, rows, values, c = drawn
    nearby = c.copy()
    for column in data.draw(st.lists(st.integers(0, width - 1), max_size=3, unique=True)):
        nearby[column] += data.draw(st.sampled_from([-2, -1, 1, 2]))
    with plain():
        known = program_module.IntegerProgram(width, rows, values, values).solve(nearby, [0, 0])
        slow = program_module.IntegerProgram(width, rows, values, values).solve(c, [0, 0])
    problem = program_module.IntegerProgram(width, rows, values, values)
    with pytest.MonkeyPatch.context() as patch:
        _no_other_fast_path(patch)
        fast = problem.solve(c, [0, 0], incumbent=known)
    assert problem.check(fast)
    assert float(c @ fast) == float(c @ slow)


def test_the_repair_near_a_known_point_frees_where_the_two_differ() -> None:
    # 2 x0 + x1 + x2 = 3, x3 = 5, x4 = 2; maximize x0 (minimize -x0). The LP vertex puts
    # x0 at 1.5 and x1 = x2 = 0 (bound -1.5, rounded up -1). The known point (0, 3, 0, 5, 2)
    # differs from it in x0 and x1: those two are freed, the rest stay, and x0 = 1, x1 = 1
    # reaches -1, so it is optimal with no branch and bound. Below the optimum (-2) it finds
    # nothing.
    rows = [{0: 2, 1: 1, 2: 1}, {3: 1}, {4: 1}]
    problem = program_module.IntegerProgram(5, rows, [3, 5, 2], [3, 5, 2])
    if not problem._warm_lp():
        pytest.skip("this scipy has no HiGHS binding the warm path can use")
    c = np.array([-1.0, 0.0, 0.0, 0.0, 0.0])
    known = np.array([0, 3, 0, 5, 2], dtype=np.int64)
    counts = [0, 0]
    with pytest.MonkeyPatch.context() as patch:
        _no_other_fast_path(patch)
        freed = _freed_by_each_repair(patch)
        _, bound, vertex = problem._warm_relaxed(c)
        point = problem.solve(c, counts, incumbent=known)
        assert vertex is not None and bound == -1.5
        assert problem._repaired_near(c, vertex, known, -2) is None
    assert freed[0] == [0, 1]
    assert [int(v) for v in point] == [1, 1, 0, 5, 2]
    assert counts == [1, 0]  # one solve, no branch and bound


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(3, 25), st.sampled_from([3, 11]))
def test_protected_is_its_definition_on_the_exact_range(
    seed: int, fields: int, cases: int, min_cell: int
) -> None:
    # RangeSolver.protected settles what it can from witnesses and the range's lower end
    # alone; its verdict must be the definition's on the whole exact range: a small
    # value (1..min_cell-1) is protected when the range reaches 0 or min_cell, any other
    # value when the range holds more than one value.
    rng, shared = half_hidden(seed, fields, cases, min_cell)
    model = model_of(shared)
    published = {k: v for k, v in published_values(shared).items() if v is not None}
    hidden_quantities = [q for key, q in model.quantities.items() if key not in published]
    assume(hidden_quantities)
    exact = RangeSolver(model, published)
    for quantity in rng.sample(hidden_quantities, min(12, len(hidden_quantities))):
        low, high = exact.range_of(quantity.form)
        top = low + 3 * min_cell if high is None else high
        # The true value lies in the range: its ends and a value between them.
        for value in {low, top, rng.randint(low, top)}:
            fresh = RangeSolver(model, published)  # no witness from the range above
            verdict = fresh.protected(quantity.form, value, min_cell)
            if 1 <= value < min_cell:
                assert verdict == (low == 0 or high is None or high >= min_cell), quantity.key
            else:
                assert verdict == (low != high), quantity.key
