"""``chartscore agree``: several raters on the same charts; print or write their agreement."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
    input_argument,
    optional_input,
)
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    OUT,
    QUIET,
    confidence,
    extra_predictions,
    output_target,
    progress_shown,
)
from chartscore.cli._streams import Streams
from chartscore.documents.agreement import MAX_RATERS, MIN_RATERS, RATER_LABEL
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.output import write_output
from chartscore.io.schema_file import load_schema
from chartscore.workflows.agree import agree_files
from chartscore.workflows.ledger import run_label

NAME: Final = "agree"


def _raters(args: argparse.Namespace) -> list[tuple[str, InputPath]]:
    files: list[str] = args.raters or []
    named: list[str] = args.rater or []
    if files and named:
        raise UsageError("give --raters or --rater, not both", NAME)
    if not files and not named:
        raise UsageError("--raters or --rater is required", NAME)
    raters: list[tuple[str, InputPath]] = []
    for part, value in enumerate(files or named, start=1):
        if named:
            label, equals, path = value.partition("=")
            if not equals or not path:
                raise UsageError("--rater takes NAME=FILE", NAME)
            if RATER_LABEL.fullmatch(label) is None:  # before any file is read; never echoed
                raise ChartscoreError(
                    ErrorCode.INVALID_RUN_LABEL, input=InputKind.RATERS, part=part
                )
        else:
            if value == "-":  # standard input has no file name to be its label
                raise UsageError("standard input as a rater needs a name: --rater NAME=-", NAME)
            path, found = value, run_label(input_argument(value))
            if found is None:  # standard input, or a stem that is not a plain label
                raise ChartscoreError(
                    ErrorCode.INVALID_RUN_LABEL, input=InputKind.RATERS, part=part
                )
            label = found
        raters.append((label, input_argument(path)))
    if not MIN_RATERS <= len(raters) <= MAX_RATERS:
        raise UsageError("agree needs two to 64 raters", NAME)
    return raters


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read every rater file, count their agreement; print or write the document."""
    raters = _raters(args)
    standard = sum(path is STDIN for _, path in raters)  # --rater NAME=-: unseen by the parser
    if standard and STANDARD_STREAM in (args.gold, args.schema):
        raise UsageError("standard input (-) can feed one input only", NAME)
    if standard > 1 or (standard and args.gold is not None):
        raise UsageError("standard input can feed one rater, and none with --gold", NAME)
    gold = optional_input(args.gold)
    schema_path = input_argument(args.schema)
    inputs = (*(path for _, path in raters), gold, schema_path)
    out = output_target(args.out, inputs)
    with progress_shown(args, streams) as progress:
        agreement = agree_files(
            raters,
            schema=load_schema(schema_path),
            gold=gold,
            confidence=confidence(args),
            extra_predictions=extra_predictions(args),
            progress=progress,
        )
    text = agreement.to_json() + "\n"
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="agreement among several raters on the same charts (kappa, AC1, alpha, the ceiling)",
    description="Read two or more rater files (the predictions format) on the same charts and "
    "write their value-free agreement: per field each pair's observed agreement and Cohen's "
    "kappa, Fleiss' kappa, Gwet's AC1/AC2 and Krippendorff's alpha over all raters, and with "
    "--gold each rater's agreement with gold and the best and median rater (the ceiling).",
    options=(
        Option(
            "--raters",
            "rater files, each named by its file name's stem (model-run-1.jsonl: model-run-1)",
            "FILE",
            reads_input=True,
            many=True,
        ),
        Option(
            "--rater",
            "a rater named by hand, NAME=FILE (instead of --raters)",
            "NAME=FILE",
            many=True,
        ),
        Option(
            "--schema",
            "field schema (JSON, or TOML if *.toml): every field the raters answer",
            "FILE",
            required=True,
            reads_input=True,
        ),
        Option(
            "--gold",
            "adjudicated gold: each rater is also scored against it",
            "FILE",
            reads_input=True,
        ),
        OUT,
        QUIET,
        EXTRA_PREDICTIONS,
        CONFIDENCE,
    ),
    run=run,
)
