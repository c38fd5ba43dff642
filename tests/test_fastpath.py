"""The fast route never accepts what the strict route refuses, and agrees when it accepts."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError
from chartscore.errors import InputKind
from chartscore.io.fastpath import fast_gold, fast_prediction
from chartscore.io.jsonl import parse_object
from chartscore.io.records import gold_row, prediction_row

from helpers import chain_dict, digest, dumps


def strict(text: str, row: object) -> object:
    """The strict route's answer: the row, or the error code."""
    try:
        parsed = parse_object(text, InputKind.GOLD, 1)
        if parsed is None:
            return "blank"
        return row(parsed)  # type: ignore[operator]
    except ChartscoreError as error:
        return error.code


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**101), 10**101),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.sampled_from(["a:b", "::", "x\\u003ay", "sha256:"]),
    st.lists(st.sampled_from(["cough", "a:b", "fever"]), max_size=3),
)


@st.composite
def gold_lines(draw: st.DrawFn) -> str:
    row = {
        "case_id": draw(st.sampled_from(["c1", "c:2", "", "x" * 129, "\u00e9"])),
        "field_id": draw(st.sampled_from(["f.x", "F"])),
        "field_type": draw(st.sampled_from(["text", "number", "multi", "nope"])),
        "value": draw(values),
    }
    return mutate(draw, dumps(row), list(row))


@st.composite
def prediction_lines(draw: st.DrawFn) -> str:
    row: dict[str, object] = {"case_id": "c1", "field_id": "f.x", "value": draw(values)}
    fact = digest("fact")
    if draw(st.booleans()):
        row["normalized_fact_digest"] = draw(
            st.sampled_from([fact, digest("other"), None, "sha256:zz"])
        )
    if draw(st.booleans()):
        chain = chain_dict(
            draw(st.sampled_from(["f.x", "f.y"])),
            fact,
            draw(
                st.sampled_from([(), ("clinical_record",), ("generated_text", "clinical_record")])
            ),
        )
        chain["uncertainty"] = draw(
            st.sampled_from([Decimal("0.2"), 0, 1, 2, Decimal("1." + "0" * 120), Decimal("-0.0")])
        )
        sources = chain["source_locations"]
        if sources and draw(st.booleans()):
            sources.append(dict(sources[0]))  # type: ignore[attr-defined,arg-type]
        if sources and draw(st.booleans()):
            del sources[0]["kind"]  # type: ignore[index]
        row["evidence_chain"] = chain
    return mutate(
        draw, dumps(row), ["case_id", "field_id", "value", "source_digest", "uncertainty"]
    )


def mutate(draw: st.DrawFn, text: str, keys: list[str]) -> str:
    """Sometimes inject the faults a hook-free parse cannot see, or JSON oddities."""
    choice = draw(st.integers(0, 9))
    if choice == 0:  # a duplicate key, somewhere (the first object, or a nested one)
        key = draw(st.sampled_from(keys))
        spots = [m.start() + 1 for m in re.finditer(r"\{", text)]
        spot = draw(st.sampled_from(spots))
        text = text[:spot] + f'"{key}": {dumps(draw(values))}, ' + text[spot:]
    elif choice == 1:  # whitespace before colons
        text = text.replace('": ', '" :', draw(st.integers(1, 3)))
    elif choice == 2:  # an escaped colon that the parse turns into a real one
        text = text.replace(":", "\\u003a", 1) if '":' not in text[:3] else text
    elif choice == 3:  # compact separators
        text = text.replace(": ", ":").replace(", ", ",")
    elif choice == 4:
        text = " " + text + " \r\n"
    return text


@settings(max_examples=600)
@given(gold_lines())
def test_fast_gold_never_accepts_what_strict_refuses(text: str) -> None:
    fast = fast_gold(text)
    if fast is not None:
        assert strict(text, gold_row) == fast


@settings(max_examples=600)
@given(prediction_lines())
def test_fast_prediction_never_accepts_what_strict_refuses(text: str) -> None:
    fast = fast_prediction(text)
    if fast is not None:
        assert strict(text, prediction_row) == fast


@pytest.mark.parametrize(
    "text",
    [
        '{"case_id": "c", "case_id": "d", "field_id": "f", "field_type": "text", "value": "v"}',
        '{"case_id": "c", "field_id": "f", "field_type": "text", "value": "v", "value" : "w"}',
        # The escaped colon would balance the count if escapes were not checked.
        '{"case_id": "c\\u003a", "field_id": "f", "field_type": "text", '
        '"value": "v", "value": "w"}',
        '{"case_id": "c", "field_id": "f", "field_type": "number", "value": 1e10000}',
        '{"case_id": "c", "field_id": "f", "field_type": "number", "value": NaN}',
        '{"case_id": "c", "field_id": "f", "field_type": "number", "value": ' + "9" * 101 + "}",
        '{"case_id": "c", "field_id": "f", "field_type": "number", "value": 0.' + "1" * 101 + "}",
    ],
)
def test_fast_gold_refuses_examples(text: str) -> None:
    assert fast_gold(text) is None
    assert isinstance(strict(text, gold_row), str)


def test_fast_routes_accept_ordinary_lines() -> None:
    # The fast route must actually be taken for well-formed rows.
    gold = {"case_id": "c:1", "field_id": "f.x", "field_type": "number", "value": Decimal("2.50")}
    assert fast_gold(dumps(gold)) == ("c:1", "f.x", "number", Decimal("2.50"))
    fact = digest("fact")
    prediction = {
        "case_id": "c:1",
        "field_id": "f.x",
        "value": ["a:b", "c"],
        "normalized_fact_digest": fact,
        "evidence_chain": chain_dict("f.x", fact, ("generated_text", "clinical_record")),
    }
    spaced = dumps(prediction)
    for text in (spaced, spaced.replace(": ", ":").replace(", ", ",")):
        fast = fast_prediction(text)
        assert fast is not None
        assert fast == strict(text, prediction_row)
        assert fast[3] is True


@settings(max_examples=200)
@given(st.text(max_size=30))
def test_fast_routes_survive_any_text(text: str) -> None:
    for fast, row in ((fast_gold, gold_row), (fast_prediction, prediction_row)):
        result = fast(text)
        if result is not None:
            assert strict(text, row) == result
