"""share() and audit() with stratum slices (issue 24): the model's stratum cells, the case
counts behind stratum numbers, an attack only the stratum-aware model sees, and byte identity.

Cohorts are generated (hypothesis) with a random site (and abstractor) per case; their
distinct-case counts come from the independent reference in ``disclosure_reference.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, score
from chartscore.disclosure import SharedReport, audit, share
from chartscore.disclosure.attack import DERIVABLE, DISCLOSED
from chartscore.disclosure.model import model_of
from chartscore.documents.shared_report import shared_from_report
from chartscore.records.schema import to_schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer, case_counts
from chartscore.scoring.scorer import feed_records
from disclosure_reference import Cohort, build_cohort

from helpers import examples, thorough_only

pytest.importorskip("scipy")

Key = tuple[str, str, str]


@st.composite
def stratified(draw: st.DrawFn, max_cases: int = 8) -> Cohort:
    types = draw(st.lists(st.sampled_from(("boolean", "number", "multi", "text")), max_size=2))
    cases = draw(st.integers(1, max_cases))

    def choose(options: Any) -> Any:
        return draw(st.sampled_from(list(options)))

    cohort = build_cohort(choose, types or ["categorical"], cases)
    cohort.declared = {"site": ["A", "B"]}
    if draw(st.booleans()):
        cohort.declared["abstractor"] = ["r1", "r2"]
    case_ids = sorted({case for case, *_ in cohort.gold})
    cohort.strata = {
        case: {key: choose(labels) for key, labels in cohort.declared.items()} for case in case_ids
    }
    return cohort


def case_strata(cohort: Cohort) -> CaseStrata:
    return CaseStrata.from_mapping(to_schema(cohort.schema_document()), cohort.strata)


def chartscore_counts(cohort: Cohort) -> dict[Key, int]:
    """chartscore's own distinct-case counts (the scorer's, inside), stratum slices included."""
    strata = case_strata(cohort)
    scorer = CaseTrackingScorer(to_schema(cohort.schema_document()), strata=strata)
    gold, predictions = cohort.records()
    feed_records(scorer, gold, predictions, strict_schema=False)
    partial = scorer.partial()
    return case_counts(partial, partial.tally(), strata)


def published(shared: SharedReport) -> dict[Key, int]:
    out = {key: value for key, value in shared.numbers() if value is not None}
    for kind, name, part in shared.slices():
        for metric, result in part.metrics.items():
            if result.success_count is not None and result.total_count is not None:
                out[kind, name, f"{metric}.failures"] = result.total_count - result.success_count
    return out


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stratified(), st.sampled_from([2, 3]))
def test_stratified_reports_pass_their_audit_and_publish_no_small_cell(
    cohort: Cohort, min_cell: int
) -> None:
    gold, predictions = cohort.records()
    report = score(
        gold, predictions, schema=cohort.schema_document(), strata=case_strata(cohort)
    ).core()
    sensitivity, tally = cohort.sensitivity()
    values = dict(tally.values)
    # The scorer counts each stratum number's distinct cases as the reference does; a pooled
    # majority baseline's count is a lower bound (the largest member field's), never above it.
    ours, exact = chartscore_counts(cohort), dict(sensitivity.case_counts)
    assert ours.keys() == exact.keys()
    for key, count in ours.items():
        if key[0] != "field" and key[2].startswith("majority_baseline."):
            assert count <= exact[key], key
        else:
            assert count == exact[key], key
    shared = share(report, sensitivity, min_cell)
    text = shared.to_json()
    assert SharedReport.from_json(text).to_json() == text
    assert shared.by_stratum and sorted(shared.by_stratum) == sorted(
        f"{key}={label}" for key, labels in cohort.declared.items() for label in labels
    )
    result = audit(text)
    assert result.passed, result.table()
    for key, value in published(shared).items():
        assert value == values[key], key
        cases = sensitivity.case_counts[key]
        assert cases == 0 or cases >= min_cell, key
    sensitive = {k for k, n in sensitivity.case_counts.items() if 1 <= n < min_cell}
    for row in result.rows:
        key = (row.slice_kind, row.slice_name, row.name)
        if row.lo is None:
            continue
        assert row.lo <= values[key] and (row.hi is None or values[key] <= row.hi), key
        assert key not in sensitive or row.lo != row.hi, key
    # Strata do not cost the field level: the field and pooled slices publish every number
    # the report without strata publishes (issue 39 item 4); a number it hides may show
    # where the stratified attack proves it exactly (a derivable number is published).
    plain_report = attrs.evolve(report, by_stratum={}, by_stratum_field_type={})
    counts = sensitivity.case_counts
    plain_counts = {k: n for k, n in counts.items() if not k[0].startswith("stratum")}
    plain_sensitivity = attrs.evolve(sensitivity, case_counts=plain_counts)
    plain = share(plain_report, plain_sensitivity, min_cell).numbers()
    stratified = dict(shared.numbers())
    for key, value in plain:
        assert value is None or stratified[key] == value, key
    # The stratum step shows what its audit proves exactly: no site number is hidden yet
    # derivable (so a site's rate with no trials reads 0/0, not hidden with range [0, 0]),
    # but for an item count, whose showing may add the rule's rows (around.proven_shown).
    if shared.field_level_kept:
        hidden = {key for key, value in shared.numbers() if value is None}
        derivable = {
            (row.slice_kind, row.slice_name, row.name)
            for row in result.rows
            if row.status == "derivable"
            and row.slice_kind.startswith("stratum")
            and row.name.split(".")[0] not in ("item_precision", "item_recall")
        }
        assert not derivable & hidden, sorted(derivable & hidden)
    # Every site's rate is shown or carries its provable bound, as a field slice's does
    # (issue 39 item 6: what a registry reports back to each hospital).
    for name, part in shared.by_stratum.items():
        for metric, result_ in part.metrics.items():
            shown = result_.success_count is not None and result_.total_count is not None
            assert shown or result_.rate_bound is not None, (name, metric)


def _no_evidence_cohort() -> Cohort:
    # Hypothesis's shrunk example of a CI failure: no answer carries evidence, so
    # evidence_provided is added around the stratified choice, and it proves the sites'
    # hidden evidence_support success counts to be 0.
    cohort = Cohort()
    cohort.schema = {
        "f000.number": {"type": "number", "tolerance": "1"},
        "f001.boolean": {"type": "boolean"},
    }
    cohort.gold = [
        ("case-00000", "f000.number", "number", 1),
        ("case-00001", "f000.number", "number", 1),
        ("case-00002", "f000.number", "number", 1),
        ("case-00000", "f001.boolean", "boolean", True),
        ("case-00001", "f001.boolean", "boolean", False),
        ("case-00002", "f001.boolean", "boolean", None),
    ]
    cohort.predictions = {
        ("case-00000", "f000.number"): (1, False),
        ("case-00001", "f000.number"): (None, False),
        ("case-00000", "f001.boolean"): (False, False),
        ("case-00001", "f001.boolean"): (None, False),
        ("case-00002", "f001.boolean"): ("yes", False),
    }
    cohort.declared = {"site": ["A", "B"], "abstractor": ["r1", "r2"]}
    cohort.strata = {
        "case-00000": {"site": "B", "abstractor": "r2"},
        "case-00001": {"site": "B", "abstractor": "r2"},
        "case-00002": {"site": "A", "abstractor": "r1"},
    }
    return cohort


@thorough_only("stratified shares with evidence counts (about 8 s)")
def test_evidence_provided_around_a_stratified_choice_shows_what_it_proves() -> None:
    # The sites' evidence_support success counts, hidden by the stratum step, are proven 0
    # once evidence_provided (0 everywhere) is added: shown, not hidden with range [0, 0].
    cohort = _no_evidence_cohort()
    check = test_stratified_reports_pass_their_audit_and_publish_no_small_cell
    check.hypothesis.inner_test(cohort, 2)  # type: ignore[attr-defined]
    gold, predictions = cohort.records()
    report = score(
        gold, predictions, schema=cohort.schema_document(), strata=case_strata(cohort)
    ).core()
    shared = share(report, cohort.sensitivity()[0], 2)
    assert shared.field_level_kept
    for name in ("site=B", "abstractor=r2"):
        assert shared.by_stratum[name].metrics["evidence_provided"].success_count == 0
        assert shared.by_stratum[name].metrics["evidence_support"].success_count == 0


# --- the model: one copy of each field's classes per stratum cell ---------------------------


def _one_field_report(declared: dict[str, list[str]], labels: dict[str, dict[str, str]]) -> Any:
    schema = {"fields": {"dx.flag": {"type": "boolean"}}, "strata": declared}
    gold = [GoldField(case, "dx.flag", "boolean", True) for case in sorted(labels)]
    predictions = [Prediction(case, "dx.flag", True) for case in sorted(labels)]
    strata = CaseStrata.from_mapping(to_schema(schema), labels)
    return score(gold, predictions, schema=schema, strata=strata).core()


def _shape_of(report: Any) -> SharedReport:
    return shared_from_report(report.to_dict(), {"dx.flag": "boolean"}, 11, set(), set())


def test_one_label_per_key_is_one_cell_and_the_layout_without_strata() -> None:
    labels = {f"c{i}": {"site": "A"} for i in range(3)}
    with_strata = model_of(_shape_of(_one_field_report({"site": ["A"]}, labels)))
    without = model_of(attrs_without_strata(_shape_of(_one_field_report({"site": ["A"]}, labels))))
    assert with_strata.size == without.size
    for key, quantity in without.quantities.items():
        assert with_strata.quantities[key].form == quantity.form
    for key, quantity in with_strata.quantities.items():
        if key[0] == "stratum":  # the one stratum is every case: the overall slice's form
            assert quantity.form == without.quantities["overall", "", key[2]].form


def attrs_without_strata(shared: SharedReport) -> SharedReport:
    import attrs

    return attrs.evolve(shared, by_stratum={}, by_stratum_field_type={})


def test_cells_cross_the_keys_and_a_field_sums_its_cells() -> None:
    declared = {"site": ["A", "B", "C"], "abstractor": ["r1", "r2"]}
    labels = {f"c{i}": {"site": "ABC"[i % 3], "abstractor": f"r{1 + i % 2}"} for i in range(6)}
    model = model_of(_shape_of(_one_field_report(declared, labels)))
    layout = model.layouts["dx.flag"]
    labels = layout.label_layout()  # a boolean field's two labels: over the whole field
    assert labels is not None
    assert layout.cells == 6 and model.size == 6 * layout.cell_size + labels.size
    field = {v for v, _ in model.quantities["field", "dx.flag", "field_count"].form}
    site_a = {v for v, _ in model.quantities["stratum", "site=A", "field_count"].form}
    r1 = {v for v, _ in model.quantities["stratum", "abstractor=r1", "field_count"].form}
    # Each cell holds one copy of every class; site=A is 2 of the 6 cells, r1 3 of them, and
    # site=A and r1 share exactly one cell.
    per_cell = len(field) // 6
    assert len(site_a) == 2 * per_cell and len(r1) == 3 * per_cell
    assert len(site_a & r1) == per_cell and site_a <= field
    sites = [
        {v for v, _ in model.quantities["stratum", f"site={s}", "field_count"].form} for s in "ABC"
    ]
    assert set().union(*sites) == field and sum(map(len, sites)) == len(field)


# --- an attack that only the stratum-aware model sees ---------------------------------------


def small_site_cohort() -> tuple[Any, Any, CaseStrata, dict[str, object]]:
    """40 cases, one boolean field; 14 unanswerable, of which 11 at site A and 3 at site B."""
    schema: dict[str, object] = {
        "fields": {"dx.flag": {"type": "boolean"}},
        "strata": {"site": ["A", "B"]},
    }
    gold, predictions, labels = [], [], {}
    for i in range(40):
        case = f"case-{i:03d}"
        site = "A" if i < 26 else "B"
        labels[case] = {"site": site}
        unanswerable = i < 11 or 26 <= i < 29
        gold.append(GoldField(case, "dx.flag", "boolean", None if unanswerable else i % 2 == 0))
        predictions.append(Prediction(case, "dx.flag", None if unanswerable else i % 2 == 0))
    strata = CaseStrata.from_mapping(to_schema(schema), labels)
    return gold, predictions, strata, schema


def test_a_small_stratum_cell_is_pinned_by_difference_unless_share_protects_it() -> None:
    gold, predictions, strata, schema = small_site_cohort()
    report = score(gold, predictions, schema=schema, strata=strata).core()
    types = {"dx.flag": "boolean"}
    # Hiding only the small numbers (the field slice's 14 is not small): site=B's 3
    # unanswerable cases come back as 14 - 11 from the field and site=A.
    document = report.to_dict()
    small: set[Key] = set()
    full = shared_from_report(document, types, 11, set(), set())
    for key, value in full.numbers():
        assert value is not None
        if 1 <= value < 11:
            small.add(key)
    assert ("stratum", "site=B", "unanswerable_count") in small
    assert ("field", "dx.flag", "unanswerable_count") not in small
    leaky = shared_from_report(document, types, 11, small, set())
    verdict = audit(leaky)
    pinned = {
        (row.slice_kind, row.slice_name, row.name): (row.lo, row.hi)
        for row in verdict.rows
        if row.status == DISCLOSED
    }
    assert pinned[("stratum", "site=B", "unanswerable_count")] == (3, 3)
    # The field-only model has no stratum number to check: it passes the field slices.
    field_only = audit(attrs_without_strata(leaky))
    assert not any(row.slice_kind == "stratum" for row in field_only.rows)
    # share protects it: the audit proves nothing about site=B's unanswerable cases.
    sensitivity = reference_sensitivity(gold, predictions, strata)
    shared = share(report, sensitivity, 11)
    result = audit(shared.to_json())
    assert result.passed, result.table()
    row = next(
        r
        for r in result.rows
        if (r.slice_kind, r.slice_name, r.name) == ("stratum", "site=B", "unanswerable_count")
    )
    assert row.status != DERIVABLE and not (row.lo >= 1 and row.hi is not None and row.hi < 11)  # type: ignore[operator]


def reference_sensitivity(gold: list[Any], predictions: list[Any], strata: CaseStrata) -> Any:
    from disclosure_reference import sensitivity_of

    rows = [(g.case_id, g.field_id, g.field_type, g.value) for g in gold]
    answers = {(p.case_id, p.field_id): (p.value, False) for p in predictions}
    labels = {g.case_id: {"site": "A" if int(g.case_id[-3:]) < 26 else "B"} for g in gold}
    sensitivity, _ = sensitivity_of(rows, answers, {}, labels, {"site": ["A", "B"]})
    return sensitivity


# --- the demo's strata, on the command line; Dask; canaries ----------------------------------

DATA = Path(__file__).resolve().parents[1] / "src" / "chartscore" / "data"


def test_json_without_strata_has_no_stratum_keys() -> None:
    gold, predictions, _, _ = small_site_cohort()
    schema = {"fields": {"dx.flag": {"type": "boolean"}}}
    text = json.dumps(
        json.loads(
            shared_from_report(
                score(gold, predictions, schema=schema).core().to_dict(),
                {"dx.flag": "boolean"},
                11,
                set(),
                set(),
            ).to_json()
        )
    )
    assert "by_stratum" not in text and "stratum_rates" not in text


def demo_strata(tmp_path: Path, case_ids: dict[str, str] | None = None) -> tuple[Path, Path]:
    """The demo schema declaring site and abstractor, and a strata file by case number."""
    schema = json.loads((DATA / "demo_schema.json").read_text(encoding="utf-8"))
    schema["strata"] = {"site": ["A", "B", "C"], "abstractor": ["r1", "r2"]}
    schema["sampling"] = {"site": {"A": "0.5", "B": "0.25", "C": "1"}}
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    cases = sorted({json.loads(line)["case_id"] for line in (DATA / "demo_gold.jsonl").open()})
    lines = [
        {
            "case_id": (case_ids or {}).get(c, c),
            "strata": {"site": "ABC"[int(c[-3:]) % 3], "abstractor": f"r{1 + int(c[-3:]) % 2}"},
        }
        for c in cases
    ]
    path = tmp_path / "strata.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return schema_path, path


@thorough_only("the demo shared and audited, and through Dask (about 5 s)")
def test_the_demo_s_strata_share_audit_and_match_the_dask_route(tmp_path: Path) -> None:
    pytest.importorskip("dask")
    from chartscore import score_dask
    from chartscore.cli import main
    from chartscore.disclosure import Sensitivity
    from chartscore.io import load_strata
    from chartscore.scoring.cases import kappa_smallest_margins
    from chartscore.workflows.score import feed_files, resolve_schema
    from chartscore.workflows.share import _figures

    schema, strata = demo_strata(tmp_path)
    inputs = ["--gold", str(DATA / "demo_gold.jsonl")]
    inputs += ["--predictions", str(DATA / "demo_predictions.jsonl")]
    inputs += ["--schema", str(schema), "--strata", str(strata), "--out", str(tmp_path / "s.json")]
    err = io.StringIO()
    assert main(["share", *inputs], stdout=io.StringIO(), stderr=err) == 0
    text = (tmp_path / "s.json").read_text(encoding="utf-8")
    document = json.loads(text)
    assert sorted(document["by_stratum"]) == [
        "abstractor=r1", "abstractor=r2", "site=A", "site=B", "site=C"
    ]  # fmt: skip
    assert sorted(document["by_stratum_field_type"]["site=A"]) == sorted(document["by_field_type"])
    # Eight cases a site: no site's counts are all shown, so no weighted estimate is.
    assert "; strata " in err.getvalue() and "weighted estimates shown 0/7" in err.getvalue()
    assert "demo-case" not in text + err.getvalue()
    for figures in document["overall_weighted"]["metrics"].values():
        assert figures == {"estimate": None, "design_effect": None, "interval": None}
    audited = io.StringIO()
    assert main(["audit", str(tmp_path / "s.json")], stdout=audited, stderr=io.StringIO()) == 0
    assert "stratum site=A" in audited.getvalue()
    # The Dask engine's report (partitions of the gold file, merged) with the scorer's case
    # counts (inside) shares to the same bytes as the local route.
    lines = (DATA / "demo_gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for part in range(3):
        (tmp_path / f"gold-{part}.jsonl").write_text("".join(lines[part::3]), encoding="utf-8")
    resolved = resolve_schema(schema)
    cases = load_strata(strata, resolved)
    scorer = CaseTrackingScorer(resolved, strata=cases)
    feed_files(scorer, DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl")
    partial = scorer.partial()
    sensitivity = Sensitivity(
        case_counts(partial, partial.tally(), cases),
        kappa_smallest_margins(partial),
        {f: c.field_type.value for f, c in partial.fields.items()},
        _figures(partial),  # the figures' contributions, inside, as share computes them
    )
    report = score_dask(
        str(tmp_path / "gold-*.jsonl"),
        [str(DATA / "demo_predictions.jsonl")],
        schema=schema,
        strata=strata,
        scheduler="synchronous",
        partitions=4,
    )
    assert share(report, sensitivity).to_json() + "\n" == text


def test_canaries_stratum_labels_may_show_case_ids_and_values_never(tmp_path: Path) -> None:
    from chartscore.cli import main

    secret_case, secret_value, label = "Zq9caseCanary", "Zq9valueCanary", "Zq9label"
    schema = {"fields": {"t.note": {"type": "text"}}, "strata": {"site": [label, "B"]}}
    (tmp_path / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    gold, answers, strata = [], [], []
    for i in range(14):
        case = f"{secret_case}-{i}"
        gold.append({"case_id": case, "field_id": "t.note", "field_type": "text"})
        gold[-1]["value"] = f"{secret_value} {i % 3}"
        answers.append({"case_id": case, "field_id": "t.note", "value": f"{secret_value} 0"})
        strata.append({"case_id": case, "strata": {"site": label if i < 12 else "B"}})
    for name, rows in (("gold", gold), ("pred", answers), ("strata", strata)):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    args = ["share", "--gold", str(tmp_path / "gold.jsonl")]
    args += [
        "--predictions",
        str(tmp_path / "pred.jsonl"),
        "--schema",
        str(tmp_path / "schema.json"),
    ]
    args += ["--strata", str(tmp_path / "strata.jsonl"), "--min-cell", "3"]
    assert main(args, stdout=out, stderr=err) == 0
    shown = out.getvalue() + err.getvalue()
    assert f"site={label}" in out.getvalue()  # declared: public
    assert secret_case.lower() not in shown.lower() and secret_value.lower() not in shown.lower()
    shared = SharedReport.from_json(out.getvalue())
    assert secret_case not in repr(shared) and secret_value not in repr(shared)
    assert audit(shared).passed


def test_a_cohort_whose_every_number_must_hide_is_shared() -> None:
    # Found by the property test: with strata every check is the exact solver's, and the
    # last candidates ran out within a round while the numbers already hidden protected
    # the rest; share now rechecks instead of giving up.
    cohort = Cohort()
    cohort.schema = {"f000.categorical": {"type": "categorical"}}
    rows = [("z", "X ", False, "B"), ("y", "X ", False, "B"), (None, "x", False, "A")]
    rows += [("z", "z", False, "B"), ("x", "x", True, "B"), ("y", "y", True, "A")]
    for i, (value, answer, supported, site) in enumerate(rows):
        case = f"case-{i:05d}"
        cohort.gold.append((case, "f000.categorical", "categorical", value))
        cohort.predictions[case, "f000.categorical"] = (answer, supported)
        cohort.strata[case] = {"site": site}
    cohort.declared = {"site": ["A", "B"]}
    inner = test_stratified_reports_pass_their_audit_and_publish_no_small_cell.hypothesis  # type: ignore[attr-defined]
    inner.inner_test(cohort, 3)


# --- the weighted estimate: shown exactly where every sampled stratum's counts are ---------


def sampled_cohort(small_b: bool) -> tuple[Any, Any, CaseStrata, dict[str, object]]:
    """Two sites sampled at 0.5 and 1, one boolean field, 11 disagreements per site; site B
    has 33 cases, or 5 (then all of its numbers are small)."""
    schema: dict[str, object] = {
        "fields": {"dx.flag": {"type": "boolean"}},
        "strata": {"site": ["A", "B"]},
        "sampling": {"site": {"A": "0.5", "B": "1"}},
    }
    gold, predictions, labels = [], [], {}
    sizes = {"A": 44, "B": 5 if small_b else 33}
    for site, size in sizes.items():
        for i in range(size):
            case = f"case-{site}{i:03d}"
            labels[case] = {"site": site}
            gold.append(GoldField(case, "dx.flag", "boolean", i % 2 == 0))
            predictions.append(Prediction(case, "dx.flag", (i % 2 == 0) != (i < 11)))
    strata = CaseStrata.from_mapping(to_schema(schema), labels)
    return gold, predictions, strata, schema


@pytest.mark.parametrize("small_b", [False, True])
def test_the_weighted_estimate_is_shown_only_where_its_inputs_are(
    tmp_path: Path, small_b: bool
) -> None:
    from chartscore.workflows.share import share_files

    gold, predictions, strata, schema = sampled_cohort(small_b)
    paths = {}
    for name, rows in (
        ("gold", [{"case_id": g.case_id, "field_id": g.field_id, "field_type": "boolean",
                   "value": g.value} for g in gold]),
        ("pred", [{"case_id": p.case_id, "field_id": p.field_id, "value": p.value}
                  for p in predictions]),
    ):  # fmt: skip
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    labels = [{"case_id": g.case_id, "strata": {"site": g.case_id[5]}} for g in gold]
    (tmp_path / "strata.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8"
    )
    report = score(gold, predictions, schema=schema, strata=strata)
    shared = share_files(
        paths["gold"], paths["pred"], schema=tmp_path / "schema.json",
        strata=tmp_path / "strata.jsonl",
    )  # fmt: skip
    assert report.overall_weighted is not None and shared.overall_weighted is not None
    text = shared.to_json()
    assert SharedReport.from_json(text).to_json() == text and audit(text).passed
    full = report.overall_weighted.to_dict()["metrics"]
    for metric, figures in shared.overall_weighted.to_dict()["metrics"].items():  # type: ignore[union-attr]
        inputs = [shared.by_stratum[s].metrics[metric] for s in ("site=A", "site=B")]
        if all(m.success_count is not None and m.total_count is not None for m in inputs):
            assert figures == full[metric]
        else:
            assert figures == {"estimate": None, "design_effect": None, "interval": None}
    shown = [f for f in shared.overall_weighted.metrics.values() if f.estimate is not None]
    assert (not shown) if small_b else len(shown) >= 3
    # A reader refuses an estimate beside a hidden input, or one edited.
    document = json.loads(text)
    metric = "exact_agreement"
    figures = document["overall_weighted"]["metrics"][metric]
    if small_b:
        figures.update(full[metric])
    else:
        figures["estimate"] = 0.5
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


# --- the size limit: refused at once, not run for hours -------------------------------------


def test_stratum_blocks_are_fields_times_the_cross_classified_cells() -> None:
    from chartscore.disclosure.limits import stratum_blocks

    names = ["site=A", "site=B", "abstractor=r1", "abstractor=r2", "abstractor=r3"]
    assert stratum_blocks(13, names) == 13 * 2 * 3
    assert stratum_blocks(13, []) == 13  # without strata: one cell


def test_audit_refuses_a_document_larger_than_share_writes_before_its_model() -> None:
    # A document from outside that declares eight keys of two labels: 256 cells of one
    # field. A crafted one of this kind took 10 GB and ran on; it is refused at once.
    from chartscore.disclosure.audits.publication import audit_publication
    from chartscore.disclosure.limits import MAX_STRATUM_BLOCKS, check_audit_size
    from chartscore.errors import ErrorHint

    def shared(keys: int) -> SharedReport:
        declared = {f"key{k}": ["a", "b"] for k in range(keys)}
        labels = {f"c{i}": {f"key{k}": "ab"[(i >> k) & 1] for k in range(keys)} for i in range(4)}
        return _shape_of(_one_field_report(declared, labels))

    for call in (lambda: audit(shared(8)), lambda: audit(shared(8).to_json())):
        with pytest.raises(ChartscoreError) as caught:
            call()
        assert caught.value.code is ErrorCode.SHARE_TOO_LARGE
        assert caught.value.hint is ErrorHint.AUDIT_TOO_LARGE
    # Jointly: two documents of 128 cells are 256 blocks in all.
    with pytest.raises(ChartscoreError) as caught:
        audit_publication([shared(7), shared(7)], ["a", "b"])
    assert caught.value.hint is ErrorHint.AUDIT_TOO_LARGE
    # What share writes is taken: 200 blocks alone, or in all with a comparison's.
    sites = [f"site={n}" for n in range(MAX_STRATUM_BLOCKS // 10)]
    check_audit_size([(10, sites)], 0)
    check_audit_size([(5, sites[:10]), (5, sites[:10])], 2)  # 50 + 50 + 2 x 50
    for too_large in ([(10, [*sites, "site=x"])], 0), ([(5, sites[:10])] * 3, 2):
        with pytest.raises(ChartscoreError):
            check_audit_size(*too_large)  # type: ignore[arg-type]
    attacked = audit(shared(2))  # a small one is attacked as before: its 4 cases shown fail
    assert not attacked.passed and any(row.status == "small_published" for row in attacked.rows)


def _write_thirty_sites(where: Path, fields: int, systems: list[str]) -> int:
    # 30 boolean charts over 30 sites (one each), every answer right: schema.json, gold.jsonl,
    # strata.jsonl and one predictions file per name in ``systems``. Returns the sites.
    sites = [f"s{i:02d}" for i in range(30)]
    field_ids = [f"f{i:02d}" for i in range(fields)]
    cases = [f"case-{i:03d}" for i in range(30)]
    schema = {"fields": {f: {"type": "boolean"} for f in field_ids}, "strata": {"site": sites}}
    (where / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    lines = [{"case_id": c, "field_id": f, "value": True} for c in cases for f in field_ids]
    for name, extra in (("gold", {"field_type": "boolean"}), *((n, {}) for n in systems)):
        text = "".join(json.dumps({**line, **extra}) + "\n" for line in lines)
        (where / f"{name}.jsonl").write_text(text, encoding="utf-8")
    strata = [{"case_id": c, "strata": {"site": s}} for c, s in zip(cases, sites, strict=True)]
    (where / "strata.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in strata), encoding="utf-8"
    )
    return len(sites)


@pytest.mark.parametrize(("fields", "refused"), [(7, True), (6, False), (13, True)])
def test_share_refuses_a_stratified_report_over_the_limit_before_suppressing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fields: int, refused: bool
) -> None:
    import chartscore.disclosure.suppress as suppress_module
    from chartscore.cli import main
    from chartscore.disclosure.limits import MAX_STRATUM_BLOCKS

    sites = _write_thirty_sites(tmp_path, fields, ["pred"])
    # 210 and 180 blocks; 13 fields over 30 sites (390) ran over an hour (docs/disclosure.md#limits)
    assert (fields * sites > MAX_STRATUM_BLOCKS) is refused

    started: list[bool] = []

    def suppressing(*args: object, **kwargs: object) -> object:
        started.append(True)  # a stand-in: the real suppression would take minutes here
        raise RuntimeError

    monkeypatch.setattr(suppress_module, "_suppress", suppressing)
    out, err = io.StringIO(), io.StringIO()
    argv = ["share", "--gold", str(tmp_path / "gold.jsonl"), "--predictions"]
    argv += [str(tmp_path / "pred.jsonl"), "--schema", str(tmp_path / "schema.json")]
    argv += ["--strata", str(tmp_path / "strata.jsonl"), "--quiet", "--jobs", "1"]
    status = main(argv, stdout=out, stderr=err)
    assert out.getvalue() == ""
    if refused:
        assert status == 1
        assert err.getvalue().startswith("chartscore: error: share_too_large")
        assert started == []
    else:  # under the limit, suppression starts (and meets the stand-in)
        assert "share_too_large" not in err.getvalue()
        assert started == [True]


@pytest.mark.parametrize(
    ("fields", "systems", "also", "compare", "refused"),
    [
        (6, 1, False, False, True),
        (5, 1, False, False, False),
        (2, 2, False, False, False),
        (2, 2, False, True, True),
        (2, 1, True, False, False),
        (3, 1, True, False, True),
    ],
)
def test_a_publication_refuses_stratified_reports_over_its_limit_before_suppressing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fields: int,
    systems: int,
    also: bool,
    compare: bool,
    refused: bool,
) -> None:
    # Each stratified report is under the per-report limit (30 sites: 60 to 180 blocks), but
    # the publication attacks them together: its stratified reports' blocks and, with strata,
    # each comparison's (as many as a report's) are what counts.
    import chartscore.workflows.publication as publication_module
    from chartscore.cli import main
    from chartscore.disclosure.limits import MAX_PUBLICATION_STRATUM_BLOCKS, MAX_STRATUM_BLOCKS
    from chartscore.errors import ErrorHint

    blocks = fields * _write_thirty_sites(tmp_path, fields, [f"pred_{n}" for n in range(systems)])
    assert blocks <= MAX_STRATUM_BLOCKS
    in_all = blocks * (systems * (1 + also) + compare)
    assert (in_all > MAX_PUBLICATION_STRATUM_BLOCKS) is refused
    started: list[bool] = []

    def suppressing(*args: object, **kwargs: object) -> object:
        started.append(True)  # a stand-in: the real publication would take minutes here
        raise RuntimeError

    monkeypatch.setattr(publication_module, "_publication", suppressing)
    (tmp_path / "out").mkdir()
    argv = ["share", "--gold", str(tmp_path / "gold.jsonl"), "--publication"]
    argv += [str(tmp_path / "pred_*.jsonl"), "--schema", str(tmp_path / "schema.json")]
    argv += ["--strata", str(tmp_path / "strata.jsonl"), "--quiet"]
    argv += ["--out-dir", str(tmp_path / "out"), *(["--also-min-cell", "13"] if also else [])]
    argv += ["--compare"] if compare else []
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    assert out.getvalue() == ""
    if refused:
        assert status == 1
        assert err.getvalue() == (
            f"chartscore: error: share_too_large ({ErrorHint.PUBLICATION_TOO_LARGE}): "
            f"over {MAX_STRATUM_BLOCKS} field x stratum-cell blocks "
            f"({MAX_PUBLICATION_STRATUM_BLOCKS} in a publication): fewer strata\n"
        )
        assert started == []
        assert list((tmp_path / "out").iterdir()) == []
    else:  # under the limit, the publication starts (and meets the stand-in)
        assert "share_too_large" not in err.getvalue()
        assert started == [True]


@thorough_only("a stratified share in one step and in two (about 4 s)")
def test_a_stratified_share_falls_back_to_one_step_when_two_steps_cannot_protect_a_site(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import chartscore.disclosure.suppress as suppress_module
    from chartscore.disclosure.evidence_rule import without_evidence

    cohort = build_cohort(__import__("random").Random(3).choice, ["boolean", "number"], 30)
    cohort.declared = {"site": ["A", "B"]}
    cohort.strata = {f"case-{i:05d}": {"site": "A" if i % 3 else "B"} for i in range(30)}
    gold, predictions = cohort.records()
    report = score(
        gold, predictions, schema=cohort.schema_document(), strata=case_strata(cohort)
    ).core()
    sensitivity, _ = cohort.sensitivity()
    alone = suppress_module._share_alone(*without_evidence(report, sensitivity), 11)
    original = suppress_module._share_alone

    def refusing(*args: Any, **kwargs: Any) -> SharedReport:
        if kwargs.get("known") is not None:  # the second step: as if no site could be protected
            raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
        return original(*args, **kwargs)

    monkeypatch.setattr(suppress_module, "_share_alone", refusing)
    shared = share(report, sensitivity, 11)
    assert shared.to_json() == alone.to_json()
    assert audit(shared.to_json()).passed
    assert shared.field_level_kept is False  # share says so on stderr (inside only)
    monkeypatch.setattr(suppress_module, "_share_alone", original)
    two_steps = share(report, sensitivity, 11)
    assert two_steps.field_level_kept is True
    # The primary cells are the rule's own, whichever way it chose: what the plain step hides
    # beyond them counts as complementary on share's stderr.
    assert two_steps.primary_count == alone.primary_count
    assert alone.primary_count is not None and alone.primary_count > 0


# --- the stratum step shows a proven number only where the rule's rows stay the same -------


class _RuleRows:
    """A stand-in for ``ReportModel.knowledge``: the rows that showing some numbers adds.

    Showing ``alone`` adds a row by itself; ``pair`` adds one only when both are shown
    (as the failures of two shown parts do).
    """

    def __init__(self, alone: set[Key], pair: set[Key]) -> None:
        self.alone, self.pair = alone, pair

    def knowledge(self, published: dict[Key, int], min_cell: int) -> list[tuple[Any, int]]:
        rows: list[tuple[Any, int]] = [(((0, 1),), 0)]
        rows += [(((1, 1),), min_cell) for key in sorted(self.alone) if key in published]
        if self.pair and self.pair <= published.keys():
            rows.append((((2, 1),), min_cell))
        return rows


def test_a_proven_number_is_shown_only_where_it_adds_no_rule_row() -> None:
    from chartscore.disclosure.around import proven_shown

    x, y, z, w = (("stratum", "site=A", name) for name in ("x", "y", "z", "w"))
    values = {x: 12, y: 0, z: 0, w: 30}
    published = {w: 30}
    # Nothing new: every proven number is shown.
    none = _RuleRows(set(), set())
    assert proven_shown(none, published, values, {x, y}, 11) == {x, y}  # type: ignore[arg-type]
    # One whose showing adds a row stays hidden; the others are shown.
    one = _RuleRows({x}, set())
    assert proven_shown(one, published, values, {x, y, z}, 11) == {y, z}  # type: ignore[arg-type]
    # Two that add a row only together: neither is shown.
    both = _RuleRows(set(), {y, z})
    assert proven_shown(both, published, values, {y, z}, 11) == frozenset()  # type: ignore[arg-type]
