"""Rows that share a plan are counted as rows judged one by one (``scoring.scorer``).

A scorer keeps each field's row plans by (gold type, gold, answer type, answer) while pairs
repeat. Values that are equal but judged apart (``True`` and ``1``, ``1`` and ``Decimal("1.0")``,
``"former"`` and ``"Former"``) must never share a plan: each run below scores the same rows
with the plans kept and with them turned off, and compares every row's class and the report.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore.documents.report import Report
from chartscore.metrics import FieldType
from chartscore.records.prediction_row import PredictionRow
from chartscore.records.schema import to_schema
from chartscore.scoring.scorer import Scorer, collector_paused

SCHEMA = to_schema(
    {
        "fields": {
            "smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
            "lvef": {"type": "number", "tolerance": "5"},
            "onset": {"type": "date", "tolerance_days": 3},
            "symptoms": {"type": "multi", "choices": ["a", "b", "c"]},
            "acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
        }
    }
)
GOLD: dict[tuple[str, FieldType], list[object]] = {
    ("smoking", FieldType.CATEGORICAL): ["former", "never", None],
    ("lvef", FieldType.NUMBER): [1, Decimal("1.0"), Decimal("2.5"), "1", 7, None],
    ("onset", FieldType.DATE): ["2020-01-02", "2020-01", None],
    ("symptoms", FieldType.MULTI): [frozenset({"a"}), frozenset({"a", "b"}), frozenset(), None],
    ("acuity", FieldType.ORDINAL): ["2", "1", None],
    ("diabetes", FieldType.BOOLEAN): [True, False, None],
    ("label", FieldType.TEXT): ["Sample", "sample", None],
}
ANSWERS: list[object] = [
    *(True, False, 1, 0, 2, 3, Decimal("1.0"), Decimal("1.00"), Decimal("1"), Decimal("3.5")),
    *("1", " 1 ", "1.0", "2", "former", "Former", " never", "a", "sample", "Sample", "x"),
    *(frozenset({"a"}), frozenset({"A", "b"}), frozenset({"b", "a"}), frozenset()),
    *("2020-01-02", "2020-01-04", "2020-01", "2020-1-2", None),
]
FIELDS = list(GOLD)
Row = tuple[object, object, int, bool]  # gold, answer, evidence state, declared uncertainty


def _run(field: tuple[str, FieldType], rows: list[Row], *, plans: bool) -> tuple[list[int], str]:
    field_id, field_type = field
    scorer = Scorer(SCHEMA)
    with collector_paused():
        for case, (gold, *_) in enumerate(rows):
            scorer.add_gold(f"c{case}", field_id, field_type, gold)
        scorer.close_gold()
        if not plans:
            scorer.fields[field_id].plans = None
        masks = [
            scorer.add_row(
                PredictionRow(
                    f"c{case}", field_id, answer, evidence, Decimal("0.25") if declared else None
                )
            )
            for case, (_, answer, evidence, declared) in enumerate(rows)
        ]
        tally = scorer.tally()
    return masks, Report.from_tally(tally, 0.95).to_json()


def test_every_pair_twice_counts_as_rows_judged_one_by_one() -> None:
    for field in FIELDS:
        pairs = [(gold, answer) for gold in GOLD[field] for answer in ANSWERS]
        rows = [(gold, answer, n % 3, n % 2 == 0) for n, (gold, answer) in enumerate(pairs)]
        rows += [(gold, answer, n % 3, n % 5 == 0) for n, (gold, answer) in enumerate(pairs[::-1])]
        assert _run(field, rows, plans=True) == _run(field, rows, plans=False)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(FIELDS).flatmap(
        lambda field: st.tuples(
            st.just(field),
            st.lists(
                st.tuples(
                    st.sampled_from(GOLD[field]),
                    st.sampled_from(ANSWERS),
                    st.integers(0, 2),
                    st.booleans(),
                ),
                min_size=1,
                max_size=80,
            ),
        )
    )
)
def test_shared_plans_count_as_rows_judged_one_by_one(
    example: tuple[tuple[str, FieldType], list[Row]],
) -> None:
    field, rows = example
    assert _run(field, rows, plans=True) == _run(field, rows, plans=False)


def test_a_field_of_distinct_pairs_stops_keeping_plans() -> None:
    # Distinct (gold, answer) pairs only: the table fills, is found unused and is dropped,
    # and the counts are those of rows judged one by one.
    rows: list[Row] = [(f"gold {n}", f"answer {n}", 0, False) for n in range(20_000)]
    field = ("label", FieldType.TEXT)
    assert _run(field, rows, plans=True) == _run(field, rows, plans=False)
    scorer = Scorer()
    for case in range(20_000):
        scorer.add_gold(f"c{case}", "note", FieldType.TEXT, f"gold {case}")
    scorer.close_gold()
    for case in range(20_000):
        scorer.add_row(PredictionRow(f"c{case}", "note", f"answer {case}"))
    assert scorer.fields["note"].plans is None
