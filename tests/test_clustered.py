"""Case-clustered statistics (docs/metrics.md, "Case-clustered intervals").

Published and hand-computed examples for each statistic, independent references
(statsmodels' Wilson interval on the effective sample size, scipy's chi-square), the
per-case sums of a scoring run against a route that scores every case on its own, and
the document checks that refuse an edited clustered figure.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2, norm
from scipy.stats import t as student
from statsmodels.stats.proportion import proportion_confint

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, compare, score
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.report import Report
from chartscore.scoring.scorer import Scorer
from chartscore.stats.binomial import Z95, wilson_interval
from chartscore.stats.clustered import (
    CONFIDENCE_LEVELS,
    MINORITY_CASES,
    Z_BY_CONFIDENCE,
    ClusterSums,
    PairedClusterSums,
    chi_square_1_survival,
    clustered_mcnemar_p,
    clustered_wilson,
    design_effect,
    difference_design_effect,
    durkalski_statistic,
    is_published_design_effect,
    mcnemar_design_effect,
    obuchowski_statistic,
    published_design_effect,
    worst_case_design_effect,
)
from chartscore.stats.paired import mcnemar

from helpers import SCHEMA, datasets, examples

# --------------------------------------------------------------------------- published examples

# Obuchowski (1998), the PET and SPECT thyroid data: per patient, (a, b, c, d) = both tests
# right, PET only, SPECT only, neither (as tabulated by the R package clust.bin.pair).
THYROIDS = list(
    zip(
        [0, 2, 3, 1, 2, 4, 3, 2, 1, 1, 2, 2, 3, 2, 0, 2, 2, 2, 2, 1, 2],
        [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
        strict=True,
    )
)


def thyroid_sums() -> PairedClusterSums:
    # baseline = PET, candidate = SPECT: d = c - b per patient.
    return PairedClusterSums.of((a + b + c + d, 1, c - b, (c - b) ** 2) for a, b, c, d in THYROIDS)


def test_obuchowski_reproduces_the_thyroid_example() -> None:
    # clust.bin.pair's documented result for Obuchowski's test: chi-square 2.8571, p 0.09097.
    statistic = obuchowski_statistic(thyroid_sums())
    assert statistic == Fraction(20, 7)
    assert round(float(statistic), 4) == 2.8571
    assert round(chi_square_1_survival(statistic), 5) == 0.09097


def test_durkalski_on_the_thyroid_data_by_hand() -> None:
    # w = (b - c) / n per patient: -2/3, -1/3, -1/3, 1/2, -1, -1/3 and zeros;
    # (sum w)^2 = (13/6)^2 = 169/36 and sum w^2 = 73/36, so X2 = 169/73.
    assert durkalski_statistic(thyroid_sums()) == Fraction(169, 73)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=40))
@settings(max_examples=examples(100), deadline=None)
def test_with_one_trial_per_case_the_clustered_tests_are_mcnemars(pairs: list) -> None:
    # Each case one paired trial: Durkalski's statistic is McNemar's (b - c)^2 / (b + c),
    # the design effects are exactly 1 and the clustered p-value is the plain test's.
    b = sum(1 for x, y in pairs if x and not y)
    c = sum(1 for x, y in pairs if y and not x)
    sums = PairedClusterSums.of((1, 1, y - x, (y - x) ** 2) for x, y in pairs)
    if b + c == 0:
        assert durkalski_statistic(sums) is None
        return
    assert durkalski_statistic(sums) == Fraction((b - c) ** 2, b + c)
    if b != c:
        assert mcnemar_design_effect(b, c, sums) == 1
    n = len(pairs)
    if n > 1 and n * (b + c) != (c - b) ** 2:
        assert difference_design_effect(b, c, n, sums) == 1


def test_chi_square_survival_matches_scipy() -> None:
    for x in [Fraction(k, 7) for k in range(1, 300, 13)] + [Fraction(3841, 1000), Fraction(60)]:
        expected = chi2.sf(float(x), 1)
        assert chi_square_1_survival(x) == pytest.approx(expected, rel=1e-13, abs=0)
    assert chi_square_1_survival(Fraction(0)) == 1.0
    assert chi_square_1_survival(Fraction(10**6)) == 0.0


# --------------------------------------------------------------------------- one rate


def naive_design_effect(per_case: list[tuple[int, int]]) -> float | None:
    """The design effect of docs/metrics.md from the cases directly, in floats."""
    used = [(y, m) for y, m in per_case if m]
    n = sum(m for _, m in used)
    k = sum(y for y, _ in used)
    if n == 0:
        return None
    worst = sum(m * m for _, m in used) / n
    if len(used) < 2 or k in (0, n):
        return worst
    p = k / n
    c = len(used)
    v_case = c / (c - 1) * sum((y - p * m) ** 2 for y, m in used) / n**2
    v_row = n / (n - 1) * p * (1 - p) / n
    # The charts where the less common outcome occurs: fewer than 10, and the data
    # cannot say the rows of a chart are independent.
    minority = min(sum(1 for y, _ in used if y), sum(1 for y, m in used if y < m))
    return max(v_case / v_row, worst) if minority < 10 else v_case / v_row


def sums_of(per_case: list[tuple[int, int]]) -> tuple[int, int, ClusterSums]:
    used = [(y, m) for y, m in per_case if m]
    return (
        sum(y for y, _ in used),
        sum(m for _, m in used),
        ClusterSums(
            len(used),
            sum(y * y for y, _ in used),
            sum(y * m for y, m in used),
            sum(m * m for _, m in used),
            sum(1 for y, _ in used if y),
            sum(1 for y, m in used if y < m),
        ),
    )


cases_strategy = st.lists(
    st.integers(1, 12).flatmap(lambda m: st.tuples(st.integers(0, m), st.just(m))),
    min_size=1,
    max_size=40,
)


@given(cases_strategy)
@settings(max_examples=examples(200), deadline=None)
def test_the_exact_design_effect_is_the_documented_one(per_case: list[tuple[int, int]]) -> None:
    k, n, sums = sums_of(per_case)
    exact = design_effect(k, n, sums)
    expected = naive_design_effect(per_case)
    assert exact is not None and expected is not None
    assert float(exact) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(cases_strategy)
@settings(max_examples=examples(200), deadline=None)
def test_a_clustered_interval_is_a_wilson_interval_on_the_effective_sample(
    per_case: list[tuple[int, int]],
) -> None:
    k, n, sums = sums_of(per_case)
    shown = published_design_effect(design_effect(k, n, sums))
    assert shown is not None and is_published_design_effect(shown)
    interval = clustered_wilson(k, n, shown, Z95, cases=sums.cases)
    plain = wilson_interval(k, n)
    assert interval is not None and plain is not None
    assert interval[0] <= plain[0] and plain[1] <= interval[1]  # never narrower
    if sums.cases == n:
        assert interval == plain  # one row a chart: the rows are the charts
        return
    if sums.cases < 2:
        assert interval == (0.0, 1.0)  # one chart: no spread over charts to estimate
        return
    # statsmodels' Wilson interval with counts and trials divided by the design effect, at
    # the level whose normal quantile is scipy's Student t with C - 1 degrees of freedom.
    alpha = 2 * norm.sf(student.ppf(0.975, sums.cases - 1))
    low, high = proportion_confint(k / shown, n / shown, alpha=alpha, method="wilson")
    assert interval[0] == pytest.approx(min(low, plain[0]), abs=1e-9)
    assert interval[1] == pytest.approx(max(high, plain[1]), abs=1e-9)


@given(st.fractions(min_value=0, max_value=10**6))
@settings(max_examples=examples(300), deadline=None)
def test_published_design_effects_round_up_to_two_digits(exact: Fraction) -> None:
    shown = published_design_effect(exact)
    assert shown is not None and is_published_design_effect(shown)
    assert Fraction(Decimal(repr(shown))) >= max(exact, Fraction(1))
    # The smallest such grid point: one step lower is below the exact value.
    text = Decimal(repr(shown)).normalize()
    if shown > 1:
        _, digits, exponent = text.as_tuple()
        value = int("".join(map(str, digits)))
        lower = Fraction(value - 1) * Fraction(10) ** exponent  # type: ignore[operator]
        if len(str(value - 1)) < len(str(value)):  # 10 -> 9.9
            lower = Fraction(10 * value - 1) * Fraction(10) ** (exponent - 1)  # type: ignore[operator]
        assert lower < exact


def test_published_design_effect_examples() -> None:
    cases = [
        (Fraction(1, 2), 1.0),
        (Fraction(1), 1.0),
        (Fraction(101, 100), 1.1),
        (Fraction(13, 10), 1.3),
        (Fraction(1301, 1000), 1.4),
        (Fraction(995, 100), 10.0),
        (Fraction(1234), 1300.0),
    ]
    for exact, shown in cases:
        assert published_design_effect(exact) == shown
    assert published_design_effect(None) is None
    for bad in (0.99, 1.25, float("inf"), float("nan"), 3):
        assert not is_published_design_effect(bad)  # type: ignore[arg-type]


def test_the_worst_case_stands_in_where_the_data_cannot_estimate() -> None:
    # One case, or a rate at 0 or 1: every row of a case agreeing, sum m^2 / M.
    one_case = ClusterSums(1, 16, 20, 25, 1, 1)  # y = 4 of m = 5
    assert design_effect(4, 5, one_case) == worst_case_design_effect(5, 25) == 5
    all_right = ClusterSums(3, 4 + 9 + 16, 4 + 9 + 16, 4 + 9 + 16, 3, 0)  # m = y = 2, 3, 4
    assert design_effect(9, 9, all_right) == Fraction(29, 9)
    assert design_effect(0, 0, ClusterSums(0, 0, 0, 0, 0, 0)) is None


def cohort_sums(failing: int, charts: int = 30, rows: int = 4) -> tuple[int, int, ClusterSums]:
    # ``charts`` charts of ``rows`` rows; ``failing`` of them fail one row, the rest none.
    return sums_of([(rows - 1, rows)] * failing + [(rows, rows)] * (charts - failing))


def test_fewer_than_ten_charts_with_a_failure_take_at_least_the_worst_case() -> None:
    # 30 charts of 4 rows, the failures in 9 of them: 111/120, row-wise spread only. The
    # estimate says the rows are independent (each failing chart fails once); with 9 charts
    # behind the failures the data cannot say so, and the worst case, 16/4 = 4, stands in.
    assert MINORITY_CASES == 10
    k, n, sums = cohort_sums(9)
    assert (k, n, sums.minority_cases) == (111, 120, 9)
    assert design_effect(k, n, sums) == worst_case_design_effect(n, sums.sum_mm) == 4
    # With the failures in 10 charts the estimate is used: here below 1 (published as 1).
    k, n, sums = cohort_sums(10)
    estimate = design_effect(k, n, sums)
    assert estimate is not None and estimate < 1
    assert published_design_effect(estimate) == 1.0


def test_the_minority_is_whichever_outcome_fewer_charts_hold() -> None:
    # 30 charts of 4 rows; 9 charts right on one row and wrong on three: successes in only
    # 9 charts, whatever the rates by rows.
    k, n, sums = sums_of([(1, 4)] * 9 + [(0, 4)] * 21)
    assert (sums.success_cases, sums.failure_cases, sums.minority_cases) == (9, 30, 9)
    assert design_effect(k, n, sums) == 4


def test_z_values_are_the_documented_quantiles() -> None:
    from statistics import NormalDist

    assert Z_BY_CONFIDENCE[0.95] == Z95
    for level in CONFIDENCE_LEVELS:
        assert Z_BY_CONFIDENCE[level] == NormalDist().inv_cdf(1 - (1 - level) / 2)
    assert Z95 == 1.9599639845400536


# --------------------------------------------------------------------------- the scorer's sums


def per_case_route(gold: list[GoldField], predictions: list[Prediction]) -> dict:
    """Each pooled slice's per-case (successes, trials) by scoring every case on its own."""
    by_case_gold: dict[str, list[GoldField]] = defaultdict(list)
    by_case_predictions: dict[str, list[Prediction]] = defaultdict(list)
    for row in gold:
        by_case_gold[row.case_id].append(row)
    for answer in predictions:
        by_case_predictions[answer.case_id].append(answer)
    per_slice: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for case_id, rows in by_case_gold.items():
        alone = score(rows, by_case_predictions[case_id], schema=SCHEMA)
        parts = [("overall", alone.overall), *alone.by_field_type.items()]
        for name, part in parts:
            for metric, result in part.metrics.items():
                per_slice[name, metric].append((result.success_count, result.total_count))
    return per_slice


