"""``chartscore gate`` on an agreement document: hand-built documents, hand-computed bounds.

The document is built from counts and coefficients chosen by hand, written and read back
(so it is exactly what ``gate`` loads); each gate's figure is checked against Wilson's
bound computed here from its formula, or the coefficient's interval as written.
"""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chartscore.cli import main
from chartscore.documents.agreement import (
    Agreement,
    Coefficient,
    FieldAgreement,
    GoldAgreement,
    PairAgreement,
    RaterCounts,
    count_result,
)
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.errors import ChartscoreError
from chartscore.stats.clustered import z_for

Z = 1.959963984540054
"""The 97.5% normal quantile, for the hand formula."""
DOCUMENT_Z = z_for(0.95)


def wilson_lower(k: int, n: int, z: float = Z) -> float:
    """Wilson's lower bound from its formula (Wilson 1927), independent of chartscore."""
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def document(*, gold: bool = True, units: int = 120) -> Agreement:
    """Two raters, ``a`` and ``b``, on a categorical field and a text field."""
    counts = {name: RaterCounts(units, 0, 0, 0) for name in ("a", "b")}
    smoking = FieldAgreement(
        "categorical",
        units,
        counts,
        (
            PairAgreement(
                ("a", "b"),
                (0, 1),
                count_result(units - 12, units, DOCUMENT_Z),
                Coefficient(0.8, (0.7, 0.9), units, None),
            ),
        ),
        Coefficient(0.79, (0.69, 0.89), units, 2 * units),
        Coefficient(0.85, (0.78, 0.92), units, 2 * units),
        Coefficient(0.79, (0.68, 0.9), units, 2 * units),
    )
    note = FieldAgreement(
        "text",
        units,
        counts,
        (PairAgreement(("a", "b"), (0, 1), count_result(units - 30, units, DOCUMENT_Z), None),),
        None,
        None,
        None,
    )
    pooled = (
        PairAgreement(
            ("a", "b"),
            (0, 1),
            count_result(2 * units - 42, 2 * units, None),
            Coefficient(0.8, None, units, None),
        ),
    )
    found = None
    if gold:
        by_field = {
            "note": {
                "a": {m: count_result(100, 120, DOCUMENT_Z) for m in ("exact", "normalized")},
                "b": {m: count_result(90, 120, DOCUMENT_Z) for m in ("exact", "normalized")},
            },
            "smoking": {
                "a": {m: count_result(110, 120, DOCUMENT_Z) for m in ("exact", "normalized")},
                "b": {m: count_result(115, 120, DOCUMENT_Z) for m in ("exact", "normalized")},
            },
        }
        by_field = {
            field_id: {
                rater: {f"{m}_agreement": r for m, r in results.items()}
                for rater, results in raters.items()
            }
            for field_id, raters in by_field.items()
        }
        overall = {
            "a": {m: count_result(210, 240, DOCUMENT_Z) for m in GOLD},
            "b": {m: count_result(205, 240, DOCUMENT_Z) for m in GOLD},
        }
        found = GoldAgreement(overall, by_field)
    built = Agreement(("a", "b"), 0.95, {"note": note, "smoking": smoking}, pooled, found)
    return Agreement.from_json(built.to_json())  # exactly what a file holds


GOLD = ("exact_agreement", "normalized_agreement")
SMOKING = "field:smoking"


def gate_text(slice_: str, metric: str, rule: str, threshold: float, label: str = "") -> str:
    extra = f'label = "{label}"\n' if label else ""
    return f'[[gate]]\nslice = "{slice_}"\nmetric = "{metric}"\n{extra}{rule} = {threshold}\n'


def check(text: str, doc: Agreement | None = None) -> tuple[float | None, str, bool]:
    results = evaluate(doc or document(), parse_gates(text))
    (result,) = results.results
    return result.observed, result.reason or result.interval, result.passed


@pytest.mark.parametrize(
    ("slice_", "metric", "label", "k", "n"),
    [
        ("field:smoking", "pair_agreement", "a~b", 108, 120),
        ("field:note", "pair_agreement", "a~b", 90, 120),
        ("field:smoking", "gold_normalized_agreement", "b", 115, 120),
        ("field:note", "gold_exact_agreement", "a", 100, 120),
    ],
)
def test_a_field_rate_reads_wilsons_lower_bound_of_its_counts(
    slice_: str, metric: str, label: str, k: int, n: int
) -> None:
    bound = wilson_lower(k, n)
    observed, kind, passed = check(gate_text(slice_, metric, "min_lower", 0.5, label))
    assert kind == "wilson" and passed
    assert observed == pytest.approx(bound, abs=1e-12)
    just_above = math.ceil(bound * 1000) / 1000
    assert not check(gate_text(slice_, metric, "min_lower", just_above, label))[2]


