"""``chartscore demo``: score the synthetic data bundled with the package.

The bundled files are invented (case ids such as ``demo-case-001``) and show
every field type, abstentions, missing answers and evidence chains. They
establish how the scorer behaves, nothing about any real system.
"""

from __future__ import annotations

import json
from importlib import resources

from chartscore.documents.report import Report
from chartscore.errors import ChartscoreError
from chartscore.records.match_engines import match_engine
from chartscore.records.schema import Schema
from chartscore.render import render
from chartscore.workflows.score import score_files

_DATA = resources.files("chartscore") / "data"


def demo_schema() -> tuple[Schema, tuple[str, ...]]:
    """The demo's schema, and the match modes left out of it for want of their engines.

    The demo runs on the base install (``pip install .``): a ``fuzzy`` or ``regex``
    field whose engine (``chartscore[match]``) is not installed is scored as plain
    text, and the summary says so, rather than the demo failing.
    """
    document = json.loads((_DATA / "demo_schema.json").read_text(encoding="utf-8"))
    missing: set[str] = set()
    for field in document["fields"].values():
        match = field.get("match")
        if match is None:
            continue
        mode = "regex" if match == "regex" else "fuzzy"
        available = True
        try:
            match_engine(mode)
        except ChartscoreError:
            available = False
        if not available:
            del field["match"]
            missing.add(mode)
    return Schema.from_dict(document), tuple(sorted(missing))


def run_demo() -> Report:
    """Score the bundled synthetic gold, predictions and schema through the file path."""
    schema, _ = demo_schema()
    with (
        resources.as_file(_DATA / "demo_gold.jsonl") as gold,
        resources.as_file(_DATA / "demo_predictions.jsonl") as predictions,
    ):
        return score_files(gold, predictions, schema=schema)


def demo_summary(report: Report, without: tuple[str, ...] = ()) -> str:
    """The demo's summary (``chartscore render --format summary``) with a short guide.

    ``without``: the match modes :func:`demo_schema` left out, named in a last line.
    """
    lines = [
        "chartscore demo: synthetic data bundled with chartscore (no patient data)",
        "",
        render(report, "summary").rstrip("\n"),
        "",
        "In the demo, triage.acuity has levels 1 (most urgent) to 5: ordinal_later is",
        "under-triage. Every table: chartscore demo --json > report.json, then",
        "chartscore render report.json --format table (or --format html --out report.html).",
    ]
    if without:
        modes = " and ".join(without)
        lines.append(f"The demo's {modes} fields were scored as plain text: their engines")
        lines.append("are the optional extra (pip install 'chartscore[match]').")
    return "\n".join(lines)
