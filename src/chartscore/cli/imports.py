"""``chartscore import``: the group of importers (``redcap``, ``labelstudio``, ``csv``,
``fhir``, ``adjudication``)."""

from __future__ import annotations

from typing import Final

from chartscore.cli import (
    import_adjudication,
    import_csv,
    import_fhir,
    import_labelstudio,
    import_redcap,
)
from chartscore.cli._command import command_group

COMMAND: Final = command_group(
    "import",
    help="write gold, predictions and a schema from REDCap, Label Studio, CSV or FHIR exports, "
    "or a new gold version from an adjudicated worklist",
    description="Import an export into chartscore's formats, inside the protected "
    "environment: chartscore import redcap, chartscore import labelstudio, chartscore "
    "import csv, chartscore import fhir or chartscore import adjudication (each with --help). "
    "Outputs are written atomically, never over an input; gold and predictions files with "
    "mode 0600.",
    subcommands=(
        import_redcap.COMMAND,
        import_labelstudio.COMMAND,
        import_csv.COMMAND,
        import_fhir.COMMAND,
        import_adjudication.COMMAND,
    ),
)