@given(datasets())
@settings(max_examples=examples(60), deadline=None)
def test_the_scorers_per_case_sums_equal_scoring_each_case_alone(dataset: Any) -> None:
    gold, predictions = dataset
    scorer = Scorer(SCHEMA)
    for row in gold:
        scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
    scorer.close_gold()
    for answer in predictions:
        scorer.add_prediction(answer.case_id, answer.field_id, answer.value, answer.is_supported)
    clusters = scorer.partial().clusters
    expected = per_case_route(gold, predictions)
    for (name, metric), per_case in expected.items():
        got = clusters[name][metric]
        _, _, want = sums_of(per_case)
        assert (got.cases, got.sum_mm) == (want.cases, want.sum_mm), (name, metric)
        if metric == "majority_baseline":  # successes depend on the whole gold set
            assert got.sum_yy is None and got.sum_ym is None and got.minority_cases is None
        else:
            assert got == want, (name, metric)


def test_one_row_per_case_gives_the_plain_wilson_interval() -> None:
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", "never") for i in range(30)]
    answers = [Prediction(f"c{i}", "hx.smoking", "never" if i % 3 else "former") for i in range(30)]
    report = score(gold, answers)
    metric = report.overall.metric("normalized_agreement")
    assert metric.design_effect == 1.0 and metric.clustered_interval == metric.interval
    assert report.by_field["hx.smoking"].metric("normalized_agreement").clustering is None


