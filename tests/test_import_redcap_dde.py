"""REDCap Double Data Entry, and the import hints (issue 37, items 3 and 7).

The fixture (tests/data/importers/redcap_dde_*) is an invented heart-failure project
entered through REDCap's DDE module, as /work/shared/reference/redcap-formats.md
describes it: charts 1001-1012 entered by both persons (``ID--1``, ``ID--2``), 1013 by
person 1 only, 1001-1010 merged by a reviewer (the plain ``ID``), 1011-1012 not yet.
The export has a byte order mark and CRLF line ends; notes cells span lines (one with
a blank line and doubled quotes inside); the entries disagree on values, and on blank
versus filled cells; missing-data codes ``UNK`` and ``NA`` are cells and a checkbox's
``meds___unk`` column.
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
from chartscore import ChartscoreError, ErrorCode
from chartscore.cli import main
from chartscore.errors import ErrorHint
from chartscore.importers import import_redcap, import_redcap_dde
from chartscore.importers.redcap import STANDARD_MISSING_CODES
from test_privacy import NO_SHRINK, Canary, assert_clean_error, assert_clean_text, canaries

from helpers import examples

DATA = Path(__file__).resolve().parent / "data" / "importers"
DICTIONARY = DATA / "redcap_dde_dictionary.csv"
RECORDS = DATA / "redcap_dde_records.csv"
UI = DATA / "redcap_dictionary_ui.csv"
PAIRED = {str(chart) for chart in range(1001, 1013)}
MERGED = {str(chart) for chart in range(1001, 1011)}
PLAIN_FIELDS = ("admit_date", "sex", "smoking", "lvef", "nyha", "diabetes", "abstractor_notes")
MEDS = ("meds___1", "meds___2", "meds___3", "meds___4", "meds___unk")
HINT = "a REDCap missing-data code may be missing from --missing-codes"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def read_rows(path: Path) -> dict[str, dict[str, object]]:
    """A JSON Lines file as {case id: {field id: value}}."""
    found: dict[str, dict[str, object]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line, parse_float=Decimal)
        found.setdefault(row["case_id"], {})[row["field_id"]] = row["value"]
    return found


def fixture_rows() -> dict[str, dict[str, str]]:
    """The export as the standard library's csv module reads it, by record id."""
    with RECORDS.open(encoding="utf-8-sig", newline="") as stream:
        return {row["chart_id"]: row for row in csv.DictReader(stream)}


def filled(row: dict[str, str]) -> int:
    """How many rows a record writes: its filled plain cells, and its checkbox if any mark."""
    return sum(1 for name in PLAIN_FIELDS if row[name].strip()) + any(row[m] for m in MEDS)


def dde_argv(tmp_path: Path, *extra: str, gold: bool = True) -> list[str]:
    argv = ["import", "redcap", "--dictionary", str(DICTIONARY), "--records", str(RECORDS)]
    argv += ["--dde", "--missing-codes", "UNK,NA", "--ordinal", "nyha"]
    argv += ["--rater-1-out", str(tmp_path / "rater1.jsonl")]
    argv += ["--rater-2-out", str(tmp_path / "rater2.jsonl")]
    if gold:
        argv += ["--gold-out", str(tmp_path / "gold.jsonl")]
    return [*argv, *extra]


# --- Double Data Entry --------------------------------------------------------------------


