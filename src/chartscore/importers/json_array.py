"""A JSON array read one element at a time, in bounded memory: a Label Studio export's tasks.

A Label Studio export is one JSON array of tasks, up to 1 GiB. Decoding it whole takes
about 25 times its size in memory (a 96 KB gzip file of empty objects took 2.6 GB), so
the array is cut into its elements without decoding it: outside strings, a scan finds
brackets and braces; a string is skipped from its opening quote to its closing one in one
regular-expression step. Each element is then decoded on its own, strictly, as every
JSON input is (:func:`chartscore.io.jsonl.decode_document`). Memory holds one element and
one block of the file, never the export.

Limits, each checked before an element is decoded, so that a gzip bomb of any shape stops
with a code after little reading:

- the export: the caller's limit, counted after decompression (``file_too_large``);
- an element: :data:`MAX_ELEMENT_BYTES` and :data:`MAX_ELEMENT_VALUES` values
  (``task_too_large``), so that decoding the largest one accepted takes about 100 MB;
- nesting: :data:`MAX_DEPTH` (``nesting_too_deep``).

Errors name the element by its 0-based position (``item``), or the line of a syntax
error, never the content.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import ByteReader, decode_document

MAX_ELEMENT_BYTES: Final = 8 << 20
"""The largest task, 8 MiB (its note's text included)."""

MAX_ELEMENT_VALUES: Final = 500_000
"""The most values in one task: arrays and objects opened, and the commas and colons between
values (about 130 bytes each when decoded, at most)."""

MAX_DEPTH: Final = 500
"""The deepest nesting of arrays and objects in a task."""

_BLOCK_BYTES: Final = 1 << 18
_BOM: Final = b"\xef\xbb\xbf"
_WHITE: Final = b" \t\r\n"
_SPACE: Final = re.compile(rb"[ \t\r\n]*")
_SHORT_RUN: Final = 4096  # white space longer than this may fill the buffer: checked in one step
# Up to the next bracket or brace outside strings, or a string the buffer cuts: other bytes
# and whole strings are skipped in one step.
_UP_TO_BRACKET: Final = re.compile(rb'(?:[^][{}"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL)
_STRING_BODY: Final = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)  # to the closing quote
_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_SCALAR: Final = re.compile(rb"[^][{}\",: \t\r\n]*")  # a number, true, false or null
_OPEN: Final = frozenset(b"[{")
_VALUE_STARTS: Final = frozenset(b'[{"-0123456789tfn')
_QUOTE: Final = ord('"')


def iter_elements(path: InputPath, source: InputKind, limit: int) -> Iterator[tuple[int, object]]:
    """Yield ``(item, value)`` for each element of the JSON array in the file, as it is read.

    Args:
        path: A path, or :data:`chartscore.io.STDIN`.
        source: The input's name in errors.
        limit: The most bytes read, after decompression.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``, ``file_too_large``,
            ``invalid_json`` (with the line), ``invalid_export`` (the file is not
            an array), ``not_utf8``, ``task_too_large`` and ``nesting_too_deep``
            (the item), or any code of :func:`~chartscore.io.jsonl.decode_document`.
    """
    where = input_path(path, source)
    with open_input(where, source, limit=limit) as stream:
        yield from _Elements(stream, source)


class _Elements:
    """The scan over a buffer that holds the element being read and what follows it.

    Positions are indexes into the buffer. Bytes before ``_keep`` (what was read
    before the element being scanned) are dropped only when a block is added, so
    each byte is moved at most once per block, however small the elements.
    """

    def __init__(self, stream: ByteReader, source: InputKind) -> None:
        self._stream = stream
        self._source = source
        self._buffer = bytearray()
        self._at = 0  # where the scan is, between elements
        self._keep = 0  # the first byte still needed: the element's start
        self._ended = False  # the stream has no more bytes
        self._line = 1  # the line at ``_counted``
        self._counted = 0
        self._item = 0

    def __iter__(self) -> Iterator[tuple[int, object]]:
        if self._read_more() and self._buffer.startswith(_BOM):
            del self._buffer[: len(_BOM)]
        first = self._next_byte()
        if first is None:
            raise self._syntax_error(self._at)  # an empty file is not JSON
        if first != ord("["):
            raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=self._source)
        self._at += 1
        if self._next_byte() == ord("]"):
            self._at += 1
        else:
            while True:
                yield self._item, self._element()
                self._item += 1
                following = self._next_byte()
                if following not in (ord(","), ord("]")):
                    raise self._syntax_error(self._at)
                self._at += 1
                if following == ord("]"):
                    break
        if self._next_byte() is not None:
            raise self._syntax_error(self._at)  # something after the array

    # --- reading ---

    def _read_more(self) -> bool:
        """Add a block to the buffer (first dropping the bytes before ``_keep``); False at its end.

        Every position held elsewhere moves back by the bytes dropped.
        """
        if self._ended:
            return False
        dropped = self._keep
        if dropped:
            self._line_at(dropped)
            del self._buffer[:dropped]
            self._at -= dropped
            self._keep = 0
            self._counted = 0
        code: ErrorCode | None = None
        block = b""
        try:
            block = self._stream.read(_BLOCK_BYTES)
        except OSError:
            code = ErrorCode.FILE_UNREADABLE
        if code is not None:
            raise ChartscoreError(code, input=self._source)
        if not block:
            self._ended = True
            return False
        self._buffer += block
        return True

    def _next_byte(self) -> int | None:
        """The next byte that is not white space (``_at`` moved to it), or None at the end."""
        while True:
            window = self._at + _SHORT_RUN
            found = _SPACE.match(self._buffer, self._at, window)
            self._at = self._at if found is None else found.end()
            if self._at == window:  # a long run, maybe a gzip bomb of white space
                if self._buffer[self._at :].translate(None, _WHITE):
                    found = _SPACE.match(self._buffer, self._at)  # it ends in this block
                    self._at = self._at if found is None else found.end()
                else:
                    self._at = len(self._buffer)  # the whole block is white space
            if self._at < len(self._buffer):
                return self._buffer[self._at]
            self._keep = self._at
            if not self._read_more():
                return None

    def _more(self, at: int) -> int:
        """Read on inside the element scanned from ``_keep``; ``at`` as it is afterwards.

        Refuses the element once it is over the limit, and a file that ends inside it.
        """
        if len(self._buffer) - self._keep > MAX_ELEMENT_BYTES:
            raise self._too_large()
        before = self._keep
        if not self._read_more():
            raise self._syntax_error(len(self._buffer))  # the file ends inside the element
        return at - before

    # --- one element ---

    def _element(self) -> object:
        """Scan the element at ``_at`` and decode it; ``_at`` moves past it."""
        first = self._next_byte()
        if first is None or first not in _VALUE_STARTS:
            raise self._syntax_error(self._at if first is not None else len(self._buffer))
        self._keep = self._at
        if first in _OPEN:
            end = self._container_end(self._at)
        elif first == _QUOTE:
            end = self._string_end(self._at + 1)
        else:
            end = self._scalar_end(self._at)
        start = self._keep
        if end - start > MAX_ELEMENT_BYTES:
            raise self._too_large()
        text = ""
        bad = False
        try:
            text = self._buffer[start:end].decode("utf-8")
        except UnicodeDecodeError:
            bad = True
        if bad:
            raise ChartscoreError(ErrorCode.NOT_UTF8, input=self._source, item=self._item)
        line = self._line_at(start)
        self._at = self._keep = end
        return decode_document(text, self._source, first_line=line, item=self._item)

    def _container_end(self, at: int) -> int:
        """The end of the array or object that starts at ``at``; its values counted."""
        depth, opened = 0, 0
        while True:
            found = _UP_TO_BRACKET.match(self._buffer, at)
            stop = at if found is None else found.end()
            if stop == len(self._buffer):
                at = self._more(stop)
                continue
            byte = self._buffer[stop]
            if byte == _QUOTE:  # a string the buffer cuts: read on to its end
                at = self._string_end(stop + 1)
                continue
            at = stop + 1
            if byte in _OPEN:
                depth += 1
                opened += 1
                if depth > MAX_DEPTH:
                    raise ChartscoreError(
                        ErrorCode.NESTING_TOO_DEEP, input=self._source, item=self._item
                    )
                if opened > MAX_ELEMENT_VALUES:
                    raise self._too_large()
            else:
                depth -= 1
                if depth == 0:
                    self._count_values(at, opened)
                    return at

    def _count_values(self, end: int, opened: int) -> None:
        """Refuse an element of more values than :data:`MAX_ELEMENT_VALUES`: the arrays and
        objects it opens, and the commas and colons outside its strings."""
        start = self._keep
        anywhere = self._buffer.count(b",", start, end) + self._buffer.count(b":", start, end)
        if opened + anywhere <= MAX_ELEMENT_VALUES:
            return  # an upper bound is enough: no need to tell what is inside strings
        outside = _STRING.sub(b'""', self._buffer[start:end])
        if opened + outside.count(b",") + outside.count(b":") > MAX_ELEMENT_VALUES:
            raise self._too_large()

    def _string_end(self, at: int) -> int:
        """Just past the closing quote of the string whose contents start at ``at``."""
        while True:
            found = _STRING_BODY.match(self._buffer, at)
            stop = at if found is None else found.end()
            if stop < len(self._buffer) and self._buffer[stop] == _QUOTE:
                return stop + 1
            at = self._more(stop)  # from the end, or from an escape the block cut in two

    def _scalar_end(self, at: int) -> int:
        """The end of the number, ``true``, ``false`` or ``null`` that starts at ``at``."""
        while True:
            found = _SCALAR.match(self._buffer, at)
            stop = at if found is None else found.end()
            if stop < len(self._buffer):
                return stop
            at = self._more(stop)

    # --- errors ---

    def _line_at(self, position: int) -> int:
        """The line of ``position``, counted on from the last one asked (never backwards)."""
        self._line += self._buffer.count(b"\n", self._counted, position)
        self._counted = position
        return self._line

    def _too_large(self) -> ChartscoreError:
        return ChartscoreError(ErrorCode.TASK_TOO_LARGE, input=self._source, item=self._item)

    def _syntax_error(self, position: int) -> ChartscoreError:
        """``invalid_json`` at the line of ``position``."""
        line = self._line_at(max(position, self._counted))
        return ChartscoreError(ErrorCode.INVALID_JSON, input=self._source, line=line)
