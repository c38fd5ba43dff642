"""``chartscore gate``: check a saved report or comparison against a gates file."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import Command, Option, input_argument
from chartscore.cli._options import DOCUMENT, GATE_INTERVAL, gate_status
from chartscore.cli._streams import Streams
from chartscore.io.document_files import load_document_file, load_gates


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Check every gate; print their table on stdout; exit 3 if a required one fails."""
    document_path, gates_path = input_argument(args.report), input_argument(args.gates)
    gates = load_gates(gates_path)
    document = load_document_file(document_path)
    level = None if args.confidence is None else float(args.confidence)
    return gate_status(
        document, gates, streams, on_stderr=False, level=level, interval=args.gate_interval
    )


COMMAND: Final = Command(
    name="gate",
    help="check a saved report or comparison against release gates",
    description="Check a report or comparison (JSON) against a gates file (TOML). Prints "
    "a table of every gate; exit 0 when every required gate passes, 3 when one fails.",
    options=(
        DOCUMENT,
        Option("--gates", "the gates file (TOML)", "FILE", required=True, reads_input=True),
        Option(
            "--confidence",
            "recompute the intervals at 0.90, 0.95 or 0.99 (default: the document's level)",
            "LEVEL",
            choices=("0.90", "0.95", "0.99"),
        ),
        GATE_INTERVAL,
    ),
    run=run,
)
