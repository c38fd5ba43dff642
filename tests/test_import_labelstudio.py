"""Label Studio import, read as chart-review reads an export, giving chart-review's counts.

tests/data/importers/labelstudio_cold.json is an export written for these tests in the
shape of chart-review's "cold" test project (smart-on-fhir/chart-review,
tests/data/cold: four notes; annotators jane = 3, john = 5, jill = 6; labels Cough,
Fatigue and Headache; jane's notes restricted to 1, 3 and 4 by the project's ``ranges``),
with the members a real export carries. chart-review's published result for it, quoted
exactly from its tests/test_accuracy.py (``test_default_output``, ``chart-review accuracy
jill jane``, commit e9e04b7), is:

    Comparing 3 charts (1, 3–4)
    Truth: jill
    Annotator: jane
    Macro F1: 0.833

    F1     Sens  Spec   PPV  NPV   Kappa  TP  FN  TN  FP  Label
    0.667  0.75  0.6    0.6  0.75  0.341  3   1   3   2   *
    0.667  0.5   1.0    1.0  0.5   0.4    1   1   1   0   Cough
    1.0    1.0   1.0    1.0  1.0   1.0    2   0   1   0   Fatigue
    -      -     0.333  0.0  1.0   0.0    0   0   1   2   Headache
"""  # noqa: RUF002 (chart-review prints an en dash between note ids)

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, InputKind, score
from chartscore.cli import main
from chartscore.importers import import_labelstudio, json_array
from chartscore.importers.json_array import iter_elements
from chartscore.importers.labelstudio import NoteIds, label_segment
from chartscore.importers.labelstudio_config import read_config, yaml_subset
from chartscore.io.jsonl import decode_document

from helpers import examples

DATA = Path(__file__).resolve().parent / "data" / "importers"
COLD = DATA / "labelstudio_cold.json"
JANE, JOHN, JILL = 3, 5, 6
LABELS = ["Cough", "Fatigue", "Headache"]

# chart-review's published table (see the module docstring): label -> (TP, FN, TN, FP, kappa).
PUBLISHED = {
    "Cough": (1, 1, 1, 0, 0.4),
    "Fatigue": (2, 0, 1, 0, 1.0),
    "Headache": (0, 0, 1, 2, 0.0),
}
PUBLISHED_POOLED = (3, 1, 3, 2, 0.341)


def confusion(gold: list[bool], answers: list[bool]) -> tuple[int, int, int, int]:
    """(TP, FN, TN, FP), chart-review's order."""
    pairs = Counter(zip(gold, answers, strict=True))
    return pairs[True, True], pairs[True, False], pairs[False, False], pairs[False, True]


def per_label(**options: object) -> tuple[dict[str, list[bool]], dict[str, list[bool]]]:
    imported = import_labelstudio(
        COLD, gold_annotator=JILL, annotator=JANE, labels=LABELS, per_label=True, **options
    )
    gold: dict[str, list[bool]] = {}
    answers: dict[str, list[bool]] = {}
    for row in imported.gold:
        gold.setdefault(row.field_id, []).append(row.value)  # type: ignore[arg-type]
    for answer in imported.predictions:
        answers.setdefault(answer.field_id, []).append(answer.value)  # type: ignore[arg-type]
    return gold, answers


def test_per_label_booleans_give_chart_reviews_published_table() -> None:
    imported = import_labelstudio(
        COLD,
        gold_annotator=JILL,
        annotator=JANE,
        labels=LABELS,
        per_label=True,
        field="symptom",
        notes=[1, 3, 4],
    )
    assert sorted({row.case_id for row in imported.gold}) == ["1", "3", "4"]  # 3 charts
    assert [row.case_id for row in imported.gold] == [row.case_id for row in imported.predictions]
    report = score(list(imported.gold), list(imported.predictions), schema=imported.schema)
    pooled_gold: list[bool] = []
    pooled_answers: list[bool] = []
    for label, (tp, fn, tn, fp, kappa) in PUBLISHED.items():
        field_id = f"symptom.{label.lower()}"
        gold = [row.value for row in imported.gold if row.field_id == field_id]
        answers = [row.value for row in imported.predictions if row.field_id == field_id]
        assert confusion(gold, answers) == (tp, fn, tn, fp)  # type: ignore[arg-type]
        part = report.by_field[field_id]
        assert part.metric("normalized_agreement").success_count == tp + tn
        assert part.kappa is not None and round(part.kappa.value or 0.0, 3) == kappa
        pooled_gold += gold  # type: ignore[arg-type]
        pooled_answers += answers  # type: ignore[arg-type]
    *counts, kappa = PUBLISHED_POOLED
    assert confusion(pooled_gold, pooled_answers) == tuple(counts)
    # The pooled kappa, computed by chartscore: the multi-select field's label cells.
    multi = import_labelstudio(
        COLD, gold_annotator=JILL, annotator=JANE, labels=LABELS, notes=[1, 3, 4]
    )
    labels = score(list(multi.gold), list(multi.predictions), schema=multi.schema)
    pooled_kappa = labels.by_field["labels"].pooled_kappa
    assert pooled_kappa is not None and round(pooled_kappa, 3) == kappa
    pooled = report.by_field_type["boolean"]
    assert pooled.metric("normalized_agreement").success_count == counts[0] + counts[2]
    assert imported.counts["labels_dropped"] == 1  # "Label Not In Study" on note 1