def test_dde_export_splits_into_two_raters_and_merged_gold(tmp_path: Path) -> None:
    argv = dde_argv(tmp_path, "--schema-out", str(tmp_path / "schema.json"))
    status, out, err = run(argv)
    assert (status, out) == (0, "")
    assert err == (
        "chartscore: fields: 8 (skipped: 1 calc)\n"
        "chartscore: rater 1: 88 rows for 12 cases, 1 null (declared missing-data codes)\n"
        "chartscore: rater 2: 86 rows for 12 cases, 3 null (declared missing-data codes)\n"
        "chartscore: gold: 74 rows for 10 cases, 3 null (declared missing-data codes)\n"
        "chartscore: blank cells (no row written): 24\n"
        "chartscore: double data entries without their partner (left out): 1\n"
    )
    first, second = read_rows(tmp_path / "rater1.jsonl"), read_rows(tmp_path / "rater2.jsonl")
    gold = read_rows(tmp_path / "gold.jsonl")
    # Joined by the base id: the two raters cover the same charts, gold the merged ones.
    assert set(first) == set(second) == PAIRED and set(gold) == MERGED
    # Each record's rows, counted off the export by the standard library's csv reader.
    rows = fixture_rows()
    for chart in PAIRED:
        assert len(first[chart]) == filled(rows[f"{chart}--1"]), chart
        assert len(second[chart]) == filled(rows[f"{chart}--2"]), chart
    for chart in MERGED:
        assert len(gold[chart]) == filled(rows[chart]), chart
    # Multi-line notes survive, quotes and a blank line inside included.
    assert first["1002"]["abstractor_notes"] == "LVEF from cath report,\nnot echo."
    assert "abstractor_notes" not in second["1002"]
    assert second["1004"]["abstractor_notes"] == "EF 30% per discharge summary.\n\nEcho: 30-35%."
    assert gold["1004"]["abstractor_notes"] == (
        'Discharge summary says "EF 30%";\necho says 30-35. Took 30.'
    )
    # Discrepancies: values, blank versus filled, a code versus an answer.
    assert (first["1001"]["nyha"], second["1001"]["nyha"], gold["1001"]["nyha"]) == ("3", "2", "3")
    assert "lvef" not in first["1003"] and second["1003"]["lvef"] == gold["1003"]["lvef"] == 45
    assert "diabetes" not in second["1006"] and gold["1006"]["diabetes"] is True
    assert first["1005"]["smoking"] == "0" and second["1005"]["smoking"] is None
    assert first["1008"]["meds"] is None and gold["1008"]["meds"] is None  # meds___unk
    assert second["1004"]["meds"] == ["1", "2", "3"] and gold["1004"]["meds"] == list("1234")
    assert first["1012"]["lvef"] == 83  # a prediction outside the range is kept
    # Gold has field types; raters have the predictions format.
    gold_line = json.loads((tmp_path / "gold.jsonl").read_text().splitlines()[0])
    rater_line = json.loads((tmp_path / "rater1.jsonl").read_text().splitlines()[0])
    assert set(gold_line) == {"case_id", "field_id", "field_type", "value"}
    assert set(rater_line) == {"case_id", "field_id", "value"}
    for name in ("rater1.jsonl", "rater2.jsonl", "gold.jsonl"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    assert json.loads((tmp_path / "schema.json").read_text())["fields"]["nyha"]["type"] == (
        "ordinal"
    )


def test_the_library_gives_the_same_raters_and_counts(tmp_path: Path) -> None:
    assert run(dde_argv(tmp_path))[0] == 0
    imported = import_redcap_dde(DICTIONARY, RECORDS, missing_codes=["UNK", "NA"], ordinal=["nyha"])
    assert imported.rater_lines(0) == (tmp_path / "rater1.jsonl").read_bytes()
    assert imported.rater_lines(1) == (tmp_path / "rater2.jsonl").read_bytes()
    assert imported.gold_lines() == (tmp_path / "gold.jsonl").read_bytes()
    assert imported.counts["dde_unpaired"] == 1
    assert imported.predictions == ()
    assert "2 raters" in repr(imported) and "1001" not in repr(imported)
    with pytest.raises(ChartscoreError) as caught:
        imported.rater_lines(2)
    assert caught.value.code is ErrorCode.USAGE


def test_without_gold_out_the_merged_records_are_counted_not_written(tmp_path: Path) -> None:
    status, out, err = run(dde_argv(tmp_path, gold=False))
    assert (status, out) == (0, "")
    assert "chartscore: merged records (no --gold-out: not written): 10\n" in err
    assert "gold:" not in err
    assert not (tmp_path / "gold.jsonl").exists()
    assert set(read_rows(tmp_path / "rater1.jsonl")) == PAIRED


def test_a_dde_export_without_dde_is_refused_and_says_to_use_it(tmp_path: Path) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(DICTIONARY, RECORDS, missing_codes=["UNK", "NA"])
    assert str(caught.value) == "dde_records (records line 3 column 1)"  # 1001--1
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    argv = ["import", "redcap", "--dictionary", str(DICTIONARY), "--records", str(RECORDS)]
    argv += ["--missing-codes", "UNK,NA", "--predictions-out", str(tmp_path / "p.jsonl")]
    status, out, err = run(argv)
    assert (status, out) == (1, "")
    assert err == (
        "chartscore: error: dde_records (records line 3 column 1): Double Data Entry records "
        "(ID--1, ID--2): import it with --dde (import_redcap_dde)\n"
    )
    assert "1001" not in err and not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("record", ["1--3", "1--", "--1", "a--b--1", "1--1--2", "1--12"])
def test_with_dde_a_record_id_must_be_an_entry_or_a_merged_record(
    record: str, tmp_path: Path
) -> None:
    records = _write("record_id,sex\n1,0\n1--1,0\n1--2,1\n" + f"{record},0\n", tmp_path)
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, records)
    assert str(caught.value) == "invalid_dde_record (records line 5 column 1)"


