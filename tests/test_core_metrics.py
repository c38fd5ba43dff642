"""The core definitions, pinned by hand-computed example tables (docs/metrics.md)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chartscore import (
    ChartscoreError,
    ErrorCode,
    FieldType,
    GoldField,
    Prediction,
    score,
)

from helpers import chain, digest

CONTRACT_FIELDS = (
    ("registry.label", FieldType.TEXT, ("Synthetic Alpha", "Test Beta")),
    ("registry.status", FieldType.CATEGORICAL, ("code_a", "code_b")),
    ("registry.measurement", FieldType.NUMBER, (12, Decimal("2.5"))),
    ("registry.flag", FieldType.BOOLEAN, (True, False)),
)


def contract_gold() -> list[GoldField]:
    """The contract's synthetic gold: 3 cases x 4 fields, the third case unanswerable."""
    return [
        GoldField(f"synthetic_{index}", field_id, kind, value)
        for field_id, kind, values in CONTRACT_FIELDS
        for index, value in enumerate((*values, None))
    ]


def counts(report_slice: object) -> dict[str, tuple[int, int]]:
    return {
        name: (metric.success_count, metric.total_count)
        for name, metric in report_slice.metrics.items()  # type: ignore[attr-defined]
    }


def test_contract_perfect_answers_without_evidence() -> None:
    gold = contract_gold()
    report = score(gold, [Prediction(g.case_id, g.field_id, g.value) for g in gold])
    overall = counts(report.overall)
    assert overall["exact_agreement"] == (8, 8)
    assert overall["normalized_agreement"] == (8, 8)
    assert overall["abstention_correctness"] == (12, 12)
    assert overall["evidence_support"] == (0, 8)
    assert overall["answerable_abstention"] == (0, 8)
    assert overall["unanswerable_answer"] == (0, 4)
    assert dict(report.overall.counts) == {
        "field_count": 12,
        "answerable_count": 8,
        "unanswerable_count": 4,
        "missing_count": 0,
        "answered_count": 8,
        "abstained_count": 4,
    }
    assert sorted(report.by_field_type) == ["boolean", "categorical", "number", "text"]
    for part in report.by_field.values():
        assert counts(part)["exact_agreement"] == (2, 2)
        assert counts(part)["abstention_correctness"] == (3, 3)


def test_contract_variation_from_the_docs() -> None:
    # docs/metrics.md: drop one answerable number answer, answer one unanswerable row.
    gold = contract_gold()
    predictions = []
    for g in gold:
        if g.field_id == "registry.measurement" and g.case_id == "synthetic_0":
            continue  # missing
        value = "invented" if (g.field_id == "registry.label" and g.value is None) else g.value
        predictions.append(Prediction(g.case_id, g.field_id, value))
    overall = counts(score(gold, predictions).overall)
    assert overall["exact_agreement"] == (7, 8)
    assert overall["abstention_correctness"] == (10, 12)
    assert overall["answerable_abstention"] == (0, 8)
    assert overall["unanswerable_answer"] == (1, 4)
    assert overall["evidence_support"] == (0, 8)


def _one(field_type: str, gold: object, answer: object) -> dict[str, tuple[int, int]]:
    report = score(
        [GoldField("c", "f.x", field_type, gold)],
        [Prediction("c", "f.x", answer)],
    )
    return counts(report.overall)


