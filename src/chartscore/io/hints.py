"""Hints: the likely cause of a reading failure, told from its shape, never from its content."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from chartscore._format import PARTIAL_FORMAT
from chartscore.documents import format_of
from chartscore.documents.agreement import AGREEMENT_FORMAT
from chartscore.documents.comparison import COMPARISON_FORMAT
from chartscore.documents.gates import has_gate_header
from chartscore.documents.report import REPORT_FORMAT
from chartscore.documents.shared_comparison import SHARED_COMPARISON_FORMAT
from chartscore.documents.shared_rule import SHARED_FORMAT
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, with_hint
from chartscore.io.inputs import StandardInput, open_input
from chartscore.io.jsonl import iter_objects
from chartscore.ledger.entry import LEDGER_FORMAT

__all__ = [
    "document_explained",
    "explained",
    "format_explained",
    "gates_explained",
    "schema_explained",
]

_JSON_LINES_CODES: Final = frozenset({ErrorCode.INVALID_JSON, ErrorCode.NOT_AN_OBJECT})
_ROW_KEYS: Final = frozenset({"case_id", "field_id"})
"""A gold or prediction line's keys: a first line with one of them is such a file."""
_DICTIONARY_FIRST_HEADERS: Final = frozenset({"variable / field name", "field_name"})
"""The first header cell of a REDCap data dictionary (the UI's, the API's)."""
_LINE_INPUTS: Final = frozenset(
    {
        InputKind.GOLD,
        InputKind.PREDICTIONS,
        InputKind.BASELINE,
        InputKind.CANDIDATE,
        InputKind.RATERS,
    }
)
_DOCUMENT_FORMATS: Final = frozenset(
    {
        REPORT_FORMAT,
        COMPARISON_FORMAT,
        SHARED_FORMAT,
        SHARED_COMPARISON_FORMAT,
        AGREEMENT_FORMAT,
    }
)
"""The ``format`` of every value-free document (``render`` and ``gate`` read them)."""


def explained(
    error: ChartscoreError, inputs: Sequence[tuple[str | StandardInput, InputKind]]
) -> ChartscoreError:
    """``error`` with a hint when the shape of the failure tells the likely cause.

    ``inputs``: every JSON Lines input of the run with its kind (gold, predictions,
    baseline, candidate, raters: a rater file is read as predictions). Decided from the
    code, the input and the line, and whether the first record of a file has a
    ``field_type``, ``format`` or ``strata`` key: never shown, so nothing of the data
    reaches the message.

    - An ``invalid_json`` or ``not_an_object`` on line 1 of a JSON Lines input:
      a CSV file or a JSON array (``json_lines_expected``).
    - Gold's first record lacks ``field_type`` while a predictions file's has
      one: the two files given the wrong way round (``inputs_swapped``).
    - A predictions (or rater) file's first record has ``field_type``
      (``unknown_key``): a gold file given as predictions (``gold_as_predictions``).
    - A first record that lacks ``case_id`` and has a document's ``format`` key:
      a saved document (a report) given as rows (``document_as_rows``).
    - A first record that lacks ``field_id`` and has a strata line's ``strata``
      key: a strata file given as rows (``strata_as_rows``).
    """
    if error.hint is not None or error.line != 1 or error.input not in _LINE_INPUTS:
        return error
    if error.code in _JSON_LINES_CODES:
        return with_hint(error, ErrorHint.JSON_LINES_EXPECTED)
    swapped = (
        error.input is InputKind.GOLD
        and error.code is ErrorCode.MISSING_KEY
        and error.key == "field_type"
        and any(
            _first_record_has(where, kind, "field_type")
            for where, kind in inputs
            if kind is not InputKind.GOLD
        )
    )
    if swapped:
        return with_hint(error, ErrorHint.INPUTS_SWAPPED)
    if error.code is ErrorCode.UNKNOWN_KEY and error.key == "field_type":
        return with_hint(error, ErrorHint.GOLD_AS_PREDICTIONS)  # gold's own line 1 passed
    misplaced = _MISPLACED.get(error.key or "") if error.code is ErrorCode.MISSING_KEY else None
    if misplaced is None:
        return error
    marker, hint = misplaced  # the failing file's own first record tells what it is
    own = [where for where, kind in inputs if kind is error.input]
    return (
        with_hint(error, hint)
        if any(_first_record_has(w, error.input, marker) for w in own)
        else error
    )


_MISPLACED: Final = {
    "case_id": ("format", ErrorHint.DOCUMENT_AS_ROWS),
    "field_id": ("strata", ErrorHint.STRATA_AS_ROWS),
}
"""The key a row file's line 1 lacks, the key that tells what the file is, and the hint."""


def _first_record_has(where: str | StandardInput, kind: InputKind, key: str) -> bool:
    """Whether a file's first record has ``key`` (standard input is not read)."""
    if isinstance(where, StandardInput):
        return False
    found = False
    try:
        with open_input(where, kind) as stream:
            for _, record in iter_objects(stream, kind):
                found = key in record
                break
    except ChartscoreError:
        found = False  # unreadable or not JSON Lines: no hint
    return found


