"""``chartscore import redcap``: a REDCap data dictionary to a schema, a records export to gold
or predictions, or (``--dde``) a Double Data Entry export to two raters and the merged gold."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option, UsageError, input_argument
from chartscore.cli._import_options import (
    GOLD_OUT,
    PREDICTIONS_OUT,
    RATER_OUTS,
    SCHEMA_OUT,
    check_outputs,
    comma_list,
    tolerance_list,
    write_and_tell,
)
from chartscore.cli._streams import Streams
from chartscore.importers import import_redcap, import_redcap_dde
from chartscore.importers.redcap import Repeating

NAME: Final = "import redcap"


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the dictionary (and the records); write what was asked."""
    _check_outputs_asked(args)
    dictionary = input_argument(args.dictionary)
    records = None if args.records is None else input_argument(args.records)
    inputs = (dictionary, records)
    check_outputs(args, NAME, inputs)
    missing_codes = comma_list(args.missing_codes, "--missing-codes", NAME)
    tolerances = tolerance_list(args.tolerance, NAME)
    ordinal = comma_list(args.ordinal, "--ordinal", NAME)
    repeating: Repeating = "rows" if args.repeating == "rows" else "refuse"
    exclude_fields = comma_list(args.exclude_fields, "--exclude-fields", NAME)
    if args.dde and records is not None:  # --dde without --records is refused above
        imported = import_redcap_dde(
            dictionary,
            records,
            merged_gold=args.gold_out is not None,
            missing_codes=missing_codes,
            tolerances=tolerances,
            ordinal=ordinal,
            repeating=repeating,
            exclude_fields=exclude_fields,
        )
    else:
        imported = import_redcap(
            dictionary,
            records,
            role="gold" if args.gold_out is not None else "predictions",
            missing_codes=missing_codes,
            tolerances=tolerances,
            ordinal=ordinal,
            repeating=repeating,
            exclude_fields=exclude_fields,
        )
    write_and_tell(imported, args, streams, inputs=inputs, command=NAME)
    return EXIT_OK


def _check_outputs_asked(args: argparse.Namespace) -> None:
    raters_out = [flag for flag in ("rater_1_out", "rater_2_out") if getattr(args, flag)]
    if args.dde:
        if args.records is None:
            raise UsageError("--dde needs --records", NAME)
        if args.predictions_out is not None:
            raise UsageError(
                "--dde writes --rater-1-out and --rater-2-out, not --predictions-out", NAME
            )
        if len(raters_out) != 2:
            raise UsageError("--dde needs --rater-1-out and --rater-2-out", NAME)
        return
    if raters_out:
        raise UsageError(f"--{raters_out[0].replace('_', '-')} needs --dde", NAME)
    records_out = [flag for flag in ("gold_out", "predictions_out") if getattr(args, flag)]
    if args.records is not None and len(records_out) != 1:
        raise UsageError("--records needs one of --gold-out and --predictions-out", NAME)
    if args.records is None and records_out:
        raise UsageError(f"--{records_out[0].replace('_', '-')} needs --records", NAME)
    if args.schema_out is None and not records_out:
        raise UsageError(
            "nothing to write: give --schema-out, --gold-out or --predictions-out", NAME
        )


COMMAND: Final = Command(
    name=NAME,
    help="REDCap: data dictionary to schema, raw records export to gold or predictions",
    description="Read a REDCap data dictionary (CSV; the UI's or the API's column names) "
    "and write its fields as a chartscore schema; with --records, read a raw records "
    "export (CSV, not labels) and write it as gold or as predictions. UTF-8 with or "
    "without a byte order mark; the delimiter is found from the header. With --dde, the "
    "export of a Double Data Entry project (records ID--1, ID--2 and the merged ID) is "
    "split into two raters and, with --gold-out, the merged records as gold. "
    "See docs/import.md.",
    options=(
        Option(
            "--dictionary", "the data dictionary (CSV)", "FILE", required=True, reads_input=True
        ),
        Option("--records", "a raw records export (CSV)", "FILE", reads_input=True),
        SCHEMA_OUT,
        GOLD_OUT,
        PREDICTIONS_OUT,
        Option(
            "--dde",
            "a Double Data Entry export: entries ID--1 and ID--2 to --rater-1-out and "
            "--rater-2-out, the merged ID to --gold-out (optional)",
        ),
        *RATER_OUTS,
        Option(
            "--missing-codes",
            "the project's missing-data codes, such as UNK,NA (cells holding one are null)",
            "CODES",
        ),
        Option(
            "--tolerance",
            "declared tolerances: FIELD=AMOUNT,... (a number, or whole days for a date field)",
            "LIST",
        ),
        Option("--ordinal", "radio or dropdown fields to score as ordinal: FIELD,...", "FIELDS"),
        Option(
            "--repeating",
            "repeating instruments and events: refuse (default) or rows (a case per row)",
            "{refuse,rows}",
            choices=("refuse", "rows"),
        ),
        Option(
            "--exclude-fields",
            "fields to leave out of every output (free-text notes, say): FIELD,...",
            "FIELDS",
        ),
    ),
    run=run,
)
