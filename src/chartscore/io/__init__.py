"""Reading inputs and writing reports: JSON Lines, schema files, standard input, outputs."""

from chartscore.io.files import (
    compare_files,
    load_document_file,
    load_gates,
    load_schema,
    score_files,
)
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.jsonl import MAX_LINE_BYTES
from chartscore.io.output import check_output, write_atomic, write_output
from chartscore.io.schema_file import MAX_SCHEMA_BYTES

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_SCHEMA_BYTES",
    "STDIN",
    "InputPath",
    "check_output",
    "compare_files",
    "load_document_file",
    "load_gates",
    "load_schema",
    "score_files",
    "write_atomic",
    "write_output",
]
