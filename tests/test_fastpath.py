"""The fast route never accepts what the strict route refuses, and agrees when it accepts.

The fast route has two stages: the documented layout read by one pattern
(``layout``), then the scanner for any other layout (``scanned_*``). Each is
held to the strict route on its own, and the pattern to the scanner.
"""

from __future__ import annotations

import re
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, score_files
from chartscore.errors import InputKind
from chartscore.io import layout
from chartscore.io.fastpath import fast_gold, fast_prediction, scanned_gold, scanned_prediction
from chartscore.io.jsonl import parse_object
from chartscore.records.rows import gold_row, prediction_row

from helpers import NumberLiteral, chain_dict, digest, dumps, examples

MAX_OFFSET = 2**63 - 1


def strict(text: str, row: object) -> object:
    """The strict route's answer: the row (see :func:`typed`), or the error code."""
    try:
        parsed = parse_object(text, InputKind.GOLD, 1)
        if parsed is None:
            return "blank"
        return typed(row(parsed))  # type: ignore[operator]
    except ChartscoreError as error:
        return error.code


def typed(row: tuple[object, ...] | None) -> object:
    """A row with each item's type beside it: 1, True and Decimal(1) are told apart."""
    if row is None:
        return None
    return tuple((type(item), item) for item in row)


@st.composite
def number_literals(draw: st.DrawFn) -> NumberLiteral:
    """Non-integer literals up to about 300 characters, few of them significant digits.

    Leading zeros in the fraction or the exponent and trailing zeros make a
    literal long without more significant digits: the strict route refuses any
    literal over 120 characters, so every route must.
    """
    sign = draw(st.sampled_from(["", "-"]))
    whole = draw(st.sampled_from(["0", "1", "12345"]))
    fraction = ""
    if draw(st.booleans()):
        zeros = "0" * draw(st.integers(0, 150))
        trailing = "0" * draw(st.integers(0, 3))
        fraction = "." + zeros + draw(st.sampled_from(["1", "5", "0", "25"])) + trailing
    exponent = ""
    if not fraction or draw(st.booleans()):
        mark = draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"]))
        zeros = "0" * draw(st.integers(0, 150))
        exponent = mark + zeros + draw(st.sampled_from(["0", "1", "7", "9999", "10000"]))
    return NumberLiteral(sign + whole + fraction + exponent)


values = st.one_of(
    number_literals(),
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
            st.one_of(
                st.sampled_from(
                    [
                        *(Decimal("0.2"), 0, 1, 2, Decimal("1." + "0" * 120), Decimal("-0.0")),
                        *(Decimal("1.000"), Decimal("1.5"), Decimal("0E-3"), Decimal("1E+0")),
                    ]
                ),
                number_literals(),
            )
        )
        if draw(st.booleans()):
            chain[draw(st.sampled_from(["transformation_kind", "reviewer_state"]))] = "other"
        sources = chain["source_locations"]
        if sources and draw(st.booleans()):
            sources.append(dict(sources[0]))  # type: ignore[attr-defined,arg-type]
        if sources and draw(st.booleans()):
            del sources[0]["kind"]  # type: ignore[index]
        if sources and draw(st.booleans()):
            sources[-1][draw(st.sampled_from(["start_offset", "end_offset"]))] = draw(  # type: ignore[index]
                st.sampled_from([0, 5, 10, MAX_OFFSET, MAX_OFFSET + 1, 10**19, -1])
            )
        row["evidence_chain"] = chain
    if draw(st.booleans()):  # run cost (docs/formats.md): good and bad usage objects
        row["usage"] = draw(usages)
    return mutate(
        draw,
        dumps(row),
        ["case_id", "field_id", "value", "source_digest", "uncertainty", "input_tokens"],
    )


