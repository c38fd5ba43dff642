"""``chartscore share``: score, suppress small cells, self-audit; print or write it."""

from __future__ import annotations

import argparse
import re
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    Command,
    Option,
    UsageError,
    input_argument,
    optional_input,
)
from chartscore.cli._ledger_options import LEDGER_OPTIONS, ledger_request, record
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    GOLD,
    JOBS,
    OUT,
    PREDICTIONS,
    QUIET,
    SCHEMA,
    STRICT_SCHEMA,
    output_target,
    score_inputs,
)
from chartscore.cli._streams import Streams, say
from chartscore.cli.progress import TerminalProgress
from chartscore.disclosure.shared import SharedReport
from chartscore.io.inputs import InputPath
from chartscore.io.output import write_output
from chartscore.workflows.share import DEFAULT_MIN_CELL, share_files

_MIN_CELL: Final = re.compile(r"[0-9]{1,9}")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Share; print or write the shared report; say how many numbers were suppressed."""
    gold, predictions = input_argument(args.gold), input_argument(args.predictions)
    schema_path = optional_input(args.schema)
    if args.min_cell is not None and not _MIN_CELL.fullmatch(args.min_cell):
        raise UsageError("--min-cell must be a whole number", "share")
    min_cell = DEFAULT_MIN_CELL if args.min_cell is None else int(args.min_cell)
    inputs = (gold, predictions, schema_path)
    out = output_target(args.out, inputs)
    request = ledger_request(
        args, "share", gold=gold, predictions=predictions, schema=schema_path, inputs=inputs
    )

    def share_with_notice(
        gold: InputPath,
        predictions: InputPath,
        *,
        progress: TerminalProgress | None,
        **options: object,
    ) -> SharedReport:
        def suppressing() -> None:
            if progress is not None:  # a terminal, without --quiet
                progress.finish()
                say(streams.err, f"{PROGRAM}: suppressing small cells and auditing...\n")

        return share_files(
            gold,
            predictions,
            progress=progress,
            min_cell=min_cell,
            suppressing=suppressing,
            **options,  # type: ignore[arg-type]
        )

    shared = score_inputs(
        args,
        streams,
        share_with_notice,
        gold=gold,
        predictions=predictions,
        schema_path=schema_path,
    )
    # No ignored-prediction count on stderr, unlike score: it may be a suppressed number.
    write_output((shared.to_json() + "\n").encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    say(
        streams.err,
        f"{PROGRAM}: {shared.disclosure.suppressed_count:,} numbers suppressed "
        f"(min cell {shared.disclosure.min_cell}); the audit passed\n",
    )
    record(request, shared, streams, gold=gold, schema_path=schema_path, inputs=inputs)
    return EXIT_OK


COMMAND: Final = Command(
    name="share",
    help="score, then suppress small cells so the report may leave (audited)",
    description="Score predictions against gold as score does, then print the shared "
    "report: numbers backed by 1 to min-cell - 1 distinct cases are null, with enough "
    "complementary cells that none can be derived. share audits its own output first "
    "and writes nothing if the audit would fail.",
    options=(
        GOLD,
        PREDICTIONS,
        SCHEMA,
        Option(
            "--min-cell",
            f"publish 0 or at least N cases (default {DEFAULT_MIN_CELL})",
            "N",
        ),
        OUT,
        QUIET,
        JOBS,
        EXTRA_PREDICTIONS,
        STRICT_SCHEMA,
        CONFIDENCE,
        *LEDGER_OPTIONS,
    ),
    run=run,
)