# (field type, gold, answer, exact, normalized)
AGREEMENT_TABLE = [
    ("text", "Synthetic Alpha", "Synthetic Alpha", 1, 1),
    ("text", "Synthetic Alpha", "  synthetic   ALPHA ", 0, 1),
    ("text", "Straße", "STRASSE", 0, 1),
    ("text", "café", "cafe\u0301", 0, 1),  # NFC vs NFD
    ("text", "ﬁle", "FILE", 0, 1),  # compatibility ligature
    ("text", "abc", "abd", 0, 0),
    ("text", "", "", 1, 1),  # empty strings are answers
    ("text", "12", 12, 0, 0),  # wrong type never matches
    ("categorical", "former", " Former ", 0, 1),
    ("categorical", "code_a", "code_b", 0, 0),
    ("number", 12, 12, 1, 1),
    ("number", 12, Decimal("12.0"), 0, 1),  # 12 vs 12.0: not exact
    ("number", Decimal("2.5"), Decimal("2.50"), 1, 1),  # 2.5 vs 2.50: exact
    ("number", 12, "12", 0, 1),
    ("number", 12, " 1.2e1 ", 0, 1),
    ("number", 12, "+12", 0, 1),
    ("number", 12, "１２", 0, 1),  # fullwidth digits after NFKC
    ("number", 1000, "1,000", 0, 0),
    ("number", 1000, "1_000", 0, 0),
    ("number", 12, "12 mg", 0, 0),
    ("number", 12, "12.", 0, 1),  # read as Decimal reads it (issue 7.2)
    ("number", Decimal("0.5"), ".5", 0, 1),
    ("number", 12, "١٢", 0, 1),  # Arabic-Indic digits
    ("number", 12, "١_٢", 0, 0),
    ("number", 1, True, 0, 0),  # a boolean is not a number
    ("number", Decimal("0.1"), 0.1, 0, 1),  # a float is read by its shortest repr
    ("number", 0, Decimal("-0"), 0, 1),
    ("boolean", True, True, 1, 1),
    ("boolean", True, 1, 0, 0),
    ("boolean", False, "false", 0, 0),
    ("boolean", False, True, 0, 0),
]


@pytest.mark.parametrize(("field_type", "gold", "answer", "exact", "normalized"), AGREEMENT_TABLE)
def test_agreement_table(
    field_type: str, gold: object, answer: object, exact: int, normalized: int
) -> None:
    result = _one(field_type, gold, answer)
    assert result["exact_agreement"] == (exact, 1)
    assert result["normalized_agreement"] == (normalized, 1)
    # An answer is an answer, whatever its type: abstention decision is right.
    assert result["abstention_correctness"] == (1, 1)
    assert result["answerable_abstention"] == (0, 1)


def test_outcome_table_for_abstention_metrics() -> None:
    # Four answerable and four unanswerable rows, each outcome twice over.
    gold = [GoldField(f"a{i}", "f.x", "text", "yes") for i in range(4)]
    gold += [GoldField(f"u{i}", "f.x", "text", None) for i in range(4)]
    predictions = [
        Prediction("a0", "f.x", "yes"),  # answered, correct
        Prediction("a1", "f.x", "no"),  # answered, wrong: still a right decision
        Prediction("a2", "f.x", None),  # abstained on answerable: error
        # a3 missing
        Prediction("u0", "f.x", None),  # abstained on unanswerable: right
        Prediction("u1", "f.x", "yes"),  # answered unanswerable: error
        Prediction("u2", "f.x", ""),  # empty string is an answer: error
        # u3 missing: no abstention credit, no error either
    ]
    report = score(gold, predictions)
    assert dict(report.overall.counts) == {
        "field_count": 8,
        "answerable_count": 4,
        "unanswerable_count": 4,
        "missing_count": 2,
        "answered_count": 4,
        "abstained_count": 2,
    }
    result = counts(report.overall)
    assert result["exact_agreement"] == (1, 4)
    assert result["normalized_agreement"] == (1, 4)
    assert result["abstention_correctness"] == (3, 8)  # a0, a1, u0
    assert result["answerable_abstention"] == (1, 4)  # a2 only; a3 is missing
    assert result["unanswerable_answer"] == (2, 4)  # u1, u2; u3 is missing
    assert result["evidence_support"] == (0, 4)


FACT = digest("fact")
OTHER = digest("other fact")


@pytest.mark.parametrize(
    ("prediction_digest", "evidence", "supported"),
    [
        (FACT, chain("f.x", FACT), 1),
        (FACT, chain("f.x", FACT, ("generated_text", "clinical_record")), 1),  # mixed
        (FACT, chain("f.x", FACT, ("generated_text",)), 0),  # generated only
        (FACT, chain("f.x", FACT, ()), 0),  # empty chain
        (FACT, chain("f.y", FACT), 0),  # different field
        (FACT, chain("f.x", OTHER), 0),  # different fact
        (None, chain("f.x", FACT), 0),  # no declared digest on the prediction
        (FACT, None, 0),  # no chain
        (FACT, chain("f.x", FACT, reviewer_state="rejected"), 1),  # review does not matter
        (FACT, chain("f.x", FACT, reviewer_state="approved"), 1),
    ],
)
def test_evidence_support_table(
    prediction_digest: str | None, evidence: object, supported: int
) -> None:
    gold = [GoldField("c", "f.x", "text", "yes")]
    wrong = Prediction("c", "f.x", "wrong answer", prediction_digest, evidence)  # type: ignore[arg-type]
    result = counts(score(gold, [wrong]).overall)
    # Support is about grounding, not correctness: a wrong answer can be supported.
    assert result["evidence_support"] == (supported, 1)
    assert result["exact_agreement"] == (0, 1)


