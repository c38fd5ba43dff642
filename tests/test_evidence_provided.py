"""``evidence_provided``: answered rows whose prediction carries evidence (docs/metrics.md).

It tells "no answer carried a chain" (imported answers: evidence support reads *not provided*)
from "no chain supported its answer" (0%, a real grounding failure). Documents and site
partials written before the metric (``tests/data/legacy/*_before_evidence_provided.json``,
``tests/data/partials/demo.v3.partial``: chartscore 0.1.0's demo, written by the code before
this change) read, render, gate, merge and share byte for byte as they did.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, score
from chartscore.cli import main
from chartscore.documents import load_document
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.metrics import EVIDENCED, SUPPORTED
from chartscore.render import render
from chartscore.scoring.partial_document import read_partial
from chartscore.workflows.partials import merge_partials, merged_partial_text, score_with_partial

from helpers import SCHEMA, chain, chain_dict, datasets, digest, examples, write_jsonl

DATA = Path(__file__).resolve().parent / "data"
LEGACY = DATA / "legacy"
OLD_PARTIAL = DATA / "partials" / "demo.v3.partial"

# What the code before this change printed for each old document (sha256, first 16 digits):
# `chartscore render DOC --format F`, and `merge` / `share --partials` of the old partial.
BEFORE = {
    ("report_before_evidence_provided.json", "table"): "5f83cb79e24cd52d",
    ("report_before_evidence_provided.json", "markdown"): "2ccd4e82e2acad1f",
    ("report_before_evidence_provided.json", "csv"): "001ccb8afccb6912",
    ("report_before_evidence_provided.json", "html"): "6bfee24b032e9028",
    ("shared_report_before_evidence_provided.json", "table"): "5f3760ed37f66202",
    ("shared_report_before_evidence_provided.json", "markdown"): "292bb0c18cd46274",
    ("shared_report_before_evidence_provided.json", "csv"): "929179181e1fd869",
    ("shared_report_before_evidence_provided.json", "html"): "d95d295e607b2549",
    ("comparison_before_evidence_provided.json", "table"): "9bd73f77d947781a",
    ("comparison_before_evidence_provided.json", "markdown"): "5e61e2d3c0e86ca6",
    ("comparison_before_evidence_provided.json", "csv"): "0c63a07ff64cbe7a",
    ("comparison_before_evidence_provided.json", "html"): "0a7a2e8944a8f0ad",
}
RENDERED_ON = 1796515200  # 2026-12-06T00:00:00Z
MERGED_BEFORE = "6b213135355c8a77"
SHARED_BEFORE = "945eb95ed6453bba"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def short_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def metric_names(document: Any) -> set[str]:
    """Every key of every slice of a decoded document (any depth)."""
    found: set[str] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            found.add(key)
            found |= metric_names(value)
    elif isinstance(document, list):
        for value in document:
            found |= metric_names(value)
    return found


# --------------------------------------------------------------------------- the definition


def evidence_cases() -> tuple[list[GoldField], list[Prediction]]:
    """One text field, six answered charts: a supported answer, four chains that support
    nothing (generated text only, another field, another fact, no prediction digest), an
    empty chain; and a seventh chart that abstains with a supporting chain."""
    gold = [GoldField(f"c{i}", "t.note", "text", "alpha") for i in range(7)]
    fact = digest("fact")
    predictions = [
        Prediction("c0", "t.note", "alpha", fact, chain("t.note", fact)),
        Prediction("c1", "t.note", "alpha", fact, chain("t.note", fact, ("generated_text",))),
        Prediction("c2", "t.note", "alpha", fact, chain("t.other", fact)),
        Prediction("c3", "t.note", "alpha", fact, chain("t.note", digest("other"))),
        Prediction("c4", "t.note", "alpha", None, chain("t.note", fact)),
        Prediction("c5", "t.note", "alpha", fact, chain("t.note", fact, ())),
        Prediction("c6", "t.note", None, fact, chain("t.note", fact)),
    ]
    return gold, predictions


def test_a_hand_counted_table() -> None:
    gold, predictions = evidence_cases()
    part = json.loads(score(gold, predictions).to_json())["by_field"]["t.note"]
    assert part["answered_count"] == 6  # the abstention is no trial
    assert (part["evidence_support"]["success_count"], part["evidence_support"]["total_count"]) == (
        1,
        6,
    )  # c0 only
    # c0 to c4 carry a span (of either kind); c5's chain is empty.
    assert (
        part["evidence_provided"]["success_count"],
        part["evidence_provided"]["total_count"],
    ) == (5, 6)
    from chartscore.metrics import CATALOG

    order = [metric.name for metric in CATALOG]  # report order (JSON keys are sorted)
    assert order.index("evidence_provided") == order.index("evidence_support") + 1


evidence_states = st.sampled_from(["none", "supported", "generated", "other_field", "empty"])


@st.composite
def evidenced_datasets(draw: st.DrawFn) -> tuple[list[GoldField], list[Prediction]]:
    """:func:`helpers.datasets` with each prediction's evidence drawn."""
    gold, bare = draw(datasets())
    predictions = []
    for p in bare:
        state = draw(evidence_states)
        fact = digest(f"{p.case_id}/{p.field_id}")
        kinds: tuple[str, ...] = {"generated": ("generated_text",), "empty": ()}.get(
            state, ("clinical_record",)
        )
        field_id = "x.other" if state == "other_field" else p.field_id
        evidence = None if state == "none" else chain(field_id, fact, kinds)
        predictions.append(Prediction(p.case_id, p.field_id, p.value, fact, evidence))
    return gold, predictions


