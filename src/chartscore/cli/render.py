"""``chartscore render``: lay out a saved report, shared report or comparison for people."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option, input_argument
from chartscore.cli._options import DOCUMENT, OUT, output_target
from chartscore.cli._streams import Streams
from chartscore.io.document_files import load_document_file
from chartscore.io.output import write_output
from chartscore.render import FORMATS, SORTS, render


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Render the document in the asked format; print or write it."""
    document_path = input_argument(args.report)
    out = output_target(args.out, (document_path,))
    document = load_document_file(document_path)
    text = render(document, args.format, sort=args.sort or "name")
    write_output(text.encode("utf-8"), out, inputs=(document_path,), stdout=streams.out)
    return EXIT_OK


COMMAND: Final = Command(
    name="render",
    help="lay out a saved report or comparison for people",
    description="Render a report or comparison (JSON) as a terminal table, Markdown, CSV "
    "or one self-contained HTML page with a Wilson forest plot.",
    options=(
        DOCUMENT,
        Option(
            "--format",
            "table, markdown, csv or html",
            "FORMAT",
            required=True,
            choices=FORMATS,
        ),
        Option(
            "--sort",
            "row order: name (default) or rate (lowest normalized agreement first)",
            "{name,rate}",
            choices=SORTS,
        ),
        OUT,
    ),
    run=run,
)