def correlated_cohort() -> tuple[list[GoldField], list[Prediction]]:
    # 20 cases x 10 fields; a case is either answered right on every field or on none.
    gold, answers = [], []
    for case in range(20):
        for field in range(10):
            field_id = f"f.x{field}"
            gold.append(GoldField(f"c{case}", field_id, "categorical", "a"))
            answers.append(Prediction(f"c{case}", field_id, "a" if case % 4 else "b"))
    return gold, answers


def test_correlated_rows_widen_the_pooled_interval() -> None:
    gold, answers = correlated_cohort()
    metric = score(gold, answers).overall.metric("normalized_agreement")
    assert (metric.success_count, metric.total_count) == (150, 200)
    # Every row of a case agrees: the design effect is about the rows per case (10).
    assert metric.design_effect is not None and 9 <= metric.design_effect <= 11
    assert metric.clustered_interval is not None and metric.interval is not None
    assert metric.clustered_interval[0] < metric.interval[0] - 0.1


def test_a_gate_on_a_pooled_slice_reads_the_clustered_interval() -> None:
    gold, answers = correlated_cohort()
    report = score(gold, answers)
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.65\n'
        '[[gate]]\nslice = "field:f.x0"\nmetric = "normalized_agreement"\nmin_lower = 0.5\n'
    )
    wilson_lower = report.overall.metric("normalized_agreement").interval[0]  # type: ignore[index]
    assert wilson_lower > 0.65  # the row-wise interval would pass
    results = evaluate(report, gates)
    assert [r.interval for r in results.results] == ["clustered", "wilson"]
    assert not results.results[0].passed
    assert (
        results.results[0].observed
        == report.overall.metric("normalized_agreement").clustered_interval[0]
    )  # type: ignore[index]
    # At another level, recomputed from the counts and the design effect.
    wider = evaluate(report, gates, confidence=0.99).results[0].observed
    assert wider is not None and wider < results.results[0].observed  # type: ignore[operator]


