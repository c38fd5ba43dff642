"""``chartscore ledger``: the group of ledger commands (``show``)."""

from __future__ import annotations

from typing import Final

from chartscore.cli import ledger_show
from chartscore.cli._command import command_group

COMMAND: Final = command_group(
    "ledger",
    help="read the ledger of scored runs (inside only)",
    description="Read a ledger written by score, share, compare and batch with --ledger: "
    "chartscore ledger show (with --help). The ledger is inside-only: it holds full "
    "reports and keyed gold identities. See docs/ledger.md.",
    subcommands=(ledger_show.COMMAND,),
)
