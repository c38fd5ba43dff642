"""``chartscore compare``: two systems on the same gold, paired; print or write it."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option, input_argument, optional_input
from chartscore.cli._options import (
    GATES,
    GOLD,
    OUT,
    QUIET,
    SCHEMA,
    format_option,
    gate_status,
    output_target,
    progress_line,
)
from chartscore.cli._streams import Streams
from chartscore.io.document_files import load_gates
from chartscore.io.output import write_output
from chartscore.io.schema_file import load_schema
from chartscore.render import render
from chartscore.workflows.compare import compare_files


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Compare; print or write the comparison; check gates if given."""
    gold = input_argument(args.gold)
    baseline, candidate = input_argument(args.baseline), input_argument(args.candidate)
    schema_path, gates_path = optional_input(args.schema), optional_input(args.gates)
    inputs = (gold, baseline, candidate, schema_path, gates_path)
    out = output_target(args.out, inputs)
    gates = None if gates_path is None else load_gates(gates_path)
    progress = progress_line(args, streams)
    try:
        schema = None if schema_path is None else load_schema(schema_path)
        comparison = compare_files(gold, baseline, candidate, schema=schema, progress=progress)
    finally:
        if progress is not None:
            progress.finish()
    fmt = args.format or "json"
    text = comparison.to_json() + "\n" if fmt == "json" else render(comparison, fmt)
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    return EXIT_OK if gates is None else gate_status(comparison, gates, streams, on_stderr=True)


COMMAND: Final = Command(
    name="compare",
    help="compare two systems on the same gold, paired (McNemar, paired difference)",
    description="Compare a baseline's and a candidate's predictions on one gold file, "
    "row by row: each system's metrics, the rows only one got right, the paired "
    "difference with Newcombe's interval and McNemar's exact and mid-p tests.",
    options=(
        GOLD,
        Option(
            "--baseline",
            "the reference system's predictions",
            "FILE",
            required=True,
            reads_input=True,
        ),
        Option(
            "--candidate",
            "the system under test's predictions",
            "FILE",
            required=True,
            reads_input=True,
        ),
        SCHEMA,
        OUT,
        format_option("the comparison's form"),
        QUIET,
        GATES,
    ),
    run=run,
)
