"""``chartscore merge``: add several sites' partials into one report."""

from __future__ import annotations

import argparse
import glob
from typing import Final

from chartscore.cli._command import (
    Command,
    Option,
)
from chartscore.cli._last_steps import check_gates, gated_exit, load_report_gates, write_partial
from chartscore.cli._options import (
    CONFIDENCE,
    GATE_OPTIONS,
    GATES,
    confidence,
    document_format,
    document_options,
    document_text,
    junit_target,
    output_targets,
)
from chartscore.cli._streams import Streams
from chartscore.io.output import write_output
from chartscore.workflows.partials import merge_partial_files_with_partial

PARTIALS: Final = Option(
    "--partials",
    "a glob pattern of the sites' partial files (chartscore score --partial-out)",
    "PATTERN",
    required=True,
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Merge the partials; print or write the report (and the merged partial); check gates."""
    gates_path = GATES.optional_path(args)
    inputs = (*sorted(glob.glob(args.partials)), gates_path)
    out, partial_out = output_targets(args, inputs, "merge")
    junit = junit_target(args, inputs, "merge", outputs=(out, partial_out))
    gates = load_report_gates(gates_path)
    report, partial = merge_partial_files_with_partial(
        args.partials, confidence=confidence(args), partial=partial_out is not None
    )
    check_gates(gates, document=report, interval=args.gate_interval)
    fmt = document_format(args, streams, out)
    text = document_text(report, fmt, gates=gates, interval=args.gate_interval, axis=args.axis)
    if partial_out is not None:  # inside the consortium only, as every partial
        assert partial is not None
        write_partial(partial, partial_out, inputs=(*inputs, out))
    write_output(text.encode("utf-8"), out, inputs=(*inputs, partial_out), stdout=streams.out)
    return gated_exit(report, gates, args, streams, junit=junit, command="merge", inputs=inputs)


COMMAND: Final = Command(
    name="merge",
    help="add several sites' partial tallies into one report",
    description="Add the partial tallies that each site wrote with chartscore score "
    "--partial-out: the report equals, byte for byte, one process scoring the pooled data "
    "(when case ids do not collide across sites). A partial is not suppressed: it travels "
    "only under the consortium's agreement. The same partial given twice, under any name, "
    "is refused (duplicate_partial).",
    options=(
        PARTIALS,
        *document_options("the report's form"),
        CONFIDENCE,
        *GATE_OPTIONS,
        Option(
            "--partial-out",
            "also write the merged partial here (mode 0600; it carries every merged partial's "
            "id, so merging it again with one of them is refused)",
            "FILE",
        ),
    ),
    run=run,
)
