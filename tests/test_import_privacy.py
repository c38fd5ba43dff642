"""Privacy canaries for the importers and the worklist (docs/privacy.md).

Markers (tests/test_privacy.py's :class:`Canary`) are planted in every slot of the
exports an importer reads: record ids, cells of every type, checkbox marks, header
names, labels, note text, file paths; and in the case ids and values behind a worklist.
Then every channel is searched: stdout, stderr, error messages, reprs, tracebacks and
pickles; the worklist file for values, and every channel but the worklist file for
case ids.
"""

from __future__ import annotations

import io
import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import chartscore.io.output as output_module
from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, worklist
from chartscore.cli import main
from chartscore.importers import (
    import_csv,
    import_labelstudio,
    import_redcap,
    json_array,
    labelstudio,
)
from chartscore.importers import table as table_module
from chartscore.importers.imported import Imported
from test_privacy import NO_SHRINK, Canary, assert_clean_error, assert_clean_text, canaries

from helpers import examples

DATA = Path(__file__).resolve().parent / "data" / "importers"
UI = DATA / "redcap_dictionary_ui.csv"
CANARY_SETTINGS = settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=NO_SHRINK,
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def redcap_export(c: Canary) -> str:
    """A gold export whose record ids and text, number and date cells carry the canary."""
    header = "record_id,arrival,sex,hpi,nihss,symptoms___1,symptoms___2,symptoms___3,symptoms____99"
    rows = [
        f'{c.case_id(0)},2023-04-17,0,"{c.marker} {c.wide}",{c.number},1,0,0,0',
        f"{c.case_id(1)},2023-04-18,1,{c.marker},7,0,0,0,0",
    ]
    return "\n".join([header, *rows]) + "\n"


def check_imported(imported: Imported, c: Canary) -> None:
    assert_clean_text(repr(imported), c, "repr(Imported)")
    for record in (*imported.gold, *imported.predictions):
        assert_clean_text(repr(record), c, "record repr")


@CANARY_SETTINGS
@given(canaries)
def test_importing_leaks_nothing(tmp_path: Path, c: Canary) -> None:
    base = tmp_path / c.marker  # the path carries the canary too
    base.mkdir(exist_ok=True)
    records = base / f"{c.marker}.csv"
    records.write_text(redcap_export(c), encoding="utf-8")
    gold = base / f"gold-{c.marker}.jsonl"
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(records)]
    status, out, err = run([*argv, "--gold-out", str(gold)])
    assert (status, out) == (0, "")
    assert_clean_text(err, c, "stderr")
    assert c.marker in gold.read_text(encoding="utf-8")  # the values are in the gold file
    check_imported(import_redcap(UI, records), c)
    answers = base / f"answers-{c.marker}.csv"
    answers.write_text(redcap_export(c).replace(f'"{c.marker} {c.wide}"', c.wide), "utf-8")
    predictions = base / f"answers-{c.marker}.jsonl"
    argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(answers)]
    status, out, err = run([*argv, "--predictions-out", str(predictions)])
    assert (status, out) == (0, "")
    assert_clean_text(err, c, "stderr")
    # The worklist of the two: case ids in its file and nowhere else; values nowhere.
    listed = base / f"worklist-{c.marker}.csv"
    status, out, err = run(
        ["worklist", "--gold", str(gold), "--predictions", str(predictions), "--out", str(listed)]
    )
    assert (status, out) == (0, "")
    assert_clean_text(err, c, "worklist stderr")
    text = listed.read_text(encoding="utf-8")
    assert f"{c.case_id(0)},hpi,wrong_answer" in text
    assert_clean_text(text.replace(c.case_id(0), "").replace(c.case_id(1), ""), c, "worklist")


