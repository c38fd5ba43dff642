"""RFC 8785 (JSON Canonicalization Scheme) serialization for reports.

The same report gives the same bytes on every platform and under every
PYTHONHASHSEED: object members are sorted by their UTF-16 code units, numbers
are written the way ECMAScript writes an IEEE 754 double, strings use the
minimal escapes, and there is no insignificant whitespace.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal

_MAX_SAFE_INTEGER = 2**53 - 1
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def canonical_json(value: object) -> str:
    """Serialize ``value`` (dict, list, tuple, str, int, float, bool, None) per RFC 8785.

    Raises:
        ValueError: for non-finite floats, integers beyond 2**53 - 1, lone
            surrogates, non-string keys or unsupported types.
    """
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: object, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        if abs(value) > _MAX_SAFE_INTEGER:
            raise ValueError("integer outside the IEEE 754 exact range")
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(format_number(float(value)))
    elif isinstance(value, str):
        out.append(_string(str.__str__(value)))
    elif isinstance(value, bytes | bytearray | memoryview):
        raise ValueError("bytes have no JSON form")
    elif isinstance(value, Mapping):
        keys = list(value)
        if any(type(key) is not str for key in keys):
            raise ValueError("object keys must be strings")
        out.append("{")
        for index, key in enumerate(sorted(keys, key=_utf16_order)):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, Sequence):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise ValueError("unsupported type for canonical JSON")


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", errors="strict")


def _string(text: str) -> str:
    # Reject lone surrogates (RFC 8785 section 3.2.2.2 requires valid Unicode).
    text.encode("utf-8", errors="strict")
    chunks = ['"']
    for char in text:
        if char in _ESCAPES:
            chunks.append(_ESCAPES[char])
        elif char < " ":
            chunks.append(f"\\u{ord(char):04x}")
        else:
            chunks.append(char)
    chunks.append('"')
    return "".join(chunks)


def format_number(number: float) -> str:
    """Format a double as ECMAScript's Number.prototype.toString does.

    Uses the shortest round-tripping digits (Python's repr gives the same),
    placed per ECMA-262 section 7.1.12.1: plain notation for exponents from
    -7 to 20, exponent notation otherwise; negative zero is "0".
    """
    if not math.isfinite(number):
        raise ValueError("non-finite numbers have no JSON form")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr() gives the shortest digits that round-trip; Decimal splits them out.
    parts = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, parts.digits)).rstrip("0")
    exponent = int(parts.exponent) + len(parts.digits) - len(digits)
    n = exponent + len(digits)  # the decimal point sits after n digits
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exp = n - 1
        exp_text = f"e{'+' if exp >= 0 else '-'}{abs(exp)}"
        text = digits + exp_text if k == 1 else digits[0] + "." + digits[1:] + exp_text
    return sign + text