def slices(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        document["overall"],
        *document["by_field"].values(),
        *document["by_field_type"].values(),
    ]


@settings(max_examples=examples(30), deadline=None)
@given(evidenced_datasets(), st.integers(1, 3), st.integers(0, 2**32))
def test_support_within_provided_within_answered_and_partials_add_it(
    tmp_path_factory: pytest.TempPathFactory,
    dataset: tuple[list[GoldField], list[Prediction]],
    sites: int,
    seed: int,
) -> None:
    gold, predictions = dataset
    pooled = score(gold, predictions, schema=SCHEMA)
    document = json.loads(pooled.to_json())
    for part in slices(document):
        support, provided = part["evidence_support"], part["evidence_provided"]
        assert support["total_count"] == provided["total_count"] == part["answered_count"]
        assert support["success_count"] <= provided["success_count"] <= part["answered_count"]
    # Sites' partials, merged, give the pooled numbers (evidence_provided too).
    rng = random.Random(seed)
    where = {case: rng.randrange(sites) for case in sorted({g.case_id for g in gold})}
    tmp = tmp_path_factory.mktemp("sites")
    texts = []
    for site in sorted(set(where.values())):
        g = write_jsonl(
            tmp / f"g{site}.jsonl", [_gold_row(x) for x in gold if where[x.case_id] == site]
        )
        p = write_jsonl(
            tmp / f"p{site}.jsonl",
            [_prediction_row(x) for x in predictions if where[x.case_id] == site],
        )
        texts.append(score_with_partial(g, p, schema=SCHEMA)[1])
    merged = json.loads(merge_partials(texts).to_json())
    for mine, theirs in zip(slices(merged), slices(document), strict=True):
        assert mine["evidence_provided"] == theirs["evidence_provided"]


def _gold_row(g: GoldField) -> dict[str, object]:
    return {
        "case_id": g.case_id,
        "field_id": g.field_id,
        "field_type": g.field_type.value,
        "value": g.value,
    }


def _prediction_row(p: Prediction) -> dict[str, object]:
    row: dict[str, object] = {"case_id": p.case_id, "field_id": p.field_id, "value": p.value}
    chain_ = p.evidence_chain
    if chain_ is not None:
        kinds = [source.kind.value for source in chain_.source_locations]
        row["normalized_fact_digest"] = p.normalized_fact_digest
        row["evidence_chain"] = chain_dict(chain_.field_id, chain_.normalized_fact_digest, kinds)
    return row


