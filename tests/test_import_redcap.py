"""REDCap import: dictionaries (UI and API headers) to schemas, raw records exports to gold.

The fixtures in tests/data/importers follow /work/shared/reference/redcap-formats.md with
invented data: the UI dictionary has a byte order mark and the UI's 18 column names; the
API dictionary the API's names and a semicolon delimiter; the gold export a byte order
mark, semicolons, a DAG column, a decimal comma, a quoted cell with a line end and
quotes, missing-data codes in a date, a radio, a yes/no and a checkbox (its ``___unk``
column), a negative checkbox code (``symptoms____99``: four underscores) and
``<form>_complete`` columns; the abstractor's export commas and CRLF line ends.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import stat
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, FieldType, GoldField, InputKind, score_files
from chartscore.cli import main
from chartscore.importers import import_redcap, write_imported
from chartscore.importers.redcap_dictionary import checkbox_column, parse_choices
from chartscore.importers.table import DELIMITERS, open_table, sniff_delimiter
from chartscore.io import jsonl

from helpers import examples

DATA = Path(__file__).resolve().parent / "data" / "importers"
UI = DATA / "redcap_dictionary_ui.csv"
API = DATA / "redcap_dictionary_api.csv"
GOLD = DATA / "redcap_records_gold.csv"
ABSTRACTOR = DATA / "redcap_records_abstractor.csv"
REPEATING = DATA / "redcap_records_repeating.csv"
CODES = ("UNK", "NA")
OPTIONS = {"missing_codes": CODES, "tolerances": {"nihss": "1", "arrival": 2}, "ordinal": ["mrs"]}

# The schema the dictionary means, written from its rows (not from the importer's output).
EXPECTED_SCHEMA = {
    "fields": {
        "arrival": {"type": "date", "tolerance_days": 2},
        "sex": {
            "type": "categorical",
            "choices": ["0", "1"],
            "choice_labels": {"0": "Female", "1": "Male"},
        },
        "smoker": {
            "type": "categorical",
            "choices": ["1", "2", "3"],
            "choice_labels": {"1": "Never", "2": "Former", "3": "Current"},
        },
        "tpa": {"type": "boolean"},
        "afib": {"type": "boolean"},
        "symptoms": {
            "type": "multi",
            "choices": ["1", "2", "3", "-99"],
            "choice_labels": {"1": "Weakness", "2": "Aphasia", "3": "Neglect", "-99": "Other"},
        },
        "nihss": {"type": "number", "tolerance": "1"},
        "lvef": {"type": "number"},
        "hpi": {"type": "text"},
        "mrs": {
            "type": "ordinal",
            "levels": ["0", "1", "2", "3", "4", "5", "6"],
            "choice_labels": {
                "0": "No symptoms",
                "1": "No significant disability",
                "2": "Slight disability",
                "3": "Moderate disability",
                "4": "Moderately severe disability",
                "5": "Severe disability",
                "6": "Dead",
            },
        },
    }
}

# The gold export's rows as gold, read off the fixture by hand: blank cells give no row,
# UNK and NA give null, "52,3" is 52.3, all-zero checkboxes the empty set.
EXPECTED_GOLD = {
    ("101", "arrival"): "2023-04-17",
    ("101", "sex"): "0",
    ("101", "smoker"): "2",
    ("101", "tpa"): True,
    ("101", "afib"): False,
    ("101", "symptoms"): ["1", "2"],
    ("101", "nihss"): 7,
    ("101", "lvef"): Decimal("52.3"),
    ("101", "hpi"): "Left-sided weakness for 2 h",
    ("101", "mrs"): "2",
    ("102", "arrival"): "2023-05-02",
    ("102", "sex"): "1",
    ("102", "smoker"): None,
    ("102", "tpa"): False,
    ("102", "afib"): True,
    ("102", "symptoms"): [],
    ("102", "nihss"): 3,
    ("102", "hpi"): "Aphasia, resolved",
    ("102", "mrs"): "1",
    ("103", "arrival"): None,
    ("103", "sex"): "1",
    ("103", "smoker"): "1",
    ("103", "tpa"): None,
    ("103", "afib"): False,
    ("103", "symptoms"): None,
    ("103", "nihss"): 12,
    ("103", "lvef"): Decimal("35.0"),
    ("103", "mrs"): "4",
    ("104", "arrival"): "2023-06-30",
    ("104", "sex"): "0",
    ("104", "smoker"): "3",
    ("104", "tpa"): True,
    ("104", "symptoms"): ["-99"],
    ("104", "nihss"): None,
    ("104", "lvef"): 60,
    ("104", "hpi"): 'Found down; "last seen well"\nat 06:00',
    ("104", "mrs"): "6",
    ("105", "arrival"): "2023-07-04",
    ("105", "sex"): "0",
    ("105", "symptoms"): [],
}


def read_jsonl(data: bytes) -> list[dict[str, object]]:
    return [json.loads(line, parse_float=Decimal) for line in data.decode().splitlines()]


def as_mapping(rows: list[dict[str, object]]) -> dict[tuple[str, str], object]:
    return {(row["case_id"], row["field_id"]): row["value"] for row in rows}  # type: ignore[misc]


def test_both_dictionary_headers_give_the_expected_schema() -> None:
    ui = import_redcap(UI, **OPTIONS)  # type: ignore[arg-type]
    api = import_redcap(API, **OPTIONS)  # type: ignore[arg-type]
    assert ui.schema == api.schema == EXPECTED_SCHEMA
    assert ui.counts == {
        "schema_fields": 10,
        "skipped_calc": 1,
        "skipped_descriptive": 1,
        "skipped_file": 1,
    }
    with open_table(UI, InputKind.DICTIONARY) as table:
        assert table.delimiter == ","
    assert ui.loaded_schema() is not None  # the written schema loads


def test_gold_export_round_trips_to_the_expected_gold() -> None:
    imported = import_redcap(UI, GOLD, **OPTIONS)  # type: ignore[arg-type]
    rows = read_jsonl(imported.gold_lines())
    assert as_mapping(rows) == EXPECTED_GOLD
    assert [(row["case_id"], row["field_id"]) for row in rows] == sorted(EXPECTED_GOLD)
    types = {field: spec["type"] for field, spec in EXPECTED_SCHEMA["fields"].items()}
    assert all(row["field_type"] == types[row["field_id"]] for row in rows)  # type: ignore[index]
    assert imported.counts["cases"] == 5
    assert imported.counts["unanswerable"] == 5
    assert imported.counts["blank_cells"] == 10


def test_the_case_count_is_of_the_cases_written(tmp_path: Path) -> None:
    # A record whose every cell is blank writes no row: gold's cohort does not count it
    # (stderr said "2 rows for 3 cases" of a file with 1), nor does a repeat instance's.
    header, first = GOLD.read_bytes().splitlines(keepends=True)[:2]
    record_id = first.split(b";")[0]
    blank = b";".join([b"zz-blank"] + [b""] * header.count(b";"))
    records = tmp_path / "records.csv"
    records.write_bytes(header + first + blank + b"\n")
    imported = import_redcap(UI, records, **OPTIONS)  # type: ignore[arg-type]
    assert {row.case_id for row in imported.gold} == {record_id.decode()}
    assert imported.counts["cases"] == 1


def test_imported_gold_and_predictions_score_as_expected(tmp_path: Path) -> None:
    gold = import_redcap(UI, GOLD, **OPTIONS)  # type: ignore[arg-type]
    answers = import_redcap(API, ABSTRACTOR, role="predictions", **OPTIONS)  # type: ignore[arg-type]
    paths = {name: tmp_path / f"{name}.json" for name in ("gold", "predictions", "schema")}
    write_imported(gold, gold=paths["gold"], schema=paths["schema"], inputs=[UI, GOLD])
    write_imported(answers, predictions=paths["predictions"], inputs=[API, ABSTRACTOR])
    assert stat.S_IMODE(paths["gold"].stat().st_mode) == 0o600
    assert stat.S_IMODE(paths["predictions"].stat().st_mode) == 0o600
    report = score_files(
        paths["gold"], paths["predictions"], schema=paths["schema"], extra_predictions="ignore"
    )
    # Counted by hand from the two exports (case 105 has no abstractor row; the abstractor
    # filled afib of 104, which gold left blank: the one ignored prediction).
    assert report.ignored_prediction_count == 1
    sex = report.by_field["sex"]
    assert (sex.count("field_count"), sex.count("missing_count")) == (5, 1)
    assert sex.metric("normalized_agreement").success_count == 4
    nihss = report.by_field["nihss"]  # 7 vs 8 (within 1), 3, 12; 104 NA in gold, blank
    assert [nihss.count(name) for name in ("answerable_count", "unanswerable_count")] == [3, 1]
    assert nihss.count("missing_count") == 1
    assert nihss.metric("exact_agreement").success_count == 2
    assert nihss.metric("tolerance_agreement").success_count == 3
    arrival = report.by_field["arrival"]  # 05-02 vs 05-03 is within 2 days; 103 UNK answered
    assert arrival.metric("normalized_agreement").success_count == 2
    assert arrival.metric("tolerance_agreement").success_count == 3
    assert arrival.metric("unanswerable_answer").success_count == 1
    symptoms = report.by_field["symptoms"]  # {1,2} vs {1}; {} vs {}; null vs {1}; {-99}
    assert symptoms.metric("item_recall").success_count == 2  # of 3 gold items: 1, -99
    assert symptoms.metric("item_precision").success_count == 2  # of 3 answered: 1, 1, -99
    tpa = report.by_field["tpa"]  # 103: NA in gold, UNK from the abstractor
    assert tpa.metric("abstention_correctness").success_count == 4


def test_predictions_keep_cells_that_are_not_values() -> None:
    header = "record_id,sex,tpa,arrival,symptoms___1,symptoms___2,symptoms___3,symptoms____99\n"
    table = header + "9,2,Yes,02/24/2023,1,0,0,0\n"
    path = _write(table)
    imported = import_redcap(UI, path, role="predictions")
    assert as_mapping(read_jsonl(imported.prediction_lines())) == {
        ("9", "sex"): "2",
        ("9", "tpa"): "Yes",
        ("9", "arrival"): "02/24/2023",
        ("9", "symptoms"): ["1"],
    }


def test_repeating_rows_are_refused_or_become_cases() -> None:
    with pytest.raises(ChartscoreError) as refused:
        import_redcap(UI, REPEATING)
    assert str(refused.value) == "repeating_rows (records line 3)"
    imported = import_redcap(UI, REPEATING, repeating="rows")
    found = as_mapping(read_jsonl(imported.gold_lines()))
    assert found[("201/outcome/1", "mrs")] == "2"
    assert found[("201/outcome/2", "mrs")] == "3"
    assert found[("201", "symptoms")] == ["1"]
    assert {case for case, _ in found} == {"201", "201/outcome/1", "201/outcome/2"}


def test_a_second_row_for_a_record_is_a_repeating_row() -> None:
    path = _write("record_id,redcap_event_name,sex\n7,baseline_arm_1,0\n7,followup_arm_1,1\n")
    with pytest.raises(ChartscoreError) as refused:
        import_redcap(UI, path)
    assert str(refused.value) == "repeating_rows (records line 3)"
    found = as_mapping(read_jsonl(import_redcap(UI, path, repeating="rows").gold_lines()))
    assert found == {("7/baseline_arm_1", "sex"): "0", ("7/followup_arm_1", "sex"): "1"}


def test_checkbox_columns_are_built_from_the_codes() -> None:
    # The reference notes' table: lower-cased, every other character "_".
    assert checkbox_column("prereq_checkbox", "ABC") == "prereq_checkbox___abc"
    assert checkbox_column("race", "-99") == "race____99"
    assert checkbox_column("checkbox", "k>=9") == "checkbox___k__9"
    assert checkbox_column("x", "1.5") == "x___1_5"
    assert parse_choices("0, Female | 1, Male") == ("0", "1")
    assert parse_choices("1, one|2, two, with a comma|") == ("1", "2")
    assert parse_choices("0 Female | 1 Male") is None
    assert parse_choices("1, a | 1, b") is None
    assert parse_choices("A, a | a, b") is None  # one choice after normalization
    assert parse_choices("") is None


DICTIONARY_HEADER = (
    "field_name,form_name,section_header,field_type,field_label,"
    "select_choices_or_calculations,field_note,text_validation_type_or_show_slider_number\n"
)


@pytest.mark.parametrize(
    ("dictionary", "records", "options", "message"),
    [
        ("a,b,c\n1,2,3\n", None, {}, "unknown_dictionary_header (dictionary line 1)"),
        ("record_id,f\n", None, {}, "unknown_dictionary_header (dictionary line 1)"),
        (DICTIONARY_HEADER, None, {}, "invalid_table (dictionary line 2)"),
        ("", None, {}, "invalid_table (dictionary line 1)"),
        (
            DICTIONARY_HEADER + 'record_id,f,,text,,,,\nSex,f,,radio,,"0, a | 1, b",,\n',
            None,
            {},
            "invalid_field_name (dictionary line 3 column 1)",
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nrecord_id,f,,text,,,,\n",
            None,
            {},
            "invalid_field_name (dictionary line 3 column 1)",
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nsex,f,,matrix,,,,\n",
            None,
            {},
            "unknown_redcap_type (dictionary line 3 column 4)",
        ),
        (
            DICTIONARY_HEADER + 'record_id,f,,text,,,,\nsex,f,,radio,,"0 a | 1 b",,\n',
            None,
            {},
            "invalid_choices (dictionary line 3 column 6)",
        ),
        (
            DICTIONARY_HEADER + 'record_id,f,,text,,,,\nrace,f,,checkbox,,"a-b, x | a_b, y",,\n',
            None,
            {},
            "invalid_choices (dictionary line 3)",
        ),
        (
            DICTIONARY_HEADER + 'record_id,f,,text,,,,\nrace,f,,checkbox,,"unk, x | 1, y",,\n',
            None,
            {"missing_codes": ["UNK"]},
            "invalid_choices (dictionary line 3)",  # the missing code's column is an option's
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nnote,f,,text,,,,\n",
            None,
            {"tolerances": {"note": "1"}},
            "not_applicable_option (field note)",
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nnote,f,,text,,,,\n",
            None,
            {"tolerances": {"nope": "1"}},
            "not_applicable_option (field nope)",
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nnote,f,,text,,,,\n",
            None,
            {"ordinal": ["note"]},
            "not_applicable_option (field note)",
        ),
        (
            DICTIONARY_HEADER + "record_id,f,,text,,,,\nn,f,,text,,,,integer\n",
            None,
            {"tolerances": {"n": "-1"}},
            "schema_invalid_tolerance (schema field n)",
        ),
        (
            DICTIONARY_HEADER + 'record_id,f,,text,,,,\ns,f,,radio,,"1, only",,\n',
            None,
            {"ordinal": ["s"]},
            "schema_invalid_levels (dictionary line 3 field s)",
        ),
    ],
)
def test_dictionary_errors_name_a_line_and_column(
    dictionary: str, records: str | None, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(_write(dictionary), None if records is None else _write(records), **options)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ("study_id,sex\n1,0\n", "record_id_column (records column 1)"),
        ("record_id,sexx\n1,0\n", "unknown_column (records column 2)"),
        ("record_id,symptoms\n1,1\n", "unknown_column (records column 2)"),  # combined checkbox
        ("record_id,symptoms___xyz\n1,1\n", "unknown_column (records column 2)"),  # undeclared
        (  # a standard code's column, undeclared: the hint says so
            "record_id,symptoms___oth\n1,1\n",
            "unknown_column (records column 2; "
            "a REDCap missing-data code may be missing from --missing-codes)",
        ),
        ("record_id,sex,sex\n1,0,0\n", "duplicate_column (records column 3)"),
        ("record_id,sex\n1,2\n", "invalid_cell (records line 2 column 2)"),
        ("record_id,tpa\n1,Yes\n", "invalid_cell (records line 2 column 2)"),  # a labels export
        ("record_id,arrival\n1,02/24/2023\n", "invalid_cell (records line 2 column 2)"),
        ("record_id,nihss\n1,seven\n", "invalid_cell (records line 2 column 2)"),
        ("record_id,symptoms___1\n1,Checked\n", "invalid_cell (records line 2 column 2)"),
        ("record_id,sex\n,0\n", "invalid_case_id (records line 2 column 1)"),
        ("record_id,sex\n" + "x" * 129 + ",0\n", "invalid_case_id (records line 2 column 1)"),
        ("record_id,sex\n1,0\n2\n", "ragged_row (records line 3)"),
        ('record_id,hpi\n1,"never\nclosed\n', "invalid_table (records line 2)"),
        ("record_id,sex\n1,0\n1,1\n", "repeating_rows (records line 3)"),
        ("record_id,redcap_repeat_instance\n1,2\n", "repeating_rows (records line 2)"),
    ],
)
def test_records_errors_name_a_line_or_column(records: str, message: str) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, _write(records), missing_codes=CODES)
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_a_checkbox_with_a_code_and_a_missing_code_is_refused() -> None:
    header = "record_id,symptoms___1,symptoms___2,symptoms___3,symptoms____99,symptoms___unk\n"
    path = _write(header + "1,0,1,0,0,1\n")
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, path, missing_codes=CODES)
    assert str(caught.value) == "invalid_cell (records line 2 column 3)"


def test_reading_rules_not_utf8_gzip_and_utf16() -> None:
    bad = _write_bytes(b"record_id,hpi\n1,ok\n2,caf\xe9\n")
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, bad)
    assert str(caught.value) == "not_utf8 (records line 3)"
    packed = _write_bytes(gzip.compress(GOLD.read_bytes()))
    assert import_redcap(UI, packed, **OPTIONS).gold == import_redcap(UI, GOLD, **OPTIONS).gold  # type: ignore[arg-type]
    utf16 = _write_bytes("record_id,sex\n1,0\n".encode("utf-16"))
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, utf16)
    assert caught.value.code is ErrorCode.NOT_UTF8


def test_the_delimiter_is_sniffed_from_the_header() -> None:
    assert sniff_delimiter("a;b;c") == ";"
    assert sniff_delimiter('"Choices, Calculations, OR Slider Labels";b') == ";"
    assert sniff_delimiter("a\tb,c\td") == "\t"
    assert sniff_delimiter("a|b^c|d") == "|"
    assert sniff_delimiter("a,b;c") == ","  # a tie goes to the comma
    assert sniff_delimiter("record_id") == ","


cells = st.text(st.characters(blacklist_characters="\x00", codec="utf-8"), max_size=12)


@settings(max_examples=examples(100))
@given(
    st.sampled_from(DELIMITERS),
    st.lists(st.lists(cells, min_size=3, max_size=3), max_size=5),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_any_table_reads_back_cell_for_cell(
    delimiter: str, rows: list[list[str]], bom: bool, line_end: str
) -> None:
    buffer = io.StringIO()
    # csv.writer leaves a lone "\r" unquoted with a "\n" line end: quote everything then.
    lone_cr = any("\r" in cell for row in rows for cell in row)
    quoting = csv.QUOTE_ALL if lone_cr else csv.QUOTE_MINIMAL
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=line_end, quoting=quoting)
    writer.writerow(["record_id", "b", "c"])
    written = [["id" + str(index), *row[1:]] for index, row in enumerate(rows)]
    writer.writerows(written)
    data = ("\ufeff" if bom else "") + buffer.getvalue()
    path = _write_bytes(data.encode("utf-8"))
    with open_table(path, InputKind.RECORDS) as table:
        assert table.delimiter == delimiter
        assert [list(cells) for _, cells in table.rows()] == written


def _reference_rows(text: str, delimiter: str) -> list[tuple[int, list[str]]] | None:
    """The rows as csv reads the text's lines one by one, each with the line it starts on
    (None: csv refuses the text)."""
    lines = [line + "\n" for line in text.split("\n")]
    if lines[-1] == "\n":
        lines.pop()
    source = iter(lines)
    taken = 0

    def counted() -> Iterator[str]:
        nonlocal taken
        for line in source:
            taken += 1
            yield line

    reader = csv.reader(counted(), delimiter=delimiter, strict=True)
    rows = []
    while True:
        start = taken + 1
        try:
            cells = next(reader, None)
        except csv.Error:
            return None
        if cells is None:
            return rows
        if cells:
            rows.append((start, cells))


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(DELIMITERS),
    st.lists(st.lists(cells, min_size=2, max_size=2), max_size=5),
    st.lists(
        st.sampled_from(["", "\n", "\r\n", "\n\n\n", "\r\r\n", "\r", "\n" * 5000]), min_size=7
    ),
    st.integers(1, 64) | st.sampled_from([5000, 1 << 18]),
)
@example(",", [["x", "y"]] * 2, ["\n" * 5000] * 7, 5000)  # whole blocks of blank lines
@example(",", [["x", "y"]] * 2, ["\n" * 5000, "", "\r", "", "", "", ""], 1 << 18)
def test_blank_lines_and_block_edges_change_no_row_and_no_line(
    delimiter: str, rows: list[list[str]], blanks: list[str], block: int
) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_ALL)
    parts = [blanks[0]]
    for index, row in enumerate(
        [["record_id", "b", "c"], *([f"id{i}", *r] for i, r in enumerate(rows))]
    ):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        parts += [buffer.getvalue(), blanks[index + 1]]
    text = "".join(parts)
    path = _write_bytes(text.encode("utf-8"))
    expected = _reference_rows(text, delimiter)
    found: list[tuple[int, list[str]]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "_BLOCK_BYTES", block)  # blocks that cut lines and runs anywhere
        if expected is None:  # csv refuses a lone "\r" before a row
            with (
                pytest.raises(ChartscoreError) as caught,
                open_table(path, InputKind.RECORDS) as table,
            ):
                list(table.rows())
            assert caught.value.code is ErrorCode.INVALID_TABLE
            return
        with open_table(path, InputKind.RECORDS) as table:
            found = [(0, list(table.header))]
            found += [(line, list(cells)) for line, cells in table.rows()]
    assert found[1:] == expected[1:]
    assert found[0][1] == expected[0][1]


@settings(max_examples=examples(20))
@given(st.permutations(range(5)))
def test_any_row_order_gives_the_same_bytes(order: list[int]) -> None:
    text = GOLD.read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";", lineterminator="\n").writerows(
        [rows[0], *(rows[1 + index] for index in order)]
    )
    shuffled = _write_bytes(buffer.getvalue().encode("utf-8"))
    assert (
        import_redcap(UI, shuffled, **OPTIONS).gold_lines()  # type: ignore[arg-type]
        == import_redcap(UI, GOLD, **OPTIONS).gold_lines()  # type: ignore[arg-type]
    )


def test_options_are_taken_by_exact_type() -> None:
    for options in (
        {"role": "truth"},
        {"repeating": "all"},
        {"missing_codes": "UNK"},  # a string is not a list of codes
        {"missing_codes": [1]},
        {"ordinal": ("mrs", None)},
    ):
        with pytest.raises(ChartscoreError) as caught:
            import_redcap(UI, GOLD, **options)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE


def test_cli_writes_schema_and_gold_and_says_what_it_left_out(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    schema, gold = tmp_path / "schema.json", tmp_path / "gold.jsonl"
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(GOLD)]
    argv += ["--gold-out", str(gold), "--schema-out", str(schema), "--missing-codes", "UNK,NA"]
    argv += ["--tolerance", "nihss=1,arrival=2", "--ordinal", "mrs"]
    assert main(argv, stdout=out, stderr=err) == 0
    assert out.getvalue() == ""
    assert json.loads(schema.read_text()) == EXPECTED_SCHEMA
    assert as_mapping(read_jsonl(gold.read_bytes())) == EXPECTED_GOLD
    assert err.getvalue() == (
        "chartscore: fields: 10 (skipped: 1 calc, 1 descriptive, 1 file)\n"
        "chartscore: gold: 40 rows for 5 cases, 5 null (declared missing-data codes)\n"
        "chartscore: blank cells (no row written): 10\n"
    )
    assert GoldField("101", "sex", FieldType.CATEGORICAL, "0") in [
        GoldField.from_dict(row) for row in read_jsonl(gold.read_bytes())
    ]


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ([], "nothing to write: give --schema-out, --gold-out or --predictions-out"),
        (["--records", "r.csv"], "--records needs one of --gold-out and --predictions-out"),
        (
            ["--records", "r", "--gold-out", "g", "--predictions-out", "p"],
            "--records needs one of --gold-out and --predictions-out",
        ),
        (["--gold-out", "g"], "--gold-out needs --records"),
        (["--schema-out", "-"], "--schema-out must name a file"),
        (
            ["--schema-out", "s", "--missing-codes", "UNK,,NA"],
            "--missing-codes must be a list separated by commas",
        ),
        (
            ["--schema-out", "s", "--tolerance", "nihss"],
            "--tolerance must be FIELD=AMOUNT pairs separated by commas",
        ),
    ],
)
def test_cli_usage_problems(extra: list[str], problem: str) -> None:
    err = io.StringIO()
    argv = ["import", "redcap", "--dictionary", str(UI), *extra]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue() == (
        f"chartscore: error: usage: {problem}; see chartscore import redcap --help\n"
    )


def test_cli_never_writes_over_an_input(tmp_path: Path) -> None:
    copy = tmp_path / "records.csv"
    copy.write_bytes(GOLD.read_bytes())
    err = io.StringIO()
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(copy)]
    assert main([*argv, "--gold-out", str(copy)], stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue().startswith("chartscore: error: output_is_input (output)")
    assert copy.read_bytes() == GOLD.read_bytes()
    same = [*argv, "--gold-out", str(tmp_path / "x"), "--schema-out", str(tmp_path / "x")]
    assert main(same, stdout=io.StringIO(), stderr=io.StringIO()) == 1
    assert not (tmp_path / "x").exists()


_SCRATCH: list[Path] = []


def _write_bytes(data: bytes) -> Path:
    import tempfile

    handle = tempfile.NamedTemporaryFile(delete=False, suffix=".csv")  # noqa: SIM115
    with handle:
        handle.write(data)
    path = Path(handle.name)
    _SCRATCH.append(path)
    return path


def _write(text: str) -> Path:
    return _write_bytes(text.encode("utf-8"))


@pytest.fixture(autouse=True, scope="module")
def _remove_scratch() -> object:
    yield
    for path in _SCRATCH:
        path.unlink(missing_ok=True)
