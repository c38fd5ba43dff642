"""``chartscore gate``: check a saved report, comparison or agreement against a gates file."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import Command, Option, input_argument
from chartscore.cli._options import (
    DOCUMENT,
    GATE_INTERVAL,
    JUNIT,
    REQUIRED_MIN_CELL,
    declared_min_cell,
    gate_status,
    junit_target,
    required_min_cell,
)
from chartscore.cli._streams import Streams
from chartscore.documents.gates import EXIT_REQUIRED_GATE_FAILED
from chartscore.io.document_files import load_gates, load_rendered_file
from chartscore.io.output import write_output


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Check every gate; print their table on stdout; exit 3 if a required one fails.

    With ``--junit FILE``, the results also go to FILE as JUnit XML (the exit status is
    the same), the ``--min-cell`` check as one more test case.

    With ``--min-cell N``, one more line after the table: the document must be a
    shared one with a min cell of at least N, or the gate fails (exit 3). A full
    report or comparison fails it too: it is not suppressed at all.
    """
    required = required_min_cell(args.min_cell, "gate")
    document_path, gates_path = input_argument(args.report), input_argument(args.gates)
    junit = junit_target(args, (document_path, gates_path), "gate")
    gates = load_gates(gates_path)
    document = load_rendered_file(document_path)
    level = None if args.confidence is None else float(args.confidence)
    line, met = "", True
    checks: tuple[tuple[str, str], ...] = ()
    if required is not None:
        declared = declared_min_cell(document)
        met = declared is not None and declared >= required
        if declared is None:
            reason = f"not a shared document, so below the required {required}"
        else:
            relation = "at least" if met else "below"
            reason = f"min_cell {declared}, {relation} the required {required}"
        line = f"min cell {'passed' if met else 'FAILED'}: {reason}\n"
        checks = ((f"min cell >= {required}", "" if met else reason),)
    status = gate_status(
        document,
        gates,
        streams,
        on_stderr=False,
        level=level,
        interval=args.gate_interval,
        junit=junit,
        junit_name="chartscore gate",
        inputs=(document_path, gates_path),
        checks=checks,
    )
    if required is None:
        return status
    write_output(line.encode("utf-8"), None, inputs=(), stdout=streams.out)
    return status if met else EXIT_REQUIRED_GATE_FAILED


COMMAND: Final = Command(
    name="gate",
    help="check a saved report, comparison or agreement against release gates",
    description="Check a report, comparison or agreement (JSON) against a gates file (TOML). "
    "Prints "
    "a table of every gate; exit 0 when every required gate passes, 3 when one fails. "
    "With --min-cell N, the document must also be shared at a min cell of at least N.",
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
        REQUIRED_MIN_CELL,
        JUNIT,
    ),
    run=run,
)
