"""Lone surrogates: JSON can spell one (``"\\ud800"``), UTF-8 cannot hold it.

A case id or a schema choice is written out again (worklists as UTF-8, release records and
schemas as canonical JSON, labels in reports), so one with a lone surrogate is refused where
it is read, with its code; before, some commands scored it and others ended in
``internal_error``. A value may hold one (it is never written out as text); an importer writes
it as its escape, which reads back the same. A surrogate *pair* is an ordinary character.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chartscore import GoldField, Prediction, load_schema
from chartscore.cli import main
from chartscore.errors import ChartscoreError, ErrorCode, describe
from chartscore.records._rules import escape_lone_surrogates, is_case_id, is_text

LONE = "\ud800"
PAIR = "\U0001f600"  # JSON's "\ud83d\ude00"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def gold_line(case_id: str, value: object = "former") -> str:
    row = {"case_id": case_id, "field_id": "hx.smoking", "field_type": "categorical"}
    return json.dumps({**row, "value": value}) + "\n"  # ensure_ascii: "\ud800" escaped


def prediction_line(case_id: str, value: object = "former") -> str:
    return json.dumps({"case_id": case_id, "field_id": "hx.smoking", "value": value}) + "\n"


def test_the_rule_tells_text_from_a_lone_surrogate() -> None:
    assert is_text("HF-0001") and is_text("Zoë") and is_text(PAIR)
    for text in (LONE, "HF" + LONE, "\udfff", "a\udc80b"):
        assert not is_text(text)
        assert not is_case_id(text)
    escaped = escape_lone_surrogates(json.dumps("Cough" + LONE + PAIR, ensure_ascii=False))
    assert escaped == '"Cough\\ud800' + PAIR + '"'
    assert json.loads(escaped) == "Cough" + LONE + PAIR
    assert escape_lone_surrogates('"plain"') == '"plain"'


@pytest.mark.parametrize("layout", ["documented", "other key order"])
@pytest.mark.parametrize("where", ["gold", "predictions"])
def test_a_case_id_with_a_lone_surrogate_is_refused_on_every_route(
    tmp_path: Path, where: str, layout: str
) -> None:
    def line(kind: str, case_id: str) -> str:
        text = gold_line(case_id) if kind == "gold" else prediction_line(case_id)
        if layout == "other key order":  # the scanner's route, not the layout's pattern
            text = json.dumps(dict(reversed(json.loads(text).items()))) + "\n"
        return text

    bad = "HF-0001" + LONE
    gold = tmp_path / "gold.jsonl"
    gold.write_text(line("gold", bad if where == "gold" else "HF-0001"), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        line("predictions", bad if where == "predictions" else "HF-0001"), encoding="utf-8"
    )
    expected = (
        f"chartscore: error: invalid_case_id ({where} line 1): "
        f"{describe(ErrorCode.INVALID_CASE_ID)}\n"
    )
    for command in ("score", "worklist"):
        for jobs in ("1", "2"):
            out = tmp_path / f"{command}.out"
            argv = [command, "--gold", str(gold), "--predictions", str(predictions)]
            status, stdout, err = run([*argv, "--jobs", jobs, "--out", str(out)])
            assert (status, stdout, err) == (1, "", expected), (command, jobs)
            assert not out.exists()


def test_the_records_refuse_it_and_take_a_pair() -> None:
    for build in (
        lambda case_id: GoldField(case_id, "hx.smoking", "categorical", "former"),
        lambda case_id: Prediction(case_id, "hx.smoking", "former"),
    ):
        with pytest.raises(ChartscoreError) as raised:
            build("HF" + LONE)
        assert raised.value.code is ErrorCode.INVALID_CASE_ID
        assert build("HF" + PAIR).case_id == "HF" + PAIR
    with pytest.raises(ChartscoreError) as bulk:
        GoldField.from_rows(
            [{"case_id": LONE, "field_id": "f", "field_type": "text", "value": "x"}]
        )
    assert bulk.value.code is ErrorCode.INVALID_CASE_ID


def test_a_pair_is_scored_and_written_to_the_worklist(tmp_path: Path) -> None:
    case_id = "HF" + PAIR
    gold = tmp_path / "gold.jsonl"
    gold.write_text(gold_line(case_id), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(prediction_line(case_id, "never"), encoding="utf-8")
    worklist = tmp_path / "worklist.csv"
    argv = ["worklist", "--gold", str(gold), "--predictions", str(predictions)]
    assert run([*argv, "--out", str(worklist)])[0] == 0
    assert case_id in worklist.read_text(encoding="utf-8")


@pytest.mark.parametrize("option", ["choices", "levels"])
def test_a_schema_choice_or_level_with_a_lone_surrogate_is_refused(
    tmp_path: Path, option: str
) -> None:
    kind = "categorical" if option == "choices" else "ordinal"
    schema = tmp_path / "schema.json"
    field = {"type": kind, option: ["never", "former" + LONE, "current"]}
    schema.write_text(json.dumps({"fields": {"hx.smoking": field}}), encoding="utf-8")
    with pytest.raises(ChartscoreError) as raised:
        load_schema(schema)
    code = (
        ErrorCode.SCHEMA_INVALID_CHOICES if option == "choices" else ErrorCode.SCHEMA_INVALID_LEVELS
    )
    assert raised.value.code is code
    assert raised.value.__context__ is None


def test_an_imported_value_with_a_lone_surrogate_is_written_as_its_escape(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    label = {"start": 0, "end": 1, "text": "n", "labels": ["Cough" + LONE]}
    task = {
        "id": 11,
        "data": {"text": "n"},
        "annotations": [
            {"id": 1, "completed_by": 1, "result": [{"type": "labels", "value": label}]},
            {"id": 2, "completed_by": 2, "result": []},
        ],
    }
    export.write_text(json.dumps([task]), encoding="utf-8")
    gold, predictions = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    argv = ["import", "labelstudio", "--export", str(export), "--gold-annotator", "1"]
    argv += ["--annotator", "2", "--gold-out", str(gold), "--predictions-out", str(predictions)]
    status, _, err = run(argv)
    assert status == 0, err
    data = gold.read_bytes()
    assert b"\\ud800" in data  # valid UTF-8: the escape, not the surrogate's bytes
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert rows[0]["value"] == ["Cough" + LONE]  # read back the same
    # As a choice of a schema written beside it, it is refused, and nothing is written.
    schema = tmp_path / "schema.json"
    gold.unlink()
    predictions.unlink()
    status, _, err = run([*argv, "--schema-out", str(schema)])
    assert status == 1 and err.startswith("chartscore: error: schema_invalid_choices")
    assert not gold.exists() and not schema.exists()