@CANARY_SETTINGS
@given(canaries)
def test_failing_imports_leak_nothing(tmp_path: Path, c: Canary) -> None:
    base = tmp_path / c.marker
    base.mkdir(exist_ok=True)
    header = "record_id,arrival,sex,hpi,nihss,symptoms___1"

    def path(name: str, text: str) -> Path:
        target = base / f"{c.marker}-{name}"
        target.write_text(text, encoding="utf-8")
        return target

    failing_records = {
        "invalid_cell sex": (f"{header}\n{c.case_id(0)},2023-01-01,{c.marker},,,\n", "gold"),
        "invalid_cell date": (f"{header}\n{c.case_id(0)},{c.marker},0,,,\n", "gold"),
        "invalid_cell number": (f"{header}\n{c.case_id(0)},,0,,{c.marker},\n", "gold"),
        "invalid_cell checkbox": (f"{header}\n{c.case_id(0)},,,,,{c.marker}\n", "predictions"),
        "unknown_column": (f"record_id,{c.marker.lower()}\n1,2\n", "gold"),
        "record_id_column": (f"{c.marker},sex\n1,0\n", "gold"),
        "repeating_rows": (f"{header}\n{c.case_id(0)},,0,,,\n{c.case_id(0)},,1,,,\n", "gold"),
        "invalid_case_id": (f"{header}\n{c.long_case_id},,0,,,\n", "gold"),
        "ragged_row": (f"{header}\n{c.case_id(0)},{c.marker}\n", "gold"),
        "invalid_table": (f'{header}\n{c.case_id(0)},"{c.marker}\n', "gold"),
    }
    for name, (text, role) in failing_records.items():
        records = path("records.csv", text)
        error = _raised(lambda: import_redcap(UI, records, role=role))  # noqa: B023
        assert_clean_error(error, c, ErrorCode(name.split()[0]))
        status, out, err = run(
            [
                "import",
                "redcap",
                "--dictionary",
                str(UI),
                "--records",
                str(records),
                f"--{role}-out",
                str(base / "out.jsonl"),
            ]
        )
        assert status == 1 and out == ""
        assert_clean_text(err, c, f"stderr ({name})")
    dictionary_text = UI.read_text(encoding="utf-8-sig").replace("sex,intake", f"{c.marker},intake")
    error = _raised(lambda: import_redcap(path("dictionary.csv", dictionary_text)))
    assert_clean_error(error, c, ErrorCode.INVALID_FIELD_NAME)
    choices = UI.read_text(encoding="utf-8-sig").replace('"0, Female | 1, Male"', f"{c.marker}")
    error = _raised(lambda: import_redcap(path("dictionary.csv", choices)))
    assert_clean_error(error, c, ErrorCode.INVALID_CHOICES)
    error = _raised(lambda: import_redcap(UI, tolerances={c.marker: "1"}))
    assert_clean_error(error, c, ErrorCode.NOT_APPLICABLE_OPTION)
    error = _raised(lambda: import_redcap(UI, base / f"{c.marker}-missing.csv"))
    assert_clean_error(error, c, ErrorCode.FILE_UNREADABLE)


@CANARY_SETTINGS
@given(canaries)
def test_label_studio_and_csv_leak_nothing(tmp_path: Path, c: Canary) -> None:
    base = tmp_path / c.marker
    base.mkdir(exist_ok=True)
    tasks = [
        {
            "id": 1,
            "data": {"text": f"{c.marker} note text {c.number}"},
            "annotations": [
                {"completed_by": 1, "result": [{"value": {"text": c.marker, "labels": ["A"]}}]},
                {"completed_by": 2, "result": [{"value": {"text": c.wide, "labels": ["B"]}}]},
            ],
        }
    ]
    export = base / f"{c.marker}.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    imported = import_labelstudio(export, gold_annotator=1, annotator=2)
    check_imported(imported, c)
    assert_clean_text(imported.gold_lines().decode(), c, "gold file")  # note text is never read
    for broken in (
        [{"id": c.marker, "annotations": []}],
        [{"id": 1, "annotations": [{"completed_by": c.marker, "result": []}]}],
        [
            {
                "id": 1,
                "annotations": [{"completed_by": 1, "result": [{"value": {"labels": c.marker}}]}],
            }
        ],
        {c.marker: []},
    ):
        export.write_text(json.dumps(broken), encoding="utf-8")
        error = _raised(lambda: import_labelstudio(export, gold_annotator=1))
        assert_clean_error(error, c, ErrorCode.INVALID_EXPORT)
    export.write_text(f'[{{"id": 1, "{c.marker}": }}]', encoding="utf-8")
    assert_clean_error(_raised(lambda: import_labelstudio(export, gold_annotator=1)), c,
                       ErrorCode.INVALID_JSON)  # fmt: skip
    table = base / f"{c.marker}.csv"
    table.write_text(f"chart,{c.marker}\n{c.case_id(0)},{c.marker}\n", encoding="utf-8")
    column_map = {"case_id": "chart", "fields": {"hx.note": c.marker}}
    imported = import_csv(table, column_map, role="predictions")
    check_imported(imported, c)
    for mapping, code in (
        ({"case_id": "chart", "fields": {"hx.note": c.wide}}, ErrorCode.COLUMN_NOT_FOUND),
        ({"case_id": c.wide, "fields": {"hx.note": "chart"}}, ErrorCode.COLUMN_NOT_FOUND),
        ({"case_id": "chart", "fields": {c.marker: "chart"}}, ErrorCode.INVALID_COLUMN_MAP),
        ({"case_id": "chart", c.marker: 1, "fields": {}}, ErrorCode.INVALID_COLUMN_MAP),
    ):
        error = _raised(lambda: import_csv(table, mapping, role="predictions"))  # noqa: B023
        assert_clean_error(error, c, code)
    table.write_text(f"chart,{c.marker}\n{c.long_case_id},x\n", encoding="utf-8")
    error = _raised(lambda: import_csv(table, column_map, role="predictions"))
    assert_clean_error(error, c, ErrorCode.INVALID_CASE_ID)


