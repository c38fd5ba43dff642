"""Privacy of disclosure control: shared reports and audit tables hold closed vocabulary only.

Canary markers (hypothesis-generated) are planted in case ids and values; nothing of them may
reach the shared report, the audit table, any repr, or an error. The shared report's strings
must all be closed vocabulary, field ids or type names; the audit table's words likewise.
"""

from __future__ import annotations

import json
import re
import traceback

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import ChartscoreError, GoldField, Prediction, score
from chartscore.disclosure import SharedReport, audit, share
from chartscore.disclosure.attack import STATUSES
from disclosure_reference import sensitivity_of

from helpers import CORE_METRIC_NAMES, TYPE_METRIC_NAMES, examples

COUNT_KEYS = {
    "field_count",
    "answerable_count",
    "unanswerable_count",
    "missing_count",
    "answered_count",
    "abstained_count",
}
# Not fuzzy or pattern agreement: these reports have no text fields that match.
METRICS = set(CORE_METRIC_NAMES + TYPE_METRIC_NAMES) - {"fuzzy_agreement", "pattern_agreement"}
TYPES = {"text", "categorical", "number", "boolean", "date", "ordinal", "multi"}
CLOSED = (
    {"format", "format_version", "scorer", "overall", "by_field", "by_field_type", "disclosure"}
    | {"confidence", "design_effect", "clustered_interval"}
    | {"name", "version", "chartscore", chartscore.__version__, "chartscore.shared_report"}
    | {"rule", "min_cell", "unit", "suppressed_count", "field_types", "cell_size", "cases"}
    | COUNT_KEYS
    | METRICS
    | {"success_count", "total_count", "interval", "kappa", "value", "pairs"}
    | TYPES
    # Provable bounds: a range beside each suppressed number, a rate bound per metric.
    | {f"{name}_range" for name in (*COUNT_KEYS, "success_count", "total_count", "pairs")}
    | {"ignored_prediction_count_range", "rate_bound", "kind", "lower", "upper"}
    | {"wilson", "rate_range"}
    | {"survival", "field_rates", "pooled_rates", "rates", "shown", "bounded"}
    # Per-label metrics and the coefficients beside kappa.
    | {"labels", "sensitivity", "specificity", "ppv", "npv", "f1", "macro_f1", "label_rates"}
    | {"ac1", "ac2", "alpha", "metric", "nominal"}
)
DECLARED = {"no", "yes", "false", "true"}
"""Declared labels (schema knowledge) the shared report may name: a choice or a boolean."""

markers = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=6, max_size=10).map(
    lambda s: "CANARY" + s
)


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings(v)]]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    assert value is None or type(value) in (int, float), value
    return []


def assert_vocabulary(text: str, field_ids: set[str]) -> None:
    document = json.loads(text)
    for string in strings(document):
        assert string in CLOSED | DECLARED | field_ids, string


TABLE_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def assert_table_vocabulary(table: str, field_ids: set[str]) -> None:
    allowed = (
        CLOSED
        | DECLARED
        | field_ids
        | set(STATUSES)
        | {"slice", "number", "lo", "hi", "status", "inf", "field", "type", "audit", "PASS"}
        | {"FAIL", "hidden", "numbers", "checked", "failing", "published_numbers"}
        | {"suppressed", "in", "the", "document", "derived", "from", "them"}
    )
    for word in TABLE_WORDS.findall(table):
        parts = word.split(".")
        if word in allowed or (
            parts[0] in allowed
            and all(
                p
                in allowed
                | {"failures", "success_count", "total_count", "interval", "pairs", "value"}
                | {"success_count_range", "total_count_range", "pairs_range", "rate_bound"}
                for p in parts[1:]
            )
        ):
            continue
        pytest.fail(f"table word outside the vocabulary: {word!r}")


def cohort(
    marker: str, cases: int
) -> tuple[
    list[GoldField],
    list[Prediction],
    list[tuple[str, str, str, object]],
    dict[tuple[str, str], tuple[object, bool]],
]:
    gold, predictions, raw_gold, raw_predictions = [], [], [], {}
    for index in range(cases):
        case = f"{marker}-{index}"
        value = None if index % 5 == 0 else f"{marker} value {index % 3}"
        answer = None if index % 7 == 0 else (value if index % 2 else f"{marker} other")
        gold.append(GoldField(case, "hx.note", "text", value))
        raw_gold.append((case, "hx.note", "text", value))
        if index % 11:
            predictions.append(Prediction(case, "hx.note", answer))
            raw_predictions[case, "hx.note"] = (answer, False)
        category = "a" if index % 4 else marker
        gold.append(GoldField(case, "hx.kind", "categorical", category))
        raw_gold.append((case, "hx.kind", "categorical", category))
        predictions.append(Prediction(case, "hx.kind", category if index % 3 else "b"))
        raw_predictions[case, "hx.kind"] = (category if index % 3 else "b", False)
        # A field with declared choices: its labels are named, an answer outside them never.
        status = None if index % 6 == 0 else ("yes" if index % 2 else "no")
        gold.append(GoldField(case, "hx.status", "categorical", status))
        raw_gold.append((case, "hx.status", "categorical", status))
        said = marker if index % 5 == 1 else status
        predictions.append(Prediction(case, "hx.status", said))
        raw_predictions[case, "hx.status"] = (said, False)
    return gold, predictions, raw_gold, raw_predictions


