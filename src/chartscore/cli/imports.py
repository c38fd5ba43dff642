"""``chartscore import``: the group of importers (``redcap``, ``labelstudio``, ``csv``)."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli import import_csv, import_labelstudio, import_redcap
from chartscore.cli._command import Command, UsageError
from chartscore.cli._streams import Streams


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Never called: the parser requires a kind of import."""
    raise UsageError("a kind of import is required (redcap, labelstudio, csv)", "import")


COMMAND: Final = Command(
    name="import",
    help="write gold, predictions and a schema from REDCap, Label Studio or CSV exports",
    description="Import an export into chartscore's formats, inside the protected "
    "environment: chartscore import redcap, chartscore import labelstudio or chartscore "
    "import csv (each with --help). Outputs are written atomically, never over an input; "
    "gold and predictions files with mode 0600.",
    options=(),
    run=run,
    subcommands=(import_redcap.COMMAND, import_labelstudio.COMMAND, import_csv.COMMAND),
)
