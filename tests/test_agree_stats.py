"""Agreement among several raters (docs/metrics.md, "Agreement among raters"), against references.

References, sharing no code with chartscore:

- ``statsmodels.stats.inter_rater.fleiss_kappa`` (every unit rated by every rater);
- the ``krippendorff`` package (nominal, ordinal and interval alpha, with missing ratings),
  also run once per left-out unit for the jackknife interval;
- irrCAC (Python, ``irrCAC.raw.CAC``): Fleiss' generalized kappa and Gwet's AC1/AC2 with
  missing ratings, their standard errors (``se``) and t intervals;
- Fleiss (1971)'s published example: 30 patients, 6 psychiatrists each, 5 categories,
  kappa = 0.430.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa

from chartscore.stats.multirater import chance_corrected, krippendorff_alpha
from chartscore.stats.student_t import t_quantile

from helpers import examples

# Fleiss, J. L. (1971), "Measuring nominal scale agreement among many raters",
# Psychological Bulletin 76(5):378-382, Table 1: the number of the six raters who put each
# of 30 patients in each category (depression, personality disorder, schizophrenia,
# neurosis, other). Transcribed from the irr R package's `diagnoses` data set (the 30
# patients' six diagnoses, as laid out in emilelatour/lagree's data-raw/make-data-for-
# examples.R), counted per patient; its first 15 rows are irrCAC's `distrib_6raters`. The
# published category proportions p_j are .144, .144, .167, .306, .239, and kappa is .430.
FLEISS_1971 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
]  # fmt: skip


def units_of(ratings: list[list[int | None]]) -> dict[tuple[tuple[int, int], ...], int]:
    units: dict[tuple[tuple[int, int], ...], int] = {}
    for row in ratings:
        counts: dict[int, int] = {}
        for rating in row:
            if rating is not None:
                counts[rating] = counts.get(rating, 0) + 1
        if counts:
            pattern = tuple(sorted(counts.items()))
            units[pattern] = units.get(pattern, 0) + 1
    return units


def _irrcac() -> Any:
    # irrCAC pins scipy 1.12 and numpy below 2, so it is not in the test extra (that would
    # downgrade them); .ci/run installs it with --no-deps, and it runs on the newer ones.
    return pytest.importorskip("irrCAC.raw", reason="irrCAC: pip install --no-deps irrCAC")


def test_fleiss_1971_published_example() -> None:
    assert all(sum(row) == 6 for row in FLEISS_1971) and len(FLEISS_1971) == 30
    shares = [round(sum(row[j] for row in FLEISS_1971) / 180, 3) for j in range(5)]
    assert shares == [0.144, 0.144, 0.167, 0.306, 0.239]  # Fleiss's p_j
    units: dict[tuple[tuple[int, int], ...], int] = {}
    for row in FLEISS_1971:
        pattern = tuple((k, n) for k, n in enumerate(row) if n)
        units[pattern] = units.get(pattern, 0) + 1
    found = chance_corrected(units, 5, "none", "fleiss")
    assert found is not None
    kappa, interval, pairable, pairs = found
    assert round(kappa, 3) == 0.430
    assert kappa == pytest.approx(fleiss_kappa(np.array(FLEISS_1971)), abs=1e-15)
    assert (pairable, pairs) == (30, 30 * 6 * 5)
    assert interval is not None and interval[0] < kappa < interval[1]


def ratings_data(draw: st.DrawFn, *, complete: bool = False) -> tuple[list[list[int | None]], int]:
    raters = draw(st.integers(3, 5))
    size = draw(st.integers(2, 5))
    units = draw(st.integers(2, 30))
    gap = 0.0 if complete else draw(st.sampled_from([0.0, 0.15, 0.4]))
    rating = st.integers(0, size - 1)
    rows = []
    for _ in range(units):
        row: list[int | None] = []
        for _ in range(raters):
            missing = gap and draw(st.floats(0, 1)) < gap
            row.append(None if missing else draw(rating))
        rows.append(row)
    return rows, size


@st.composite
def random_ratings(draw: st.DrawFn) -> tuple[list[list[int | None]], int]:
    return ratings_data(draw)


@st.composite
def complete_ratings(draw: st.DrawFn) -> tuple[list[list[int | None]], int]:
    return ratings_data(draw, complete=True)


def frame(ratings: list[list[int | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [[np.nan if r is None else float(r) for r in row] for row in ratings], dtype=float
    )


@settings(max_examples=examples(60), deadline=None)
@given(complete_ratings())
def test_fleiss_kappa_is_statsmodels(data: tuple[list[list[int | None]], int]) -> None:
    ratings, size = data
    table = np.array([[row.count(k) for k in range(size)] for row in ratings])
    found = chance_corrected(units_of(ratings), size, "none", "fleiss")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fleiss_kappa(table)
    if found is None:  # chance agreement 1: every rating in one category
        assert math.isnan(expected) or not np.isfinite(expected)
        return
    assert found[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(60), deadline=None)
@given(data=random_ratings())
def test_fleiss_and_gwet_are_irrcac(
    weighting: str, data: tuple[list[list[int | None]], int]
) -> None:
    ratings, size = data
    units = units_of(ratings)
    if sum(units.values()) < 2:  # irrCAC's variance divides by n (n - 1)
        return
    weights = "identity" if weighting == "none" else "quadratic"
    for chance in ("fleiss", "gwet"):
        found = chance_corrected(units, size, weighting, chance)
        if found is None:  # undefined: irrCAC divides by zero there
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cac = _irrcac().CAC(
                frame(ratings), weights=weights, categories=list(range(size)), digits=15
            )
            reference = (cac.fleiss() if chance == "fleiss" else cac.gwet())["est"]
        value, interval, _, _ = found
        assert value == pytest.approx(reference["coefficient_value"], abs=1e-9)
        n = sum(units.values())
        if interval is not None and reference["se"] > 1e-9:
            # Ours is value -/+ t(n - 1) se, clamped to [-1, 1] (from the value when it lies
            # below -1, docs/metrics.md): the same se as irrCAC's.
            half = t_quantile(0.95, n - 1) * reference["se"]
            low = max(min(-1.0, value), value - half)
            assert interval[0] == pytest.approx(low, abs=1e-8)
            assert interval[1] == pytest.approx(min(1.0, value + half), abs=1e-8)


def test_a_fleiss_kappa_below_minus_one_has_its_interval_start_at_it() -> None:
    # Four raters of a boolean field, two units rated by three of them and two by one:
    # irrCAC gives -1.4 (se 0.3002...); the interval is [-1.4, -1.4 + t(3) se].
    ratings: list[list[int | None]] = [
        [None, None, 0, None],
        [1, 0, None, 0],
        [None, 0, 1, 0],
        [None, None, 0, None],
    ]
    found = chance_corrected(units_of(ratings), 2, "none", "fleiss")
    assert found is not None
    value, interval, _, _ = found
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = _irrcac().CAC(frame(ratings), categories=[0, 1], digits=15)
        reference = cac.fleiss()["est"]
    assert value == pytest.approx(-1.4, abs=1e-12)
    assert value == pytest.approx(reference["coefficient_value"], abs=1e-9)
    assert interval is not None and interval[0] == value
    upper = value + t_quantile(0.95, 3) * reference["se"]
    assert interval[1] == pytest.approx(upper, abs=1e-9) and -0.45 < interval[1] < -0.44


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
@settings(max_examples=examples(40), deadline=None)
@given(data=random_ratings(), spread=st.lists(st.integers(0, 40), min_size=5, max_size=5))
def test_alpha_and_its_jackknife_are_the_krippendorff_package(
    metric: str, data: tuple[list[list[int | None]], int], spread: list[int]
) -> None:
    ratings, size = data
    # Interval categories carry arbitrary distinct numbers in scale order.
    numbers = sorted(set(spread))[:size]
    if metric == "interval" and len(numbers) < size:
        numbers = list(range(size))
    values = [Fraction(v) for v in numbers] if metric == "interval" else None

    def valued(rows: list[list[int | None]]) -> np.ndarray:
        scale = numbers if metric == "interval" else list(range(size))
        return np.array(
            [[np.nan if r is None else float(scale[r]) for r in row] for row in rows], dtype=float
        ).T

    def reference(rows: list[list[int | None]]) -> float | None:
        pairable = [row for row in rows if sum(r is not None for r in row) >= 2]
        data = valued(pairable)
        if not pairable or len(np.unique(data[~np.isnan(data)])) < 2:
            return None
        domain = None if metric == "interval" else list(range(size))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = krippendorff.alpha(
                reliability_data=data, level_of_measurement=metric, value_domain=domain
            )
        return None if np.isnan(found) else float(found)

    found = krippendorff_alpha(units_of(ratings), size, metric, values=values)
    expected = reference(ratings)
    if found is None or expected is None:
        assert found is None and expected is None
        return
    alpha, interval, pairable_units, _ = found
    assert alpha == pytest.approx(expected, abs=1e-9)
    pairable = [row for row in ratings if sum(r is not None for r in row) >= 2]
    assert pairable_units == len(pairable)
    leave_out = [reference(pairable[:i] + pairable[i + 1 :]) for i in range(len(pairable))]
    if interval is None or any(value is None for value in leave_out):
        return
    n = len(pairable)
    known = np.array(leave_out, dtype=float)
    variance = (n - 1) / n * float(np.sum((known - known.mean()) ** 2))
    half = t_quantile(0.95, n - 1) * math.sqrt(variance)
    if interval[0] > -1 and interval[0] > min(-1.0, alpha):
        assert interval[0] == pytest.approx(alpha - half, abs=1e-8)
    if interval[1] < 1:
        assert interval[1] == pytest.approx(alpha + half, abs=1e-8)


def test_undefined_and_refused() -> None:
    assert chance_corrected({((0, 1),): 3}, 2, "none", "fleiss") is None  # no pairable unit
    assert chance_corrected({((0, 3),): 4}, 2, "none", "fleiss") is None  # one category only
    assert krippendorff_alpha({((1, 3),): 4}, 2, "nominal") is None  # no spread
    with pytest.raises(ValueError):
        chance_corrected({((2, 1),): 1}, 2, "none", "gwet")  # outside the scale
    with pytest.raises(ValueError):
        krippendorff_alpha({((0, 1), (1, 1)): 1}, 2, "interval")  # interval needs values
