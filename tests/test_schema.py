"""FieldSpec and Schema validate themselves when built directly, as the records do."""

from __future__ import annotations

import pickle
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, FieldType, GoldField, Prediction, Schema, score
from chartscore.records.schema import MAX_LEVELS, FieldSpec, to_schema

from helpers import examples

E = ErrorCode


def code_of(build: object) -> ErrorCode | None:
    try:
        build()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        return error.code
    return None


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"field_type": "text"}, None),
        ({"field_type": FieldType.NUMBER, "tolerance": Decimal("0.5")}, None),
        ({"field_type": "number", "tolerance": 0}, None),
        ({"field_type": "date", "tolerance_days": 3}, None),
        ({"field_type": "ordinal", "levels": ["1", "2"]}, None),
        ({"field_type": "ordinal", "levels": (1, 2, "three")}, None),
        ({"field_type": "categorical", "choices": ["Never", "former"]}, None),
        ({"field_type": "multi", "choices": frozenset({"cough"})}, None),
        ({"field_type": "text", "levels": []}, None),  # empty: not given
        # The regression: a string tolerance failed at scoring time with a TypeError.
        ({"field_type": "number", "tolerance": "0.5"}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "number", "tolerance": 0.5}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "number", "tolerance": True}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "number", "tolerance": -1}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "number", "tolerance": Decimal("NaN")}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "number", "tolerance": Decimal("1e10000")}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "date", "tolerance_days": -1}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "date", "tolerance_days": 1.0}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "date", "tolerance_days": False}, E.SCHEMA_INVALID_TOLERANCE),
        # Integers past 2**53 - 1 were accepted, then crashed the ledger's schema digest
        # (canonical JSON) and, past 4,300 digits, the spec's own repr.
        ({"field_type": "date", "tolerance_days": 2**53 - 1}, None),
        ({"field_type": "date", "tolerance_days": 2**53}, E.SCHEMA_INVALID_TOLERANCE),
        ({"field_type": "ordinal", "levels": [-(2**53) + 1, 2**53 - 1]}, None),
        ({"field_type": "ordinal", "levels": [2**53, 1]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": [1, -(2**53)]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": [10**5000, 2]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "texts"}, E.SCHEMA_UNKNOWN_TYPE),
        ({"field_type": None}, E.SCHEMA_UNKNOWN_TYPE),
        ({"field_type": "text", "levels": ["a", "b"]}, E.SCHEMA_UNKNOWN_OPTION),
        ({"field_type": "text", "choices": ["a"]}, E.SCHEMA_UNKNOWN_OPTION),
        ({"field_type": "date", "tolerance": 1}, E.SCHEMA_UNKNOWN_OPTION),
        ({"field_type": "number", "tolerance_days": 1}, E.SCHEMA_UNKNOWN_OPTION),
        ({"field_type": "text", "levels": "ab"}, E.SCHEMA_UNKNOWN_OPTION),
        ({"field_type": "ordinal"}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": ["1"]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": "12"}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": ["a", " A"]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": [1, True]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": ["", "a"]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": iter([1, 2])}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "categorical", "choices": []}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "categorical", "choices": "never"}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "categorical", "choices": ["a", "A"]}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "multi", "choices": {"a": 1}}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "multi", "choices": ["a", 1]}, E.SCHEMA_INVALID_CHOICES),
        # A choice names its per-label metrics in a report, whose reader takes one printable
        # line of at most 256 characters (score wrote what render and share then refused).
        ({"field_type": "categorical", "choices": ["a\x1b[31m", "b"]}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "categorical", "choices": ["x" * 257]}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "categorical", "choices": ["X" * 256 + "  "]}, None),
        ({"field_type": "multi", "choices": ["a", "\u202eb"]}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "categorical", "choices": ["  "]}, E.SCHEMA_INVALID_CHOICES),
        ({"field_type": "ordinal", "levels": ["a\x07", "b"]}, E.SCHEMA_INVALID_LEVELS),
        ({"field_type": "ordinal", "levels": ["a", "b" * 257]}, E.SCHEMA_INVALID_LEVELS),
    ],
)
def test_field_spec_validates_on_construction(
    arguments: dict[str, object], code: ErrorCode | None
) -> None:
    assert code_of(lambda: FieldSpec(**arguments)) is code  # type: ignore[arg-type]


def test_field_spec_stores_normalized_exact_options() -> None:
    spec = FieldSpec("number", tolerance=1)
    assert spec.field_type is FieldType.NUMBER
    assert type(spec.tolerance) is Decimal and spec.tolerance == 1
    choices = FieldSpec("categorical", choices=["  Never ", "FORMER"]).choices
    assert choices == frozenset({"never", "former"})
    assert FieldSpec("ordinal", levels=[3, 2, 1]).levels == (3, 2, 1)
    assert FieldSpec("text") == FieldSpec(FieldType.TEXT)


