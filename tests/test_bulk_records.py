"""GoldField.from_rows and Prediction.from_rows: from_dict's verdicts, many rows at once.

The bulk path builds plain-shaped rows with the constructors and leaves every
other row to from_dict; these properties pin that the two routes agree on every
row: the same records, and for the first refused row the same code and key,
located by its position. The collector is paused while building and restored.
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Callable, Iterator
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import (
    ChartscoreError,
    ErrorCode,
    FieldType,
    GoldField,
    Prediction,
    ReviewerState,
    SourceKind,
    TransformationKind,
)

from helpers import chain_dict, digest, examples

D1, D2, D3 = digest("one"), digest("two"), digest("three")


class _Key(str):
    """A str subclass equal to a format key: from_dict does not take it as one."""


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**101), 10**101),
    st.decimals(),
    st.floats(),
    st.text(max_size=4),
    st.sampled_from(["2024-02-29", "2023-02-30", "12.5", " 7 ", "", "a"]),
    st.lists(st.text(max_size=2), max_size=2),
    st.lists(st.one_of(st.text(max_size=2), st.integers()), min_size=1, max_size=2),
    st.tuples(st.text(max_size=2)),
    st.frozensets(st.text(max_size=2), max_size=2),
    st.sets(st.text(max_size=2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
_CASE_IDS = st.sampled_from(["c1", "c2", "", "x" * 129, 5, None, _Key("c1")])
_FIELD_IDS = st.sampled_from(["f.x", "f.y", "F.x", "", 3, _Key("f.x")])
_FIELD_TYPES = st.sampled_from([*(t.value for t in FieldType), FieldType.TEXT, "Text", 1, None])
_DIGESTS = st.sampled_from([D1, D2, D3, D1.upper(), "sha256:", 7, _Key(D2)])


@st.composite
def _reshaped(draw: st.DrawFn, row: dict[str, Any], extra_keys: list[str]) -> object:
    """``row``, maybe with a key dropped, added or subclassed, maybe as another mapping."""
    row = dict(row)
    change = draw(st.integers(0, 9))
    if change == 0 and row:
        del row[draw(st.sampled_from(sorted(row)))]
    elif change == 1:
        row[draw(st.sampled_from([*extra_keys, "zzz"]))] = draw(_VALUES)
    elif change == 2 and row:
        name = draw(st.sampled_from(sorted(row)))
        row[_Key(name)] = row.pop(name)
    elif change == 3:
        row[1] = 1  # type: ignore[index]
    wrap = draw(st.integers(0, 9))
    if wrap == 0:
        return MappingProxyType(row)
    if wrap == 1:
        return OrderedDict(row)
    if wrap == 2:
        return [row]
    return row


@st.composite
def gold_rows(draw: st.DrawFn) -> object:
    row = {
        "case_id": draw(_CASE_IDS),
        "field_id": draw(_FIELD_IDS),
        "field_type": draw(_FIELD_TYPES),
        "value": draw(_VALUES),
    }
    return draw(_reshaped(row, ["normalized_fact_digest", "kind"]))


@st.composite
def _sources(draw: st.DrawFn) -> object:
    source: dict[str, Any] = {
        "source_digest": draw(_DIGESTS),
        "start_offset": draw(st.sampled_from([0, 3, -1, 2**63, True, Decimal(1)])),
        "end_offset": draw(st.sampled_from([5, 3, 2**63 - 1, 1.0])),
    }
    if draw(st.booleans()):
        source["kind"] = draw(
            st.sampled_from(["clinical_record", "generated_text", SourceKind.GENERATED_TEXT, "x"])
        )
    return draw(_reshaped(source, ["field_id", "uncertainty"]))


@st.composite
def _chains(draw: st.DrawFn) -> object:
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([None, [], "chain", 0]))
    chain = chain_dict(draw(st.sampled_from(["f.x", "f.y", "F"])), draw(_DIGESTS))
    sources = draw(st.lists(_sources(), max_size=3))
    if sources and draw(st.booleans()):
        sources.append(sources[0])  # a duplicate, or a repeated invalid one
    chain["source_locations"] = draw(
        st.sampled_from([sources, tuple(sources), "sources", None])
        if draw(st.integers(0, 5)) == 0
        else st.just(sources)
    )
    chain["transformation_kind"] = draw(
        st.sampled_from(["rule", "model", TransformationKind.RULE, "human"])
    )
    chain["reviewer_state"] = draw(
        st.sampled_from(["pending", "approved", ReviewerState.REJECTED, "done"])
    )
    chain["transformation_digest"] = draw(_DIGESTS)
    chain["uncertainty"] = draw(
        st.sampled_from([Decimal("0.2"), 0, 1, 0.5, 2, Decimal("NaN"), True, "0.5"])
    )
    return draw(_reshaped(chain, ["case_id", "kind"]))


@st.composite
def prediction_rows(draw: st.DrawFn) -> object:
    row: dict[str, Any] = {
        "case_id": draw(_CASE_IDS),
        "field_id": draw(_FIELD_IDS),
        "value": draw(_VALUES),
    }
    if draw(st.booleans()):
        row["normalized_fact_digest"] = draw(st.one_of(st.none(), _DIGESTS))
    if draw(st.integers(0, 2)):
        row["evidence_chain"] = draw(_chains())
    return draw(_reshaped(row, ["field_type", "kind"]))


def _one_by_one(from_dict: Callable[[Any], Any], rows: list[object]) -> tuple[object, ...]:
    records = []
    for index, row in enumerate(rows):
        try:
            records.append(from_dict(row))
        except ChartscoreError as error:
            return ("refused", error.code, error.key, index)
    return ("built", records)


def _bulk(from_rows: Callable[[Any], list[Any]], rows: object) -> tuple[object, ...]:
    try:
        records = from_rows(rows)
    except ChartscoreError as error:
        assert error.__cause__ is None and error.__context__ is None
        return ("refused", error.code, error.key, error.item)
    return ("built", records)


def _same(expected: tuple[object, ...], got: tuple[object, ...]) -> None:
    assert got == expected
    if expected[0] == "built":
        for mine, theirs in zip(got[1], expected[1], strict=True):  # type: ignore[call-overload]
            assert type(mine) is type(theirs)
            assert [getattr(mine, name) for name in mine.__match_args__] == [
                getattr(theirs, name) for name in theirs.__match_args__
            ]


@settings(max_examples=examples(600))
@given(st.lists(gold_rows(), max_size=4))
def test_gold_from_rows_is_from_dict_row_by_row(rows: list[object]) -> None:
    _same(_one_by_one(GoldField.from_dict, rows), _bulk(GoldField.from_rows, rows))


@settings(max_examples=examples(600))
@given(st.lists(prediction_rows(), max_size=4))
def test_prediction_from_rows_is_from_dict_row_by_row(rows: list[object]) -> None:
    _same(_one_by_one(Prediction.from_dict, rows), _bulk(Prediction.from_rows, rows))


VALID_GOLD = {"case_id": "c1", "field_id": "f.x", "field_type": "multi", "value": ["b", "a"]}
NO_FIELD_ID = {key: value for key, value in VALID_GOLD.items() if key != "field_id"}
NOT_A_NUMBER = {**VALID_GOLD, "field_type": "number", "value": "4 mg"}
VALID_PREDICTION = {
    "case_id": "c1",
    "field_id": "f.x",
    "value": "a",
    "normalized_fact_digest": D2,
    "evidence_chain": chain_dict("f.x", D2, ("clinical_record", "generated_text")),
}


@pytest.mark.parametrize(
    ("row", "code", "key"),
    [
        # (a bad second row, the code and key from_dict gives it)
        ({**VALID_GOLD, "value": [1]}, ErrorCode.INVALID_VALUE, None),
        ({**VALID_GOLD, "field_type": FieldType.MULTI}, ErrorCode.INVALID_FIELD_TYPE, None),
        (NO_FIELD_ID, ErrorCode.MISSING_KEY, "field_id"),
        ({**VALID_GOLD, "kind": "x"}, ErrorCode.UNKNOWN_KEY, "kind"),
        (NOT_A_NUMBER, ErrorCode.INVALID_GOLD_VALUE, None),
        ("not a row", ErrorCode.NOT_AN_OBJECT, None),
    ],
)
def test_a_bad_gold_row_is_named_by_position(row: object, code: ErrorCode, key: str | None) -> None:
    with pytest.raises(ChartscoreError) as caught:
        GoldField.from_rows([VALID_GOLD, row, VALID_GOLD])
    error = caught.value
    assert (error.code, error.key, error.item) == (code, key, 1)
    assert error.__cause__ is None and error.__context__ is None


def test_a_duplicate_source_is_refused_as_from_dict_refuses_it() -> None:
    chain = chain_dict("f.x", D2)
    chain["source_locations"] = chain["source_locations"] * 2  # type: ignore[operator]
    row = {**VALID_PREDICTION, "evidence_chain": chain}
    with pytest.raises(ChartscoreError) as caught:
        Prediction.from_rows([row])
    assert (caught.value.code, caught.value.item) == (ErrorCode.DUPLICATE_SOURCE, 0)


def test_records_equal_their_from_dict_twins() -> None:
    (gold,) = GoldField.from_rows((VALID_GOLD,))
    assert gold == GoldField.from_dict(VALID_GOLD) and gold.value == frozenset({"a", "b"})
    (prediction,) = Prediction.from_rows(iter([VALID_PREDICTION]))
    assert prediction == Prediction.from_dict(VALID_PREDICTION) and prediction.is_supported


class _Sub(GoldField):
    pass


def test_a_subclass_builds_its_own_records() -> None:
    (record,) = _Sub.from_rows([VALID_GOLD])
    assert type(record) is _Sub


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_building_and_restored(enabled: bool) -> None:
    seen: list[bool] = []

    def rows() -> Iterator[object]:
        for row in (VALID_GOLD, VALID_GOLD, {"case_id": ""}):
            seen.append(gc.isenabled())
            yield row

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.raises(ChartscoreError):
            GoldField.from_rows(rows())
        assert seen == [False, False, False]
        assert gc.isenabled() is enabled
        assert len(GoldField.from_rows([VALID_GOLD] * 3)) == 3
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


class _PrivateError(Exception):
    pass


def _failing() -> Iterator[object]:
    yield VALID_GOLD
    raise _PrivateError


@pytest.mark.parametrize("rows", [None, 5, "rows", {"a": 1}, _failing()])
def test_rows_that_cannot_be_read_are_invalid_collection(rows: object) -> None:
    with pytest.raises(ChartscoreError) as caught:
        GoldField.from_rows(rows)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.INVALID_COLLECTION
    assert caught.value.__cause__ is None and caught.value.__context__ is None