def test_record_ids_without_a_dde_suffix_are_plain(tmp_path: Path) -> None:
    # A single hyphen, or a digit after "--" that is not 1 or 2 alone, is no DDE entry.
    records = _write("record_id,sex\n1-1,0\n1-2,1\n1--12,0\n", tmp_path)
    imported = import_redcap(UI, records)
    assert {row.case_id for row in imported.gold} == {"1-1", "1-2", "1--12"}


def test_entries_pair_by_case_and_duplicates_are_refused(tmp_path: Path) -> None:
    # Only merged records and one-sided entries: nothing to compare.
    lonely = _write("record_id,sex\n1,0\n1--1,0\n2--2,1\n", tmp_path)
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, lonely)
    assert caught.value.code is ErrorCode.EMPTY_EXPORT
    twice = _write("record_id,sex\n1--1,0\n1--2,0\n1--1,1\n", tmp_path)
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, twice)
    assert str(caught.value) == "repeating_rows (records line 4)"
    # Merged records that give no gold value: an empty gold file is refused.
    blank_merge = _write("record_id,sex\n1,\n1--1,0\n1--2,1\n", tmp_path)
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, blank_merge)
    assert caught.value.code is ErrorCode.EMPTY_EXPORT
    assert import_redcap_dde(UI, blank_merge, merged_gold=False).counts["rater_1_cases"] == 1
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, blank_merge, merged_gold="yes")  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.USAGE


def test_dde_with_repeating_rows_pairs_each_event(tmp_path: Path) -> None:
    records = _write(
        "record_id,redcap_event_name,sex\n"
        "7--1,baseline_arm_1,0\n7--1,discharge_arm_1,1\n"
        "7--2,baseline_arm_1,0\n7--2,discharge_arm_1,0\n"
        "7,baseline_arm_1,0\n",
        tmp_path,
    )
    imported = import_redcap_dde(UI, records, repeating="rows")
    cases = {"7/baseline_arm_1", "7/discharge_arm_1"}
    assert {row.case_id for row in imported.raters[0]} == cases
    assert {row.case_id for row in imported.raters[1]} == cases
    assert {row.case_id for row in imported.gold} == {"7/baseline_arm_1"}
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, records)
    assert str(caught.value) == "repeating_rows (records line 3)"


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--dde", "--schema-out", "s"], "--dde needs --records"),
        (
            ["--dde", "--records", "r", "--predictions-out", "p"],
            "--dde writes --rater-1-out and --rater-2-out, not --predictions-out",
        ),
        (
            ["--dde", "--records", "r", "--rater-1-out", "a", "--gold-out", "g"],
            "--dde needs --rater-1-out and --rater-2-out",
        ),
        (["--records", "r", "--rater-2-out", "b", "--gold-out", "g"], "--rater-2-out needs --dde"),
        (
            ["--dde", "--records", "r", "--rater-1-out", "-", "--rater-2-out", "b"],
            "--rater-1-out must name a file",
        ),
        (
            ["--schema-out", "s", "--exclude-fields", "hpi,"],
            "--exclude-fields must be a list separated by commas",
        ),
    ],
)
def test_dde_usage_problems(extra: list[str], problem: str) -> None:
    status, out, err = run(["import", "redcap", "--dictionary", str(UI), *extra])
    assert (status, out) == (2, "")
    assert err == f"chartscore: error: usage: {problem}; see chartscore import redcap --help\n"


