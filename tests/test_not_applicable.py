"""Not-applicable gold rows (docs/metrics.md, "Not applicable"; docs/formats.md, gold file).

A gold row ``"value": null, "not_applicable": true`` says the field does not apply to the
chart. Every route that reads gold accepts it identically; the row is in no count or
denominator but ``not_applicable_count``, and an answer there is ``not_applicable_answer``,
never ``unanswerable_answer``. A report without such rows has the same bytes as before.
"""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, GoldField, Prediction, Report, score, score_files
from chartscore.cli import main
from chartscore.errors import ErrorCode, InputKind
from chartscore.io.fastpath import fast_gold, scanned_gold
from chartscore.io.jsonl import parse_object
from chartscore.metrics import NOT_APPLICABLE
from chartscore.records.gold_identity import row_text
from chartscore.records.rows import gold_row, plain_row

from helpers import examples, write_jsonl

FIELD = "smoke.packyears"

# The hand-computed table (docs/metrics.md, "Not applicable"): six gold rows of one field.
#   c1 answerable 10, answered 10        c4 not applicable, abstained (null)
#   c2 unanswerable, answered 3          c5 not applicable, no prediction
#   c3 not applicable, answered 0        c6 answerable 5 (not_applicable false), answered 5
GOLD = [
    {"case_id": "c1", "field_id": FIELD, "field_type": "number", "value": 10},
    {"case_id": "c2", "field_id": FIELD, "field_type": "number", "value": None},
    {"case_id": "c3", "field_id": FIELD, "field_type": "number", "value": None,
     "not_applicable": True},
    {"case_id": "c4", "field_id": FIELD, "field_type": "number", "value": None,
     "not_applicable": True},
    {"case_id": "c5", "field_id": FIELD, "field_type": "number", "value": None,
     "not_applicable": True},
    {"case_id": "c6", "field_id": FIELD, "field_type": "number", "value": 5,
     "not_applicable": False},
]  # fmt: skip
PREDICTIONS = [
    {"case_id": "c1", "field_id": FIELD, "value": 10},
    {"case_id": "c2", "field_id": FIELD, "value": 3},
    {"case_id": "c3", "field_id": FIELD, "value": 0},
    {"case_id": "c4", "field_id": FIELD, "value": None},
    {"case_id": "c6", "field_id": FIELD, "value": 5},
]
EXPECTED_COUNTS = {
    "field_count": 3,  # c1, c2, c6: the not-applicable rows are in no count
    "answerable_count": 2,
    "unanswerable_count": 1,
    "missing_count": 0,  # c5 has no prediction, and is not missing
    "answered_count": 3,  # c3's answer is not an answer of the slice
    "abstained_count": 0,  # nor is c4's abstention an abstention
    "not_applicable_count": 3,
    "not_applicable_answer": 1,  # c3
}
EXPECTED_METRICS = {
    "exact_agreement": (2, 2),
    "abstention_correctness": (2, 3),
    "answerable_abstention": (0, 2),
    "unanswerable_answer": (1, 1),  # c2 only: never c3
    "wrong_type_answer": (0, 3),
}


def _report(
    tmp_path: Path, gold: list[dict[str, object]], predictions: list[dict[str, object]]
) -> Report:
    gold_file = write_jsonl(tmp_path / "gold.jsonl", gold)
    predictions_file = write_jsonl(tmp_path / "predictions.jsonl", predictions)
    return score_files(gold_file, predictions_file)


def test_the_hand_computed_table(tmp_path: Path) -> None:
    report = _report(tmp_path, GOLD, PREDICTIONS)
    for part in (report.overall, report.by_field[FIELD], report.by_field_type["number"]):
        found = part.to_dict()
        assert {name: found[name] for name in EXPECTED_COUNTS} == EXPECTED_COUNTS
        for name, (successes, trials) in EXPECTED_METRICS.items():
            metric = part.metric(name)
            assert (metric.success_count, metric.total_count) == (successes, trials), name


def test_records_and_files_give_the_same_report(tmp_path: Path) -> None:
    from_records = score(GoldField.from_rows(GOLD), Prediction.from_rows(PREDICTIONS))
    assert from_records.to_json() == _report(tmp_path, GOLD, PREDICTIONS).to_json()


