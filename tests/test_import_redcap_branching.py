"""REDCap branching logic into not-applicable gold rows (docs/import.md, "Branching logic").

The documented subset is parsed by a recursive-descent parser and evaluated per record; a
gold field left blank because its logic is false becomes a not-applicable row. Other logic
is counted, never guessed: its blank cells stay blank (no row), as before.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chartscore import score_files
from chartscore.cli import main
from chartscore.importers import import_redcap, write_imported
from chartscore.importers.redcap_branching import evaluate, parse
from chartscore.metrics import NOT_APPLICABLE

from helpers import write_jsonl

HEADER = (
    "field_name,form_name,section_header,field_type,field_label,"
    "select_choices_or_calculations,field_note,text_validation_type_or_show_slider_number,"
    "branching_logic\n"
)
DICTIONARY = HEADER + (
    "record_id,f,,text,ID,,,,\n"
    'smoker,f,,radio,Smoker,"0, never | 1, current | 2, former",,,\n'
    "packyears,f,,text,Pack-years,,,integer,\"[smoker] = '1' or [smoker] = '2'\"\n"
    'echo,f,,checkbox,Tests,"1, ecg | 2, echo",,,\n'
    "lvef,f,,text,LVEF,,,number,\"[echo(2)] = '1'\"\n"
    "quit,f,,text,Quit date,,,date_ymd,\"[smoker] <> '0' and ([smoker] != '1')\"\n"
    'note,f,,text,Note,,,,"[packyears] > 10"\n'
)
RECORDS = (
    "record_id,smoker,packyears,echo___1,echo___2,lvef,quit,note\n"
    "r1,0,,1,0,,,\n"  # never smoked, no echo: packyears, lvef, quit not applicable
    "r2,1,20,0,1,55,,\n"  # current: quit not applicable; lvef answered
    "r3,2,,0,1,,2020-01-01,\n"  # former: packyears blank (logic true): no row, as before
    "r4,0,5,0,0,,,\n"  # never smoked, yet packyears holds a value: kept, counted
)


@pytest.mark.parametrize(
    ("text", "cells", "shown"),
    [
        ("[smoker] = '1'", {("smoker", None): "1"}, True),
        ("[smoker] = '1'", {("smoker", None): "0"}, False),
        ("[smoker] <> '0'", {("smoker", None): ""}, True),
        ("[smoker] != '0'", {("smoker", None): "0"}, False),
        (
            "[a] = '1' and [b] = '2' or [c] = '3'",
            {("a", None): "1", ("b", None): "0", ("c", None): "3"},
            True,
        ),
        (
            "[a] = '1' and ([b] = '2' or [c] = '3')",
            {("a", None): "0", ("b", None): "2", ("c", None): "3"},
            False,
        ),
        ("[cb(2)] = '1'", {("cb", "2"): "1"}, True),
        ("[cb(2)] = '1'", {("cb", "2"): "0"}, False),
        ('[a] = "x" OR [a] = "y"', {("a", None): "y"}, True),
        ("[a] = 1", {("a", None): "1.0"}, True),
    ],
)
def test_the_subset_is_evaluated_as_redcap_does(
    text: str, cells: dict[tuple[str, str | None], str], shown: bool
) -> None:
    logic = parse(text)
    assert logic is not None
    assert evaluate(logic, cells) is shown


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[a] > 1",
        "[a] >= '1'",
        "datediff([a], 'today', 'y') > 18",
        "[event_1_arm_1][a] = '1'",
        "[a] = '1' or",
        "([a] = '1'",
        "[a] = '1')",
        "[a] = [b]",
        "[a] + 1 = '2'",
        "not [a] = '1'",
        "[user-name] = 'x'",
        "[a] = '1' xor [b] = '2'",
    ],
)
def test_other_logic_is_not_parsed(text: str) -> None:
    assert parse(text) is None


def _files(tmp_path: Path) -> tuple[Path, Path]:
    dictionary = tmp_path / "dictionary.csv"
    dictionary.write_text(DICTIONARY, encoding="utf-8")
    records = tmp_path / "records.csv"
    records.write_text(RECORDS, encoding="utf-8")
    return dictionary, records


def test_hidden_gold_fields_become_not_applicable_rows(tmp_path: Path) -> None:
    dictionary, records = _files(tmp_path)
    imported = import_redcap(dictionary, records)
    rows = {(row.case_id, row.field_id): row.value for row in imported.gold}
    hidden = {key for key, value in rows.items() if value is NOT_APPLICABLE}
    assert hidden == {
        ("r1", "packyears"),
        ("r1", "lvef"),
        ("r1", "quit"),
        ("r2", "quit"),
        ("r4", "lvef"),
        ("r4", "quit"),
    }
    assert ("r3", "packyears") not in rows  # blank, logic true: no row, as before
    assert rows["r4", "packyears"] == 5  # a value where the logic is false: kept
    assert imported.counts["branching_not_applicable"] == 6
    assert imported.counts["hidden_with_value"] == 1
    assert imported.counts["branching_untranslated"] == 1  # note's "[packyears] > 10"
    # Written, read back and scored: the rows are counted apart.
    gold = tmp_path / "gold.jsonl"
    write_imported(imported, gold=gold)
    assert gold.read_bytes().count(b'"value": null, "not_applicable": true') == 6
    answers = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": "r1", "field_id": "packyears", "value": 0}],
    )
    report = score_files(gold, answers, extra_predictions="error")
    field = report.by_field["packyears"]
    assert field.not_applicable == {"not_applicable_count": 1, "not_applicable_answer": 1}
    assert field.metric("unanswerable_answer").success_count == 0


def test_predictions_are_imported_as_before(tmp_path: Path) -> None:
    dictionary, records = _files(tmp_path)
    imported = import_redcap(dictionary, records, role="predictions")
    assert all(row.value is not NOT_APPLICABLE for row in imported.predictions)
    assert "branching_not_applicable" not in imported.counts
    assert "branching_untranslated" not in imported.counts


def test_the_command_reports_the_counts_on_stderr(tmp_path: Path) -> None:
    dictionary, records = _files(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    argv = ["import", "redcap", "--dictionary", str(dictionary), "--records", str(records),
            "--gold-out", str(tmp_path / "g.jsonl")]  # fmt: skip
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    text = err.getvalue()
    assert "not-applicable gold rows (branching logic false): 6" in text
    assert "fields whose branching logic was not translated: 1" in text
    assert "packyears" not in text and "r1" not in text
