"""Normalization: example tables plus the invariants (idempotence, Unicode forms)."""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chartscore.records.normalize import (
    boolean_key,
    date_key,
    multi_key,
    normalize_text,
    number_key,
    parse_number_literal,
)

FORMS = ("NFC", "NFD", "NFKC", "NFKD")


@given(st.text())
def test_text_normalization_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


@given(st.text(), st.sampled_from(FORMS))
def test_text_normalization_ignores_unicode_encoding(text: str, form: str) -> None:
    assert normalize_text(unicodedata.normalize(form, text)) == normalize_text(text)


@given(st.text())
def test_text_normalization_output_has_no_stray_whitespace(text: str) -> None:
    out = normalize_text(text)
    assert out == out.strip()
    assert "  " not in out
    assert not any(c.isspace() and c != " " for c in out)


def test_text_normalization_on_every_code_point_is_idempotent() -> None:
    # Exhaustive over single characters and after a letter; hypothesis samples the rest.
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        for text in (chr(code), "a" + chr(code)):
            once = normalize_text(text)
            assert normalize_text(once) == once, hex(code)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Former\tSmoker \n", "former smoker"),
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),
        ("ẞ", "ss"),  # capital sharp s: needs the second NFKC
        ("ﬁ", "fi"),
        ("Ｃｏｄｅ", "code"),  # fullwidth
        ("a\u00a0b", "a b"),  # no-break space
        ("", ""),
        ("   ", ""),
    ],
)
def test_text_examples(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (12, 12),
        (Decimal("2.50"), Decimal("2.5")),
        ("12", Decimal(12)),
        (" -3.25 ", Decimal("-3.25")),
        ("+7", Decimal(7)),
        ("1e3", Decimal(1000)),
        ("1E-2", Decimal("0.01")),
        ("００７", Decimal(7)),
        (0.1, Decimal("0.1")),
        ("1,000", None),
        ("1_000", None),
        ("12 mg", None),
        ("NaN", None),
        ("Infinity", None),
        ("inf", None),
        ("12.", Decimal(12)),  # as Decimal reads it
        (".5", Decimal("0.5")),
        ("-.5", Decimal("-0.5")),
        ("+5.", Decimal(5)),
        ("5.e3", Decimal(5000)),
        (".5E-1", Decimal("0.05")),
        (".", None),
        ("-.", None),
        ("+", None),
        (".e3", None),
        ("e3", None),
        ("5e", None),
        ("5e+", None),
        ("1.2.3", None),
        ("", None),
        ("0x10", None),
        ("١٢", Decimal(12)),  # Arabic-Indic digits, as Decimal reads them
        ("۱۲", Decimal(12)),  # Extended Arabic-Indic
        ("१२.५", Decimal("12.5")),  # Devanagari digits, ASCII point
        ("1٢", Decimal(12)),  # scripts may mix, digit by digit
        ("١e٢", Decimal(100)),  # exponent digits too
        ("٣٥", Decimal(35)),
        ("𝟑𝟓", Decimal(35)),  # mathematical digits: NFKC makes them ASCII
        ("²", Decimal(2)),  # NFKC maps superscript two to 2 (it is not a decimal digit)
        ("١٬٢", None),  # Arabic thousands separator
        ("١٫٥", None),  # Arabic decimal separator: only "." is a decimal point
        ("1 000", None),
        ("1\u00a0000", None),
        ("\u22121", None),  # MINUS SIGN is not a sign; Decimal refuses it too
        ("½", None),  # NFKC gives 1, FRACTION SLASH, 2
        ("١_٢", None),
        ("sNaN", None),
        ("-Infinity", None),
        ("-inf", None),
        ("1e99999999999999999999999", None),  # beyond Decimal's own exponent range
        (True, None),
        (None, None),
        ([1], None),
        (Decimal("NaN"), None),
        (Decimal("1e10000"), None),
        (10**100, None),
        (10**100 - 1, 10**100 - 1),
        ("1e9999", Decimal("1e9999")),
        ("1e10000", None),
    ],
)
def test_number_examples(raw: object, expected: object) -> None:
    result = number_key(raw)
    if expected is None:
        assert result is None
    else:
        assert result == expected


@given(st.decimals(allow_nan=False, allow_infinity=False, places=None))
def test_decimal_text_round_trips_through_number_normalization(number: Decimal) -> None:
    text = format(number, "f") if abs(number.adjusted()) < 50 else str(number)
    parsed = number_key(text)
    if len(text) <= 100 and "E" not in text.upper():
        assert parsed == number
    if parsed is not None:
        assert parsed == number


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_integer_strings_equal_integers(value: int) -> None:
    assert number_key(str(value)) == number_key(value) == value


