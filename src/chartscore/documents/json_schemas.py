"""The JSON Schemas (Draft 2020-12) of every format chartscore reads and writes.

They ship as package data, ``chartscore/schemas/<kind>.schema.json``, for other tools:
to validate a document, or to generate types for it. They are value-free (key names,
types, enumerations of closed names, bounds) and follow the readers' rules where a schema
can say them; the readers stay stricter (identities among counts, intervals recomputed
from them), so a document that passes its schema may still be refused (docs/formats.md,
"JSON Schemas"). A schema that names another (a ledger line's document, a partial's field
schema) does so by its file name, ``report.schema.json``.
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode

__all__ = ["SCHEMA_KINDS", "schema_bytes", "schema_file_name"]

SCHEMA_KINDS: Final = (
    "report",
    "comparison",
    "shared_report",
    "shared_comparison",
    "agreement",
    "partial",
    "gates",
    "field_schema",
    "ledger_line",
    "gold_line",
    "prediction_line",
)
"""Every shipped schema's kind, in documented order (docs/formats.md)."""

_FOLDER: Final = "schemas"


def schema_file_name(kind: str) -> str:
    """The file name of ``kind``'s schema, ``<kind>.schema.json``.

    Raises:
        ChartscoreError: ``usage`` for a kind outside :data:`SCHEMA_KINDS`.
    """
    if type(kind) is not str or kind not in SCHEMA_KINDS:
        raise ChartscoreError(ErrorCode.USAGE)
    return f"{kind}.schema.json"


def schema_bytes(kind: str) -> bytes:
    """The shipped schema of ``kind``, byte for byte as the package holds it (UTF-8 JSON).

    Raises:
        ChartscoreError: ``usage`` for a kind outside :data:`SCHEMA_KINDS`.
    """
    name = schema_file_name(kind)
    return (resources.files("chartscore") / _FOLDER / name).read_bytes()