SCHEMA = {"fields": {"hx.status": {"type": "categorical", "choices": ["yes", "no"]}}}
REFERENCE_SCHEMA = {"hx.status": {"type": "categorical", "choices": ["yes", "no"]}}
FIELDS = {"hx.note", "hx.kind", "hx.status"}


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markers, st.integers(1, 40), st.sampled_from([2, 5, 11]))
def test_no_canary_reaches_the_shared_report_or_the_audit(
    marker: str, cases: int, min_cell: int
) -> None:
    gold, predictions, raw_gold, raw_predictions = cohort(marker, cases)
    report = score(gold, predictions, schema=SCHEMA)
    sensitivity, _ = sensitivity_of(raw_gold, raw_predictions, REFERENCE_SCHEMA)
    shared = share(report, sensitivity, min_cell)
    assert shared.by_field["hx.status"].labels is not None
    text = shared.to_json()
    result = audit(text)
    table = result.table()
    outputs = [text, table, repr(shared), repr(result), repr(sensitivity), str(result.rows)]
    for output in outputs:
        assert marker not in output
        assert "CANARY" not in output
    assert_vocabulary(text, FIELDS)
    assert_table_vocabulary(table, FIELDS)


@settings(max_examples=examples(20), deadline=None)
@given(markers, st.sampled_from(["key", "value", "format", "field_id", "version"]))
def test_reading_a_shared_report_never_echoes_it(marker: str, where: str) -> None:
    gold, predictions, raw_gold, raw_predictions = cohort("CANARYBASE", 12)
    report = score(gold, predictions, schema=SCHEMA)
    shared = share(report, sensitivity_of(raw_gold, raw_predictions, REFERENCE_SCHEMA)[0], 11)
    document = json.loads(shared.to_json())
    if where == "key":
        document[marker] = 1
    elif where == "value":
        document["overall"]["field_count"] = marker
    elif where == "format":
        document["format"] = marker
    elif where == "field_id":
        document["disclosure"]["field_types"][marker] = "text"
    else:
        document["scorer"]["version"] = marker + " " * 50
    error: Exception | None = None
    try:
        SharedReport.from_json(json.dumps(document))
    except ChartscoreError as caught:
        error = caught
    assert isinstance(error, ChartscoreError)
    rendered = "".join(traceback.format_exception(error))
    assert marker not in rendered and marker not in str(error) and marker not in repr(error)
    assert error.__context__ is None and error.__cause__ is None


def test_audit_of_a_report_with_a_strange_field_id_is_refused() -> None:
    # A tampered file cannot make the audit table print arbitrary text.
    gold, predictions, raw_gold, raw_predictions = cohort("CANARYBASE", 12)
    report = score(gold, predictions, schema=SCHEMA)
    shared = share(report, sensitivity_of(raw_gold, raw_predictions, REFERENCE_SCHEMA)[0], 11)
    text = shared.to_json().replace("hx.note", "hx.NOTE\\u001b[2J")
    with pytest.raises(ChartscoreError):
        audit(text)


def test_audit_of_a_report_with_a_strange_label_is_refused() -> None:
    # Nor through a label's name: a declared choice is printable text.
    gold, predictions, raw_gold, raw_predictions = cohort("CANARYBASE", 12)
    report = score(gold, predictions, schema=SCHEMA)
    shared = share(report, sensitivity_of(raw_gold, raw_predictions, REFERENCE_SCHEMA)[0], 11)
    text = shared.to_json().replace('"yes"', '"yes\\u001b[2J"')
    assert text != shared.to_json()
    with pytest.raises(ChartscoreError):
        audit(text)


def test_vocabulary_check_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_vocabulary(json.dumps({"format": "CANARYX"}), set())
    with pytest.raises(pytest.fail.Exception):
        assert_table_vocabulary("field CANARYX", set())
