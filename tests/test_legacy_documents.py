"""Documents written before t quantiles, case counts and DeLong still read, render and gate.

``tests/data/legacy`` holds what chartscore wrote before this change on the invented 200-case
study (``shared/study/make_study.py``, sites A, B and C with declared sampling fractions): a
format 2 report (clustered intervals on ``z``, Hanley-McNeil AUROC intervals, ``z`` bias
intervals), a format 2 comparison, a format 4 shared report and a format 1 shared comparison.
Each is read by the rules it was written under, written back byte for byte in its own format,
and an edited figure is still refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chartscore.documents import load_document
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.report import Report
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.render import render
from chartscore.stats.binomial import Z95
from chartscore.stats.clustered import clustered_wilson

LEGACY = Path(__file__).resolve().parent / "data" / "legacy"
DOCUMENTS = {
    "report_format2.json": (Report, 2),
    "comparison_format2.json": (Comparison, 2),
    "shared_report_format4.json": (SharedReport, 4),
    "shared_comparison_format1.json": (SharedComparison, 1),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_an_older_document_round_trips_in_its_own_format(name: str) -> None:
    text = (LEGACY / name).read_text(encoding="utf-8")
    kind, version = DOCUMENTS[name]
    document = load_document(text)
    assert type(document) is kind
    assert document.to_json() + "\n" == text
    assert json.loads(document.to_json())["format_version"] == version
    for fmt in ("table", "markdown", "csv", "html"):
        assert render(document, fmt)  # type: ignore[arg-type]


def test_an_older_reports_clustered_intervals_are_read_on_z() -> None:
    report = Report.from_json((LEGACY / "report_format2.json").read_bytes())
    metric = report.overall.metric("normalized_agreement")
    assert metric.clustered_cases is None and metric.design_effect is not None
    expected = clustered_wilson(
        metric.success_count, metric.total_count, metric.design_effect, Z95, cases=None
    )
    assert metric.clustered_interval == expected
    # A gate reads the document's own rule, at its level or another.
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.5\n'
    )
    assert evaluate(report, gates).results[0].observed == expected[0]  # type: ignore[index]
    # A field's AUROC interval is Hanley and McNeil's, with no standard error.
    uncertainty = report.by_field["echo.lvef"].uncertainty
    assert uncertainty is not None and not uncertainty.delong
    assert (
        "auroc_standard_error"
        not in json.loads(report.to_json())["by_field"]["echo.lvef"]["declared_uncertainty"]
    )


def test_a_format_2_report_cannot_carry_format_3_keys() -> None:
    document = json.loads((LEGACY / "report_format2.json").read_text(encoding="utf-8"))
    document["overall"]["exact_agreement"]["case_count"] = 200
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    # ... and a current report must carry them.
    current = json.loads((LEGACY / "report_format2.json").read_text(encoding="utf-8"))
    current["format_version"] = 3
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(json.dumps(current))
    assert caught.value.code is ErrorCode.INVALID_REPORT


def first_clustered(node: object) -> dict | None:  # type: ignore[type-arg]
    """The first object (depth first, keys sorted) with a shown clustered interval."""
    if isinstance(node, dict):
        if isinstance(node.get("clustered_interval"), list):
            return node
        for key in sorted(node):
            found = first_clustered(node[key])
            if found is not None:
                return found
    return None


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_an_edited_older_document_is_refused(name: str) -> None:
    document = json.loads((LEGACY / name).read_text(encoding="utf-8"))
    target = first_clustered(document["overall"])
    assert target is not None
    low, high = target["clustered_interval"]
    target["clustered_interval"] = [low / 2, high]
    with pytest.raises(ChartscoreError) as caught:
        load_document(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@pytest.mark.parametrize(
    ("version", "accepted"),
    [
        ("0.1.0", True),
        ("1.2.3rc4.post5.dev6+local.7", True),
        ("1." + "0." * 24 + "1", True),  # 51 characters: a report accepted it, a share did not
        ("abc", False),  # a shared report accepted these two, a report did not
        ("!!!", False),
        ("1.0.0+LOCAL", False),
        ("1" + ".0" * 32, False),  # 65 characters
    ],
)
def test_every_document_reads_its_scorer_version_by_one_rule(
    name: str, version: str, accepted: bool
) -> None:
    document = json.loads((LEGACY / name).read_text(encoding="utf-8"))
    document["scorer"]["version"] = version
    text = json.dumps(document)
    if accepted:
        assert json.loads(load_document(text).to_json())["scorer"]["version"] == version
        return
    with pytest.raises(ChartscoreError) as caught:
        load_document(text)
    assert caught.value.code is ErrorCode.INVALID_REPORT