@pytest.mark.parametrize(
    ("metric", "label", "k", "n"),
    [
        ("gold_normalized_agreement", "a", 210, 240),
        ("gold_exact_agreement", "b", 205, 240),
        ("ceiling_best", "", 210, 240),  # a: 210/240 beats b: 205/240
        ("ceiling_median", "", 210, 240),  # two raters: the better of the two middle ones
    ],
)
def test_an_overall_rate_reads_the_pooled_wilson_bound(
    metric: str, label: str, k: int, n: int
) -> None:
    observed, kind, passed = check(gate_text("overall", metric, "min_lower", 0.8, label))
    assert kind == "pooled wilson"
    assert observed == pytest.approx(wilson_lower(k, n), abs=1e-12)
    assert passed == (wilson_lower(k, n) >= 0.8)


@pytest.mark.parametrize(
    ("metric", "label", "interval", "kind"),
    [
        ("pair_kappa", "a~b", (0.7, 0.9), "kappa"),
        ("fleiss_kappa", "", (0.69, 0.89), "gwet"),
        ("ac1", "", (0.78, 0.92), "gwet"),
        ("alpha", "", (0.68, 0.9), "jackknife"),
    ],
)
def test_a_coefficient_reads_its_interval_as_written(
    metric: str, label: str, interval: tuple[float, float], kind: str
) -> None:
    lower, upper = interval
    assert check(gate_text("field:smoking", metric, "min_lower", lower, label)) == (
        lower,
        kind,
        True,
    )
    assert not check(gate_text("field:smoking", metric, "min_lower", lower + 0.001, label))[2]
    assert check(gate_text("field:smoking", metric, "min_upper", upper, label))[2]
    assert check(gate_text("field:smoking", metric, "min_lower", -0.5, label))[2]  # from -1


@pytest.mark.parametrize(
    ("metric", "label"),
    [("pair_kappa", "a~b"), ("fleiss_kappa", ""), ("ac1", ""), ("alpha", "")],
)
def test_a_coefficient_gated_at_another_level_than_written_fails(metric: str, label: str) -> None:
    # Its interval is the document's 95% one and cannot be recomputed (no table): read as a
    # 99% bound it would pass a gate the 99% interval fails. A rate is recomputed.
    text = gate_text("field:smoking", metric, "min_lower", -0.5, label)
    assert check(text)[2]
    for level in (0.9, 0.99):
        (result,) = evaluate(document(), parse_gates(text), confidence=level).results
        assert (result.observed, result.reason, result.passed) == (
            None,
            "written at another level",
            False,
        )
    rate = gate_text("field:smoking", "pair_agreement", "min_lower", 0.5, "a~b")
    (result,) = evaluate(document(), parse_gates(rate), confidence=0.99).results
    assert result.passed and result.observed == pytest.approx(wilson_lower(108, 120, z_for(0.99)))


def test_a_coefficient_from_fewer_than_100_units_cannot_pass() -> None:
    observed, reason, passed = check(
        gate_text("field:smoking", "fleiss_kappa", "min_lower", -1, ""), document(units=99)
    )
    assert (observed, reason, passed) == (None, "too few pairs", False)


def test_a_gate_on_a_metric_the_document_lacks_is_gate_metric_missing() -> None:
    cases = [
        gate_text("field:note", "pair_kappa", "min_lower", 0.5, "a~b"),  # text: no kappa
        gate_text("field:note", "fleiss_kappa", "min_lower", 0.5),
        gate_text("field:smoking", "ac2", "min_lower", 0.5),  # categorical: ac1
        gate_text("field:smoking", "pair_agreement", "min_lower", 0.5, "b~a"),  # not its order
        gate_text("field:smoking", "gold_exact_agreement", "min_lower", 0.5, "c"),
        gate_text("overall", "fleiss_kappa", "min_lower", 0.5),  # no pooled coefficient
        gate_text("overall", "normalized_agreement", "min_lower", 0.5),  # a report's metric
    ]
    for text in cases:
        with pytest.raises(ChartscoreError) as caught:
            check(text)
        assert caught.value.code == "gate_metric_missing", text
    no_gold = gate_text("overall", "ceiling_median", "min_lower", 0.5)
    with pytest.raises(ChartscoreError, match="gate_metric_missing"):
        check(no_gold, document(gold=False))


