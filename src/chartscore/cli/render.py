"""``chartscore render``: lay out a saved report, shared report or comparison for people.

``--format`` is required, except when stdout is a terminal: a person reading there
gets the summary.
"""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._options import AXIS, DOCUMENT, OUT, output_target
from chartscore.cli._presentation import DATE, rendering_date
from chartscore.cli._streams import Streams
from chartscore.documents.agreement import Agreement
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.io.document_files import load_gates, load_rendered_file
from chartscore.io.output import write_output
from chartscore.io.schema_file import load_schema
from chartscore.render import FORMATS, SORTS, render

_GATES: Final = Option(
    "--gates",
    "a comparison: draw these gates' difference margins on its difference plots "
    "and give their verdict in its header (the exit status does not change)",
    "FILE",
    reads_input=True,
)
_SCHEMA: Final = Option(
    "--schema",
    "the field schema: its choice_labels name a report's choices (the codes stay in the CSV)",
    "FILE",
    reads_input=True,
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Render the document in the asked format; print or write it."""
    document_path, gates_path = DOCUMENT.input_path(args), _GATES.optional_path(args)
    schema_path = _SCHEMA.optional_path(args)
    inputs = (document_path, gates_path, schema_path)
    target = None if args.out in (None, STANDARD_STREAM) else args.out
    if args.format is None and (target is not None or not streams.terminal):
        raise UsageError("--format is required", "render")  # a summary is for a terminal
    fmt: str = args.format or "summary"
    out = output_target(args.out, inputs)
    gates = None if gates_path is None else load_gates(gates_path)
    schema = None if schema_path is None else load_schema(schema_path)
    document = load_rendered_file(document_path)
    if args.rater_labels and not isinstance(document, Agreement):
        raise UsageError("--rater-labels names an agreement's raters; this is not one", "render")
    comparison = isinstance(document, Comparison | SharedComparison)
    verdicts = None
    if gates is not None:
        if not isinstance(document, Comparison | SharedComparison):
            raise UsageError("--gates draws a comparison's margins; this is not one", "render")
        # A gate that does not fit the comparison is an error here too; the header (and
        # a summary) gives the verdicts.
        verdicts = evaluate(document, gates)
    if args.date is not None and not comparison:
        raise UsageError("--date dates a comparison; this is not one", "render")
    text = render(
        document,
        fmt,
        sort=args.sort or "name",
        gates=gates or (),
        verdicts=verdicts,
        rater_labels=args.rater_labels,
        date=rendering_date(args, "render") if comparison else None,
        axis=args.axis or "zoom",
        choice_labels=None if schema is None else schema.choice_labels(),
    )
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    return EXIT_OK


COMMAND: Final = Command(
    name="render",
    help="lay out a saved report or comparison for people",
    description="Render a report or comparison (JSON) as a terminal table, Markdown, CSV, "
    "one self-contained HTML page with a Wilson forest plot, or a summary of a line per field.",
    options=(
        DOCUMENT,
        Option(
            "--format",
            "table, markdown, csv, html or summary (required, except that a terminal's "
            "stdout gets the summary)",
            "FORMAT",
            choices=FORMATS,
        ),
        Option(
            "--sort",
            "row order: name (default) or rate (lowest normalized agreement first)",
            "{name,rate}",
            choices=SORTS,
        ),
        _GATES,
        Option(
            "--rater-labels",
            "an agreement: name the raters by their labels (default: by position, rater-1, ...)",
        ),
        _SCHEMA,
        DATE,
        AXIS,
        OUT,
    ),
    run=run,
)
