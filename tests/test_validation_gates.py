"""Gates on the validation metrics (issue 23): a declared label, AC1/AC2, alpha, AUROC."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chartscore import (
    ChartscoreError,
    ErrorCode,
    EvidenceChain,
    GoldField,
    Prediction,
    SourceLocation,
    score,
    share,
)
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.render.junit import failure_message
from chartscore.stats.binomial import wilson_interval

DIGEST = "sha256:" + "cd" * 32
SCHEMA = {"fields": {"hx.smoking": {"type": "categorical", "choices": ["current", "never"]}}}


def _report(repeat: int = 1) -> object:
    return score(*_records(repeat), schema=SCHEMA)


def _records(repeat: int = 1) -> tuple[list[GoldField], list[Prediction]]:
    # Ten rows (six current, one of them answered never), ``repeat`` times over.
    gold_values = (["current"] * 6 + ["never"] * 4) * repeat
    answers = (["current"] * 5 + ["never"] + ["never"] * 4) * repeat
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", v) for i, v in enumerate(gold_values)]
    predictions = []
    for i, answer in enumerate(answers):
        chain = EvidenceChain(
            field_id="hx.smoking",
            source_locations=[SourceLocation(DIGEST, 0, 3)],
            normalized_fact_digest=DIGEST,
            transformation_kind="model",
            transformation_digest=DIGEST,
            uncertainty=Decimal("0.6") if i % 10 == 5 else Decimal("0.1"),
            reviewer_state="pending",
        )
        predictions.append(Prediction(f"c{i}", "hx.smoking", answer, DIGEST, chain))
    return gold, predictions


def _gate(body: str, repeat: int = 1) -> object:
    report = _report(repeat)
    (result,) = evaluate(report, parse_gates("[[gate]]\n" + body)).results  # type: ignore[arg-type]
    return result


def test_a_gate_on_one_declared_label_reads_its_wilson_bound() -> None:
    result = _gate(
        'slice = "field:hx.smoking"\nmetric = "sensitivity"\nlabel = "current"\nmin_lower = 0.4\n'
    )
    low = wilson_interval(5, 6)[0]  # type: ignore[index]
    assert result.observed == low and result.passed  # type: ignore[attr-defined]
    assert result.interval == "wilson"  # type: ignore[attr-defined]
    failing = _gate(
        'slice = "field:hx.smoking"\nmetric = "sensitivity"\nlabel = "current"\nmin_lower = 0.9\n'
    )
    assert not failing.passed  # type: ignore[attr-defined]


def test_gates_on_pooled_labels_coefficients_and_auroc() -> None:
    pooled = _gate('slice = "overall"\nmetric = "specificity"\nmin_lower = 0.3\n')
    assert pooled.interval == "clustered"  # type: ignore[attr-defined]
    ac1 = _gate('slice = "field:hx.smoking"\nmetric = "ac1"\nmin_lower = -0.5\n', repeat=12)
    assert ac1.interval == "gwet" and ac1.passed  # type: ignore[attr-defined]
    alpha = _gate('slice = "field:hx.smoking"\nmetric = "alpha"\nmin_lower = -1\n', repeat=12)
    assert alpha.interval == "jackknife" and alpha.passed  # type: ignore[attr-defined]
    auroc = _gate('slice = "field:hx.smoking"\nmetric = "uncertainty_auroc"\nmin_lower = 0\n')
    assert auroc.interval == "delong" and auroc.passed  # type: ignore[attr-defined]


def test_a_reports_coefficient_gated_at_another_level_fails_and_its_auroc_is_recomputed() -> None:
    # kappa, AC1 and alpha carry the report's 95% interval only; the AUROC is recomputed.
    report = _report(repeat=12)
    for metric in ("kappa", "ac1", "alpha"):
        gates = parse_gates(
            f'[[gate]]\nslice = "field:hx.smoking"\nmetric = "{metric}"\nmin_lower = -1\n'
        )
        assert evaluate(report, gates).results[0].passed  # type: ignore[arg-type]
        (result,) = evaluate(report, gates, confidence=0.99).results  # type: ignore[arg-type]
        assert (result.observed, result.passed) == (None, False)
        assert result.reason == "written at another level"
        assert failure_message(result, 0.99).startswith("written at another level (")
        assert "written at another level" in evaluate(report, gates, confidence=0.9).table()  # type: ignore[arg-type]
    auroc = parse_gates(
        '[[gate]]\nslice = "field:hx.smoking"\nmetric = "uncertainty_auroc"\nmin_lower = 0\n'
    )
    at_95, at_99 = (evaluate(report, auroc, confidence=c).results[0] for c in (0.95, 0.99))  # type: ignore[arg-type]
    assert at_99.reason == "" and at_99.observed is not None and at_95.observed is not None
    assert at_99.observed < at_95.observed  # a wider interval, recomputed


@pytest.mark.parametrize("metric", ["ac1", "alpha"])
def test_a_coefficient_from_too_few_pairs_fails_its_gate(metric: str) -> None:
    # Ten pairs: the interval exists but is not reliable (docs/metrics.md), whatever it says.
    result = _gate(f'slice = "field:hx.smoking"\nmetric = "{metric}"\nmin_lower = -1\n')
    assert not result.passed and result.observed is None  # type: ignore[attr-defined]
    assert result.reason == "too few pairs"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body",
    [
        'slice = "overall"\nmetric = "sensitivity"\nlabel = "current"\nmin_lower = 0.5\n',
        'slice = "field:hx.smoking"\nmetric = "exact_agreement"\nlabel = "x"\nmin_lower = 0.5\n',
        'slice = "field:hx.smoking"\nmetric = "sensitivity"\nlabel = ""\nmin_lower = 0.5\n',
        'slice = "field:hx.smoking"\nmetric = "ac1"\nmax_upper = 0.5\n',
    ],
)
def test_misplaced_labels_and_rules_are_refused(body: str) -> None:
    with pytest.raises(ChartscoreError) as caught:
        parse_gates("[[gate]]\n" + body)
    assert caught.value.code in (ErrorCode.INVALID_GATE, ErrorCode.INVALID_GATE_RULE)


def test_an_undeclared_label_is_a_missing_metric() -> None:
    with pytest.raises(ChartscoreError) as caught:
        _gate('slice = "field:hx.smoking"\nmetric = "ppv"\nlabel = "former"\nmin_lower = 0.5\n')
    assert caught.value.code is ErrorCode.GATE_METRIC_MISSING


def test_a_shared_reports_auroc_is_a_missing_metric_and_its_labels_are_read() -> None:
    # A gate on uncertainty_auroc of a shared report ended in internal_error: the report's
    # interval was re-read at the gate's level from a shared figure that has no such field.
    gold, predictions = _records(repeat=12)
    shared = share(gold, predictions, schema=SCHEMA, min_cell=3)
    auroc = parse_gates(
        '[[gate]]\nslice = "field:hx.smoking"\nmetric = "uncertainty_auroc"\nmin_lower = 0\n'
    )
    with pytest.raises(ChartscoreError) as raised:
        evaluate(shared, auroc)
    assert raised.value.code is ErrorCode.GATE_METRIC_MISSING
    assert raised.value.__context__ is None
    label = parse_gates(
        '[[gate]]\nslice = "field:hx.smoking"\nmetric = "sensitivity"\nlabel = "current"\n'
        "min_lower = 0\n"
    )
    (result,) = evaluate(shared, label).results
    assert result.observed is not None
