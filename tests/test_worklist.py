"""The adjudication worklist: a row per disagreement, no value, inside only, never a report."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import random
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import (
    STDIN,
    ChartscoreError,
    ErrorCode,
    GoldField,
    Prediction,
    Report,
    Schema,
    score,
    worklist,
    worklist_files,
    write_worklist,
)
from chartscore.cli import main
from chartscore.documents import load_document
from chartscore.documents.comparison import Comparison
from chartscore.documents.shared_report import SharedReport
from chartscore.scoring.agreement import (
    ANSWERABLE,
    ANSWERED,
    MATCHED_ITEMS,
    MISSING,
    NORMALIZED,
    TOLERANCE,
    WRONG_TYPE,
)
from chartscore.scoring.disagreements import OUTCOME_CLASSES, outcome_class

from helpers import examples, write_jsonl

SCHEMA = {
    "fields": {
        "vitals.weight": {"type": "number", "tolerance": "0.5"},
        "hx.symptoms": {"type": "multi", "choices": ["cough", "fever", "rash"]},
    }
}

# One gold row per outcome class (and rows that agree), with the class each must get.
CASES = [
    # (gold, prediction or None for missing, expected class or None for agreement)
    (GoldField("c1", "hx.smoking", "categorical", "former"), " Former ", None),
    (GoldField("c1", "vitals.weight", "number", "70"), "70.4", "within_tolerance"),
    (GoldField("c1", "hx.symptoms", "multi", ["cough", "fever"]), ["cough"], "partial_match"),
    (GoldField("c2", "hx.smoking", "categorical", "former"), "never", "wrong_answer"),
    (GoldField("c2", "vitals.weight", "number", "70"), "heavy", "wrong_type"),
    (GoldField("c2", "hx.symptoms", "multi", ["cough"]), ["rash"], "wrong_answer"),
    (GoldField("c3", "hx.smoking", "categorical", None), "former", "answered_unanswerable"),
    (GoldField("c3", "vitals.weight", "number", "70"), None, "abstained_answerable"),
    (GoldField("c3", "hx.symptoms", "multi", None), None, None),  # both: cannot answer
    (GoldField("c4", "hx.smoking", "categorical", "never"), ..., "missing"),
    (GoldField("c4", "vitals.weight", "number", None), ..., "missing"),
    (GoldField("c4", "hx.symptoms", "multi", []), [], None),
]
GOLD = [gold for gold, _, _ in CASES]
PREDICTIONS = [
    Prediction(gold.case_id, gold.field_id, answer)
    for gold, answer, _ in CASES
    if answer is not ...
]
EXPECTED = sorted(
    (gold.case_id, gold.field_id, found) for gold, _, found in CASES if found is not None
)


def test_every_class_by_example() -> None:
    found = worklist(GOLD, PREDICTIONS, schema=SCHEMA)
    assert list(found.rows) == EXPECTED
    assert set(found.counts()) == set(OUTCOME_CLASSES)
    assert found.counts()["missing"] == 2
    assert repr(found) == "Worklist(<9 rows hidden>)"


def test_outcome_bits_to_classes() -> None:
    assert outcome_class(MISSING) == "missing"
    assert outcome_class(MISSING | ANSWERABLE) == "missing"
    assert outcome_class(0) is None  # an unanswerable field, abstained
    assert outcome_class(ANSWERABLE) == "abstained_answerable"
    assert outcome_class(ANSWERED) == "answered_unanswerable"
    assert outcome_class(ANSWERED | WRONG_TYPE) == "answered_unanswerable"
    assert outcome_class(ANSWERED | ANSWERABLE | WRONG_TYPE) == "wrong_type"
    assert outcome_class(ANSWERED | ANSWERABLE | NORMALIZED | TOLERANCE) is None
    assert outcome_class(ANSWERED | ANSWERABLE | TOLERANCE) == "within_tolerance"
    assert outcome_class(ANSWERED | ANSWERABLE | MATCHED_ITEMS) == "partial_match"
    assert outcome_class(ANSWERED | ANSWERABLE) == "wrong_answer"


values = st.one_of(st.none(), st.sampled_from(["a", "b", " A ", "c"]))


@settings(max_examples=examples(100))
@given(st.lists(st.tuples(values, st.one_of(st.just(...), values)), min_size=1, max_size=12))
def test_the_worklist_holds_exactly_the_rows_the_report_counts_as_not_agreeing(
    rows: list[tuple[str | None, object]],
) -> None:
    gold = [
        GoldField(f"c{i}", "hx.code", "categorical", value) for i, (value, _) in enumerate(rows)
    ]
    answers = [
        Prediction(f"c{i}", "hx.code", answer)
        for i, (_, answer) in enumerate(rows)
        if answer is not ...
    ]
    found = worklist(gold, answers)
    part = score(gold, answers).overall
    counts = found.counts()
    assert counts["missing"] == part.count("missing_count")
    assert counts["abstained_answerable"] == part.metric("answerable_abstention").success_count
    assert counts["answered_unanswerable"] == part.metric("unanswerable_answer").success_count
    agreeing = (
        part.metric("normalized_agreement").success_count
        + part.metric("abstention_correctness").success_count
        - (part.count("answered_count") - part.metric("unanswerable_answer").success_count)
    )
    assert len(found.rows) == part.count("field_count") - agreeing
    assert list(found.rows) == sorted(set(found.rows))


def test_the_file_mode_first_line_and_csv(tmp_path: Path) -> None:
    gold = [GoldField('case,"1"\n', "hx.smoking", "categorical", "former")]
    found = worklist(gold, [])
    out = tmp_path / "worklist.csv"
    write_worklist(found, out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["worklist.csv"]  # no temporary file left
    text = out.read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    assert first.startswith("# chartscore.worklist 1: INSIDE ONLY.")
    assert list(csv.reader(io.StringIO(rest))) == [
        ["case_id", "field_id", "outcome"],
        ['case,"1"\n', "hx.smoking", "missing"],
    ]
    with pytest.raises(ChartscoreError) as caught:
        write_worklist(found, STDIN)
    assert caught.value.code is ErrorCode.INVALID_PATH
    with pytest.raises(ChartscoreError) as caught:
        write_worklist(found.rows, out)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.USAGE


def test_any_input_order_gives_the_same_bytes(tmp_path: Path) -> None:
    expected = worklist(GOLD, PREDICTIONS, schema=SCHEMA).to_csv()
    shuffled = random.Random(7)
    for _ in range(3):
        gold, answers = list(GOLD), list(PREDICTIONS)
        shuffled.shuffle(gold)
        shuffled.shuffle(answers)
        assert worklist(gold, answers, schema=SCHEMA).to_csv() == expected


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    gold = tmp_path / "gold.jsonl"
    predictions = tmp_path / "predictions.jsonl"
    write_jsonl(
        gold,
        [
            {
                "case_id": row.case_id,
                "field_id": row.field_id,
                "field_type": row.field_type.value,
                "value": row.value,
            }
            for row in GOLD
        ],
    )
    write_jsonl(
        predictions,
        [{"case_id": a.case_id, "field_id": a.field_id, "value": a.value} for a in PREDICTIONS],
    )
    out = tmp_path / "worklist.csv"
    write_worklist(worklist_files(gold, predictions, schema=Schema.from_dict(SCHEMA)), out)
    gates = tmp_path / "gates.toml"
    gates.write_text('[[gate]]\nslice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0\n')
    packed = tmp_path / "worklist.csv.gz"
    packed.write_bytes(gzip.compress(out.read_bytes()))
    return {
        "gold": gold,
        "predictions": predictions,
        "worklist": out,
        "gates": gates,
        "packed": packed,
    }


def test_files_give_the_same_worklist(files: dict[str, Path]) -> None:
    assert files["worklist"].read_bytes() == worklist(GOLD, PREDICTIONS, schema=SCHEMA).to_csv()


def _cli(argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is None:
        return main(argv, stdout=out, stderr=err), out.getvalue(), err.getvalue()
    read, write = os.pipe()  # chartscore reads standard input from descriptor 0
    os.write(write, stdin)
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        return main(argv, stdout=out, stderr=err), out.getvalue(), err.getvalue()
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["render", "{worklist}", "--format", "table"], "report"),
        (["render", "{packed}", "--format", "html"], "report"),
        (["gate", "{worklist}", "--gates", "{gates}"], "report"),
        (["audit", "{worklist}"], "report"),
        (["share", "--gold", "{worklist}", "--predictions", "{predictions}"], "gold line 1"),
        (
            ["share", "--gold", "{gold}", "--predictions", "{worklist}", "--jobs", "1"],
            "predictions line 1",
        ),
        (
            ["score", "--gold", "{gold}", "--predictions", "{worklist}", "--jobs", "2"],
            "predictions line 1",
        ),
        (
            [
                "compare",
                "--gold",
                "{gold}",
                "--baseline",
                "{predictions}",
                "--candidate",
                "{worklist}",
            ],
            "candidate line 1",
        ),
    ],
)
def test_every_reader_refuses_the_worklist(
    argv: list[str], where: str, files: dict[str, Path]
) -> None:
    filled = [part.format(**files) for part in argv]
    if "{schema}" not in argv and argv[0] in ("share", "score", "compare"):
        schema = files["gold"].parent / "schema.json"
        schema.write_text(json.dumps(SCHEMA))
        filled += ["--schema", str(schema)]
    status, out, err = _cli(filled)
    assert (status, out) == (1, "")
    assert err == (
        f"chartscore: error: inside_only_worklist ({where}): an inside-only adjudication "
        "worklist: patient-level, never a report\n"
    )


def test_library_readers_refuse_the_worklist(files: dict[str, Path]) -> None:
    data = files["worklist"].read_bytes()
    for read in (
        Report.from_json,
        Comparison.from_json,
        SharedReport.from_json,
        load_document,
    ):
        for text in (data, data.decode(), data[:10] + data[10:]):
            with pytest.raises(ChartscoreError) as caught:
                read(text)  # type: ignore[arg-type]
            assert caught.value.code is ErrorCode.INSIDE_ONLY_WORKLIST
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(b"# chartscore.worklis")  # a cut-off first line is no document either
    assert caught.value.code is ErrorCode.INVALID_REPORT
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(b"# chartscore report")
    assert caught.value.code is ErrorCode.INVALID_REPORT


def test_a_worklist_on_standard_input_is_refused(files: dict[str, Path]) -> None:
    data = files["worklist"].read_bytes()
    status, _, err = _cli(["render", "-", "--format", "table"], stdin=data)
    assert status == 1 and "inside_only_worklist (report)" in err


def test_cli_writes_the_file_and_only_counts(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "again.csv"
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    argv = ["worklist", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    argv += ["--schema", str(schema)]
    status, stdout, err = _cli([*argv, "--out", str(out)])
    assert (status, stdout) == (0, "")
    assert err == (
        "chartscore: worklist: 9 disagreements (2 missing, 1 abstained_answerable, "
        "1 answered_unanswerable, 1 wrong_type, 2 wrong_answer, 1 partial_match, "
        "1 within_tolerance); patient-level, inside only: never share it\n"
    )
    assert out.read_bytes() == files["worklist"].read_bytes()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    status, _, err = _cli([*argv, "--out", "-"])
    assert status == 2
    assert "--out must name a file: a worklist never goes to stdout" in err
    status, _, err = _cli([*argv, "--out", str(files["gold"])])
    assert status == 1 and "output_is_input" in err