def document_explained(error: ChartscoreError, seen: bytes, source: InputKind) -> ChartscoreError:
    """What a refused document really is, told from its shape (``seen``: the bytes read).

    Nothing of ``seen`` reaches the message: only whether its first line is a JSON
    object followed by more (JSON Lines), whether that object has a gold or
    prediction key (``case_id``, ``field_id``), and whether a line is a ``[[gate]]``
    header.

    - ``invalid_report`` for JSON Lines becomes ``json_lines_document``; with the
      hint ``gold_or_predictions_given`` when its first line is a gold or
      prediction row and a report was expected.
    - ``invalid_report`` for a gates file (TOML) gets ``document_looks_like_gates``.
    - ``json_lines_document`` for a ledger (its first line's ``format`` is the ledger's)
      gets ``ledger_given``.
    """
    if error.code is not ErrorCode.INVALID_REPORT or error.hint is not None:
        return error
    first, _, rest = seen.partition(b"\n")
    row: object = None
    try:
        row = json.loads(first.decode("utf-8-sig")) if rest.strip() else None
    except (ValueError, RecursionError):
        row = None  # not a JSON line: not JSON Lines
    if type(row) is dict:
        gold_like = source is InputKind.REPORT and not _ROW_KEYS.isdisjoint(row)
        hint = ErrorHint.GOLD_OR_PREDICTIONS_GIVEN if gold_like else None
        if row.get("format") == LEDGER_FORMAT:  # compared, never shown
            hint = ErrorHint.LEDGER_GIVEN
        return ChartscoreError(ErrorCode.JSON_LINES_DOCUMENT, input=source, hint=hint)
    if has_gate_header(seen.decode("utf-8", "replace")):
        return with_hint(error, ErrorHint.DOCUMENT_LOOKS_LIKE_GATES)
    return error


def format_explained(error: ChartscoreError, data: bytes, source: InputKind) -> ChartscoreError:
    """``unknown_report_format`` for a chartscore file of another kind, told by its ``format``.

    The ``format`` value is compared with chartscore's own names, never shown.

    - A saved document expected (``source`` report: ``render``, ``gate``): a partial
      gets ``partial_given``, a ledger of one line ``ledger_given``.
    - A partial expected (``source`` partial: ``merge``, ``share --partials``): a
      report, comparison, shared document or agreement gets ``document_as_partial``.
    """
    if error.code is not ErrorCode.UNKNOWN_REPORT_FORMAT or error.hint is not None:
        return error
    name: object = None
    try:
        name = format_of(data)
    except ChartscoreError:
        name = None  # not a JSON object: no hint
    if source is InputKind.PARTIAL:
        hint = ErrorHint.DOCUMENT_AS_PARTIAL if name in _DOCUMENT_FORMATS else None
    else:
        hint = _OTHER_FILES.get(name) if type(name) is str else None
    return error if hint is None else with_hint(error, hint)


_OTHER_FILES: Final = {
    PARTIAL_FORMAT: ErrorHint.PARTIAL_GIVEN,
    LEDGER_FORMAT: ErrorHint.LEDGER_GIVEN,
}
"""The chartscore files that are no saved document, by ``format``, and their hint."""


def gates_explained(error: ChartscoreError, data: bytes) -> ChartscoreError:
    """``invalid_toml`` for a gates file that is a JSON document: the arguments swapped.

    Decided from the first byte that is not white space (``{``, which no TOML file
    starts with); nothing of ``data`` is shown.
    """
    if error.code is not ErrorCode.INVALID_TOML or error.hint is not None:
        return error
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return with_hint(error, ErrorHint.GATES_LOOK_LIKE_DOCUMENT)
    return error


def schema_explained(error: ChartscoreError, text: str) -> ChartscoreError:
    """``invalid_json`` for a schema that is a REDCap data dictionary (CSV), or JSON Lines
    of gold or prediction rows.

    Decided from the first cell of the first line (``Variable / Field Name`` or
    ``field_name``, REDCap's own header words), or from whether the first line is a
    JSON object with a row's ``field_id`` key; nothing of ``text`` is shown.
    """
    if error.code is not ErrorCode.INVALID_JSON or error.hint is not None:
        return error
    first = text.partition("\n")[0].lstrip("\ufeff")
    row: object = None
    try:
        row = json.loads(first)
    except (ValueError, RecursionError):
        row = None  # not a JSON line: not JSON Lines
    if type(row) is dict and "field_id" in row:
        return with_hint(error, ErrorHint.ROWS_AS_SCHEMA)
    cell = first[1:].partition('"')[0] if first.startswith('"') else re.split(r"[,;\t|]", first)[0]
    if cell.strip().lower() in _DICTIONARY_FIRST_HEADERS:
        return with_hint(error, ErrorHint.REDCAP_DICTIONARY_GIVEN)
    return error
