"""``chartscore ledger show``: the ledger's runs side by side, per gold set and configuration."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, PROGRAM, Command, Option, input_argument
from chartscore.cli._streams import Streams, say
from chartscore.io.ledger_file import read_ledger
from chartscore.io.output import write_output
from chartscore.ledger.table import ledger_table, mixed_gold_sets

NAME: Final = "ledger show"


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the ledger; print its table; warn of damaged lines and of configurations apart."""
    ledger = read_ledger(input_argument(args.ledger))
    text = ledger_table(ledger, mixed=args.mixed, every_line=args.all)
    write_output(text.encode("utf-8"), None, inputs=(), stdout=streams.out)
    if ledger.damaged:
        count = len(ledger.damaged)
        say(
            streams.err,
            f"{PROGRAM}: warning: {count:,} damaged ledger line{'s' if count != 1 else ''} "
            "skipped (a write cut short, or an edit); the table names them\n",
        )
    apart = mixed_gold_sets(ledger, every_line=args.all)
    if apart and not args.mixed:
        say(
            streams.err,
            f"{PROGRAM}: warning: runs of different configurations on {apart:,} gold "
            f"set{'s' if apart != 1 else ''} are shown apart; --mixed puts them side by side, "
            "flagged\n",
        )
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="show the ledger's runs side by side, per gold set and configuration",
    description="Print the latest line of every run in a ledger: for each gold set (keyed "
    "gold identity), the scored runs, shared runs, comparisons and failed runs, with their "
    "overall figures. Runs of different configurations (version, code hash, schema, "
    "confidence) are shown apart unless --mixed. Inside only: see docs/ledger.md.",
    options=(
        Option("--ledger", "the ledger file (JSON Lines)", "FILE", required=True, reads_input=True),
        Option("--mixed", "put runs of different configurations side by side, flagged"),
        Option("--all", "show every line, not only the latest line of each run"),
    ),
    run=run,
)
