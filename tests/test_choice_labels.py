"""Choice labels: the schema names its codes, renderings show the names, documents keep codes."""

from __future__ import annotations

import csv
import io
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import GoldField, Prediction
from chartscore.cli import main
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.importers.redcap_dictionary import choice_labels
from chartscore.records.schema import FieldSpec, Schema
from chartscore.render import render
from chartscore.render.markdown import escape

from helpers import examples, write_jsonl

CODES = ["1", "2", "3"]
NAMES = {"1": "Never", "2": "Former", "3": "Current"}
SCHEMA: dict[str, object] = {
    "fields": {
        "smoker": {"type": "categorical", "choices": CODES, "choice_labels": NAMES},
        "mrs": {"type": "ordinal", "levels": [0, 1, 2], "choice_labels": {"0": "No symptoms"}},
    }
}
PLAIN: dict[str, object] = {
    "fields": {
        "smoker": {"type": "categorical", "choices": CODES},
        "mrs": {"type": "ordinal", "levels": [0, 1, 2]},
    }
}


def _cohort() -> tuple[list[GoldField], list[Prediction]]:
    # 12 charts; every fourth smoker answer names the next code.
    gold, answers = [], []
    for case in range(12):
        code = CODES[case % 3]
        gold.append(GoldField(f"c{case}", "smoker", "categorical", code))
        gold.append(GoldField(f"c{case}", "mrs", "ordinal", case % 3))
        answer = CODES[(case + 1) % 3] if case % 4 == 0 else code
        answers.append(Prediction(f"c{case}", "smoker", answer))
        answers.append(Prediction(f"c{case}", "mrs", case % 3))
    return gold, answers


def test_the_schema_reads_writes_and_pickles_its_labels() -> None:
    schema = Schema.from_dict(SCHEMA)
    assert schema.choice_labels() == {"mrs": {"0": "No symptoms"}, "smoker": NAMES}
    assert Schema.from_dict(schema.to_dict()) == schema
    assert schema.to_dict()["fields"]["smoker"]["choice_labels"] == NAMES  # type: ignore[index]
    assert pickle.loads(pickle.dumps(schema)) == schema
    # keys compare as scoring compares choices: "Never" names the choice "never"
    spec = FieldSpec("categorical", choices=["never"], choice_labels={"Never ": "Never smoked"})
    assert spec.choice_labels == (("never", "Never smoked"),)
    assert Schema.from_dict(PLAIN).choice_labels() == {}


@pytest.mark.parametrize(
    "labels",
    [
        {},  # empty
        {"4": "Other"},  # not a declared choice
        {"1": ""},
        {"1": " Never"},
        {"1": "Never\nsmoked"},
        {"1": "x" * 201},
        {"1": "Same", "2": "Same"},
        {"1": 1},
        ["1", "Never"],
    ],
)
def test_labels_that_are_not_one_line_per_declared_code_are_refused(labels: object) -> None:
    document = {"fields": {"smoker": {"type": "categorical", "choices": CODES}}}
    document["fields"]["smoker"]["choice_labels"] = labels  # type: ignore[index]
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict(document)
    assert caught.value.code is ErrorCode.SCHEMA_INVALID_CHOICE_LABELS
    assert str(caught.value).startswith("schema_invalid_choice_labels (schema field smoker)")


def test_only_choice_and_level_fields_take_labels() -> None:
    for spec in ({"type": "boolean"}, {"type": "text"}, {"type": "categorical"}):
        spec["choice_labels"] = {"1": "One"}
        with pytest.raises(ChartscoreError) as caught:
            Schema.from_dict({"fields": {"f": spec}})
        assert caught.value.code in (
            ErrorCode.SCHEMA_UNKNOWN_OPTION,
            ErrorCode.SCHEMA_INVALID_CHOICE_LABELS,  # categorical without choices
        )


@settings(max_examples=examples(40), deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_a_refused_label_is_never_shown(marker: str) -> None:
    canary = "ZQX" + marker + "\n"  # two lines: always refused
    document = {"fields": {"smoker": {"type": "categorical", "choices": CODES}}}
    document["fields"]["smoker"]["choice_labels"] = {"1": canary}  # type: ignore[index]
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict(document)
    assert "ZQX" not in str(caught.value) and "ZQX" not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_labels_do_not_change_the_report() -> None:
    gold, answers = _cohort()
    labelled = chartscore.score(gold, answers, schema=SCHEMA)
    plain = chartscore.score(gold, answers, schema=PLAIN)
    assert labelled.to_json() == plain.to_json()
    assert '"Never"' not in labelled.to_json()


def test_renderings_show_labels_and_the_csv_keeps_codes() -> None:
    gold, answers = _cohort()
    report = chartscore.score(gold, answers, schema=SCHEMA)
    labels = Schema.from_dict(SCHEMA).choice_labels()
    markdown = render(report, "markdown", choice_labels=labels)
    section = markdown.split("## Per-label confusion metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `smoker`")]
    # One row per declared label, by name (then the field's pooled and macro rows).
    named = [row.split(" | ")[1] for row in rows]
    assert {"Never", "Former", "Current"} <= set(named), named
    assert not any(row.split(" | ")[1] in CODES for row in rows)
    assert "- **labels**: choices are shown by their schema labels" in markdown
    html = render(report, "html", choice_labels=labels)
    assert "smoker: Never" in html and "smoker: 1<" not in html
    assert 'data-label="1"' in html  # the plot's machine-readable attribute keeps the code
    table = render(report, "table", choice_labels=labels)
    assert "Current" in table
    # The CSV is for machines: the codes, byte for byte as without labels.
    assert render(report, "csv", choice_labels=labels) == render(report, "csv")
    rows_csv = list(csv.DictReader(io.StringIO(render(report, "csv", choice_labels=labels))))
    assert {r["label"] for r in rows_csv if r["metric"] == "sensitivity"} >= set(CODES)
    # Without labels, nothing changes.
    assert "**labels**" not in render(report, "markdown")


