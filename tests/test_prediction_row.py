"""The one prediction row every scorer takes: immutable, value-free in its repr, and the
same counts whichever route builds it (the compatibility method, a record, a file line)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import GoldField, Prediction, score
from chartscore.records.prediction_row import PredictionRow, new_row
from chartscore.records.rows import prediction_row
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import Scorer, row_of

from helpers import examples

_CANARY = st.text(alphabet="QZXJKW", min_size=12, max_size=24).map(lambda s: "QZ" + s)


@settings(max_examples=examples(50), deadline=None)
@given(case_id=_CANARY, value=_CANARY, uncertainty=_CANARY)
def test_repr_shows_no_value_or_case_id(case_id: str, value: str, uncertainty: str) -> None:
    for row in (
        PredictionRow(case_id, "hx.smoking", value, True, uncertainty),
        new_row(PredictionRow, (case_id, "hx.smoking", value, False, uncertainty)),
    ):
        for shown in (repr(row), str(row), f"{row}", repr([row]), repr({"k": row})):
            assert case_id not in shown and value not in shown and uncertainty not in shown
            assert "QZ" not in shown


def test_row_is_immutable_and_slotted() -> None:
    row = PredictionRow("c1", "hx.smoking", "former", True, 0)
    with pytest.raises(AttributeError):
        row.value = "never"  # type: ignore[misc]
    assert not hasattr(row, "__dict__")
    assert pickle.loads(pickle.dumps(row)) == row
    assert type(pickle.loads(pickle.dumps(row))) is PredictionRow
    assert new_row(PredictionRow, tuple(row)) == row


def test_every_route_builds_the_same_row() -> None:
    chain = {
        "field_id": "hx.smoking",
        "source_locations": [
            {"source_digest": "sha256:" + "a" * 64, "start_offset": 0, "end_offset": 4}
        ],
        "normalized_fact_digest": "sha256:" + "b" * 64,
        "transformation_kind": "model",
        "transformation_digest": "sha256:" + "c" * 64,
        "uncertainty": 0,
        "reviewer_state": "approved",
    }
    raw = {
        "case_id": "c1",
        "field_id": "hx.smoking",
        "value": "Former",
        "normalized_fact_digest": "sha256:" + "b" * 64,
        "evidence_chain": chain,
    }
    expected = PredictionRow("c1", "hx.smoking", "Former", True, 0)
    assert prediction_row(raw) == expected
    assert row_of(Prediction.from_dict(raw)) == expected
    assert row_of(Prediction("c1", "hx.smoking", None)) == PredictionRow("c1", "hx.smoking", None)


def test_add_prediction_is_add_row() -> None:
    masks = []
    for add in ("add_prediction", "add_row"):
        scorer = Scorer()
        scorer.add_gold(
            "c1", "hx.smoking", GoldField("c1", "hx.smoking", "text", "a").field_type, "a"
        )
        scorer.close_gold()
        if add == "add_row":
            masks.append(scorer.add_row(PredictionRow("c1", "hx.smoking", "a", True)))
        else:
            masks.append(scorer.add_prediction("c1", "hx.smoking", "a", True))
        masks.append(scorer.tally())
    assert masks[0] == masks[2] and masks[1] == masks[3]


def test_paired_scorer_is_not_a_scorer() -> None:
    # Composition: it holds a Scorer for gold and has no single prediction stream to refuse.
    scorer = PairedScorer()
    assert not isinstance(scorer, Scorer)
    assert not hasattr(scorer, "add_prediction") and not hasattr(scorer, "add_row")
    assert "values hidden" in repr(scorer)


def test_score_counts_rows_of_records() -> None:
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", "former") for i in range(3)]
    answers = [Prediction(f"c{i}", "hx.smoking", " Former ") for i in range(2)]
    report = score(gold, answers)
    assert report.overall.metric("normalized_agreement").success_count == 2
