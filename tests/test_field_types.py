"""Schema-driven field types: date, ordinal, multi, tolerances, kappa, baselines, stand-ins."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from chartscore import (
    ChartscoreError,
    ErrorCode,
    GoldField,
    Prediction,
    Schema,
    load_schema,
    score,
    score_files,
)
from chartscore.cli import main

from helpers import examples, write_jsonl

ACUITY = {"fields": {"triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]}}}


def pairs(report_slice: object) -> dict[str, tuple[int, int]]:
    return {
        name: (m.success_count, m.total_count)
        for name, m in report_slice.metrics.items()  # type: ignore[attr-defined]
    }


def one(
    field_type: str, gold: object, answer: object, schema: dict[str, object]
) -> dict[str, tuple[int, int]]:
    report = score(
        [GoldField("c", "f.x", field_type, gold)], [Prediction("c", "f.x", answer)], schema=schema
    )
    return pairs(report.by_field["f.x"])


# --- ordinal ------------------------------------------------------------------------------

LEVELS = {"fields": {"f.x": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]}}}
INT_LEVELS = {"fields": {"f.x": {"type": "ordinal", "levels": [1, 2, 3]}}}
WORD_LEVELS = {"fields": {"f.x": {"type": "ordinal", "levels": ["Mild", "Moderate", "Severe"]}}}


@pytest.mark.parametrize(
    ("schema", "gold", "answer", "normalized", "later", "earlier", "within"),
    [
        (LEVELS, "3", "3", 1, 0, 0, 1),
        (LEVELS, "3", " 3 ", 1, 0, 0, 1),
        (LEVELS, "3", "4", 0, 1, 0, 1),  # under-triage by one level
        (LEVELS, "3", "5", 0, 1, 0, 0),
        (LEVELS, "3", "2", 0, 0, 1, 1),  # over-triage
        (LEVELS, "3", "1", 0, 0, 1, 0),
        (LEVELS, "3", 3, 0, 0, 0, 0),  # an int names no string level
        (LEVELS, "3", "6", 0, 0, 0, 0),  # names no level
        (LEVELS, "3", None, 0, 0, 0, 0),  # abstained
        (INT_LEVELS, 2, 3, 0, 1, 0, 1),
        (INT_LEVELS, 2, "2", 1, 0, 0, 1),  # an integer literal names the integer level
        (INT_LEVELS, 2, " +3 ", 0, 1, 0, 1),
        (INT_LEVELS, 2, "2.0", 0, 0, 0, 0),  # not an integer literal: names no level
        (INT_LEVELS, 2, "1_0", 0, 0, 0, 0),
        (INT_LEVELS, 2, "\u0662", 1, 0, 0, 1),  # Arabic-Indic two, as numbers read it
        (INT_LEVELS, 2, True, 0, 0, 0, 0),  # a boolean is not the level 1
        (WORD_LEVELS, "Moderate", "MODERATE", 1, 0, 0, 1),
        (WORD_LEVELS, "Mild", "severe", 0, 1, 0, 0),
    ],
)
def test_ordinal_table(
    schema: dict[str, object],
    gold: object,
    answer: object,
    normalized: int,
    later: int,
    earlier: int,
    within: int,
) -> None:
    result = one("ordinal", gold, answer, schema)
    assert result["normalized_agreement"] == (normalized, 1)
    assert result["ordinal_later"] == (later, 1)
    assert result["ordinal_earlier"] == (earlier, 1)
    assert result["ordinal_within_one"] == (within, 1)


ordinal_answers = st.one_of(
    st.none(), st.sampled_from(["1", "2", "3", "4", "5", "x", " 2 "]), st.integers(0, 6)
)


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.tuples(st.sampled_from(["1", "2", "3", "4", "5", None]), ordinal_answers, st.booleans()),
        min_size=1,
    )
)
def test_ordinal_errors_never_exceed_answered_rows(rows: list[tuple[object, object, bool]]) -> None:
    gold = [GoldField(f"c{i}", "f.x", "ordinal", g) for i, (g, _, _) in enumerate(rows)]
    predictions = [
        Prediction(f"c{i}", "f.x", a) for i, (_, a, present) in enumerate(rows) if present
    ]
    part = score(gold, predictions, schema=LEVELS).by_field["f.x"]
    result = pairs(part)
    answered_answerable = sum(
        1 for g, a, present in rows if present and g is not None and a is not None
    )
    later, earlier = result["ordinal_later"][0], result["ordinal_earlier"][0]
    assert later + earlier + result["normalized_agreement"][0] <= answered_answerable
    assert result["ordinal_within_one"][0] >= result["normalized_agreement"][0]
    assert all(
        total == part.count("answerable_count")
        for name, (_, total) in result.items()
        if name.startswith("ordinal")
    )


# --- date ---------------------------------------------------------------------------------

DATES = {"fields": {"f.x": {"type": "date", "tolerance_days": 3}}}


@pytest.mark.parametrize(
    ("gold", "answer", "exact", "normalized", "tolerance"),
    [
        ("2023-04-05", "2023-04-05", 1, 1, 1),
        ("2023-04-05", " 2023-04-05", 0, 1, 1),
        ("2023-04-05", "2023-04-08", 0, 0, 1),  # 3 days: inside
        ("2023-04-05", "2023-04-09", 0, 0, 0),  # 4 days: outside
        ("2023-02-27", "2023-03-02", 0, 0, 1),  # across a month end (2023 is not a leap year)
        ("2023-12-31", "2024-01-02", 0, 0, 1),  # across a year end
        ("2023-04-05", "2023-04", 0, 0, 0),  # different precision
        ("2023-04", "2023-04", 1, 1, 1),  # reduced precision agrees only by normalization
        ("2023-04", "2023-04-01", 0, 0, 0),
        ("2023", "2023", 1, 1, 1),
        ("2023-04-05", "2023-02-30", 0, 0, 0),  # an impossible date never matches
        ("2023-04-05", "05/04/2023", 0, 0, 0),
        ("2023-04-05", 20230405, 0, 0, 0),
    ],
)
def test_date_table(gold: str, answer: object, exact: int, normalized: int, tolerance: int) -> None:
    result = one("date", gold, answer, DATES)
    assert result["exact_agreement"] == (exact, 1)
    assert result["normalized_agreement"] == (normalized, 1)
    assert result["tolerance_agreement"] == (tolerance, 1)


def test_date_without_tolerance_has_no_tolerance_metric() -> None:
    result = one("date", "2023-04-05", "2023-04-06", {"fields": {}})
    assert "tolerance_agreement" not in result
    assert result["normalized_agreement"] == (0, 1)


def test_impossible_gold_date_is_refused() -> None:
    with pytest.raises(ChartscoreError) as caught:
        GoldField("c", "f.x", "date", "2023-02-30")
    assert caught.value.code is ErrorCode.INVALID_GOLD_VALUE


# --- number tolerance ---------------------------------------------------------------------

WEIGHT = {"fields": {"f.x": {"type": "number", "tolerance": "0.5"}}}


@pytest.mark.parametrize(
    ("gold", "answer", "normalized", "tolerance"),
    [
        (70, 70, 1, 1),
        (70, Decimal("70.4"), 0, 1),
        (70, Decimal("70.5"), 0, 1),  # the bound is inclusive
        (70, Decimal("69.5"), 0, 1),
        (70, Decimal("70.51"), 0, 0),
        (70, " 70.3 ", 0, 1),
        (70, "70.3 kg", 0, 0),
        (Decimal("1e9999"), Decimal("1e9999"), 1, 1),
        (Decimal("1e-9999"), 0, 0, 1),  # exact arithmetic, no underflow
        (Decimal("0.1"), 0.1, 1, 1),
        (70, True, 0, 0),
    ],
)
def test_number_tolerance_table(
    gold: object, answer: object, normalized: int, tolerance: int
) -> None:
    result = one("number", gold, answer, WEIGHT)
    assert result["normalized_agreement"] == (normalized, 1)
    assert result["tolerance_agreement"] == (tolerance, 1)


def test_zero_tolerance_is_exact_agreement() -> None:
    schema = {"fields": {"f.x": {"type": "number", "tolerance": 0}}}
    assert one("number", 70, Decimal("70.000"), schema)["tolerance_agreement"] == (1, 1)
    assert one("number", 70, Decimal("70.001"), schema)["tolerance_agreement"] == (0, 1)


# --- multi --------------------------------------------------------------------------------

SYMPTOMS = {
    "fields": {"f.x": {"type": "multi", "choices": ["cough", "fever", "syncope", "dyspnea"]}}
}


def test_multi_items_worked_example() -> None:
    # docs/metrics.md: gold {cough, fever}, answer [Cough, syncope] -> 1/2 and 1/2.
    result = one("multi", ["cough", "fever"], ["Cough", "syncope"], SYMPTOMS)
    assert result["item_precision"] == (1, 2)
    assert result["item_recall"] == (1, 2)
    assert result["exact_agreement"] == (0, 1)
    assert result["normalized_agreement"] == (0, 1)


def test_multi_items_over_a_slice() -> None:
    gold = [
        GoldField("a", "f.x", "multi", ["cough", "fever"]),  # answered exactly
        GoldField("b", "f.x", "multi", ["syncope"]),  # abstained: loses 1 gold item
        GoldField("c", "f.x", "multi", ["fever"]),  # missing: loses 1 gold item
        GoldField("d", "f.x", "multi", None),  # unanswerable, answered: 2 unmatched items
        GoldField("e", "f.x", "multi", []),  # "none present", answered []: agreement, no items
        GoldField("f", "f.x", "multi", ["cough"]),  # answered with repetition and case
        GoldField("g", "f.x", "multi", ["cough"]),  # answered with a wrong type: no items
    ]
    predictions = [
        Prediction("a", "f.x", ["fever", "cough"]),
        Prediction("b", "f.x", None),
        Prediction("d", "f.x", ["cough", "fever"]),
        Prediction("e", "f.x", []),
        Prediction("f", "f.x", ["COUGH", "cough", "Cough"]),
        Prediction("g", "f.x", "cough"),
    ]
    result = pairs(score(gold, predictions, schema=SYMPTOMS).by_field["f.x"])
    # answered items: a 2 + d 2 + e 0 + f 1 (normalized set) + g 0 = 5; matched: a 2 + f 1 = 3
    assert result["item_precision"] == (3, 5)
    # gold items of answerable rows: a 2 + b 1 + c 1 + e 0 + f 1 + g 1 = 6
    assert result["item_recall"] == (3, 6)
    assert result["exact_agreement"] == (2, 6)  # a (same set) and e
    assert result["normalized_agreement"] == (3, 6)  # a, e, f


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.frozensets(st.sampled_from(["cough", "fever", "syncope"]))),
            st.one_of(st.none(), st.lists(st.sampled_from(["cough", "COUGH", "fever", "rash"]))),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_item_metrics_equal_set_arithmetic(
    rows: list[tuple[frozenset[str] | None, list[str] | None]],
) -> None:
    gold = [GoldField(f"c{i}", "f.x", "multi", g) for i, (g, _) in enumerate(rows)]
    predictions = [Prediction(f"c{i}", "f.x", a) for i, (_, a) in enumerate(rows)]
    result = pairs(score(gold, predictions).by_field["f.x"])
    matched = answered = gold_items = 0
    for g, a in rows:
        answer = {item.casefold() for item in a} if a is not None else set()
        if g is not None:
            gold_items += len(g)
            matched += len(answer & g)
        answered += len(answer)
    assert result["item_precision"] == (matched, answered)
    assert result["item_recall"] == (matched, gold_items)


# --- kappa and the majority baseline --------------------------------------------------------


def test_kappa_and_majority_for_categorical() -> None:
    gold_values = ["never"] * 20 + ["former"] * 5 + ["current"] * 10 + ["current"] * 15
    answers = ["never"] * 20 + ["current"] * 5 + ["never"] * 10 + ["current"] * 15
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", g) for i, g in enumerate(gold_values)]
    predictions = [Prediction(f"c{i}", "hx.smoking", a.upper()) for i, a in enumerate(answers)]
    part = score(gold, predictions).by_field["hx.smoking"]
    assert part.kappa is not None
    assert part.kappa.pairs == 50
    assert part.kappa.value == pytest.approx(cohen_kappa_score(gold_values, answers), abs=1e-12)
    assert pairs(part)["majority_baseline"] == (25, 50)  # "current": 10 + 15


def test_kappa_excludes_wrong_type_answers_and_abstentions() -> None:
    gold = [GoldField(f"c{i}", "dx.flag", "boolean", i % 2 == 0) for i in range(6)]
    predictions = [
        Prediction("c0", "dx.flag", True),
        Prediction("c1", "dx.flag", False),
        Prediction("c2", "dx.flag", "yes"),  # not a boolean: not a pair
        Prediction("c3", "dx.flag", None),  # abstained: not a pair
        Prediction("c4", "dx.flag", False),
    ]
    part = score(gold, predictions).by_field["dx.flag"]
    assert part.kappa is not None and part.kappa.pairs == 3
    expected = cohen_kappa_score([True, False, True], [True, False, False])
    assert part.kappa.value == pytest.approx(expected, abs=1e-12)


def test_quadratic_kappa_uses_the_full_level_scale() -> None:
    gold_levels = ["1", "2", "2", "5", "5", "5"]
    answers = ["2", "2", "5", "5", "5", "2"]
    gold = [GoldField(f"c{i}", "triage.acuity", "ordinal", g) for i, g in enumerate(gold_levels)]
    predictions = [Prediction(f"c{i}", "triage.acuity", a) for i, a in enumerate(answers)]
    part = score(gold, predictions, schema=ACUITY).by_field["triage.acuity"]
    expected = cohen_kappa_score(
        [int(g) for g in gold_levels],
        [int(a) for a in answers],
        weights="quadratic",
        labels=[1, 2, 3, 4, 5],
    )
    assert part.kappa is not None
    assert part.kappa.value == pytest.approx(expected, abs=1e-12)
    # Levels 3 and 4 are never used, but they keep 5 three steps from 2: kappa over
    # only the observed labels (1, 2, 5 as adjacent categories) differs.
    narrow = cohen_kappa_score(
        [int(g) for g in gold_levels], [int(a) for a in answers], weights="quadratic"
    )
    assert part.kappa.value != pytest.approx(narrow, abs=1e-6)


def test_kappa_undefined_cases_are_null() -> None:
    gold = [GoldField(f"c{i}", "dx.flag", "boolean", True) for i in range(3)]
    same = score(gold, [Prediction(f"c{i}", "dx.flag", True) for i in range(3)]).by_field["dx.flag"]
    assert same.kappa is not None
    assert (same.kappa.value, same.kappa.interval, same.kappa.pairs) == (None, None, 3)
    nothing = score(gold, []).by_field["dx.flag"]
    assert nothing.kappa is not None
    assert (nothing.kappa.value, nothing.kappa.interval, nothing.kappa.pairs) == (None, None, 0)


@settings(max_examples=examples(100))
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=30))
def test_kappa_of_identical_raters_is_one_when_defined(values: list[str]) -> None:
    gold = [GoldField(f"c{i}", "f.x", "categorical", v) for i, v in enumerate(values)]
    part = score(gold, [Prediction(f"c{i}", "f.x", v) for i, v in enumerate(values)]).by_field[
        "f.x"
    ]
    assert part.kappa is not None
    if len(set(values)) > 1:
        assert part.kappa.value == 1.0
    else:
        assert part.kappa.value is None


# --- placement ----------------------------------------------------------------------------


def test_type_metrics_appear_only_in_their_slices(tmp_path: Path) -> None:
    schema = {
        "fields": {
            "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
            "vitals.weight": {"type": "number", "tolerance": "0.5"},
            "vitals.height": {"type": "number"},
        }
    }
    gold = [
        GoldField("c", "triage.acuity", "ordinal", "2"),
        GoldField("c", "vitals.weight", "number", 70),
        GoldField("c", "vitals.height", "number", 180),
        GoldField("c", "hx.note", "text", "x"),
    ]
    predictions = [
        Prediction("c", "triage.acuity", "3"),
        Prediction("c", "vitals.weight", Decimal("70.2")),
        Prediction("c", "vitals.height", 181),
    ]
    report = json.loads(score(gold, predictions, schema=schema).to_json())
    assert "ordinal_later" not in report["overall"] and "kappa" not in report["overall"]
    assert "tolerance_agreement" not in report["overall"]
    assert report["by_field"]["triage.acuity"]["ordinal_later"]["success_count"] == 1
    assert "kappa" in report["by_field"]["triage.acuity"]
    assert "kappa" not in report["by_field_type"]["ordinal"]
    assert report["by_field_type"]["ordinal"]["majority_baseline"]["total_count"] == 1
    assert "tolerance_agreement" not in report["by_field"]["vitals.height"]
    # The number type slice pools tolerance over the fields that declare one.
    pooled = dict(report["by_field_type"]["number"]["tolerance_agreement"])
    clustered = pooled.pop("design_effect"), pooled.pop("clustered_interval")
    assert pooled.pop("case_count") == 1
    assert pooled == report["by_field"]["vitals.weight"]["tolerance_agreement"]
    # One case with one trial: the rows are the cases, so the Wilson interval itself.
    assert clustered == (1, pooled["interval"])
    assert report["by_field_type"]["number"]["field_count"] == 2
    assert (
        set(report["by_field"]["hx.note"]) & {"kappa", "majority_baseline", "item_recall"} == set()
    )


# --- schema validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ([], ErrorCode.INVALID_SCHEMA),
        ({"fields": {}, "version": 1}, ErrorCode.INVALID_SCHEMA),
        ({"fields": []}, ErrorCode.INVALID_SCHEMA),
        ({"fields": {"f.x": "ordinal"}}, ErrorCode.INVALID_SCHEMA),
        ({"fields": {"F.X": {"type": "text"}}}, ErrorCode.INVALID_FIELD_ID),
        ({"fields": {"f.x": {"type": "ordinals"}}}, ErrorCode.SCHEMA_UNKNOWN_TYPE),
        ({"fields": {"f.x": {}}}, ErrorCode.SCHEMA_UNKNOWN_TYPE),
        (
            {"fields": {"f.x": {"type": "number", "levels": [1, 2]}}},
            ErrorCode.SCHEMA_UNKNOWN_OPTION,
        ),
        ({"fields": {"f.x": {"type": "text", "choices": ["a"]}}}, ErrorCode.SCHEMA_UNKNOWN_OPTION),
        ({"fields": {"f.x": {"type": "ordinal"}}}, ErrorCode.SCHEMA_INVALID_LEVELS),
        (
            {"fields": {"f.x": {"type": "ordinal", "levels": ["1"]}}},
            ErrorCode.SCHEMA_INVALID_LEVELS,
        ),
        (
            {"fields": {"f.x": {"type": "ordinal", "levels": ["a", "A"]}}},
            ErrorCode.SCHEMA_INVALID_LEVELS,
        ),
        (
            {"fields": {"f.x": {"type": "ordinal", "levels": [1, 1]}}},
            ErrorCode.SCHEMA_INVALID_LEVELS,
        ),
        (
            {"fields": {"f.x": {"type": "ordinal", "levels": [1, True]}}},
            ErrorCode.SCHEMA_INVALID_LEVELS,
        ),
        (
            {"fields": {"f.x": {"type": "ordinal", "levels": "12345"}}},
            ErrorCode.SCHEMA_INVALID_LEVELS,
        ),
        (
            {"fields": {"f.x": {"type": "categorical", "choices": []}}},
            ErrorCode.SCHEMA_INVALID_CHOICES,
        ),
        (
            {"fields": {"f.x": {"type": "multi", "choices": ["a", " a"]}}},
            ErrorCode.SCHEMA_INVALID_CHOICES,
        ),
        (
            {"fields": {"f.x": {"type": "multi", "choices": ["a", 1]}}},
            ErrorCode.SCHEMA_INVALID_CHOICES,
        ),
        (
            {"fields": {"f.x": {"type": "number", "tolerance": "-0.1"}}},
            ErrorCode.SCHEMA_INVALID_TOLERANCE,
        ),
        (
            {"fields": {"f.x": {"type": "number", "tolerance": "half"}}},
            ErrorCode.SCHEMA_INVALID_TOLERANCE,
        ),
        (
            {"fields": {"f.x": {"type": "number", "tolerance": True}}},
            ErrorCode.SCHEMA_INVALID_TOLERANCE,
        ),
        (
            {"fields": {"f.x": {"type": "date", "tolerance_days": -1}}},
            ErrorCode.SCHEMA_INVALID_TOLERANCE,
        ),
        (
            {"fields": {"f.x": {"type": "date", "tolerance_days": 1.5}}},
            ErrorCode.SCHEMA_INVALID_TOLERANCE,
        ),
    ],
)
def test_schema_refusals(document: object, code: ErrorCode) -> None:
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict(document)
    assert caught.value.code is code
    assert caught.value.__context__ is None


@pytest.mark.parametrize(
    ("gold", "schema", "code"),
    [
        (GoldField("c", "f.x", "ordinal", "3"), None, ErrorCode.SCHEMA_REQUIRED),
        (GoldField("c", "f.x", "ordinal", "3"), {"fields": {}}, ErrorCode.SCHEMA_REQUIRED),
        (GoldField("c", "f.x", "ordinal", "7"), LEVELS, ErrorCode.GOLD_OUTSIDE_SCHEMA),
        (GoldField("c", "f.x", "ordinal", 3), LEVELS, ErrorCode.GOLD_OUTSIDE_SCHEMA),
        (
            GoldField("c", "f.x", "categorical", "sometimes"),
            {"fields": {"f.x": {"type": "categorical", "choices": ["never"]}}},
            ErrorCode.GOLD_OUTSIDE_SCHEMA,
        ),
        (
            GoldField("c", "f.x", "multi", ["cough", "rash"]),
            SYMPTOMS,
            ErrorCode.GOLD_OUTSIDE_SCHEMA,
        ),
        (GoldField("c", "f.x", "text", "3"), LEVELS, ErrorCode.SCHEMA_TYPE_MISMATCH),
    ],
)
def test_gold_against_schema(
    gold: GoldField, schema: dict[str, object] | None, code: ErrorCode
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        score([gold], [], schema=schema)
    assert caught.value.code is code
    assert caught.value.field_id == "f.x"  # a valid schema field id may be named
    assert "f.x" in str(caught.value)


def test_choices_do_not_constrain_answers() -> None:
    schema = {"fields": {"f.x": {"type": "categorical", "choices": ["never", "former"]}}}
    assert one("categorical", "never", "sometimes", schema)["normalized_agreement"] == (0, 1)
    assert one("categorical", "never", " NEVER", schema)["normalized_agreement"] == (1, 1)


def test_standin_check_refuses_a_broken_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    from chartscore.scoring import agreement

    original = agreement.FieldRule._agreement

    def broken(
        self: agreement.FieldRule, gold_value: object, gold_key: object, value: object
    ) -> tuple[int, object]:
        mask, answer = original(self, gold_value, gold_key, value)
        return mask & ~agreement.NORMALIZED, answer

    monkeypatch.setattr(agreement.FieldRule, "_agreement", broken)
    with pytest.raises(ChartscoreError) as caught:
        score([GoldField("c", "f.x", "text", "x")], [])
    assert caught.value.code is ErrorCode.STANDIN_NOT_PERFECT


@settings(max_examples=examples(50))
@given(st.lists(st.sampled_from(["1", "2", "3", "4", "5", None]), min_size=1, max_size=20))
def test_perfect_standin_scores_perfectly(levels: list[str | None]) -> None:
    gold = [GoldField(f"c{i}", "triage.acuity", "ordinal", v) for i, v in enumerate(levels)]
    part = score(
        gold, [Prediction(g.case_id, g.field_id, g.value) for g in gold], schema=ACUITY
    ).overall
    answerable = part.count("answerable_count")
    assert pairs(part)["exact_agreement"] == (answerable, answerable)
    assert pairs(part)["abstention_correctness"] == (len(levels), len(levels))


# --- files, TOML and the CLI --------------------------------------------------------------


def test_schema_from_toml_and_json_files_agree(tmp_path: Path) -> None:
    toml = tmp_path / "schema.toml"
    toml.write_text(
        '[fields."triage.acuity"]\ntype = "ordinal"\nlevels = ["1", "2", "3", "4", "5"]\n'
        '[fields."vitals.weight"]\ntype = "number"\ntolerance = 0.5\n',
        encoding="utf-8",
    )
    as_json = tmp_path / "schema.json"
    as_json.write_text(
        json.dumps(
            {
                "fields": {
                    "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
                    "vitals.weight": {"type": "number", "tolerance": "0.5"},
                }
            }
        ),
        encoding="utf-8",
    )
    assert load_schema(toml) == load_schema(as_json)
    assert load_schema(toml).fields["vitals.weight"].tolerance == Decimal("0.5")


def test_schema_file_errors_are_located_without_paths(tmp_path: Path) -> None:
    bad = tmp_path / "schema.json"
    bad.write_text('{"fields": {"f.x": {"type": "number", "tolerance": 1, "tolerance": 2}}}')
    with pytest.raises(ChartscoreError) as caught:
        load_schema(bad)
    assert str(caught.value) == "duplicate_key (schema)"
    bad.write_text('{"fields": {"f.x": {"type": "number", "tolerance": NaN}}}')
    with pytest.raises(ChartscoreError) as caught:
        load_schema(bad)
    assert caught.value.code is ErrorCode.NONFINITE_NUMBER
    broken_toml = tmp_path / "schema.toml"
    broken_toml.write_text("[fields\n")
    with pytest.raises(ChartscoreError) as caught:
        load_schema(broken_toml)
    assert str(caught.value) == "invalid_json (schema line 1)"  # a syntax error names its line


def test_cli_with_schema(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"case_id": "c1", "field_id": "triage.acuity", "field_type": "ordinal", "value": "2"},
            {"case_id": "c2", "field_id": "triage.acuity", "field_type": "ordinal", "value": "3"},
            {"case_id": "c1", "field_id": "hx.symptoms", "field_type": "multi", "value": ["cough"]},
        ],
    )
    pred = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"case_id": "c1", "field_id": "triage.acuity", "value": "4"},
            {"case_id": "c2", "field_id": "triage.acuity", "value": "3"},
            {"case_id": "c1", "field_id": "hx.symptoms", "value": ["Cough", "fever"]},
        ],
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(ACUITY))
    import io

    out, err = io.StringIO(), io.StringIO()
    status = main(
        ["score", "--gold", str(gold), "--predictions", str(pred), "--schema", str(schema)],
        out,
        err,
    )
    assert (status, err.getvalue()) == (0, "")
    report = json.loads(out.getvalue())
    assert report["by_field"]["triage.acuity"]["ordinal_later"]["success_count"] == 1
    assert report["by_field"]["hx.symptoms"]["item_precision"] == {
        "success_count": 1,
        "total_count": 2,
        "interval": [0.09453120573423075, 0.9054687942657692],
    }
    out, err = io.StringIO(), io.StringIO()
    status = main(["score", "--gold", str(gold), "--predictions", str(pred)], out, err)
    assert status == 1
    assert err.getvalue().startswith(
        "chartscore: error: schema_required (schema field triage.acuity): "
    )
    from chartscore.cli import score as score_command

    assert (
        score_files(gold, pred, schema=schema).to_json() + "\n"
        == score_command.score_files(gold, pred, schema=load_schema(schema)).to_json() + "\n"
    )


def test_docs_worked_examples_for_tolerance_and_ordinal() -> None:
    weight = {"fields": {"f.x": {"type": "number", "tolerance": "0.5"}}}
    gold = [GoldField(f"c{i}", "f.x", "number", v) for i, v in enumerate((70, 70, 80))]
    answers = [Prediction("c0", "f.x", "70.4"), Prediction("c1", "f.x", Decimal("70.6"))]
    result = pairs(score(gold, answers, schema=weight).by_field["f.x"])
    assert result["normalized_agreement"] == (0, 3)
    assert result["tolerance_agreement"] == (1, 3)
    gold = [GoldField(f"c{i}", "f.x", "ordinal", v) for i, v in enumerate(("3", "3", "2", "1"))]
    answers = [Prediction(f"c{i}", "f.x", v) for i, v in enumerate(("4", "3", "1", None))]
    result = pairs(score(gold, answers, schema=LEVELS).by_field["f.x"])
    assert result["ordinal_later"] == (1, 4)
    assert result["ordinal_earlier"] == (1, 4)
    assert result["ordinal_within_one"] == (3, 4)
    assert result["normalized_agreement"] == (1, 4)


def test_all_types_are_order_and_hash_seed_invariant(tmp_path: Path) -> None:
    import os
    import random
    import subprocess
    import sys
    from importlib import resources

    data = resources.files("chartscore") / "data"
    gold_lines = (data / "demo_gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    prediction_lines = (
        (data / "demo_predictions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    )
    schema = tmp_path / "schema.json"
    schema.write_text((data / "demo_schema.json").read_text(encoding="utf-8"), encoding="utf-8")
    outputs = set()
    for seed in (0, 1, 2):
        random.Random(seed).shuffle(gold_lines)
        random.Random(seed + 10).shuffle(prediction_lines)
        gold = tmp_path / f"gold{seed}.jsonl"
        gold.write_text("".join(gold_lines), encoding="utf-8")
        predictions = tmp_path / f"pred{seed}.jsonl"
        predictions.write_text("".join(prediction_lines), encoding="utf-8")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "chartscore",
                "score",
                "--gold",
                str(gold),
                "--predictions",
                str(predictions),
                "--schema",
                str(schema),
            ],
            capture_output=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed * 7919)},
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
    report = json.loads(outputs.pop())
    assert set(report["by_field_type"]) == {
        "text",
        "categorical",
        "number",
        "boolean",
        "date",
        "ordinal",
        "multi",
    }


# --- wrong_type_answer: answered rows whose answer is not a value of the field's type ---------

LEVELS_SCHEMA = {"fields": {"triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]}}}


@pytest.mark.parametrize(
    ("field_type", "gold", "answer", "wrong"),
    [
        ("number", 12, "12 mg", 1),
        ("number", 12, "13", 0),  # a number string is a number: a content error only
        ("number", 12, True, 1),
        ("number", None, "twelve", 1),  # unanswerable rows count too
        ("number", None, 7, 0),
        ("boolean", True, "yes", 1),
        ("boolean", True, 1, 1),
        ("boolean", True, False, 0),
        ("text", "abc", 5, 1),
        ("text", "abc", "xyz", 0),
        ("categorical", "former", ["former"], 1),
        ("date", "2023-04-05", "2023-02-30", 1),
        ("date", "2023-04-05", "2023-04", 0),
        ("multi", ["cough"], "cough", 1),
        ("multi", ["cough"], [], 0),
        ("ordinal", "2", "7", 1),  # a level the schema does not declare
        ("ordinal", "2", "3", 0),
    ],
)
def test_wrong_type_answer_table(field_type: str, gold: object, answer: object, wrong: int) -> None:
    field_id = "triage.acuity" if field_type == "ordinal" else "x.field"
    schema = LEVELS_SCHEMA if field_type == "ordinal" else None
    report = score(
        [GoldField("c1", field_id, field_type, gold), GoldField("c2", field_id, field_type, None)],
        [Prediction("c1", field_id, answer), Prediction("c2", field_id, None)],
        schema=schema,
    )
    if gold is None:  # then both rows are unanswerable, c1 answered
        assert report.overall.metric("unanswerable_answer").success_count == 1
    metric = report.by_field[field_id].metric("wrong_type_answer")
    assert (metric.success_count, metric.total_count) == (wrong, 1)
    if wrong:
        assert report.by_field[field_id].metric("normalized_agreement").success_count == 0


def test_wrong_type_answer_ignores_abstentions_and_missing_rows() -> None:
    gold = [GoldField(f"c{i}", "x.n", "number", 1) for i in range(4)]
    predictions = [Prediction("c0", "x.n", "1 kg"), Prediction("c1", "x.n", None)]
    metric = score(gold, predictions).overall.metric("wrong_type_answer")
    assert (metric.success_count, metric.total_count) == (1, 1)
    assert metric.rate == 1.0
    assert score(gold, []).overall.metric("wrong_type_answer").rate is None
