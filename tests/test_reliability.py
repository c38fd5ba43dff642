"""Gwet's AC1/AC2 and Krippendorff's alpha (docs/metrics.md, "Prevalence-robust agreement").

References: irrCAC's published output for Gwet's abstractors table (kgwet/irrCAC README:
``gwet.ac1.table``, ``krippen2.table``; the Python irrCAC's ``CAC.gwet`` docstring for AC2),
the ``krippendorff`` package for alpha and, run once per left-out row, for its jackknife,
and Gwet's per-subject (raw-data) form of the AC1/AC2 variance, a different formulation from
chartscore's table form.
"""

from __future__ import annotations

import math
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import GoldField, Prediction, score
from chartscore.stats.binomial import Z95
from chartscore.stats.reliability import gwet_ac, krippendorff_alpha

from helpers import examples

ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]  # Gwet (2014); irrCAC's cont3x3abstractors


def cells_of(table: list[list[int]]) -> list[tuple[int, int, int]]:
    return [(i, j, n) for i, row in enumerate(table) for j, n in enumerate(row) if n]


def raters(cells: list[tuple[int, int, int]]) -> tuple[list[int], list[int]]:
    gold: list[int] = []
    answers: list[int] = []
    for i, j, n in cells:
        gold += [i] * n
        answers += [j] * n
    return gold, answers


def test_irrcac_published_values_for_the_abstractors_table() -> None:
    cells = cells_of(ABSTRACTORS)
    ac1 = gwet_ac(cells, 3, "none")
    assert ac1 is not None
    value, (low, high), pairs = ac1
    assert pairs == 100
    assert round(value, 7) == 0.8493305  # irrCAC: 0.8493305, se 0.04321747
    assert round((high - low) / (2 * Z95), 8) == 0.04321747
    alpha = krippendorff_alpha(cells, 3, "nominal")
    assert alpha is not None
    assert round(alpha[0], 7) == 0.7972585  # irrCAC krippen2.table: 0.7972585


def test_irrcac_published_ac2_for_the_abstractors_table() -> None:
    # irrCAC (Python) table.CAC(weights="quadratic").gwet() on the same table: AC2 0.94024,
    # se 0.01792, p_a 0.9725, p_e 0.53985 (quadratic weights 1, 0.75, 0 at distances 0, 1, 2).
    found = gwet_ac(cells_of(ABSTRACTORS), 3, "quadratic")
    assert found is not None
    value, (low, high), pairs = found
    assert pairs == 100
    assert round(value, 5) == 0.94024
    assert round((high - low) / (2 * Z95), 5) == 0.01792


tables = st.integers(2, 5).flatmap(
    lambda q: st.tuples(
        st.just(q),
        st.lists(
            st.tuples(st.integers(0, q - 1), st.integers(0, q - 1), st.integers(1, 6)),
            min_size=1,
            max_size=8,
        ),
    )
)


