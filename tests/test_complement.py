"""The one complementary-choice loop: its order on a stub view, and both real views' result.

The loop (chartscore.disclosure.complement) decides the order of events; a view decides
what is a candidate and how it ranks. A stub view shows the ranking (and the certificate,
and the fallback) decide what is hidden; the report's and the comparison's views, run by
``share`` and ``share_comparison``, leave every sensitive quantity protected, as a fresh
range solver (no seed, no local check, no kept rows) finds.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import score
from chartscore.disclosure import comparison_share, share
from chartscore.disclosure import complement as complement_module
from chartscore.disclosure import suppress as suppress_module
from chartscore.disclosure.complement import complement, seed_point
from chartscore.disclosure.model import Quantity
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.errors import ChartscoreError, ErrorCode
from disclosure_reference import build_cohort
from test_shared_comparison import MIN_CELL, inside, write_cohort

from helpers import examples

Key = tuple[str, str, str]


def _key(name: str) -> Key:
    return ("field", "f", name)


def _quantity(name: str) -> Quantity:
    return Quantity(_key(name), ((0, 1),))


class Stub:
    """A view over named numbers: a quantity is protected once one of its protectors is hidden."""

    def __init__(
        self,
        protectors: dict[str, set[str]],
        order: Sequence[str],
        *,
        trials: int = 0,
        linked: Collection[str] | None = None,
        fallback: Collection[str] = (),
    ) -> None:
        self.protectors = {_key(q): {_key(k) for k in keys} for q, keys in protectors.items()}
        self.order = [_key(k) for k in order]
        self.trials = trials
        self.linked = [_key(k) for k in (order if linked is None else linked)]
        self.spare = [_key(k) for k in fallback]
        self.hidden: set[Key] = set()
        self.hides: list[set[Key]] = []
        self.rounds = 0

    def exposed(self, pending: list[Quantity]) -> list[Quantity]:
        self.rounds += 1
        return [q for q in pending if self.protectors[q.key].isdisjoint(self.hidden)]

    def certified(self, quantity: Quantity, extra: AbstractSet[Key] = frozenset()) -> bool:
        return not self.protectors[quantity.key].isdisjoint(self.hidden | set(extra))

    def candidates(self, quantity: Quantity) -> list[Key]:
        return [k for k in self.linked if k not in self.hidden]

    def fallback(self, quantity: Quantity) -> list[Key]:
        return [k for k in self.spare if k not in self.hidden]

    def rank(self, quantity: Quantity, candidates: Collection[Key]) -> list[Key]:
        return sorted(candidates, key=self.order.index)

    def forces(self, key: Key) -> set[Key]:
        return {key}

    def hide(self, keys: AbstractSet[Key]) -> None:
        self.hides.append(set(keys))
        self.hidden |= keys


def test_the_views_ranking_decides_what_is_hidden() -> None:
    for order, first in ((["a", "b", "c"], "a"), (["c", "b", "a"], "c")):
        view = Stub({"q": {"a", "c"}}, order)
        complement(view, [_quantity("q")])
        assert view.hides == [{_key(first)}]  # the best-ranked protector, nothing else


def test_without_trials_the_best_is_hidden_even_if_it_protects_nothing() -> None:
    view = Stub({"q": {"b"}}, ["a", "b"])
    complement(view, [_quantity("q")])
    assert view.hides == [{_key("a")}, {_key("b")}]  # a, rechecked, then b
    assert view.rounds == 3


def test_trials_hide_the_first_candidate_the_certificate_shows_protects() -> None:
    view = Stub({"q": {"b"}}, ["a", "b", "c"], trials=2)
    complement(view, [_quantity("q")])
    assert view.hides == [{_key("b")}]
    far = Stub({"q": {"c"}}, ["a", "b", "c"], trials=2)  # beyond the trials: the best
    complement(far, [_quantity("q")])
    assert far.hides[0] == {_key("a")}


def test_a_quantity_protected_earlier_in_the_round_costs_nothing() -> None:
    view = Stub({"p": {"a"}, "q": {"a", "b"}}, ["a", "b"])
    complement(view, [_quantity("p"), _quantity("q")])
    assert view.hides == [{_key("a")}]


def test_the_fallback_only_when_a_round_hid_nothing_and_none_left_fails() -> None:
    view = Stub({"q": {"z"}}, ["a", "z"], linked=[], fallback=["z"])
    complement(view, [_quantity("q")])
    assert view.hides == [{_key("z")}]
    stuck = Stub({"q": {"z"}}, ["a", "z"], linked=[], fallback=[])
    with pytest.raises(ChartscoreError) as caught:
        complement(stuck, [_quantity("q")])
    assert caught.value.code is ErrorCode.DISCLOSURE_AUDIT_FAILED


def _exposed(
    model: Any, values: Any, numbers: Any, hidden: Any, sensitive: Any, min_cell: int
) -> list[Key]:
    # A fresh attack on the loop's pattern: every sensitive quantity protected.
    published = {key: values[key] for key in numbers if key not in hidden}
    knowledge = model.knowledge(published, min_cell)
    solver = RangeSolver(model, published, eager=False, knowledge=knowledge)
    return [q.key for q in sensitive if not solver.protected(q.form, values[q.key], min_cell)]


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every loop run checked on its return (how many sensitive quantities each had)."""
    runs: list[int] = []

    def wrapped(view: Any, sensitive: Sequence[Quantity]) -> None:
        complement(view, sensitive)
        state = getattr(view, "state", view)  # the report's view holds the suppression state
        exposed = _exposed(
            state.model, state.values, state.numbers, state.hidden, sensitive, state.min_cell
        )
        assert exposed == []
        runs.append(len(sensitive))

    monkeypatch.setattr(suppress_module, "complement", wrapped)
    monkeypatch.setattr(comparison_share, "complement", wrapped)
    yield runs


TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    types=st.lists(st.sampled_from(TYPES), min_size=1, max_size=3),
    cases=st.integers(2, 24),
    seed=st.integers(0, 10_000),
    min_cell=st.sampled_from([3, 5, 11]),
)
def test_the_reports_view_leaves_every_sensitive_quantity_protected(
    checked: list[int], types: list[str], cases: int, seed: int, min_cell: int
) -> None:
    checked.clear()
    cohort = build_cohort(random.Random(seed).choice, types, cases)
    gold, predictions = cohort.records()
    report = score(gold, predictions, schema=cohort.schema_document())
    sensitivity, _ = cohort.sensitivity()
    share(report, sensitivity, min_cell)
    assert checked  # the loop ran (perhaps with nothing sensitive)


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(cases=st.integers(6, 40), seed=st.integers(0, 10_000))
def test_the_comparisons_view_leaves_every_sensitive_quantity_protected(
    checked: list[int], tmp_path_factory: pytest.TempPathFactory, cases: int, seed: int
) -> None:
    checked.clear()
    where: Path = tmp_path_factory.mktemp("cohort")
    write_cohort(where, cases, seed)
    comparison, counts, field_types = inside(where)
    comparison_share.share_comparison(comparison, counts, field_types, MIN_CELL, exact=False)
    assert checked  # the loop ran


def test_the_stages_are_the_loops() -> None:
    assert suppress_module.CHOOSING == complement_module.CHOOSING
    assert suppress_module.SUPPRESSING == complement_module.SUPPRESSING


@pytest.mark.parametrize("failure", ["unresolved", "inconsistent"])
def test_a_seed_that_cannot_be_solved_is_a_coded_error_with_nothing_chained(failure: str) -> None:
    # The comparison's greedy seeds its solvers from one point; a solve that fails there
    # was once raised as it was. Now it is the audit's code, with no private context.
    raised = Unresolved if failure == "unresolved" else Inconsistent

    class Failing:
        def point(self) -> object:
            raise raised("marker-4711")

    with pytest.raises(ChartscoreError) as caught:
        seed_point(Failing())  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.DISCLOSURE_AUDIT_FAILED
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None
    assert "marker-4711" not in str(caught.value)
