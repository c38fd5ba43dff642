"""The one reader of a document's shell (``chartscore.documents._shell``).

Every document chartscore reads back opens with the same members, read by one set of rules:
``format`` and ``format_version`` (the version read is the version written back),
``scorer`` (one ``scorer.version`` rule: tests/test_legacy_documents.py), ``confidence``,
``plugins`` and the stratum slices, whose sums are checked the same way in a report and in a
shared report. A format 3 shared report round-trips as format 3: tests/test_share_labels.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, score
from chartscore.documents import load_document
from chartscore.documents._shell import SCORER_VERSION, read_scorer
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport, shared_from_report
from chartscore.records.schema import to_schema
from chartscore.records.strata import CaseStrata

SCHEMA: dict[str, Any] = {
    "fields": {"t.note": {"type": "text"}, "d.flag": {"type": "boolean"}},
    "strata": {"site": ["A", "B"]},
}


def _cohort() -> tuple[list[GoldField], list[Prediction], CaseStrata]:
    # Eight cases, four a site; the text field is right at site A and wrong at site B, so
    # the two sites' text slices differ while every count is 0, 4 or 8 (nothing suppressed).
    cases = [f"c{i}" for i in range(8)]
    gold = [GoldField(case, "t.note", "text", "a") for case in cases]
    gold += [GoldField(case, "d.flag", "boolean", True) for case in cases]
    predictions = [Prediction(case, "t.note", "ab"[i // 4]) for i, case in enumerate(cases)]
    predictions += [Prediction(case, "d.flag", True) for case in cases]
    labels = {case: {"site": "A" if i < 4 else "B"} for i, case in enumerate(cases)}
    return gold, predictions, CaseStrata.from_mapping(to_schema(SCHEMA), labels)


def _report_text() -> str:
    gold, predictions, strata = _cohort()
    return score(gold, predictions, schema=SCHEMA, strata=strata).to_json()


def _shared_text() -> str:
    # The report shared with nothing hidden (every count is 0, 4 or 8).
    gold, predictions, strata = _cohort()
    report = score(gold, predictions, schema=SCHEMA, strata=strata).core()
    types = {"d.flag": "boolean", "t.note": "text"}
    return shared_from_report(report.to_dict(), types, 2, set(), set()).to_json()


def _swapped(text: str) -> str:
    # Site A's text slice given to site B and B's to A: each key's stratum-and-type slices
    # still add up to the type slices, but neither site's type slices add up to its slice.
    document = json.loads(text)
    site_a, site_b = (
        document["by_stratum_field_type"]["site=A"],
        document["by_stratum_field_type"]["site=B"],
    )
    site_a["text"], site_b["text"] = site_b["text"], site_a["text"]
    return json.dumps(document)


READERS: dict[str, tuple[Callable[[], str], type]] = {
    "report": (_report_text, Report),
    "shared_report": (_shared_text, SharedReport),
}


@pytest.mark.parametrize("kind", sorted(READERS))
def test_a_stratum_s_type_slices_add_up_to_it_in_every_document(kind: str) -> None:
    make, reader = READERS[kind]
    text = make()
    document = load_document(text)
    assert type(document) is reader and document.to_json() == text
    swapped = json.loads(_swapped(text))["by_stratum_field_type"]
    assert swapped["site=A"]["text"] != swapped["site=B"]["text"]  # the edit changes something
    with pytest.raises(ChartscoreError) as caught:
        load_document(_swapped(text))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    assert caught.value.__cause__ is None and caught.value.__context__ is None


@pytest.mark.parametrize("kind", sorted(READERS))
@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.pop("by_stratum_field_type"),  # both stratum members or neither
        lambda d: d.update(by_stratum={}, by_stratum_field_type={}),  # at least one stratum
        lambda d: d["by_stratum"].update({"Site=A": d["by_stratum"]["site=A"]}),  # key=label
        lambda d: d["by_stratum_field_type"]["site=A"].pop("text"),  # every field type
        lambda d: d.update(confidence=0.8),
        lambda d: d["scorer"].update(name="other"),
        lambda d: d.update(format_version=99),
    ],
)
def test_every_document_reads_its_shell_by_the_same_rules(
    kind: str, edit: Callable[[dict[str, Any]], object]
) -> None:
    make, _ = READERS[kind]
    document = json.loads(make())
    edit(document)
    with pytest.raises(ChartscoreError) as caught:
        load_document(json.dumps(document))
    expected = ErrorCode.UNKNOWN_REPORT_FORMAT if document["format_version"] == 99 else None
    assert caught.value.code is (expected or ErrorCode.INVALID_REPORT)


@pytest.mark.parametrize(
    ("version", "accepted"),
    [("0.1.0", True), ("2.0.0rc1+abc.1", True), ("abc", False), ("!!!", False), ("", False)],
)
def test_one_scorer_version_rule(version: str, accepted: bool) -> None:
    assert (SCORER_VERSION.fullmatch(version) is not None) is accepted
    if accepted:
        assert read_scorer({"name": "chartscore", "version": version}) == version
        return
    with pytest.raises(ChartscoreError) as caught:
        read_scorer({"name": "chartscore", "version": version})
    assert caught.value.code is ErrorCode.INVALID_REPORT
