"""chartscore.documents.canonical_json against RFC 8785 (JSON Canonicalization Scheme).

Vectors are from RFC 8785 (A. Rundgren, B. Jordan, S. Erdtman, June 2020): section
3.2.2 (the serialization example), section 3.2.3 (the sorting example) and Appendix B
(number serialization samples). Numbers are also checked against a small independent
reference of ECMA-262 Number::toString written below.
"""

from __future__ import annotations

import json
import math
import re
import struct
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chartscore.documents.canonical_json import canonical_json, format_number

from helpers import examples

MAX_SAFE_INTEGER = 2**53 - 1


def from_bits(bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return value


# --------------------------------------------------------------------------- numbers

# RFC 8785 Appendix B: IEEE 754 bit pattern -> canonical text (NaN/Infinity rows are
# errors and tested separately).
RFC8785_APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), RFC8785_APPENDIX_B)
def test_rfc8785_appendix_b_numbers(bits: str, expected: str) -> None:
    number = from_bits(bits)
    assert format_number(number) == expected
    assert canonical_json(number) == expected
    assert canonical_json([number]) == f"[{expected}]"


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff8000000000000", "7ff0000000000000"])
def test_rfc8785_appendix_b_non_finite_bit_patterns_are_errors(bits: str) -> None:
    with pytest.raises(ValueError):
        format_number(from_bits(bits))


# Boundaries of the ECMA-262 Number::toString cases (values as JavaScript prints them).
@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.5, "-1.5"),
        (0.1, "0.1"),
        (100.0, "100"),
        (123.456, "123.456"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (1.23e-7, "1.23e-7"),
        (-1e-7, "-1e-7"),
        (5e-324, "5e-324"),
        (2.0**53, "9007199254740992"),
        (0.30000000000000004, "0.30000000000000004"),
        (1e300, "1e+300"),
    ],
)
def test_format_number_case_boundaries(number: float, expected: str) -> None:
    assert format_number(number) == expected


def reference_number_to_string(x: float) -> str:
    """ECMA-262 Number::toString(x) for finite x, from repr's shortest digits.

    repr(x) gives the shortest decimal that round-trips (correctly rounded), which is
    what ECMA-262 section 6.1.6.1.20 asks for. Its digits s (k of them) and the decimal
    point position n (value = 0.s * 10**n) are taken apart by string slicing only.
    """
    if x == 0:
        return "0"
    if x < 0:
        return "-" + reference_number_to_string(-x)
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    n = len(whole) + int(exponent or "0")
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    s = stripped.rstrip("0")
    k = len(s)
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    sign = "+" if n - 1 >= 0 else "-"
    if k == 1:
        return f"{s}e{sign}{abs(n - 1)}"
    return f"{s[0]}.{s[1:]}e{sign}{abs(n - 1)}"


@pytest.mark.parametrize(("bits", "expected"), RFC8785_APPENDIX_B)
def test_reference_implementation_reproduces_appendix_b(bits: str, expected: str) -> None:
    assert reference_number_to_string(from_bits(bits)) == expected


@settings(max_examples=examples(3000))
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(5e-324)
@example(1e21)
@example(999999999999999900000.0)
@example(1e-7)
@example(9.999999999999997e-7)
def test_format_number_round_trips_and_matches_reference(x: float) -> None:
    text = format_number(x)
    assert float(text) == x
    assert json.loads(text, parse_int=float) == x
    assert text == reference_number_to_string(x)


@settings(max_examples=examples(1000))
@given(st.integers(0, 2**64 - 1))
def test_format_number_on_arbitrary_bit_patterns(bits: int) -> None:
    x: float = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    if not math.isfinite(x):
        with pytest.raises(ValueError):
            format_number(x)
        return
    text = format_number(x)
    assert float(text) == x
    assert text == reference_number_to_string(x)
    assert re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?(e[+-][1-9][0-9]*)?", text)


