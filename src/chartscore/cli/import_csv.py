"""``chartscore import csv``: a table, one row per case, to gold or predictions by a column map."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._import_options import (
    FIELD_SCHEMA,
    GOLD_OUT,
    PREDICTIONS_OUT,
    check_outputs,
    write_and_tell,
)
from chartscore.cli._streams import Streams
from chartscore.importers import import_csv
from chartscore.io.schema_file import load_schema

NAME: Final = "import csv"
_TABLE: Final = Option(
    "--table", "the table (CSV, or ; tab | ^ delimited)", "FILE", required=True, reads_input=True
)
_COLUMNS: Final = Option(
    "--columns",
    "the column map (JSON, or TOML if *.toml)",
    "FILE",
    required=True,
    reads_input=True,
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the table through the column map; write gold or predictions."""
    if (args.gold_out is None) == (args.predictions_out is None):
        raise UsageError("give one of --gold-out and --predictions-out", NAME)
    table, columns = _TABLE.input_path(args), _COLUMNS.input_path(args)
    schema_path = FIELD_SCHEMA.optional_path(args)
    inputs = (table, columns, schema_path)
    check_outputs(args, NAME, inputs)
    schema = None if schema_path is None else load_schema(schema_path)
    imported = import_csv(
        table,
        columns,
        role="gold" if args.gold_out is not None else "predictions",
        schema=schema,
    )
    write_and_tell(imported, args, streams, inputs=inputs, command=NAME)
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="CSV: one row per case, one column per field, through a declared column map",
    description="Read a delimited table (UTF-8; the delimiter is found from the header) "
    "whose rows are cases and whose columns are fields, as the column map (JSON or TOML) "
    "declares, with the fields' types from --schema (required for gold). See docs/import.md.",
    options=(
        _TABLE,
        _COLUMNS,
        FIELD_SCHEMA,
        GOLD_OUT,
        PREDICTIONS_OUT,
    ),
    run=run,
)