def test_rater_outputs_are_checked_like_every_output(tmp_path: Path) -> None:
    same = dde_argv(tmp_path, gold=False)
    same[same.index("--rater-2-out") + 1] = str(tmp_path / "rater1.jsonl")
    status, _, err = run(same)
    assert status == 1 and "duplicate_output" in err
    over = dde_argv(tmp_path, gold=False)
    over[over.index("--rater-1-out") + 1] = str(RECORDS)
    status, _, err = run(over)
    assert status == 1 and "output_is_input" in err
    assert not list(tmp_path.iterdir())  # nothing written by either


def test_a_full_disk_on_the_third_output_leaves_no_new_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = dde_argv(tmp_path, "--schema-out", str(tmp_path / "schema.json"))
    names = ("gold.jsonl", "rater1.jsonl", "rater2.jsonl", "schema.json")
    for name in names:  # an earlier import's files: never new raters beside old gold
        (tmp_path / name).write_bytes(f"old {name}\n".encode())
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    real_fsync = os.fsync
    synced: list[int] = []

    def full_disk_on_the_third_file(descriptor: int) -> None:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            synced.append(descriptor)
            if len(synced) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(output_module.os, "fsync", full_disk_on_the_third_file)
    status, out, err = run(argv)
    assert (status, out) == (1, "") and "output_unwritable (output)" in err
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    monkeypatch.setattr(output_module.os, "fsync", real_fsync)
    assert run(argv)[0] == 0
    assert all((tmp_path / name).read_bytes()[:4] != b"old " for name in names)


# --- hints: missing-data codes, spaces, excluded fields ---------------------------------


def test_predictions_with_undeclared_missing_codes_warn_with_a_count(tmp_path: Path) -> None:
    records = _write(
        "record_id,arrival,smoker,tpa,nihss,hpi\n"
        "1,UNK,2,NA,7,NA\n"
        "2,2023-01-02, UNK ,1,NI,seen\n"
        "3,2023-01-03,1,0,,unk\n",  # lower case is not a code
        tmp_path,
    )
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(records)]
    status, out, err = run([*argv, "--predictions-out", str(tmp_path / "p.jsonl")])
    assert (status, out) == (0, "")
    assert err.endswith(
        "chartscore: warning: 5 cells hold REDCap missing-data codes, read as values, "
        "not null: did you forget --missing-codes?\n"
    )
    assert import_redcap(UI, records, role="predictions").counts["undeclared_missing_codes"] == 5
    # Declaring some leaves the others counted; declaring all of them, no warning.
    partly = import_redcap(UI, records, role="predictions", missing_codes=["UNK", "NA"])
    assert partly.counts["undeclared_missing_codes"] == 1
    status, _, err = run(
        [*argv, "--predictions-out", str(tmp_path / "q.jsonl"), "--missing-codes", "UNK,NA,NI"]
    )
    assert status == 0 and "warning" not in err
    # One cell: the sentence agrees.
    single = _write("record_id,hpi\n1,NASK\n", tmp_path)
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(single)]
    status, _, err = run([*argv, "--gold-out", str(tmp_path / "g.jsonl")])
    assert status == 0 and "warning: 1 cell holds REDCap missing-data codes" in err


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ("record_id,tpa\n1,NA\n", f"invalid_cell (records line 2 column 2; {HINT})"),
        ("record_id,arrival\n1,UNK\n", f"invalid_cell (records line 2 column 2; {HINT})"),
        ("record_id,arrival\n1,UNKNOWN\n", "invalid_cell (records line 2 column 2)"),
        ("record_id,symptoms___unk\n1,1\n", f"unknown_column (records column 2; {HINT})"),
        ("record_id,symptoms___asku\n1,1\n", f"unknown_column (records column 2; {HINT})"),
        ("record_id,sex___unk\n1,1\n", "unknown_column (records column 2)"),  # not a checkbox
    ],
)
def test_gold_failing_on_an_undeclared_code_gets_the_hint(
    records: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, _write(records, tmp_path))
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert (caught.value.hint is ErrorHint.MISSING_CODES_UNDECLARED) == (HINT in message)


