"""Strict reading of chartscore's own JSON documents (reports and their kin).

A saved report comes back from disk, possibly damaged or edited, so loading it
is validation: UTF-8 JSON text of one object, at most
:data:`MAX_DOCUMENT_BYTES` long and :data:`MAX_DEPTH` deep (checked by
:class:`DocumentScanner` while the bytes arrive, so a bomb is refused after
little reading), strict JSON (no NaN or Infinity, no duplicate keys), a known
``format`` and ``format_version``, a closed key vocabulary and numbers of the
right kind in the right range. The readers of each format then recompute every
derived figure from the counts. Failures are value-free
:class:`~chartscore.errors.ChartscoreError` codes (``unknown_report_format``,
``invalid_report``) that never echo the document's text, and they carry no
chained exception.

Value-free: this module sees only chartscore's own output format.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from itertools import accumulate
from typing import Final, NoReturn, ParamSpec, TypeVar

from chartscore._format import WORKLIST_SIGNATURE
from chartscore.documents.canonical_json import MAX_SAFE_INTEGER
from chartscore.errors import ChartscoreError, ErrorCode, InputKind

MAX_COUNT: Final = MAX_SAFE_INTEGER
"""The largest integer a report holds (canonical JSON writes integers exactly up to here)."""

MAX_DOCUMENT_BYTES: Final = 16 << 20
"""The largest document read back, 16 MiB (after decompression).

The largest real documents are far smaller: the 13-field study's report is
23 kB and its comparison 68 kB (about 1.8 and 5.3 kB per field), so 16 MiB
holds a report of some 9,000 fields or a comparison of some 3,000.
"""

MAX_DEPTH: Final = 8
"""The deepest nesting of objects and arrays read back (a comparison needs 6)."""

MAX_CONTAINERS: Final = MAX_DOCUMENT_BYTES // 32
"""The most objects and arrays a document may hold, 2**19.

Real documents hold one per 50 to 70 bytes; a bomb of ``{},`` holds one per 3,
and would cost a decoded object each (1 GB for 16 MiB of them).
"""

MAX_UNQUOTED_BYTES: Final = 4096
"""The most bytes from one ``"`` to the next: a string, or the numbers between two keys.

A field id is at most 519 characters, and a real document has a key every few
dozen bytes; a long string or a long run of numbers is not a document.
"""

SCAN_CHUNK_BYTES: Final = 64 << 10
"""Documents are checked (and read from files) this much at a time."""

_WHITESPACE: Final = b" \t\r\n"
_WORKLIST: Final = WORKLIST_SIGNATURE.encode("ascii")
# An escape (a backslash and the byte it escapes), and a string once its escapes are out: each
# pattern is tried once per byte at most, so a chunk is scanned in linear time (a pattern that
# fails on a string cut by the chunk's end was searched again from each escaped quote in it).
_ESCAPE: Final = re.compile(rb"\\.", re.DOTALL)
_UNESCAPED_STRING: Final = re.compile(rb'"[^"]*"')
_NOT_BRACKETS: Final = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP: Final = tuple(1 if byte in b"[{" else -1 if byte in b"]}" else 0 for byte in range(256))


_P = ParamSpec("_P")
_T = TypeVar("_T")


def invalid() -> NoReturn:
    """Refuse a malformed document with ``invalid_report``."""
    raise ChartscoreError(ErrorCode.INVALID_REPORT)


def built(make: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``make(*args, **kwargs)``, or ``invalid_report`` when it raises ``ValueError``.

    For figures a document's numbers must allow (sums a constructor checks, ranges that
    admit a count): the refusal is raised outside the handler, so nothing is chained.
    """
    result: _T | None = None
    failed = False
    try:
        result = make(*args, **kwargs)
    except ValueError:
        failed = True
    if failed:
        invalid()
    return result  # type: ignore[return-value]


class _RefusedError(ValueError):
    """Raised inside the JSON decoder's hooks; converted to a code by :func:`parse`."""


def _unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _RefusedError
    return members


def _refuse_constant(_name: str) -> NoReturn:
    raise _RefusedError


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):  # 1e400 would otherwise become inf
        raise _RefusedError
    return number


def too_large() -> NoReturn:
    """Refuse a document over :data:`MAX_DOCUMENT_BYTES` with ``file_too_large (report)``."""
    raise ChartscoreError(ErrorCode.FILE_TOO_LARGE, input=InputKind.REPORT)