def test_abstentions_create_no_evidence_trials() -> None:
    gold = [GoldField("c", "f.x", "text", "yes"), GoldField("d", "f.x", "text", None)]
    predictions = [
        Prediction("c", "f.x", None, FACT, chain("f.x", FACT)),
        Prediction("d", "f.x", "answer", FACT, chain("f.x", FACT)),
    ]
    result = counts(score(gold, predictions).overall)
    # Only the answer to the unanswerable row is a trial; it is supported.
    assert result["evidence_support"] == (1, 1)


def test_slices_partition_fields_and_types() -> None:
    gold = [*contract_gold(), GoldField("synthetic_0", "registry.note", "text", "x")]
    report = score(gold, [])
    assert report.by_field["registry.note"].count("field_count") == 1
    assert report.by_field_type["text"].count("field_count") == 4
    assert report.overall.count("missing_count") == 13
    assert counts(report.overall)["abstention_correctness"] == (0, 13)
    assert report.overall.metric("evidence_support").interval is None  # no trials


@pytest.mark.parametrize(
    ("gold", "predictions", "code"),
    [
        ([], [], ErrorCode.EMPTY_GOLD),
        (
            [GoldField("c", "f.x", "text", "a"), GoldField("c", "f.x", "text", "b")],
            [],
            ErrorCode.DUPLICATE_GOLD_KEY,
        ),
        (
            [GoldField("c", "f.x", "text", "a")],
            [Prediction("c", "f.x", "a"), Prediction("c", "f.x", None)],
            ErrorCode.DUPLICATE_PREDICTION_KEY,
        ),
        (
            [GoldField("c", "f.x", "text", "a")],
            [Prediction("d", "f.x", "a")],
            ErrorCode.UNKNOWN_PREDICTION_KEY,
        ),
        (
            [GoldField("c", "f.x", "text", "a")],
            [Prediction("c", "f.y", "a")],
            ErrorCode.UNKNOWN_PREDICTION_KEY,
        ),
        (
            [GoldField("c", "f.x", "text", "a"), GoldField("d", "f.x", "categorical", "a")],
            [],
            ErrorCode.INCONSISTENT_FIELD_TYPE,
        ),
        (["not a record"], [], ErrorCode.INVALID_RECORD),
        (
            [GoldField("c", "f.x", "text", "a")],
            [GoldField("c", "f.x", "text", "a")],
            ErrorCode.INVALID_RECORD,
        ),
        (42, [], ErrorCode.INVALID_COLLECTION),
        ("gold.jsonl", [], ErrorCode.INVALID_COLLECTION),
        ({"c": "a"}, [], ErrorCode.INVALID_COLLECTION),
    ],
)
def test_refusals(gold: object, predictions: object, code: ErrorCode) -> None:
    with pytest.raises(ChartscoreError) as caught:
        score(gold, predictions)  # type: ignore[arg-type]
    assert caught.value.code is code
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def test_predictions_may_be_a_one_shot_generator() -> None:
    gold = contract_gold()
    report = score(gold, (Prediction(g.case_id, g.field_id, g.value) for g in gold))
    assert counts(report.overall)["exact_agreement"] == (8, 8)


def test_a_missing_unanswerable_row_is_not_an_abstention() -> None:
    report = score([GoldField("c", "f.x", "boolean", None)], [])
    result = counts(report.overall)
    assert result["abstention_correctness"] == (0, 1)
    assert result["unanswerable_answer"] == (0, 1)
    assert report.overall.count("abstained_count") == 0
    assert report.overall.count("missing_count") == 1