def _merged(cells: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    counts: dict[tuple[int, int], int] = {}
    for i, j, n in cells:
        counts[i, j] = counts.get((i, j), 0) + n
    return [(i, j, n) for (i, j), n in sorted(counts.items())]


@settings(max_examples=examples(60), deadline=None)
@given(tables, st.sampled_from(["nominal", "ordinal"]))
def test_alpha_and_its_jackknife_equal_the_krippendorff_package(
    table: tuple[int, list[tuple[int, int, int]]], metric: str
) -> None:
    q, raw = table
    cells = _merged(raw)
    gold, answers = raters(cells)
    found = krippendorff_alpha(cells, q, metric)
    pooled = set(gold) | set(answers)
    if len(pooled) < 2:
        assert found is None  # no spread in the pooled values
        return
    assert found is not None
    value, interval, pairs = found
    data = np.array([gold, answers], dtype=float)
    reference = krippendorff.alpha(
        reliability_data=data, level_of_measurement=metric, value_domain=list(range(q))
    )
    assert math.isclose(value, reference, rel_tol=1e-9, abs_tol=1e-12)
    leave_one_out = []
    for row in range(pairs):
        kept = np.delete(data, row, axis=1)
        if len(set(kept.ravel())) < 2:
            leave_one_out = []
            break
        leave_one_out.append(
            krippendorff.alpha(
                reliability_data=kept, level_of_measurement=metric, value_domain=list(range(q))
            )
        )
    if not leave_one_out or pairs < 2:
        assert interval is None
        return
    jack = np.array(leave_one_out)
    se = math.sqrt((pairs - 1) / pairs * float(((jack - jack.mean()) ** 2).sum()))
    assert interval is not None
    assert math.isclose(interval[1], min(1.0, value + Z95 * se), rel_tol=1e-9, abs_tol=1e-12)
    low = max(min(-1.0, value), value - Z95 * se)
    assert math.isclose(interval[0], low, rel_tol=1e-9, abs_tol=1e-12)


def _gwet_raw(gold: list[int], answers: list[int], q: int, quadratic: bool) -> tuple[float, float]:
    # Gwet's per-subject form (irrCAC's gwet.ac1.raw, two raters, no missing ratings):
    # ac1_i* = ac1_i - 2 (1 - AC) (pe_i - pe) / (1 - pe); var = sum (ac1_i* - AC)^2 / (n (n - 1)).
    n = len(gold)
    k = np.arange(q)
    weights = (
        1 - (k[:, None] - k[None, :]) ** 2 / (q - 1) ** 2 if quadratic else np.eye(q)
    ).astype(float)
    ratings = np.zeros((n, q))
    for row, (g, a) in enumerate(zip(gold, answers, strict=True)):
        ratings[row, g] += 1
        ratings[row, a] += 1
    weighted = ratings @ weights.T
    pa_i = (ratings * (weighted - 1)).sum(axis=1) / 2
    pa = pa_i.mean()
    pi = (ratings / 2).mean(axis=0)
    factor = weights.sum() / (q * (q - 1))
    pe = factor * float((pi * (1 - pi)).sum())
    ac = (pa - pe) / (1 - pe)
    pe_i = factor * (ratings @ (1 - pi)) / 2
    star = (pa_i - pe) / (1 - pe) - 2 * (1 - ac) * (pe_i - pe) / (1 - pe)
    variance = float(((star - ac) ** 2).sum()) / (n * (n - 1)) if n > 1 else 0.0
    return ac, variance


@settings(max_examples=examples(60), deadline=None)
@given(tables, st.booleans())
def test_gwet_ac_equals_gwets_per_subject_form(
    table: tuple[int, list[tuple[int, int, int]]], quadratic: bool
) -> None:
    q, raw = table
    cells = _merged(raw)
    gold, answers = raters(cells)
    found = gwet_ac(cells, q, "quadratic" if quadratic else "none")
    assert found is not None
    value, interval, n = found
    ac, variance = _gwet_raw(gold, answers, q, quadratic)
    assert math.isclose(value, ac, rel_tol=1e-9, abs_tol=1e-12)
    if n < 2:
        return
    # The table form divides by n, the per-subject form by n - 1 (irrCAC's two functions).
    se = math.sqrt(variance * (n - 1) / n)
    assert math.isclose(interval[1], min(1.0, value + Z95 * se), rel_tol=1e-9, abs_tol=1e-12)


def test_fewer_than_two_categories_or_no_pairs_is_undefined() -> None:
    assert gwet_ac([], 3, "none") is None
    assert gwet_ac([(0, 0, 5)], 1, "none") is None
    assert krippendorff_alpha([(0, 0, 5)], 2, "nominal") is None  # no spread
    assert krippendorff_alpha([], 2, "nominal") is None
    with pytest.raises(ValueError):
        gwet_ac([(0, 3, 1)], 2, "none")
    with pytest.raises(ValueError):
        krippendorff_alpha([(0, 1, 1)], 2, "interval")  # no values


def test_two_swapped_rows_give_alpha_minus_a_half() -> None:
    # By hand: N = 4, n_A = n_B = 2, D_o = 4, D_e = 16 - 8: alpha = 1 - 3 * 4 / 8.
    found = krippendorff_alpha([(0, 1, 1), (1, 0, 1)], 2, "nominal")
    assert found is not None and found[0] == -0.5
    interval = krippendorff_alpha(
        [(0, 1, 1), (1, 0, 1)], 2, "interval", values=[Fraction(0), Fraction(1)]
    )
    assert interval is not None and interval[0] == -0.5


def _boolean_report(gold_values: list[bool], answers: list[bool]) -> object:
    gold = [GoldField(f"c{i}", "dx.flag", "boolean", v) for i, v in enumerate(gold_values)]
    predictions = [Prediction(f"c{i}", "dx.flag", a) for i, a in enumerate(answers)]
    return score(gold, predictions).by_field["dx.flag"]


@pytest.mark.parametrize("positives", [1, 5, 9])
def test_constant_answer_stand_in(positives: int) -> None:
    # Answering True everywhere, a share p of gold True: kappa exactly 0 (chance), AC1 and
    # alpha at their own closed forms (docs/metrics.md).
    n = 10
    gold = [True] * positives + [False] * (n - positives)
    part = _boolean_report(gold, [True] * n)
    p = positives / n
    assert part.kappa.value == 0.0  # type: ignore[attr-defined]
    coefficients = part.coefficients  # type: ignore[attr-defined]
    assert math.isclose(coefficients["ac1"].value, (p * p + 2 * p - 1) / (1 + p * p))
    assert math.isclose(coefficients["alpha"].value, 1 - (2 * n - 1) / ((1 + p) * n))


def test_high_prevalence_where_kappa_fails() -> None:
    # The kappa paradox: 18 of 20 rows agree on the common category, one disagreement each way.
    gold = [True] * 18 + [True, False]
    answers = [True] * 18 + [False, True]
    part = _boolean_report(gold, answers)
    kappa = part.kappa.value  # type: ignore[attr-defined]
    ac1 = part.coefficients["ac1"].value  # type: ignore[attr-defined]
    assert kappa is not None and kappa < 0
    assert ac1 > 0.85
