"""Reading a field schema file: JSON, or TOML by name, with the JSON reader's limits.

A schema file is read whole (at most :data:`MAX_SCHEMA_BYTES` after
decompression) and decoded strictly. TOML gets the same number rules as JSON
(more than 100 digits or a magnitude beyond 1e+-9999 is ``number_out_of_range``,
``nan`` and ``inf`` are ``nonfinite_number``) and the same answer to
pathological nesting (``nesting_too_deep``). A syntax error in either names
its line: ``invalid_json (schema line 3)``.
"""

from __future__ import annotations

import re
import tomllib
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.hints import schema_explained
from chartscore.io.inputs import InputPath, StandardInput, input_path, read_whole
from chartscore.io.jsonl import decimal_literal, decode_document
from chartscore.records.normalize import NUMBER_MAX_DIGITS
from chartscore.records.schema import Schema

MAX_SCHEMA_BYTES: Final = 16 << 20
"""The largest accepted schema file, 16 MiB (after decompression)."""

_SOURCE: Final = InputKind.SCHEMA
_INT_LIMIT: Final = 10**NUMBER_MAX_DIGITS  # the JSON reader refuses integers with more digits
_TOML_LINE: Final = re.compile(r"\(at line (\d+), column \d+\)\Z")
_TOML_END: Final = "(at end of document)"
_GZIP_SUFFIX: Final = ".gz"
_TOML_SUFFIX: Final = ".toml"


def is_toml_name(path: str | StandardInput) -> bool:
    """Whether a schema path names TOML: ``*.toml`` in any case, also before ``.gz``.

    Standard input is always JSON.
    """
    if isinstance(path, StandardInput):
        return False
    name = path.lower()
    if name.endswith(_GZIP_SUFFIX):
        name = name[: -len(_GZIP_SUFFIX)]
    return name.endswith(_TOML_SUFFIX)


def load_schema(path: InputPath) -> Schema:
    """Read a field schema from a JSON file, or a TOML file if the name ends in ``.toml``.

    The name test ignores case (``SCHEMA.TOML`` is TOML) and a final ``.gz``.
    A gzip file is recognised by its first bytes and decompressed. See
    docs/formats.md for the schema's shape.

    Args:
        path: A ``str`` or ``os.PathLike`` path, or :data:`chartscore.io.STDIN`
            (read as JSON). Bytes paths and file descriptors are refused.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large``, ``not_utf8``, ``invalid_json`` (also for
            invalid TOML; with the line), ``duplicate_key``,
            ``nonfinite_number``, ``number_out_of_range``,
            ``nesting_too_deep`` or a schema code.
    """
    return Schema.from_dict(read_document(path, _SOURCE))


def read_document(path: InputPath, source: InputKind) -> object:
    """A small developer-written JSON or TOML file (by name, as for schemas), decoded strictly.

    The rules of :func:`load_schema` (at most 16 MiB, UTF-8, gzip read, the
    JSON reader's number and nesting limits for both) for any such file: a
    schema, or an importer's column map. Errors name ``source``.

    Raises:
        ChartscoreError: as :func:`load_schema`, without the schema codes.
    """
    where = input_path(path, source)
    data = read_whole(where, source, MAX_SCHEMA_BYTES)
    text = ""
    code: ErrorCode | None = None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        code = ErrorCode.NOT_UTF8
    if code is not None:
        raise ChartscoreError(code, input=source)
    if is_toml_name(where):
        return _toml_document(text, source)
    refused: ChartscoreError | None = None
    try:
        return decode_document(text, source)
    except ChartscoreError as error:
        refused = error
    # Raised outside the handler: nothing chained.
    raise schema_explained(refused, text) if source is InputKind.SCHEMA else refused


def _toml_float(text: str) -> object:
    return decimal_literal(text)  # raises a ChartscoreError, which tomllib lets through


def _toml_document(text: str, source: InputKind) -> object:
    document: object = None
    code: ErrorCode | None = None
    line: int | None = None
    try:
        document = tomllib.loads(text, parse_float=_toml_float)
    except ChartscoreError as refused:
        code = refused.code
    except tomllib.TOMLDecodeError as error:
        code = ErrorCode.INVALID_JSON
        message = str(error)  # tomllib's fixed wording and a position; only the line is kept
        found = _TOML_LINE.search(message)
        if found:
            line = int(found.group(1))
        elif message.endswith(_TOML_END):
            line = text.count("\n") + 1
    except RecursionError:
        code = ErrorCode.NESTING_TOO_DEEP
    except ValueError:  # an integer beyond Python's digit limit
        code = ErrorCode.NUMBER_OUT_OF_RANGE
    if code is None:
        code = _number_problem(document)
    if code is not None:
        raise ChartscoreError(code, input=source, line=line)
    return document


def _number_problem(document: object) -> ErrorCode | None:
    """``number_out_of_range`` if an integer has more than 100 digits, as JSON refuses."""
    pending = [document]
    while pending:
        item = pending.pop()
        if type(item) is int and not -_INT_LIMIT < item < _INT_LIMIT:
            return ErrorCode.NUMBER_OUT_OF_RANGE
        if type(item) is dict:
            pending.extend(item.values())
        elif type(item) is list:
            pending.extend(item)
    return None
