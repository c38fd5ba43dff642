"""``chartscore import fhir``: a FHIR Questionnaire to a schema, its QuestionnaireResponses to
gold or predictions."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._import_options import (
    GOLD_OUT,
    PREDICTIONS_OUT,
    SCHEMA_OUT,
    check_outputs,
    write_and_tell,
)
from chartscore.cli._streams import Streams
from chartscore.importers import import_fhir
from chartscore.importers.fhir import CASE_IDS

NAME: Final = "import fhir"
_QUESTIONNAIRE: Final = Option(
    "--questionnaire", "the FHIR Questionnaire (JSON)", "FILE", required=True, reads_input=True
)
_RESPONSES: Final = Option(
    "--responses", "the QuestionnaireResponses: a Bundle (JSON) or NDJSON", "FILE", reads_input=True
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the Questionnaire and the responses; write the schema, gold or predictions."""
    records = args.gold_out is not None or args.predictions_out is not None
    if args.gold_out is not None and args.predictions_out is not None:
        raise UsageError("give one of --gold-out and --predictions-out", NAME)
    if records and args.responses is None:
        raise UsageError("--gold-out and --predictions-out need --responses", NAME)
    if args.responses is not None and not records:
        raise UsageError("--responses needs --gold-out or --predictions-out", NAME)
    if not records and args.schema_out is None:
        raise UsageError(
            "nothing to write: give --schema-out, --gold-out or --predictions-out", NAME
        )
    case_id = args.case_id or "subject"
    questionnaire = _QUESTIONNAIRE.input_path(args)
    responses = _RESPONSES.optional_path(args)
    inputs = (questionnaire, responses)
    check_outputs(args, NAME, inputs)
    imported = import_fhir(
        questionnaire,
        responses,
        role="predictions" if args.predictions_out is not None else "gold",
        case_id="encounter" if case_id == "encounter" else "subject",
    )
    write_and_tell(imported, args, streams, inputs=inputs, command=NAME)
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="FHIR: a Questionnaire as a schema, its QuestionnaireResponses as gold or predictions",
    description="Read a FHIR R4 Questionnaire (JSON) as fields, and its QuestionnaireResponses "
    "(a Bundle, NDJSON as bulk export writes it, or one resource) as one case each, the case "
    "id the response's subject (or encounter) reference. Items disabled by enableWhen write "
    "no row; enabled items left unanswered are null. See docs/import.md.",
    options=(
        _QUESTIONNAIRE,
        _RESPONSES,
        Option(
            "--case-id",
            "the case id: the response's subject (default) or encounter reference",
            "REF",
            choices=CASE_IDS,
        ),
        SCHEMA_OUT,
        GOLD_OUT,
        PREDICTIONS_OUT,
    ),
    run=run,
)
