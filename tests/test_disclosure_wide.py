"""The wide paths of issue 39 change no answer: stratified cohorts share the same bytes.

With strata, one component holds every field's cells at every site, so its integer programs
are wide: their dive fixes a share of the fractional columns at each step
(``integer_program._wide_dive``). That only changes how an exact optimum is found, never
which: here every problem is made to take it and every component the sandwich (on small
random stratified cohorts), and the shared bytes must be those of the plain path
(``FAST_PATHS`` off, every optimum by branch and bound afresh), pass the exact audit, and
repeat byte for byte.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.integer_program as program_module
import chartscore.disclosure.ranges as ranges_module
from chartscore import score
from chartscore.disclosure import audit, share
from disclosure_reference import Cohort, build_cohort
from test_disclosure_strata import case_strata, stratified

from helpers import examples, thorough_only

pytest.importorskip("scipy")


@contextlib.contextmanager
def wide(hits: list[bool] | None = None) -> Iterator[None]:
    """Every integer program takes the wide dive, every component the sandwich."""
    original = program_module.IntegerProgram._wide_dive

    def spied(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        point = original(self, *args, **kwargs)
        if hits is not None:
            hits.append(point is not None)
        return point

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "_DIVE_WIDTH", 0)
        patch.setattr(program_module.IntegerProgram, "_wide_dive", spied)
        patch.setattr(ranges_module, "_SANDWICH_WIDTH", 0)
        yield


@contextlib.contextmanager
def plain() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(program_module, "FAST_PATHS", False)
        yield


def shared_bytes(cohort: Cohort, min_cell: int) -> str:
    gold, predictions = cohort.records()
    report = score(
        gold, predictions, schema=cohort.schema_document(), strata=case_strata(cohort)
    ).core()
    sensitivity, _ = cohort.sensitivity()
    return share(report, sensitivity, min_cell).to_json()


@settings(
    max_examples=examples(12, least=1),  # each example shares twice: the default runs one
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stratified(max_cases=10), st.sampled_from([2, 3]))
def test_the_wide_paths_share_a_stratified_cohort_to_the_plain_path_s_bytes(
    cohort: Cohort, min_cell: int
) -> None:
    with wide():
        fast = shared_bytes(cohort, min_cell)
        again = shared_bytes(cohort, min_cell)
    with plain():
        slow = shared_bytes(cohort, min_cell)
    assert fast == again == slow
    result = audit(fast)
    assert result.passed, result.table()


@thorough_only("a stratified share of 40 charts, wide and plain, takes 12 to 20 s")
def test_the_wide_dive_settles_optima_of_a_stratified_share() -> None:
    # Not vacuous: on a fixed stratified cohort the wide dive finds optima (else every one
    # would go to branch and bound, and the property above would test nothing of it).
    rng = random.Random(39)
    cohort = build_cohort(rng.choice, ["boolean", "number", "multi", "text"], 40)
    cohort.declared = {"site": ["A", "B", "C"]}
    case_ids = sorted({case for case, *_ in cohort.gold})
    cohort.strata = {case: {"site": rng.choice(["A", "B", "C"])} for case in case_ids}
    hits: list[bool] = []
    with wide(hits):
        fast = shared_bytes(cohort, 11)
    with plain():
        slow = shared_bytes(cohort, 11)
    assert fast == slow
    assert any(hits)
    assert audit(fast).passed


@thorough_only("stratified shares with one area problem and with 32 (about 6 s)")
@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stratified(max_cases=10), st.sampled_from([2, 3]))
def test_a_range_solver_keeping_one_area_problem_shares_the_same_bytes(
    cohort: Cohort, min_cell: int
) -> None:
    # The range solver keeps its most recently used sandwich area problems only
    # (ranges._AREA_PROBLEMS): one dropped is built again, cold. Kept one at a time, every
    # other question rebuilds; kept without bound, none does: the same bytes either way.
    with wide(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranges_module, "_AREA_PROBLEMS", 1)
        one = shared_bytes(cohort, min_cell)
        patch.setattr(ranges_module, "_AREA_PROBLEMS", 10**9)
        every = shared_bytes(cohort, min_cell)
    assert one == every
    assert audit(one).passed


@thorough_only("two stratified shares of 40 charts through the wide paths take about 15 s")
def test_area_problems_are_dropped_and_built_again() -> None:
    # Not vacuous: on a fixed stratified cohort the bound of one drops area problems that
    # are asked again (each such key built more than once).
    rng = random.Random(39)
    cohort = build_cohort(rng.choice, ["boolean", "number", "multi", "text"], 40)
    cohort.declared = {"site": ["A", "B", "C"]}
    case_ids = sorted({case for case, *_ in cohort.gold})
    cohort.strata = {case: {"site": rng.choice(["A", "B", "C"])} for case in case_ids}
    misses: dict[tuple[int, object], int] = {}
    solvers: list[object] = []  # kept alive: their ids stay theirs
    original = ranges_module.RangeSolver._area_problem

    def counted(self, index, area, kind, base=0):  # type: ignore[no-untyped-def]
        key = (index, area, kind, base)
        if key not in self._areas:
            solvers.append(self)
            misses[id(self), key] = misses.get((id(self), key), 0) + 1
        return original(self, index, area, kind, base)

    with wide(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranges_module, "_AREA_PROBLEMS", 1)
        patch.setattr(ranges_module.RangeSolver, "_area_problem", counted)
        one = shared_bytes(cohort, 11)
    with plain():
        slow = shared_bytes(cohort, 11)
    assert one == slow
    assert any(count > 1 for count in misses.values())