def test_one_multi_select_field_gives_chart_reviews_ppv_and_sensitivity() -> None:
    imported = import_labelstudio(
        COLD, gold_annotator=JILL, annotator=JANE, labels=LABELS, notes=[1, 3, 4]
    )
    assert imported.schema == {"fields": {"labels": {"type": "multi", "choices": LABELS}}}
    report = score(list(imported.gold), list(imported.predictions), schema=imported.schema)
    labels = report.by_field["labels"]
    tp, fn, _, fp, _ = PUBLISHED_POOLED
    precision, recall = labels.metric("item_precision"), labels.metric("item_recall")
    assert (precision.success_count, precision.total_count) == (tp, tp + fp)  # PPV 0.6
    assert (recall.success_count, recall.total_count) == (tp, tp + fn)  # Sens 0.75


def test_notes_are_those_both_annotators_annotated() -> None:
    # Without ranges: jane annotated note 2 too (finding nothing), so four charts.
    imported = import_labelstudio(COLD, gold_annotator=JILL, annotator=JANE, labels=LABELS)
    assert sorted({row.case_id for row in imported.gold}) == ["1", "2", "3", "4"]
    # john never opened note 3: it is left out, and counted.
    imported = import_labelstudio(COLD, gold_annotator=JILL, annotator=JOHN, labels=LABELS)
    assert sorted({row.case_id for row in imported.gold}) == ["1", "2", "4"]
    assert imported.counts["notes_left_out"] == 1
    # Gold alone: every note jill annotated.
    alone = import_labelstudio(COLD, gold_annotator=JILL)
    assert [row.case_id for row in alone.gold] == ["1", "2", "3", "4"]
    assert alone.predictions == ()
    # Every label found, when none are declared (chart-review's default).
    assert alone.schema == {
        "fields": {
            "labels": {
                "type": "multi",
                "choices": ["Cough", "Fatigue", "Headache", "Label Not In Study"],
            }
        }
    }


def export(tasks: object, tmp_path: Path) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def task(note: int, *annotations: object) -> dict[str, object]:
    return {"id": note, "annotations": list(annotations), "data": {"text": "invented"}}


def annotation(who: object, *labels: str, origin: str | None = "manual") -> dict[str, object]:
    result: dict[str, object] = {"value": {"labels": list(labels)}, "type": "labels"}
    if origin is not None:
        result["origin"] = origin
    return {"completed_by": who, "result": [result]}


def test_labels_of_every_origin_count_and_unknown_annotators_do_not(tmp_path: Path) -> None:
    # A pre-annotation the annotator accepted ("prediction") or edited ("prediction-changed")
    # is theirs: chart-review has no filter on origin.
    tasks = [
        task(
            7,
            annotation(1, "A"),
            annotation({"id": 2, "email": "x@example.org"}, "B", origin="prediction"),
            annotation(None, "C"),
        ),
        task(
            8,
            annotation(1, "B", origin="prediction-changed"),
            annotation({"id": 2}, "A", origin=None),
        ),
    ]
    imported = import_labelstudio(export(tasks, tmp_path), gold_annotator=1, annotator=2)
    gold = {row.case_id: sorted(row.value) for row in imported.gold}  # type: ignore[arg-type]
    answers = {row.case_id: sorted(row.value) for row in imported.predictions}  # type: ignore[arg-type]
    assert gold == {"7": ["A"], "8": ["B"]}
    assert answers == {"7": ["B"], "8": ["A"]}


