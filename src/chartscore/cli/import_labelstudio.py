"""``chartscore import labelstudio``: a Label Studio export to gold (one annotator) and
predictions (another)."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option, UsageError, input_argument
from chartscore.cli._import_options import (
    GOLD_OUT,
    PREDICTIONS_OUT,
    SCHEMA_OUT,
    check_outputs,
    comma_list,
    note_ranges,
    whole_number,
    write_and_tell,
)
from chartscore.cli._streams import Streams
from chartscore.importers import import_labelstudio
from chartscore.importers.labelstudio import DEFAULT_FIELD

NAME: Final = "import labelstudio"


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the export; write gold, predictions and the schema as asked."""
    if args.predictions_out is not None and args.annotator is None:
        raise UsageError("--predictions-out needs --annotator", NAME)
    if args.annotator is not None and args.predictions_out is None:
        raise UsageError("--annotator needs --predictions-out", NAME)
    if args.gold_out is None and args.schema_out is None and args.predictions_out is None:
        raise UsageError(
            "nothing to write: give --gold-out, --predictions-out or --schema-out", NAME
        )
    gold_annotator = whole_number(args.gold_annotator, "--gold-annotator", NAME)
    annotator = whole_number(args.annotator, "--annotator", NAME)
    if annotator == gold_annotator:
        raise UsageError("--annotator must differ from --gold-annotator", NAME)
    labels = comma_list(args.labels, "--labels", NAME) or None
    notes = note_ranges(args.notes, NAME)
    export = input_argument(args.export)
    check_outputs(args, NAME, (export,))
    imported = import_labelstudio(
        export,
        gold_annotator=gold_annotator,  # type: ignore[arg-type]  # required: never None
        annotator=annotator,
        labels=labels,
        field=args.field or DEFAULT_FIELD,
        per_label=args.per_label,
        notes=notes,
    )
    write_and_tell(imported, args, streams, inputs=(export,), command=NAME)
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="Label Studio: one annotator's labels as gold, another's as predictions",
    description="Read a Label Studio JSON export as chart-review reads it: each "
    "annotator's labels per note (task) become one multi-select field, or with "
    "--per-label one boolean field per label; the notes both annotators annotated are "
    "compared. See docs/import.md.",
    options=(
        Option("--export", "the Label Studio JSON export", "FILE", required=True, reads_input=True),
        Option(
            "--gold-annotator",
            "the Label Studio user id whose labels are gold",
            "ID",
            required=True,
        ),
        Option("--annotator", "the user id whose labels are the predictions", "ID"),
        GOLD_OUT,
        PREDICTIONS_OUT,
        SCHEMA_OUT,
        Option("--labels", "the labels to score, LABEL,... (default: every label found)", "LIST"),
        Option(
            "--field", f"the field id (default {DEFAULT_FIELD}); with --per-label, the prefix", "ID"
        ),
        Option("--per-label", "one boolean field per label instead of one multi-select field"),
        Option("--notes", "only these note ids, such as 1,3-4 (chart-review's ranges)", "IDS"),
    ),
    run=run,
)
