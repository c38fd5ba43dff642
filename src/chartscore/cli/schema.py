"""``chartscore schema``: print a shipped JSON Schema, or list their kinds."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option, UsageError
from chartscore.cli._streams import Streams
from chartscore.documents.json_schemas import SCHEMA_KINDS, schema_bytes
from chartscore.io.output import write_output

NAME: Final = "schema"


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Print one schema's bytes (``--print KIND``), or every kind, one a line (``--list``)."""
    if (args.print is None) == (not args.list):
        raise UsageError("give --print KIND or --list", NAME)
    if args.list:
        data = "".join(kind + "\n" for kind in SCHEMA_KINDS).encode("utf-8")
    else:
        data = schema_bytes(args.print)
    write_output(data, None, inputs=(), stdout=streams.out)
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="print the JSON Schema of a document or input format",
    description="Print the JSON Schema (Draft 2020-12) that chartscore ships for a "
    "document or input format, byte for byte, for other tools to validate with or generate "
    "types from; --list names the kinds. The readers stay stricter than the schemas: "
    "see docs/formats.md.",
    options=(
        Option("--print", "the kind whose schema to print", "KIND", choices=SCHEMA_KINDS),
        Option("--list", "list the kinds, one a line"),
    ),
    run=run,
)
