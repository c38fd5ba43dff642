"""Error magnitude for numbers and dates (docs/metrics.md, "Error magnitude").

Checked against numpy, statistics, scikit-learn's mean_absolute_error and statsmodels'
zconfint_mean on the same differences, the interval alpha and its jackknife against the
``krippendorff`` package, the stand-in baselines (a perfect system and a constant answer
at the median), exact merging of partial tallies, and a loader that recomputes every figure.
"""

from __future__ import annotations

import json
import math
import statistics
from datetime import date
from decimal import Decimal
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student
from sklearn.metrics import mean_absolute_error
from statsmodels.stats.weightstats import DescrStatsW

from chartscore import ChartscoreError, ErrorCode, FieldType, GoldField, Prediction, Report, score
from chartscore.records.schema import Schema
from chartscore.scoring.partial import merge_all
from chartscore.scoring.scorer import Scorer
from chartscore.stats.binomial import Z95
from chartscore.stats.magnitude import ErrorSums, exact_decimal, median, parse_exact_decimal

from helpers import examples

numbers = st.one_of(
    st.integers(-500, 500),
    st.decimals(min_value=-100, max_value=100, places=2, allow_nan=False, allow_infinity=False),
)
MISSING = "(missing)"
answers = st.one_of(numbers, st.just("12 mg"), st.none(), st.just(MISSING))
number_rows = st.lists(st.tuples(st.one_of(numbers, st.none()), answers), min_size=1, max_size=30)


def _score(rows: list[tuple[object, object]], field_type: str = "number") -> Report:
    gold = [GoldField(f"c{i}", "f", field_type, g) for i, (g, _) in enumerate(rows)]
    predictions = [Prediction(f"c{i}", "f", a) for i, (_, a) in enumerate(rows) if a != MISSING]
    return score(gold, predictions)