# --------------------------------------------------------------------------- renderings


def imported(tmp_path: Path) -> tuple[Path, Path]:
    """Gold and predictions of one chart table, both through ``chartscore import csv``."""
    (tmp_path / "columns.json").write_text(
        json.dumps({"case_id": "chart", "fields": {"hx.smoking": "smoking"}}), encoding="utf-8"
    )
    (tmp_path / "schema.json").write_text(
        json.dumps({"fields": {"hx.smoking": {"type": "categorical"}}}), encoding="utf-8"
    )
    (tmp_path / "gold.csv").write_text(
        "chart,smoking\nc-1,never\nc-2,former\nc-3,never\n", encoding="utf-8"
    )
    (tmp_path / "answers.csv").write_text(
        "chart,smoking\nc-1,never\nc-2,never\nc-3,never\n", encoding="utf-8"
    )
    common = [
        "--columns",
        str(tmp_path / "columns.json"),
        "--schema",
        str(tmp_path / "schema.json"),
    ]
    gold, predictions = tmp_path / "gold.jsonl", tmp_path / "predictions.jsonl"
    assert (
        run(
            "import", "csv", "--table", str(tmp_path / "gold.csv"), *common, "--gold-out", str(gold)
        )[0]
        == 0
    )
    status = run(
        "import", "csv", "--table", str(tmp_path / "answers.csv"), *common,
        "--predictions-out", str(predictions),
    )[0]  # fmt: skip
    assert status == 0
    return gold, predictions


def test_an_imported_field_shows_evidence_support_not_provided(tmp_path: Path) -> None:
    gold, predictions = imported(tmp_path)
    status, text, _ = run(
        "score", "--gold", str(gold), "--predictions", str(predictions), "--format", "json"
    )
    assert status == 0
    part = json.loads(text)["by_field"]["hx.smoking"]
    assert part["evidence_support"]["success_count"] == 0  # the JSON keeps the numbers
    assert part["evidence_provided"] == {
        **part["evidence_provided"],
        "success_count": 0,
        "total_count": 3,
    }
    report = load_document(text)
    table = render(report, "table")  # type: ignore[arg-type]
    assert re.search(r"^hx\.smoking .* not provided +0/3 0% \[0-56\]$", table, re.M), table
    assert "Evidence support reads not provided" in table
    markdown = render(report, "markdown")  # type: ignore[arg-type]
    assert re.search(
        r"^\| `hx\.smoking` \|.*\| not provided \| 0/3 0% \[0-56\] \|$", markdown, re.M
    )
    html = render(report, "html")  # type: ignore[arg-type]
    assert "not provided" in html
    # The forest plot draws no rate for it: its mark is empty.
    marks = re.findall(r'<g class="([^"]*)"[^>]*data-metric="evidence_support"[^>]*>', html)
    assert marks and all("empty" in classes.split() for classes in marks)
    # A mark that draws a rate carries data-value: none here.
    assert not re.search(r'data-metric="evidence_support"[^>]*data-value', html)
    csv = render(report, "csv")  # type: ignore[arg-type]
    assert "field,hx.smoking,evidence_support,,0,3,0," in csv


def test_chains_that_never_support_stay_zero_percent(tmp_path: Path) -> None:
    gold, predictions = imported(tmp_path)
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    for row in rows:  # a generated-text span only: evidence provided, never supported
        fact = digest(row["case_id"])
        row["normalized_fact_digest"] = fact
        row["evidence_chain"] = chain_dict("hx.smoking", fact, ("generated_text",))
    write_jsonl(predictions, rows)
    status, text, _ = run(
        "score", "--gold", str(gold), "--predictions", str(predictions), "--format", "table"
    )
    assert status == 0
    assert "not provided" not in text
    assert re.search(r"^hx\.smoking .* 0/3 0% \[0-56\]  3/3 100% \[44-100\]$", text, re.M), text


