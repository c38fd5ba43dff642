"""``chartscore demo``: score the synthetic data bundled with the package.

The bundled files are invented (case ids such as ``demo-case-001``) and show
every field type, abstentions, missing answers and evidence chains. They
establish how the scorer behaves, nothing about any real system.
"""

from __future__ import annotations

from importlib import resources

from chartscore.io.files import load_schema, score_files
from chartscore.render import summary_text
from chartscore.report import Report

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
    """The demo's human-readable summary, with a short guide to reading it."""
    overall = report.overall
    answerable = overall.count("answerable_count")
    lines = [
        "chartscore demo: synthetic data bundled with chartscore (no patient data)",
        f"{overall.count('field_count')} gold fields ({answerable} answerable, "
        f"{overall.count('unanswerable_count')} unanswerable); "
        f"{overall.count('answered_count')} answered, "
        f"{overall.count('abstained_count')} abstained, {overall.count('missing_count')} missing",
        "",
        summary_text(report),
        "",
        "Each cell: successes/trials, rate, [95% Wilson interval].",
        "agreement = normalized agreement over answerable fields; abstention ok = answered when",
        "answerable, abstained when not (missing answers count as wrong); evidence = answers",
        "grounded in a clinical-record span. With acuity 1 = most urgent, ordinal later is",
        "under-triage. Definitions: docs/metrics.md. Full report: chartscore demo --json",
    ]
    return "\n".join(lines)
