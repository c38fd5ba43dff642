"""The range solver's shortcuts agree with solving whole components, on real scored cohorts.

Every path of :mod:`chartscore.disclosure.ranges` must give the same exact ranges: the
relaxation/restriction sandwich (forced onto small components here), the witness shortcuts,
and the whole-component solve. :class:`LocalCheck` may only ever certify what the exact solver
confirms. Brute force on tiny tables is in ``test_disclosure_bruteforce.py``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.ranges as ranges_module
from chartscore import score
from chartscore.disclosure import audit
from chartscore.disclosure.model import model_of
from chartscore.disclosure.ranges import LocalCheck, RangeSolver
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_quantities import published_values
from chartscore.documents.shared_report import SharedReport, shared_from_report
from disclosure_reference import build_cohort

from helpers import examples, with_clustered_figures

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")


def random_shared(seed: int, fields: int, cases: int, hide: float) -> str:
    """A shared report of a scored cohort with a random set of numbers hidden."""
    rng = random.Random(seed)
    cohort = build_cohort(rng.choice, [rng.choice(TYPES) for _ in range(fields)], cases)
    gold, predictions = cohort.records()
    report = score(gold, predictions, schema=cohort.schema_document())
    sensitivity, _ = cohort.sensitivity()
    full = shared_from_report(report.core().to_dict(), sensitivity.field_types, 11, set(), set())
    hidden = {key for key, _ in full.numbers() if rng.random() < hide}
    types = sensitivity.field_types
    return shared_from_report(report.core().to_dict(), types, 11, hidden, set(types)).to_json()


def ranges(text: str) -> dict[tuple[str, str, str], tuple[int | None, int | None]]:
    return {(r.slice_kind, r.slice_name, r.name): (r.lo, r.hi) for r in audit(text).rows}


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(2, 4), st.integers(3, 30), st.sampled_from([0.3, 0.6]))
def test_sandwich_and_whole_component_agree(
    seed: int, fields: int, cases: int, hide: float
) -> None:
    text = random_shared(seed, fields, cases, hide)
    whole = ranges(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranges_module, "_SANDWICH_WIDTH", 0)
        patch.setattr(ranges_module, "_MAX_WITNESSES", 1)  # no shortcut from earlier points
        sandwich = ranges(text)
    assert sandwich == whole


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(3, 25), st.sampled_from([3, 11]))
def test_local_certificates_are_confirmed_by_the_exact_solver(
    seed: int, fields: int, cases: int, min_cell: int
) -> None:
    text = random_shared(seed, fields, cases, 0.5)
    from chartscore.disclosure import SharedReport

    shared = SharedReport.from_json(text)
    model = model_of(shared)
    published = {k: v for k, v in published_values(shared).items() if v is not None}
    solver = RangeSolver(model, published)
    local = LocalCheck(model, solver.point())
    numbers = {k: v for k, v in shared.numbers() if v is not None}
    rng = random.Random(seed)
    for key, quantity in model.quantities.items():
        if key in published:
            continue
        low, high = solver.range_of(quantity.form)
        value = rng.randint(low, high if high is not None else low + 20)
        if local.protected(quantity.form, value, min_cell, numbers):
            small = 1 <= value < min_cell
            if small:
                assert low == 0 or high is None or high >= min_cell
            else:
                assert low != high


def nulls(document: object) -> int:
    """Null counts, success and total counts in a shared report document."""
    total = 0
    for section in ("overall", "by_field", "by_field_type"):
        value = document[section]  # type: ignore[index]
        parts = [value] if section == "overall" else list(value.values())
        for part in parts:
            for item in part.values():
                if isinstance(item, dict):
                    total += (item["success_count"] is None) + (item["total_count"] is None)
                elif item is None:
                    total += 1
    return total


def test_the_ignored_prediction_count_is_a_number_of_its_own() -> None:
    # The report's top-level ignored_prediction_count is tied to no other number:
    # hidden it is unbounded above; published from 1 to min_cell - 1 it fails the audit.
    def part(scale: int) -> dict[str, object]:
        counts = {
            "field_count": 20 * scale,
            "answerable_count": 20 * scale,
            "unanswerable_count": 0,
            "missing_count": 0,
            "answered_count": 20 * scale,
            "abstained_count": 0,
        }
        metrics = {
            name: {"success_count": None, "total_count": None, "interval": None}
            for name in (
                "exact_agreement",
                "normalized_agreement",
                "abstention_correctness",
                "answerable_abstention",
                "unanswerable_answer",
                "wrong_type_answer",
                "evidence_support",
            )
        }
        return {**counts, **metrics}

    def document(ignored: int | None) -> dict[str, object]:
        out: dict[str, object] = {
            "format": "chartscore.shared_report",
            "format_version": 1,
            "scorer": {"name": "chartscore", "version": "0.1.0"},
            "overall": part(2),
            "by_field": {"a.one": part(1), "b.two": part(1)},
            "by_field_type": {"text": part(2)},
            "ignored_prediction_count": ignored,
            "disclosure": {
                "rule": "cell_size",
                "min_cell": 11,
                "unit": "cases",
                "suppressed_count": 0,
                "field_types": {"a.one": "text", "b.two": "text"},
            },
        }
        out["disclosure"]["suppressed_count"] = nulls(out) + (ignored is None)  # type: ignore[index]
        return with_clustered_figures(out)

    key = ("overall", "", "ignored_prediction_count")
    hidden = audit(canonical_json(document(None)))
    rows = {(r.slice_kind, r.slice_name, r.name): r for r in hidden.rows}
    assert (rows[key].lo, rows[key].hi, rows[key].status) == (0, None, "protected")
    assert hidden.passed
    shown = audit(canonical_json(document(3)))
    assert not shown.passed
    assert any((r.slice_kind, r.slice_name, r.name) == key for r in shown.rows)
    assert audit(canonical_json(document(11))).passed
    # It round-trips at the top level, where the report has it.
    text = canonical_json(document(11))
    assert SharedReport.from_json(text).to_json() == text
