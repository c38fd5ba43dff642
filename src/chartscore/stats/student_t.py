"""Student's t quantiles, exactly, for intervals whose variance is estimated from few units.

A clustered interval estimates its variance from ``C`` charts, a bias interval
from ``n`` pairs: with few of them the estimate is itself uncertain, and the
normal quantile ``z`` then claims more than the data hold (a 95% interval from
10 charts covers about 93%). The remedy is Student's t quantile with the
estimate's degrees of freedom (docs/metrics.md, "Intervals from few units").

Every platform must give the same bits, so nothing here calls the C library's
mathematics: the two-sided t distribution function of an integer ``df`` is a
finite trigonometric sum (Abramowitz and Stegun 26.7.3 and 26.7.4), evaluated
in 60-digit decimal arithmetic and inverted by the secant method; above
:data:`SERIES_MAX_DF` degrees of freedom the Cornish-Fisher expansion in ``1 /
df`` (A&S 26.7.5, four terms) is exact to better than ``1e-16``. The result is
rounded once to the nearest float. Value-free: integers in, floats out.
"""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext
from typing import Final

PRECISION: Final = 60
"""Decimal digits of every intermediate result."""

SERIES_MAX_DF: Final = 4000
"""Degrees of freedom up to which the finite series is summed (at most 2,000 terms)."""

PI: Final = Decimal("3.14159265358979323846264338327950288419716939937510582097494")

_LEVELS: Final = {
    0.9: Decimal("0.9"),
    0.95: Decimal("0.95"),
    0.99: Decimal("0.99"),
}

_TOLERANCE: Final = Decimal(10) ** -45


def _atan(y: Decimal) -> Decimal:
    """``atan(y)`` for ``y >= 0``: halve the angle until it is small, then the Taylor series."""
    doublings = 0
    while y > Decimal("0.05"):
        y = y / (1 + (1 + y * y).sqrt())
        doublings += 1
    total = term = y
    square = y * y
    k = 1
    while abs(term) > _TOLERANCE * _TOLERANCE:
        term = -term * square
        total += term / (2 * k + 1)
        k += 1
    return total * (1 << doublings)


def two_sided_probability(x: Decimal, df: int) -> Decimal:
    """``P(|T| <= x)`` for Student's ``T`` with ``df >= 1`` degrees of freedom, ``x >= 0``.

    With ``theta = atan(x / sqrt(df))`` (A&S 26.7.3, 26.7.4): for even ``df``,
    ``sin(theta) (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... )`` up to ``cos^(df - 2)``; for
    odd ``df``, ``2 / pi (theta + sin(theta) (cos + 2/3 cos^3 + ... ))`` up to
    ``cos^(df - 2)`` (``2 theta / pi`` at ``df = 1``).
    """
    with localcontext() as context:
        context.prec = PRECISION
        s = x * x + df
        cos2 = df / s
        sin = x / s.sqrt()
        if df % 2 == 0:
            total = term = Decimal(1)
            for j in range(1, (df - 2) // 2 + 1):
                term = term * cos2 * (2 * j - 1) / (2 * j)
                total += term
            return sin * total
        theta = _atan(x / Decimal(df).sqrt())
        if df == 1:
            return 2 * theta / PI
        total = term = cos2.sqrt()
        for j in range(1, (df - 3) // 2 + 1):
            term = term * cos2 * (2 * j) / (2 * j + 1)
            total += term
        return 2 * (theta + sin * total) / PI


@functools.cache
def normal_quantile(confidence: float) -> Decimal:
    """The two-sided standard-normal quantile to 50 digits: ``P(|Z| <= z) = confidence``.

    Newton's method on ``erf(z / sqrt 2)``, whose Taylor series converges fast for ``z < 3``.
    """
    level = _level(confidence)
    with localcontext() as context:
        context.prec = PRECISION
        root2 = Decimal(2).sqrt()
        root_pi = PI.sqrt()
        z = Decimal("2")
        for _ in range(100):
            t = z / root2
            error = _erf(t) - level
            slope = 2 / root_pi * (-(t * t)).exp() / root2
            step = error / slope
            z -= step
            if abs(step) < _TOLERANCE:
                break
        return +z


def _erf(t: Decimal) -> Decimal:
    # erf(t) = 2 / sqrt(pi) * sum_n (-1)**n t**(2n+1) / (n! (2n+1)), for 0 <= t < 3.
    term = total = t
    square = t * t
    n = 0
    while abs(term) > _TOLERANCE * _TOLERANCE:
        n += 1
        term = -term * square / n
        total += term / (2 * n + 1)
    return 2 * total / PI.sqrt()


def _cornish_fisher(z: Decimal, df: int) -> Decimal:
    # A&S 26.7.5: t = z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4.
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    v = Decimal(df)
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided Student's t quantile: ``P(|T| <= t) = confidence`` with ``df`` degrees.

    Args:
        confidence: 0.9, 0.95 or 0.99.
        df: The degrees of freedom, at least 1.

    Returns:
        The quantile rounded once to the nearest float (``t(0.95, 9)`` is
        2.2621571627982...); within one unit in the last place of the true one.

    Raises:
        ValueError: for another level or ``df < 1`` (callers never pass them).
    """
    _level(confidence)
    if type(df) is not int or df < 1:
        raise ValueError("degrees of freedom must be a positive int")
    return _t_quantile(confidence, df)


@functools.cache
def _t_quantile(confidence: float, df: int) -> float:
    # Checked arguments only: the cache would take 2.0 for 2.
    level = _LEVELS[confidence]
    with localcontext() as context:
        context.prec = PRECISION
        z = normal_quantile(confidence)
        guess = _cornish_fisher(z, df)
        if df > SERIES_MAX_DF:
            return float(guess)
        # The expansion is poor at 1 or 2 df (t(0.99, 1) is 63.7): start from its value,
        # which is too small, and a point beyond it, then the secant method.
        x0, x1 = guess, guess * 2 if df < 3 else guess * Decimal("1.001")
        f0 = two_sided_probability(x0, df) - level
        f1 = two_sided_probability(x1, df) - level
        for _ in range(200):
            if f1 == f0:
                break
            x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
            if x2 <= 0:
                x2 = x1 / 2
            x0, f0 = x1, f1
            x1, f1 = x2, two_sided_probability(x2, df) - level
            if abs(x1 - x0) < _TOLERANCE:
                break
        return float(x1)


def level_of(z: float) -> float:
    """The confidence level (0.9, 0.95 or 0.99) whose normal quantile ``z`` is.

    ``z`` is a level's float quantile, within a few units in the last place
    (chartscore's literals are a few ulp from the true quantiles).

    Raises:
        ValueError: for any other ``z``.
    """
    for confidence in _LEVELS:
        if abs(float(normal_quantile(confidence)) - z) < 1e-12:
            return confidence
    raise ValueError("not the quantile of a confidence level")


def t_for(z: float, df: int) -> float:
    """:func:`t_quantile` at the level of the normal quantile ``z``."""
    return t_quantile(level_of(z), df)


def _level(confidence: float) -> Decimal:
    if type(confidence) is not float or confidence not in _LEVELS:
        raise ValueError("confidence must be 0.9, 0.95 or 0.99")
    return _LEVELS[confidence]