DECIMAL_CHARACTERS = [
    chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF and chr(code).isdecimal()
]


def test_decimal_digits_are_exactly_what_decimal_reads() -> None:
    # The accepted digits are the characters for which str.isdecimal() is true. Python's
    # Decimal reads exactly those (and no other single character) as digits, with the value
    # unicodedata.decimal gives; the grammar's \d must match exactly them too.
    assert len(DECIMAL_CHARACTERS) >= 650  # Unicode 14: 660
    digit = re.compile(r"\d").fullmatch
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        try:
            read: Decimal | None = Decimal(char)
        except InvalidOperation:
            read = None
        if char.isdecimal():
            assert read == unicodedata.decimal(char), hex(code)
            assert digit(char) is not None, hex(code)
            assert number_key(char) == unicodedata.decimal(char), hex(code)
            assert number_key("." + char) == Decimal(unicodedata.decimal(char)) / 10
        else:
            assert read is None, hex(code)
            assert digit(char) is None, hex(code)


@given(
    st.integers(0, 10**30),
    st.sampled_from([c for c in DECIMAL_CHARACTERS if unicodedata.decimal(c) == 0]),
    st.sampled_from(["", "-", "+"]),
)
def test_every_script_of_digits_reads_as_its_ascii_twin(value: int, zero: str, sign: str) -> None:
    # Each Unicode digit block is contiguous from its zero: 0..9 map to zero..zero+9.
    text = "".join(chr(ord(zero) + int(d)) for d in str(value))
    assert (
        number_key(sign + text)
        == number_key(sign + str(value))
        == (-value if sign == "-" else value)
    )
    assert number_key(text + ".") == value
    assert number_key(text + "_0") is None


@pytest.mark.parametrize(
    "mutation", ["{}_{}", "{},{}", "{} {}", "{}'{}", "{}\u066c{}", "{}\u2009{}"]
)
def test_separators_inside_numbers_are_refused(mutation: str) -> None:
    for left, right in (("1", "000"), ("١", "٠٠٠"), ("1.5", "5")):
        assert number_key(mutation.format(left, right)) is None


def test_number_literal_grammar_is_strict() -> None:
    assert parse_number_literal("-0.0e-0") == 0
    assert parse_number_literal(" 1") is None  # the caller trims, not the grammar
    assert parse_number_literal("1" * 101) is None  # 101 coefficient digits
    assert parse_number_literal("0" * 99 + "12") == 12  # leading zeros do not count
    assert parse_number_literal("1.2" + "0" * 98) == Decimal("1.2")  # 100 digits: fits


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2023-04-05", (2023, 4, 5)),
        (" 2023-04-05 ", (2023, 4, 5)),
        ("2023-04", (2023, 4, None)),
        ("2023", (2023, None, None)),
        ("２０２３-０４", (2023, 4, None)),
        ("2024-02-29", (2024, 2, 29)),
        ("2023-02-29", None),
        ("2023-02-30", None),
        ("2023-13", None),
        ("2023-00-10", None),
        ("0000", None),
        ("23-04-05", None),
        ("2023/04/05", None),
        ("20230405", None),
        ("2023-4-5", None),
        (20230405, None),
    ],
)
def test_date_examples(raw: object, expected: object) -> None:
    assert date_key(raw) == expected


def test_boolean_only_accepts_booleans() -> None:
    assert boolean_key(True) is True
    assert boolean_key(False) is False
    for other in (1, 0, "true", "yes", None, Decimal(1)):
        assert boolean_key(other) is None


@given(st.lists(st.text(max_size=8), max_size=6))
def test_multi_is_a_set_of_normalized_items(items: list[str]) -> None:
    key = multi_key(frozenset(items))
    assert key == frozenset(normalize_text(i) for i in items)
    assert multi_key(frozenset(reversed(items))) == key
    assert multi_key(items) is None  # only frozensets reach the normalizer


def test_date_days_agree_with_the_calendar() -> None:
    # The month-length table and the leap rule against the standard library's calendar.
    import calendar

    for year in (1, 4, 100, 200, 400, 1900, 1999, 2000, 2023, 2024, 2100, 9996, 9999):
        for month in range(1, 13):
            last = calendar.monthrange(year, month)[1]
            for day in range(33):
                found = date_key(f"{year:04d}-{month:02d}-{day:02d}")
                assert (found is not None) == (1 <= day <= last), (year, month, day)