def test_the_standard_codes_are_redcaps_list() -> None:
    assert len(STANDARD_MISSING_CODES) == 18
    assert {"UNK", "NA", "NASK", "ASKU", "OTH"} <= STANDARD_MISSING_CODES


def test_missing_codes_with_spaces_are_trimmed(tmp_path: Path) -> None:
    written = []
    for codes in ("UNK,NA", "UNK, NA", " UNK ,  NA "):
        gold = tmp_path / f"gold{len(written)}.jsonl"
        argv = ["import", "redcap", "--dictionary", str(UI)]
        argv += ["--records", str(DATA / "redcap_records_gold.csv"), "--missing-codes", codes]
        assert run([*argv, "--gold-out", str(gold)])[0] == 0
        written.append(gold.read_bytes())
    assert written[0] == written[1] == written[2]
    spaced = import_redcap(UI, DATA / "redcap_records_gold.csv", missing_codes=[" UNK", "NA "])
    assert spaced.gold_lines() == written[0]


def test_excluded_fields_are_in_no_output(tmp_path: Path) -> None:
    argv = dde_argv(tmp_path, "--exclude-fields", "abstractor_notes,meds")
    argv += ["--schema-out", str(tmp_path / "schema.json")]
    status, out, err = run(argv)
    assert (status, out) == (0, "")
    assert err.startswith("chartscore: fields: 6 (skipped: 1 calc, 2 excluded)\n")
    schema = json.loads((tmp_path / "schema.json").read_text())
    assert set(schema["fields"]) == {"admit_date", "sex", "smoking", "lvef", "nyha", "diabetes"}
    for name in ("rater1.jsonl", "rater2.jsonl", "gold.jsonl"):
        fields = {field for case in read_rows(tmp_path / name).values() for field in case}
        assert fields <= set(schema["fields"]), name
        assert "EF 30%" not in (tmp_path / name).read_text()
    # The plain import too; a name outside the dictionary, or its record id, is refused.
    imported = import_redcap(
        UI, DATA / "redcap_records_gold.csv", missing_codes=["UNK", "NA"], exclude_fields=["hpi"]
    )
    assert "hpi" not in {row.field_id for row in imported.gold}
    assert "hpi" not in imported.schema["fields"]  # type: ignore[index,operator]
    for wrong in (["hpii"], ["record_id"]):
        with pytest.raises(ChartscoreError) as caught:
            import_redcap(UI, exclude_fields=wrong)
        assert caught.value.code is ErrorCode.NOT_APPLICABLE_OPTION
    assert import_redcap(UI, exclude_fields=["bmi"]).counts.get("skipped_excluded") is None


# --- canaries -------------------------------------------------------------------------------

