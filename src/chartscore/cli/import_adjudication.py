"""``chartscore import adjudication``: a completed worklist's answers into a new gold version."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    Command,
    Option,
    UsageError,
    output_file,
)
from chartscore.cli._import_options import FIELD_SCHEMA
from chartscore.cli._ledger_options import LEDGER_KEY
from chartscore.cli._streams import Streams, say
from chartscore.io.ledger_file import check_ledger, load_ledger_key
from chartscore.workflows.adjudication import (
    Adjudication,
    adjudicate_files,
    check_adjudication_output,
    record_adjudication,
    write_adjudicated,
)

NAME: Final = "import adjudication"
_GOLD: Final = Option(
    "--gold", "the old gold (JSON Lines)", "FILE", required=True, reads_input=True
)
_WORKLIST: Final = Option(
    "--worklist",
    "the completed worklist (CSV, inside only)",
    "FILE",
    required=True,
    reads_input=True,
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Apply the adjudicated answers to the old gold; write the new gold; say only counts."""
    gold, worklist = _GOLD.input_path(args), _WORKLIST.input_path(args)
    schema = FIELD_SCHEMA.optional_path(args)
    gold_out = output_file(args.gold_out, "--gold-out", NAME)
    assert gold_out is not None  # a required option
    inputs = (gold, worklist, schema)
    check_adjudication_output(gold_out, inputs)
    key = None
    if args.ledger is None and args.ledger_key is not None:
        raise UsageError("--ledger-key needs --ledger", NAME)
    if args.ledger is not None:
        output_file(args.ledger, "--ledger", NAME)
        key = load_ledger_key(args.ledger_key)
        check_ledger(args.ledger, inputs=(*inputs, gold_out))
    adjudication = adjudicate_files(gold, worklist, schema=schema)
    write_adjudicated(adjudication, gold_out, inputs=inputs)
    for line in summary(adjudication):
        say(streams.err, f"{PROGRAM}: {line}\n")
    if key is not None:
        record_adjudication(args.ledger, adjudication, key, inputs=(*inputs, gold_out))
        say(
            streams.err,
            f"{PROGRAM}: ledger: adjudication recorded (the new gold's identity, linked to "
            "the old one's)\n",
        )
    return EXIT_OK


def summary(adjudication: Adjudication) -> list[str]:
    """Closed sentences of counts: what the worklist said and what changed. Never a value."""
    counts = adjudication.counts
    lines = [
        f"adjudication: {_many(counts['worklist_rows'], 'worklist row')}: "
        f"{counts['changed']:,} changed, {counts['confirmed']:,} confirmed (as gold was), "
        f"{counts['blank']:,} left blank (no change)"
    ]
    if counts["changed"]:
        how = ", ".join(
            f"{counts[name]:,} {name.replace('_', ' ')}"
            for name in ("value_changed", "now_unanswerable", "now_answerable")
            if counts[name]
        )
        by_type = ", ".join(f"{n:,} {name}" for name, n in adjudication.changed_by_type.items())
        by_outcome = ", ".join(
            f"{n:,} {name}" for name, n in adjudication.changed_by_outcome.items()
        )
        lines.append(
            f"adjudication: changed: {how}; by field type: {by_type}; "
            f"by outcome class: {by_outcome}"
        )
    lines.append(f"gold: {_many(counts['gold_rows'], 'row')} (the new version)")
    return lines


def _many(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


COMMAND: Final = Command(
    name=NAME,
    help="a completed worklist's adjudicated answers, applied to gold as a new gold file",
    description="Read a worklist written by chartscore worklist --adjudication-column, "
    "whose adjudicated column an abstractor filled (blank: no change; null: "
    "unanswerable), apply the answers to the old gold and write the new gold "
    "atomically (mode 0600, never over an input). stderr gets counts only. With "
    "--ledger, a line links the new gold's keyed identity to the old one's. See "
    "docs/worklist.md.",
    options=(
        _GOLD,
        _WORKLIST,
        FIELD_SCHEMA,
        Option(
            "--gold-out",
            "write the new gold JSON Lines file here (mode 0600)",
            "FILE",
            required=True,
        ),
        Option(
            "--ledger",
            "append a line linking the new gold to the old one (inside only: docs/ledger.md)",
            "FILE",
        ),
        LEDGER_KEY,
    ),
    run=run,
)
