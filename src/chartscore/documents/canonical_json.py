"""RFC 8785 (JSON Canonicalization Scheme) serialization for reports.

The same report gives the same bytes on every platform and under every
PYTHONHASHSEED: object members are sorted by their UTF-16 code units, numbers
are written the way ECMAScript writes an IEEE 754 double, strings use the
minimal escapes, and there is no insignificant whitespace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer written (RFC 8785: one an IEEE 754 double holds exactly)."""
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
    return _encode(value)


def _encode(value: object) -> str:
    # Each container is joined from its members' texts: memory stays near the
    # size of the output, not a list of every token of a large report. The
    # exact built-in types go first: a report is almost all dicts, ints and floats.
    kind = type(value)
    if kind is dict:
        mapping: dict[object, object] = value  # type: ignore[assignment]
        keys = list(mapping)
        if all(type(key) is str and key.isascii() for key in keys):
            keys.sort()
            members = [_string(key) + ":" + _encode(mapping[key]) for key in keys]  # type: ignore[arg-type]
            return "{" + ",".join(members) + "}"
    elif kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:  # type: ignore[operator]
            return str(value)
    elif kind is float:
        return format_number(value)  # type: ignore[arg-type]
    elif kind is list:
        return "[" + ",".join([_encode(item) for item in value]) + "]"  # type: ignore[attr-defined]
    return _encode_any(value)


def json_constant(value: object) -> str | None:
    """``null``, ``true`` or ``false`` for None, True and False (by identity), else None.

    The three JSON constants, as every writer of JSON text here spells them (``1`` and
    ``1.0`` are numbers, not ``true``).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return None


def _encode_any(value: object) -> str:
    constant = json_constant(value)
    if constant is not None:
        return constant
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError("integer outside the IEEE 754 exact range")
        return str(int(value))
    if isinstance(value, float):
        return format_number(float(value))
    if isinstance(value, str):
        return _string(str.__str__(value))
    if isinstance(value, bytes | bytearray | memoryview):
        raise ValueError("bytes have no JSON form")  # noqa: TRY004 - the documented error
    if isinstance(value, Mapping):
        keys = list(value)
        if any(type(key) is not str for key in keys):
            raise ValueError("object keys must be strings")
        members = [_string(key) + ":" + _encode(value[key]) for key in _sorted_keys(keys)]
        return "{" + ",".join(members) + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join([_encode(item) for item in value]) + "]"
    raise ValueError("unsupported type for canonical JSON")


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]').search


def _sorted_keys(keys: list[str]) -> list[str]:
    # UTF-16 code-unit order; for ASCII keys it is plain string order (the common case).
    if all(key.isascii() for key in keys):
        return sorted(keys)
    return sorted(keys, key=_utf16_order)


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", errors="strict")


def _string(text: str) -> str:
    # Reject lone surrogates (RFC 8785 section 3.2.2.2 requires valid Unicode).
    text.encode("utf-8", errors="strict")
    if _NEEDS_ESCAPE(text) is None:
        return '"' + text + '"'
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
    if 1e-4 <= abs(number) < 1e16:
        # Here Python's repr is plain notation with the same shortest digits as
        # ECMAScript; only an integral value differs ("1.0" against "1").
        text = repr(number)
        return text[:-2] if text.endswith(".0") else text
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
