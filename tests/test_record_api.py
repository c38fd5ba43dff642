"""The records' public behaviour as attrs classes, kept while their construction got faster.

GoldField, Prediction, EvidenceChain and SourceLocation are built by a
hand-written ``__init__`` (see chartscore.records._frozen) instead of attrs' generated
``__init__``. These tests pin what that must not change: attrs introspection,
frozenness, equality and hashing, pickling and copying, ``attrs.evolve``,
pattern matching, no per-record ``__dict__``, subclasses, and that the value
checks that skip a normalizer give the normalizer's verdicts.
"""

from __future__ import annotations

import copy
import pickle
import weakref
from decimal import Decimal
from typing import Any

import attrs
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
from chartscore.records import _rules
from chartscore.records.model import _gold_value_code, is_valid_gold_value

from helpers import digest, examples

D1, D2 = digest("one"), digest("two")


def _source() -> SourceLocation:
    return SourceLocation(D1, 3, 9, "generated_text")


def _chain() -> EvidenceChain:
    return EvidenceChain(
        "f.x", [SourceLocation(D1, 0, 1), _source()], D2, "model", D1, Decimal("0.5"), "approved"
    )


def _records() -> list[Any]:
    return [
        GoldField("c1", "f.x", "multi", ["b", "a"]),
        GoldField("c1", "f.y", FieldType.NUMBER, Decimal("2.5")),
        Prediction("c1", "f.x", ("a",), D2, _chain()),
        Prediction("c1", "f.y", None),
        _chain(),
        _source(),
    ]


FIELDS = {
    GoldField: ("case_id", "field_id", "field_type", "value"),
    Prediction: ("case_id", "field_id", "value", "normalized_fact_digest", "evidence_chain"),
    EvidenceChain: (
        "field_id",
        "source_locations",
        "normalized_fact_digest",
        "transformation_kind",
        "transformation_digest",
        "uncertainty",
        "reviewer_state",
    ),
    SourceLocation: ("source_digest", "start_offset", "end_offset", "kind"),
}


@pytest.mark.parametrize("cls", list(FIELDS))
def test_records_are_attrs_classes_with_their_fields(cls: type) -> None:
    assert attrs.has(cls)
    assert tuple(field.name for field in attrs.fields(cls)) == FIELDS[cls]
    assert all(field.init and field.eq for field in attrs.fields(cls))
    assert cls.__match_args__ == FIELDS[cls]  # type: ignore[attr-defined]
    # One constructor: attrs' unvalidated __attrs_init__ is gone.
    assert not hasattr(cls, "__attrs_init__")


