"""Distinct cases behind every number (disclosure control), checked against an oracle.

The oracle scores every gold row alone (one gold row and its prediction, through the public
``score``): the row's one-row report says which numbers the row contributes to. The distinct
cases behind a pooled number are then the case ids with at least one contributing row in the
slice's fields that report the number.
"""

from __future__ import annotations

import random
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import GoldField, Prediction, score
from chartscore.documents.tally import COUNT_NAMES
from chartscore.scoring.cases import CaseTrackingScorer, case_counts, kappa_smallest_margins
from chartscore.scoring.partial import merge_all

from helpers import CORE_METRIC_NAMES, SCHEMA, datasets, examples

Quantity = tuple[str, str, str]


def contributions(gold: GoldField, prediction: Prediction | None) -> dict[str, bool]:
    """Which quantities (count names, metric.success_count/total_count/failures) one row feeds.

    Only the figures ``share`` publishes have case counts (``Report.core``).
    """
    report = score([gold], [] if prediction is None else [prediction], schema=SCHEMA).core()
    part = report.by_field[gold.field_id]
    fed: dict[str, bool] = {name: part.count(name) > 0 for name in COUNT_NAMES}
    for name, metric in part.metrics.items():
        if name == "majority_baseline":
            continue  # depends on the whole field, not on one row
        fed[f"{name}.success_count"] = metric.success_count > 0
        fed[f"{name}.total_count"] = metric.total_count > 0
        fed[f"{name}.failures"] = metric.total_count > metric.success_count
    if part.kappa is not None:
        fed["kappa.pairs"] = part.kappa.pairs > 0
    return fed


def oracle(gold: list[GoldField], predictions: list[Prediction]) -> dict[Quantity, int]:
    answers = {(p.case_id, p.field_id): p for p in predictions}
    behind: dict[Quantity, set[str]] = defaultdict(set)
    for row in gold:
        fed = contributions(row, answers.get((row.case_id, row.field_id)))
        for name, yes in fed.items():
            slices = [("field", row.field_id)]
            if name != "kappa.pairs":  # kappa is reported in field slices only
                slices.append(("field_type", row.field_type.value))
            if "." not in name or name.split(".")[0] in CORE:
                slices.append(("overall", ""))
            for kind, slice_name in slices:
                behind[kind, slice_name, name]  # the quantity exists even with no case
                if yes:
                    behind[kind, slice_name, name].add(row.case_id)
    return {key: len(value) for key, value in behind.items()}


CORE = set(CORE_METRIC_NAMES)


def tracked(gold: list[GoldField], predictions: list[Prediction], parts: int, seed: int):
    rng = random.Random(seed)
    where = {(g.case_id, g.field_id): rng.randrange(parts) for g in gold}
    scorers = [CaseTrackingScorer(SCHEMA) for _ in range(parts)]
    for row in gold:
        scorers[where[row.case_id, row.field_id]].add_gold(
            row.case_id, row.field_id, row.field_type, row.value
        )
    for answer in predictions:
        scorers[where[answer.case_id, answer.field_id]].add_prediction(
            answer.case_id, answer.field_id, answer.value, answer.is_supported
        )
    return merge_all(scorer.partial() for scorer in scorers)


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(1, 4), st.integers(0, 2**32))
def test_case_counts_equal_the_oracle(dataset, parts: int, seed: int) -> None:
    gold, predictions = dataset
    partial = tracked(gold, predictions, parts, seed)
    counts = case_counts(partial, partial.tally())
    expected = oracle(gold, predictions)
    for key, value in expected.items():
        assert counts[key] == value, key
    # Majority baseline: exact per field; a lower bound (never above the truth) when pooled.
    report = score(gold, predictions, schema=SCHEMA)
    for field_id, part in report.by_field.items():
        if "majority_baseline" in part.metrics:
            metric = part.metric("majority_baseline")
            assert counts["field", field_id, "majority_baseline.success_count"] == (
                metric.success_count
            )
            assert counts["field", field_id, "majority_baseline.failures"] == (
                metric.total_count - metric.success_count
            )
    for name, part in report.by_field_type.items():
        if "majority_baseline" in part.metrics:
            metric = part.metric("majority_baseline")
            assert counts["field_type", name, "majority_baseline.success_count"] <= (
                metric.success_count
            )


def test_one_patient_behind_many_rows_counts_once() -> None:
    fields = [f"t.f{i}" for i in range(12)]
    gold = [GoldField("patient-1", f, "text", None) for f in fields]
    gold += [GoldField(f"p{i}", f, "text", "x") for i in range(20) for f in fields[:1]]
    predictions = [Prediction("patient-1", f, "an answer") for f in fields]
    scorer = CaseTrackingScorer()
    for row in gold:
        scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
    for p in predictions:
        scorer.add_prediction(p.case_id, p.field_id, p.value, False)
    partial = scorer.partial()
    tally = partial.tally()
    assert tally.overall.metrics["unanswerable_answer"].success_count == 12  # rows
    counts = case_counts(partial, tally)
    assert counts["overall", "", "unanswerable_answer.success_count"] == 1  # one patient
    assert counts["overall", "", "missing_count"] == 20
    assert counts["field", "t.f3", "unanswerable_answer.success_count"] == 1


def test_ignored_predictions_count_distinct_cases() -> None:
    scorer = CaseTrackingScorer(extra_predictions="ignore")
    scorer.add_gold("c1", "t.a", GoldField("c1", "t.a", "text", "x").field_type, "x")
    for case_id, field_id in [("c9", "t.a"), ("c9", "t.b"), ("c8", "t.a")]:
        assert scorer.add_prediction(case_id, field_id, "y", False) == -1
    partial = scorer.partial()
    tally = partial.tally()
    assert tally.ignored_prediction_count == 3
    assert case_counts(partial, tally)["overall", "", "ignored_prediction_count"] == 2


def test_kappa_smallest_margin() -> None:
    scorer = CaseTrackingScorer()
    kind = GoldField("c", "c.x", "categorical", "a").field_type
    for i, (g, a) in enumerate([("a", "a"), ("a", "a"), ("a", "b"), ("b", "b")]):
        scorer.add_gold(f"c{i}", "c.x", kind, g)
        scorer.add_prediction(f"c{i}", "c.x", a, False)
    # gold margins a: 3, b: 1; answer margins a: 2, b: 2
    assert kappa_smallest_margins(scorer.partial()) == {"c.x": 1}
    assert "c0" not in repr(scorer.partial().cases)