def test_done_when_an_answer_on_a_not_applicable_field_is_not_an_unanswerable_answer(
    tmp_path: Path,
) -> None:
    # The same chart with the field blank (unanswerable) charges the answer as the safety
    # error; marked not applicable, it is counted apart and unanswerable_answer is unchanged.
    base = [{"case_id": "k1", "field_id": FIELD, "field_type": "number", "value": None}]
    row = {"case_id": "k2", "field_id": FIELD, "field_type": "number", "value": None}
    answers = [
        {"case_id": "k1", "field_id": FIELD, "value": None},
        {"case_id": "k2", "field_id": FIELD, "value": 0},
    ]
    blank = _report(tmp_path, [*base, row], answers).overall
    assert blank.metric("unanswerable_answer").success_count == 1
    marked = _report(tmp_path, [*base, {**row, "not_applicable": True}], answers[:1] + answers[1:])
    without = _report(tmp_path, base, answers[:1]).overall
    unanswerable = marked.overall.metric("unanswerable_answer")
    assert (unanswerable.success_count, unanswerable.total_count) == (0, 1)
    assert marked.overall.counts == without.counts
    assert marked.overall.not_applicable == {"not_applicable_count": 1, "not_applicable_answer": 1}


def test_no_not_applicable_rows_no_new_bytes(tmp_path: Path) -> None:
    # "not_applicable": false everywhere is an ordinary file: the same report, byte for byte,
    # and without the two counts (they are omitted, not written as zeros).
    plain = [{k: v for k, v in row.items() if k != "not_applicable"} for row in GOLD]
    plain = [row for row in plain if row["case_id"] not in ("c3", "c4", "c5")]
    answers = [row for row in PREDICTIONS if row["case_id"] not in ("c3", "c4")]
    flagged = [{**row, "not_applicable": False} for row in plain]
    text = _report(tmp_path, plain, answers).to_json()
    assert _report(tmp_path, flagged, answers).to_json() == text
    assert "not_applicable" not in text


def test_the_report_reads_back_and_refuses_edited_counts(tmp_path: Path) -> None:
    text = _report(tmp_path, GOLD, PREDICTIONS).to_json()
    assert Report.from_json(text).to_json() == text
    document = json.loads(text)
    edits = [
        ("overall", "not_applicable_answer", 2),
        ("overall", "not_applicable_answer", 4),  # more answers than rows
        ("by_field_type", "not_applicable_count", 0),
    ]
    for where, name, value in edits:
        edited = json.loads(text)
        part = edited[where] if where == "overall" else edited[where]["number"]
        part[name] = value
        with pytest.raises(ChartscoreError) as caught:
            Report.from_json(json.dumps(edited))
        assert caught.value.code is ErrorCode.INVALID_REPORT
    one = json.loads(text)
    del one["by_field"][FIELD]["not_applicable_answer"]  # both or neither
    with pytest.raises(ChartscoreError):
        Report.from_json(json.dumps(one))
    assert document["overall"]["not_applicable_count"] == 3


# --- every gold route accepts the key identically ------------------------------------------

FLAGS = st.sampled_from([True, False, None, 1, 0, "true", [], {}, 1.0])
VALUES = st.sampled_from([None, "x", 5, True, ["a"]])


@st.composite
def gold_objects(draw: st.DrawFn) -> dict[str, object]:
    row: dict[str, object] = {
        "case_id": draw(st.sampled_from(["c1", "a:b"])),
        "field_id": "f.x",
        "field_type": draw(st.sampled_from(["text", "number", "multi", "boolean", "bad"])),
        "value": draw(VALUES),
    }
    if draw(st.booleans()):
        row["not_applicable"] = draw(FLAGS)
    if draw(st.integers(0, 5)) == 0:
        del row[draw(st.sampled_from(["value", "field_type"]))]
    return row


def _answer(call: object) -> object:
    try:
        found = call()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        return error.code
    return found


def _record(row: dict[str, object]) -> object:
    record = GoldField.from_dict(row)
    return (record.case_id, record.field_id, record.field_type, record.value)


def _bulk(row: dict[str, object]) -> object:
    record = GoldField.from_rows([row])[0]
    return (record.case_id, record.field_id, record.field_type, record.value)


