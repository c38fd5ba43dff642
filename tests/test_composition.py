"""The cohort's composition is public (docs/disclosure.md, "The cohort's composition is public").

Every chart has every field, so an outsider knows each field's ``field_count`` from any other
field's. ``share`` must protect its cells against that outsider: it never hides a field's
``field_count``, and the outside audit, which then sees them all, must pass.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore import GoldField, Prediction, share
from chartscore.disclosure import audit

from helpers import examples

DIGEST = "sha256:" + "cd" * 32
SCHEMA = {
    "fields": {
        "dx.flag": {"type": "boolean"},
        "hx.smoking": {"type": "categorical", "choices": ["current", "former", "never"]},
        "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
    }
}
_VALUES: dict[str, list[Any]] = {
    "dx.flag": [True, False],
    "hx.smoking": ["current", "former", "never"],
    "triage.acuity": ["1", "2", "3", "4", "5"],
}


def _cohort(
    cases: int, unanswerable: int, wrong: int, seed: int
) -> tuple[list[GoldField], list[Prediction]]:
    # Every case has every field; dx.flag has ``unanswerable`` gold rows without an answer
    # and the other fields ``wrong`` wrong answers; the rest agree.
    rng = random.Random(seed)
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for i in range(cases):
        case = f"c{i:03d}"
        for field_id, values in _VALUES.items():
            field_type = SCHEMA["fields"][field_id]["type"]
            value = rng.choice(values)
            if field_id == "dx.flag" and i < unanswerable:
                gold.append(GoldField(case, field_id, field_type, None))
                predictions.append(Prediction(case, field_id, value, DIGEST))
                continue
            gold.append(GoldField(case, field_id, field_type, value))
            answer = value
            if field_id != "dx.flag" and i >= cases - wrong:
                answer = next(v for v in values if v != value)
            predictions.append(Prediction(case, field_id, answer, DIGEST))
    return gold, predictions


@settings(max_examples=examples(6, least=1), deadline=None)
@given(
    st.integers(min_value=40, max_value=70),
    st.integers(min_value=1, max_value=14),
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=0, max_value=10**6),
)
def test_every_field_count_is_shown_and_the_report_passes_with_them(
    cases: int, unanswerable: int, wrong: int, seed: int
) -> None:
    gold, predictions = _cohort(cases, unanswerable, wrong, seed)
    shared = share(gold, predictions, schema=SCHEMA)
    document = json.loads(shared.to_json())
    # The composition is shown: every field's, every type's and the overall field_count.
    assert {part["field_count"] for part in document["by_field"].values()} == {cases}
    assert document["overall"]["field_count"] == 3 * cases
    assert all(part["field_count"] is not None for part in document["by_field_type"].values())
    # And the outside audit, which now knows the composition as the outsider does, passes:
    # no cell (dx.flag's unanswerable rows, the wrong answers) is pinned into 1..10.
    assert audit(shared.to_json()).passed


def test_one_fields_count_no_longer_gives_anothers_hidden_cells() -> None:
    # 60 cases, 8 unanswerable dx.flag rows (sensitive). Whatever is hidden, the outsider's
    # field_count (60) minus what is shown must not pin the 8.
    gold, predictions = _cohort(60, 8, 3, seed=7)
    document = json.loads(share(gold, predictions, schema=SCHEMA).to_json())
    flag = document["by_field"]["dx.flag"]
    assert flag["field_count"] == 60
    assert flag["unanswerable_count"] is None and flag["answerable_count"] is None
    low, high = flag["unanswerable_count_range"]
    assert low == 0 or high is None or high >= 11
