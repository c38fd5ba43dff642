"""``chartscore demo``: score the bundled synthetic data; print a summary or the report."""

from __future__ import annotations

import argparse
from typing import Final

from chartscore.cli._command import EXIT_OK, Command, Option
from chartscore.cli._streams import Streams
from chartscore.io.output import write_output
from chartscore.workflows.demo import demo_schema, demo_summary, run_demo


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Score the demo data; print the summary, or the JSON report with ``--json``."""
    report = run_demo()
    _, without = demo_schema()
    text = report.to_json() if args.json else demo_summary(report, without)
    write_output((text + "\n").encode("utf-8"), None, inputs=(), stdout=streams.out)
    return EXIT_OK


COMMAND: Final = Command(
    name="demo",
    help="score the bundled synthetic data and print a summary",
    description="Score the synthetic data bundled with chartscore (no patient data).",
    options=(Option("--json", "print the canonical JSON report instead"),),
    run=run,
)
