"""The attacker knows the rule (issue 22, item 1): a shown nonzero number has >= min_cell cases.

The two cohorts of ``rule_data.py`` leaked under the audit that did not know it: their old
shared reports passed that audit, while an outsider who knows the rule pins a suppressed cell.
Here the old model (``knows_rule=False``) is shown to pass them, the rule-aware audit to catch
them with the issue's arithmetic, and the new ``share`` to publish neither leak. A property
test shares random small cohorts with a multi-select field and checks the rule-aware attack
finds nothing, and that every row the rule adds holds on the true counts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.attack as attack_module
import chartscore.disclosure.ranges as ranges_module
import chartscore.disclosure.suppress as suppress_module
from chartscore.disclosure import SharedReport, audit, share
from chartscore.disclosure.model import FieldShape, ReportModel, SliceShape, model_of, shape_of
from chartscore.disclosure.rule import AGREEMENT_METRICS
from disclosure_reference import Cohort, build_cohort
from rule_data import MULTI_AND_BOOLEAN, ONE_MULTI, cohort_of
from test_disclosure import assert_shared_properties, scored

from helpers import examples


@pytest.fixture
def rule_unaware(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """share and audit with the attacker of before: the rule is not in the model."""
    old = functools.partial(model_of, knows_rule=False)
    monkeypatch.setattr(attack_module, "model_of", old)
    monkeypatch.setattr(suppress_module, "model_of", old)
    yield


def _old_tier(key: tuple[str, str, str]) -> int:
    # The cost tiers before rates were priced: field types, a field's other numbers, its
    # agreement numbers (and field_count, answerable_count, kappa pairs), the overall slice.
    kind, _, quantity = key
    if kind == "field_type":
        return 0
    if kind == "overall":
        return 3
    people = quantity in ("field_count", "answerable_count", "kappa.pairs")
    return 2 if quantity.split(".", 1)[0] in AGREEMENT_METRICS or people else 1


def old_share(cohort: Cohort, monkeypatch: pytest.MonkeyPatch) -> tuple[SharedReport, Any]:
    """The report share published before, its old audit; the true values.

    Before per-label metrics were shared: the report without its labels.
    """
    report, sensitivity, tally = scored(cohort)
    report = report.without_labels()
    counts = {k: n for k, n in sensitivity.case_counts.items() if not k[2].startswith("labels.")}
    sensitivity = attrs.evolve(sensitivity, case_counts=counts)
    with monkeypatch.context() as patch:
        old = functools.partial(model_of, knows_rule=False)
        patch.setattr(attack_module, "model_of", old)
        patch.setattr(suppress_module, "model_of", old)
        # The greedy choice alone, priced by the tier order it had then: it chose these
        # patterns (the rate-priced and exact choices of docs/disclosure.md came later).
        patch.setattr(suppress_module, "_exact", lambda state, primary, sensitive: None)
        patch.setattr(suppress_module, "key_price", _old_tier)
        patch.setattr(suppress_module, "cell_price", lambda key: 3 ** _old_tier(key))
        patch.setattr(suppress_module, "rate_price", lambda rate: 0)
        patch.setattr(
            suppress_module, "pattern_price", lambda hidden: sum(3 ** _old_tier(k) for k in hidden)
        )
        patch.setattr(  # the same order as the pattern price: what a candidate adds to it
            suppress_module,
            "marginal_price",
            lambda keys, hidden, destroyed: sum(3 ** _old_tier(k) for k in keys if k not in hidden),
        )
        shared = share(report, sensitivity)
        assert audit(shared.to_json()).passed
    return shared, tally


def numbers(shared: SharedReport, kind: str, name: str) -> dict[str, Any]:
    document = json.loads(shared.to_json())
    part = document["overall"] if kind == "overall" else document[kind][name]
    flat: dict[str, Any] = {}
    for key, value in part.items():
        if isinstance(value, dict):
            for inner in ("success_count", "total_count", "pairs"):
                if inner in value:
                    flat[f"{key}.{inner}"] = value[inner]
        else:
            flat[key] = value
    return flat


def disclosed(shared: SharedReport) -> dict[tuple[str, str, str], tuple[int | None, int | None]]:
    # The cells pinned; a rule-blind report's published ranges also fail the rule-aware audit
    # (as wider than it proves), and those rows are not pins.
    result = audit(shared.to_json())
    stale = {"range_narrow", "range_wide", "bound_narrow", "bound_wide"}
    return {
        (r.slice_kind, r.slice_name, r.name): (r.lo, r.hi)
        for r in result.failures
        if r.status not in stale
    }


def test_one_multi_select_field_leaked_to_an_attacker_who_knows_the_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared, tally = old_share(cohort_of(ONE_MULTI), monkeypatch)
    field = numbers(shared, "by_field", "hx.symptoms")
    # What the old report published, and the arithmetic on it.
    assert field["field_count"] == 28
    assert field["answered_count"] == 17
    assert field["abstention_correctness.success_count"] == 13
    assert field["item_recall.total_count"] == 24
    assert field["unanswerable_answer.success_count"] is None
    # U∧N = answered - (abstention successes - U∧B) = 4 + U∧B >= 4; 24 gold items need at
    # least 11 answerable cases, so U <= 17, and U∧N + U∧B <= U gives U∧B <= 6, U∧N <= 10.
    low = field["answered_count"] - field["abstention_correctness.success_count"]
    high = low + (field["field_count"] - 11 - low) // 2
    assert (low, high) == (4, 10)
    truth = tally.values["field", "hx.symptoms", "unanswerable_answer.success_count"]
    assert low <= truth <= high
    leaks = disclosed(shared)
    quantity = "unanswerable_answer.success_count"
    for key in (("field", "hx.symptoms"), ("field_type", "multi"), ("overall", "")):
        assert leaks[(*key, quantity)] == (4, 10)
    assert set(leaks) == {
        ("field", "hx.symptoms", quantity),
        ("field_type", "multi", quantity),
        ("overall", "", quantity),
    }


def test_multi_and_boolean_fields_leaked_through_the_overall_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared, tally = old_share(cohort_of(MULTI_AND_BOOLEAN), monkeypatch)
    overall = numbers(shared, "overall", "")
    multi = numbers(shared, "by_field", "hx.symptoms")
    boolean = numbers(shared, "by_field", "dx.diabetes")
    assert overall["unanswerable_count"] == 14
    assert multi["item_recall.total_count"] == 17
    assert boolean["kappa.pairs"] == 13
    assert multi["unanswerable_count"] is None and boolean["unanswerable_count"] is None
    # 17 gold items need >= 11 answerable cases of 23, so the multi field has <= 12
    # unanswerable and the boolean field >= 14 - 12 = 2; 13 pairs are answerable rows, so
    # the boolean field has <= 23 - 13 = 10.
    truth = tally.values["field", "dx.diabetes", "unanswerable_count"]
    assert 2 <= truth <= 10
    leaks = disclosed(shared)
    assert leaks["field", "dx.diabetes", "unanswerable_count"] == (2, 10)
    assert leaks["field_type", "boolean", "unanswerable_count"] == (2, 10)


@pytest.mark.parametrize("fields", [ONE_MULTI, MULTI_AND_BOOLEAN], ids=["multi", "multi+boolean"])
def test_share_now_publishes_nothing_an_attacker_who_knows_the_rule_can_pin(
    fields: dict[str, Any],
) -> None:
    report, sensitivity, tally = scored(cohort_of(fields))
    shared = assert_shared_properties(report, sensitivity, tally, 11)
    assert disclosed(shared) == {}


@pytest.mark.usefixtures("rule_unaware")
def test_the_attacker_of_before_does_not_see_the_leak() -> None:
    # The same shared report passes the audit that does not know the rule: the flag is
    # what the first two tests compare against.
    report, sensitivity, _ = scored(cohort_of(ONE_MULTI))
    shared = share(report, sensitivity)
    assert audit(shared.to_json()).passed
    assert model_of(shared).knowledge({}, 11) == []


def test_knowledge_rows_follow_the_rule() -> None:
    report, sensitivity, _ = scored(cohort_of(ONE_MULTI))
    shared = share(report, sensitivity)
    model = model_of(shared)
    layout = model.layouts["hx.symptoms"]
    recall = ("field", "hx.symptoms", "item_recall.total_count")
    answerable = layout.where(lambda c: c.answerable)
    # A shown gold item count of at least min_cell: at least min_cell answerable rows.
    assert model.knowledge({recall: 24}, 11) == [(answerable, 11)]
    # A small (rule-breaking) or zero count adds nothing; nor does the old attacker.
    assert model.knowledge({recall: 5}, 11) == []
    assert model.knowledge({recall: 0}, 11) == []
    old = ReportModel(*shape_of(shared), knows_rule=False)
    assert old.knowledge({recall: 24}, 11) == []
    # Failures follow from both parts: 24 - 12 unmatched gold items need 12 answerable rows
    # without exact or normalized agreement; 24 - 14 = 10 breaks the rule and adds nothing.
    success = ("field", "hx.symptoms", "item_recall.success_count")
    unmatched = layout.where(lambda c: c.answerable and c.agreement not in ("exact", "normalized"))
    matched = layout.where(lambda c: c.answerable and c.agreement != "")
    assert set(model.knowledge({recall: 24, success: 12}, 11)) == {
        (matched, 11),
        (answerable, 11),
        (unmatched, 11),
    }
    assert (unmatched, 11) not in model.knowledge({recall: 24, success: 14}, 11)


def test_a_pooled_item_count_bounds_its_fields_rows_together() -> None:
    names = ["item_precision", "item_recall"]
    shape = FieldShape.of("multi", names, kappa=False)
    fields = {"a.items": shape, "b.items": shape}
    model = ReportModel(
        fields, {("field_type", "multi"): (sorted(fields), SliceShape(tuple(names)))}
    )
    key = ("field_type", "multi", "item_recall.total_count")
    rows = model.knowledge({key: 12}, 11)
    a, b = model.layouts["a.items"], model.layouts["b.items"]
    a_rows, b_rows = a.item_rows("gold_rows"), b.item_rows("gold_rows")
    assert ((((a_rows, 1), (b_rows, 1)), 11)) in rows
    for layout, variable in ((a, a_rows), (b, b_rows)):
        carrier = layout.where(lambda c: c.answerable)
        assert (tuple(sorted((*carrier, (variable, -1)))), 0) in rows
        assert (((layout.item_variable("gold_items"), 1), (variable, -1)), 0) in rows
    assert len(rows) == 5


@st.composite
def multi_cohorts(draw: st.DrawFn) -> Cohort:
    others = draw(
        st.lists(st.sampled_from(["boolean", "categorical", "text", "multi"]), max_size=1)
    )
    cases = draw(st.integers(12, 30))

    def choose(options: Any) -> Any:
        return draw(st.sampled_from(list(options)))

    return build_cohort(choose, ["multi", *others], cases)


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(multi_cohorts(), st.sampled_from([5, 11]))
def test_an_attacker_who_knows_the_rule_finds_nothing(cohort: Cohort, min_cell: int) -> None:
    report, sensitivity, tally = scored(cohort)
    shared = assert_shared_properties(report, sensitivity, tally, min_cell)
    assert disclosed(shared) == {}
    # Every row the rule adds holds on the truth: each item quantity's true cases (the
    # reference's, from the raw rows) reach min_cell wherever the quantity is shown.
    model = model_of(shared)
    shown = {k: v for k, v in shared.numbers() if v is not None}
    for key in model.cases:
        value = shown.get(key)
        if value is not None and value >= min_cell:
            assert sensitivity.case_counts[key] >= min_cell, key


@pytest.mark.parametrize("fields", [ONE_MULTI, MULTI_AND_BOOLEAN], ids=["multi", "multi+boolean"])
def test_leaving_out_rows_the_relaxation_satisfies_changes_no_range(
    fields: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared, _ = old_share(cohort_of(fields), monkeypatch)
    kept = audit(shared.to_json())
    calls: list[int] = []

    def every_row(
        self: Any, rows: Any, inequalities: Any, rule: list[Any], known: list[bool]
    ) -> list[int]:
        calls.append(len(rule))
        return list(range(len(rule)))  # the positions of the rows kept: all of them

    monkeypatch.setattr(ranges_module.RangeSolver, "_binding", every_row)
    everything = audit(shared.to_json())
    assert calls and calls[0] > 0
    assert everything.rows == kept.rows
    assert not kept.passed
