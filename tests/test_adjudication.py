"""Adjudication back into gold: the adjudicated column, import adjudication, the ledger link.

docs/worklist.md ("Adjudication back into gold"): ``worklist --adjudication-column`` adds
an empty last column; an abstractor fills it; ``import adjudication`` applies the answers
to the old gold and writes the new gold atomically; with ``--ledger``, a line links the
new gold's keyed identity to the old one's.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import stat
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import chartscore.io.output as output_module
from chartscore import ChartscoreError, ErrorCode, GoldField, score_files, worklist_files
from chartscore.cli import main
from chartscore.io.ledger_file import load_ledger_key, read_ledger
from chartscore.ledger import AdjudicationEntry, ledger_table
from chartscore.records.gold_identity import gold_identity
from chartscore.workflows.adjudication import adjudicate_files, adjudication_entry
from ledger_data import write_key
from test_privacy import NO_SHRINK, Canary, assert_clean_error, assert_clean_text, canaries

from helpers import examples, write_jsonl

GOLD = [
    {"case_id": "c-001", "field_id": "hx.smoking", "field_type": "categorical", "value": "former"},
    {"case_id": "c-001", "field_id": "vitals.weight", "field_type": "number", "value": 70},
    {"case_id": "c-002", "field_id": "hx.smoking", "field_type": "categorical", "value": "former"},
    {"case_id": "c-002", "field_id": "vitals.weight", "field_type": "number", "value": 82},
    {"case_id": "c-003", "field_id": "hx.smoking", "field_type": "categorical", "value": None},
    {"case_id": "c-003", "field_id": "vitals.weight", "field_type": "number", "value": 64},
]
PREDICTIONS = [
    {"case_id": "c-001", "field_id": "hx.smoking", "value": "Former"},
    {"case_id": "c-001", "field_id": "vitals.weight", "value": Decimal("70.4")},
    {"case_id": "c-002", "field_id": "hx.smoking", "value": "never"},
    {"case_id": "c-002", "field_id": "vitals.weight", "value": None},
    {"case_id": "c-003", "field_id": "hx.smoking", "value": "current"},
]
SCHEMA = {
    "fields": {
        "vitals.weight": {"type": "number", "tolerance": "0.5"},
        "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
    }
}
MARKER = "# chartscore.worklist 1: INSIDE ONLY. Patient-level adjudication list (case ids); "
HEADER = "case_id,field_id,outcome,adjudicated"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return {
        "gold": write_jsonl(tmp_path / "gold.jsonl", GOLD),
        "predictions": write_jsonl(tmp_path / "predictions.jsonl", PREDICTIONS),
        "schema": schema,
        "dir": tmp_path,
    }


def write_worklist(files: dict[str, Path], name: str = "worklist.csv") -> Path:
    out = files["dir"] / name
    argv = ["worklist", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    argv += ["--schema", str(files["schema"]), "--adjudication-column"]
    status, _, err = run([*argv, "--out", str(out)])
    assert status == 0, err
    return out


def fill(worklist: Path, answers: dict[tuple[str, str], str], out: Path | None = None) -> Path:
    """The worklist with some adjudicated cells filled, as a spreadsheet would save it."""
    with worklist.open(encoding="utf-8", newline="") as stream:
        first = stream.readline()
        rows = list(csv.reader(stream))
    for row in rows[1:]:
        row[3] = answers.get((row[0], row[1]), row[3])
    out = out or worklist.with_name("done.csv")
    with out.open("w", encoding="utf-8", newline="") as stream:
        stream.write(first)
        csv.writer(stream, lineterminator="\n").writerows(rows)
    return out


def adjudicate(files: dict[str, Path], done: Path, *extra: str) -> tuple[int, str, str]:
    argv = ["import", "adjudication", "--gold", str(files["gold"]), "--worklist", str(done)]
    argv += ["--schema", str(files["schema"]), "--gold-out", str(files["dir"] / "new.jsonl")]
    return run([*argv, *extra])


# --- the column -------------------------------------------------------------------------


def test_the_column_is_optional_and_empty(files: dict[str, Path]) -> None:
    plain = files["dir"] / "plain.csv"
    argv = ["worklist", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    argv += ["--schema", str(files["schema"])]
    assert run([*argv, "--out", str(plain)])[0] == 0
    found = worklist_files(files["gold"], files["predictions"], schema=files["schema"])
    assert plain.read_bytes() == found.to_csv()  # default off: the same bytes as before
    out = write_worklist(files)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == plain.read_text(encoding="utf-8").splitlines()[0]
    assert lines[0].startswith(MARKER)
    assert lines[1] == HEADER
    assert lines[2:] == [line + "," for line in plain.read_text().splitlines()[2:]]
    assert out.read_bytes() == found.to_csv(adjudication_column=True)
    with pytest.raises(ChartscoreError) as caught:
        found.to_csv(adjudication_column=1)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.USAGE
    # Still refused by every reader of documents and JSON Lines.
    status, _, err = run(["score", "--gold", str(out), "--predictions", str(files["predictions"])])
    assert status == 1 and "inside_only_worklist (gold line 1)" in err


# --- the round trip ---------------------------------------------------------------------


def test_round_trip_changes_exactly_the_expected_counts(files: dict[str, Path]) -> None:
    before = score_files(files["gold"], files["predictions"], schema=files["schema"])
    done = fill(
        write_worklist(files),
        {
            ("c-001", "vitals.weight"): "70",  # confirmed: gold was 70
            ("c-002", "hx.smoking"): " Never ",  # the system was right
            ("c-003", "hx.smoking"): "current",  # the chart did answer it
            ("c-003", "vitals.weight"): "NULL",  # the chart cannot answer it
        },  # c-002 vitals.weight left blank: no change
    )
    status, out, err = adjudicate(files, done)
    assert (status, out) == (0, "")
    assert err == (
        "chartscore: adjudication: 5 worklist rows: 3 changed, 1 confirmed (as gold was), "
        "1 left blank (no change)\n"
        "chartscore: adjudication: changed: 1 value changed, 1 now unanswerable, "
        "1 now answerable; by field type: 2 categorical, 1 number; by outcome class: "
        "1 missing, 1 answered_unanswerable, 1 wrong_answer\n"
        "chartscore: gold: 6 rows (the new version)\n"
    )
    new = files["dir"] / "new.jsonl"
    assert stat.S_IMODE(new.stat().st_mode) == 0o600
    rows = [json.loads(line) for line in new.read_text(encoding="utf-8").splitlines()]
    values = {(row["case_id"], row["field_id"]): row["value"] for row in rows}
    assert values == {
        ("c-001", "hx.smoking"): "former",
        ("c-001", "vitals.weight"): 70,
        ("c-002", "hx.smoking"): "Never",
        ("c-002", "vitals.weight"): 82,
        ("c-003", "hx.smoking"): "current",
        ("c-003", "vitals.weight"): None,
    }
    after = score_files(new, files["predictions"], schema=files["schema"])
    old, now = before.overall, after.overall
    assert now.counts["field_count"] == old.counts["field_count"] == 6
    assert now.counts["missing_count"] == old.counts["missing_count"] == 1
    agreement = old.metrics["normalized_agreement"], now.metrics["normalized_agreement"]
    assert [(m.success_count, m.total_count) for m in agreement] == [(1, 5), (3, 5)]
    unanswerable = old.metrics["unanswerable_answer"], now.metrics["unanswerable_answer"]
    assert [(m.success_count, m.total_count) for m in unanswerable] == [(1, 1), (0, 1)]
    abstention = old.metrics["abstention_correctness"], now.metrics["abstention_correctness"]
    assert [(m.success_count, m.total_count) for m in abstention] == [(3, 6), (4, 6)]
    # The new worklist lists only what is still in disagreement.
    again = worklist_files(new, files["predictions"], schema=files["schema"])
    assert [row[:2] for row in again.rows] == [
        ("c-001", "vitals.weight"),
        ("c-002", "vitals.weight"),
        ("c-003", "vitals.weight"),
    ]


TYPED = [
    # (field type, schema spec or None, old value, typed answer, new value)
    ("number", None, 70, "70.40", Decimal("70.40")),
    ("number", None, 70, " -3 ", -3),
    ("date", None, "2023-04-17", "2023-04-18", "2023-04-18"),
    ("boolean", None, True, "No", False),
    ("boolean", None, None, "yes", True),
    ("text", None, "left arm", "right  arm", "right  arm"),
    (
        "multi",
        {"type": "multi", "choices": ["cough", "fever"]},
        ["cough"],
        "fever | cough",
        {"cough", "fever"},
    ),
    ("multi", None, ["cough"], "[]", set()),
    ("ordinal", {"type": "ordinal", "levels": [1, 2, 3]}, 1, "3", 3),
    ("ordinal", {"type": "ordinal", "levels": ["mild", "severe"]}, "mild", "SEVERE", "severe"),
    ("categorical", None, "a", "null", None),
]


@pytest.mark.parametrize(("kind", "spec", "old", "typed", "expected"), TYPED)
def test_each_type_is_read_as_an_import_reads_a_gold_cell(
    tmp_path: Path,
    kind: str,
    spec: dict[str, object] | None,
    old: object,
    typed: str,
    expected: object,
) -> None:
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [{"case_id": "k", "field_id": "f.x", "field_type": kind, "value": old}],
    )
    schema = None
    if spec is not None:
        schema = tmp_path / "schema.json"
        schema.write_text(json.dumps({"fields": {"f.x": spec}}), encoding="utf-8")
    done = tmp_path / "done.csv"
    cell = '"' + typed.replace('"', '""') + '"'
    done.write_text(f"{MARKER}never share.\n{HEADER}\nk,f.x,wrong_answer,{cell}\n", "utf-8")
    result = adjudicate_files(gold, done, schema=schema)
    value = result.gold[0].value
    if kind == "multi":
        assert value == frozenset(expected)  # type: ignore[arg-type]
    else:
        assert value == expected and type(value) is type(expected)
    assert result.counts["changed"] == 1 and result.changed_by_type == {kind: 1}


def test_a_spreadsheet_save_is_read(files: dict[str, Path]) -> None:
    """A byte order mark, CRLF, the marker quoted and padded, `;` as delimiter, quoted cells."""
    done = files["dir"] / "saved.csv"
    text = (
        '\ufeff"' + MARKER + 'never share, upload or attach it.";;;\r\n'
        "case_id;field_id;outcome;adjudicated\r\n"
        "c-002;hx.smoking;wrong_answer;never\r\n"
        '"c-003";hx.smoking;answered_unanswerable;"cur\r\nrent"\r\n'
    )
    done.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(ChartscoreError) as caught:  # a line end inside the cell: not a choice
        adjudicate_files(files["gold"], done, schema=files["schema"])
    assert str(caught.value).startswith("invalid_cell (worklist line 4 column 4)")
    done.write_text(text.replace("cur\r\nrent", "current"), encoding="utf-8", newline="")
    result = adjudicate_files(files["gold"], done, schema=files["schema"])
    assert result.counts["changed"] == 2 and result.counts["worklist_rows"] == 2


# --- refusals ---------------------------------------------------------------------------


def refused(files: dict[str, Path], text: str) -> ChartscoreError:
    done = files["dir"] / "refused.csv"
    done.write_text(text, encoding="utf-8")
    new = files["dir"] / "new.jsonl"
    status, out, err = adjudicate(files, done)
    assert (status, out) == (1, "") and not new.exists()
    with pytest.raises(ChartscoreError) as caught:
        adjudicate_files(files["gold"], done, schema=files["schema"])
    assert err.startswith(f"chartscore: error: {caught.value}")
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    return caught.value


ROW = f"{MARKER}never share.\n{HEADER}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "case_id,field_id,outcome,adjudicated\nc-001,hx.smoking,missing,\n",
            "not_a_worklist (worklist line 1)",
        ),
        ("", "not_a_worklist (worklist line 1)"),
        (
            f"{MARKER}x\ncase_id,field_id,outcome\nc-001,hx.smoking,missing\n",
            "not_a_worklist (worklist line 2)",
        ),
        (f"{MARKER}x\n", "invalid_table (worklist line 2)"),
        (ROW + "c-009,hx.smoking,missing,never\n", "worklist_row_not_in_gold (worklist line 3)"),
        (ROW + "c-001,hx.other,missing,\n", "worklist_row_not_in_gold (worklist line 3)"),
        (
            ROW + "c-001,hx.smoking,missing,\n\nc-001,hx.smoking,missing,never\n",
            "duplicate_worklist_row (worklist line 5)",
        ),
        (ROW + "c-001,vitals.weight,missing,heavy\n", "invalid_cell (worklist line 3 column 4)"),
        (ROW + "c-001,vitals.weight,missing,70kg\n", "invalid_cell (worklist line 3 column 4)"),
        (ROW + "c-001,hx.smoking,missing,sometimes\n", "invalid_cell (worklist line 3 column 4)"),
        (ROW + "c-001,hx.smoking,agree,never\n", "invalid_cell (worklist line 3 column 3)"),
        (ROW + "c-001,hx.smoking,missing\n", "ragged_row (worklist line 3)"),
        (ROW + 'c-001,hx.smoking,missing,"never\n', "invalid_table (worklist line 3)"),
    ],
)
def test_refusals_are_located_and_write_nothing(
    files: dict[str, Path], text: str, message: str
) -> None:
    error = refused(files, text)
    assert str(error) == message


def test_a_date_not_in_iso_form_and_a_broken_gold_are_refused(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [{"case_id": "k", "field_id": "f.day", "field_type": "date", "value": "2023-04-17"}],
    )
    done = tmp_path / "done.csv"
    done.write_text(f"{ROW}k,f.day,wrong_answer,02/24/2023\n", encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        adjudicate_files(gold, done)
    assert str(caught.value).startswith("invalid_cell (worklist line 3 column 4)")
    gold.write_text(gold.read_text() * 2, encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        adjudicate_files(gold, done)
    assert str(caught.value).startswith("duplicate_gold_key (gold line 2)")


def test_a_report_or_csv_given_as_gold_gets_score_s_hint(files: dict[str, Path]) -> None:
    # It said only "missing_key (gold line 1, key case_id)" or "invalid_json (gold line 1)".
    done = write_worklist(files)
    report = files["dir"] / "report.json"
    report.write_text(score_files(files["gold"], files["predictions"]).to_json())
    table = files["dir"] / "gold.csv"
    table.write_text("case_id,field_id,value\nc-001,hx.smoking,never\n", encoding="utf-8")
    expected = {
        report: "missing_key (gold line 1, key case_id; this looks like a chartscore document "
        "(a report): gold and predictions are JSON Lines of rows)",
        table: "invalid_json (gold line 1; JSON Lines expected: one JSON object per line, not "
        "CSV or a JSON array)",
    }
    for gold, message in expected.items():
        with pytest.raises(ChartscoreError) as caught:
            adjudicate_files(gold, done)
        assert str(caught.value) == message
        assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert not (files["dir"] / "new.jsonl").exists()


def test_outputs_are_checked_before_anything_is_read(files: dict[str, Path]) -> None:
    done = fill(write_worklist(files), {("c-002", "hx.smoking"): "never"})
    argv = ["import", "adjudication", "--gold", str(files["gold"]), "--worklist", str(done)]
    for target, expected in ((files["gold"], "output_is_input"), (done, "output_is_input")):
        before = target.read_bytes()
        status, _, err = run([*argv, "--gold-out", str(target)])
        assert status == 1 and expected in err
        assert target.read_bytes() == before
    status, _, err = run([*argv, "--gold-out", "-"])
    assert status == 2 and "--gold-out must name a file" in err
    status, _, err = run([*argv, "--gold-out", str(files["dir"] / "n.jsonl"), "--ledger-key", "k"])
    assert status == 2 and "--ledger-key needs --ledger" in err


# --- atomicity --------------------------------------------------------------------------


def test_a_failure_leaves_no_partial_output(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    new = files["dir"] / "new.jsonl"
    new.write_bytes(b"the earlier new gold\n")
    # A bad answer on the last row: nothing is written, the old output stays.
    done = fill(
        write_worklist(files),
        {("c-002", "hx.smoking"): "never", ("c-003", "vitals.weight"): "heavy"},
    )
    status, _, err = adjudicate(files, done)
    assert status == 1 and "invalid_cell (worklist line 7 column 4)" in err
    assert new.read_bytes() == b"the earlier new gold\n"
    # A full disk while the new gold is written: the old output stays, no temporary file.
    done = fill(write_worklist(files), {("c-002", "hx.smoking"): "never"})
    real_fsync = os.fsync

    def full_disk(descriptor: int) -> None:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(output_module.os, "fsync", full_disk)
    status, _, err = adjudicate(files, done)
    monkeypatch.setattr(output_module.os, "fsync", real_fsync)
    assert status == 1 and "output_unwritable" in err
    assert new.read_bytes() == b"the earlier new gold\n"
    names = sorted(path.name for path in files["dir"].iterdir())
    assert names == sorted(
        ["gold.jsonl", "predictions.jsonl", "schema.json", "worklist.csv", "done.csv", "new.jsonl"]
    )


# --- the ledger link --------------------------------------------------------------------


def test_the_ledger_links_the_new_gold_to_the_old(files: dict[str, Path]) -> None:
    key_file = write_key(files["dir"] / "ledger.key")
    ledger = files["dir"] / "ledger.jsonl"
    keyed = ["--ledger", str(ledger), "--ledger-key", str(key_file)]
    done = fill(write_worklist(files), {("c-002", "hx.smoking"): "never"})
    status, _, err = adjudicate(files, done, *keyed)
    assert status == 0, err
    assert err.endswith(
        "chartscore: ledger: adjudication recorded (the new gold's identity, linked to the "
        "old one's)\n"
    )
    new = files["dir"] / "new.jsonl"
    base = ["score", "--predictions", str(files["predictions"]), "--schema", str(files["schema"])]
    for gold, run_id in ((files["gold"], "on-old"), (new, "on-new")):
        status, _, err = run([*base, "--gold", str(gold), "--run-id", run_id, *keyed])
        assert status == 0, err
    read = read_ledger(ledger)
    assert [link.line for link in read.adjudications] == [1]
    link = read.adjudications[0].entry
    runs = {run.entry.run_id: run.entry for run in read.runs}
    assert link.previous_gold_identity == runs["on-old"].gold_identity
    assert link.gold_identity == runs["on-new"].gold_identity
    assert link.key_id == runs["on-new"].key_id
    key = load_ledger_key(key_file)
    old_rows = [GoldField(**row) for row in GOLD]  # type: ignore[arg-type]
    assert link.previous_gold_identity == gold_identity(old_rows, key)
    assert dict(link.counts) == {
        "worklist_rows": 5,
        "blank": 4,
        "confirmed": 0,
        "changed": 1,
        "value_changed": 1,
        "now_unanswerable": 0,
        "now_answerable": 0,
        "gold_rows": 6,
    }
    assert (link.changed_by_type, link.changed_by_outcome) == (
        {"categorical": 1},
        {"wrong_answer": 1},
    )
    shown = ledger_table(read)
    assert shown.startswith("chartscore ledger: 2 runs on 2 gold sets (3 lines read,")
    assert ", adjudicated from gold set 1\n" in shown
    assert "Gold versions (chartscore import adjudication)\nline 1, " in shown
    assert "gold set 2 adjudicated from gold set 1" in shown
    assert "5 worklist rows, 1 changed (1 value changed; by type: 1 categorical)" in shown
    status, out, _ = run(["ledger", "show", "--ledger", str(ledger)])
    assert (status, out) == (0, shown)
    # The line reads back exactly; an edited one is damaged, skipped and counted.
    line = ledger.read_bytes().splitlines(keepends=True)[0]
    assert AdjudicationEntry.from_line(line).to_line() == line
    edited = line.replace(b'"blank":4', b'"blank":5')
    with pytest.raises(ChartscoreError) as caught:
        AdjudicationEntry.from_line(edited)
    assert caught.value.code is ErrorCode.NOT_A_LEDGER
    ledger.write_bytes(edited + ledger.read_bytes()[len(line) :])
    damaged = read_ledger(ledger)
    assert (damaged.damaged, damaged.adjudications) == ((1,), ())
    assert "gold set 2: " in ledger_table(damaged) and "Gold versions" not in ledger_table(damaged)


def test_the_entry_is_reproducible_but_for_its_time(files: dict[str, Path]) -> None:
    key = load_ledger_key(write_key(files["dir"] / "ledger.key"))
    done = fill(write_worklist(files), {("c-003", "hx.smoking"): "current"})
    first = adjudication_entry(
        adjudicate_files(files["gold"], done), key, time="2026-05-09T07:35:25Z"
    )
    again = adjudication_entry(
        adjudicate_files(files["gold"], done), key, time="2026-05-09T07:35:25Z"
    )
    assert first.to_line() == again.to_line()
    assert first.to_line().startswith(b'{"format":"chartscore.ledger","format_version":1,')
    assert "hmac" not in repr(first) and "previous" not in repr(first)


def test_without_a_key_nothing_is_written(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHARTSCORE_LEDGER_KEY_FILE", raising=False)
    done = fill(write_worklist(files), {("c-002", "hx.smoking"): "never"})
    status, _, err = adjudicate(files, done, "--ledger", str(files["dir"] / "ledger.jsonl"))
    assert status == 1 and "ledger_key_missing" in err
    assert not (files["dir"] / "new.jsonl").exists()
    assert not (files["dir"] / "ledger.jsonl").exists()


# --- canaries ---------------------------------------------------------------------------


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=NO_SHRINK,
)
@given(canaries)
def test_adjudication_leaks_nothing(tmp_path: Path, c: Canary) -> None:
    base = tmp_path / c.marker
    base.mkdir(exist_ok=True)
    gold = write_jsonl(
        base / f"gold-{c.marker}.jsonl",
        [
            {
                "case_id": c.case_id(0),
                "field_id": "f.note",
                "field_type": "text",
                "value": c.marker,
            },
            {"case_id": c.case_id(1), "field_id": "f.note", "field_type": "text", "value": c.wide},
            {
                "case_id": c.case_id(0),
                "field_id": "f.size",
                "field_type": "number",
                "value": Decimal(c.number),
            },
        ],
    )
    predictions = write_jsonl(
        base / f"answers-{c.marker}.jsonl",
        [
            {"case_id": c.case_id(0), "field_id": "f.note", "value": c.wide + "x"},
            {"case_id": c.case_id(1), "field_id": "f.note", "value": c.marker + "y"},
            {"case_id": c.case_id(0), "field_id": "f.size", "value": 1},
        ],
    )
    listed = base / f"worklist-{c.marker}.csv"
    status, out, err = run(
        [
            "worklist",
            "--gold",
            str(gold),
            "--predictions",
            str(predictions),
            "--out",
            str(listed),
            "--adjudication-column",
        ]
    )
    assert (status, out) == (0, ""), err
    assert_clean_text(err, c, "worklist stderr")
    key = write_key(base / f"key-{c.marker}")
    ledger = base / f"ledger-{c.marker}.jsonl"
    done = fill(
        listed,
        {
            (c.case_id(0), "f.note"): c.marker + "z",
            (c.case_id(1), "f.note"): "null",
            (c.case_id(0), "f.size"): c.number + "1",
        },
        base / f"done-{c.marker}.csv",
    )
    new = base / f"new-{c.marker}.jsonl"
    argv = ["import", "adjudication", "--gold", str(gold), "--worklist", str(done)]
    argv += ["--ledger", str(ledger), "--ledger-key", str(key)]
    status, out, err = run([*argv, "--gold-out", str(new)])
    assert (status, out) == (0, ""), err
    assert_clean_text(err, c, "import adjudication stderr")
    assert c.marker + "z" in new.read_text(encoding="utf-8")  # the values are in the new gold
    assert_clean_text(ledger.read_text(encoding="utf-8"), c, "ledger")
    status, out, err = run(["ledger", "show", "--ledger", str(ledger)])
    assert status == 0
    assert_clean_text(out + err, c, "ledger show")
    found = adjudicate_files(gold, done)
    assert_clean_text(repr(found), c, "repr(Adjudication)")
    # A refused answer: the error names the row and column, never the cell, the case or the path.
    bad = fill(listed, {(c.case_id(0), "f.size"): c.marker}, base / f"bad-{c.marker}.csv")
    with pytest.raises(ChartscoreError) as caught:
        adjudicate_files(gold, bad)
    assert_clean_error(caught.value, c, ErrorCode.INVALID_CELL)
    status, out, err = run(
        [
            "import",
            "adjudication",
            "--gold",
            str(gold),
            "--worklist",
            str(bad),
            "--gold-out",
            str(base / f"bad-{c.marker}.jsonl"),
        ]
    )
    assert (status, out) == (1, "")
    assert_clean_text(err, c, "refusal stderr")
    assert "invalid_cell (worklist line" in err


def test_a_list_ignored_worklist_comes_back_with_its_not_in_gold_rows_blank(
    files: dict[str, Path],
) -> None:
    # --list-ignored adds a row for an answer to a field gold does not hold; importing the
    # worklist untouched failed with worklist_row_not_in_gold against its own gold.
    extra = {"case_id": "c-003", "field_id": "hx.smoking", "value": "never"}
    rows = [row for row in GOLD if (row["case_id"], row["field_id"]) != ("c-003", "hx.smoking")]
    write_jsonl(files["gold"], rows)
    write_jsonl(files["predictions"], [*PREDICTIONS[:4], extra])
    out = files["dir"] / "worklist.csv"
    argv = ["worklist", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    argv += ["--schema", str(files["schema"]), "--adjudication-column"]
    argv += ["--extra-predictions", "ignore", "--list-ignored", "--out", str(out)]
    assert run(argv)[0] == 0
    assert "c-003,hx.smoking,not_in_gold," in out.read_text(encoding="utf-8")
    status, _, err = adjudicate(files, out)
    assert status == 0, err
    assert (files["dir"] / "new.jsonl").read_bytes() == files["gold"].read_bytes()
    # Typed in, it is refused: gold has no row to adjudicate, and nothing is written.
    (files["dir"] / "new.jsonl").unlink()
    done = fill(out, {("c-003", "hx.smoking"): "never"})
    status, _, err = adjudicate(files, done)
    assert status == 1 and err.startswith("chartscore: error: worklist_row_not_in_gold")
    assert not (files["dir"] / "new.jsonl").exists()
