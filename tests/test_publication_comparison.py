"""A shared comparison in one publication with its systems' shared reports.

docs/disclosure.md, "One publication". The comparison's paired classes are split by stratum
cell and majority bit and tied to each system's report by the system's state of a row
(chartscore.disclosure.paired_block). Every joint range must hold the true value (the model
admits the true cohort), and the joint attack must find what the comparison gives back that
a report hides.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore import compare, score
from chartscore.disclosure.attack import published_values
from chartscore.disclosure.comparison_model import ComparisonModel, comparison_values
from chartscore.disclosure.paired_block import state_of
from chartscore.disclosure.publication import audit_publication
from chartscore.disclosure.suppress import _with_figures
from chartscore.documents.shared_comparison import SharedComparison, build_shared_comparison
from chartscore.documents.shared_report import Key, SharedReport, shared_from_report
from chartscore.records.schema import to_schema
from chartscore.records.strata import CaseStrata
from test_publication import _THOROUGH_ONLY, SCHEMA, _cohort

from helpers import examples, write_jsonl

MIN_CELL = 2  # the constructed products below publish any count: the rule must hold for them
TYPES = {field_id: spec["type"] for field_id, spec in SCHEMA["fields"].items()}


def _products(
    cases: int, seed: int, hide: float, stratified: tuple[bool, bool] = (False, False)
) -> tuple[list[SharedReport | SharedComparison], list[dict[Key, int | None]]]:
    # A's and B's shared reports (each with site strata or not) and the comparison A vs B
    # with a random share of their numbers hidden, and each product's true values.
    gold, first, second = _cohort(cases, seed)
    rng = random.Random(seed)
    products: list[SharedReport | SharedComparison] = []
    truths: list[dict[Key, int | None]] = []
    schema = {**SCHEMA, "strata": {"site": ["A", "B", "C"]}}
    sites = {g.case_id: {"site": rng.choice("ABC")} for g in gold}
    strata = CaseStrata.from_mapping(to_schema(schema), sites)
    for predictions, split in zip((first, second), stratified, strict=True):
        if split:
            report = score(gold, predictions, schema=schema, strata=strata)
        else:
            report = score(gold, predictions, schema=SCHEMA)
        document = _with_figures(report.core().to_dict(), report)
        full = shared_from_report(document, TYPES, MIN_CELL, set(), set(), figures={})
        hidden = {key for key, _ in full.numbers() if rng.random() < hide}
        products.append(shared_from_report(document, TYPES, MIN_CELL, hidden, set(), figures={}))
        truths.append(published_values(full))
    comparison = compare(gold, first, second, schema=SCHEMA)
    full_comparison = build_shared_comparison(comparison, TYPES, MIN_CELL, set())
    hidden = {key for key, _ in full_comparison.numbers() if rng.random() < hide}
    products.append(build_shared_comparison(comparison, TYPES, MIN_CELL, hidden))
    truths.append(comparison_values(full_comparison, ComparisonModel(TYPES)))
    return products, truths


SYSTEMS: list[Any] = ["A", "B", ("A", "B")]


@settings(max_examples=examples(12, least=2), deadline=None)
@given(
    st.integers(min_value=12, max_value=30),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([0.3, 0.6, 0.9]),
    st.sampled_from([(False, False), (True, False), (True, True)]),
)
def test_every_joint_range_holds_the_true_value(
    cases: int, seed: int, hide: float, stratified: tuple[bool, bool]
) -> None:
    products, truths = _products(cases, seed, hide, stratified)
    result = audit_publication(products, SYSTEMS)
    assert result.rows, "something is hidden"
    for row in result.rows:
        assert row.status not in ("inconsistent", "unresolved")
        true = truths[row.product][row.key]
        assert true is not None and row.low is not None
        assert row.low <= true and (row.high is None or true <= row.high)


def _pinned(result: Any, product: int, key: Key) -> tuple[int | None, int | None]:
    row = next(r for r in result.rows if r.product == product and r.key == key)
    return row.low, row.high


def test_the_comparison_gives_back_what_a_report_hides() -> None:
    # A hides every number of a field (and where it pools),
    # B its gold counts; the comparison shows both systems' missing counts and the gold
    # counts: held together, both are exact.
    products, truths = _products(30, 7, 0.0)
    a, b, paired = products
    assert isinstance(a, SharedReport) and isinstance(b, SharedReport)
    assert isinstance(paired, SharedComparison)
    gold, first, second = _cohort(30, 7)
    missing = ("field", "hx.smoking", "missing_count")
    unanswerable = ("field", "hx.smoking", "unanswerable_count")
    slices = [("field", "hx.smoking"), ("field_type", "categorical"), ("overall", "")]
    a = _hidden_report(first, gold, {key for key, _ in a.numbers() if key[:2] in slices})
    gold_counts = ("unanswerable_count", "answerable_count")
    b = _hidden_report(second, gold, {(*where, c) for where in slices for c in gold_counts})
    alone = audit_publication([a, b], ["A", "B"])
    assert _pinned(alone, 0, missing)[0] != _pinned(alone, 0, missing)[1]
    together = audit_publication([a, b, paired], SYSTEMS)
    assert _pinned(together, 0, missing) == (truths[0][missing],) * 2
    assert _pinned(together, 1, unanswerable) == (truths[1][unanswerable],) * 2
    # Read the other way round (B as the baseline), the same numbers contradict the reports
    # whenever the systems' missing counts differ.
    if truths[0][missing] != truths[1][missing]:
        swapped = audit_publication([a, b, paired], ["A", "B", ("B", "A")])
        assert any(row.status == "inconsistent" for row in swapped.rows)


def _hidden_report(predictions: Any, gold: Any, hidden: set[Key]) -> SharedReport:
    report = score(gold, predictions, schema=SCHEMA)
    document = _with_figures(report.core().to_dict(), report)
    return shared_from_report(document, TYPES, MIN_CELL, hidden, set(), figures={})


def test_a_report_class_has_one_system_state() -> None:
    # The map the ties read: every answerable class of the right type by its agreement,
    # a wrong type or a disagreement as "other", unanswered rows by their status.
    from chartscore.disclosure.model import OutcomeClass

    assert state_of(OutcomeClass(True, "missing")) == "missing"
    assert state_of(OutcomeClass(True, "abstained")) == "abstained"
    assert state_of(OutcomeClass(True, "answered", agreement="exact")) == "exact"
    assert state_of(OutcomeClass(True, "answered", agreement="normalized")) == "normalized"
    assert state_of(OutcomeClass(True, "answered", agreement="disagree")) == "other"
    assert state_of(OutcomeClass(True, "answered", wrong_type=True)) == "other"
    assert state_of(OutcomeClass(False, "answered", wrong_type=True)) == "answered"
    assert state_of(OutcomeClass(False, "abstained")) == "abstained"


# --- sharing a publication with variants and comparisons ----------------------------------


def _write_publication_inputs(tmp_path: Path, cases: int, seed: int) -> tuple[Path, ...]:
    # Gold, two systems, a schema declaring three sites, and each case's site.
    from test_shared_comparison import _FIELDS, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, cases, seed)
    schema = {
        "fields": {field_id: {"type": field_type} for field_id, field_type, _ in _FIELDS},
        "strata": {"site": ["A", "B", "C"]},
    }
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    rng = random.Random(seed)
    case_ids = sorted({json.loads(line)["case_id"] for line in gold.read_text().splitlines()})
    rows = [{"case_id": case, "strata": {"site": rng.choice("ABC")}} for case in case_ids]
    strata = write_jsonl(tmp_path / "strata.jsonl", rows)
    return gold, baseline, candidate, schema_path, strata


@_THOROUGH_ONLY
def test_a_publication_with_strata_and_another_min_cell_is_safe_together(tmp_path: Path) -> None:
    # One system shared four ways: without and with strata, at 11 and at 13. Held together
    # they pass the joint audit; a variant at the smaller min cell hides all the stricter one
    # hides, and the plain report all its stratified one hides (the rules that make the
    # variants consistent: the stricter, and the one with more numbers, choose first).
    from chartscore.workflows.publication import share_publication_files

    gold, baseline, _, schema, strata = _write_publication_inputs(tmp_path, 40, 3)
    products = share_publication_files(
        gold, [baseline], schema=schema, strata=strata, also_min_cell=13
    )
    assert [p.disclosure.min_cell for p in products] == [11, 13, 11, 13]
    reports = [p for p in products if isinstance(p, SharedReport)]
    assert len(reports) == 4 and bool(reports[2].by_stratum) and not reports[0].by_stratum
    assert audit_publication(reports, ["A"] * 4).passed
    for loose, strict in ((reports[0], reports[1]), (reports[2], reports[3])):
        shown = dict(loose.numbers())
        hidden_strict = {key for key, value in strict.numbers() if value is None}
        assert all(shown[key] is None for key in hidden_strict)
    for plain, split in ((reports[0], reports[2]), (reports[1], reports[3])):
        shown = dict(plain.numbers())
        hidden_split = {key for key, value in split.numbers() if value is None and key in shown}
        assert hidden_split and all(shown[key] is None for key in hidden_split)


def test_audit_comparisons_reads_which_systems_and_finds_the_joint_leak(tmp_path: Path) -> None:
    # The command line: SHARED, --others and --comparisons; the comparison's systems are read
    # from its numbers (either file order), and the pinned missing count is a failing row.
    from test_shared_comparison import run

    gold, first, second = _cohort(30, 7)
    _, truths = _products(30, 7, 0.0)
    slices = [("field", "hx.smoking"), ("field_type", "categorical"), ("overall", "")]
    full = _hidden_report(first, gold, set())
    a = _hidden_report(first, gold, {key for key, _ in full.numbers() if key[:2] in slices})
    b = _hidden_report(second, gold, set())
    comparison = compare(gold, first, second, schema=SCHEMA)
    paired = build_shared_comparison(comparison, TYPES, MIN_CELL, set())
    paths = {}
    for name, product in (("a", a), ("b", b), ("a_vs_b", paired)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(product.to_json(), encoding="utf-8")
    missing = truths[0][("field", "hx.smoking", "missing_count")]
    assert missing == 1  # the cohort's: a count the rule (min cell 2) forbids pinning
    for shared, other in (("a", "b"), ("b", "a")):
        argv = ["audit", str(paths[shared]), "--others", str(paths[other])]
        product = 1 if shared == "a" else 2
        line = f"product {product}: field hx.smoking missing_count 1..1 disclosed\n"
        status, stdout, stderr = run(argv)
        assert (status, stderr) == (4, "") and line not in stdout  # own audits fail: no ranges
        status, stdout, stderr = run([*argv, "--comparisons", str(paths["a_vs_b"])])
        assert (status, stderr) == (4, "") and line in stdout
        assert "audit FAIL: 3 products together" in stdout
    status, _, stderr = run(["audit", str(paths["a"]), "--comparisons", str(paths["a"])])
    assert status == 2 and "--comparisons names a shared report" in stderr
    # One report and the comparison, without the other system's report: the comparison's
    # other side is read as a system with no report here (it was "fits no two").
    for shared, product in (("a", "baseline"), ("b", "candidate")):
        argv = ["audit", str(paths[shared]), "--comparisons", str(paths["a_vs_b"])]
        status, stdout, stderr = run(argv)
        assert stderr == "" and status in (0, 4), product
        assert "2 products together" in stdout, product
    # A comparison of another cohort fits no reading of these reports' systems.
    other_gold, other_first, other_second = _cohort(30, 8)
    stranger = compare(other_gold, other_first, other_second, schema=SCHEMA)
    paths["x"] = tmp_path / "x.json"
    paths["x"].write_text(build_shared_comparison(stranger, TYPES, MIN_CELL, set()).to_json())
    argv = ["audit", str(paths["a"]), "--others", str(paths["b"]), "--comparisons", str(paths["x"])]
    status, _, stderr = run(argv)
    assert status == 2 and "fits no two of the reports' systems" in stderr


@_THOROUGH_ONLY
def test_share_publication_compare_writes_reports_and_comparison_safe_together(
    tmp_path: Path,
) -> None:
    # share --publication --compare: both reports and the comparison, chosen in one loop;
    # the outsider's audit of all three passes, and no name or value is said.
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    systems = tmp_path / "systems"
    systems.mkdir()
    for path in (baseline, candidate):
        path.rename(systems / f"{path.stem}.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    argv = ["share", "--gold", str(gold), "--publication", str(systems / "*.jsonl")]
    status, stdout, stderr = run([*argv, "--out-dir", str(out), "--compare"])
    assert (status, stdout) == (0, ""), stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "baseline.shared.json",
        "baseline_vs_candidate.shared-comparison.json",
        "candidate.shared.json",
    ]
    assert "2 shared reports and 1 shared comparison written" in stderr
    texts = [(out / name).read_text(encoding="utf-8") for name in names]
    assert all(CANARY_CASE not in text for text in (stderr, *texts))
    reports = [SharedReport.from_json(texts[0]), SharedReport.from_json(texts[2])]
    paired = SharedComparison.from_json(texts[1])
    assert audit_publication([*reports, paired], ["A", "B", ("A", "B")]).passed
    # The gold counts get one decision: equal where both show them.
    report_numbers, paired_numbers = dict(reports[0].numbers()), dict(paired.numbers())
    gold_keys = [k for k in paired_numbers if k[2] in ("answerable_count", "unanswerable_count")]
    for key in gold_keys:
        if paired_numbers[key] is not None and report_numbers.get(key) is not None:
            assert paired_numbers[key] == report_numbers[key]
    status, _, stderr = run([*argv[:3], "--predictions", str(gold), "--compare"])
    assert status == 2 and "--compare needs --publication" in stderr