@CANARY_SETTINGS
@given(canaries)
def test_streaming_limits_and_outputs_leak_nothing(tmp_path: Path, c: Canary) -> None:
    """The codes of streamed reading, empty exports and all-or-none writing (issue 34)."""
    with pytest.MonkeyPatch.context() as monkeypatch:  # undone after each example
        _check_streaming_and_outputs(tmp_path, c, monkeypatch)


def _check_streaming_and_outputs(
    tmp_path: Path, c: Canary, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / c.marker
    base.mkdir(exist_ok=True)

    def path(name: str, data: str | bytes) -> Path:
        target = base / f"{c.marker}-{name}"
        target.write_bytes(data if type(data) is bytes else str(data).encode("utf-8"))
        return target

    note = {"text": f"{c.marker} {c.wide} {c.number}"}
    task = {"id": 1, "data": note, "annotations": [{"completed_by": 1, "result": []}]}
    other = {"id": 2, "data": note, "annotations": [{"completed_by": 2, "result": []}]}
    export_cases: list[tuple[str, str | bytes, ErrorCode]] = [
        ("apart.json", json.dumps([task, other]), ErrorCode.EMPTY_EXPORT),
        (
            "later.json",
            f'[{json.dumps(task)},\n{{"id": 2, "{c.marker}": }}]',
            ErrorCode.INVALID_JSON,
        ),
        (
            "nested.json",
            f'[{{"id": 1, "data": {"[" * 600}"{c.marker}"{"]" * 600}}}]',
            ErrorCode.NESTING_TOO_DEEP,
        ),
        (
            "latin.json",
            f'[{{"id": 1, "data": "{c.marker}\xe9"}}]'.encode("latin-1"),
            ErrorCode.NOT_UTF8,
        ),
        ("object.json", json.dumps({c.marker: [task]}), ErrorCode.INVALID_EXPORT),
    ]
    for name, data, code in export_cases:
        export = path(name, data)
        error = _raised(lambda: import_labelstudio(export, gold_annotator=1, annotator=2))  # noqa: B023
        assert_clean_error(error, c, code)
    monkeypatch.setattr(json_array, "MAX_ELEMENT_BYTES", 64)
    export = path("large.json", json.dumps([task]))
    assert_clean_error(_raised(lambda: import_labelstudio(export, gold_annotator=1)), c,
                       ErrorCode.TASK_TOO_LARGE)  # fmt: skip
    monkeypatch.setattr(labelstudio, "MAX_EXPORT_BYTES", 64)
    monkeypatch.setattr(json_array, "MAX_ELEMENT_BYTES", 1 << 20)
    assert_clean_error(_raised(lambda: import_labelstudio(export, gold_annotator=1)), c,
                       ErrorCode.FILE_TOO_LARGE)  # fmt: skip
    # Tables: a header alone, and a table past the (lowered) limit.
    header = "record_id,arrival,sex,hpi,nihss,symptoms___1"
    records = path("records.csv", f"{header}\n")
    assert_clean_error(_raised(lambda: import_redcap(UI, records)), c, ErrorCode.EMPTY_EXPORT)
    table = path("table.csv", f"chart,{c.marker}\n")
    column_map = {"case_id": "chart", "fields": {"hx.note": c.marker}}
    assert_clean_error(_raised(lambda: import_csv(table, column_map, role="predictions")), c,
                       ErrorCode.EMPTY_EXPORT)  # fmt: skip
    monkeypatch.setattr(table_module, "MAX_TABLE_BYTES", 128)
    table = path("table.csv", f"chart,{c.marker}\n" + f"{c.case_id(0)},{c.wide}\n" * 20)
    assert_clean_error(_raised(lambda: import_csv(table, column_map, role="predictions")), c,
                       ErrorCode.FILE_TOO_LARGE)  # fmt: skip
    records = path("records.csv", f"{header}\n{c.case_id(0)},,,{c.marker},,\n" * 20)
    for argv in (
        ["--gold-out", str(base / f"{c.marker}.jsonl")],
        ["--gold-out", str(base / f"{c.marker}"), "--schema-out", str(base / f"{c.marker}")],
    ):
        status, out, err = run(
            ["import", "redcap", "--dictionary", str(UI), "--records", str(records), *argv]
        )
        assert (status, out) == (1, "")
        assert err.startswith("chartscore: error: ") and err.count("\n") == 1
        assert_clean_text(err, c, "stderr")
    # Writing: a full disk on the second output, and a rename that fails part way.
    monkeypatch.undo()  # the real limits again
    export = path("export.json", json.dumps([task]))
    argv = ["import", "labelstudio", "--export", str(export), "--gold-annotator", "1"]
    argv += ["--gold-out", str(base / f"gold-{c.marker}")]
    argv += ["--schema-out", str(base / f"schema-{c.marker}")]
    real_chmod, real_replace = os.chmod, os.replace
    for name, replacement in (
        ("chmod", _failing_on_second(real_chmod)),
        ("replace", _failing_on_second(real_replace)),
    ):
        with pytest.MonkeyPatch.context() as failing:
            failing.setattr(output_module.os, name, replacement)
            status, out, err = run(argv)
        assert (status, out) == (1, "")
        assert err.startswith("chartscore: error: output_unwritable (output")
        assert_clean_text(err, c, f"stderr ({name})")


def _failing_on_second(real: Callable[..., None]) -> Callable[..., None]:
    calls: list[object] = []

    def call(*args: object) -> None:
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(*args)

    return call


@CANARY_SETTINGS
@given(canaries)
def test_the_worklist_holds_case_ids_and_never_a_value(tmp_path: Path, c: Canary) -> None:
    gold = [
        GoldField(c.case_id(0), "hx.note", "text", f"{c.marker} gold"),
        GoldField(c.case_id(1), "hx.note", "text", c.wide),
        GoldField(c.case_id(2), "vitals.weight", "number", c.number),
        GoldField(c.case_id(3), "hx.symptoms", "multi", [c.marker, "cough"]),
    ]
    answers = [
        Prediction(c.case_id(0), "hx.note", f"{c.marker} answer"),
        Prediction(c.case_id(1), "hx.note", c.marker.lower()),  # agrees after normalization
        Prediction(c.case_id(2), "vitals.weight", f"{c.number}1"),
        Prediction(c.case_id(3), "hx.symptoms", [c.wide]),
    ]
    found = worklist(gold, answers)
    assert_clean_text(repr(found), c, "repr(Worklist)")
    assert_clean_text(repr(pickle.loads(pickle.dumps(found.counts()))), c, "counts")
    data = found.to_csv().decode("utf-8")
    listed = {line.split(",")[0] for line in data.splitlines()[2:]}
    assert listed == {c.case_id(0), c.case_id(2), c.case_id(3)}
    without_ids = data
    for index in range(4):
        without_ids = without_ids.replace(c.case_id(index), "")
    assert_clean_text(without_ids, c, "the worklist's values")


def _raised(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except ChartscoreError as error:
        return error
    raise AssertionError("expected a ChartscoreError")