_USAGE_AMOUNTS = st.one_of(
    st.sampled_from(
        [0, 1, 10**12, 10**12 + 1, -1, True, None, "3", Decimal("1.5"), Decimal("-0.0")]
    ),
    st.sampled_from([Decimal("0.000001"), Decimal("1E-9"), Decimal("1E-10"), Decimal("2.50")]),
    st.sampled_from([Decimal("1E+12"), Decimal("1.0E+12"), Decimal("1E+13"), [], {}]),
    number_literals(),
)
usages = st.one_of(
    st.fixed_dictionaries(  # a good one, as most are
        {"input_tokens": st.integers(0, 10**12)},
        optional={"latency_ms": st.sampled_from([Decimal("0.5"), 3]), "cost": st.just(1)},
    ),
    st.dictionaries(
        st.sampled_from(["input_tokens", "output_tokens", "latency_ms", "cost", "tokens"]),
        _USAGE_AMOUNTS,
        max_size=4,
    ),
    st.sampled_from([None, [], 3, "x"]),
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


@settings(max_examples=examples(600))
@given(gold_lines())
def test_fast_gold_never_accepts_what_strict_refuses(text: str) -> None:
    for route in (fast_gold, scanned_gold):
        fast = route(text)
        if fast is not None:
            assert strict(text, gold_row) == typed(fast)


@settings(max_examples=examples(600))
@given(prediction_lines())
def test_fast_prediction_never_accepts_what_strict_refuses(text: str) -> None:
    for route in (fast_prediction, scanned_prediction):
        fast = route(text)
        if fast is not None:
            assert strict(text, prediction_row) == typed(fast)


@settings(max_examples=examples(600))
@given(st.one_of(gold_lines(), prediction_lines()))
def test_the_layout_pattern_answers_what_the_scanner_answers(text: str) -> None:
    # Where the pattern matches, both stages give the same row, or both decline.
    for pattern, read, scanned in (
        (layout.gold_line, layout.gold, scanned_gold),
        (layout.prediction_line, layout.prediction, scanned_prediction),
    ):
        matched = pattern(text)
        if matched is not None:
            assert typed(read(matched)) == typed(scanned(text))  # type: ignore[arg-type]


def prediction_text(**changes: object) -> str:
    """A prediction line in the documented layout, with two spans, changed as asked."""
    fact = digest("fact")
    chain = chain_dict("f.x", fact, ("generated_text", "clinical_record"))
    sources: list[dict[str, object]] = chain["source_locations"]  # type: ignore[assignment]
    for name, value in changes.items():
        where, _, key = name.partition("__")
        target = {"chain": chain, "first": sources[0], "second": sources[1]}[where]
        if value is None:
            del target[key]
        else:
            target[key] = value
    row = {"case_id": "c1", "field_id": "f.x", "value": "v"}
    return dumps({**row, "normalized_fact_digest": fact, "evidence_chain": chain})


@pytest.mark.parametrize(
    ("changes", "evidence"),
    [  # the evidence state: 1 supported, 2 spans that do not support it
        ({}, 1),
        ({"first__kind": None}, 1),  # no kind: a clinical record
        ({"second__kind": None}, 1),
        ({"first__kind": "clinical_record", "second__kind": "generated_text"}, 1),
        ({"second__kind": "generated_text"}, 2),  # no clinical span: evidence, unsupported
        ({"chain__field_id": "f.y"}, 2),  # the chain is for another field
        ({"first__source_digest": digest("source-1")}, 1),  # same document, other span
        ({"chain__uncertainty": Decimal("1.000")}, 1),
        ({"chain__uncertainty": 0}, 1),
        ({"second__end_offset": MAX_OFFSET}, 1),
    ],
)
def test_the_layout_pattern_reads_good_chains(changes: dict[str, object], evidence: int) -> None:
    text = prediction_text(**changes)
    assert layout.prediction_line(text) is not None  # the quick stage is taken
    fast = fast_prediction(text)
    assert fast is not None
    assert fast[3] == evidence
    assert type(fast[3]) is int
    assert typed(fast) == strict(text, prediction_row)


@pytest.mark.parametrize(
    "changes",
    [
        {"first__start_offset": 10, "first__end_offset": 10},  # an empty span
        {"second__start_offset": 16},  # start after end
        {"second__end_offset": MAX_OFFSET + 1},
        {"second__end_offset": 10**19},
        {
            "second__source_digest": digest("source-0"),
            "second__kind": "generated_text",
            "second__start_offset": 0,
            "second__end_offset": 5,
        },  # the same span twice
        {
            "first__kind": "clinical_record",
            "second__kind": None,
            "second__source_digest": digest("source-0"),
            "second__start_offset": 0,
            "second__end_offset": 5,
        },  # twice: kind given once
        {
            "first__kind": None,
            "second__kind": "clinical_record",
            "second__source_digest": digest("source-0"),
            "second__start_offset": 0,
            "second__end_offset": 5,
        },  # twice: kind given once, the other way round
        {"chain__uncertainty": Decimal("1.5")},
        {"chain__uncertainty": Decimal("1.01")},
        {"chain__transformation_kind": "llm"},
        {"chain__reviewer_state": "done"},
        {"chain__field_id": "F.x"},
        {"first__source_digest": "SHA256:" + "0" * 64},
        {"first__source_digest": "sha256:" + "A" * 64},
        {"first__kind": "note"},
    ],
)
def test_the_layout_route_refuses_bad_chains(changes: dict[str, object]) -> None:
    text = prediction_text(**changes)
    assert fast_prediction(text) is None
    assert isinstance(strict(text, prediction_row), str)  # an error code


@pytest.mark.parametrize(
    "value",
    [
        "9" * 100,
        "-" + "9" * 100,
        "0.5",
        "-0.0",
        "1E+5",
        "2.50e-3",
        '["a", "b:c"]',
        "[]",
        '"caf\\u00e9"',  # an escape: the scanner's
        '"\u00e9"',
        '"a\\"b"',
        '["a", "caf\\u00e9"]',
        '["tab\\tbed"]',
        "true",
        "null",
    ],
)
def test_the_layout_pattern_reads_values_as_the_scanner_does(value: str) -> None:
    for text in (
        '{"case_id": "c", "field_id": "f.x", "field_type": "text", "value": ' + value + "}",
        '{"case_id":"c","field_id":"f.x","field_type":"text","value":'
        + value.replace(", ", ",")
        + "}\r",  # compact throughout
    ):
        assert typed(fast_gold(text)) == typed(scanned_gold(text)) == strict(text, gold_row)
        assert (layout.gold_line(text) is not None) is ("\\" not in value)


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
    reordered = dumps(dict(reversed(prediction.items())))
    for text, in_layout in (
        (spaced, True),
        (spaced.replace(": ", ":").replace(", ", ","), True),
        (spaced.replace(": ", ":", 1), False),  # mixed separators: the scanner's
        (reordered, False),  # keys in another order: the scanner's
    ):
        assert (layout.prediction_line(text) is not None) is in_layout
        fast = fast_prediction(text)
        assert fast is not None
        assert typed(fast) == strict(text, prediction_row)
        assert fast[3] == 1  # supported (records.prediction_row.SUPPORTED_EVIDENCE)


@settings(max_examples=examples(200))
@given(st.text(max_size=30))
def test_fast_routes_survive_any_text(text: str) -> None:
    for fast, row in ((fast_gold, gold_row), (fast_prediction, prediction_row)):
        result = fast(text)
        if result is not None:
            assert strict(text, row) == typed(result)


LONG_ZERO_FRACTION = "0." + "0" * 150 + "1"  # 153 characters, one significant digit


@pytest.mark.parametrize(
    "literal",
    [
        LONG_ZERO_FRACTION,
        "-0." + "0" * 150,  # zero, written long
        "1E-" + "0" * 150 + "5",  # leading zeros in the exponent
        "0.5" + "0" * 118,  # 122 characters, 100 significant digits
        "0." + "0" * 118 + "1",  # 121 characters: one over
    ],
)
def test_every_route_refuses_a_number_literal_over_120_characters(literal: str) -> None:
    gold = {"case_id": "c1", "field_id": "f.x", "field_type": "number", "value": 0}
    prediction = {"case_id": "c1", "field_id": "f.x", "value": NumberLiteral(literal)}
    uncertain = dict(prediction, value=1, evidence_chain=chain_dict("f.x", digest("fact")))
    uncertain["evidence_chain"]["uncertainty"] = NumberLiteral(literal)  # type: ignore[index]
    for text, row, routes in (
        (dumps(dict(gold, value=NumberLiteral(literal))), gold_row, (fast_gold, scanned_gold)),
        (dumps(prediction), prediction_row, (fast_prediction, scanned_prediction)),
        (dumps(uncertain), prediction_row, (fast_prediction, scanned_prediction)),
    ):
        for layout_text in (text, text.replace(": ", ":").replace(", ", ","), " " + text):
            assert strict(layout_text, row) == "number_out_of_range"
            for route in routes:
                assert route(layout_text) is None


@pytest.mark.parametrize(
    "literal",
    [
        "0." + "0" * 117 + "1",  # 120 characters
        "1E-" + "0" * 116 + "5",
        "-0." + "0" * 116 + "1",
    ],
)
def test_every_route_reads_a_number_literal_of_120_characters(literal: str) -> None:
    assert len(literal) == 120
    text = dumps({"case_id": "c1", "field_id": "f.x", "value": NumberLiteral(literal)})
    expected = strict(text, prediction_row)
    assert expected == typed(("c1", "f.x", Decimal(literal), 0, None, None))
    for route in (fast_prediction, scanned_prediction):
        assert typed(route(text)) == expected


def file_outcome(folder: Path, gold: list[str], predictions: list[str]) -> str:
    """The report's bytes for two JSON Lines files of these lines, or the error it raises."""
    gold_path, predictions_path = folder / "gold.jsonl", folder / "predictions.jsonl"
    gold_path.write_text("".join(line + "\n" for line in gold), encoding="utf-8")
    predictions_path.write_text("".join(line + "\n" for line in predictions), encoding="utf-8")
    try:
        return score_files(gold_path, predictions_path).to_json()
    except ChartscoreError as error:
        return str(error)


@settings(max_examples=examples(60), deadline=None)
@given(number_literals(), st.sampled_from(["gold", "value", "uncertainty"]))
def test_a_file_reads_alike_whichever_route_its_lines_take(literal: str, spot: str) -> None:
    # One file in three writings: the documented layout (the pattern's), keys in
    # another order (the scanner's) and an escaped colon in the case id (the
    # strict route's). The report's bytes, or the error, must not differ.
    fact = digest("fact")
    gold = {"case_id": "c:1", "field_id": "f.x", "field_type": "number", "value": 1}
    prediction = {"case_id": "c:1", "field_id": "f.x", "value": 1, "normalized_fact_digest": fact}
    prediction["evidence_chain"] = chain_dict("f.x", fact)
    target = {"gold": gold, "value": prediction, "uncertainty": prediction["evidence_chain"]}
    target[spot]["uncertainty" if spot == "uncertainty" else "value"] = NumberLiteral(literal)  # type: ignore[index]
    other = {"case_id": "c2", "field_id": "f.x", "field_type": "number", "value": 2}
    writings = {
        "layout": (dumps(gold), dumps(prediction)),
        "scanner": (dumps(dict(reversed(gold.items()))), dumps(dict(reversed(prediction.items())))),
        "strict": (
            dumps(gold).replace("c:1", "c\\u003a1"),
            dumps(prediction).replace("c:1", "c\\u003a1"),
        ),
    }
    with tempfile.TemporaryDirectory() as folder:
        outcomes = {
            name: file_outcome(Path(folder), [gold_line, dumps(other)], [prediction_line])
            for name, (gold_line, prediction_line) in writings.items()
        }
    assert len(set(outcomes.values())) == 1, outcomes


@pytest.mark.parametrize("spot", ["gold", "value", "uncertainty"])
def test_a_long_literal_is_refused_with_or_without_an_escape_elsewhere(
    tmp_path: Path, spot: str
) -> None:
    # The example: the escape sent the line to the strict route, which refused it.
    fact = digest("fact")
    chain = chain_dict("f.x", fact)
    gold = {"case_id": "c:1", "field_id": "f.x", "field_type": "number", "value": 1}
    prediction = {"case_id": "c:1", "field_id": "f.x", "value": 1, "evidence_chain": chain}
    target = {"gold": gold, "value": prediction, "uncertainty": chain}[spot]
    target["uncertainty" if spot == "uncertainty" else "value"] = NumberLiteral(LONG_ZERO_FRACTION)
    where = "gold" if spot == "gold" else "predictions"
    for escape in (False, True):
        gold_text, prediction_text = dumps(gold), dumps(prediction)
        if escape:
            gold_text = gold_text.replace("c:1", "c\\u003a1")
            prediction_text = prediction_text.replace("c:1", "c\\u003a1")
        outcome = file_outcome(tmp_path, [gold_text], [prediction_text])
        assert outcome == f"number_out_of_range ({where} line 1)"


@pytest.mark.parametrize("spot", ["gold", "value", "uncertainty"])
def test_every_engine_refuses_a_long_literal(tmp_path: Path, spot: str) -> None:
    # The reader process (--jobs 2) and the Dask engine check lines with the same routes.
    from chartscore.engine import score_dask

    fact = digest("fact")
    gold = {"case_id": "c1", "field_id": "f.x", "field_type": "number", "value": 1}
    prediction = {"case_id": "c1", "field_id": "f.x", "value": 1, "normalized_fact_digest": fact}
    prediction["evidence_chain"] = chain_dict("f.x", fact)
    target = {"gold": gold, "value": prediction, "uncertainty": prediction["evidence_chain"]}
    target[spot]["uncertainty" if spot == "uncertainty" else "value"] = NumberLiteral(  # type: ignore[index]
        LONG_ZERO_FRACTION
    )
    gold_path, predictions_path = tmp_path / "gold.jsonl", tmp_path / "predictions.jsonl"
    gold_path.write_text(dumps(gold) + "\n", encoding="utf-8")
    predictions_path.write_text(dumps(prediction) + "\n", encoding="utf-8")
    where = "gold" if spot == "gold" else "predictions"
    for parallel in (False, True):
        with pytest.raises(ChartscoreError) as caught:
            score_files(gold_path, predictions_path, parallel=parallel)
        assert str(caught.value) == f"number_out_of_range ({where} line 1)"
    with pytest.raises(ChartscoreError) as caught:
        score_dask(str(gold_path), str(predictions_path), scheduler="synchronous")
    assert str(caught.value) == f"number_out_of_range ({where} part 1 line 1)"