def test_directly_built_string_tolerance_fails_before_scoring() -> None:
    # Before: FieldSpec(tolerance="0.5") was accepted and scoring raised a TypeError from
    # a frame whose locals held the gold value and the answer.
    with pytest.raises(ChartscoreError) as caught:
        FieldSpec(FieldType.NUMBER, tolerance="0.5")  # type: ignore[arg-type]
    assert str(caught.value) == "schema_invalid_tolerance (schema)"
    schema = Schema({"vitals.weight": FieldSpec(FieldType.NUMBER, tolerance=Decimal("0.5"))})
    gold = [GoldField("c", "vitals.weight", "number", 70)]
    report = score(gold, [Prediction("c", "vitals.weight", "70.4")], schema=schema)
    assert report.by_field["vitals.weight"].metric("tolerance_agreement").success_count == 1


def test_levels_are_bounded() -> None:
    assert FieldSpec("ordinal", levels=list(range(MAX_LEVELS))).levels[-1] == MAX_LEVELS - 1
    too_many = list(range(MAX_LEVELS + 1))
    assert code_of(lambda: FieldSpec("ordinal", levels=too_many)) is E.SCHEMA_INVALID_LEVELS
    document = {"fields": {"triage.acuity": {"type": "ordinal", "levels": too_many}}}
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict(document)
    assert str(caught.value) == "schema_invalid_levels (schema field triage.acuity)"


def test_a_large_ordinal_scale_scores() -> None:
    # 10,000 levels and 2,000 rows: kappa's cost follows the rows, not the scale.
    levels = list(range(MAX_LEVELS))
    schema = Schema({"t.x": FieldSpec("ordinal", levels=levels)})
    gold = [GoldField(f"c{i}", "t.x", "ordinal", (i * 7919) % MAX_LEVELS) for i in range(2000)]
    answers = [Prediction(f"c{i}", "t.x", (i * 7919 + i % 3) % MAX_LEVELS) for i in range(2000)]
    kappa = score(gold, answers, schema=schema).by_field["t.x"].kappa
    assert kappa is not None and kappa.pairs == 2000
    assert kappa.value is not None and 0.99 < kappa.value < 1


@pytest.mark.parametrize(
    ("fields", "code", "message"),
    [
        ({"f.x": FieldSpec("text")}, None, None),
        ({}, None, None),
        ({"F.x": FieldSpec("text")}, E.INVALID_FIELD_ID, "invalid_field_id (schema)"),
        ({3: FieldSpec("text")}, E.INVALID_FIELD_ID, "invalid_field_id (schema)"),
        ({"f.x": {"type": "text"}}, E.INVALID_SCHEMA, "invalid_schema (schema field f.x)"),
        ([("f.x", FieldSpec("text"))], E.INVALID_SCHEMA, "invalid_schema (schema)"),
        (None, E.INVALID_SCHEMA, "invalid_schema (schema)"),
    ],
)
def test_schema_validates_on_construction(
    fields: object, code: ErrorCode | None, message: str | None
) -> None:
    try:
        Schema(fields)  # type: ignore[arg-type]
    except ChartscoreError as error:
        assert (error.code, str(error)) == (code, message)
        assert error.__context__ is None
    else:
        assert code is None


def test_schema_copies_the_callers_mapping() -> None:
    fields = {"f.x": FieldSpec("text")}
    schema = Schema(fields)
    fields["f.y"] = FieldSpec("boolean")
    assert set(schema.fields) == {"f.x"}
    assert schema.get("f.x") == FieldSpec("text")
    assert schema.get("f.y") is None


def test_from_dict_builds_the_same_specs() -> None:
    document = {
        "fields": {
            "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
            "vitals.weight_kg": {"type": "number", "tolerance": "0.5"},
            "vitals.height": {"type": "number", "tolerance": 2},
            "dx.onset": {"type": "date", "tolerance_days": 3},
            "hx.symptoms": {"type": "multi", "choices": ["Cough", "fever"]},
            "hx.smoking": {"type": "categorical"},
        }
    }
    assert Schema.from_dict(document) == Schema(
        {
            "triage.acuity": FieldSpec("ordinal", levels=("1", "2", "3")),
            "vitals.weight_kg": FieldSpec("number", tolerance=Decimal("0.5")),
            "vitals.height": FieldSpec("number", tolerance=2),
            "dx.onset": FieldSpec("date", tolerance_days=3),
            "hx.symptoms": FieldSpec("multi", choices=["cough", "Fever"]),
            "hx.smoking": FieldSpec("categorical"),
        }
    )


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"type": "text", "levels": []}, E.SCHEMA_UNKNOWN_OPTION),  # given, though empty
        ({"type": "ordinal", "levels": []}, E.SCHEMA_INVALID_LEVELS),
        ({"type": "categorical", "choices": {"a"}}, E.SCHEMA_INVALID_CHOICES),  # JSON: a list
        ({"type": "number", "tolerance": "١٫٥"}, E.SCHEMA_INVALID_TOLERANCE),
        ({"type": "number", "tolerance": ".5"}, None),  # a number literal (metrics.md)
        ({"type": "number", "tolerance": "١"}, None),
    ],
)
def test_from_dict_keeps_the_document_rules(raw: dict[str, object], code: ErrorCode | None) -> None:
    assert code_of(lambda: Schema.from_dict({"fields": {"f.x": raw}})) is code


