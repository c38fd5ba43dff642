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
rows, with Student's t over ``sum n_h - H`` degrees of freedom (``H`` the
strata with trials). As for clustered intervals, when the less common outcome
occurs in fewer than ``MINORITY_CASES`` charts the spread cannot be
estimated, and the design effect is at least the worst case, every row of a
chart agreeing::

    V_worst = p (1 - p) sum_h w_h**2 (1 - f_h) S_mm,h / (sum w_h M_h)**2

Value-free: integers and declared fractions in, figures out.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from chartscore.stats.binomial import wilson_rate_interval
from chartscore.stats.clustered import CONFIDENCE_BY_Z, MINORITY_CASES, ClusterSums
from chartscore.stats.student_t import t_quantile

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
    """The weighted rate's linearized variance over ``p (1 - p) / M``.

    The worst case (:func:`worst_weighted_design_effect`) when the per-case
    successes are unknown or ``p`` is 0 or 1; at least the worst case when the
    less common outcome occurs in fewer than ``MINORITY_CASES`` charts over
    the strata.
    """
    trials = sum(m for _, _, m in parts)
    denominator = sum((Fraction(m) / Fraction(f) for f, _, m in parts), Fraction(0))
    minority = _minority_cases(sums)
    if rate in (0, 1) or any(part.sum_yy is None for part in sums):
        return worst_weighted_design_effect(parts, sums)
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
    estimate = variance / (rate * (1 - rate) / trials)
    if minority is None or minority < MINORITY_CASES:
        return max(estimate, worst_weighted_design_effect(parts, sums))
    return estimate


def _minority_cases(sums: Sequence[ClusterSums]) -> int | None:
    # The charts holding the less common outcome over the strata; None when unknown.
    successes = failures = 0
    for part in sums:
        if part.success_cases is None or part.failure_cases is None:
            return None
        successes += part.success_cases
        failures += part.failure_cases
    return min(successes, failures)


def worst_weighted_design_effect(parts: Sequence[Part], sums: Sequence[ClusterSums]) -> Fraction:
    """``M sum_h w_h**2 (1 - f_h) S_mm,h / (sum_h w_h M_h)**2``: every row of a chart agreeing.

    The expected linearized variance when each chart's rows all succeed or all
    fail, over ``p (1 - p) / M``: with one fraction ``f`` everywhere, ``(1 - f)
    sum m_i**2 / M``, the clustered worst case with the finite population correction.
    """
    trials = sum(m for _, _, m in parts)
    denominator = sum((Fraction(m) / Fraction(f) for f, _, m in parts), Fraction(0))
    spread = Fraction(0)
    for (fraction, _, _), part in zip(parts, sums, strict=True):
        f = Fraction(fraction)
        spread += (1 / f) ** 2 * (1 - f) * part.sum_mm
    return trials * spread / denominator**2


def weighted_quantile(z: float, cases: Sequence[int]) -> float | None:
    """Student's t at ``z``'s level over ``sum n_h - H`` degrees of freedom.

    ``cases`` holds each sampled stratum's cases with trials (``n_h``); ``H``
    counts the strata with any. None when that leaves no degree of freedom
    (the interval is then [0, 1]).
    """
    degrees = sum(cases) - sum(1 for n in cases if n > 0)
    if degrees < 1:
        return None
    return t_quantile(CONFIDENCE_BY_Z[z], degrees)


def weighted_wilson(rate: Fraction, trials: int, design_effect_shown: float, z: float) -> Interval:
    """Wilson's interval of ``rate`` on ``trials / design_effect_shown`` rows (trials > 0).

    ``z`` is the quantile: :func:`weighted_quantile`'s, or the normal one of a
    format 2 document.
    """
    return wilson_rate_interval(float(rate), trials / design_effect_shown, z)