CANARY_SETTINGS = settings(
    max_examples=examples(6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=NO_SHRINK,
)


def dde_export(c: Canary) -> str:
    """A DDE export whose base ids, notes, text and number cells carry the canary."""
    header = "record_id,arrival,sex,hpi,nihss,symptoms___1,symptoms___2,symptoms___3,symptoms____99"
    rows = []
    for index in (0, 1):
        case = c.case_id(index)
        rows += [
            f'{case},2023-04-17,0,"{c.marker}\n{c.wide}",{c.number},1,0,0,0',
            f'{case}--1,2023-04-17,0,"{c.marker} one\n{c.wide}",{c.number},1,0,0,0',
            f"{case}--2,UNK,1,{c.wide},,0,0,0,0",
        ]
    rows.append(f"{c.marker}-lonely--1,2023-04-18,1,{c.marker},7,0,0,0,0")
    return "\n".join([header, *rows]) + "\n"


@CANARY_SETTINGS
@given(canaries)
def test_dde_and_hints_leak_nothing(tmp_path: Path, c: Canary) -> None:
    base = tmp_path / c.marker  # the paths carry the canary too
    base.mkdir(exist_ok=True)
    records = base / f"{c.marker}.csv"
    records.write_text(dde_export(c), encoding="utf-8")
    outs = {part: base / f"{part}-{c.marker}.jsonl" for part in ("r1", "r2", "gold")}
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(records), "--dde"]
    argv += ["--rater-1-out", str(outs["r1"]), "--rater-2-out", str(outs["r2"])]
    status, out, err = run([*argv, "--gold-out", str(outs["gold"])])
    assert (status, out) == (0, "")
    assert "warning: 2 cells" in err and "without their partner (left out): 1" in err
    assert_clean_text(err, c, "stderr")
    assert c.marker in outs["r1"].read_text(encoding="utf-8")  # the values are in the files
    imported = import_redcap_dde(UI, records)
    assert_clean_text(repr(imported), c, "repr(Imported)")
    for record in (*imported.gold, *imported.raters[0], *imported.raters[1]):
        assert_clean_text(repr(record), c, "record repr")
    # Refusals: the export without --dde, an id that is no entry, codes forgotten on gold.
    failing = {
        "dde_records": (dde_export(c), False),
        "invalid_dde_record": (dde_export(c) + f"{c.marker}--3,,,,,,,,\n", True),
        "invalid_cell": (
            f"record_id,sex,hpi\n{c.case_id(0)},NA,{c.marker}\n{c.case_id(0)}--1,0,x\n",
            True,
        ),
        "unknown_column": (f"record_id,symptoms___unk\n{c.case_id(0)},{c.marker}\n", False),
    }
    for code, (text, dde) in failing.items():
        path = base / f"{c.marker}-{code}.csv"
        path.write_text(text, encoding="utf-8")
        error = _raised(
            (lambda: import_redcap_dde(UI, path)) if dde else (lambda: import_redcap(UI, path))  # noqa: B023
        )
        assert_clean_error(error, c, ErrorCode(code))
        command = ["import", "redcap", "--dictionary", str(UI), "--records", str(path)]
        if dde:
            command += ["--dde", "--rater-1-out", str(outs["r1"]) + "x"]
            command += ["--rater-2-out", str(outs["r2"]) + "x"]
        command += ["--gold-out", str(base / f"{c.marker}-out.jsonl")]
        status, out, err = run(command)
        assert (status, out) == (1, "")
        assert_clean_text(err, c, f"stderr ({code})")


def _raised(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except ChartscoreError as error:
        return error
    raise AssertionError("expected a ChartscoreError")


def _write(text: str, folder: Path) -> Path:
    """An export in a new file of ``folder``."""
    path = folder / f"records-{len(list(folder.iterdir()))}.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_pairs_without_gold_out_says_so_and_speaks_of_no_gold_file(tmp_path: Path) -> None:
    # Only a merged record and one-sided entries, and no gold asked for: no raters to write.
    lonely = _write("record_id,sex\n1,0\n1--1,0\n2--2,1\n", tmp_path)
    with pytest.raises(ChartscoreError) as caught:
        import_redcap_dde(UI, lonely, merged_gold=False)
    assert str(caught.value) == "no_dde_pairs (records)"
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(lonely), "--dde"]
    argv += [
        "--rater-1-out",
        str(tmp_path / "r1.jsonl"),
        "--rater-2-out",
        str(tmp_path / "r2.jsonl"),
    ]
    status, out, err = run(argv)
    assert (status, out) == (1, "")
    assert err.startswith("chartscore: error: no_dde_pairs (records): ") and "gold" not in err
    assert not (tmp_path / "r1.jsonl").exists() and not (tmp_path / "r2.jsonl").exists()
    assert str(tmp_path) not in err
