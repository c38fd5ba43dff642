"""Reading inputs and writing outputs: JSON Lines, schema, gates and document files, standard input.

Readers and writers only: nothing here imports scoring or the workflows built on it.
"""

from chartscore.io.document_files import load_document_file, load_gates
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.jsonl import MAX_LINE_BYTES
from chartscore.io.output import check_output, write_atomic, write_output
from chartscore.io.schema_file import MAX_SCHEMA_BYTES, load_schema
from chartscore.io.strata_file import load_strata

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_SCHEMA_BYTES",
    "STDIN",
    "InputPath",
    "check_output",
    "load_document_file",
    "load_gates",
    "load_schema",
    "load_strata",
    "write_atomic",
    "write_output",
]
