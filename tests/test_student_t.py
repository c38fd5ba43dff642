"""Student's t quantiles (chartscore.stats.student_t), against scipy and closed forms."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from scipy.stats import t as student

from chartscore.stats.clustered import CONFIDENCE_LEVELS, Z_BY_CONFIDENCE
from chartscore.stats.student_t import (
    SERIES_MAX_DF,
    normal_quantile,
    t_quantile,
    two_sided_probability,
)

from helpers import examples


def test_the_normal_quantiles_are_the_true_ones() -> None:
    # 50 digits; the float literals chartscore's z uses are within a few ulp of them.
    for level in CONFIDENCE_LEVELS:
        exact = normal_quantile(level)
        assert float(exact) == pytest.approx(norm.ppf(1 - (1 - level) / 2), rel=1e-15)
        assert abs(float(exact) - Z_BY_CONFIDENCE[level]) < 6 * math.ulp(Z_BY_CONFIDENCE[level])
    assert str(normal_quantile(0.95)).startswith("1.959963984540054235524594430520551527955")


def test_one_and_two_degrees_of_freedom_have_closed_forms() -> None:
    # df = 1 is Cauchy: t = tan(pi level / 2); df = 2: t = 2 a / sqrt(2 (1 - a^2))... with
    # a = level: P(|T| <= t) = t / sqrt(2 + t^2), so t = level sqrt(2 / (1 - level^2)).
    for level in CONFIDENCE_LEVELS:
        assert t_quantile(level, 1) == pytest.approx(math.tan(math.pi * level / 2), rel=1e-13)
        assert t_quantile(level, 2) == pytest.approx(
            level * math.sqrt(2 / (1 - level * level)), rel=1e-14
        )


@pytest.mark.parametrize("level", CONFIDENCE_LEVELS)
def test_quantiles_match_scipy(level: float) -> None:
    # scipy's t.ppf is within a few ulp of the truth (at most 60 at df = 6); chartscore's
    # solves the defining equation in 60-digit decimals, on either side of SERIES_MAX_DF.
    upper = 1 - (1 - level) / 2
    for df in [*range(1, 121), 500, SERIES_MAX_DF, SERIES_MAX_DF + 1, 10**5, 10**7]:
        assert t_quantile(level, df) == pytest.approx(student.ppf(upper, df), rel=3e-14)


@given(st.sampled_from(CONFIDENCE_LEVELS), st.integers(1, 3 * SERIES_MAX_DF))
@settings(max_examples=examples(60), deadline=None)
def test_the_quantile_solves_the_defining_equation(level: float, df: int) -> None:
    # scipy's own distribution function at chartscore's quantile gives the level back.
    quantile = t_quantile(level, df)
    assert student.cdf(quantile, df) - student.cdf(-quantile, df) == pytest.approx(level, abs=2e-15)
    # t shrinks toward z as the degrees of freedom grow, and is never below it.
    assert quantile > float(normal_quantile(level))
    if df > 1:
        assert quantile < t_quantile(level, df - 1)


def test_the_distribution_function_matches_scipy() -> None:
    for df in (1, 2, 3, 4, 7, 30, 301):
        for x in ("0", "0.5", "1.96", "4", "40"):
            found = two_sided_probability(Decimal(x), df)
            expected = student.cdf(float(x), df) - student.cdf(-float(x), df)
            assert float(found) == pytest.approx(expected, abs=1e-15)


def test_invalid_arguments_are_refused() -> None:
    for level, df in ((0.8, 3), (0.95, 0), (0.95, -1), (0.95, 2.0)):
        with pytest.raises(ValueError):
            t_quantile(level, df)  # type: ignore[arg-type]


def test_the_bits_do_not_depend_on_the_process() -> None:
    # Decimal arithmetic only: another interpreter with another hash seed gives the same bits.
    code = (
        "from chartscore.stats.student_t import t_quantile;"
        "print([t_quantile(c, d).hex() for c in (0.9, 0.95, 0.99) for d in (1, 9, 99, 9999)])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "2026")
    }
    expected = [t_quantile(c, d).hex() for c in (0.9, 0.95, 0.99) for d in (1, 9, 99, 9999)]
    assert runs == {f"{expected}\n"}