@pytest.mark.parametrize("number", [math.nan, -math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_rejected(number: float) -> None:
    with pytest.raises(ValueError):
        format_number(number)
    with pytest.raises(ValueError):
        canonical_json(number)
    with pytest.raises(ValueError):
        canonical_json({"a": [1, {"b": number}]})


def test_negative_zero_is_zero() -> None:
    assert canonical_json(-0.0) == "0"
    assert canonical_json([-0.0, 0.0, 0]) == "[0,0,0]"


def test_integers_within_the_safe_range() -> None:
    assert canonical_json(0) == "0"
    assert canonical_json(-7) == "-7"
    assert canonical_json(MAX_SAFE_INTEGER) == "9007199254740991"
    assert canonical_json(-MAX_SAFE_INTEGER) == "-9007199254740991"
    # A float with an integral value is written like an integer.
    assert canonical_json(5.0) == "5"


@pytest.mark.parametrize("number", [2**53, -(2**53), 2**63, -(2**100), 10**30])
def test_integers_beyond_the_safe_range_are_rejected(number: int) -> None:
    with pytest.raises(ValueError):
        canonical_json(number)
    with pytest.raises(ValueError):
        canonical_json({"n": [number]})


def test_literals() -> None:
    assert canonical_json(None) == "null"
    assert canonical_json(True) == "true"
    assert canonical_json(False) == "false"
    assert canonical_json([True, False, None, 1]) == "[true,false,null,1]"
    assert canonical_json({"t": True, "f": False}) == '{"f":false,"t":true}'


# --------------------------------------------------------------------------- strings


def test_rfc8785_section_3_2_2_example() -> None:
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],'
        '"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(source)) == expected


SHORT_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


@pytest.mark.parametrize("code", range(0x20))
def test_control_characters_are_escaped(code: int) -> None:
    char = chr(code)
    expected = SHORT_ESCAPES.get(char, f"\\u{code:04x}")
    assert canonical_json(char) == f'"{expected}"'
    assert canonical_json({char: char}) == f'{{"{expected}":"{expected}"}}'


def test_escapes_use_lowercase_hex_and_the_short_forms() -> None:
    assert canonical_json("\x0f\x1f\x0b\x00") == '"\\u000f\\u001f\\u000b\\u0000"'
    assert canonical_json('a"b\\c') == '"a\\"b\\\\c"'
    assert canonical_json("\b\f\n\r\t") == '"\\b\\f\\n\\r\\t"'


@pytest.mark.parametrize(
    "text", ["/", "\x7f", "\x80", "\u00e9", "\u20ac", "\u2028", "\u2029", "\ufeff", "\U0001f600"]
)
def test_other_characters_are_emitted_as_is(text: str) -> None:
    assert canonical_json(text) == f'"{text}"'
    assert canonical_json({text: text}) == f'{{"{text}":"{text}"}}'


def test_non_ascii_is_not_escaped() -> None:
    assert canonical_json("caf\u00e9 \u20ac \U0001f600") == '"caf\u00e9 \u20ac \U0001f600"'
    assert "\\u" not in canonical_json(["\u00e9", {"\u4e2d": "\U0001f600"}])


@pytest.mark.parametrize("text", ["\ud800", "\udfff", "a\udc00b", "\ud83d", "\ude00\ud83d"])
def test_lone_surrogates_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        canonical_json(text)
    with pytest.raises(ValueError):
        canonical_json({text: 1})
    with pytest.raises(ValueError):
        canonical_json({"a": 1, text: 1})
    with pytest.raises(ValueError):
        canonical_json([text])


# --------------------------------------------------------------------------- objects


def test_rfc8785_section_3_2_3_sorting_example() -> None:
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    expected = (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
    )
    assert canonical_json(value) == expected
    assert canonical_json(dict(reversed(value.items()))) == expected
    # The RFC writes the keys as JSON escapes; parsed, they give the same result.
    source = '{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}'
    assert list(json.loads(canonical_json(json.loads(source)))) == [
        "\r",
        "1",
        "\u0080",
        "\u00f6",
        "\u20ac",
        "\U0001f600",
        "\ufb33",
    ]


def utf16_code_units(text: str) -> list[int]:
    units = []
    for char in text:
        point = ord(char)
        if point < 0x10000:
            units.append(point)
        else:
            point -= 0x10000
            units += [0xD800 + (point >> 10), 0xDC00 + (point & 0x3FF)]
    return units


keys = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
        st.characters(min_codepoint=0x10000),
        st.characters(codec="utf-8"),
    ),
    max_size=6,
)