def test_a_shared_report_reads_not_provided_from_a_withheld_count_of_zero_range() -> None:
    from chartscore.render.evidence_view import none_provided

    class Withheld:
        success_count = None
        total_count = None
        success_range = (0, 0)

    class Slice:
        def __init__(self) -> None:
            self.metrics = {"evidence_provided": Withheld()}

    assert none_provided(Slice())  # type: ignore[arg-type]
    Withheld.success_range = (0, 5)  # type: ignore[assignment]
    assert not none_provided(Slice())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- gates


def test_a_gate_may_name_evidence_provided(tmp_path: Path) -> None:
    gold, predictions = evidence_cases()
    report = score(gold, predictions)
    gates = parse_gates(
        '[[gate]]\nslice = "field:t.note"\nmetric = "evidence_provided"\nmin_lower = 0.2\n'
    )
    assert evaluate(report, gates).results[0].passed


# --------------------------------------------------------------------------- older documents


@pytest.mark.parametrize(("name", "fmt"), sorted(BEFORE))
def test_an_older_document_renders_as_before(
    name: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A comparison's rendering names its day (today's unless SOURCE_DATE_EPOCH says
    # otherwise): the digests above were taken on 2026-12-06, so the test renders that day.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(RENDERED_ON))
    path = LEGACY / name
    text = path.read_text(encoding="utf-8")
    document = load_document(text)
    assert document.to_json() + "\n" == text
    assert "evidence_provided" not in metric_names(json.loads(text))
    status, out, _ = run("render", str(path), "--format", fmt)
    assert status == 0 and short_digest(out) == BEFORE[name, fmt]


def test_an_older_report_gates_as_before() -> None:
    report = load_document((LEGACY / "report_before_evidence_provided.json").read_text("utf-8"))
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "evidence_support"\nmin_lower = 0.2\n'
    )
    assert evaluate(report, gates).results[0].passed  # type: ignore[arg-type]
    missing = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "evidence_provided"\nmin_lower = 0\n'
    )
    with pytest.raises(ChartscoreError) as caught:
        evaluate(report, missing)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.GATE_METRIC_MISSING


def test_an_older_partial_merges_and_shares_as_before() -> None:
    status, merged, _ = run("merge", "--partials", str(OLD_PARTIAL))
    assert status == 0 and short_digest(merged) == MERGED_BEFORE
    pytest.importorskip("scipy")
    status, shared, _ = run("share", "--partials", str(OLD_PARTIAL), "--quiet")
    assert status == 0 and short_digest(shared) == SHARED_BEFORE


