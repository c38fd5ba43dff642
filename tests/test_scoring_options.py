"""Scoring options from the usability issue: predictions beyond the gold sample, unused schema
entries, and the report key they add."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from chartscore import (
    ChartscoreError,
    ErrorCode,
    GoldField,
    Prediction,
    Schema,
    compare_files,
    score,
    score_files,
    share,
    share_files,
)

from helpers import write_jsonl

GOLD = [
    GoldField("c1", "hx.smoking", "categorical", "former"),
    GoldField("c2", "hx.smoking", "categorical", None),
]
GOLD_ROW = {"case_id": "c1", "field_id": "hx.smoking", "field_type": "categorical", "value": "x"}


def test_extra_predictions_are_refused_by_default() -> None:
    with pytest.raises(ChartscoreError) as caught:
        score(GOLD, [Prediction("c3", "hx.smoking", "never")])
    assert caught.value.code is ErrorCode.UNKNOWN_PREDICTION_KEY
    report = json.loads(score(GOLD, []).to_json())
    assert "ignored_prediction_count" not in report


def test_ignored_extra_predictions_are_counted_and_change_nothing_else() -> None:
    kept = [Prediction("c1", "hx.smoking", "Former"), Prediction("c2", "hx.smoking", None)]
    extra = [
        Prediction("c3", "hx.smoking", "never"),  # a case outside the gold sample
        Prediction("c1", "dx.other", "x"),  # a field gold does not have
        Prediction("c3", "hx.smoking", "again"),  # a repeat among ignored keys is not checked
    ]
    plain = json.loads(score(GOLD, kept).to_json())
    report = json.loads(
        score(GOLD, [extra[0], *kept, *extra[1:]], extra_predictions="ignore").to_json()
    )
    assert report.pop("ignored_prediction_count") == 3
    assert report == plain
    zero = json.loads(score(GOLD, kept, extra_predictions="ignore").to_json())
    assert zero["ignored_prediction_count"] == 0


def test_duplicates_among_kept_predictions_are_still_refused() -> None:
    answers = [Prediction("c1", "hx.smoking", "a"), Prediction("c1", "hx.smoking", "b")]
    with pytest.raises(ChartscoreError) as caught:
        score(GOLD, answers, extra_predictions="ignore")
    assert caught.value.code is ErrorCode.DUPLICATE_PREDICTION_KEY


class _Word(str):
    """A str subclass: equal to the right word, but not exactly a str."""


BAD_OPTIONS = [
    # (option, value): each refused with usage, by every entry point that takes it.
    ("extra_predictions", "skip"),
    ("extra_predictions", "Error"),
    ("extra_predictions", None),
    ("extra_predictions", _Word("ignore")),
    ("strict_schema", 1),
    ("strict_schema", 0),
    ("strict_schema", None),
    ("strict_schema", "true"),
]


@pytest.mark.parametrize(("option", "value"), BAD_OPTIONS)
def test_options_that_are_not_exactly_their_values_are_usage(
    tmp_path: Path, option: str, value: object
) -> None:
    gold_path = write_jsonl(tmp_path / "gold.jsonl", [GOLD_ROW])
    calls: list[Callable[..., object]] = [
        lambda **bad: score(GOLD, [], **bad),
        lambda **bad: share(GOLD, [], **bad),
        lambda **bad: score_files(gold_path, gold_path, **bad),
        lambda **bad: share_files(gold_path, gold_path, **bad),
    ]
    for call in calls:
        with pytest.raises(ChartscoreError) as caught:
            call(**{option: value})
        assert caught.value.code is ErrorCode.USAGE
        assert caught.value.__context__ is None and caught.value.__cause__ is None


@pytest.mark.parametrize("value", [1, 0, None, "yes"])
def test_file_options_that_are_not_exactly_their_values_are_usage(
    tmp_path: Path, value: object
) -> None:
    gold_path = write_jsonl(tmp_path / "gold.jsonl", [GOLD_ROW])
    for call in (score_files, share_files):
        with pytest.raises(ChartscoreError) as caught:
            call(gold_path, gold_path, parallel=value)
        assert caught.value.code is ErrorCode.USAGE
    not_callable = value if value is not None else "print"
    for call in (score_files, share_files, compare_files):
        arguments = (gold_path,) * (3 if call is compare_files else 2)
        with pytest.raises(ChartscoreError) as caught:
            call(*arguments, progress=not_callable)
        assert caught.value.code is ErrorCode.USAGE


SCHEMA = {
    "fields": {
        "hx.smoking": {"type": "categorical"},
        "echo.lvf": {"type": "number", "tolerance": "5"},  # a typo of echo.lvef
        "aa.unused": {"type": "text"},
    }
}


def test_strict_schema_names_the_first_unused_field() -> None:
    assert score(GOLD, [], schema=SCHEMA).by_field.keys() == {"hx.smoking"}
    with pytest.raises(ChartscoreError) as caught:
        score(GOLD, [], schema=SCHEMA, strict_schema=True)
    assert caught.value.code is ErrorCode.SCHEMA_FIELD_UNUSED
    assert caught.value.field_id == "aa.unused"
    assert str(caught.value) == "schema_field_unused (schema field aa.unused)"
    used = {"fields": {"hx.smoking": {"type": "categorical"}}}
    assert score(GOLD, [], schema=used, strict_schema=True).overall.count("field_count") == 2


@pytest.mark.parametrize("parallel", [False, True])
def test_files_route_ignores_extras_and_checks_the_schema(tmp_path, parallel: bool) -> None:
    from chartscore import score_files

    from helpers import write_jsonl

    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {
                "case_id": g.case_id,
                "field_id": g.field_id,
                "field_type": "categorical",
                "value": g.value,
            }
            for g in GOLD
        ],
    )
    predictions = write_jsonl(
        tmp_path / "predictions.jsonl",
        [
            {"case_id": "c9", "field_id": "hx.smoking", "value": "x"},
            {"case_id": "c1", "field_id": "hx.smoking", "value": "former"},
        ],
    )
    report = score_files(gold, predictions, extra_predictions="ignore", parallel=parallel)
    assert report.ignored_prediction_count == 1
    assert report.overall.metric("exact_agreement").success_count == 1
    with pytest.raises(ChartscoreError) as caught:
        score_files(gold, predictions, parallel=parallel)
    assert (caught.value.code, caught.value.line) == (ErrorCode.UNKNOWN_PREDICTION_KEY, 1)
    with pytest.raises(ChartscoreError) as caught:
        score_files(
            gold,
            predictions,
            schema=Schema.from_dict(SCHEMA),
            strict_schema=True,
            extra_predictions="ignore",
            parallel=parallel,
        )
    assert caught.value.code is ErrorCode.SCHEMA_FIELD_UNUSED
