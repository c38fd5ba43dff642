"""``chartscore import fhir``: the HL7 specification's Questionnaire examples, hand-made responses
(enableWhen, repeats, open-choice, nested groups, Bundle and NDJSON), errors and canaries."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import score
from chartscore.cli import main
from chartscore.errors import ChartscoreError
from chartscore.importers import import_fhir
from chartscore.importers.fhir_questionnaire import field_id_of
from chartscore.metrics import NOT_APPLICABLE

HL7 = Path(__file__).resolve().parent / "data" / "fhir"


def hl7(name: str) -> Path:
    return HL7 / name


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- the HL7 FHIR R4 examples ---


def test_the_hl7_questionnaires_import_as_schemas() -> None:
    fields = {
        "questionnaire-example-gcs.json": ["q_1_1", "q_1_2", "q_1_3"],
        "questionnaire-example-f201-lifelines.json": [
            *("q_1", "q_2_1", "q_2_2", "q_2_3", "q_2_4", "q_3_1", "q_3_2"),
        ],
        "questionnaire-example-bluebook.json": [
            *("abnormalitiesatbirth", "birthlength", "birthweight", "hepbgiven"),
            *("hepbgivendate", "nameofchild", "sex", "vitaminikdose1", "vitaminikdose2"),
            "vitaminkgiven",
        ],
        "questionnaire-example.json": [
            *("q_1_1", "q_1_1_1_1", "q_1_1_1_1_1", "q_1_1_1_1_2", "q_1_1_1_2", "q_2_1_2"),
        ],
    }
    for name, expected in fields.items():
        schema = import_fhir(hl7(name)).schema
        assert schema is not None
        assert list(schema["fields"]) == expected, name  # type: ignore[call-overload]
    gcs = import_fhir(hl7("questionnaire-example-gcs.json")).schema
    assert gcs == {
        "fields": {
            "q_1_1": {
                "type": "categorical",
                "choices": ["LA6557-8", "LA6558-6", "LA6559-4", "LA6560-2", "LA6561-0"],
            },
            "q_1_2": {
                "type": "categorical",
                "choices": [
                    *("LA6562-8", "LA6563-6", "LA6564-4", "LA6565-1", "LA6566-9", "LA6567-7"),
                ],
            },
            "q_1_3": {
                "type": "categorical",
                "choices": ["LA6553-7", "LA6554-5", "LA6555-2", "LA6556-0"],
            },
        }
    }
    bluebook = import_fhir(hl7("questionnaire-example-bluebook.json")).schema
    assert bluebook is not None
    assert bluebook["fields"]["vitaminikdose1"] == {"type": "date"}  # type: ignore[index]
    # questionnaire-example.json's value sets are not in the Questionnaire: no choices
    assert import_fhir(hl7("questionnaire-example.json")).counts == {"choices_unresolved": 6}


def test_the_hl7_gcs_response_imports_as_gold_and_scores(tmp_path: Path) -> None:
    q, r = hl7("questionnaire-example-gcs.json"), hl7("questionnaireresponse-example-gcs.json")
    argv = ["import", "fhir", "--questionnaire", str(q), "--responses", str(r)]
    schema, gold = tmp_path / "schema.json", tmp_path / "gold.jsonl"
    status, out, err = run([*argv, "--schema-out", str(schema), "--gold-out", str(gold)])
    assert (status, out) == (0, "")
    assert err == "chartscore: fields: 3\nchartscore: gold: 3 rows for 1 case\n"
    assert lines(gold) == [
        {"case_id": "Patient/example", "field_id": f"q_1_{n}", "field_type": "categorical",
         "value": code}
        for n, code in ((1, "LA6560-2"), (2, "LA6566-9"), (3, "LA6556-0"))
    ]  # fmt: skip
    pair = import_fhir(q, r, role="predictions")
    report = score(import_fhir(q, r).gold, pair.predictions, schema=pair.schema)
    overall: Any = report.to_dict()["overall"]
    assert overall["exact_agreement"]["success_count"] == 3


def test_the_hl7_bluebook_and_cancer_responses_import_as_gold() -> None:
    bluebook = import_fhir(
        hl7("questionnaire-example-bluebook.json"),
        hl7("questionnaireresponse-example-bluebook.json"),
    )
    values = {row.field_id: row.value for row in bluebook.gold}
    assert values["sex"] == "f"  # the option is "F": compared as scoring compares
    assert values["birthweight"] == __import__("decimal").Decimal("3.25")
    # the response answers vitaminKDose1, the Questionnaire asks vitaminiKDose1
    assert values["vitaminikdose1"] is None and values["vitaminikdose2"] is None
    assert bluebook.counts == {"unanswered": 2, "answers_outside": 2, "cases": 1}
    cancer = import_fhir(
        hl7("questionnaire-example.json"), hl7("questionnaireresponse-example.json")
    )
    # 1.1.1 is enabled when 1.1 = v2-0136#Y; the response answers another system's "1"
    assert {row.field_id: row.value for row in cancer.gold} == {
        "q_1_1": "1",
        "q_2_1_2": None,
        **dict.fromkeys(("q_1_1_1_1", "q_1_1_1_1_1", "q_1_1_1_1_2", "q_1_1_1_2"), NOT_APPLICABLE),
    }
    assert cancer.counts["not_applicable"] == 4
    encounter = import_fhir(
        hl7("questionnaire-example.json"),
        hl7("questionnaireresponse-example.json"),
        case_id="encounter",
    )
    assert {row.case_id for row in encounter.gold} == {"Encounter/example"}


def test_the_hl7_lifelines_response_is_no_gold_of_its_questionnaire_but_predictions() -> None:
    q = hl7("questionnaire-example-f201-lifelines.json")
    r = hl7("questionnaireresponse-example-f201-lifelines.json")
    with pytest.raises(ChartscoreError) as caught:
        import_fhir(q, r)  # "Do you smoke?" is a boolean, answered with the string "No"
    assert str(caught.value) == "invalid_answer (responses field q_3_1)"
    predictions = import_fhir(q, r, role="predictions").predictions
    assert {row.field_id: row.value for row in predictions}["q_3_1"] == "No"
    assert len(predictions) == 7


# --- hand-made: enableWhen, repeats, open-choice, nested groups, Bundle and NDJSON ---

CODES = "http://example.org/smoking"


def coding(code: str) -> dict[str, str]:
    return {"system": CODES, "code": code}


SMOKING = ("never", "former", "current")
QUESTIONNAIRE: dict[str, Any] = {
    "resourceType": "Questionnaire",
    "id": "registry",
    "url": "http://example.org/Questionnaire/registry",
    "status": "active",
    "item": [
        {"linkId": "intro", "type": "display", "text": "Abstract from the chart."},
        {
            "linkId": "hx",
            "type": "group",
            "item": [
                {
                    "linkId": "hx.smoking",
                    "type": "choice",
                    "answerOption": [{"valueCoding": coding(c)} for c in SMOKING],
                },
                {
                    "linkId": "hx.pack-years",
                    "type": "integer",
                    "enableWhen": [
                        {"question": "hx.smoking", "operator": "=", "answerCoding": coding(c)}
                        for c in SMOKING[1:]
                    ],
                    "enableBehavior": "any",
                },
                {
                    "linkId": "hx.symptoms",
                    "type": "choice",
                    "repeats": True,
                    "answerOption": [{"valueString": s} for s in ("cough", "fever", "syncope")],
                },
                {
                    "linkId": "hx.other",
                    "type": "open-choice",
                    "answerOption": [{"valueCoding": {"code": "asthma"}}],
                },
            ],
        },
        {"linkId": "echo.done", "type": "boolean"},
        {
            "linkId": "echo",
            "type": "group",
            "enableWhen": [{"question": "echo.done", "operator": "=", "answerBoolean": True}],
            "item": [
                {"linkId": "echo.lvef", "type": "decimal"},
                {
                    "linkId": "echo.severe",
                    "type": "boolean",
                    "enableWhen": [{"question": "echo.lvef", "operator": "<", "answerDecimal": 35}],
                },
                {"linkId": "echo.when", "type": "dateTime"},
            ],
        },
        {
            "linkId": "meds",
            "type": "group",
            "repeats": True,
            "item": [{"linkId": "meds.name", "type": "string"}],
        },
        {
            "linkId": "meds.reviewed",
            "type": "boolean",
            "enableWhen": [{"question": "meds.name", "operator": "exists", "answerBoolean": True}],
        },
        {
            "linkId": "note",
            "type": "text",
            "extension": [
                {
                    "url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression",
                    "valueExpression": {"language": "text/fhirpath", "expression": "true"},
                }
            ],
        },
    ],
}  # fmt: skip


def answer(**value: object) -> dict[str, Any]:
    (kind, content), = value.items()  # fmt: skip
    return {kind: content}


def response(
    subject: str, answers: dict[str, list[dict[str, Any]]], **extra: Any
) -> dict[str, Any]:
    def item(link_id: str) -> dict[str, Any]:
        return {"linkId": link_id, "answer": answers[link_id]}

    groups = {
        "hx": ["hx.smoking", "hx.pack-years", "hx.symptoms", "hx.other"],
        "echo": ["echo.lvef", "echo.severe", "echo.when"],
    }
    items: list[dict[str, Any]] = []
    for group, members in groups.items():
        inner = [item(link_id) for link_id in members if link_id in answers]
        if inner:
            items.append({"linkId": group, "item": inner})
    items += [
        item(link_id) for link_id in ("echo.done", "meds.reviewed", "note") if link_id in answers
    ]
    resource = {
        "resourceType": "QuestionnaireResponse",
        "questionnaire": "http://example.org/Questionnaire/registry|1.0",
        "status": "completed",
        "subject": {"reference": subject},
        "item": items,
    }
    return resource | extra


GOLD = [
    response(
        "Patient/1",
        {
            "hx.smoking": [answer(valueCoding=coding("never"))],
            "hx.symptoms": [answer(valueString="fever"), answer(valueString="cough")],
            "hx.other": [answer(valueString="gout")],
            "echo.done": [answer(valueBoolean=True)],
            "echo.lvef": [answer(valueDecimal=30)],
            "echo.when": [answer(valueDateTime="2023-04-17T10:30:00+02:00")],
            "note": [answer(valueString="seen")],
        },
    ),
    response(
        "Patient/2",
        {
            "hx.smoking": [answer(valueCoding=coding("current"))],
            "hx.pack-years": [answer(valueInteger=20)],
            "hx.other": [answer(valueCoding={"code": "asthma"})],
            "echo.done": [answer(valueBoolean=False)],
        },
    ),
]


def bundle(resources: list[dict[str, Any]]) -> str:
    entries = [{"resource": resource} for resource in resources]
    entries.append({"resource": {"resourceType": "Patient", "id": "x"}})
    return json.dumps({"resourceType": "Bundle", "type": "collection", "entry": entries}, indent=2)


def ndjson(resources: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(resource) + "\n" for resource in resources)


@pytest.fixture
def form(tmp_path: Path) -> Path:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(QUESTIONNAIRE, indent=2), encoding="utf-8")
    return path


def test_field_ids_come_from_link_ids() -> None:
    assert field_id_of("hx.pack-years") == "hx_pack_years"
    assert field_id_of("1.1") == "q_1_1"
    assert field_id_of("/76435-7") == "q_76435_7"
    assert field_id_of("vitaminKgiven") == "vitaminkgiven"
    assert field_id_of("--") is None
    assert field_id_of("x" * 65) is None


def test_enable_when_repeats_open_choice_and_nested_groups(form: Path, tmp_path: Path) -> None:
    responses = tmp_path / "gold.json"
    responses.write_text(bundle(GOLD), encoding="utf-8")
    imported = import_fhir(form, responses)
    assert imported.schema == {
        "fields": {
            "echo_done": {"type": "boolean"},
            "echo_lvef": {"type": "number"},
            "echo_severe": {"type": "boolean"},
            "echo_when": {"type": "date"},
            "hx_other": {"type": "categorical"},
            "hx_pack_years": {"type": "number"},
            "hx_smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
            "hx_symptoms": {"type": "multi", "choices": ["cough", "fever", "syncope"]},
            "meds_reviewed": {"type": "boolean"},
            "note": {"type": "text"},
        }
    }
    rows = {(row.case_id, row.field_id): row.value for row in imported.gold}
    assert rows == {
        ("Patient/1", "echo_done"): True,
        ("Patient/1", "echo_lvef"): 30,
        ("Patient/1", "echo_severe"): None,  # enabled (30 < 35), unanswered
        ("Patient/1", "echo_when"): "2023-04-17",  # the dateTime's date part
        ("Patient/1", "hx_other"): "gout",  # open-choice: free text is a value
        ("Patient/1", "hx_smoking"): "never",
        ("Patient/1", "hx_symptoms"): frozenset({"cough", "fever"}),
        ("Patient/2", "echo_done"): False,
        ("Patient/2", "hx_other"): "asthma",
        ("Patient/2", "hx_pack_years"): 20,
        ("Patient/2", "hx_smoking"): "current",
        ("Patient/2", "hx_symptoms"): None,
        # enableWhen false: the field does not apply (docs/metrics.md, "Not applicable")
        ("Patient/1", "hx_pack_years"): NOT_APPLICABLE,
        ("Patient/2", "echo_lvef"): NOT_APPLICABLE,
        ("Patient/2", "echo_severe"): NOT_APPLICABLE,
        ("Patient/2", "echo_when"): NOT_APPLICABLE,
    }
    assert imported.counts == {
        "skipped_display": 1,
        "skipped_repeating": 1,
        "other_resources": 1,
        # pack-years of a never smoker; the echo fields of a chart with no echo
        "not_applicable": 4,
        # meds.reviewed (a condition on a repeating group) and note (an expression), twice
        "enable_when_unevaluated": 4,
        "unanswered": 2,
        "cases": 2,
    }


def test_not_applicable_is_never_charged_as_an_unanswerable_answer(
    form: Path, tmp_path: Path
) -> None:
    """A model that answers pack-years for a never smoker answers a not-applicable field."""
    gold_in, predictions_in = tmp_path / "gold.json", tmp_path / "model.ndjson"
    gold_in.write_text(bundle(GOLD), encoding="utf-8")
    model = [dict(resource) for resource in GOLD]
    model[0] = response(
        "Patient/1",
        {
            "hx.smoking": [answer(valueCoding=coding("former"))],
            "hx.pack-years": [answer(valueInteger=5)],
            "hx.symptoms": [answer(valueString="cough")],
            "echo.done": [answer(valueBoolean=True)],
            "echo.lvef": [answer(valueDecimal=30)],
            "echo.severe": [answer(valueBoolean=True)],
        },
    )
    predictions_in.write_text(ndjson(model), encoding="utf-8")
    common = ["import", "fhir", "--questionnaire", str(form)]
    gold, schema = tmp_path / "gold.jsonl", tmp_path / "schema.json"
    predictions = tmp_path / "predictions.jsonl"
    assert run([*common, "--responses", str(gold_in), "--gold-out", str(gold), "--schema-out",
                str(schema)])[0] == 0  # fmt: skip
    status, out, err = run(
        [*common, "--responses", str(predictions_in), "--predictions-out", str(predictions)]
    )
    assert (status, out) == (0, "")
    assert err == (
        "chartscore: fields: 10 (skipped: 1 display, 1 repeating)\n"
        "chartscore: predictions: 13 rows for 2 cases\n"
        "chartscore: answers not applicable (enableWhen false), left out: 3\n"
        "chartscore: answers whose enableWhen cannot be evaluated, left out: 4\n"
        "chartscore: items enabled but unanswered (written as null): 3\n"
    )
    assert {"case_id": "Patient/1", "field_id": "hx_pack_years", "value": 5} in lines(predictions)
    status, out, err = run(
        ["score", "--gold", str(gold), "--predictions", str(predictions), "--schema", str(schema),
         "--extra-predictions", "ignore"]
    )  # fmt: skip
    assert status == 0, err
    overall = json.loads(out)["overall"]
    assert overall["unanswerable_answer"]["success_count"] == 1  # echo_severe, enabled in gold
    assert overall["unanswerable_count"] == 2
    # pack-years of the never smoker: counted apart, never as an unanswerable answer
    assert overall["not_applicable_answer"] >= 1
    assert gold.read_text(encoding="utf-8").count('"not_applicable": true') == 4


def test_bundle_ndjson_and_one_resource_read_alike(form: Path, tmp_path: Path) -> None:
    paths = {
        "bundle": (tmp_path / "b.json", bundle(GOLD)),
        "ndjson": (tmp_path / "n.ndjson", ndjson(GOLD)),
        "one-line bundle": (tmp_path / "b1.ndjson", bundle(GOLD).replace("\n", "") + "\n"),
    }
    results = []
    for path, text in paths.values():
        path.write_text(text, encoding="utf-8")
        results.append(import_fhir(form, path).gold_lines())
    assert results[0] == results[1] == results[2]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(GOLD[1], indent=1), encoding="utf-8")
    assert len(import_fhir(form, one).gold) == 8  # 3 of them not applicable


def test_responses_to_other_questionnaires_and_drafts_are_skipped(
    form: Path, tmp_path: Path
) -> None:
    others = [
        response("Patient/9", {}, questionnaire="http://example.org/Questionnaire/other"),
        response("Patient/8", {}, status="in-progress"),
        *GOLD,
    ]
    path = tmp_path / "r.ndjson"
    path.write_text(ndjson(others), encoding="utf-8")
    counts = import_fhir(form, path).counts
    assert counts["responses_other_questionnaire"] == 1
    assert counts["responses_not_completed"] == 1
    assert counts["cases"] == 2


# --- errors: coded, one line, no data ---


def error_of(form: Path, tmp_path: Path, text: str, **options: Any) -> str:
    path = tmp_path / "r.ndjson"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        import_fhir(form, path, **options)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    return str(caught.value)


def test_response_errors_are_located_codes(form: Path, tmp_path: Path) -> None:
    no_subject = dict(GOLD[0])
    del no_subject["subject"]
    assert error_of(form, tmp_path, ndjson([GOLD[1], no_subject])) == (
        "case_reference_missing (responses line 2)"
    )
    assert (
        error_of(form, tmp_path, ndjson([GOLD[1], GOLD[1]])) == "duplicate_case (responses line 2)"
    )
    bad = response("Patient/3", {"hx.smoking": [answer(valueCoding=coding("sometimes"))]})
    assert error_of(form, tmp_path, bundle([GOLD[0], bad])) == (
        "invalid_answer (responses item 1 field hx_smoking)"
    )
    twice = response("Patient/3", {"echo.done": [answer(valueBoolean=True)]})
    twice["item"] *= 2
    assert error_of(form, tmp_path, ndjson([twice])) == "invalid_answer (responses line 1)"
    broken = response("Patient/3", {}) | {"item": 3}
    assert error_of(form, tmp_path, ndjson([broken])) == "invalid_response (responses line 1)"
    assert error_of(form, tmp_path, ndjson(GOLD) + "{oops\n") == "invalid_json (responses line 3)"
    assert error_of(form, tmp_path, ndjson(GOLD), case_id="encounter") == (
        "case_reference_missing (responses line 1)"
    )
    assert error_of(form, tmp_path, ndjson([GOLD[0]]), role="rater") == "usage"
    assert error_of(form, tmp_path, "\n") == "empty_export (responses)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda q: q.update(resourceType="ValueSet"), "invalid_questionnaire (questionnaire)"),
        (lambda q: q["item"][1]["item"][0].update(linkId="hx.pack_years"),
         "invalid_link_id (questionnaire item 3)"),
        (lambda q: q["item"][2].update(linkId=""), "invalid_link_id (questionnaire item 6)"),
        (lambda q: q["item"][2].update(type="slider"),
         "invalid_questionnaire (questionnaire item 6)"),
        (lambda q: q["item"][1]["item"][1].pop("enableBehavior"),
         "invalid_questionnaire (questionnaire item 3)"),
        (lambda q: q["item"][3]["enableWhen"][0].update(operator="~"),
         "invalid_questionnaire (questionnaire item 7)"),
    ],
)  # fmt: skip
def test_questionnaire_errors_are_located_codes(tmp_path: Path, change: Any, message: str) -> None:
    document = json.loads(json.dumps(QUESTIONNAIRE))
    change(document)
    path = tmp_path / "q.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        import_fhir(path)
    assert str(caught.value) == message


def test_command_line_usage(form: Path, tmp_path: Path) -> None:
    common = ["import", "fhir", "--questionnaire", str(form)]
    gold = str(tmp_path / "g.jsonl")
    for argv, said in [
        ([], "nothing to write"),
        (["--gold-out", gold], "need --responses"),
        (["--responses", str(form)], "needs --gold-out or --predictions-out"),
        (["--responses", str(form), "--gold-out", gold, "--predictions-out", gold + "2"],
         "give one of"),
        (["--schema-out", str(tmp_path / "s.json"), "--case-id", "patient"], "--case-id"),
        (["--responses", str(form), "--gold-out", str(form)], "output_is_input"),
    ]:  # fmt: skip
        status, out, err = run([*common, *argv])
        assert status != 0 and out == "" and said in err, argv
        assert err.count("\n") == 1, err


# --- canaries: nothing from the responses reaches a message ---


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(marker=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=8, max_size=12))
def test_canaries_never_reach_stdout_stderr_or_errors(
    form: Path, tmp_path: Path, marker: str
) -> None:
    canary = f"ZQ{marker}QZ"
    folder = tmp_path / canary
    folder.mkdir(exist_ok=True)
    good = response(
        f"Patient/{canary}",
        {"hx.other": [answer(valueString=canary)], "note": [answer(valueString=canary)]},
    )
    bad = response(f"Patient/{canary}2", {"echo.done": [answer(valueString=canary)]})
    missing = response(canary, {}) | {"subject": {"display": canary}}
    for name, resources in (("ok", [good]), ("bad", [good, bad]), ("missing", [missing])):
        responses = folder / f"{canary}-{name}.ndjson"
        responses.write_text(ndjson(resources), encoding="utf-8")
        for out_flag in ("--gold-out", "--predictions-out"):
            target = folder / f"{canary}-{name}{out_flag}.jsonl"
            _, out, err = run(["import", "fhir", "--questionnaire", str(form), "--responses",
                                    str(responses), out_flag, str(target)])  # fmt: skip
            # The whole canary: the bare marker is lowercase letters, which the closed
            # messages' own words may hold (a marker 'referenc' is in 'reference').
            assert canary not in out + err
        try:
            imported = import_fhir(form, responses)
        except ChartscoreError as error:
            assert canary not in str(error) + repr(error)
        else:
            assert canary not in repr(imported)