def test_to_schema_accepts_schemas_and_documents() -> None:
    schema = Schema({"f.x": FieldSpec("text")})
    assert to_schema(schema) is schema
    assert to_schema({"fields": {"f.x": {"type": "text"}}}) == schema

    class Derived(Schema):
        pass

    derived = Derived({"f.x": FieldSpec("text")})
    rebuilt = to_schema(derived)
    assert type(rebuilt) is Schema and rebuilt == schema
    assert code_of(lambda: to_schema("fields")) is E.INVALID_SCHEMA


tolerances = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.decimals(allow_nan=True, allow_infinity=True, places=2),
    st.sampled_from(["0.5", "x", True, 0.5, [1]]),
)


@settings(max_examples=examples(300))
@given(
    st.sampled_from([*FieldType, "nope"]),
    st.one_of(st.none(), st.lists(st.one_of(st.integers(0, 3), st.sampled_from(["a", "A", ""])))),
    st.one_of(st.none(), st.lists(st.sampled_from(["a", "A", "b", 3]), max_size=3)),
    tolerances,
    st.one_of(st.none(), st.integers(-2, 2), st.just(True)),
)
def test_from_dict_and_field_spec_refuse_alike(
    field_type: object, levels: object, choices: object, tolerance: object, days: object
) -> None:
    # A document whose options are all of the constructor's own types is refused by
    # from_dict with exactly the code FieldSpec gives (from_dict names the field too).
    kind = field_type.value if isinstance(field_type, FieldType) else field_type
    raw: dict[str, object] = {"type": kind}
    arguments: dict[str, object] = {"field_type": kind}
    for name, value in (
        ("levels", levels),
        ("choices", choices),
        ("tolerance", tolerance if type(tolerance) in (int, Decimal) else None),
        ("tolerance_days", days),
    ):
        if value is not None:
            raw[name] = value
            arguments[name] = value
    if levels == [] and kind != "ordinal":
        return  # an empty list in a document is given; as an argument it is the default
    direct = code_of(lambda: FieldSpec(**arguments))  # type: ignore[arg-type]
    document = code_of(lambda: Schema.from_dict({"fields": {"f.x": raw}}))
    assert document == direct


def test_a_match_option_is_read_by_its_type_first() -> None:
    # "match" was compared with == "fuzzy" before its type was known: a caller's object ran
    # its own __eq__, and what it raised left Schema.from_dict.
    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("ZQ canary")

        __hash__ = object.__hash__

    # A document's keys are strings: a mapping keyed by another object is no schema at all.
    for match, code in ((Hostile(), E.SCHEMA_INVALID_MATCH), ({Hostile(): 0.8}, E.INVALID_SCHEMA)):
        document = {"fields": {"a.b": {"type": "text", "match": match}}}
        with pytest.raises(ChartscoreError) as raised:
            Schema.from_dict(document)
        assert raised.value.code is code
        assert raised.value.__context__ is None and raised.value.__cause__ is None


def test_a_schema_cannot_change_after_it_is_validated() -> None:
    # Its fields were a dict: a caller could put anything in after validation, and score()
    # then failed with an AttributeError; hash() raised TypeError.
    schema = Schema({"a.b": FieldSpec("categorical", choices=["x", "y"])})
    with pytest.raises(TypeError):
        schema.fields["a.b"] = "not a FieldSpec"  # type: ignore[index]
    with pytest.raises(TypeError):
        del schema.fields["a.b"]  # type: ignore[attr-defined]
    same = Schema({"a.b": FieldSpec("categorical", choices=["y", "x"])})
    assert schema == same and hash(schema) == hash(same)
    assert schema != Schema({"a.b": FieldSpec("categorical", choices=["x"])})
    restored = pickle.loads(pickle.dumps(schema))
    assert restored == schema and hash(restored) == hash(schema)
    with pytest.raises(TypeError):
        restored.fields["a.b"] = "not a FieldSpec"  # type: ignore[index]
    report = score([GoldField("c1", "a.b", "categorical", "x")], [], schema=restored)
    assert report.by_field["a.b"].count("field_count") == 1
