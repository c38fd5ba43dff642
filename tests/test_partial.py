"""The mergeable core: partial tallies merge associatively and commutatively, and merging the
partials of any partitioning gives exactly the report of scoring everything at once."""

from __future__ import annotations

import pickle
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, FieldType, GoldField, Prediction, score
from chartscore.documents.report import Report
from chartscore.scoring.partial import PartialTally, merge_all
from chartscore.scoring.scorer import Scorer

from helpers import SCHEMA, datasets, examples


def partials(
    gold: Sequence[GoldField], predictions: Sequence[Prediction], parts: int, seed: int
) -> list[PartialTally]:
    """Score a random partition by case (every row of a case, and its predictions, together).

    By case, as the Dask engine partitions: the per-case sums of the pooled slices'
    clustered intervals add only over disjoint sets of cases.
    """
    rng = random.Random(seed)
    cases = sorted({g.case_id for g in gold})
    where = {case: rng.randrange(parts) for case in cases}
    scorers = [Scorer(SCHEMA) for _ in range(parts)]
    for row in gold:
        scorers[where[row.case_id]].add_gold(row.case_id, row.field_id, row.field_type, row.value)
    for answer in predictions:
        scorers[where[answer.case_id]].add_prediction(
            answer.case_id, answer.field_id, answer.value, answer.is_supported
        )
    return [scorer.partial() for scorer in scorers]


def report_json(partial: PartialTally) -> str:
    return Report.from_tally(partial.tally()).to_json()


@settings(max_examples=examples(60), deadline=None)
@given(datasets(), st.integers(1, 6), st.integers(0, 2**32))
def test_merged_partitions_equal_one_run(
    dataset: tuple[list[GoldField], list[Prediction]], parts: int, seed: int
) -> None:
    gold, predictions = dataset
    whole = score(gold, predictions, schema=SCHEMA).to_json()
    pieces = partials(gold, predictions, parts, seed)
    random.Random(seed).shuffle(pieces)
    assert report_json(merge_all(pieces)) == whole


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(0, 2**32))
def test_merge_is_associative_and_commutative(
    dataset: tuple[list[GoldField], list[Prediction]], seed: int
) -> None:
    gold, predictions = dataset
    a, b, c = partials(gold, predictions, 3, seed)
    left = a.merge(b).merge(c)
    right = a.merge(b.merge(c))
    swapped = c.merge(a).merge(b)
    assert report_json(left) == report_json(right) == report_json(swapped)
    for one in (a, b, c):
        if one.fields:
            before = report_json(one)
            one.merge(a)  # merging never changes its inputs
            assert report_json(one) == before


def test_partials_pickle_for_workers_and_hide_their_contents() -> None:
    gold = [GoldField("MRN-0042", "c.smoking", "categorical", "former")]
    scorer = Scorer(SCHEMA)
    scorer.add_gold("MRN-0042", "c.smoking", FieldType.CATEGORICAL, "former")
    scorer.add_prediction("MRN-0042", "c.smoking", "Former", False)
    partial = scorer.partial()
    assert "MRN" not in repr(partial) and "former" not in repr(partial).lower()
    copied = pickle.loads(pickle.dumps(partial))
    assert (
        report_json(copied)
        == score(gold, [Prediction("MRN-0042", "c.smoking", "Former")], schema=SCHEMA).to_json()
    )


def test_merge_refuses_one_field_with_two_types() -> None:
    first, second = Scorer(), Scorer()
    first.add_gold("c1", "x.field", FieldType.TEXT, "a")
    second.add_gold("c2", "x.field", FieldType.NUMBER, 1)
    with pytest.raises(ChartscoreError) as caught:
        first.partial().merge(second.partial())
    assert caught.value.code is ErrorCode.INCONSISTENT_FIELD_TYPE
    assert caught.value.__context__ is None


def test_an_empty_merge_is_empty_gold() -> None:
    with pytest.raises(ChartscoreError) as caught:
        merge_all([Scorer().partial(), Scorer().partial()]).tally()
    assert caught.value.code is ErrorCode.EMPTY_GOLD


def test_fields_of_one_type_and_schema_entry_share_one_rule() -> None:
    # Regression (hardening issue): 10^5 field ids each built their own rule and caches,
    # about 1.7 KB a row; now fields that share a type and schema entry share a rule.
    scorer = Scorer()
    for index in range(2000):
        scorer.add_gold(f"c{index % 7}", f"f.x{index}", FieldType.TEXT, "abc")
        scorer.add_gold(f"c{index % 7}", f"g.x{index}", FieldType.NUMBER, 1)
    rules = {id(scorer.field_rule(f"f.x{index}")) for index in range(2000)}
    rules |= {id(scorer.field_rule(f"g.x{index}")) for index in range(2000)}
    assert len(rules) == 2
    assert len(scorer._rules._rules) == 2
