"""share() and audit() on real scored cohorts: the properties the issue's "done when" names.

Cohorts are generated (hypothesis), scored with ``chartscore.score``, and their distinct-case
counts computed by the independent reference in ``disclosure_reference.py`` from the raw rows.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, score
from chartscore.disclosure import Sensitivity, SharedReport, audit, share
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_quantities import binomials, hidden_counts
from chartscore.documents.shared_report import case_floors, floor_key
from chartscore.stats.binomial import Z95, wilson_interval
from chartscore.stats.clustered import clustered_wilson
from chartscore.workflows.share import share as share_records
from disclosure_reference import Cohort, Tally, build_cohort
from shared_data import SCHEMA as SHARED_SCHEMA
from shared_data import cohort as shared_cohort

from helpers import (
    as_shared,
    assert_never_narrower,
    examples,
    pop_clustered,
    thorough_only,
    thorough_only_marks,
    with_clustered_figures,
    without_ranges,
)

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")
ROOT = Path(__file__).resolve().parent.parent


def scored(cohort: Cohort) -> tuple[Any, Sensitivity, Tally]:
    gold, predictions = cohort.records()
    report = score(gold, predictions, schema=cohort.schema_document())
    sensitivity, tally = cohort.sensitivity()
    return report, sensitivity, tally


@st.composite
def cohorts(draw: st.DrawFn, max_cases: int = 24) -> Cohort:
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3))
    cases = draw(st.integers(1, max_cases))

    def choose(options: Any) -> Any:
        return draw(st.sampled_from(list(options)))

    return build_cohort(choose, types, cases)


def true_values(tally: Tally) -> dict[tuple[str, str, str], int]:
    return dict(tally.values)


def published(shared: SharedReport) -> dict[tuple[str, str, str], int]:
    """Every protected quantity an outsider reads directly (failures from both parts)."""
    out = {key: value for key, value in shared.numbers() if value is not None}
    for kind, name, part in shared.slices():
        metrics = [*part.metrics.items()]
        for label, result in (part.labels or {}).items():
            metrics += [(f"labels.{label}.{m}", value) for m, value in result.metrics.items()]
        for metric, result in metrics:
            if result.success_count is not None and result.total_count is not None:
                out[kind, name, f"{metric}.failures"] = result.total_count - result.success_count
    return out


def metric_node(part: dict[str, Any], quantity: str) -> tuple[dict[str, Any], str]:
    """The JSON metric a quantity names, and its part (``labels.<L>.<metric>.<part>`` too)."""
    if quantity.startswith("labels."):
        label, metric, which = quantity[len("labels.") :].rsplit(".", 2)
        return part["labels"][label][metric], which
    metric, which = quantity.rsplit(".", 1)
    return part[metric], which


def assert_shared_properties(
    report: Any, sensitivity: Sensitivity, tally: Tally, min_cell: int
) -> SharedReport:
    values = true_values(tally)
    full = json.loads(report.core().to_json())
    # The reference agrees with chartscore's own report on every number.
    for (kind, name, quantity), value in values.items():
        part = (
            full["overall"]
            if kind == "overall"
            else full["by_field" if kind == "field" else "by_field_type"][name]
        )
        if quantity.endswith(".failures"):
            metric, _ = metric_node(part, quantity)
            assert metric["total_count"] - metric["success_count"] == value
        elif quantity == "kappa.pairs":
            assert part["kappa"]["pairs"] == value
        elif "." in quantity:
            metric, field = metric_node(part, quantity)
            assert metric[field] == value
        else:
            assert part[quantity] == value
    shared = share(report, sensitivity, min_cell)
    text = shared.to_json()
    assert SharedReport.from_json(text).to_json() == text
    result = audit(text)
    assert result.passed, result.table()
    shown = published(shared)
    # Published numbers equal the full report's, and none is backed by 1..min_cell-1 cases.
    for key, value in shown.items():
        assert value == values[key]
        cases = sensitivity.case_counts[key]
        assert cases == 0 or cases >= min_cell, key
    # Intervals and kappa values are the report's own where shown.
    document = json.loads(text)
    for kind, name, part in shared.slices():
        source = (
            full["overall"]
            if kind == "overall"
            else full["by_field" if kind == "field" else "by_field_type"][name]
        )
        target = (
            document["overall"]
            if kind == "overall"
            else document["by_field" if kind == "field" else "by_field_type"][name]
        )
        for metric, result_metric in part.metrics.items():
            if result_metric.interval is not None:
                assert target[metric]["interval"] == source[metric]["interval"]
            hidden_part = result_metric.success_count is None or result_metric.total_count is None
            assert not (hidden_part and result_metric.interval is not None)
        if part.kappa is not None and part.kappa.value is not None:
            assert target["kappa"] == source["kappa"]
            assert sensitivity.kappa_smallest_margin[name] >= min_cell
        for label, shown_label in (part.labels or {}).items():
            for metric, result_metric in shown_label.metrics.items():
                if result_metric.interval is not None:
                    assert target["labels"][label][metric] == source["labels"][label][metric]
            # F1 is shown exactly where its three counts are, and is then the report's.
            counts = (
                shown_label.metrics["sensitivity"].success_count,
                shown_label.metrics["sensitivity"].total_count,
                shown_label.metrics["ppv"].total_count,
            )
            expected = None if None in counts else source["labels"][label]["f1"]
            assert shown_label.f1 == expected
        for coefficient, shown_coefficient in part.coefficients.items():
            # AC1/AC2 and alpha are shown only where kappa's rule allows kappa (kappa itself
            # may still be undefined: a single category gives no kappa, but an AC1).
            if shown_coefficient.value is not None:
                assert part.kappa is not None and part.kappa.pairs is not None
                assert part.metrics["normalized_agreement"].success_count is not None
                assert sensitivity.kappa_smallest_margin[name] >= min_cell
                assert target[coefficient] == source[coefficient]
    # The audit's ranges contain the true values; no sensitive quantity is derivable.
    sensitive = {k for k, n in sensitivity.case_counts.items() if 1 <= n < min_cell}
    for row in result.rows:
        key = (row.slice_kind, row.slice_name, row.name)
        if row.lo is None:
            continue
        assert row.lo <= values[key] and (row.hi is None or values[key] <= row.hi)
        if key in sensitive:
            assert row.lo != row.hi, key
    return shared


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(), st.sampled_from([2, 3, 5, 11]))
def test_shared_reports_pass_their_audit_and_publish_no_small_cell(
    cohort: Cohort, min_cell: int
) -> None:
    report, sensitivity, tally = scored(cohort)
    assert_shared_properties(report, sensitivity, tally, min_cell)


def duplicated(cohort: Cohort, copies: int) -> Cohort:
    """The cohort with every case repeated ``copies`` times under new case ids."""
    out = Cohort()
    out.schema = cohort.schema
    for copy in range(copies):
        for case, field_id, field_type, value in cohort.gold:
            out.gold.append((f"{case}-copy{copy}", field_id, field_type, value))
        for (case, field_id), answer in cohort.predictions.items():
            out.predictions[f"{case}-copy{copy}", field_id] = answer
    return out


@settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(max_cases=6), st.sampled_from([2, 3]))
def test_a_cohort_with_no_small_cell_is_shared_unchanged(cohort: Cohort, min_cell: int) -> None:
    # Every case repeated min_cell times: every nonzero quantity has at least min_cell cases.
    report, sensitivity, _ = scored(duplicated(cohort, min_cell))
    assert all(n == 0 or n >= min_cell for n in sensitivity.case_counts.values())
    shared = share(report, sensitivity, min_cell)
    assert shared.disclosure.suppressed_count == 0
    document = json.loads(shared.to_json())
    full = json.loads(as_shared(report, min_cell).core().to_json())
    assert_never_narrower(pop_clustered(document), pop_clustered(full))
    for key in ("overall", "by_field", "by_field_type", "scorer"):
        assert document[key] == full[key]
    assert document["format"] == "chartscore.shared_report"
    assert document["format_version"] == 5  # the report's shape, with ranges and labels
    assert document["disclosure"]["suppressed_count"] == 0


def test_a_large_cohort_loses_nothing_at_the_default_rule() -> None:
    cohort = build_cohort(random.Random(3).choice, list(TYPES), 4)
    report, sensitivity, _ = scored(duplicated(cohort, 11))
    shared = share(report, sensitivity)
    assert shared.disclosure.min_cell == 11
    assert shared.disclosure.suppressed_count == 0
    assert (
        json.loads(shared.to_json())["by_field"]
        == json.loads(as_shared(report).core().to_json())["by_field"]
    )


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(max_cases=18), st.sampled_from([3, 11]))
def test_complementary_cells_are_needed_together(cohort: Cohort, min_cell: int) -> None:
    # Hiding only the primary cells is not enough whenever share hid more: either the audit
    # fails, or a sensitive quantity becomes derivable.
    report, sensitivity, _ = scored(cohort)
    shared = share(report, sensitivity, min_cell)
    left_out = "evidence_provided" not in shared.overall.metrics  # evidence_rule.py
    sensitive = {
        k
        for k, n in sensitivity.case_counts.items()
        if 1 <= n < min_cell and not (left_out and k[2].startswith("evidence_provided."))
    }
    primary = set()
    for kind, name, quantity in sensitive:
        metric = quantity.rsplit(".", 1)[0]
        primary.add(
            (kind, name, f"{metric}.success_count" if quantity.endswith("failures") else quantity)
        )
    hidden = {key for key, value in shared.numbers() if value is None}
    if hidden == primary:
        return
    primary_only = refill(shared, report, hidden - primary)
    result = audit(primary_only)
    derivable = {
        (r.slice_kind, r.slice_name, r.name) for r in result.rows if r.status == "derivable"
    }
    assert not result.passed or derivable & sensitive


def _shared_clustered(
    shared: SharedReport, kind: str, name: str, metric: str, origin: dict[str, Any]
) -> list[float] | None:
    # The clustered interval a shared report shows for these counts: over its case floor.
    total = origin["total_count"]
    if not total:
        return None
    floors = case_floors(shared.disclosure.min_cell, shared.disclosure.field_types, shared.by_field)
    cases = floors[floor_key(kind, name)].cases(metric, total)
    interval = clustered_wilson(
        origin["success_count"], total, float(origin["design_effect"]), Z95, cases=cases
    )
    return None if interval is None else list(interval)


def refill(shared: SharedReport, report: Any, keys: set[tuple[str, str, str]]) -> str:
    """The shared report's JSON with ``keys`` filled back in from the full report.

    A metric whose parts are then both shown gets its interval back, so that only the
    disclosure checks can fail the audit (not an inconsistency). The published ranges and
    bounds are dropped (a filled-in number makes them stale; a report without them is valid).
    """
    document = without_ranges(json.loads(shared.to_json()))
    full = json.loads(report.core().to_json())
    for kind, name, quantity in keys:
        section = (
            "overall" if kind == "overall" else ("by_field" if kind == "field" else "by_field_type")
        )
        target = document[section] if kind == "overall" else document[section][name]
        source = full[section] if kind == "overall" else full[section][name]
        if quantity.startswith(("error_magnitude.", "declared_uncertainty.")):
            block, count = quantity.split(".")
            inner = ("chance",) if count == "gold_rows" else ()
            values = report.to_dict()["by_field"][name][block]
            shown = target[block]
            for step in inner:
                values, shown = values[step], shown[step]
            shown[count] = values[count]
        elif quantity == "kappa.pairs":
            target["kappa"]["pairs"] = source["kappa"]["pairs"]
            for coefficient in ("ac1", "ac2", "alpha"):  # over kappa's pairs: the same number
                if coefficient in target:
                    target[coefficient]["pairs"] = source[coefficient]["pairs"]
        elif "." in quantity:
            shown, part = metric_node(target, quantity)
            origin, _ = metric_node(source, quantity)
            shown[part] = origin[part]
            if shown["success_count"] is not None and shown["total_count"] is not None:
                shown["interval"] = origin["interval"]
                if "design_effect" in shown:  # a pooled slice: its clustered figures too
                    shown["design_effect"] = origin["design_effect"]
                    shown["clustered_interval"] = _shared_clustered(
                        shared, kind, name, quantity.rsplit(".", 1)[0], origin
                    )
            if quantity.startswith("labels."):  # a label's F1 is shown with its counts
                label = quantity[len("labels.") :].rsplit(".", 2)[0]
                table = target["labels"][label]
                counts = (
                    table["sensitivity"]["success_count"],
                    table["sensitivity"]["total_count"],
                )
                if None not in (*counts, table["ppv"]["total_count"]):
                    table["f1"] = source["labels"][label]["f1"]
                if all(  # the macro F1 is shown once every label's counts are
                    None not in (t["sensitivity"]["success_count"], t["sensitivity"]["total_count"],
                                 t["ppv"]["total_count"])
                    for t in target["labels"].values()
                ):  # fmt: skip
                    target["macro_f1"] = source["macro_f1"]
        else:
            target[quantity] = source[quantity]
    document["disclosure"]["suppressed_count"] -= len(keys)
    return canonical_json(document)


# --- the worked example of docs/disclosure.md ------------------------------------------------


def worked_example() -> Cohort:
    """40 charts, one boolean field; the chart cannot answer it for 3 of them."""
    cohort = Cohort()
    cohort.schema = {"dx.hiv_status": {"type": "boolean"}}
    for index in range(40):
        case = f"chart-{index:02d}"
        value: object = None if index < 3 else index % 4 == 0
        cohort.gold.append((case, "dx.hiv_status", "boolean", value))
        if index < 3:
            answer: object = None if index == 0 else True  # 2 unsafe answers
        elif index < 6:
            continue  # 3 missing
        else:
            answer = value if index % 7 else (not value)
        cohort.predictions[case, "dx.hiv_status"] = (answer, index % 2 == 0)
    return cohort


def test_worked_example_hiding_only_small_cells_leaks() -> None:
    report, sensitivity, _ = scored(worked_example())
    full = json.loads(report.core().to_json())["by_field"]["dx.hiv_status"]
    # The numbers docs/disclosure.md quotes.
    assert (full["field_count"], full["answerable_count"], full["unanswerable_count"]) == (
        40,
        37,
        3,
    )
    assert full["unanswerable_answer"]["success_count"] == 2
    # Hide only the numbers that are themselves small (1..10): the audit proves them back.
    small = {
        key
        for key, value in share_nothing(report, sensitivity).numbers()
        if value is not None and 1 <= value <= 10
    }
    naive = refill_none(report, sensitivity, small)
    result = audit(naive)
    assert not result.passed
    disclosed = {(r.slice_name, r.name, r.lo, r.hi) for r in result.rows if r.status == "disclosed"}
    assert ("dx.hiv_status", "unanswerable_count", 3, 3) in disclosed
    # As docs/disclosure.md says: 29 failures of the core numbers, 14 of the two labels'.
    core_failures = [r for r in result.failures if not r.name.startswith("labels.")]
    assert (len(core_failures), len(result.failures)) == (29, 43)
    # The 21 small cells hidden, and 7 quantities derived from them (failures whose
    # success or total count is one of them): 28 in all.
    assert len(small) == 21
    assert result.table().splitlines()[-1] == (
        "audit FAIL: min_cell 11, 28 hidden numbers checked (21 suppressed in the document, "
        "7 derived from them), 43 failing"
    )
    # share() hides more, and its report passes (the figures docs/disclosure.md quotes).
    shared = share(report, sensitivity)
    result = audit(shared)
    assert result.passed
    hidden = {key for key, value in shared.numbers() if value is None}
    assert hidden > small
    # The exact minimum-cost choice (docs/disclosure.md, cost order). The cohort's size is
    # known to the outsider (the composition is public), so it stays shown and the answerable
    # count, which six rates need, is hidden instead.
    assert shared.complement is not None and shared.complement.method == "exact"
    assert shared.complement.cost < shared.complement.greedy_cost
    assert (shared.complement.cost, shared.complement.greedy_cost) == (271, 296)
    core = {key for key in hidden if not key[2].startswith("labels.")}
    # 81 numbers: evidence_provided is not shared (the example's answers carry evidence:
    # src/chartscore/disclosure/evidence_rule.py).
    assert (len(core), len(hidden), len(list(shared.numbers()))) == (41, 53, 81)
    assert "evidence_provided" not in shared.by_field["dx.hiv_status"].metrics
    kept = shared.by_field["dx.hiv_status"]
    assert kept.counts["field_count"] == 40
    assert (kept.counts["answerable_count"], kept.counts["answered_count"]) == (None, 36)
    assert kept.metrics["evidence_support"].success_count == 18
    assert kept.metrics["answerable_abstention"].success_count == 0
    assert kept.metrics["abstention_correctness"].total_count == 40
    rows = {(r.slice_kind, r.name): (r.lo, r.hi) for r in result.rows}
    assert rows["field", "unanswerable_count"] == (0, 12)
    assert rows["field", "unanswerable_answer.success_count"] == (0, 12)
    # The 53 hidden numbers of the document and 25 derived from them.
    assert hidden_counts(shared) == (53, 25)
    assert result.table().splitlines()[-1] == (
        "audit PASS: min_cell 11, 78 hidden numbers checked (53 suppressed in the document, "
        "25 derived from them), 0 failing"
    )


def test_worked_example_each_complementary_cell_is_needed() -> None:
    report, sensitivity, _ = scored(worked_example())
    shared = share(report, sensitivity)
    sensitive = {k for k, n in sensitivity.case_counts.items() if 1 <= n < 11}
    hidden = {key for key, value in shared.numbers() if value is None}
    complementary = sorted(hidden - {_primary_key(k) for k in sensitive})
    assert complementary, "the example needs complementary cells"
    failing = 0
    for key in complementary:
        result = audit(refill(shared, report, {key}))
        derivable = {
            (r.slice_kind, r.slice_name, r.name) for r in result.rows if r.status == "derivable"
        }
        failing += (not result.passed) or bool(derivable & sensitive)
    assert failing >= 1
    # Filling one complementary cell of the field slice back in fails the audit outright.
    field_cells = [k for k in complementary if k[0] == "field"]
    assert any(not audit(refill(shared, report, {key})).passed for key in field_cells)


def _primary_key(key: tuple[str, str, str]) -> tuple[str, str, str]:
    kind, name, quantity = key
    if quantity.endswith(".failures"):
        return kind, name, quantity.replace(".failures", ".success_count")
    return key


def share_nothing(report: Any, sensitivity: Sensitivity) -> SharedReport:
    from chartscore.documents.shared_report import shared_from_report

    return shared_from_report(report.core().to_dict(), sensitivity.field_types, 11, set(), set())


def refill_none(report: Any, sensitivity: Sensitivity, hidden: set[tuple[str, str, str]]) -> str:
    from chartscore.documents.shared_report import shared_from_report

    return shared_from_report(
        report.core().to_dict(), sensitivity.field_types, 11, hidden, set(sensitivity.field_types)
    ).to_json()


# --- a hand-built leak the audit must catch ---------------------------------------------------


def hand_built(**changes: Any) -> dict[str, Any]:
    """A one-field shared report (text field, 30 rows), everything published unless changed."""
    counts = {
        "field_count": 30,
        "answerable_count": 27,
        "unanswerable_count": 3,
        "missing_count": 0,
        "answered_count": 30,
        "abstained_count": 0,
    }
    metrics = {
        "exact_agreement": (27, 27),
        "normalized_agreement": (27, 27),
        "abstention_correctness": (27, 30),
        "answerable_abstention": (0, 27),
        "unanswerable_answer": (3, 3),
        "wrong_type_answer": (0, 30),
        "evidence_support": (30, 30),
    }
    part: dict[str, Any] = dict(counts)
    for name, (k, n) in metrics.items():
        part[name] = {
            "success_count": k,
            "total_count": n,
            "interval": list(wilson_interval(k, n) or ()),
        }
    part.update(changes)
    return hand_built_document(part)


def hand_built_document(part: dict[str, Any]) -> dict[str, Any]:
    return with_clustered_figures(
        {
            "format": "chartscore.shared_report",
            "format_version": 1,
            "scorer": {"name": "chartscore", "version": "0.1.0"},
            "overall": json.loads(json.dumps(part)),
            "by_field": {"hx.note": part},
            "by_field_type": {"text": json.loads(json.dumps(part))},
            "disclosure": {
                "rule": "cell_size",
                "min_cell": 11,
                "unit": "cases",
                "suppressed_count": 0,
                "field_types": {"hx.note": "text"},
            },
        }
    )


def hide(document: dict[str, Any], *paths: tuple[str, ...]) -> str:
    for path in paths:
        for section in ("overall", "by_field", "by_field_type"):
            target = (
                document[section]
                if section == "overall"
                else next(iter(document[section].values()))
            )
            if len(path) == 1:
                target[path[0]] = None
            else:
                target[path[0]][path[1]] = None
                target[path[0]]["interval"] = None
                if "design_effect" in target[path[0]]:  # a pooled slice's clustered figures
                    target[path[0]]["design_effect"] = None
                    target[path[0]]["clustered_interval"] = None
            document["disclosure"]["suppressed_count"] += 1
    return canonical_json(document)


def test_hand_built_leak_is_caught() -> None:
    # unanswerable_count 3 hidden everywhere, but field_count - answerable_count shows it,
    # and so does unanswerable_answer's total.
    document = hand_built()
    text = hide(
        document,
        ("unanswerable_count",),
        ("unanswerable_answer", "success_count"),
        ("unanswerable_answer", "total_count"),
    )
    result = audit(text)
    assert not result.passed
    rows = {(r.slice_kind, r.name): (r.lo, r.hi, r.status) for r in result.rows}
    assert rows["field", "unanswerable_count"] == (3, 3, "disclosed")
    assert rows["field", "unanswerable_answer.success_count"] == (3, 3, "disclosed")


def test_published_small_number_fails() -> None:
    result = audit(canonical_json(hand_built()))
    assert not result.passed
    statuses = {(r.slice_kind, r.name): r.status for r in result.rows}
    assert statuses["field", "unanswerable_count"] == "small_published"
    # Failures derived from two published numbers: 30 - 27 = 3 incorrect abstention decisions.
    assert statuses["field", "abstention_correctness.failures"] == "small_published"


def edited(report: SharedReport, section: str, **metric_changes: Any) -> SharedReport:
    """``report`` with its exact_agreement changed in one section, as an edited object.

    Loading refuses such a document (invalid_report), so the audit's own checks
    are reached only by an object built in memory; they are kept as a second line.
    """

    def change(part: Any) -> Any:
        metric = attrs.evolve(part.metrics["exact_agreement"], **metric_changes)
        return attrs.evolve(part, metrics={**part.metrics, "exact_agreement": metric})

    if section == "overall":
        return attrs.evolve(report, overall=change(report.overall))
    named = dict(getattr(report, section))
    for name, part in named.items():
        named[name] = change(part)
    return attrs.evolve(report, **{section: named})


def test_interval_shown_with_hidden_part_is_refused_on_load_and_fails_the_audit() -> None:
    document = hand_built()
    for section in ("overall", "by_field", "by_field_type"):
        target = (
            document[section] if section == "overall" else next(iter(document[section].values()))
        )
        target["exact_agreement"]["success_count"] = None
        document["disclosure"]["suppressed_count"] += 1
    with pytest.raises(ChartscoreError) as caught:
        audit(canonical_json(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    report = SharedReport.from_dict(hand_built())
    for section in ("overall", "by_field", "by_field_type"):
        report = edited(report, section, success_count=None)
    report = attrs.evolve(report, disclosure=attrs.evolve(report.disclosure, suppressed_count=3))
    result = audit(report)
    assert any(
        r.status == "interval_published" and r.name == "exact_agreement.interval"
        for r in result.rows
    )


def test_tampered_report_is_refused_on_load() -> None:
    document = hand_built(answered_count=29)  # 0 + 29 + 0 != 30
    with pytest.raises(ChartscoreError) as caught:
        audit(canonical_json(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


def test_edited_interval_is_refused_on_load_and_inconsistent_for_the_audit() -> None:
    document = hand_built()
    document["by_field"]["hx.note"]["exact_agreement"]["interval"] = [0.5, 0.9]
    with pytest.raises(ChartscoreError) as caught:
        audit(canonical_json(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    report = edited(SharedReport.from_dict(hand_built()), "by_field", interval=(0.5, 0.9))
    result = audit(report)
    assert any(
        r.status == "inconsistent" and r.name == "exact_agreement.interval" for r in result.rows
    )


def test_kappa_value_with_hidden_pairs_fails() -> None:
    report, sensitivity, _ = scored(duplicated(worked_example(), 11))
    shared = share(report, sensitivity)
    field = shared.by_field["dx.hiv_status"]
    assert field.kappa is not None and field.kappa.value is not None
    document = json.loads(shared.to_json())
    field_document = document["by_field"]["dx.hiv_status"]
    for block in ("kappa", "ac1", "alpha"):  # AC1 and alpha are over kappa's pairs
        field_document[block]["pairs"] = None
    document["disclosure"]["suppressed_count"] += 1
    result = audit(canonical_json(document))
    published = {r.name for r in result.rows if r.status == "kappa_published"}
    assert published == {"kappa.value", "ac1.value", "alpha.value"}
    assert not result.passed


def test_kappa_is_withheld_when_a_margin_is_small() -> None:
    report, sensitivity, _ = scored(duplicated(worked_example(), 11))
    assert sensitivity.kappa_smallest_margin["dx.hiv_status"] >= 11
    small = attrs.evolve(sensitivity, kappa_smallest_margin={"dx.hiv_status": 10})
    shared = share(report, small)
    kappa = shared.by_field["dx.hiv_status"].kappa
    assert kappa is not None and kappa.value is None and kappa.interval is None
    assert kappa.pairs is not None  # the pairs themselves are not small
    shown = share(report, sensitivity).by_field["dx.hiv_status"].kappa
    assert shown is not None and shown.value is not None


# --- errors ------------------------------------------------------------------------------------


def test_protected_keys_are_exactly_the_reference_keys() -> None:
    from chartscore.disclosure import protected_keys

    report, sensitivity, _ = scored(build_cohort(random.Random(4).choice, list(TYPES), 12))
    keys = protected_keys(report, sensitivity.field_types)
    assert len(keys) == len(set(keys))
    assert set(keys) == set(sensitivity.case_counts)
    assert ("field", "f005.ordinal", "kappa.pairs") in keys
    assert ("field_type", "multi", "item_recall.failures") in keys
    assert ("overall", "", "evidence_support.failures") in keys


def test_sensitivity_must_cover_the_report() -> None:
    report, sensitivity, _ = scored(worked_example())
    counts = dict(sensitivity.case_counts)
    counts.pop(next(iter(counts)))
    for broken in (
        attrs.evolve(sensitivity, case_counts=counts),
        attrs.evolve(
            sensitivity,
            case_counts={**sensitivity.case_counts, ("field", "dx.hiv_status", "field_count"): 41},
        ),
        attrs.evolve(sensitivity, field_types={"dx.hiv_status": "text"}),
        attrs.evolve(sensitivity, field_types={}),
    ):
        with pytest.raises(ChartscoreError) as caught:
            share(report, broken)
        assert caught.value.code is ErrorCode.INVALID_SENSITIVITY
        assert caught.value.__context__ is None and caught.value.__cause__ is None


@pytest.mark.parametrize("min_cell", [0, 1, -3, 1.5, "11", True, 10**7])
def test_min_cell_must_be_a_sensible_integer(min_cell: Any) -> None:
    report, sensitivity, _ = scored(worked_example())
    with pytest.raises(ChartscoreError) as caught:
        share(report, sensitivity, min_cell)
    assert caught.value.code is ErrorCode.INVALID_MIN_CELL


def test_share_refuses_rather_than_return_a_failing_report(monkeypatch: pytest.MonkeyPatch) -> None:
    import chartscore.disclosure.suppress as suppress_module

    report, sensitivity, _ = scored(worked_example())
    # Broken complementary steps (the greedy and the exact one hide nothing more): the final
    # audit must refuse.
    monkeypatch.setattr(suppress_module, "_complement", lambda state, sensitive: None)
    monkeypatch.setattr(suppress_module, "_exact", lambda state, primary, sensitive: None)
    with pytest.raises(ChartscoreError) as caught:
        share(report, sensitivity)
    assert caught.value.code is ErrorCode.DISCLOSURE_AUDIT_FAILED


@pytest.mark.parametrize(
    "level", [0.90, pytest.param(0.99, marks=thorough_only_marks("a second share (about 3 s)"))]
)
def test_a_report_shared_at_another_confidence_level_passes_its_audit(level: float) -> None:
    # The audit checked each shown Wilson interval at 95% whatever the report's level, so
    # every share at --confidence 0.90 or 0.99 that showed an interval failed its own audit.
    gold, predictions = shared_cohort()
    shared = share_records(gold, predictions, schema=SHARED_SCHEMA, confidence=level)
    assert shared.confidence == level
    assert any(
        result.interval is not None
        for _, _, part in shared.slices()
        for _, result in binomials(part)
    )
    assert audit(shared.to_json()).passed


def test_sensitivity_repr_shows_no_case_count() -> None:
    _, sensitivity, _ = scored(worked_example())
    text = repr(sensitivity)
    assert "37" not in text and "case_counts=" not in text


# --- reading shared reports -------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_shared() -> str:
    report, sensitivity, _ = scored(worked_example())
    return share(report, sensitivity).to_json()


def test_round_trip_is_byte_identical(example_shared: str) -> None:
    assert SharedReport.from_json(example_shared).to_json() == example_shared
    assert SharedReport.from_json(example_shared.encode()).to_json() == example_shared


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(format="chartscore.report"),
        lambda d: d.update(format_version=1),
        lambda d: d.update(format_version=2),  # before ranges: share it again
        lambda d: d.update(format_version=True),
        lambda d: d.pop("format"),
    ],
)
def test_unknown_format_is_refused(example_shared: str, edit: Any) -> None:
    document = json.loads(example_shared)
    edit(document)
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.UNKNOWN_REPORT_FORMAT


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(extra=1),
        lambda d: d["disclosure"].update(min_cell=1),
        lambda d: d["disclosure"].update(unit="rows"),
        lambda d: d["disclosure"].update(suppressed_count=d["disclosure"]["suppressed_count"] + 1),
        lambda d: d["disclosure"]["field_types"].update({"dx.hiv_status": "date"}),
        lambda d: d["disclosure"]["field_types"].update({"Not An Id": "text"}),
        lambda d: d["overall"].update(field_count=-1),
        lambda d: d["overall"].update(field_count=1.5),
        lambda d: d["overall"].update(ordinal_later=d["overall"]["exact_agreement"]),
        lambda d: d["by_field"]["dx.hiv_status"].pop("kappa"),
        lambda d: d["by_field"]["dx.hiv_status"]["exact_agreement"].update(success_count=10**6),
        lambda d: d["by_field"]["dx.hiv_status"]["exact_agreement"].update(interval=[0.9, 0.1]),
        lambda d: d["scorer"].update(version="x" * 100),
        lambda d: d.update(by_field=[]),
    ],
)
def test_malformed_shared_report_is_refused(example_shared: str, edit: Any) -> None:
    document = json.loads(example_shared)
    edit(document)
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    assert caught.value.__context__ is None and caught.value.__cause__ is None


@pytest.mark.parametrize(
    "text",
    [b"\xff\xfe", "not json", '{"a": NaN}', '{"a": 1, "a": 2}', "[]", "1e999", ""],
)
def test_not_json_is_invalid_report(text: str | bytes) -> None:
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(text)
    assert caught.value.code in (ErrorCode.INVALID_REPORT, ErrorCode.UNKNOWN_REPORT_FORMAT)
    assert caught.value.__context__ is None


# --- determinism ---------------------------------------------------------------------------------


@settings(
    max_examples=examples(6, least=2),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(max_cases=16), st.randoms(use_true_random=False))
def test_shared_bytes_do_not_depend_on_input_order(cohort: Cohort, rng: random.Random) -> None:
    report, sensitivity, _ = scored(cohort)
    first = share(report, sensitivity, 3).to_json()
    gold, predictions = cohort.records()
    rng.shuffle(gold)
    rng.shuffle(predictions)
    again = score(gold, predictions, schema=cohort.schema_document())
    shuffled_counts = dict(sensitivity.case_counts)
    keys = list(shuffled_counts)
    rng.shuffle(keys)
    reordered = Sensitivity(
        {k: shuffled_counts[k] for k in keys},
        dict(reversed(list(sensitivity.kappa_smallest_margin.items()))),
        dict(reversed(list(sensitivity.field_types.items()))),
    )
    assert share(again, reordered, 3).to_json() == first
    assert audit(first).table() == audit(first).table()


_SCRIPT = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {tests!r})
    from disclosure_reference import build_cohort
    from chartscore import score
    from chartscore.disclosure import audit, share
    cohort = build_cohort(random.Random(7).choice, ["text", "categorical", "multi", "ordinal"], 30)
    gold, predictions = cohort.records()
    report = score(gold, predictions, schema=cohort.schema_document())
    sensitivity, _ = cohort.sensitivity()
    shared = share(report, sensitivity, 5)
    sys.stdout.write(shared.to_json() + "\\n" + audit(shared).table())
    """
)