def test_did_you_mean_names_a_metric_never_a_rater() -> None:
    with pytest.raises(ChartscoreError) as caught:
        check(gate_text("field:smoking", "fleiss_kapa", "min_lower", 0.5))
    assert caught.value.code == "invalid_gate" and caught.value.suggestion == "fleiss_kappa"
    with pytest.raises(ChartscoreError) as caught:
        check(gate_text("overall", "normalized_agreement", "min_lower", 0.5))
    assert caught.value.suggestion == "gold_normalized_agreement"
    with pytest.raises(ChartscoreError) as caught:
        check(gate_text("field:smoking", "gold_exact_agreement", "min_lower", 0.5, "aa"))
    assert caught.value.suggestion is None and "aa" not in str(caught.value)
    with pytest.raises(ChartscoreError) as caught:
        check(gate_text("field:smokng", "ac1", "min_lower", 0.5))
    assert caught.value.code == "gate_slice_missing"
    assert caught.value.suggestion == "field:smoking"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (gate_text("field:smoking", "pair_kappa", "min_lower", 0.5), "missing_key"),
        (gate_text("field:smoking", "pair_kappa", "min_lower", 0.5, "a"), "invalid_gate"),
        (gate_text("overall", "pair_agreement", "min_lower", 0.5, "a~b"), "invalid_gate"),
        (gate_text(SMOKING, "gold_exact_agreement", "min_lower", 0.5, "a b"), "invalid_gate"),
        (gate_text(SMOKING, "pair_agreement", "max_upper", 0.5, "a~b"), "invalid_gate_rule"),
        (gate_text("field:smoking", "pair_agreement", "min_lower", -0.5, "a~b"),
         "invalid_gate_threshold"),
        # A label on a metric that takes none: a rater's name, perhaps (never echoed).
        (gate_text("overall", "ceiling_best", "min_lower", 0.5, "jane.doe"), "invalid_gate"),
        (gate_text(SMOKING, "fleiss_kappa", "min_lower", 0.5, "jane.doe"), "invalid_gate"),
        (gate_text("overall", "sensitivity", "min_lower", 0.5, "jane.doe"), "invalid_gate"),
    ],
)  # fmt: skip
def test_malformed_agreement_gates_are_refused_without_echoing_labels(text: str, code: str) -> None:
    with pytest.raises(ChartscoreError) as caught:
        parse_gates(text)
    assert caught.value.code == code
    for label in ("a~b", "a b", "jane"):
        assert label not in str(caught.value)


def test_a_difference_rule_needs_a_comparison() -> None:
    text = '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
    text += "min_difference_lower = -0.1\n"
    with pytest.raises(ChartscoreError, match="gate_needs_comparison"):
        check(text)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_the_cli_gates_an_agreement_document_with_junit(tmp_path: Path) -> None:
    path = tmp_path / "agreement.json"
    path.write_text(document().to_json() + "\n", encoding="utf-8")
    passing = tmp_path / "pass.toml"
    passing.write_text(
        gate_text("field:smoking", "pair_kappa", "min_lower", 0.6, "a~b")
        + gate_text("overall", "ceiling_median", "min_lower", 0.8),
        encoding="utf-8",
    )
    status, out, err = run(["gate", str(path), "--gates", str(passing)])
    assert (status, err) == (0, "")
    assert "gates passed: 2 of 2 passed" in out and "pooled wilson: " in out
    failing = tmp_path / "fail.toml"
    failing.write_text(
        gate_text("field:smoking", "fleiss_kappa", "min_lower", 0.75), encoding="utf-8"
    )
    junit = tmp_path / "gates.xml"
    status, out, err = run(["gate", str(path), "--gates", str(failing), "--junit", str(junit)])
    assert (status, err) == (3, "")
    assert "0.6900" in out and "FAIL" in out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    typo = tmp_path / "typo.toml"
    typo.write_text(gate_text("field:smoking", "ac_1", "min_lower", 0.5), encoding="utf-8")
    status, out, err = run(["gate", str(path), "--gates", str(typo)])
    assert status == 1 and out == ""
    assert err.startswith("chartscore: error: invalid_gate") and "did you mean ac1" in err
    missing = tmp_path / "missing.toml"
    missing.write_text(gate_text("overall", "fleiss_kappa", "min_lower", 0.5), encoding="utf-8")
    status, out, err = run(["gate", str(path), "--gates", str(missing)])
    assert status == 1 and "gate_metric_missing" in err and err.count("\n") == 1


def test_gate_interval_exact_reads_clopper_pearson_on_field_rates_only() -> None:
    from statsmodels.stats.proportion import proportion_confint

    text = gate_text(SMOKING, "pair_agreement", "min_lower", 0.5, "a~b")
    text += gate_text("overall", "ceiling_best", "min_lower", 0.5)
    field, overall = evaluate(document(), parse_gates(text), interval="exact").results
    lower, _ = proportion_confint(108, 120, alpha=0.05, method="beta")
    assert field.interval == "clopper-pearson"
    assert field.observed == pytest.approx(lower, abs=1e-9)
    assert overall.interval == "pooled wilson"
    assert overall.observed == pytest.approx(wilson_lower(210, 240), abs=1e-12)
