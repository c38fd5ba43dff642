"""``chartscore worklist``: the inside-only list of disagreements to adjudicate (mode 0600)."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._options import (
    EXTRA_PREDICTIONS,
    GOLD,
    PREDICTIONS,
    SCHEMA,
    extra_predictions,
    parallel,
)
from chartscore.cli._streams import Streams, say
from chartscore.io.output import check_output
from chartscore.workflows.worklist import worklist_files, write_worklist

NAME: Final = "worklist"


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Score, list every disagreement, write the worklist file; say only how many rows."""
    if args.out == STANDARD_STREAM:
        raise UsageError("--out must name a file: a worklist never goes to stdout", NAME)
    gold, predictions = GOLD.input_path(args), PREDICTIONS.input_path(args)
    schema = SCHEMA.optional_path(args)
    inputs = (gold, predictions, schema)
    check_output(args.out, inputs=inputs)
    if args.list_ignored and extra_predictions(args) != "ignore":
        raise UsageError("--list-ignored needs --extra-predictions ignore", NAME)
    found = worklist_files(
        gold,
        predictions,
        schema=schema,
        extra_predictions=extra_predictions(args),
        parallel=parallel(args),
        list_ignored=bool(args.list_ignored),
    )
    write_worklist(
        found, args.out, inputs=inputs, adjudication_column=bool(args.adjudication_column)
    )
    by_class = ", ".join(f"{count:,} {name}" for name, count in found.counts().items() if count)
    say(
        streams.err,
        f"{PROGRAM}: worklist: {len(found.rows):,} disagreements"
        + (f" ({by_class})" if by_class else "")
        + "; patient-level, inside only: never share it\n",
    )
    if found.ignored_prediction_count and not args.list_ignored:
        say(
            streams.err,
            f"{PROGRAM}: worklist: {found.ignored_prediction_count:,} predictions whose key is "
            "not in gold were ignored and are in no row (--extra-predictions ignore)\n",
        )
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="list every disagreement (case id, field id, outcome class) to adjudicate; inside only",
    description="Score predictions against gold and write, to a file only (mode 0600), "
    "one CSV row per gold row that does not agree: its case id, field id and outcome "
    "class, never a value. The list is patient-level: it never leaves the protected "
    "environment, and render, gate, share and audit refuse it. See docs/worklist.md.",
    options=(
        GOLD,
        PREDICTIONS,
        SCHEMA,
        Option(
            "--out", "the worklist file to write (required; never stdout)", "FILE", required=True
        ),
        EXTRA_PREDICTIONS,
        Option(
            "--list-ignored",
            "with --extra-predictions ignore: list each prediction whose key gold does not "
            "hold (gold blank, system filled) as a row of class not_in_gold",
        ),
        Option(
            "--adjudication-column",
            "add an empty last column, adjudicated, for the abstractors' answers "
            "(read back by chartscore import adjudication)",
        ),
        Option(
            "--jobs", "processes: 2 reads predictions while gold loads", "{1,2}", choices=("1", "2")
        ),
    ),
    run=run,
)
