"""Reading a strata file: JSON Lines of ``{"case_id": ..., "strata": {key: label}}``.

Read with the JSON Lines reader's limits and closed errors (docs/formats.md,
"Strata"); every key and label is checked against the schema's declared strata
(:class:`~chartscore.records.strata.CaseStrata`). An error names the input
(``strata``) and line, never a case id, key or label.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import iter_objects
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata

_SOURCE: Final = InputKind.STRATA
_KEYS: Final = ("case_id", "strata")


def load_strata(path: InputPath, schema: Schema | None) -> CaseStrata:
    """Read a strata file against the schema's declared strata.

    Cases the file lists but gold does not hold are allowed (a strata file may
    cover a whole registry); a gold case it does not list is refused when
    scoring (``strata_case_missing``).

    Raises:
        ChartscoreError: ``strata_not_declared`` first, when ``schema`` declares
            no strata; a reading code of the JSON Lines reader;
            ``missing_key`` or ``unknown_key`` (naming ``case_id`` or
            ``strata`` only; on line 1 of a gold or predictions file, with the
            hint ``rows_as_strata``, of a saved document ``document_as_strata``);
            or a code of :meth:`CaseStrata.build`.
    """
    if schema is None or not schema.strata:
        raise ChartscoreError(ErrorCode.STRATA_NOT_DECLARED, input=InputKind.SCHEMA)
    where = input_path(path, _SOURCE)
    with open_input(where, _SOURCE) as stream:
        return CaseStrata.build(schema, _lines(iter_objects(stream, _SOURCE)))


def _lines(
    objects: Iterator[tuple[int, dict[str, object]]],
) -> Iterator[tuple[int | None, object, object]]:
    for line, value in objects:
        for key in _KEYS:
            if key not in value:
                # A first line with a row's field_id: gold or predictions given as strata;
                # with a document's format: a report (or partial) given as strata.
                hint = None
                if line == 1 and "field_id" in value:
                    hint = ErrorHint.ROWS_AS_STRATA
                elif line == 1 and "format" in value:
                    hint = ErrorHint.DOCUMENT_AS_STRATA
                raise ChartscoreError(
                    ErrorCode.MISSING_KEY, input=_SOURCE, line=line, key=key, hint=hint
                )
        if len(value) != len(_KEYS):
            raise ChartscoreError(ErrorCode.UNKNOWN_KEY, input=_SOURCE, line=line)
        yield line, value["case_id"], value["strata"]