def test_a_merge_with_an_older_partial_leaves_evidence_provided_out(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[1] / "src" / "chartscore" / "data"
    _, new = score_with_partial(
        data / "demo_gold.jsonl", data / "demo_predictions.jsonl", schema=data / "demo_schema.json"
    )
    assert json.loads(new)["format_version"] == 4 and "evidence_unknown" not in json.loads(new)
    old = OLD_PARTIAL.read_text(encoding="utf-8")
    report = merge_partials([new, old])
    names = metric_names(json.loads(report.to_json()))
    assert "evidence_provided" not in names and "evidence_support" in names
    # The merged partial says so, and reads back the same.
    text = merged_partial_text([new, old])
    assert json.loads(text)["evidence_unknown"] is True
    assert merge_partials([text]).to_json() == report.to_json()
    # Each alone: the new one reports it.
    assert "evidence_provided" in metric_names(json.loads(merge_partials([new]).to_json()))


def test_a_partial_with_support_but_no_evidence_is_refused() -> None:
    data = Path(__file__).resolve().parents[1] / "src" / "chartscore" / "data"
    _, text = score_with_partial(
        data / "demo_gold.jsonl", data / "demo_predictions.jsonl", schema=data / "demo_schema.json"
    )
    document = json.loads(text)
    edited = False
    for field in document["cases"]["by_field"].values():
        for entry in field:
            bits = int(entry[0], 16)
            if bits & SUPPORTED and not edited:
                entry[0] = format(bits & ~EVIDENCED, "x")
                edited = True
    assert edited
    with pytest.raises(ChartscoreError) as caught:
        read_partial(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_PARTIAL


def test_a_report_with_evidence_provided_in_some_slices_only_is_refused() -> None:
    gold, predictions = evidence_cases()
    document = json.loads(score(gold, predictions).to_json())
    del document["by_field"]["t.note"]["evidence_provided"]
    with pytest.raises(ChartscoreError) as caught:
        load_document(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    # Without it anywhere, the report reads (as one written before the metric).
    for part in slices(document):
        part.pop("evidence_provided", None)
    assert "evidence_provided" not in load_document(json.dumps(document)).to_json()


# --------------------------------------------------------------------------- share's rule


def _scored_with_counts(gold: list[GoldField], predictions: list[Prediction]) -> Any:
    from chartscore.scoring.cases import CaseTrackingScorer
    from chartscore.scoring.scorer import feed_records
    from chartscore.workflows.share import sensitivity_of

    scorer = CaseTrackingScorer(None)
    feed_records(scorer, gold, predictions)
    return sensitivity_of(scorer.partial(), 0.95)


def _cohort(charts: int, evidence: set[int]) -> tuple[list[GoldField], list[Prediction]]:
    """Two fields per chart, every fifth answer wrong; charts in ``evidence`` carry a chain."""
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for i in range(charts):
        case = f"c{i:03d}"
        gold += [GoldField(case, "hx.smoking", "categorical", "never")]
        gold += [GoldField(case, "dx.flag", "boolean", i % 2 == 0)]
        fact = digest(case)
        support = chain("hx.smoking", fact) if i in evidence else None
        answer = "former" if i % 5 == 0 else "never"
        predictions += [Prediction(case, "hx.smoking", answer, fact, support)]
        predictions += [Prediction(case, "dx.flag", i % 2 == 0)]
    return gold, predictions


@pytest.mark.parametrize("evidence", [set(), {3}])
def test_share_publishes_evidence_provided_only_where_no_answer_carried_evidence(
    evidence: set[int],
) -> None:
    pytest.importorskip("scipy")
    from chartscore.disclosure import audit
    from chartscore.disclosure.evidence_rule import without_evidence
    from chartscore.disclosure.suppress import share

    report, sensitivity = _scored_with_counts(*_cohort(40, evidence))
    shared = share(report, sensitivity, 11)
    bare = share(*without_evidence(report, sensitivity), 11)  # the choice made without it
    assert audit(shared.to_json()).passed
    slices = [part for _, _, part in shared.slices()]
    if evidence:  # one chain among 80 answers: left out everywhere, the bytes are the choice's
        assert all("evidence_provided" not in part.metrics for part in slices)
        assert shared.to_json() == bare.to_json()
        return
    # No answer carried evidence: 0 in every slice, added around the same choice.
    assert all(part.metrics["evidence_provided"].success_count == 0 for part in slices)
    numbers = dict(shared.numbers())
    for key, value in bare.numbers():
        assert value is None or numbers[key] == value, key
    hidden_before = {key for key, value in bare.numbers() if value is None}
    assert {key for key, value in numbers.items() if value is None} >= hidden_before - {
        key for key in hidden_before if key[2].startswith("evidence_support.")
    }  # a hidden evidence_support success of 0 may now be proven, and shown as 0
    assert "not provided" in render(shared, "table")


def test_share_leaves_evidence_provided_out_below_min_cell_answers() -> None:
    pytest.importorskip("scipy")
    from chartscore.disclosure.suppress import share

    # Three charts, none with evidence: fewer than min_cell answered rows, so the metric's
    # presence would say "some answers, none with evidence" of a small cell: left out.
    report, sensitivity = _scored_with_counts(*_cohort(3, set()))
    assert report.overall.count("answered_count") == 6
    shared = share(report, sensitivity, 11)
    assert all("evidence_provided" not in part.metrics for _, _, part in shared.slices())
    assert "evidence_provided" in share(report, sensitivity, 5).overall.metrics  # 6 >= 5
