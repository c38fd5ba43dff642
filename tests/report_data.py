"""Real reports for the loader and renderer tests: hypothesis data through chartscore.score.

The data covers every field type with a schema (tolerances, ordinal levels,
choices), so reports carry type-specific metrics and kappa, and every outcome
(agreement, disagreement, wrong types, abstentions, missing answers).
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st

from chartscore import GoldField, Prediction, Report, score

SCHEMA: dict[str, object] = {
    "fields": {
        "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
        "echo.lvef": {"type": "number", "tolerance": "5"},
        "dx.onset": {"type": "date", "tolerance_days": 3},
        "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
        "hx.symptoms": {"type": "multi", "choices": ["cough", "fever", "syncope"]},
    }
}
FIELD_TYPES = {
    "hx.smoking": "categorical",
    "echo.lvef": "number",
    "dx.onset": "date",
    "triage.acuity": "ordinal",
    "hx.symptoms": "multi",
    "dx.diabetes": "boolean",
    "registry.label": "text",
    "a": "text",
    "z9_x.y_1": "number",
}
_VALUES = {
    "categorical": st.sampled_from(["never", "former", "current"]),
    "number": st.sampled_from([35, 40, 55, Decimal("37.5"), 60]),
    "date": st.sampled_from(["2023-04-05", "2023-04-07", "2023-04", "2024"]),
    "ordinal": st.sampled_from(["1", "2", "3", "4", "5"]),
    "multi": st.lists(st.sampled_from(["cough", "fever", "syncope"]), unique=True, max_size=3),
    "boolean": st.booleans(),
    "text": st.sampled_from(["alpha", "beta", "Alpha "]),
}
_WRONG_TYPES = st.sampled_from(["12 mg", "yes", 7, ["x"], True, "not a date"])


@st.composite
def scored_reports(draw: st.DrawFn, max_cases: int = 8) -> Report:
    """A report from ``chartscore.score`` on random gold and predictions."""
    field_ids = draw(
        st.lists(st.sampled_from(sorted(FIELD_TYPES)), min_size=1, max_size=5, unique=True)
    )
    case_count = draw(st.integers(min_value=1, max_value=max_cases))
    gold, predictions = [], []
    for field_id in field_ids:
        field_type = FIELD_TYPES[field_id]
        for case in range(case_count):
            case_id = f"case-{case}"
            value = draw(st.none() | _VALUES[field_type])
            gold.append(GoldField(case_id, field_id, field_type, value))
            outcome = draw(st.sampled_from(["missing", "abstain", "same", "other", "wrong"]))
            if outcome == "missing":
                continue
            answer: object = None
            if outcome == "same":
                answer = value
            elif outcome == "other":
                answer = draw(_VALUES[field_type])
            elif outcome == "wrong":
                answer = draw(_WRONG_TYPES)
            predictions.append(Prediction(case_id, field_id, answer))
    return score(gold, predictions, schema=SCHEMA)