@pytest.mark.parametrize(
    ("tasks", "options", "message"),
    [
        ({"tasks": []}, {}, "invalid_export (export)"),
        ([task(1, annotation(1)), "note"], {}, "invalid_export (export item 1)"),
        ([{"annotations": []}], {}, "invalid_export (export item 0)"),
        ([task(1, annotation("1"))], {}, "invalid_export (export item 0)"),
        ([task(1, {"completed_by": 1, "result": {}})], {}, "invalid_export (export item 0)"),
        # A required key missing is not an empty list (no note dropped, no empty answer made).
        ([task(1, annotation(1)), {"id": 2}], {}, "invalid_export (export item 1)"),
        ([task(1, annotation(1), {"completed_by": 2})], {}, "invalid_export (export item 0)"),
        (
            [task(1, annotation(1), {"completed_by": 2, "result": [{"type": "labels"}]})],
            {},
            "invalid_export (export item 0)",
        ),
        (
            [task(1, {"completed_by": 1, "result": [{"value": {"labels": "A"}}]})],
            {},
            "invalid_export (export item 0)",
        ),
        ([task(1, annotation(1)), task(1, annotation(1))], {}, "duplicate_case (export item 1)"),
        ([task(1, annotation(1), annotation(1))], {}, "duplicate_annotation (export item 0)"),
        ([task(1, annotation(2))], {}, "annotator_not_found (export)"),
        ([task(1, annotation(1))], {"annotator": 2}, "annotator_not_found (export)"),
        ([task(1, annotation(1, "A"))], {"notes": [2]}, "annotator_not_found (export)"),
        (
            [task(1, annotation(1, "Heart failure", "heart-failure"))],
            {"per_label": True},
            "label_collision",
        ),
        ([task(1, annotation(1, "Cough", "cough"))], {}, "label_collision"),
        ([task(1, annotation(1))], {"field": "Labels"}, "invalid_field_id"),
        ([task(1, annotation(1))], {"annotator": 1}, "usage"),
        ([task(1, annotation(1))], {"labels": "A,B"}, "usage"),
        ([task(1, annotation(1))], {"notes": ["1"]}, "usage"),
        ([task(1, annotation(1))], {"per_label": 1}, "usage"),
    ],
)
def test_export_errors_name_the_task(
    tasks: object, options: dict[str, object], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(export(tasks, tmp_path), gold_annotator=1, **options)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_an_export_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text('[\n  {"id": 1,\n  oops\n]', encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(path, gold_annotator=1)
    assert str(caught.value) == "invalid_json (export line 3)"
    path.write_bytes(b'[{"id": 1, "annotations": [], "data": {"text": "caf\xe9"}}]')
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(path, gold_annotator=1)
    assert caught.value.code is ErrorCode.NOT_UTF8


def test_label_segments() -> None:
    assert label_segment("Heart failure") == "heart_failure"
    assert label_segment("COVID-19 (suspected)") == "covid_19_suspected"
    assert label_segment("2nd stroke") == "l_2nd_stroke"
    assert label_segment("Fièvre") == "fi_vre"
    assert label_segment("!!!") == "l"


def test_cli_writes_gold_predictions_and_schema(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    gold, jane, schema = (tmp_path / name for name in ("gold.jsonl", "jane.jsonl", "s.json"))
    argv = ["import", "labelstudio", "--export", str(COLD), "--gold-annotator", "6"]
    argv += ["--annotator", "3", "--labels", "Cough,Fatigue,Headache", "--notes", "1,3-4"]
    argv += ["--per-label", "--field", "symptom", "--gold-out", str(gold)]
    argv += ["--predictions-out", str(jane), "--schema-out", str(schema)]
    assert main(argv, stdout=out, stderr=err) == 0
    assert out.getvalue() == ""
    assert err.getvalue() == (
        "chartscore: fields: 3\n"
        "chartscore: gold: 9 rows for 3 cases\n"
        "chartscore: predictions: 9 rows for 3 cases\n"
        "chartscore: labels outside the declared labels (dropped): 1\n"
    )
    lines = [json.loads(line) for line in gold.read_text().splitlines()]
    assert lines[0] == {
        "case_id": "1",
        "field_id": "symptom.cough",
        "field_type": "boolean",
        "value": True,
    }
    assert len(jane.read_text().splitlines()) == 9


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--gold-out", "g", "--annotator", "3"], "--annotator needs --predictions-out"),
        (["--predictions-out", "p"], "--predictions-out needs --annotator"),
        ([], "nothing to write: give --gold-out, --predictions-out, --rater-out or --schema-out"),
        (["--rater-out", "3"], "--rater-out takes ANNOTATOR=FILE"),
        (["--rater-out", "jane=j"], "--rater-out must be a whole number (or a name from --config)"),
        (["--rater-out", "3=a", "--rater-out", "3=b"], "--rater-out names an annotator twice"),
        (["--gold-out", "g", "--notes", "4-1"], "--notes must be note ids or ranges such as 1,3-4"),
        (
            ["--gold-out", "g", "--notes", "1-99999999"],
            "--notes must be note ids or ranges such as 1,3-4",
        ),
        (
            ["--gold-out", "g", "--annotator", "6", "--predictions-out", "p"],
            "--annotator must differ from --gold-annotator",
        ),
    ],
)
def test_cli_usage_problems(extra: list[str], problem: str) -> None:
    err = io.StringIO()
    argv = ["import", "labelstudio", "--export", str(COLD), "--gold-annotator", "6", *extra]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue() == (
        f"chartscore: error: usage: {problem}; see chartscore import labelstudio --help\n"
    )
    err = io.StringIO()
    argv = ["import", "labelstudio", "--export", str(COLD), "--gold-annotator", "jill"]
    assert main([*argv, "--gold-out", "g"], stdout=io.StringIO(), stderr=err) == 2
    assert "--gold-annotator must be a whole number" in err.getvalue()


# --- reading the export one task at a time ---------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.decimals(
        allow_nan=False, allow_infinity=False, places=3, min_value=-(10**6), max_value=10**6
    )
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    | st.sampled_from(['"', "\\", '\\"', "]", "[", "{", "}", ",", ":", "é", "\u2028", "𝄞"])
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _dumped(values: list[object], indent: int | None, ascii_only: bool) -> bytes:
    def default(value: object) -> object:
        return float(value)  # type: ignore[arg-type]  # Decimal: written as a JSON number

    text = json.dumps(values, indent=indent, ensure_ascii=ascii_only, default=default)
    return text.encode("utf-8")