@settings(max_examples=examples(400))
@given(gold_objects())
def test_every_gold_route_agrees(row: dict[str, object]) -> None:
    text = json.dumps(row)
    strict = _answer(lambda: gold_row(parse_object(text, InputKind.GOLD, 1)))  # type: ignore[arg-type]
    assert _answer(lambda: gold_row(plain_row(dict(row)))) == strict
    for route in (fast_gold, scanned_gold):
        fast = route(text)
        if fast is not None:
            assert fast == strict and type(fast[3]) is type(strict[3])  # type: ignore[index]
    # The records check the value against its type as well: they agree where it is valid.
    record, bulk = _answer(lambda: _record(row)), _answer(lambda: _bulk(row))
    assert record == bulk
    if not isinstance(strict, ErrorCode):
        assert record == strict or record is ErrorCode.INVALID_GOLD_VALUE
    elif strict is not ErrorCode.INVALID_GOLD_VALUE:
        assert record == strict
    flag = row.get("not_applicable", False)
    if not isinstance(strict, ErrorCode):
        assert (strict[3] is NOT_APPLICABLE) == (flag is True)  # type: ignore[index]
        assert flag is True or flag is False
        assert flag is not True or row["value"] is None


def test_the_marker_pickles_as_itself_and_records_say_so() -> None:
    assert pickle.loads(pickle.dumps(NOT_APPLICABLE)) is NOT_APPLICABLE
    record = GoldField.from_dict({**GOLD[2]})
    assert record.not_applicable and record.value is NOT_APPLICABLE
    assert pickle.loads(pickle.dumps(record)).not_applicable
    assert not GoldField.from_dict(GOLD[1]).not_applicable
    assert "c3" not in repr(record)
    # The ledger's keyed identity tells a not-applicable row from a blank one.
    assert row_text("c", FIELD, "number", NOT_APPLICABLE) != row_text("c", FIELD, "number", None)


CANARY = "CANARY-7f3e"


@pytest.mark.parametrize(
    ("flag", "value"), [(True, CANARY), ("yes", None), (1, None), (CANARY, None), (None, None)]
)
def test_a_bad_flag_is_refused_with_a_code_and_nothing_of_the_row(
    tmp_path: Path, flag: object, value: object
) -> None:
    row = {"case_id": CANARY, "field_id": FIELD, "field_type": "text", "value": value,
           "not_applicable": flag}  # fmt: skip
    gold = write_jsonl(tmp_path / "gold.jsonl", [row])
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"case_id": CANARY, "field_id": FIELD,
                                                      "value": None}])  # fmt: skip
    for call in (lambda: GoldField.from_dict(row), lambda: score_files(gold, predictions)):
        with pytest.raises(ChartscoreError) as caught:
            call()
        error = caught.value
        assert error.code is ErrorCode.INVALID_NOT_APPLICABLE
        assert error.__context__ is None and error.__cause__ is None
        assert CANARY not in str(error) and CANARY not in repr(error)


def test_duplicates_across_the_two_kinds_of_gold_row(tmp_path: Path) -> None:
    ordinary = {"case_id": "c", "field_id": FIELD, "field_type": "number", "value": None}
    marked = {**ordinary, "not_applicable": True}
    answer = {"case_id": "c", "field_id": FIELD, "value": 1}
    for gold in ([ordinary, marked], [marked, ordinary], [marked, marked]):
        with pytest.raises(ChartscoreError) as caught:
            _report(tmp_path, gold, [answer])
        assert caught.value.code is ErrorCode.DUPLICATE_GOLD_KEY
    with pytest.raises(ChartscoreError) as caught:
        _report(tmp_path, [marked], [answer, answer])
    assert caught.value.code is ErrorCode.DUPLICATE_PREDICTION_KEY


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue() + err.getvalue()


def test_share_compare_and_partials_refuse_not_applicable_rows(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", [{**row, "case_id": CANARY + row["case_id"]}
                                                 for row in GOLD])  # type: ignore[operator]  # fmt: skip
    answers = write_jsonl(
        tmp_path / "p.jsonl",
        [{**row, "case_id": CANARY + row["case_id"]} for row in PREDICTIONS],  # type: ignore[operator]
    )
    runs = [
        ["share", "--gold", str(gold), "--predictions", str(answers)],
        ["compare", "--gold", str(gold), "--baseline", str(answers), "--candidate", str(answers)],
        ["score", "--gold", str(gold), "--predictions", str(answers),
         "--partial-out", str(tmp_path / "partial.json")],
    ]  # fmt: skip
    for argv in runs:
        status, text = _run(argv)
        assert status != 0
        assert "not_applicable_unsupported" in text
        assert CANARY not in text and str(tmp_path) not in text
    assert not (tmp_path / "partial.json").exists()
    status, text = _run(["score", "--gold", str(gold), "--predictions", str(answers)])
    assert status == 0 and CANARY not in text