class DocumentScanner:
    """Checks a document's bytes as they arrive, before anything is decoded.

    Fed in chunks, it refuses as soon as the bytes cannot be a document: more
    than :data:`MAX_DOCUMENT_BYTES`, not UTF-8 (a byte order mark or UTF-16
    included: documents are UTF-8 only), not starting with ``{``, nesting
    deeper than :data:`MAX_DEPTH`, more than :data:`MAX_UNQUOTED_BYTES`
    from one quote to the next, more than :data:`MAX_CONTAINERS` objects and
    arrays, or a second value after the object. So a bomb
    costs the bytes read up to the first of these, never its expanded size.
    An adjudication worklist (``chartscore worklist``) is patient-level data
    that must never pass for a report: it is refused by its own code.
    """

    def __init__(self) -> None:
        self._size = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._started = False
        self._closed = False
        self._depth = 0
        self._containers = 0
        self._in_string = False  # the last chunk ended inside a string
        self._escaped = False  # ... just after its backslash
        self._unquoted = 0  # bytes since the last quote
        self._head = b""  # the first bytes, while they could still begin a worklist

    def feed(self, chunk: bytes) -> None:
        """Check the next chunk.

        Raises:
            ChartscoreError: ``file_too_large (report)`` or ``invalid_report``;
                ``inside_only_worklist (report)`` for an adjudication worklist.
        """
        self._size += len(chunk)
        if self._size > MAX_DOCUMENT_BYTES:
            too_large()
        self._check_utf8(chunk, final=False)
        if not self._started:
            if self._head:  # the rest of what may be a worklist's first line
                self._refuse_start(chunk)
                return
            body = chunk.lstrip(_WHITESPACE)
            if not body:
                return
            if body[:1] != b"{":
                self._refuse_start(body)
                return
            self._started = True
        self._check_quotes(chunk)
        if self._closed:
            if chunk.strip(_WHITESPACE):
                invalid()
            return
        self._check_nesting(chunk)

    def _refuse_start(self, body: bytes) -> None:
        """Not a document: an adjudication worklist is named as one (it is patient-level)."""
        self._head += body
        if self._head.startswith(_WORKLIST):
            raise ChartscoreError(ErrorCode.INSIDE_ONLY_WORKLIST, input=InputKind.REPORT)
        if not _WORKLIST.startswith(self._head):
            invalid()

    def finish(self) -> None:
        """Check the end of the document (a complete object must have been seen).

        Raises:
            ChartscoreError: ``invalid_report``.
        """
        self._check_utf8(b"", final=True)
        if not self._closed:
            invalid()  # a worklist's first bytes, cut short, are no document either

    def _check_utf8(self, chunk: bytes, *, final: bool) -> None:
        failed = False
        try:
            self._decoder.decode(chunk, final)
        except UnicodeDecodeError:
            failed = True
        if failed:  # raised outside the handler: no chained decoder message
            invalid()

    def _check_quotes(self, chunk: bytes) -> None:
        runs = chunk.split(b'"')
        longest = max(self._unquoted + len(runs[0]), max(map(len, runs[1:]), default=0))
        if longest > MAX_UNQUOTED_BYTES:
            invalid()
        self._unquoted = len(runs[-1]) if len(runs) > 1 else self._unquoted + len(runs[0])

    def _check_nesting(self, chunk: bytes) -> None:
        if not chunk:
            return
        # What lies outside strings (strings may hold brackets; they do not count). Escapes
        # out first (a backslash cut off at the last chunk's end escapes this one's first
        # byte), a string then runs from a quote to the next; one still open at the end runs
        # on into the next chunk. (A backslash outside a string is no JSON: the parser
        # refuses it where it stands.)
        plain = _ESCAPE.sub(b"", chunk[1:] if self._escaped else chunk)
        if self._in_string:
            plain = b'"' + plain
        outside = _UNESCAPED_STRING.sub(b"", plain)
        quote = outside.find(b'"')
        self._in_string = quote >= 0
        self._escaped = self._in_string and plain.endswith(b"\\")
        if self._in_string:
            outside = outside[:quote]
        brackets = outside.translate(None, _NOT_BRACKETS)
        if not brackets:
            return
        self._containers += brackets.count(b"{") + brackets.count(b"[")
        if self._containers > MAX_CONTAINERS:
            invalid()
        levels = list(accumulate(map(_STEP.__getitem__, brackets), initial=self._depth))
        if max(levels) > MAX_DEPTH or min(levels) < 0 or 0 in levels[1:-1]:
            invalid()
        self._depth = levels[-1]
        self._closed = self._depth == 0


def scan(data: bytes) -> None:
    """Check a whole document's bytes with a :class:`DocumentScanner`, a chunk at a time."""
    scanner = DocumentScanner()
    view = memoryview(data)
    for start in range(0, len(data), SCAN_CHUNK_BYTES):
        scanner.feed(bytes(view[start : start + SCAN_CHUNK_BYTES]))
    scanner.finish()


def parse(text: str | bytes) -> object:
    """Decode ``text`` as strict JSON, after the checks of :class:`DocumentScanner`.

    Args:
        text: The document, as exactly a ``str`` or UTF-8 ``bytes`` with no byte
            order mark (anything else, a subclass included, is ``invalid_report``).

    Returns:
        The decoded value: dicts, lists, strings, ints, floats, bools and None.

    Raises:
        ChartscoreError: ``file_too_large (report)`` over
            :data:`MAX_DOCUMENT_BYTES`; ``invalid_report`` for anything that is
            not one strict JSON object in UTF-8: another encoding, a byte order
            mark, syntax, NaN or Infinity, a number beyond the double range, a
            duplicate key, nesting deeper than :data:`MAX_DEPTH`.
    """
    # By exact type: a str subclass's methods (which json.loads calls) are the caller's code.
    if type(text) is str:
        data = _utf8(text)
    elif type(text) is bytes:
        data = text
    else:
        invalid()
    scan(data)
    document: object = None
    failed = False
    try:
        document = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_unique_members,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except (ValueError, RecursionError):
        failed = True
    if failed:  # raised here, outside the except block, so no context is chained
        invalid()
    return document