def _elements(path: Path) -> list[object]:
    return [value for _, value in iter_elements(path, InputKind.EXPORT, 1 << 30)]


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(json_values, max_size=6),
    st.sampled_from([None, 0, 1, 2]),
    st.booleans(),
    st.integers(1, 40),
)
def test_the_array_is_cut_into_the_elements_a_whole_decode_gives(
    tmp_path: Path, values: list[object], indent: int | None, ascii_only: bool, block: int
) -> None:
    data = _dumped(values, indent, ascii_only)
    path = tmp_path / "export.json"
    path.write_bytes(data)
    whole = decode_document(data.decode("utf-8"), InputKind.EXPORT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_array, "_BLOCK_BYTES", block)  # blocks that cut every token somewhere
        assert _elements(path) == whole


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(json_values, max_size=4), st.data(), st.integers(1, 40))
def test_a_damaged_array_is_a_coded_error_or_what_a_whole_decode_gives(
    tmp_path: Path, values: list[object], data: st.DataObject, block: int
) -> None:
    text = bytearray(_dumped(values, None, False))
    for _ in range(data.draw(st.integers(1, 3))):  # insert, delete or replace a few bytes
        at = data.draw(st.integers(0, len(text)))
        byte = data.draw(st.sampled_from(b'[]{}",:\\ \n0a-.e\xff\xc3'))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        if action == "insert" or at == len(text):
            text[at:at] = bytes([byte])
        elif action == "delete":
            del text[at]
        else:
            text[at] = byte
    path = tmp_path / "export.json"
    path.write_bytes(bytes(text))
    expected: object = None
    try:
        expected = decode_document(bytes(text).decode("utf-8-sig"), InputKind.EXPORT)
    except (ChartscoreError, UnicodeDecodeError):
        expected = None
    found: list[object] = []
    error: ChartscoreError | None = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_array, "_BLOCK_BYTES", block)
        try:
            for _, value in iter_elements(path, InputKind.EXPORT, 1 << 30):
                found.append(value)
        except ChartscoreError as raised:  # any other exception fails the test
            error = raised
    if type(expected) is list:
        assert (found, error) == (expected, None)
    else:  # not an array, or not JSON: refused, with a code
        assert error is not None
        assert error.__context__ is None and error.__cause__ is None
        if expected is not None:
            assert error.code is ErrorCode.INVALID_EXPORT