@settings(max_examples=examples(100), deadline=None)
@given(number_rows)
def test_number_errors_equal_numpy(rows: list[tuple[object, object]]) -> None:
    report = _score(rows)
    part = report.by_field["f"]
    found = part.magnitude
    assert found is not None and found.unit == "field"
    pairs = [
        (Fraction(g), Fraction(a))  # type: ignore[arg-type]
        for g, a in rows
        if g is not None and isinstance(a, int | Decimal)
    ]
    d = np.array([float(a - g) for g, a in pairs])
    assert found.pairs == len(pairs)
    gold = sorted(Fraction(g) for g, _ in rows if g is not None)  # type: ignore[arg-type]
    assert found.gold_rows == len(gold)
    if gold:
        centre = Fraction(statistics.median(gold))
        chance = float(sum(abs(g - centre) for g in gold) / len(gold))
        assert found.chance_level == chance
    if not pairs:
        assert found.mean_absolute_error is None and found.bias is None
        return
    exact = [a - g for g, a in pairs]
    assert found.mean_absolute_error == float(sum(map(abs, exact)) / len(exact))
    assert found.bias == float(sum(exact) / len(exact))
    assert math.isclose(found.bias, float(np.mean(d)), rel_tol=1e-12, abs_tol=1e-12)
    if len(pairs) < 2:
        assert found.limits_of_agreement is None and found.bias_interval is None
        return
    sd = float(np.std(d, ddof=1))
    low, high = found.limits_of_agreement  # type: ignore[misc]
    assert math.isclose(low, np.mean(d) - Z95 * sd, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(high, np.mean(d) + Z95 * sd, rel_tol=1e-9, abs_tol=1e-9)
    half = student.ppf(0.975, len(pairs) - 1) * sd / math.sqrt(len(pairs))
    assert math.isclose(found.bias_interval[1], np.mean(d) + half, rel_tol=1e-9, abs_tol=1e-9)  # type: ignore[index]
    # statsmodels' t interval of the mean, both bounds (its quantile is scipy's).
    low, high = DescrStatsW(d).tconfint_mean(alpha=0.05)
    assert found.bias_interval is not None
    assert math.isclose(found.bias_interval[0], low, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(found.bias_interval[1], high, rel_tol=1e-9, abs_tol=1e-9)
    mae = mean_absolute_error([float(g) for g, _ in pairs], [float(a) for _, a in pairs])
    assert math.isclose(found.mean_absolute_error, mae, rel_tol=1e-12, abs_tol=1e-12)  # type: ignore[arg-type]
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(-40, 40), st.integers(-40, 40)), min_size=2, max_size=20))
def test_interval_alpha_equals_the_krippendorff_package(pairs: list[tuple[int, int]]) -> None:
    part = _score(list(pairs)).by_field["f"]
    alpha = (part.coefficients or {}).get("alpha")
    assert alpha is not None and alpha.metric == "interval"
    data = np.array([[g for g, _ in pairs], [a for _, a in pairs]], dtype=float)
    if len(set(data.ravel())) < 2:
        assert alpha.value is None
        return
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert math.isclose(alpha.value or 0.0, reference, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), min_size=2, max_size=12))
def test_interval_alphas_jackknife_equals_the_krippendorff_package(
    pairs: list[tuple[int, int]],
) -> None:
    # The package once per left-out pair: v = (n - 1) / n * sum (alpha_(-u) - mean)**2.
    alpha = (_score(list(pairs)).by_field["f"].coefficients or {})["alpha"]
    data = np.array([[g for g, _ in pairs], [a for _, a in pairs]], dtype=float)
    n = len(pairs)
    kept = [np.delete(data, row, axis=1) for row in range(n)]
    if any(len(set(k.ravel())) < 2 for k in kept):
        assert alpha.interval is None  # some leave-one-out alpha is undefined (or alpha is)
        return
    jack = np.array(
        [krippendorff.alpha(reliability_data=k, level_of_measurement="interval") for k in kept]
    )
    se = math.sqrt((n - 1) / n * float(((jack - jack.mean()) ** 2).sum()))
    value = alpha.value or 0.0
    assert alpha.interval is not None
    low = max(min(-1.0, value), value - Z95 * se)
    assert math.isclose(alpha.interval[0], low, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(alpha.interval[1], min(1.0, value + Z95 * se), rel_tol=1e-9, abs_tol=1e-12)


def test_dates_count_days_and_only_full_precision_dates() -> None:
    rows = [
        ("2023-04-05", "2023-04-08"),  # +3
        ("2023-04-05", "2023-04-01"),  # -4
        ("2023-04", "2023-04-02"),  # reduced precision gold: no distance
        ("2023-04-05", "2023-04"),  # reduced precision answer: no distance
        ("2024-02-28", "2024-03-01"),  # +2 (a leap year)
        ("2023-04-05", None),  # abstained
    ]
    part = _score(rows, "date").by_field["f"]
    found = part.magnitude
    assert found is not None and found.unit == "days"
    assert found.pairs == 3
    assert found.mean_absolute_error == 3.0  # (3 + 4 + 2) / 3
    assert found.bias == float(Fraction(1, 3))  # (3 - 4 + 2) / 3
    # Gold with a distance: five full dates (2023-04-05 four times, 2024-02-28), median 2023-04-05.
    assert found.gold_rows == 5
    leap = date(2024, 2, 28).toordinal() - date(2023, 4, 5).toordinal()
    assert found.chance_level == leap / 5


def test_stand_ins_perfect_and_constant_at_the_median() -> None:
    gold_values = [3, 8, 10, 15, 40, 41]
    perfect = _score([(g, g) for g in gold_values]).by_field["f"].magnitude
    assert perfect is not None
    assert perfect.mean_absolute_error == 0.0 and perfect.bias == 0.0
    assert perfect.limits_of_agreement == (0.0, 0.0)
    centre = statistics.median(gold_values)  # 12.5
    constant = _score([(g, Decimal(str(centre))) for g in gold_values]).by_field["f"].magnitude
    assert constant is not None
    assert constant.mean_absolute_error == constant.chance_level
    # Hand: |3-12.5| + |8-12.5| + |10-12.5| + |15-12.5| + |40-12.5| + |41-12.5| = 75, over 6.
    assert constant.chance_level == 12.5


@settings(max_examples=examples(40), deadline=None)
@given(number_rows, st.integers(1, 4), st.randoms(use_true_random=False))
def test_partitions_merge_exactly(
    rows: list[tuple[object, object]], parts: int, rng: object
) -> None:
    schema = Schema.from_dict({"fields": {}})
    scorers = [Scorer(schema) for _ in range(parts)]
    where = [rng.randrange(parts) for _ in rows]  # type: ignore[attr-defined]
    for i, (g, _) in enumerate(rows):
        scorers[where[i]].add_gold(f"c{i}", "f", FieldType.NUMBER, g)  # type: ignore[arg-type]
    for i, (_, a) in enumerate(rows):
        if a != MISSING:
            scorers[where[i]].add_prediction(f"c{i}", "f", a, False)  # type: ignore[arg-type]
    merged = merge_all(s.partial() for s in scorers if s._fields)
    one = _score(rows)
    assert Report.from_tally(merged.tally()).to_json() == one.to_json()


def test_exact_decimals_round_trip() -> None:
    for value in [Fraction(5, 2), Fraction(-3), Fraction(0), Fraction(1, 1024), Fraction(-7, 40)]:
        assert parse_exact_decimal(exact_decimal(value)) == value
    assert exact_decimal(Fraction(1, 1024)) == "0.0009765625"
    with pytest.raises(ValueError):
        exact_decimal(Fraction(1, 3))
    for text in ["1e3", "01", "1.50", "-0", " 1", "1.", ".5", 1, None]:
        assert parse_exact_decimal(text) is None, text
    assert median([(Fraction(1), 2), (Fraction(4), 2)]) == Fraction(5, 2)
    with pytest.raises(ValueError):  # |sum d| > sum |d|: no rows give that
        ErrorSums("field", 1, Fraction(1), Fraction(2), Fraction(4), 0, Fraction(0))


def _document(report: Report) -> dict[str, object]:
    return json.loads(report.to_json())  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(mean_absolute_error=1.5),
        lambda m: m.update(sum_absolute="100"),
        lambda m: m.update(sum_signed="1e1"),
        lambda m: m.update(pairs=99),
        lambda m: m.update(unit="hours"),
        lambda m: m.update(unit="days", sum_absolute="10.5", sum_signed="0.5"),
        lambda m: m["chance"].update(mean_absolute_deviation=0.1),
        lambda m: m.update(limits_of_agreement=[0, 1]),
        lambda m: m.pop("sum_squares"),
    ],
)
def test_edited_magnitudes_are_refused(edit: object) -> None:
    report = _score([(10, 12), (20, 19), (30, 30), (40, 47)])
    document = _document(report)
    assert Report.from_json(json.dumps(document)).to_json() == report.to_json()
    edit(document["by_field"]["f"]["error_magnitude"])  # type: ignore[index,operator]
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
