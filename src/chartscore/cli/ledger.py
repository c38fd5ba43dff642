"""``chartscore ledger``: the group of ledger commands (``show``)."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli import ledger_show
from chartscore.cli._command import Command, UsageError
from chartscore.cli._streams import Streams


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Never called: the parser requires a ledger command."""
    raise UsageError("a kind of ledger is required (show)", "ledger")


COMMAND: Final = Command(
    name="ledger",
    help="read the ledger of scored runs (inside only)",
    description="Read a ledger written by score, share, compare and batch with --ledger: "
    "chartscore ledger show (with --help). The ledger is inside-only: it holds full "
    "reports and keyed gold identities. See docs/ledger.md.",
    options=(),
    run=run,
    subcommands=(ledger_show.COMMAND,),
)