def test_defaults_are_kept() -> None:
    assert attrs.fields(SourceLocation).kind.default is SourceKind.CLINICAL_RECORD
    assert attrs.fields(Prediction).normalized_fact_digest.default is None
    assert attrs.fields(Prediction).evidence_chain.default is None
    assert SourceLocation(D1, 0, 1).kind is SourceKind.CLINICAL_RECORD


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_records_are_frozen_and_slotted(record: Any) -> None:
    name = attrs.fields(type(record))[0].name
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(record, name, "x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        delattr(record, name)
    with pytest.raises(AttributeError):
        record.extra = 1
    assert not hasattr(record, "__dict__")
    assert weakref.ref(record)() is record


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_pickling_and_copying_give_equal_records(record: Any) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        clone = pickle.loads(pickle.dumps(record, protocol=protocol))
        assert type(clone) is type(record)
        assert clone == record and hash(clone) == hash(record)
    for clone in (copy.copy(record), copy.deepcopy(record)):
        assert type(clone) is type(record)
        assert clone == record and hash(clone) == hash(record)


def test_a_loaded_record_is_validated_again() -> None:
    # A pickle is a call of the class: a tampered one cannot make an invalid record.
    good = pickle.dumps(GoldField("c1", "f.x", "text", "v"), protocol=0)
    tampered = good.replace(b"f.x", b"F.x")
    assert tampered != good
    with pytest.raises(ChartscoreError) as caught:
        pickle.loads(tampered)
    assert caught.value.code is ErrorCode.INVALID_FIELD_ID


def test_equality_and_hashing_follow_the_values() -> None:
    a = GoldField("c1", "f.x", "multi", ["a", "b"])
    b = GoldField("c1", "f.x", FieldType.MULTI, ("b", "a", "a"))
    assert a == b and hash(a) == hash(b)
    assert a != GoldField("c2", "f.x", "multi", ["a", "b"])
    assert a != GoldField("c1", "f.x", "multi", ["a"])
    assert len({a, b, GoldField("c1", "f.x", "text", "a")}) == 2
    assert Prediction("c1", "f.x", 1, D2, _chain()) == Prediction("c1", "f.x", 1, D2, _chain())
    assert _source() == SourceLocation(D1, 3, 9, SourceKind.GENERATED_TEXT)
    assert _source() != SourceLocation(D1, 3, 9)
    # Not equal to a different record type with equal field values.
    assert GoldField("c1", "f.x", "text", "v") != Prediction("c1", "f.x", "v")


def test_evolve_validates_like_the_constructor() -> None:
    gold = GoldField("c1", "f.x", "number", 3)
    assert attrs.evolve(gold, value="4.5").value == "4.5"
    with pytest.raises(ChartscoreError) as caught:
        attrs.evolve(gold, value="4 mg")
    assert caught.value.code is ErrorCode.INVALID_GOLD_VALUE
    chain = attrs.evolve(_chain(), uncertainty=1)
    assert chain.uncertainty == 1 and chain.reviewer_state is ReviewerState.APPROVED
    with pytest.raises(ChartscoreError) as caught:
        attrs.evolve(_chain(), reviewer_state="done")
    assert caught.value.code is ErrorCode.INVALID_REVIEWER_STATE


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_asdict_and_astuple_walk_the_fields(record: Any) -> None:
    fields = FIELDS[type(record)]
    shallow = attrs.asdict(record, recurse=False)
    assert tuple(shallow) == fields
    assert all(shallow[name] is getattr(record, name) for name in fields)
    assert attrs.astuple(record, recurse=False) == tuple(getattr(record, n) for n in fields)


def test_only_developer_authored_fields_are_in_attrs_reprs() -> None:
    # Tools that walk attrs fields (rich, tracebacks with locals) see only field ids and types.
    shown = {cls: tuple(f.name for f in attrs.fields(cls) if f.repr) for cls in FIELDS}
    assert shown == {
        GoldField: ("field_id", "field_type"),
        Prediction: ("field_id",),
        EvidenceChain: ("field_id",),
        SourceLocation: (),
    }


def test_records_match_by_position_and_keyword() -> None:
    match GoldField("c1", "f.x", "boolean", True):
        case GoldField(_, "f.x", FieldType.BOOLEAN, value=True):
            matched = True
        case _:
            matched = False
    assert matched


def test_members_are_shared_and_strings_converted() -> None:
    chain = _chain()
    assert chain.transformation_kind is TransformationKind.MODEL
    assert chain.reviewer_state is ReviewerState.APPROVED
    assert type(chain.source_locations) is tuple
    assert GoldField("c", "f.x", "text", "v").field_type is FieldType.TEXT


def test_repeated_strings_are_kept_once() -> None:
    # Field ids and repeated digests are stored as one shared string per value.
    first = GoldField("c1", "shared.field", "text", "v")
    second = GoldField("c2", "".join(["shared", ".field"]), "text", "v")
    assert first.field_id is second.field_id
    a = SourceLocation("".join(["sha256:", "1" * 64]), 0, 1)
    b = SourceLocation("".join(["sha256:", "1" * 64]), 2, 3)
    assert a.source_digest is b.source_digest
    chain = _chain()
    prediction = Prediction("c1", "f.x", "v", "".join([D2[:7], D2[7:]]), chain)
    assert prediction.normalized_fact_digest is chain.normalized_fact_digest


class _Subclassed(GoldField):
    pass


class _SlottedSubclass(SourceLocation):
    __slots__ = ("note",)


def test_subclasses_are_built_and_validated() -> None:
    sub = _Subclassed("c1", "f.x", "text", "v")
    assert type(sub) is _Subclassed
    assert (sub.case_id, sub.field_id, sub.field_type, sub.value) == ("c1", "f.x", "text", "v")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        sub.value = "w"  # type: ignore[misc]
    with pytest.raises(ChartscoreError):
        _Subclassed("", "f.x", "text", "v")
    slotted = _SlottedSubclass(D1, 0, 1)
    assert type(slotted) is _SlottedSubclass and slotted.end_offset == 1
    assert pickle.loads(pickle.dumps(sub)) == sub


# --- Quick value checks give the normalizers' verdicts ------------------------------------

_NUMBERISH = st.from_regex(
    r"\s?[+-]?[0-9٠-٩]{0,3}(\.[0-9]{0,3})?([eE][+-]?[0-9]{1,5})?\s?", fullmatch=True
)
_DATEISH = st.from_regex(r"\s?[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?\s?", fullmatch=True)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**99, max_value=10**101),
    st.sampled_from([10**100, -(10**100), 10**100 - 1, 1 - 10**100]),
    st.decimals(),
    st.floats(),
    st.text(max_size=6),
    _NUMBERISH,
    _DATEISH,
    st.sampled_from(
        ["0000", "0000-01-01", "2024-02-29", "2023-02-29", "2023-04-31", "1" * 60, "1" * 101]
    ),
    st.frozensets(st.text(max_size=3), max_size=3),
    st.frozensets(st.integers(), min_size=1, max_size=2),
    st.lists(st.text(max_size=3), max_size=2),
)


def _expected_code(field_type: FieldType, value: object) -> ErrorCode | None:
    # The rules as written: any value, then a valid gold value of the type.
    if not _rules.is_value(value):
        return ErrorCode.INVALID_VALUE
    return None if is_valid_gold_value(field_type, value) else ErrorCode.INVALID_GOLD_VALUE


@settings(max_examples=examples(2000))
@given(st.sampled_from(list(FieldType)), _VALUES)
def test_gold_value_quick_checks_agree_with_the_rules(field_type: FieldType, value: object) -> None:
    if value is None:
        return
    assert _gold_value_code(field_type, value, type(value)) is _expected_code(field_type, value)
    # And the record agrees, whatever route its constructor takes (a list of
    # strings is a frozenset before the value rules see it).
    converted = frozenset(value) if type(value) is list else value
    expected = _expected_code(field_type, converted)
    if expected is None:
        assert GoldField("c", "f.x", field_type, value).value == converted
    else:
        with pytest.raises(ChartscoreError) as caught:
            GoldField("c", "f.x", field_type, value)
        assert caught.value.code is expected


@settings(max_examples=examples(500))
@given(_VALUES)
def test_prediction_value_checks_agree_with_the_rules(value: object) -> None:
    converted = frozenset(value) if type(value) is list else value
    if _rules.is_value(converted):
        assert Prediction("c", "f.x", value).value == converted
    else:
        with pytest.raises(ChartscoreError) as caught:
            Prediction("c", "f.x", value)
        assert caught.value.code is ErrorCode.INVALID_VALUE