@thorough_only("shares in processes under several hash seeds (about 3 s)")
def test_shared_bytes_do_not_depend_on_the_hash_seed() -> None:
    script = _SCRIPT.format(tests=str(ROOT / "tests"))
    outputs = []
    for seed in ("0", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        completed = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            env=environment,
            timeout=600,
            check=True,
        )
        outputs.append(completed.stdout)
    assert outputs[0] == outputs[1]
    assert b"chartscore.shared_report" in outputs[0]


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(max_cases=40), st.sampled_from([2, 5, 11]))
def test_a_shared_clustered_interval_never_counts_more_cases_than_there_are(
    cohort: Cohort, min_cell: int
) -> None:
    # The case floor (docs/disclosure.md, "Clustered intervals") comes from published numbers
    # only; it must never exceed the report's case_count, or the shared interval would be
    # narrower than the report's. The rule's min_cell cases behind a shown count and one
    # trial per field per case are the two facts it rests on.
    report, sensitivity, _ = scored(cohort)
    shared = share(report, sensitivity, min_cell)
    document = json.loads(shared.to_json())
    full = json.loads(report.core().to_json())
    checked = 0
    for kind, name, part in shared.slices():
        if kind == "field":
            continue
        for metric, result in part.metrics.items():
            if result.clustered_cases is None:
                continue
            whole = report.overall if kind == "overall" else report.by_field_type[name]
            true_cases = whole.metrics[metric].clustered_cases
            assert true_cases is not None and result.clustered_cases <= true_cases
            checked += 1
    assert_never_narrower(pop_clustered(document), pop_clustered(full))
    assert checked or shared.disclosure.suppressed_count or not report.overall.metrics