def test_a_label_is_escaped_like_any_declared_text() -> None:
    gold, answers = _cohort()
    report = chartscore.score(gold, answers, schema=PLAIN)
    labels = {"smoker": {"1": "<b>Never</b> | [x](http://e.x)"}}
    html = render(report, "html", choice_labels=labels)
    assert "<b>Never" not in html and "&lt;b&gt;Never&lt;/b&gt;" in html
    markdown = render(report, "markdown", choice_labels=labels)
    assert escape(labels["smoker"]["1"]) in markdown and "<b>" not in markdown


@pytest.mark.parametrize("bad", [[], {"f": "x"}, {"f": {"1": 2}}, {1: {}}])
def test_render_refuses_labels_that_are_not_a_plain_mapping(bad: object) -> None:
    gold, answers = _cohort()
    report = chartscore.score(gold, answers, schema=PLAIN)
    with pytest.raises(ChartscoreError) as caught:
        render(report, "markdown", choice_labels=bad)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.USAGE


def test_redcap_labels_are_read_after_the_first_comma() -> None:
    assert choice_labels("0, Female | 1, Male") == ("Female", "Male")
    assert choice_labels(" 1,  Never,  ever | 2,Former|") == ("Never, ever", "Former")


def test_a_redcap_field_whose_labels_cannot_be_used_gets_none(tmp_path: Path) -> None:
    dictionary = tmp_path / "dictionary.csv"
    dictionary.write_text(
        "field_name,form_name,section_header,field_type,field_label,"
        "select_choices_or_calculations,field_note,text_validation_type_or_show_slider_number\n"
        "record_id,f,,text,ID,,,\n"
        'same,f,,radio,Same,"1, Yes | 2, Yes",,\n'
        f'long,f,,dropdown,Long,"1, {"x" * 201} | 2, Short",,\n'
        'fine,f,,checkbox,Fine,"a, Alpha | b, Beta",,\n',
        encoding="utf-8",
    )
    schema = tmp_path / "schema.json"
    argv = ["import", "redcap", "--dictionary", str(dictionary), "--schema-out", str(schema)]
    assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    fields = json.loads(schema.read_text())["fields"]
    assert "choice_labels" not in fields["same"] and "choice_labels" not in fields["long"]
    assert fields["fine"]["choice_labels"] == {"a": "Alpha", "b": "Beta"}


def test_render_and_score_take_the_schemas_labels(tmp_path: Path) -> None:
    gold, answers = _cohort()
    gold_file, answers_file = tmp_path / "gold.jsonl", tmp_path / "answers.jsonl"
    write_jsonl(
        gold_file,
        [
            {"case_id": g.case_id, "field_id": g.field_id, "field_type": g.field_type.value,
             "value": g.value}
            for g in gold
        ],
    )  # fmt: skip
    write_jsonl(
        answers_file,
        [{"case_id": a.case_id, "field_id": a.field_id, "value": a.value} for a in answers],
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    argv = ["score", "--gold", str(gold_file), "--predictions", str(answers_file)]
    argv += ["--schema", str(schema)]
    out = io.StringIO()
    assert main([*argv, "--out", str(tmp_path / "r.json")], stdout=out, stderr=io.StringIO()) == 0
    out = io.StringIO()
    assert main([*argv, "--format", "markdown"], stdout=out, stderr=io.StringIO()) == 0
    assert "| `smoker` | Never |" in out.getvalue()
    rendered = io.StringIO()
    render_argv = ["render", str(tmp_path / "r.json"), "--format", "markdown"]
    assert main([*render_argv, "--schema", str(schema)], stdout=rendered, stderr=io.StringIO()) == 0
    assert rendered.getvalue() == out.getvalue()
    plain = io.StringIO()
    assert main(render_argv, stdout=plain, stderr=io.StringIO()) == 0
    assert "| `smoker` | Never |" not in plain.getvalue()
