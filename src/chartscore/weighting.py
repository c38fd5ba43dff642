"""The weighted overall estimate of a stratified sample: weights 1 / sampling fraction.

When gold was drawn by stratum (so many charts of each hospital, a larger share
of the small ones), the plain pooled rate over-represents the strata sampled
more heavily. With stratum ``h`` sampled at fraction ``f_h`` (weight ``w_h = 1 /
f_h``), ``Y_h`` successes in ``M_h`` trials over its cases, the weighted rate is
the ratio (Horvitz-Thompson) estimator ``p = sum w_h Y_h / sum w_h M_h``. Its
variance, with cases as clusters and a finite population correction, is the
stratified linearization (Cochran 1977, 6.13 and 5A.9; docs/metrics.md)::

    V = sum_h w_h**2 (1 - f_h) n_h / (n_h - 1) (S_zz - S_z**2 / n_h) / (sum w_h M_h)**2

with ``z_i = y_i - p m_i`` over the stratum's ``n_h`` cases with trials (``S_z =
Y_h - p M_h``, ``S_zz = S_yy - 2 p S_ym + p**2 S_mm``); a stratum with one such
case adds nothing. The published figure is the design effect ``V / (p (1 - p) /
M)`` (``M = sum M_h``), rounded up to two significant digits as for clustered
intervals, and the interval is Wilson's for ``p`` on ``M / design effect``
rows. Value-free: integers and declared fractions in, figures out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from chartscore.clustered import ClusterSums

Interval = tuple[float, float]

Part = tuple[Decimal, int, int]
"""One stratum's (sampling fraction, successes, trials)."""


def weighted_rate(parts: Sequence[Part]) -> Fraction | None:
    """``sum w_h Y_h / sum w_h M_h`` exactly; None with no trials."""
    numerator = sum((Fraction(y) / Fraction(f) for f, y, _ in parts), Fraction(0))
    denominator = sum((Fraction(m) / Fraction(f) for f, _, m in parts), Fraction(0))
    if denominator == 0:
        return None
    return numerator / denominator


def weighted_design_effect(
    parts: Sequence[Part], sums: Sequence[ClusterSums], rate: Fraction
) -> Fraction:
    """The weighted rate's linearized variance over ``p (1 - p) / M`` (1 when that is 0)."""
    trials = sum(m for _, _, m in parts)
    denominator = sum((Fraction(m) / Fraction(f) for f, _, m in parts), Fraction(0))
    variance = Fraction(0)
    for (fraction, y, m), part in zip(parts, sums, strict=True):
        cases = part.cases
        if cases < 2 or part.sum_yy is None or part.sum_ym is None:
            continue
        f = Fraction(fraction)
        s_z = y - rate * m
        s_zz = part.sum_yy - 2 * rate * part.sum_ym + rate * rate * part.sum_mm
        spread = s_zz - s_z * s_z / cases
        variance += (1 / f) ** 2 * (1 - f) * Fraction(cases, cases - 1) * spread
    variance /= denominator**2
    row_wise = rate * (1 - rate) / trials
    if row_wise == 0:
        return Fraction(1)
    return variance / row_wise


def weighted_wilson(rate: Fraction, trials: int, design_effect_shown: float, z: float) -> Interval:
    """Wilson's interval of ``rate`` on ``trials / design_effect_shown`` rows (trials > 0)."""
    p = float(rate)
    n = trials / design_effect_shown
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