@settings(max_examples=examples(500))
@given(st.dictionaries(keys, st.integers(-5, 5), max_size=12))
def test_members_are_sorted_by_utf16_code_units(value: dict[str, int]) -> None:
    text = canonical_json(value)
    pairs = json.loads(text, object_pairs_hook=list)
    assert [key for key, _ in pairs] == sorted(value, key=utf16_code_units)
    assert dict(pairs) == value
    assert canonical_json(dict(reversed(value.items()))) == text


@pytest.mark.parametrize("key", [1, 1.5, None, True, ("a",), b"a"])
def test_non_string_keys_are_rejected(key: Any) -> None:
    with pytest.raises(ValueError):
        canonical_json({key: 1})
    with pytest.raises(ValueError):
        canonical_json([{"ok": {key: 1}}])


def test_empty_containers_and_tuples() -> None:
    assert canonical_json({}) == "{}"
    assert canonical_json([]) == "[]"
    assert canonical_json(()) == "[]"
    assert canonical_json((1, "a", (None,))) == '[1,"a",[null]]'
    assert canonical_json({"b": [], "a": {}}) == '{"a":{},"b":[]}'


@pytest.mark.parametrize("value", [object(), {1, 2}, frozenset(), 1j, float, type(None)])
def test_unsupported_types_are_rejected(value: object) -> None:
    with pytest.raises(ValueError):
        canonical_json(value)
    with pytest.raises(ValueError):
        canonical_json({"nested": [value]})


@pytest.mark.parametrize("value", [b"ab", bytearray(b"ab"), memoryview(b"ab")])
def test_bytes_are_rejected(value: object) -> None:
    with pytest.raises(ValueError):
        canonical_json(value)


class Text(str):
    __slots__ = ()


def test_str_subclass_is_a_string() -> None:
    assert canonical_json({"k": Text("ab")}) == '{"k":"ab"}'


# --------------------------------------------------------------------------- properties

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
safe_ints = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
unicode_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=20)


def json_values_with(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), safe_ints, floats, unicode_text)
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(unicode_text, children, max_size=5),
        ),
        max_leaves=25,
    )


def _small_or_fractional(x: float) -> bool:
    """False for a float with an integral value beyond 2**53 - 1.

    RFC 8785 writes such a float in integer notation (1e20 -> "100000000000000000000"),
    which Python's json.loads turns into an int: not equal to the float in general
    (5.755586209981182e16 -> 57555862099811820 != 57555862099811824.0), and rejected by
    canonical_json as outside the safe integer range.
    """
    return not (x.is_integer() and abs(x) > MAX_SAFE_INTEGER)


json_values = json_values_with(finite_floats)
json_values_for_json_loads = json_values_with(finite_floats.filter(_small_or_fractional))


def _loads_as_doubles(text: str) -> Any:
    """Parse as an RFC 8785 consumer does: every JSON number is an IEEE 754 double."""
    return json.loads(text, parse_int=float)


@settings(max_examples=examples(300))
@given(json_values)
def test_round_trip_through_a_double_parser(value: Any) -> None:
    assert _loads_as_doubles(canonical_json(value)) == value


@settings(max_examples=examples(300))
@given(json_values_for_json_loads)
def test_round_trip_through_json_loads(value: Any) -> None:
    # json.loads(canonical) equals the input: -0.0 == 0 and 5.0 == 5 compare equal.
    assert json.loads(canonical_json(value)) == value


@settings(max_examples=examples(300))
@given(json_values)
def test_idempotent_through_a_double_parser(value: Any) -> None:
    canonical = canonical_json(value)
    assert canonical_json(_loads_as_doubles(canonical)) == canonical


@settings(max_examples=examples(300))
@given(json_values_for_json_loads)
def test_idempotent_through_json_loads(value: Any) -> None:
    canonical = canonical_json(value)
    assert canonical_json(json.loads(canonical)) == canonical


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@settings(max_examples=examples(300))
@given(json_values)
def test_no_whitespace_outside_strings(value: Any) -> None:
    canonical = canonical_json(value)
    structure = _JSON_STRING.sub('""', canonical)
    assert not re.search(r"\s", structure)
    assert structure.isascii()
    # Strings never contain raw control characters either.
    assert not re.search(r"[\x00-\x1f]", canonical)
