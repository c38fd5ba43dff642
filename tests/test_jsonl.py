"""Tests for the strict JSON Lines reader, chartscore.io.jsonl."""

from __future__ import annotations

import io
import json
import string
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.jsonl import MAX_LINE_BYTES, decode_document, iter_objects

from helpers import examples

BOM = b"\xef\xbb\xbf"


def read_all(
    data: bytes,
    source: InputKind = InputKind.GOLD,
    on_line: Callable[[int], None] | None = None,
) -> list[tuple[int, dict[str, object]]]:
    return list(iter_objects(io.BytesIO(data), source, on_line))


def read_error(data: bytes, source: InputKind = InputKind.GOLD) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as info:
        read_all(data, source)
    return info.value


def assert_failure(
    data: bytes,
    code: ErrorCode,
    line: int,
    source: InputKind = InputKind.GOLD,
) -> ChartscoreError:
    error = read_error(data, source)
    assert error.code is code
    assert error.line == line
    assert error.input is source
    assert str(error) == f"{code} ({source} line {line})"
    assert error.__cause__ is None
    assert error.__context__ is None
    return error


def assert_same(actual: object, expected: object) -> None:
    """Equal, and of exactly the same types all the way down (1 != True != 1.0)."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, dict):
        assert isinstance(actual, dict)
        assert list(actual) == list(expected)
        for key, value in expected.items():
            assert_same(actual[key], value)
    elif isinstance(expected, list):
        assert isinstance(actual, list)
        assert len(actual) == len(expected)
        for item, value in zip(actual, expected, strict=True):
            assert_same(item, value)
    elif isinstance(expected, Decimal):
        assert isinstance(actual, Decimal)
        assert actual.as_tuple() == expected.as_tuple()
    else:
        assert actual == expected


# --- valid input --------------------------------------------------------------


def test_valid_lines_yield_line_numbers_and_dicts() -> None:
    data = b'{"a": "x", "b": [1, "y"], "c": null}\n{"d": true, "e": false}\n{}\n'
    rows = read_all(data)
    assert [line for line, _ in rows] == [1, 2, 3]
    assert_same(rows[0][1], {"a": "x", "b": [1, "y"], "c": None})
    assert_same(rows[1][1], {"d": True, "e": False})
    assert_same(rows[2][1], {})


def test_empty_stream_yields_nothing() -> None:
    assert read_all(b"") == []


def test_integers_decode_to_int() -> None:
    ((_, row),) = read_all(b'{"a": 0, "b": -7, "c": 123456789012345678901234567890, "d": -0}\n')
    for key, value in {"a": 0, "b": -7, "c": 123456789012345678901234567890, "d": 0}.items():
        assert type(row[key]) is int
        assert row[key] == value


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("1.0", (0, (1, 0), -1)),
        ("2.50", (0, (2, 5, 0), -2)),
        ("1e3", (0, (1,), 3)),
        ("1E+3", (0, (1,), 3)),
        ("-0.0", (1, (0,), -1)),
        ("0.1", (0, (1,), -1)),
        ("-12.345e-2", (1, (1, 2, 3, 4, 5), -5)),
        ("1e9999", (0, (1,), 9999)),
        ("1e-9999", (0, (1,), -9999)),
    ],
)
def test_non_integer_numbers_decode_to_exact_decimal(
    literal: str, expected: tuple[int, tuple[int, ...], int]
) -> None:
    ((_, row),) = read_all(f'{{"n": {literal}, "l": [{literal}]}}'.encode())
    for value in (row["n"], row["l"][0]):  # type: ignore[index]
        assert type(value) is Decimal
        assert tuple(value.as_tuple()) == expected


def test_decimal_keeps_its_exponent() -> None:
    ((_, row),) = read_all(b'{"n": 2.50}')
    value = row["n"]
    assert type(value) is Decimal
    assert str(value) == "2.50"
    assert value.as_tuple().exponent == -2


def test_large_numbers_inside_the_limits_are_accepted() -> None:
    big = 10**99
    widest_negative = -(10**100 - 1)  # "-" and 100 digits: 101 characters
    data = f'{{"a": {big}, "b": {widest_negative}, "c": 1e9999, "d": 1.{"0" * 99}}}'.encode()
    ((_, row),) = read_all(data)
    assert type(row["a"]) is int
    assert row["a"] == big
    assert type(row["b"]) is int
    assert row["b"] == widest_negative
    assert type(row["c"]) is Decimal
    assert row["c"] == Decimal("1e9999")
    assert type(row["d"]) is Decimal
    assert len(row["d"].as_tuple().digits) == 100  # type: ignore[union-attr]


@settings(max_examples=examples(200), deadline=None)
@given(exponent=st.integers(min_value=-20000, max_value=20000))
def test_exponent_limit_is_plus_minus_9999(exponent: int) -> None:
    data = f'{{"n": 1e{exponent}}}'.encode()
    if abs(exponent) <= 9999:
        ((_, row),) = read_all(data)
        assert type(row["n"]) is Decimal
        assert row["n"].as_tuple() == (0, (1,), exponent)  # type: ignore[union-attr]
    else:
        assert_failure(data, ErrorCode.NUMBER_OUT_OF_RANGE, 1)


@st.composite
def decimals_in_range(draw: st.DrawFn) -> Decimal:
    """Any nonzero Decimal with 1..100 significant digits and adjusted exponent within +-9999."""
    first = draw(st.integers(min_value=1, max_value=9))
    rest = draw(st.lists(st.integers(min_value=0, max_value=9), max_size=99))
    digits = (first, *rest)
    adjusted = draw(st.one_of(st.integers(-9999, 9999), st.sampled_from([-9999, 9999, 0])))
    sign = draw(st.integers(min_value=0, max_value=1))
    return Decimal((sign, digits, adjusted - len(digits) + 1))


@settings(max_examples=examples(200), deadline=None)
@given(number=decimals_in_range())
def test_decimal_literals_in_range_round_trip_exactly(number: Decimal) -> None:
    literal = str(number)
    assert number.adjusted() in range(-9999, 10000)
    ((_, row),) = read_all(f'{{"n": {literal}}}'.encode())
    value = row["n"]
    if any(c in literal for c in ".eE"):
        assert type(value) is Decimal
        assert value.as_tuple() == number.as_tuple()
    else:
        assert type(value) is int
        assert value == int(literal)


@settings(max_examples=examples(100), deadline=None)
@given(number=decimals_in_range(), extra=st.integers(min_value=1, max_value=10))
def test_more_than_100_significant_digits_is_number_out_of_range(
    number: Decimal, extra: int
) -> None:
    sign, digits, exponent = number.as_tuple()
    padded = (*digits, *([7] * (100 - len(digits) + extra)))
    literal = str(Decimal((sign, padded, int(exponent) - (len(padded) - len(digits)))))
    assert len(Decimal(literal).as_tuple().digits) > 100
    assert_failure(f'{{"n": {literal}}}'.encode(), ErrorCode.NUMBER_OUT_OF_RANGE, 1)


# --- BOM, line ends, blank lines ------------------------------------------------


def test_bom_on_first_line_is_accepted() -> None:
    rows = read_all(BOM + b'{"a": 1}\n{"b": 2}\n')
    assert rows == [(1, {"a": 1}), (2, {"b": 2})]


def test_bom_on_blank_first_line_is_accepted() -> None:
    assert read_all(BOM + b'\n{"b": 2}\n') == [(2, {"b": 2})]


def test_bom_on_later_line_is_invalid_json() -> None:
    assert_failure(b'{"a": 1}\n' + BOM + b'{"b": 2}\n', ErrorCode.INVALID_JSON, 2)


def test_bom_on_later_blank_line_is_invalid_json() -> None:
    assert_failure(b'{"a": 1}\n' + BOM + b"\n", ErrorCode.INVALID_JSON, 2)


def test_two_boms_on_first_line_is_invalid_json() -> None:
    assert_failure(BOM + BOM + b'{"a": 1}\n', ErrorCode.INVALID_JSON, 1)


def test_crlf_line_ends_are_accepted() -> None:
    rows = read_all(b'{"a": 1}\r\n{"b": "x"}\r\n')
    assert rows == [(1, {"a": 1}), (2, {"b": "x"})]


def test_blank_lines_are_skipped_but_counted() -> None:
    data = b'\n   \n{"a": 1}\r\n\r\n\t\n \t\r\n{"b": 2}\n\n'
    assert read_all(data) == [(3, {"a": 1}), (7, {"b": 2})]


def test_final_line_without_newline_is_accepted() -> None:
    assert read_all(b'{"a": 1}\n{"b": 2}') == [(1, {"a": 1}), (2, {"b": 2})]
    assert read_all(b'{"a": 1}\n{"b": 2}\r') == [(1, {"a": 1}), (2, {"b": 2})]


def test_line_numbers_after_blank_lines_locate_errors() -> None:
    assert_failure(b'{"a": 1}\n\n  \r\n{"a": 1, "a": 2}\n', ErrorCode.DUPLICATE_KEY, 4)


@pytest.mark.parametrize(
    "line",
    [b"\x0c", b"\xc2\xa0", b"\xe2\x80\xa8", b"\x0b", b"\x00"],
    ids=["formfeed", "nbsp", "line-separator", "vtab", "nul"],
)
def test_non_json_whitespace_line_is_invalid_json(line: bytes) -> None:
    assert_failure(b'{"a": 1}\n' + line + b"\n", ErrorCode.INVALID_JSON, 2)


# --- refused lines ------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        b"{",
        b'{"a": }',
        b'{"a" 1}',
        b"{'a': 1}",
        b'{"a": 1,}',
        b'{"a": [1, 2,]}',
        b"{a: 1}",
        b'{"a": 01}',
        b'{"a": .5}',
        b'{"a": 1.}',
        b'{"a": +1}',
        b'{"a": 0x10}',
        b'{"a": -NaN}',
        b'{"a": nan}',
        b'{"a": True}',
        b'{"a": "unterminated}',
        b'{"a": "tab\there"}',
        b'{"a": "\\x41"}',
        b"// comment",
        b'{"a": 1} // comment',
    ],
)
def test_malformed_json_is_invalid_json(line: bytes) -> None:
    assert_failure(b'{"ok": 1}\n\n' + line + b'\n{"ok": 2}\n', ErrorCode.INVALID_JSON, 3)


@pytest.mark.parametrize(
    "line",
    [b'{"a": 1}{"b": 2}', b'{"a": 1} {"b": 2}', b"{} {}", b"{}[]", b'{"a": 1} 2'],
)
def test_two_values_on_one_line_is_invalid_json(line: bytes) -> None:
    assert_failure(b"{}\n" + line + b"\n", ErrorCode.INVALID_JSON, 2)


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        b'{"a": [1, NaN]}',
        b'{"a": {"b": Infinity}}',
    ],
)
def test_nan_and_infinity_are_nonfinite_number(line: bytes) -> None:
    assert_failure(b"{}\n" + line + b"\n", ErrorCode.NONFINITE_NUMBER, 2)


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": 1, "a": 1}',
        b'{"a": 1, "b": 2, "a": 3}',
        b'{"x": {"a": 1, "a": 2}}',
        b'{"x": [{"a": 1}, {"b": 1, "b": null}]}',
        b'{"x": {"y": {"z": {"k": 1, "k": 1}}}}',
        b'{"\\u0061": 1, "a": 2}',  # an escaped key equal to a plain one
    ],
)
def test_duplicate_keys_are_refused_at_any_depth(line: bytes) -> None:
    assert_failure(b"{}\n{}\n" + line + b"\n", ErrorCode.DUPLICATE_KEY, 3)


def test_same_key_in_sibling_objects_is_not_a_duplicate() -> None:
    rows = read_all(b'{"x": {"a": 1}, "y": {"a": 2}, "z": [{"a": 3}, {"a": 4}]}\n')
    assert rows == [(1, {"x": {"a": 1}, "y": {"a": 2}, "z": [{"a": 3}, {"a": 4}]})]


@pytest.mark.parametrize(
    "line", [b"[]", b'[{"a": 1}]', b'"text"', b"1", b"1.5", b"null", b"true", b"false"]
)
def test_non_object_line_is_not_an_object(line: bytes) -> None:
    assert_failure(b'{"a": 1}\n' + line + b"\n", ErrorCode.NOT_AN_OBJECT, 2)


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff",
        b"\xfe",
        b"\x80",  # lone continuation byte
        b"\xc3",  # truncated two-byte sequence
        b"\xc0\xaf",  # overlong "/"
        b"\xc0\x80",  # overlong NUL
        b"\xe0\x80\xaf",  # overlong three-byte "/"
        b"\xf0\x80\x80\xaf",  # overlong four-byte "/"
        b"\xed\xa0\x80",  # UTF-8 encoded lone high surrogate U+D800
        b"\xed\xbf\xbf",  # UTF-8 encoded lone low surrogate U+DFFF
        b"\xf4\x90\x80\x80",  # beyond U+10FFFF
        b"\xe9",  # Latin-1 "é"
    ],
)
def test_bytes_that_are_not_utf8_are_not_utf8(payload: bytes) -> None:
    assert_failure(b'{"a": 1}\n{"a": "' + payload + b'"}\n', ErrorCode.NOT_UTF8, 2)


def test_invalid_utf8_outside_a_string_is_not_utf8() -> None:
    assert_failure(b"\n\xff\n", ErrorCode.NOT_UTF8, 2)


def test_valid_multibyte_utf8_is_accepted() -> None:
    text = "é中😀"
    assert read_all(json.dumps({"a": text}, ensure_ascii=False).encode()) == [(1, {"a": text})]


@pytest.mark.parametrize(
    "value",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        b'[{"a": ' * 50_000,  # deep and unterminated: depth is refused first
    ],
    ids=["arrays", "objects", "unterminated"],
)
def test_deep_nesting_is_nesting_too_deep(value: bytes) -> None:
    assert_failure(b'{"a": 1}\n{"deep": ' + value + b"}\n", ErrorCode.NESTING_TOO_DEEP, 2)


def test_moderate_nesting_is_accepted() -> None:
    ((_, row),) = read_all(b'{"a": ' + b"[" * 50 + b"]" * 50 + b"}\n")
    value: object = row["a"]
    for _ in range(49):
        assert isinstance(value, list)
        assert len(value) == 1
        value = value[0]
    assert value == []


@pytest.mark.parametrize(
    "literal",
    [
        "1e10000",
        "1e-10000",
        "-1e10000",
        "1.5e10000",
        "1e99999999999999999999999999",
        "0." + "0" * 125 + "1",  # more than 120 characters
        "1." + "0" * 130,  # more than 120 characters
        "1." + "0" * 100,  # 101 significant digits
        "1" * 101 + ".5",  # 103 significant digits
        "1" + "0" * 100,  # the integer 10**100, 101 characters
        "-1" + "0" * 100,  # -(10**100), 102 characters
        "9" * 102,  # more than 101 characters
        "1" * 5000,  # beyond Python's own int-from-string limit
        "1" * 5000 + ".0",
    ],
)
def test_pathological_numbers_are_number_out_of_range(literal: str) -> None:
    assert_failure(
        f'{{"a": 1}}\n{{"n": [0, {literal}]}}\n'.encode(), ErrorCode.NUMBER_OUT_OF_RANGE, 2
    )


# --- line length -----------------------------------------------------------------


def padded_line(total: int, end: bytes = b"\n") -> bytes:
    """A JSON object line of exactly ``total`` bytes including ``end``."""
    head, tail = b'{"k": "', b'"}' + end
    return head + b"a" * (total - len(head) - len(tail)) + tail


def test_line_of_exactly_max_bytes_is_accepted() -> None:
    line = padded_line(MAX_LINE_BYTES)
    assert len(line) == MAX_LINE_BYTES
    rows = read_all(b"{}\n" + line + b'{"after": 1}\n')
    assert [number for number, _ in rows] == [1, 2, 3]
    assert rows[1][1] == {"k": "a" * (MAX_LINE_BYTES - 10)}
    assert rows[2][1] == {"after": 1}


def test_final_line_of_exactly_max_bytes_without_newline_is_accepted() -> None:
    line = padded_line(MAX_LINE_BYTES, end=b"")
    assert len(line) == MAX_LINE_BYTES
    assert [number for number, _ in read_all(b"{}\n" + line)] == [1, 2]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b""], ids=["lf", "crlf", "eof"])
def test_line_of_max_plus_one_bytes_is_line_too_long(end: bytes) -> None:
    line = padded_line(MAX_LINE_BYTES + 1, end=end)
    assert_failure(b"{}\n\n" + line + b"{}\n", ErrorCode.LINE_TOO_LONG, 3)


def test_long_blank_line_is_line_too_long() -> None:
    assert_failure(b" " * (MAX_LINE_BYTES + 5) + b"\n", ErrorCode.LINE_TOO_LONG, 1)


class LazyLongLine(io.RawIOBase):
    """A raw stream serving one huge JSON line, generated on demand, counting bytes."""

    def __init__(self, total: int) -> None:
        self.head = b'{"k": "'
        self.tail = b'"}\n'
        self.total = total
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        start = self.position
        count = min(len(buffer), self.total - start)
        if count <= 0:
            return 0
        chunk = bytearray(b"a" * count)
        for index in range(start, min(start + count, len(self.head))):
            chunk[index - start] = self.head[index]
        tail_start = self.total - len(self.tail)
        for index in range(max(start, tail_start), start + count):
            chunk[index - start] = self.tail[index - tail_start]
        buffer[:count] = chunk
        self.position += count
        return count


def test_lazy_long_line_stream_is_what_it_claims() -> None:
    raw = LazyLongLine(64)
    data = io.BufferedReader(raw, buffer_size=16).read()
    assert data == b'{"k": "' + b"a" * 54 + b'"}\n'
    assert raw.position == 64


def test_line_too_long_is_detected_without_reading_the_rest() -> None:
    total = 50 * (1 << 20)
    raw = LazyLongLine(total)
    stream = io.BufferedReader(raw)
    with pytest.raises(ChartscoreError) as info:
        for _ in iter_objects(stream, InputKind.PREDICTIONS):
            pass
    error = info.value
    assert error.code is ErrorCode.LINE_TOO_LONG
    assert error.line == 1
    assert error.input is InputKind.PREDICTIONS
    assert MAX_LINE_BYTES < raw.position <= 2 * MAX_LINE_BYTES
    assert raw.position < total


# --- unreadable streams ---------------------------------------------------------


class FailingStream(io.BytesIO):
    """Serves ``good`` lines (one per read), then raises OSError."""

    def __init__(self, data: bytes, good: int, message: str = "disk on fire") -> None:
        super().__init__(data)
        self.good = good
        self.message = message
        self.calls = 0

    def read(self, size: int | None = -1) -> bytes:
        self.calls += 1
        if self.calls > self.good:
            raise OSError(5, self.message)
        return super().readline(size)


@pytest.mark.parametrize("good", [0, 1, 3])
def test_readline_oserror_is_file_unreadable(good: int) -> None:
    stream = FailingStream(b'{"a": 1}\n\n{"b": 2}\n{"c": 3}\n', good)
    seen: list[int] = []
    with pytest.raises(ChartscoreError) as info:
        for line, _ in iter_objects(stream, InputKind.GOLD):
            seen.append(line)
    error = info.value
    assert error.code is ErrorCode.FILE_UNREADABLE
    assert error.line == good + 1
    assert error.input is InputKind.GOLD
    assert seen == [line for line in (1, 3) if line <= good]
    assert error.__cause__ is None
    assert error.__context__ is None


def test_subclassed_oserror_is_file_unreadable() -> None:
    class Broken(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise PermissionError("no")

    error = read_error_from(Broken(), InputKind.PREDICTIONS)
    assert error.code is ErrorCode.FILE_UNREADABLE
    assert error.line == 1
    assert error.input is InputKind.PREDICTIONS


def read_error_from(stream: io.BytesIO, source: InputKind) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as info:
        list(iter_objects(stream, source))
    return info.value


# --- progress ------------------------------------------------------------------


def test_on_line_is_called_every_16384_lines() -> None:
    calls: list[int] = []
    rows = read_all(b"{}\n" * 40_000, on_line=calls.append)
    assert calls == [16384, 32768]
    assert len(rows) == 40_000
    assert rows[-1][0] == 40_000


def test_on_line_counts_blank_lines() -> None:
    calls: list[int] = []
    rows = read_all(b"\n" * 16383 + b"{}\n" + b"\r\n" * 16384, on_line=calls.append)
    assert calls == [16384, 32768]
    assert rows == [(16384, {})]


def test_on_line_not_called_for_short_files() -> None:
    calls: list[int] = []
    assert len(read_all(b"{}\n" * 16383, on_line=calls.append)) == 16383
    assert calls == []


# --- error messages carry no content --------------------------------------------------


def _deep(marker: bytes) -> bytes:
    return b'{"' + marker + b'": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _long(marker: bytes) -> bytes:
    return b'{"' + marker + b'": "' + marker * (MAX_LINE_BYTES // len(marker) + 1) + b'"}'


OFFENDING_LINES: dict[ErrorCode, list[Callable[[bytes], bytes]]] = {
    ErrorCode.INVALID_JSON: [
        lambda m: b'{"' + m + b'": }',
        lambda m: m,
        lambda m: b'{"a": "' + m + b'"} {"' + m + b'": 1}',
        lambda m: BOM + b'{"' + m + b'": 1}',
    ],
    ErrorCode.NONFINITE_NUMBER: [
        lambda m: b'{"' + m + b'": NaN}',
        lambda m: b'{"a": "' + m + b'", "b": -Infinity}',
    ],
    ErrorCode.DUPLICATE_KEY: [
        lambda m: b'{"' + m + b'": 1, "' + m + b'": 2}',
        lambda m: b'{"x": {"' + m + b'": "' + m + b'", "' + m + b'": 2}}',
    ],
    ErrorCode.NOT_AN_OBJECT: [
        lambda m: b'["' + m + b'"]',
        lambda m: b'"' + m + b'"',
    ],
    ErrorCode.NOT_UTF8: [
        lambda m: b'{"' + m + b'": "\xff"}',
        lambda m: b'{"' + m + b'": "\xed\xa0\x80' + m + b'"}',
    ],
    ErrorCode.NESTING_TOO_DEEP: [_deep],
    ErrorCode.NUMBER_OUT_OF_RANGE: [
        lambda m: b'{"' + m + b'": 1e10000}',
        lambda m: b'{"' + m + b'": ' + b"7" * 5000 + b"}",
    ],
    ErrorCode.LINE_TOO_LONG: [_long],
}

CASES = [
    (code, index) for code, builders in OFFENDING_LINES.items() for index in range(len(builders))
]
MARKERS = st.text(alphabet=string.ascii_uppercase, min_size=8, max_size=24)


def assert_content_free(error: ChartscoreError, marker: str) -> None:
    assert marker not in str(error)
    assert marker not in repr(error)
    assert all(marker not in str(arg) for arg in error.args)
    assert error.__cause__ is None
    assert error.__context__ is None


@pytest.mark.parametrize(("code", "index"), CASES)
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker=MARKERS)
def test_error_messages_never_contain_line_content(
    code: ErrorCode, index: int, marker: str
) -> None:
    line = OFFENDING_LINES[code][index](marker.encode())
    data = b'{"ok": "fine"}\n\n' + line + b'\n{"' + marker.encode() + b'": 1}\n'
    error = assert_failure(data, code, 3, InputKind.PREDICTIONS)
    assert_content_free(error, marker)


@settings(max_examples=examples(20), deadline=None)
@given(marker=MARKERS)
def test_file_unreadable_message_never_contains_the_oserror(marker: str) -> None:
    stream = FailingStream(b"{}\n{}\n", good=1, message=marker)
    with pytest.raises(ChartscoreError) as info:
        list(iter_objects(stream, InputKind.GOLD))
    error = info.value
    assert error.code is ErrorCode.FILE_UNREADABLE
    assert error.line == 2
    assert_content_free(error, marker)


@pytest.mark.parametrize(
    ("code", "index"),
    [case for case in CASES if case[0] not in (ErrorCode.NOT_UTF8, ErrorCode.LINE_TOO_LONG)],
)
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker=MARKERS)
def test_decode_document_errors_never_contain_content(
    code: ErrorCode, index: int, marker: str
) -> None:
    text = OFFENDING_LINES[code][index](marker.encode()).decode("utf-8")
    if code is ErrorCode.NOT_AN_OBJECT:
        assert type(decode_document(text, InputKind.SCHEMA)) is not dict
        return
    with pytest.raises(ChartscoreError) as info:
        decode_document(text, InputKind.SCHEMA)
    error = info.value
    assert error.code is code
    assert error.input is InputKind.SCHEMA
    # A syntax error names its line (every offending text here is one line); others do not.
    expected_line = 1 if code is ErrorCode.INVALID_JSON else None
    assert error.line == expected_line
    assert str(error) == f"{code} (schema{'' if expected_line is None else ' line 1'})"
    assert_content_free(error, marker)


# --- decode_document ---------------------------------------------------------------


def document_error(text: str) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as info:
        decode_document(text, InputKind.SCHEMA)
    error = info.value
    assert error.input is InputKind.SCHEMA
    assert (error.line is not None) == (error.code is ErrorCode.INVALID_JSON)
    assert error.__context__ is None
    assert error.__cause__ is None
    return error


def test_decode_document_accepts_multiline_documents_with_exact_numbers() -> None:
    text = '{\n  "a": 1,\n  "b": 2.50,\n  "c": [1e3, -0.0, null, true],\n  "d": {"e": "x"}\n}\n'
    assert_same(
        decode_document(text, InputKind.SCHEMA),
        {
            "a": 1,
            "b": Decimal("2.50"),
            "c": [Decimal("1e3"), Decimal("-0.0"), None, True],
            "d": {"e": "x"},
        },
    )


def test_decode_document_returns_any_json_value() -> None:
    assert_same(decode_document(' [1, 2.5, "x"] ', InputKind.SCHEMA), [1, Decimal("2.5"), "x"])
    assert decode_document("null", InputKind.SCHEMA) is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 1, "a": 2}', ErrorCode.DUPLICATE_KEY),
        ('{"x": [{"a": 1, "a": 1}]}', ErrorCode.DUPLICATE_KEY),
        ('{"a": NaN}', ErrorCode.NONFINITE_NUMBER),
        ('{"a": Infinity}', ErrorCode.NONFINITE_NUMBER),
        ('{"a": -Infinity}', ErrorCode.NONFINITE_NUMBER),
        ('{"a": 1e10000}', ErrorCode.NUMBER_OUT_OF_RANGE),
        ('{"a": 1e-10000}', ErrorCode.NUMBER_OUT_OF_RANGE),
        ('{"a": ' + "1" * 102 + "}", ErrorCode.NUMBER_OUT_OF_RANGE),
        ('{"a": ' + "1" * 5000 + "}", ErrorCode.NUMBER_OUT_OF_RANGE),
        ('{"a": 0.' + "0" * 130 + "1}", ErrorCode.NUMBER_OUT_OF_RANGE),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", ErrorCode.NESTING_TOO_DEEP),
        ('{"a": 1', ErrorCode.INVALID_JSON),
        ('{"a": 1} {"b": 2}', ErrorCode.INVALID_JSON),
        ("", ErrorCode.INVALID_JSON),
        ("   \n", ErrorCode.INVALID_JSON),
    ],
)
def test_decode_document_applies_the_same_rules(text: str, code: ErrorCode) -> None:
    assert document_error(text).code is code


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"a": 1', 1),
        ('{\n  "a": 1,\n  "b": ,\n  "c": 3\n}', 3),
        ('{\r\n  "a": 1,\r\n  "b": 2,\r\n}', 4),  # a trailing comma: the error is at "}"
        ('\n\n\n{"a": 1} x', 4),
        ("\n\n", 3),  # nothing at all: the error is at the end
    ],
)
def test_decode_document_syntax_errors_name_their_line(text: str, line: int) -> None:
    error = document_error(text)
    assert error.code is ErrorCode.INVALID_JSON
    assert error.line == line
    assert str(error) == f"invalid_json (schema line {line})"


def test_decode_document_number_limits_match_the_reader() -> None:
    assert decode_document('{"a": 1e9999}', InputKind.SCHEMA) == {"a": Decimal("1e9999")}
    assert decode_document(f'{{"a": {10**99}}}', InputKind.SCHEMA) == {"a": 10**99}
    value = decode_document('{"a": 1.0}', InputKind.SCHEMA)
    assert isinstance(value, dict)
    assert type(value["a"]) is Decimal
    assert value["a"].as_tuple() == (0, (1, 0), -1)


# --- round trip property ------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
VALUES = st.one_of(
    TEXT,
    st.integers(min_value=-(10**100) + 1, max_value=10**100 - 1),
    st.booleans(),
    st.none(),
    st.recursive(
        st.lists(TEXT, max_size=4), lambda inner: st.lists(inner, max_size=3), max_leaves=8
    ),
)
RECORDS = st.lists(st.dictionaries(TEXT, VALUES, max_size=6), max_size=12)
BLANKS = st.sampled_from([b"\n", b"\r\n", b"   \n", b"\t\n", b" \t \r\n"])


@settings(max_examples=examples(150), deadline=None)
@given(records=RECORDS, data=st.data())
def test_round_trip_preserves_records_and_line_numbers(
    records: list[dict[str, object]], data: st.DataObject
) -> None:
    ensure_ascii = data.draw(st.booleans(), label="ensure_ascii")
    out = bytearray(BOM if data.draw(st.booleans(), label="bom") else b"")
    expected: list[tuple[int, dict[str, object]]] = []
    line = 0
    for index, record in enumerate(records):
        for blank in data.draw(st.lists(BLANKS, max_size=2), label="blanks"):
            out += blank
            line += 1
        out += json.dumps(record, ensure_ascii=ensure_ascii).encode("utf-8")
        line += 1
        expected.append((line, record))
        last = index == len(records) - 1
        ends = [b"\n", b"\r\n", b""] if last else [b"\n", b"\r\n"]
        out += data.draw(st.sampled_from(ends), label="end")
    if not records or out.endswith(b"\n"):
        out += b"".join(data.draw(st.lists(BLANKS, max_size=2), label="trailing"))
    rows = read_all(bytes(out))
    assert [number for number, _ in rows] == [number for number, _ in expected]
    for (_, actual), (_, record) in zip(rows, expected, strict=True):
        assert_same(actual, record)
