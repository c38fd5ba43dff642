"""Record validation, and agreement between the record path and the file-reader path."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import (
    ChartscoreError,
    ErrorCode,
    EvidenceChain,
    FieldType,
    GoldField,
    Prediction,
    ReviewerState,
    SourceKind,
    SourceLocation,
    TransformationKind,
)
from chartscore.errors import InputKind
from chartscore.io.fastpath import check_batch, fast_gold, fast_prediction
from chartscore.records.model import is_valid_gold_value
from chartscore.records.rows import gold_row, prediction_row

from helpers import chain_dict, digest, dumps, examples

D = digest("x")


def code_of(build: object) -> ErrorCode | None:
    try:
        build()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        return error.code
    return None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("c", "f.x", "text", "v"), None),
        (("c" * 128, "f.x", "text", "v"), None),
        (("", "f.x", "text", "v"), ErrorCode.INVALID_CASE_ID),
        (("c" * 129, "f.x", "text", "v"), ErrorCode.INVALID_CASE_ID),
        ((7, "f.x", "text", "v"), ErrorCode.INVALID_CASE_ID),
        (("c", "F.x", "text", "v"), ErrorCode.INVALID_FIELD_ID),
        (("c", "f..x", "text", "v"), ErrorCode.INVALID_FIELD_ID),
        (("c", "1f", "text", "v"), ErrorCode.INVALID_FIELD_ID),
        (("c", "f." + "a" * 65, "text", "v"), ErrorCode.INVALID_FIELD_ID),
        (("c", "f." + "a" * 64, "text", "v"), None),
        (("c", ".".join(["a"] * 9), "text", "v"), ErrorCode.INVALID_FIELD_ID),
        (("c", ".".join(["a"] * 8), "text", "v"), None),
        (("c", "f.x", "string", "v"), ErrorCode.INVALID_FIELD_TYPE),
        (("c", "f.x", FieldType.NUMBER, 3), None),
        (("c", "f.x", "number", float("nan")), ErrorCode.INVALID_VALUE),
        (("c", "f.x", "number", Decimal("Infinity")), ErrorCode.INVALID_VALUE),
        (("c", "f.x", "text", {"a": 1}), ErrorCode.INVALID_VALUE),
        (("c", "f.x", "multi", ["a", 1]), ErrorCode.INVALID_VALUE),
        (("c", "f.x", "number", "12 mg"), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "number", True), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "boolean", 1), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "text", 3), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "date", "2023-02-30"), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "multi", "cough"), ErrorCode.INVALID_GOLD_VALUE),
        (("c", "f.x", "multi", ["cough", "cough"]), None),
        (("c", "f.x", "number", None), None),
    ],
)
def test_gold_field_validation(args: tuple[object, ...], code: ErrorCode | None) -> None:
    assert code_of(lambda: GoldField(*args)) is code  # type: ignore[arg-type]


def test_records_are_frozen_and_convert_sets() -> None:
    gold = GoldField("c", "f.x", "multi", ["b", "a", "a"])
    assert gold.value == frozenset({"a", "b"})
    assert gold.field_type is FieldType.MULTI
    with pytest.raises(AttributeError):
        gold.value = "x"  # type: ignore[misc]


def test_source_location_validation() -> None:
    assert code_of(lambda: SourceLocation(D, 0, 1)) is None
    assert SourceLocation(D, 0, 1).kind is SourceKind.CLINICAL_RECORD
    assert code_of(lambda: SourceLocation(D, 0, 2**63 - 1, "generated_text")) is None
    assert code_of(lambda: SourceLocation("sha256:" + "A" * 64, 0, 1)) is ErrorCode.INVALID_DIGEST
    assert code_of(lambda: SourceLocation("md5:" + "a" * 64, 0, 1)) is ErrorCode.INVALID_DIGEST
    assert code_of(lambda: SourceLocation(D, -1, 1)) is ErrorCode.INVALID_OFFSET
    assert code_of(lambda: SourceLocation(D, 0, 2**63)) is ErrorCode.INVALID_OFFSET
    assert code_of(lambda: SourceLocation(D, False, 1)) is ErrorCode.INVALID_OFFSET
    assert code_of(lambda: SourceLocation(D, 5, 5)) is ErrorCode.INVALID_SPAN
    assert code_of(lambda: SourceLocation(D, 0, 1, "note")) is ErrorCode.INVALID_SOURCE_KIND


def _chain(**changes: object) -> EvidenceChain:
    fields: dict[str, object] = {
        "field_id": "f.x",
        "source_locations": [SourceLocation(D, 0, 1)],
        "normalized_fact_digest": D,
        "transformation_kind": "rule",
        "transformation_digest": D,
        "uncertainty": 0,
        "reviewer_state": ReviewerState.APPROVED,
    }
    fields.update(changes)
    return EvidenceChain(**fields)  # type: ignore[arg-type]


def _boom() -> object:
    yield SourceLocation(D, 0, 1)
    raise RuntimeError("caller's iterator failed")


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({}, None),
        ({"source_locations": []}, None),
        ({"source_locations": (s for s in [SourceLocation(D, 0, 1)])}, None),
        ({"uncertainty": Decimal("0.75")}, None),
        ({"uncertainty": 1.0}, None),
        ({"transformation_kind": TransformationKind.MODEL}, None),
        ({"field_id": "F"}, ErrorCode.INVALID_FIELD_ID),
        ({"source_locations": "abc"}, ErrorCode.INVALID_EVIDENCE_CHAIN),
        ({"source_locations": None}, ErrorCode.INVALID_EVIDENCE_CHAIN),
        ({"source_locations": _boom()}, ErrorCode.INVALID_EVIDENCE_CHAIN),
        ({"source_locations": [{"source_digest": D}]}, ErrorCode.INVALID_SOURCE_LOCATION),
        (
            {"source_locations": [SourceLocation(D, 0, 1), SourceLocation(D, 0, 1)]},
            ErrorCode.DUPLICATE_SOURCE,
        ),
        (
            {
                "source_locations": [
                    SourceLocation(D, 0, 1),
                    SourceLocation(D, 0, 1, "generated_text"),
                ]
            },
            None,
        ),
        ({"normalized_fact_digest": "sha256:abc"}, ErrorCode.INVALID_DIGEST),
        ({"transformation_digest": None}, ErrorCode.INVALID_DIGEST),
        ({"transformation_kind": "llm"}, ErrorCode.INVALID_TRANSFORMATION_KIND),
        ({"reviewer_state": "done"}, ErrorCode.INVALID_REVIEWER_STATE),
        ({"uncertainty": 1.5}, ErrorCode.INVALID_UNCERTAINTY),
        ({"uncertainty": -0.1}, ErrorCode.INVALID_UNCERTAINTY),
        ({"uncertainty": True}, ErrorCode.INVALID_UNCERTAINTY),
        ({"uncertainty": float("nan")}, ErrorCode.INVALID_UNCERTAINTY),
        ({"uncertainty": "0.5"}, ErrorCode.INVALID_UNCERTAINTY),
    ],
)
def test_evidence_chain_validation(changes: dict[str, object], code: ErrorCode | None) -> None:
    assert code_of(lambda: _chain(**changes)) is code


def test_prediction_validation() -> None:
    assert code_of(lambda: Prediction("c", "f.x", None)) is None
    assert code_of(lambda: Prediction("c", "f.x", ["a"], D, _chain())) is None
    assert code_of(lambda: Prediction("c", "f.x", 1, "sha256:x")) is ErrorCode.INVALID_DIGEST
    assert code_of(lambda: Prediction("c", "f.x", 1, None, {"field_id": "f.x"})) is (
        ErrorCode.INVALID_EVIDENCE_CHAIN
    )
    assert code_of(lambda: Prediction("", "f.x", 1)) is ErrorCode.INVALID_CASE_ID
    assert code_of(lambda: Prediction("c", "f.x", object())) is ErrorCode.INVALID_VALUE


# --- The two validation paths agree -------------------------------------------------------

_BAD_VALUES = [float("nan"), {"k": 1}, ["a", 2], [["a"]]]


def _json_value(draw: st.DrawFn) -> object:
    return draw(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-1000, 1000),
            st.decimals(allow_nan=False, allow_infinity=False, places=3),
            st.text(max_size=5),
            st.lists(st.text(max_size=3), max_size=3),
        )
    )


def _as_record_value(value: object) -> object:
    return value


@st.composite
def gold_objects(draw: st.DrawFn) -> dict[str, object]:
    row: dict[str, object] = {
        "case_id": draw(st.sampled_from(["c1", "", "x" * 129, 5])),
        "field_id": draw(st.sampled_from(["f.x", "F.x", None])),
        "field_type": draw(st.sampled_from([*FieldType, "texts", 3])),
        "value": _json_value(draw),
    }
    if draw(st.booleans()):
        # Mostly valid rows, so the value rules get exercised.
        row["case_id"], row["field_id"] = "c1", "f.x"
        row["field_type"] = draw(st.sampled_from(list(FieldType)))
    if draw(st.integers(0, 9)) == 0:
        del row[draw(st.sampled_from(sorted(row)))]
    elif draw(st.integers(0, 9)) == 0:
        row["extra"] = 1
    return {k: (v.value if isinstance(v, FieldType) else v) for k, v in row.items()}


@settings(max_examples=examples(400))
@given(gold_objects())
def test_gold_paths_agree(row: dict[str, object]) -> None:
    from chartscore.records.model import is_valid_gold_value

    def via_reader() -> None:
        _case_id, _field_id, field_type, value = gold_row(row)
        if value is not None and not is_valid_gold_value(field_type, value):
            raise ChartscoreError(ErrorCode.INVALID_GOLD_VALUE)

    reader = code_of(via_reader)
    if reader in (ErrorCode.UNKNOWN_KEY, ErrorCode.MISSING_KEY):
        return  # records have no keys to get wrong
    record = code_of(lambda: GoldField(**row))  # type: ignore[arg-type]
    assert reader == record


@st.composite
def prediction_objects(draw: st.DrawFn) -> dict[str, object]:
    row: dict[str, object] = {"case_id": "c1", "field_id": "f.x", "value": _json_value(draw)}
    if draw(st.booleans()):
        row["normalized_fact_digest"] = draw(st.sampled_from([D, None, "sha256:zz"]))
    if draw(st.booleans()):
        evidence = chain_dict(
            "f.x", D, draw(st.sampled_from([(), ("clinical_record",), ("generated_text",)]))
        )
        fault = draw(st.integers(0, 12))
        sources = evidence["source_locations"]
        if fault == 1:
            evidence["uncertainty"] = draw(st.sampled_from([2, True, "0.1", Decimal("-1")]))
        elif fault == 2:
            evidence["reviewer_state"] = "final"
        elif fault == 3:
            evidence["transformation_kind"] = None
        elif fault == 4:
            evidence["field_id"] = "Bad"
        elif fault == 5:
            evidence["transformation_digest"] = "sha256:"
        elif fault == 6 and sources:
            sources[0]["end_offset"] = sources[0]["start_offset"]  # type: ignore[index]
        elif fault == 7 and sources:
            sources[0]["start_offset"] = -1  # type: ignore[index]
        elif fault == 8 and sources:
            sources[0]["kind"] = "summary"  # type: ignore[index]
        elif fault == 9 and sources:
            sources.append(dict(sources[0]))  # type: ignore[attr-defined,arg-type]
        elif fault == 10:
            evidence["source_locations"] = "none"
        elif fault == 11 and sources:
            sources[0]["source_digest"] = D.upper()  # type: ignore[index]
        elif fault == 12:
            evidence["source_locations"] = [5]
        row["evidence_chain"] = draw(st.sampled_from([evidence, None, "chain"]))
    return row


def _record_prediction(row: dict[str, object]) -> Prediction:
    evidence = row.get("evidence_chain")
    if isinstance(evidence, dict):
        sources = evidence["source_locations"]
        if isinstance(sources, list):
            sources = [
                SourceLocation(**s) if isinstance(s, dict) else s  # type: ignore[arg-type]
                for s in sources
            ]
        evidence = EvidenceChain(**{**evidence, "source_locations": sources})  # type: ignore[arg-type]
    return Prediction(
        row["case_id"],  # type: ignore[arg-type]
        row["field_id"],  # type: ignore[arg-type]
        row["value"],  # type: ignore[arg-type]
        row.get("normalized_fact_digest"),  # type: ignore[arg-type]
        evidence,  # type: ignore[arg-type]
    )


@settings(max_examples=examples(400))
@given(prediction_objects())
def test_prediction_paths_agree(row: dict[str, object]) -> None:
    outcome: list[int] = []
    reader = code_of(lambda: outcome.append(prediction_row(row)[3]))
    record_outcome: list[int] = []
    record = code_of(lambda: record_outcome.append(_record_prediction(row).evidence_state))
    assert reader == record
    assert outcome == record_outcome


def key_error(build: object) -> tuple[ErrorCode, str | None, str] | None:
    try:
        build()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        return error.code, error.key, str(error)
    return None


GOOD_GOLD = {"case_id": "c", "field_id": "f.x", "field_type": "text", "value": "v"}
GOOD_PREDICTION = {"case_id": "c", "field_id": "f.x", "value": "v"}


def _without(row: dict[str, object], *names: str) -> dict[str, object]:
    return {k: v for k, v in row.items() if k not in names}


def _renamed(row: dict[str, object], old: str, new: str) -> dict[str, object]:
    return {(new if k == old else k): v for k, v in row.items()}


def _chain_without(name: str) -> dict[str, object]:
    evidence = chain_dict("f.x", D)
    del evidence[name]
    return {**GOOD_PREDICTION, "evidence_chain": evidence}


def _source_without(name: str) -> dict[str, object]:
    evidence = chain_dict("f.x", D)
    del evidence["source_locations"][0][name]  # type: ignore[index]
    return {**GOOD_PREDICTION, "evidence_chain": evidence}


@pytest.mark.parametrize(
    ("read", "row", "code", "key"),
    [
        # The first missing key in the format's documented order is named.
        (gold_row, _without(GOOD_GOLD, "field_type"), ErrorCode.MISSING_KEY, "field_type"),
        (gold_row, _without(GOOD_GOLD, "value", "case_id"), ErrorCode.MISSING_KEY, "case_id"),
        (gold_row, {}, ErrorCode.MISSING_KEY, "case_id"),
        # A misspelled key stays unnamed, but the format key it replaced is missing.
        (
            gold_row,
            _renamed(GOOD_GOLD, "field_type", "feild_type"),
            ErrorCode.MISSING_KEY,
            "field_type",
        ),
        (gold_row, {**GOOD_GOLD, "note": 1}, ErrorCode.UNKNOWN_KEY, None),
        # A format key in the wrong object is a format word: it may be named.
        (gold_row, {**GOOD_GOLD, "evidence_chain": None}, ErrorCode.UNKNOWN_KEY, "evidence_chain"),
        (gold_row, {**GOOD_GOLD, "kind": 1, "zz": 2}, ErrorCode.UNKNOWN_KEY, "kind"),
        (prediction_row, _without(GOOD_PREDICTION, "value"), ErrorCode.MISSING_KEY, "value"),
        (
            prediction_row,
            {**GOOD_PREDICTION, "field_type": "text"},
            ErrorCode.UNKNOWN_KEY,
            "field_type",
        ),
        (prediction_row, {**GOOD_PREDICTION, "confidence": 0.5}, ErrorCode.UNKNOWN_KEY, None),
        (prediction_row, _chain_without("uncertainty"), ErrorCode.MISSING_KEY, "uncertainty"),
        (prediction_row, _chain_without("field_id"), ErrorCode.MISSING_KEY, "field_id"),
        (prediction_row, _source_without("end_offset"), ErrorCode.MISSING_KEY, "end_offset"),
    ],
)
def test_reader_names_format_keys(
    read: object, row: dict[str, object], code: ErrorCode, key: str | None
) -> None:
    found = key_error(lambda: read(row))  # type: ignore[operator]
    assert found is not None
    assert found[:2] == (code, key)
    assert found[2] == str(code) + (f" (key {key})" if key else "")


def test_missing_key_message_names_line_and_key() -> None:
    error = ChartscoreError(ErrorCode.MISSING_KEY, input="gold", line=3, key="field_type")  # type: ignore[arg-type]
    assert str(error) == "missing_key (gold line 3, key field_type)"
    # Only format keys are kept: anything else could be data.
    for other in ("feild_type", "Field_type", "case_id ", 3, None, b"value"):
        dropped = ChartscoreError(ErrorCode.MISSING_KEY, key=other)  # type: ignore[arg-type]
        assert dropped.key is None
        assert str(dropped) == "missing_key"


def test_reader_reports_key_problems() -> None:
    good = {"case_id": "c", "field_id": "f.x", "field_type": "text", "value": "v"}
    assert code_of(lambda: gold_row({**good, "note": 1})) is ErrorCode.UNKNOWN_KEY
    assert code_of(lambda: gold_row({k: v for k, v in good.items() if k != "value"})) is (
        ErrorCode.MISSING_KEY
    )
    pred = {"case_id": "c", "field_id": "f.x", "value": "v"}
    assert code_of(lambda: prediction_row({**pred, "confidence": 0.5})) is ErrorCode.UNKNOWN_KEY
    assert (
        code_of(lambda: prediction_row({"case_id": "c", "field_id": "f.x"}))
        is ErrorCode.MISSING_KEY
    )
    evidence = chain_dict("f.x", D)
    del evidence["uncertainty"]
    assert (
        code_of(lambda: prediction_row({**pred, "evidence_chain": evidence}))
        is ErrorCode.MISSING_KEY
    )
    evidence = chain_dict("f.x", D)
    evidence["source_locations"][0]["text"] = "x"  # type: ignore[index]
    assert (
        code_of(lambda: prediction_row({**pred, "evidence_chain": evidence}))
        is ErrorCode.UNKNOWN_KEY
    )


# --- from_dict: the file reader's rules on a caller's mapping -----------------------------


def _file_route(row: dict[str, object], source: InputKind) -> object:
    """What the file reader makes of ``row`` written as a JSON Lines line: the row or a code."""
    fast, strict = (
        (fast_gold, gold_row)
        if source is InputKind.GOLD
        else (
            fast_prediction,
            prediction_row,
        )
    )
    _, rows, failure = check_batch(1, [dumps(row)], source, fast, strict)
    if failure is not None:
        assert failure.line == 1 and failure.input is source
        return failure.code, failure.key
    (result,) = rows
    if source is InputKind.GOLD:
        _case, _field, field_type, value = result  # type: ignore[misc]
        if value is not None and not is_valid_gold_value(field_type, value):
            return ErrorCode.INVALID_GOLD_VALUE, None  # the scorer's check of gold rows
        return result
    assert result[5] is None  # type: ignore[index]  # no usage: a record's five facts
    return tuple(result[:5])  # type: ignore[index]


def _from_dict_route(build: object) -> object:
    try:
        record = build()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        assert error.input is None and error.line is None
        return error.code, error.key
    if type(record) is GoldField:
        return record.case_id, record.field_id, record.field_type, record.value
    assert type(record) is Prediction
    chain = record.evidence_chain
    uncertainty = None if chain is None else chain.uncertainty
    return record.case_id, record.field_id, record.value, record.evidence_state, uncertainty


@settings(max_examples=examples(500))
@given(gold_objects())
def test_gold_from_dict_agrees_with_the_file_reader(row: dict[str, object]) -> None:
    assert _from_dict_route(lambda: GoldField.from_dict(row)) == _file_route(row, InputKind.GOLD)


@settings(max_examples=examples(500))
@given(prediction_objects())
def test_prediction_from_dict_agrees_with_the_file_reader(row: dict[str, object]) -> None:
    assert _from_dict_route(lambda: Prediction.from_dict(row)) == _file_route(
        row, InputKind.PREDICTIONS
    )


def test_from_dict_examples() -> None:
    gold = GoldField.from_dict(
        {"case_id": "c", "field_id": "hx.symptoms", "field_type": "multi", "value": ["a", "b"]}
    )
    assert gold.value == frozenset({"a", "b"}) and gold.field_type is FieldType.MULTI
    # A tuple is a JSON-like array too; any Mapping is an object.
    from types import MappingProxyType

    row = MappingProxyType({"case_id": "c", "field_id": "f.x", "value": ("a",)})
    assert Prediction.from_dict(row).value == frozenset({"a"})
    evidence = chain_dict("f.x", D, ("generated_text", "clinical_record"))
    evidence["source_locations"] = tuple(
        MappingProxyType(source)  # type: ignore[arg-type]
        for source in evidence["source_locations"]  # type: ignore[attr-defined]
    )
    answer = Prediction.from_dict(
        {
            "case_id": "c",
            "field_id": "f.x",
            "value": "v",
            "normalized_fact_digest": D,
            "evidence_chain": MappingProxyType(evidence),
        }
    )
    assert answer.is_supported
    assert answer.evidence_chain is not None
    kinds = [source.kind for source in answer.evidence_chain.source_locations]
    assert kinds == [SourceKind.GENERATED_TEXT, SourceKind.CLINICAL_RECORD]
    assert answer == _record_prediction({**answer_row(evidence), "value": "v"})


def answer_row(evidence: dict[str, object]) -> dict[str, object]:
    sources = [dict(source) for source in evidence["source_locations"]]  # type: ignore[attr-defined]
    return {
        "case_id": "c",
        "field_id": "f.x",
        "normalized_fact_digest": D,
        "evidence_chain": {**evidence, "source_locations": sources},
    }


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ([("case_id", "c")], "not_an_object"),
        ("case_id", "not_an_object"),
        (None, "not_an_object"),
        (
            {"case_id": "c", "field_id": "f.x", "feild_type": "text", "value": 1},
            "missing_key (key field_type)",
        ),
        (
            {1: "x", "case_id": "c", "field_id": "f.x", "field_type": "text", "value": "v"},
            "unknown_key",
        ),
        (
            {"case_id": "c", "field_id": "f.x", "field_type": "text", "value": {"a": 1}},
            "invalid_value",
        ),
        (
            {"case_id": "c", "field_id": "f.x", "field_type": "number", "value": "12 mg"},
            "invalid_gold_value",
        ),
        ({"case_id": "c", "field_id": "f.x", "field_type": "number", "value": "١٢"}, None),
    ],
)
def test_gold_from_dict_refusals(row: object, message: str | None) -> None:
    try:
        GoldField.from_dict(row)  # type: ignore[arg-type]
    except ChartscoreError as error:
        assert str(error) == message
        assert error.__context__ is None
    else:
        assert message is None


class _CallerList(list):  # type: ignore[type-arg]
    pass


def test_score_names_the_item_that_is_not_a_record() -> None:
    from chartscore import score

    gold = [GoldField("c1", "f.x", "text", "v"), GoldField("c2", "f.x", "text", "w")]
    answers = [Prediction("c1", "f.x", "v"), Prediction("c2", "f.x", "w")]
    cases = [
        ((gold, [*answers, {"case_id": "c3"}]), "invalid_record (predictions item 2)", 2),
        (([{"case_id": "c1"}, *gold], answers), "invalid_record (gold item 0)", 0),
        ((iter([gold[0], answers[0]]), []), "invalid_record (gold item 1)", 1),
        ((gold, (a for a in [answers[0], gold[1]])), "invalid_record (predictions item 1)", 1),
        # Lists and tuples take a quicker route than other iterables; a list
        # subclass (whose iteration is the caller's code) takes the guarded one.
        ((tuple(gold), (answers[0], gold[1])), "invalid_record (predictions item 1)", 1),
        ((_CallerList([gold[0], answers[1]]), []), "invalid_record (gold item 1)", 1),
    ]
    for (gold_arg, answer_arg), message, index in cases:
        with pytest.raises(ChartscoreError) as caught:
            score(gold_arg, answer_arg)
        assert str(caught.value) == message
        assert caught.value.item == index
        assert caught.value.__context__ is None


def test_error_item_is_a_non_negative_int_only() -> None:
    assert ChartscoreError(ErrorCode.INVALID_RECORD, item=3).item == 3
    for other in (-1, True, 2.0, "3", None):
        error = ChartscoreError(ErrorCode.INVALID_RECORD, item=other)  # type: ignore[arg-type]
        assert error.item is None and str(error) == "invalid_record"