def require_plain(document: object) -> None:
    """Refuse anything but what ``json.loads`` gives, checked by exact type.

    For a caller's already-parsed document (``from_dict``): exact ``dict``
    objects with exact ``str`` keys, ``list``, ``str``, ``int``, ``float``,
    ``bool`` and None. The readers then compare only those, so a caller's
    object (a ``str`` subclass, a value whose ``__eq__`` raises) never runs
    code while a document is checked.

    Raises:
        ChartscoreError: ``invalid_report`` for any other value, anywhere in it.
    """
    pending = [document]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is dict:
            for key, item in value.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    invalid()
                pending.append(item)
        elif kind is list:
            pending.extend(value)  # type: ignore[arg-type]
        elif not (value is None or kind is str or kind is int or kind is float or kind is bool):
            invalid()


def _utf8(text: str) -> bytes:
    data = b""
    failed = False
    try:
        data = str.encode(text, "utf-8")  # str's own method, whatever a subclass does
    except UnicodeEncodeError:  # a lone surrogate
        failed = True
    if failed:
        invalid()
    return data


def check_format(document: object, name: str, version: int | tuple[int, ...]) -> dict[str, object]:
    """The document as a dict, once its ``format`` and ``format_version`` are known.

    Raises:
        ChartscoreError: ``invalid_report`` when the document is not an object;
            ``unknown_report_format`` when ``format`` is not ``name`` or
            ``format_version`` is not the integer ``version`` (one of them).
    """
    if type(document) is not dict:
        invalid()
    found_version = document.get("format_version")
    versions = version if type(version) is tuple else (version,)
    if document.get("format") != name or type(found_version) is not int:
        raise ChartscoreError(ErrorCode.UNKNOWN_REPORT_FORMAT)
    if found_version not in versions:
        raise ChartscoreError(ErrorCode.UNKNOWN_REPORT_FORMAT)
    return document


def members(
    value: object, required: Collection[str], optional: Collection[str] = ()
) -> dict[str, object]:
    """``value`` as an object holding every ``required`` key and no key outside both lists."""
    if type(value) is not dict:
        invalid()
    keys = value.keys()
    if not all(key in keys for key in required):
        invalid()
    if any(key not in required and key not in optional for key in keys):
        invalid()
    return value


def mapping(value: object) -> Mapping[str, object]:
    """``value`` as a JSON object (its keys are checked by the caller)."""
    if type(value) is not dict:
        invalid()
    return value


def count(value: object) -> int:
    """A count: an ``int`` (not a bool, not ``2.0``) in 0..2**53-1."""
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        invalid()
    return value


def number(value: object, low: float, high: float) -> float:
    """A JSON number in [low, high], as a float (``0`` and ``1`` arrive as ints)."""
    if type(value) is not int and type(value) is not float:
        invalid()
    if not low <= value <= high:  # compared before float(): a huge int would overflow
        invalid()
    return float(value)


def interval(value: object, low: float, high: float) -> tuple[float, float]:
    """``[lower, upper]``: two numbers with ``low <= lower <= upper <= high``."""
    if type(value) is not list or len(value) != 2:
        invalid()
    lower, upper = number(value[0], low, high), number(value[1], low, high)
    if lower > upper:
        invalid()
    return (lower, upper)


Quantities = Mapping[str, int | None]
"""One slice's integers by name (counts, ``metric.success_count``, ...); None if suppressed."""


def check_pooled(
    overall: Quantities, fields: Iterable[Quantities], field_types: Iterable[Quantities]
) -> None:
    """Refuse a document whose pooled slices are not the sums of its field slices.

    Every field belongs to one field type, so each quantity summed over the
    field slices equals its sum over the type slices, and each quantity of the
    overall slice equals both sums (a quantity a slice lacks counts 0). A sum
    with a suppressed (None) part is not checked.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    by_field = _sums(fields)
    by_type = _sums(field_types)
    for name in by_field.keys() | by_type.keys():
        if not _agree(by_field.get(name, 0), by_type.get(name, 0)):
            invalid()
    for name, value in overall.items():
        if not _agree(value, by_field.get(name, 0)) or not _agree(value, by_type.get(name, 0)):
            invalid()


def _sums(slices: Iterable[Quantities]) -> dict[str, int | None]:
    sums: dict[str, int | None] = {}
    for part in slices:
        for name, value in part.items():
            before = sums.get(name, 0)
            sums[name] = None if before is None or value is None else before + value
    return sums


def _agree(first: int | None, second: int | None) -> bool:
    return first is None or second is None or first == second