# --------------------------------------------------------------------------- documents


def edited(document: dict, path: tuple, value: object) -> str:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(document)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("overall", "normalized_agreement", "clustered_interval"), [0.95, 0.99]),
        (("overall", "normalized_agreement", "design_effect"), 1.0),
        (("overall", "normalized_agreement", "design_effect"), 0.5),
        (("overall", "normalized_agreement", "design_effect"), 9.25),
        (("overall", "normalized_agreement", "design_effect"), None),
        (("by_field", "f.x0", "normalized_agreement", "design_effect"), 1.0),
        (("confidence",), 0.9),
        (("confidence",), 0.8),
    ],
)
def test_an_edited_clustered_figure_is_refused(path: tuple, value: object) -> None:
    gold, answers = correlated_cohort()
    text = score(gold, answers).to_json()
    assert Report.from_json(text).to_json() == text
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(edited(json.loads(text), path, value))
    assert caught.value.code is ErrorCode.INVALID_REPORT


def paired_cohort() -> tuple[list[GoldField], list[Prediction], list[Prediction]]:
    gold, first = correlated_cohort()
    second = [
        Prediction(p.case_id, p.field_id, "a" if int(p.case_id[1:]) % 5 else "b") for p in first
    ]
    return gold, first, second


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("overall", "normalized_agreement", "difference", "clustered_interval"), [-0.5, 0.5]),
        (("overall", "normalized_agreement", "difference", "design_effect"), 1.0),
        (("overall", "normalized_agreement", "clustered_mcnemar", "p"), 0.001),
        (("overall", "normalized_agreement", "clustered_mcnemar", "design_effect"), 1.0),
        (("overall", "normalized_agreement", "candidate", "clustered_interval"), [0.9, 0.95]),
    ],
)
def test_an_edited_comparison_fails_gate_with_invalid_report(
    path: tuple, value: object, tmp_path: Any
) -> None:
    from chartscore.cli import main

    gold, first, second = paired_cohort()
    text = compare(gold, first, second).to_json()
    assert Comparison.from_json(text).to_json() == text
    document = tmp_path / "comparison.json"
    document.write_text(edited(json.loads(text), path, value), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.5\n",
        encoding="utf-8",
    )
    import io

    out, err = io.StringIO(), io.StringIO()
    status = main(["gate", str(document), "--gates", str(gates)], stdout=out, stderr=err)
    assert status == 1 and out.getvalue() == ""
    assert "invalid_report" in err.getvalue()


