"""Declared uncertainty (docs/metrics.md, "Declared uncertainty").

AUROC and Brier score against scikit-learn's roc_auc_score and brier_score_loss; the
risk-coverage steps against a sort done here; Hanley and McNeil's interval against their
equation by hand and their published CT example; the stand-ins (perfect and constant
uncertainty); the file route (the fast layout and the strict route carry the uncertainty)
equals the library; a loader that recomputes every figure.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, roc_auc_score

from chartscore import (
    ChartscoreError,
    ErrorCode,
    EvidenceChain,
    GoldField,
    Prediction,
    Report,
    SourceLocation,
    score,
    score_files,
)
from chartscore.stats.uncertainty import UncertaintySums, auroc, hanley_mcneil_interval

from helpers import examples

DIGEST = "sha256:" + "ab" * 32


def _chain(field_id: str, uncertainty: object) -> EvidenceChain:
    return EvidenceChain(
        field_id=field_id,
        source_locations=[SourceLocation(DIGEST, 0, 5)],
        normalized_fact_digest=DIGEST,
        transformation_kind="model",
        transformation_digest=DIGEST,
        uncertainty=uncertainty,  # type: ignore[arg-type]
        reviewer_state="pending",
    )


uncertainties = st.sampled_from(
    [Decimal("0"), Decimal("0.1"), Decimal("0.25"), Decimal("0.5"), 1, 0.3, Decimal("0.9")]
)
rows = st.lists(
    st.tuples(st.booleans(), st.one_of(st.none(), uncertainties), st.booleans()),
    min_size=1,
    max_size=40,
)


def _records(data: list[tuple[bool, object, bool]]) -> tuple[list[GoldField], list[Prediction]]:
    gold, predictions = [], []
    for i, (right, uncertainty, answered) in enumerate(data):
        gold.append(GoldField(f"c{i}", "dx.flag", "boolean", True))
        if not answered:
            continue
        chain = None if uncertainty is None else _chain("dx.flag", uncertainty)
        predictions.append(Prediction(f"c{i}", "dx.flag", right, DIGEST, chain))
    return gold, predictions


def _exact(u: object) -> float:
    return float(Fraction(Decimal(repr(u))) if isinstance(u, float) else Fraction(u))  # type: ignore[arg-type]


@settings(max_examples=examples(120), deadline=None)
@given(rows)
def test_auroc_brier_and_risk_coverage_equal_the_references(
    data: list[tuple[bool, object, bool]],
) -> None:
    gold, predictions = _records(data)
    found = score(gold, predictions).by_field["dx.flag"].uncertainty
    assert found is not None
    kept = [(right, _exact(u)) for right, u, answered in data if answered and u is not None]
    assert found.sums.rows == len(kept)
    assert found.sums.without == sum(1 for _, u, answered in data if answered and u is None)
    y = np.array([right for right, _ in kept], dtype=int)
    forecast = np.array([1 - u for _, u in kept])
    if len(set(y.tolist())) == 2:
        assert math.isclose(found.auroc or 0.0, roc_auc_score(y, forecast), rel_tol=1e-12)
    else:
        assert found.auroc is None and found.auroc_interval is None
    if kept:
        assert math.isclose(found.brier_score or 0.0, brier_score_loss(y, forecast), abs_tol=1e-12)
    # Risk and coverage: sort by uncertainty; step k keeps every row at or below the k/10 quantile.
    ordered = sorted(u for _, u in kept)
    for k, step in enumerate(found.risk_coverage, start=1):
        if not kept:
            assert step.total_count == 0
            continue
        threshold = ordered[math.ceil(k * len(ordered) / 10) - 1]
        chosen = [right for right, u in kept if u <= threshold]
        assert (step.success_count, step.total_count) == (sum(chosen), len(chosen))


def test_hanley_mcneil_standard_errors_by_hand() -> None:
    # Their equation (2) by hand, n1 = n0 = 50. A = 0.8: Q1 = 0.8 / 1.2, Q2 = 1.28 / 1.8,
    # SE^2 = (0.16 + 49 (Q1 - 0.64) + 49 (Q2 - 0.64)) / 2500 = 0.0019804, SE = 0.0445.
    # A = 0.9: Q1 = 0.9 / 1.1, Q2 = 1.62 / 1.9, SE^2 = 0.0010319, SE = 0.0321.
    for area, expected in ((Fraction(8, 10), 0.0445), (Fraction(9, 10), 0.0321)):
        sums = UncertaintySums(50, 50, int(area * 2 * 2500), Fraction(0), _steps(50, 50), 0)
        low, high = hanley_mcneil_interval(sums, 1.0)  # type: ignore[misc]
        assert round((high - low) / 2, 4) == expected


def test_hanley_mcneils_published_ct_example() -> None:
    # Hanley and McNeil (1982), Table I: ratings 1 (definitely normal) to 5 of 58 normal and 51
    # abnormal CT images; published area 0.893 and standard error 0.032. As declared
    # uncertainties: rating r is uncertainty (5 - r) / 4 and an abnormal image "agrees".
    normal, abnormal = [33, 6, 6, 11, 2], [3, 2, 2, 11, 33]
    rows = [(Fraction(5 - r, 4), True, abnormal[r - 1]) for r in range(1, 6)]
    rows += [(Fraction(5 - r, 4), False, normal[r - 1]) for r in range(1, 6)]
    sums = UncertaintySums.of(rows, 0)
    assert (sums.agreed, sums.disagreed) == (51, 58)
    assert round(auroc(sums) or 0.0, 3) == 0.893
    low, high = hanley_mcneil_interval(sums, 1.0)  # type: ignore[misc]
    assert round((high - low) / 2, 3) == 0.032  # 0.03249 by their equation (2)


def _steps(agreed: int, disagreed: int) -> tuple[tuple[int, int], ...]:
    return tuple((agreed, agreed + disagreed) for _ in range(10))


def test_stand_ins_perfect_and_constant_uncertainty() -> None:
    data = [(True, Decimal("0.1"), True)] * 6 + [(False, Decimal("0.8"), True)] * 4
    gold, predictions = _records(data)
    perfect = score(gold, predictions).by_field["dx.flag"].uncertainty
    assert perfect is not None and perfect.auroc == 1.0
    assert perfect.risk_coverage[5].success_count == perfect.risk_coverage[5].total_count == 6
    constant = [(right, Decimal("0.3"), True) for right, _, _ in data]
    gold, predictions = _records(constant)
    flat = score(gold, predictions).by_field["dx.flag"].uncertainty
    assert flat is not None and flat.auroc == 0.5
    assert all(step.total_count == 10 for step in flat.risk_coverage)


def test_the_files_route_carries_the_uncertainty(tmp_path: Path) -> None:
    # The fast layout (compact and spaced), the scanner and the strict route all read it.
    data = [(True, Decimal("0.1"), True), (False, Decimal("0.75"), True), (True, 1, True)]
    gold, predictions = _records(data)
    gold_path = tmp_path / "gold.jsonl"
    gold_lines = [
        json.dumps(
            {"case_id": g.case_id, "field_id": "dx.flag", "field_type": "boolean", "value": True}
        )
        for g in gold
    ]
    gold_path.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    lines = []
    for index, (answer, (_, uncertainty, _)) in enumerate(zip(predictions, data, strict=True)):
        chain = {
            "field_id": "dx.flag",
            "source_locations": [{"source_digest": DIGEST, "start_offset": 0, "end_offset": 5}],
            "normalized_fact_digest": DIGEST,
            "transformation_kind": "model",
            "transformation_digest": DIGEST,
            "uncertainty": "UNCERTAINTY",
            "reviewer_state": "pending",
        }
        row = {
            "case_id": answer.case_id,
            "field_id": "dx.flag",
            "value": answer.value,
            "normalized_fact_digest": DIGEST,
            "evidence_chain": chain,
        }
        separators = (",", ":") if index == 1 else (", ", ": ")  # compact and spaced layouts
        text = json.dumps(row, separators=separators)
        lines.append(text.replace('"UNCERTAINTY"', str(uncertainty)))
    lines.append(lines.pop().replace('"value": true', '"value":  true'))  # the scanner
    predictions_path = tmp_path / "predictions.jsonl"
    predictions_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_files = score_files(gold_path, predictions_path)
    assert from_files.to_json() == score(gold, predictions).to_json()
    found = from_files.by_field["dx.flag"].uncertainty
    assert found is not None and found.sums.rows == 3 and found.auroc == 0.5  # 1 of 2 pairs


@pytest.mark.parametrize(
    "edit",
    [
        lambda u: u.update(auroc=0.25),
        lambda u: u.update(ranked_twice=u["ranked_twice"] + 1),
        lambda u: u.update(brier_sum="0.5"),
        lambda u: u.update(without_uncertainty=5),
        lambda u: u["risk_coverage"].pop(),
        lambda u: u["risk_coverage"][0].update(success_count=0, interval=[0, 0.79]),
        lambda u: u.update(agreed=0),
    ],
)
def test_edited_uncertainty_figures_are_refused(edit: object) -> None:
    data = [(True, Decimal("0.1"), True), (False, Decimal("0.5"), True), (True, None, True)]
    gold, predictions = _records(data)
    report = score(gold, predictions)
    document = json.loads(report.to_json())
    assert Report.from_json(json.dumps(document)).to_json() == report.to_json()
    edit(document["by_field"]["dx.flag"]["declared_uncertainty"])  # type: ignore[operator]
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


@pytest.mark.parametrize(("confidence", "fewer"), [(0.95, 2), (0.99, 3), (0.95, 5), (0.9, 1)])
def test_a_degenerate_auroc_falls_back_to_wilson_at_t(confidence: float, fewer: int) -> None:
    # A at 1 (every agreeing row more certain): Wilson's interval for A on the fewer class's
    # rows, at Student's t over fewer - 1 degrees of freedom (z for one row), as
    # docs/metrics.md says: statsmodels' Wilson at the level whose z is that t.
    from scipy.stats import norm
    from scipy.stats import t as student
    from statsmodels.stats.proportion import proportion_confint

    from chartscore.stats.clustered import z_for
    from chartscore.stats.uncertainty import delong_interval

    tail = (1 - confidence) / 2
    quantile = norm.isf(tail) if fewer < 2 else student.isf(tail, fewer - 1)
    n1, n0 = fewer + 3, fewer
    found = delong_interval(n1, n0, 2 * n1 * n0, None, z_for(confidence))
    assert found is not None
    expected = proportion_confint(fewer, fewer, alpha=2 * norm.sf(quantile), method="wilson")
    assert found[0] == pytest.approx(expected[0], rel=1e-9) and found[1] == 1
