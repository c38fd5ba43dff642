"""The views' solvers skip the knowledge rows a published number implies: the same problem.

``complement.range_solver`` drops a rule row ``form >= bound`` (or ``-form >= bound``)
that a published number of the same form already implies, before the range solver
spends a linear program to drop it. The solver must be the one the full knowledge
builds: the same fixings and every component's rows.
"""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import score
from chartscore.disclosure.comparison_model import ComparisonModel, comparison_values
from chartscore.disclosure.complement import beyond_published
from chartscore.disclosure.forms import add
from chartscore.disclosure.model import Key, Quantity, ReportModel, model_of
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.documents.shared_comparison import build_shared_comparison
from chartscore.documents.shared_report import shared_from_report
from disclosure_reference import build_cohort
from test_shared_comparison import inside, write_cohort

from helpers import examples

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")


def _problem(solver: RangeSolver) -> object:
    return solver.fixed, [(c.columns, c.rows, c.lower, c.upper) for c in solver.components]


def _same_solver(model: ReportModel, published: dict[Key, int], min_cell: int) -> int:
    # The solver of the filtered knowledge is the full knowledge's; how many rows it skipped.
    knowledge = model.knowledge(published, min_cell)
    kept = beyond_published(model, published, knowledge)
    try:
        full = RangeSolver(model, published, eager=False, knowledge=knowledge)
    except (Inconsistent, Unresolved) as error:
        with pytest.raises(type(error)):
            RangeSolver(model, published, eager=False, knowledge=kept)
        return 0
    fewer = RangeSolver(model, published, eager=False, knowledge=kept)
    assert _problem(fewer) == _problem(full)
    assert [q for q in kept if q not in knowledge] == []
    return len(knowledge) - len(kept)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    types=st.lists(st.sampled_from(TYPES), min_size=0, max_size=2),
    cases=st.integers(12, 50),
    seed=st.integers(0, 10_000),
    min_cell=st.sampled_from([3, 5, 11]),
)
def test_a_reports_solver_is_the_same_without_the_implied_rows(
    types: list[str], cases: int, seed: int, min_cell: int
) -> None:
    rng = random.Random(seed)
    made = build_cohort(rng.choice, ["multi", *types], cases)  # items: the rule's rows
    gold, predictions = made.records()
    report = score(gold, predictions, schema=made.schema_document())
    sensitivity, _ = made.sensitivity()
    full = shared_from_report(report.core().to_dict(), sensitivity.field_types, 11, set(), set())
    model = model_of(full)
    numbers = {key: value for key, value in full.numbers() if value is not None}
    published = {key: value for key, value in numbers.items() if rng.random() < 0.7}
    _same_solver(model, published, min_cell)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(cases=st.integers(6, 40), seed=st.integers(0, 10_000), shown=st.floats(0.3, 1.0))
def test_a_comparisons_solver_is_the_same_without_the_implied_rows(
    tmp_path_factory: pytest.TempPathFactory, cases: int, seed: int, shown: float
) -> None:
    # Known numbers (the composition and another product's shown ones) are two rows each;
    # a published one implies both, a hidden one (another product hides it) implies none.
    where: Path = tmp_path_factory.mktemp("cohort")
    write_cohort(where, cases, seed)
    comparison, _, field_types = inside(where)
    model = ComparisonModel(field_types)
    full = build_shared_comparison(comparison, field_types, 11, set())
    values = {k: v for k, v in comparison_values(full, model).items() if v is not None}
    rng = random.Random(seed)
    numbers = [key for key, q in model.quantities.items() if not q.derived]
    model.composition = {key: values[key] for key in numbers if rng.random() < 0.4}
    published = {key: values[key] for key in numbers if rng.random() < shown}
    skipped = _same_solver(model, published, 11)
    implied = [key for key in model.composition if key in published]
    assert skipped >= 2 * len(implied)


def test_an_implied_row_is_skipped_and_a_stricter_one_kept() -> None:
    # x0 + x1 == 5 published: x0 + x1 >= 5, >= 3 and -(x0 + x1) >= -5 are implied; >= 6
    # (contradicting it), -(x0 + x1) >= -4 and a row of another form are not.
    form, negated = ((0, 1), (1, 1)), ((0, -1), (1, -1))
    key = ("field", "f", "n")
    model = SimpleNamespace(quantities={key: Quantity(key, form)})
    rows = [(form, 5), (form, 3), (negated, -5), (form, 6), (negated, -4), (((0, 1),), 1)]
    kept = beyond_published(model, {key: 5}, rows)  # type: ignore[arg-type]
    assert kept == [(form, 6), (negated, -4), (((0, 1),), 1)]
    assert beyond_published(model, {}, rows) == rows  # type: ignore[arg-type]


def test_a_comparisons_known_rows_are_the_same_when_asked_again(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The model remembers each known form's negation: every solver of a suppression asks
    # for the rows again, and must get the rows written out afresh.
    where: Path = tmp_path_factory.mktemp("cohort")
    write_cohort(where, 30, 7)
    comparison, _, field_types = inside(where)
    model = ComparisonModel(field_types)
    full = build_shared_comparison(comparison, field_types, 11, set())
    values = {k: v for k, v in comparison_values(full, model).items() if v is not None}
    numbers = sorted(key for key, q in model.quantities.items() if not q.derived)
    for share in (numbers[::3], numbers[1::2], numbers):
        model.composition = {key: values[key] for key in share}
        expected = [
            row
            for key in sorted(share)
            for row in (
                (model.quantities[key].form, values[key]),
                (add((model.quantities[key].form, -1)), -values[key]),
            )
        ]
        assert model.knowledge({}, 11) == expected
        assert model.knowledge({}, 11) == expected
