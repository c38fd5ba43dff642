"""``chartscore demo``: score the synthetic data bundled with the package.

The bundled files are invented (case ids such as ``demo-case-001``) and show
every field type, abstentions, missing answers and evidence chains. They
establish how the scorer behaves, nothing about any real system.
"""

from __future__ import annotations

from importlib import resources

from chartscore.io.schema_file import load_schema
from chartscore.render import render
from chartscore.report import Report
from chartscore.workflows.score import score_files

_DATA = resources.files("chartscore") / "data"


def run_demo() -> Report:
    """Score the bundled synthetic gold, predictions and schema through the file path."""
    with (
        resources.as_file(_DATA / "demo_gold.jsonl") as gold,
        resources.as_file(_DATA / "demo_predictions.jsonl") as predictions,
        resources.as_file(_DATA / "demo_schema.json") as schema,
    ):
        return score_files(gold, predictions, schema=load_schema(schema))


def demo_summary(report: Report) -> str:
    """The demo's terminal table (``chartscore render --format table``) with a short guide."""
    lines = [
        "chartscore demo: synthetic data bundled with chartscore (no patient data)",
        "",
        render(report, "table").rstrip("\n"),
        "",
        "In the demo, triage.acuity has levels 1 (most urgent) to 5: ordinal later is",
        "under-triage. Full report: chartscore demo --json; save it and try",
        "chartscore render REPORT.json --format html --out report.html.",
    ]
    return "\n".join(lines)
