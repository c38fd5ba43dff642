"""The exact false-pass rate of a gate on a field slice (docs/compare.md), by binomial sums.

A ``min_lower = t`` gate on ``n`` trials passes on the counts whose lower bound reaches ``t``;
with the true rate at ``t`` it passes falsely with probability ``P(X >= k0 | n, t)``, ``k0`` the
smallest such count. The documented table is recomputed here from Wilson's bounds and scipy's
binomial distribution (no simulation), and Clopper-Pearson's interval, which
``--gate-interval exact`` reads, is checked never to exceed the nominal level.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from chartscore import GoldField, Prediction, score
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.stats.binomial import wilson_interval
from chartscore.stats.clopper_pearson import clopper_pearson, widest_clopper_pearson
from chartscore.stats.clustered import CONFIDENCE_LEVELS, Z_BY_CONFIDENCE

COMPARE = Path(__file__).resolve().parent.parent / "docs" / "compare.md"
THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99)
MAX_TRIALS = 1000


def worst_false_pass(lower_bounds: list[np.ndarray], threshold: float) -> tuple[float, int]:
    """The largest false-pass rate of ``min_lower = threshold`` over n = 1..len, and its n."""
    worst = (0.0, 0)
    for n, lower in enumerate(lower_bounds, start=1):
        first = int(np.searchsorted(lower, threshold, side="left"))  # lower bounds rise with k
        if first > n:
            continue
        rate = float(binom.sf(first - 1, n, threshold))
        if rate > worst[0]:
            worst = (rate, n)
    return worst


def documented_rows() -> dict[str, list[str]]:
    text = COMPARE.read_text(encoding="utf-8")
    rows = {}
    for level in ("0.90", "0.95", "0.99"):
        found = re.search(rf"^\| {re.escape(level)} \| [^|]+ \|(.*)\|$", text, re.MULTILINE)
        assert found is not None, level
        rows[level] = [cell.strip() for cell in found.group(1).split("|")]
    return rows


@pytest.mark.parametrize("level", CONFIDENCE_LEVELS)
def test_the_documented_false_pass_rates_of_wilson_gates(level: float) -> None:
    z = Z_BY_CONFIDENCE[level]
    bounds = [
        np.array([wilson_interval(k, n, z)[0] for k in range(n + 1)])  # type: ignore[index]
        for n in range(1, MAX_TRIALS + 1)
    ]
    cells = documented_rows()[f"{level:.2f}"]
    assert len(cells) == len(THRESHOLDS)
    for threshold, cell in zip(THRESHOLDS, cells, strict=True):
        rate, trials = worst_false_pass(bounds, threshold)
        assert cell == f"{100 * rate:.2f}% ({trials})", (level, threshold)
    # Near the usual thresholds Wilson's error exceeds the nominal one at 0.90 and 0.95.
    nominal = (1 - level) / 2
    worst = max(worst_false_pass(bounds, t)[0] for t in (0.8, 0.9))
    assert (worst > nominal) == (level != 0.99)


def test_a_max_upper_gate_mirrors_a_min_lower_gate() -> None:
    # Wilson's interval is symmetric in successes and failures: a max_upper gate at 1 - t on
    # error counts errs exactly as a min_lower gate at t does on successes.
    for n in (7, 40, 333):
        for k in range(n + 1):
            _, high = wilson_interval(k, n)  # type: ignore[misc]
            mirror = wilson_interval(n - k, n)
            assert mirror is not None
            assert high == pytest.approx(1 - mirror[0], abs=1e-15)


@pytest.mark.parametrize("level", CONFIDENCE_LEVELS)
@pytest.mark.parametrize("trials", [1, 7, 25, 60])
def test_clopper_pearson_never_passes_falsely_beyond_its_level(level: float, trials: int) -> None:
    z = Z_BY_CONFIDENCE[level]
    lower = np.array([clopper_pearson(k, trials, z)[0] for k in range(trials + 1)])  # type: ignore[index]
    nominal = (1 - level) / 2
    for threshold in (*THRESHOLDS, 0.02, 0.3):
        first = int(np.searchsorted(lower, threshold, side="left"))
        if first <= trials:
            assert binom.sf(first - 1, trials, threshold) <= nominal * (1 + 1e-9)
    # Its worst case is the nominal level exactly: at the threshold equal to a bound.
    worst = max(binom.sf(k - 1, trials, lower[k]) for k in range(1, trials + 1))
    assert worst == pytest.approx(nominal, rel=1e-9)


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (1, 1), (3, 10), (19, 20), (2, 100), (999, 1000), (4950, 5000)]
)
def test_clopper_pearson_matches_statsmodels(k: int, n: int) -> None:
    for level in CONFIDENCE_LEVELS:
        found = clopper_pearson(k, n, Z_BY_CONFIDENCE[level])
        expected = proportion_confint(k, n, alpha=1 - level, method="beta")
        assert found is not None
        assert found[0] == pytest.approx(expected[0], rel=1e-13, abs=1e-16)
        assert found[1] == pytest.approx(expected[1], rel=1e-13, abs=1e-16)
        # Rounded outward: never inside the exact bounds by more than rounding.
        assert found[0] <= expected[0] + 1e-15 and found[1] >= expected[1] - 1e-15


def test_clopper_pearson_edges_and_refusals() -> None:
    assert clopper_pearson(0, 0, Z_BY_CONFIDENCE[0.95]) is None
    low, high = clopper_pearson(0, 10, Z_BY_CONFIDENCE[0.95])  # type: ignore[misc]
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-13)
    assert clopper_pearson(10, 10, Z_BY_CONFIDENCE[0.95])[1] == 1.0  # type: ignore[index]
    for bad in ((-1, 3), (4, 3), (1.0, 3)):
        with pytest.raises(ValueError):
            clopper_pearson(*bad, Z_BY_CONFIDENCE[0.95])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        clopper_pearson(1, 3, 1.5)
    # Over ranges: the widest interval, at the two corners.
    z = Z_BY_CONFIDENCE[0.95]
    wide = widest_clopper_pearson((3, 5), (10, 20), z)
    assert wide == (clopper_pearson(3, 20, z)[0], clopper_pearson(5, 10, z)[1])  # type: ignore[index]
    assert widest_clopper_pearson((3, 5), (10, None), z)[0] == 0.0  # type: ignore[index]
    assert widest_clopper_pearson((0, 0), (0, 0), z) is None


def test_an_exact_gate_reads_clopper_pearson_on_field_slices_only() -> None:
    gold = [GoldField(f"c{i}", f"f.x{j}", "categorical", "a") for i in range(40) for j in range(3)]
    answers = [
        Prediction(f"c{i}", f"f.x{j}", "a" if (i + j) % 9 else "b")
        for i in range(40)
        for j in range(3)
    ]
    report = score(gold, answers)
    gates = parse_gates(
        '[[gate]]\nslice = "field:f.x0"\nmetric = "normalized_agreement"\nmin_lower = 0.7\n'
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.7\n'
    )
    wilson = evaluate(report, gates)
    exact = evaluate(report, gates, interval="exact")
    assert [r.interval for r in exact.results] == ["clopper-pearson", "clustered"]
    metric = report.by_field["f.x0"].metric("normalized_agreement")
    expected = clopper_pearson(metric.success_count, metric.total_count, Z_BY_CONFIDENCE[0.95])
    assert expected is not None and exact.results[0].observed == expected[0]
    assert exact.results[0].observed < wilson.results[0].observed  # type: ignore[operator]
    assert exact.results[1].observed == wilson.results[1].observed  # pooled: unchanged
    assert exact.gate_interval == "exact" and wilson.gate_interval == "wilson"
