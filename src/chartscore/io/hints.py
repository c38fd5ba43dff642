"""Hints: the likely cause of a reading failure, told from its shape, never from its content."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, with_hint
from chartscore.io.inputs import StandardInput, open_input
from chartscore.io.jsonl import iter_objects

__all__ = ["explained"]

_JSON_LINES_CODES: Final = frozenset({ErrorCode.INVALID_JSON, ErrorCode.NOT_AN_OBJECT})
_LINE_INPUTS: Final = frozenset(
    {InputKind.GOLD, InputKind.PREDICTIONS, InputKind.BASELINE, InputKind.CANDIDATE}
)


def explained(
    error: ChartscoreError, predictions: Sequence[tuple[str | StandardInput, InputKind]]
) -> ChartscoreError:
    """``error`` with a hint when the shape of the failure tells the likely cause.

    Decided from the code, the input and the line, and (for a swap) whether the
    first record of a predictions file has a ``field_type``: never shown, so
    nothing of the data reaches the message.

    - An ``invalid_json`` or ``not_an_object`` on line 1 of a JSON Lines input:
      a CSV file or a JSON array (``json_lines_expected``).
    - Gold's first record lacks ``field_type`` while a predictions file's has
      one: the two files given the wrong way round (``inputs_swapped``).
    """
    if error.hint is not None or error.line != 1 or error.input not in _LINE_INPUTS:
        return error
    if error.code in _JSON_LINES_CODES:
        return with_hint(error, ErrorHint.JSON_LINES_EXPECTED)
    swapped = (
        error.input is InputKind.GOLD
        and error.code is ErrorCode.MISSING_KEY
        and error.key == "field_type"
        and any(_first_record_has_field_type(where, kind) for where, kind in predictions)
    )
    return with_hint(error, ErrorHint.INPUTS_SWAPPED) if swapped else error


def _first_record_has_field_type(where: str | StandardInput, kind: InputKind) -> bool:
    """Whether a file's first record has gold's ``field_type`` key (standard input is not read)."""
    if isinstance(where, StandardInput):
        return False
    found = False
    try:
        with open_input(where, kind) as stream:
            for _, record in iter_objects(stream, kind):
                found = "field_type" in record
                break
    except ChartscoreError:
        found = False  # unreadable or not JSON Lines: no hint
    return found