def test_a_syntax_error_in_a_later_task_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text('[\n{"id": 1},\n\n{"id": 2,\n "x": }\n]', encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        _elements(path)
    assert str(caught.value) == "invalid_json (export line 5)"
    for text, message in (
        ("", "invalid_json (export line 1)"),
        ("\n\n", "invalid_json (export line 3)"),
        ('[{"id": 1}\n{"id": 2}]', "invalid_json (export line 2)"),
        ('[{"id": 1}] x', "invalid_json (export line 1)"),
        ('[{"id": 1},\n\n', "invalid_json (export line 3)"),
        ('[{"id": 1},]', "invalid_json (export line 1)"),
        ('{"tasks": []}', "invalid_export (export)"),
        ("\ufeff[]", None),
    ):
        path.write_text(text, encoding="utf-8")
        if message is None:
            assert _elements(path) == []
            continue
        with pytest.raises(ChartscoreError) as caught:
            _elements(path)
        assert str(caught.value) == message, text


@settings(max_examples=examples(100))
@given(
    st.lists(
        st.one_of(st.integers(0, 60), st.tuples(st.integers(0, 60), st.integers(0, 20))), max_size=6
    )
)
def test_notes_given_as_ids_and_ranges_are_those_ids(items: list[int | tuple[int, int]]) -> None:
    given_notes = [
        item if type(item) is int else range(item[0], item[0] + item[1]) for item in items
    ]  # type: ignore[index]
    expected = set()
    for item in given_notes:
        expected |= {item} if type(item) is int else set(item)  # type: ignore[arg-type]
    notes = NoteIds(
        [i for i in given_notes if type(i) is int], [r for r in given_notes if type(r) is range]
    )  # type: ignore[misc]
    assert {note for note in range(-2, 90) if note in notes} == expected
    assert "3" not in notes and 3.0 not in notes


def test_notes_as_a_range_read_only_those_notes() -> None:
    every = import_labelstudio(COLD, gold_annotator=JILL)
    assert import_labelstudio(COLD, gold_annotator=JILL, notes=range(1, 10**12)).gold == every.gold
    two = import_labelstudio(COLD, gold_annotator=JILL, notes=[range(1, 2), 4])
    assert sorted({row.case_id for row in two.gold}) == ["1", "4"]
    for wrong in (range(1, 9, 2), [range(1, 3), "4"], [True], {1: 1}):
        with pytest.raises(ChartscoreError) as caught:
            import_labelstudio(COLD, gold_annotator=JILL, notes=wrong)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE


def test_the_values_limit_counts_what_decoding_keeps_not_a_notes_commas(tmp_path: Path) -> None:
    one = annotation(1, "Cough")
    commas = {"id": 1, "data": {"text": ", :" * 600_000}, "annotations": [one]}  # 1.2 M in text
    imported = import_labelstudio(export([commas], tmp_path), gold_annotator=1)
    assert [sorted(row.value) for row in imported.gold] == [["Cough"]]  # type: ignore[arg-type]
    values = {"id": 1, "data": [0] * 500_000, "annotations": [one]}
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(export([values], tmp_path), gold_annotator=1)
    assert str(caught.value) == "task_too_large (export item 0)"
    nested = {"id": 1, "data": [[[[]]]] * 125_001, "annotations": [one]}  # opened, no commas
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(export([task(7, one), nested], tmp_path), gold_annotator=1)
    assert str(caught.value) == "task_too_large (export item 1)"


# --- chart-review's config.yaml, several exports ---------------------------------------------


def test_config_ignore_implied_grouped_and_merged_exports(tmp_path: Path) -> None:
    first = [
        {"id": 1, "data": {"encounter_id": "E-secret"}, "annotations": [annotation(1, "cat")]},
        {"id": 2, "data": {}, "annotations": [annotation(1, "dog"), annotation(2, "dog")]},
        {"id": 3, "annotations": [annotation(1, "lion"), annotation(2, "cat")]},
    ]
    second = [{"id": 2, "annotations": [annotation(1, "fox")]}]
    config = tmp_path / "config.yaml"
    config.write_text(
        "annotators:\n  bob: 1\n  alice: 2  # a comment\n"
        "ignore:\n  - Encounter/E-secret\n"
        "implied-labels:\n  lion: cat\n"
        "grouped-labels:\n  animal: [cat, 'dog']\n",
        encoding="utf-8",
    )
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(first), encoding="utf-8")
    b.write_text(json.dumps(second), encoding="utf-8")
    imported = import_labelstudio([a, b], gold_annotator="bob", annotator="alice", config=config)
    gold = {row.case_id: sorted(row.value) for row in imported.gold}  # type: ignore[arg-type]
    answers = {row.case_id: sorted(row.value) for row in imported.predictions}  # type: ignore[arg-type]
    # Note 1 is ignored by its encounter; bob's "fox" of the second export joins note 2;
    # lion implies cat, and cat and dog are the group "animal".
    assert gold == {"2": ["animal", "fox"], "3": ["animal", "lion"]}
    assert answers == {"2": ["animal"], "3": ["animal"]}
    assert imported.counts["notes_ignored"] == 1
    text = repr(imported) + repr(read_config(config))
    assert "secret" not in text and "bob" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("annotators:\n  bob: one\n", "invalid_config (config)"),
        ("annotators:\n  ext:\n    filename: x.csv\n", "invalid_config (config)"),
        ("colours: [red]\n", "invalid_config (config)"),
        ("labels:\n  - A\n   - B\n", "invalid_config (config line 3)"),
        ("labels: {a: b}\n", "invalid_config (config line 1)"),
        ("labels:\n\t- A\n", "invalid_config (config line 2)"),
        ("labels: &anchor [A]\n", "invalid_config (config line 1)"),
        ("labels:\n  - 'A\n", "invalid_config (config line 2)"),
        ("ranges:\n  a: b\n  b: a\nannotators:\n  a: 1\n", "invalid_config (config)"),
        ("labels: [A|B]\n", "invalid_config (config)"),
    ],
)
def test_config_outside_the_subset_is_refused(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        read_config(path)
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_config_as_json_and_yaml_agree(tmp_path: Path) -> None:
    yaml_file = Path(__file__).resolve().parent / "data" / "importers" / "chart_review_cold.yaml"
    document = {
        "labels": ["Cough", "Fatigue", "Headache"],
        "annotators": {"jane": 3, "john": 5, "jill": 6},
        "ranges": {"jane": [1, 3, 4]},
    }
    assert yaml_subset(yaml_file.read_text(encoding="utf-8")) == document
    json_file = tmp_path / "config.json"
    json_file.write_text(json.dumps(document), encoding="utf-8")
    from_yaml = import_labelstudio(COLD, gold_annotator="jill", annotator="jane", config=yaml_file)
    from_json = import_labelstudio(COLD, gold_annotator="jill", annotator="jane", config=json_file)
    assert from_yaml.gold == from_json.gold and from_yaml.predictions == from_json.predictions
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(COLD, gold_annotator="nobody", config=json_file)
    assert str(caught.value) == "annotator_not_found (config)"


def test_canaries_in_config_free_text_and_ids_reach_no_output(tmp_path: Path) -> None:
    canary = "Zq9canary"
    region = {"id": "r", "type": "labels", "value": {"labels": ["Dx"]}}
    typed = {"id": "r", "type": "textarea", "from_name": "When", "value": {"text": [canary]}}
    tasks = [
        {
            "id": 1,
            "data": {"encounter_id": canary, "text": canary},
            "annotations": [{"completed_by": 1, "result": [region, typed]}],
        },
        {"id": 2, "annotations": [{"completed_by": 1, "result": [region]}]},
    ]
    config = tmp_path / "config.yaml"
    config.write_text(f"annotators:\n  {canary}: 1\nignore: [Encounter/{canary}]\n", "utf-8")
    path = export(tasks, tmp_path)
    out, err = io.StringIO(), io.StringIO()
    argv = ["import", "labelstudio", "--export", str(path), "--config", str(config)]
    argv += ["--gold-annotator", canary, "--gold-out", str(tmp_path / "g.jsonl")]
    argv += ["--schema-out", str(tmp_path / "s.json")]
    assert main(argv, stdout=out, stderr=err) == 0
    written = (tmp_path / "g.jsonl").read_text() + (tmp_path / "s.json").read_text()
    assert canary not in out.getvalue() + err.getvalue() + written
    assert "notes on the config's ignore list (left out): 1" in err.getvalue()
    config.write_text(f"annotators:\n  {canary}: [x]\n", "utf-8")
    err = io.StringIO()
    assert main(argv, stdout=io.StringIO(), stderr=err) != 0
    assert canary not in err.getvalue() and "invalid_config" in err.getvalue()