def test_the_clustered_comparison_figures_follow_the_cases() -> None:
    gold, first, second = paired_cohort()
    metric = compare(gold, first, second).overall.paired["normalized_agreement"]
    b, c = metric.baseline_only, metric.candidate_only
    # Cases 5, 10, 15 (only the candidate wrong), 4, 8, 12, 16 (only the baseline wrong),
    # case 0 wrong for both; ten fields a case.
    assert (b, c) == (30, 40)
    clustering = metric.clustering
    assert clustering is not None and clustering.design_effect is not None
    assert clustering.design_effect >= 9  # ten fields of a case move together
    assert clustering.interval is not None and metric.interval is not None
    assert (
        clustering.interval[0] < metric.interval[0] and metric.interval[1] < clustering.interval[1]
    )
    # Durkalski: each discordant case weighs the same, w = +-1: X2 = (4 - 3)^2 / 7, against
    # McNemar's (40 - 30)^2 / 70 = 10 / 7: a design effect of exactly 10.
    assert clustering.mcnemar_design_effect == 10.0
    assert clustering.mcnemar_design_effect is not None
    statistic = Fraction((c - b) ** 2, b + c) / Fraction(clustering.mcnemar_design_effect)
    assert clustering.p == max(mcnemar(b, c)[1], chi_square_1_survival(statistic))
    assert clustering.p == clustered_mcnemar_p(b, c, clustering.mcnemar_design_effect)
    assert statistic == Fraction(1, 7)
    assert clustering.p > 0.4 > metric.mid_p  # type: ignore[operator]


def test_confidence_is_recorded_and_used() -> None:
    gold, answers = correlated_cohort()
    wide = score(gold, answers, confidence=0.99)
    narrow = score(gold, answers, confidence=0.9)
    assert json.loads(wide.to_json())["confidence"] == 0.99
    w = wide.overall.metric("normalized_agreement")
    n = narrow.overall.metric("normalized_agreement")
    assert w.interval[0] < n.interval[0]  # type: ignore[index]
    assert w.design_effect == n.design_effect  # the design effect is not a function of z
    assert Report.from_json(wide.to_json()).to_json() == wide.to_json()
    for bad in (0.95000001, "0.95", 95, True, None):
        with pytest.raises(ChartscoreError) as caught:
            score(gold, answers, confidence=bad)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE
    assert math.isclose(Z_BY_CONFIDENCE[0.99], 2.5758293035489004, rel_tol=1e-15)
