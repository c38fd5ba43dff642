"""A reduced coverage grid (benchmarks/coverage_grid.py): the cells issue 33 was about.

Each cell is simulated with chartscore's own functions, seeded (the same draws every run), and
both rules are measured in it: the one before issue 33 must show the failure it had and the
current one must not, so the test fails if either rule regresses. Slow (about a minute), so it
runs only under ``--hypothesis-profile thorough``, as ``.ci/run`` does; the full grid is the
benchmark's (docs/metrics.md quotes it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from helpers import PROFILE_DEPENDENT, THOROUGH

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

pytestmark = [
    PROFILE_DEPENDENT,
    pytest.mark.skipif(not THOROUGH, reason="thorough profile only (.ci/run runs it)"),
]


def _grid() -> ModuleType:
    # Loaded from its file, never by putting benchmarks/ on sys.path: its dask.py would then
    # stand for the dask package in every later test of the run.
    spec = importlib.util.spec_from_file_location("coverage_grid", BENCHMARKS / "coverage_grid.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rare_error_in_few_charts_no_longer_passes_a_gate_falsely() -> None:
    # 20 charts x 40 fields, a 2% error rate, intraclass correlation 0.3: before, the lower
    # bound lay above the truth in about 15% of runs (a max_upper gate on the error rate passing
    # falsely); now at most a few percent.
    before, now = _grid().rate_cell(2026, 20, "40", 0.98, 0.3, runs=800)
    assert before[0] > 0.10
    assert now[0] <= 0.045 and now[1] <= 0.045


@pytest.mark.parametrize(("charts", "layout"), [(10, "13"), (50, "unbalanced"), (300, "5")])
def test_clustered_intervals_hold_their_level_across_the_grid(charts: int, layout: str) -> None:
    grid = _grid()
    for p in (0.5, 0.9, 0.98):
        _, now = grid.rate_cell(2026, charts, layout, p, 0.1, runs=400)
        assert 1 - sum(now) >= 0.9 and max(now) <= 0.055, (charts, layout, p, now)


def test_the_auroc_interval_covers_where_hanley_mcneil_did_not() -> None:
    before, now = _grid().auroc_cell(2026, 100, 30, 0.9, 400)
    assert 1 - sum(before) < 0.92
    assert 1 - sum(now) >= 0.92


def test_the_weighted_estimate_of_small_strata_and_rare_events() -> None:
    before, now = _grid().weighted_cell(2026, 800, 0.98, 0.3)
    assert 1 - sum(before) < 0.85
    assert 1 - sum(now) >= 0.92


def test_the_bias_interval_at_three_pairs() -> None:
    before, now = _grid().bias_cell(2026, 3, 800)
    assert before < 0.86  # z covers about 0.81 at 3 pairs
    assert now >= 0.93  # t is exact for normal errors: 0.95


def test_a_non_inferiority_gate_at_fifteen_charts() -> None:
    before, now = _grid().paired_cell(2026, 15, 40, 0.1, 800)
    assert now < before  # t over 14 degrees of freedom passes fewer false candidates
