"""Prevalence-robust agreement: Gwet's AC1/AC2 and Krippendorff's alpha, from counts.

Kappa's chance term is the product of the two raters' marginals, so at high
prevalence (nearly every row in one category) a table with good agreement can
score kappa near 0. Gwet's AC1 (AC2 with weights) takes chance agreement from
the spread of the pooled categories instead; Krippendorff's alpha corrects
for the pooled values' disagreement and generalizes to ordinal and interval
scales. Both sit beside kappa in a field slice (docs/metrics.md).

Everything is computed exactly (in rationals) from the sparse gold-by-answer
table that kappa uses (or, for interval alpha, from the pairs of numbers) and
rounded once at the end, so the same counts give the same bits everywhere.

Value-free: integers and rationals in, floats out; imports only ``stats``.

References:
    K. L. Gwet (2008), "Computing inter-rater reliability and its variance in
    the presence of high agreement", British Journal of Mathematical and
    Statistical Psychology 61:29-48; K. L. Gwet (2014), Handbook of
    Inter-Rater Reliability, 4th ed., Advanced Analytics (AC1/AC2 and their
    linearized variance; the irrCAC package's ``gwet.ac1.table``);
    K. Krippendorff (2011), "Computing Krippendorff's alpha-reliability",
    Annenberg School for Communication Departmental Paper 43; B. Efron, C.
    Stein (1981), "The jackknife estimate of variance", Annals of Statistics
    9(3):586-596.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Final

from chartscore.stats.binomial import Z95

Cell = tuple[int, int, int]
"""(gold category, answer category, count) of a sparse square table."""

MIN_COEFFICIENT_PAIRS: Final = 100
"""Below this many pairs a coefficient's interval is marked unreliable ("too few pairs").

Kappa's, AC1's and alpha's intervals are large-sample intervals. In
``benchmarks/coverage_grid.py`` (binary fields, sensitivity and specificity
0.9) they cover 0.86 to 0.93 at 20 to 50 pairs, and reach 0.93 or more at
every prevalence from 100 pairs (docs/metrics.md, "Coefficients from few
pairs"). A report still shows such an interval; renderings mark it, and a gate
on it fails.
"""


def too_few_pairs(pairs: int) -> bool:
    """Whether a coefficient over ``pairs`` pairs has an unreliable interval."""
    return pairs < MIN_COEFFICIENT_PAIRS


Interval = tuple[float, float]

ALPHA_METRICS: Final = ("nominal", "ordinal", "interval")
"""Krippendorff's difference functions: categories, ranks, or numbers."""


def _check_cells(cells: Iterable[Cell], size: int) -> list[Cell]:
    if type(size) is not int or size < 0:
        raise ValueError("size must be a non-negative int")
    table = []
    for i, j, count in cells:
        if not (type(i) is int and type(j) is int and type(count) is int):
            raise ValueError("cells must be (int, int, int)")
        if not (0 <= i < size and 0 <= j < size and count >= 0):
            raise ValueError("cells must lie inside the table with non-negative counts")
        if count:
            table.append((i, j, count))
    return table


LOWEST: Final = -1e300
"""A bound below every coefficient: alpha and AC2 can fall below -1 on small tables."""


def _clamped(value: Fraction, variance: Fraction, z: float) -> tuple[float, Interval]:
    # Clamped to [-1, 1] (to [value, 1] when the coefficient itself is below -1).
    point = float(value)
    half_width = z * math.sqrt(float(variance))
    low = max(min(-1.0, point), point - half_width)
    return point, (low, min(1.0, point + half_width))


def gwet_ac(
    cells: Iterable[Cell], size: int, weighting: str, z: float = Z95
) -> tuple[float, Interval, int] | None:
    """Gwet's AC1 (``weighting="none"``) or AC2 (``"quadratic"``) with its interval.

    With ``q = size`` categories, agreement weights ``w`` (kappa's), cell
    proportions ``p_kl``, the pooled category shares ``pi_k = (r_k + c_k) / 2``
    of the two marginals and ``T_w = sum_kl w_kl``::

        p_a = sum w_kl p_kl        p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)
        AC  = (p_a - p_e) / (1 - p_e)
        var = (sum_kl p_kl (w_kl - 2 (1 - AC) e_kl)**2 - (p_a - 2 (1 - AC) p_e)**2)
              / (n (1 - p_e)**2)
        e_kl = T_w / (q (q - 1)) * (1 - (pi_k + pi_l) / 2)

    Gwet's (2008) linearized variance for two raters (irrCAC's
    ``gwet.ac1.table``, with no finite-population correction). The interval is
    ``AC -/+ z sqrt(var)``, clamped to [-1, 1] (AC2 can lie below -1 on a small
    table; its interval then starts at AC).

    Args:
        cells: Nonzero cells (gold category, answer category, count).
        size: ``q``, the number of categories of the scale (declared or seen).
        weighting: ``"none"`` (AC1) or ``"quadratic"`` (AC2:
            ``w_kl = 1 - (k - l)**2 / (q - 1)**2``).
        z: The normal quantile of the interval.

    Returns:
        ``(AC, (lower, upper), pairs)``, or None with no pairs or fewer than
        two categories (no chance model).

    Example:
        Gwet's three-category abstractors table ``[[13, 0, 0], [0, 20, 7],
        [0, 4, 56]]``: AC1 0.8493, standard error 0.04322 (irrCAC).
    """
    if weighting not in ("none", "quadratic"):
        raise ValueError("weighting must be 'none' or 'quadratic'")
    table = _check_cells(cells, size)
    n = sum(count for _, _, count in table)
    q = size
    if n == 0 or q < 2:
        return None
    pooled: dict[int, int] = {}  # r_k + c_k, over the categories used
    for i, j, count in table:
        pooled[i] = pooled.get(i, 0) + count
        pooled[j] = pooled.get(j, 0) + count
    quadratic = weighting == "quadratic"
    scale = (q - 1) ** 2

    def weight(k: int, l: int) -> Fraction:  # noqa: E741
        if not quadratic:
            return Fraction(int(k == l))
        return 1 - Fraction((k - l) ** 2, scale)

    # T_w: q for identity weights; q**2 - q**2 (q + 1) / (6 (q - 1)) for quadratic ones.
    total_weight = Fraction(q) if not quadratic else q * q - Fraction(q * q * (q + 1), 6 * (q - 1))
    factor = total_weight / (q * (q - 1))
    share = {k: Fraction(m, 2 * n) for k, m in pooled.items()}
    p_a = sum((weight(i, j) * count for i, j, count in table), Fraction(0)) / n
    p_e = factor * sum((s * (1 - s) for s in share.values()), Fraction(0))
    ac = (p_a - p_e) / (1 - p_e)
    squares = Fraction(0)
    for i, j, count in table:
        expected = factor * (1 - (share[i] + share[j]) / 2)
        squares += count * (weight(i, j) - 2 * (1 - ac) * expected) ** 2
    mean = p_a - 2 * (1 - ac) * p_e
    variance = (squares / n - mean * mean) / (n * (1 - p_e) ** 2)
    value, interval = _clamped(ac, variance, z)
    return value, interval, n


# --------------------------------------------------------------------------- alpha


def _alpha_exact(
    units: Mapping[tuple[int, int], int], scores: Mapping[int, Fraction] | None
) -> Fraction | None:
    # alpha = 1 - (N - 1) D_o / D_e over two-coder units, N = 2n pooled values.
    # Nominal (scores None): delta = [c != k]; otherwise delta = (s_c - s_k)**2.
    n = sum(units.values())
    if n == 0:
        return None
    pooled = _pooled(units)
    big_n = 2 * n
    if scores is None:
        observed = Fraction(sum(2 * count for (i, j), count in units.items() if i != j))
        expected = Fraction(big_n * big_n - sum(m * m for m in pooled.values()))
    else:
        observed = sum(
            (2 * count * (scores[i] - scores[j]) ** 2 for (i, j), count in units.items()),
            Fraction(0),
        )
        first = sum((m * scores[k] for k, m in pooled.items()), Fraction(0))
        second = sum((m * scores[k] ** 2 for k, m in pooled.items()), Fraction(0))
        expected = 2 * big_n * second - 2 * first * first
    if expected == 0:
        return None
    return 1 - (big_n - 1) * observed / expected


def _pooled(units: Mapping[tuple[int, int], int]) -> dict[int, int]:
    pooled: dict[int, int] = {}
    for (i, j), count in units.items():
        pooled[i] = pooled.get(i, 0) + count
        pooled[j] = pooled.get(j, 0) + count
    return pooled


def _ordinal_scores(units: Mapping[tuple[int, int], int]) -> dict[int, Fraction]:
    # Krippendorff's ordinal difference: delta_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)**2,
    # which is (m_k - m_c)**2 with the mid-cumulative position m_c = N_{<c} + n_c / 2. Levels
    # no value uses add nothing to N_{<c}: only the used levels are scored (a scale may have
    # 10,000 levels).
    scores: dict[int, Fraction] = {}
    below = 0
    for level, m in sorted(_pooled(units).items()):
        scores[level] = below + Fraction(m, 2)
        below += m
    return scores


def _alpha_of(
    units: Mapping[tuple[int, int], int], metric: str, values: Sequence[Fraction]
) -> Fraction | None:
    if metric == "nominal":
        return _alpha_exact(units, None)
    if metric == "ordinal":
        return _alpha_exact(units, _ordinal_scores(units))
    return _alpha_exact(units, dict(enumerate(values)))


def interval_alpha(
    pairs: Mapping[tuple[int, int], int],
) -> tuple[Fraction, float | None, int] | None:
    """Interval alpha of (gold, answer) integers, exactly, with its jackknife variance.

    Numbers are passed scaled to integers (times a common power of ten); alpha
    is a ratio of squared differences, so the scale cancels.

    With ``N = 2n`` pooled values, ``S1`` and ``S2`` their sum and sum of
    squares and ``D = sum_rows 2 (gold - answer)**2``::

        alpha = 1 - (N - 1) D / (2 N S2 - 2 S1**2)

    Each leave-one-out alpha updates the four sums, so the jackknife costs one
    exact evaluation per distinct pair. Every leave-one-out alpha is exact and
    rounded once; the variance ``(n - 1) / n * sum (alpha_(-u) - mean)**2`` is
    then summed with :func:`math.fsum` in the pairs' sorted order, so it is
    the same on every platform.

    Returns:
        ``(alpha, jackknife variance or None, pairs)``, or None when alpha is
        undefined (no pairs, or every pooled value equal).
    """
    n = sum(pairs.values())
    if n == 0:
        return None
    # Integers throughout: every value times the least common denominator (the scale cancels).
    scale = math.lcm(*(v.denominator for pair in pairs for v in pair))
    units = sorted(((int(g * scale), int(a * scale)), count) for (g, a), count in pairs.items())
    s1 = s2 = d = 0
    for (g, a), count in units:
        s1 += count * (g + a)
        s2 += count * (g * g + a * a)
        d += count * 2 * (g - a) ** 2

    def parts(n: int, s1: int, s2: int, d: int) -> tuple[int, int] | None:
        # alpha = (E - (N - 1) D) / E with E = 2 N S2 - 2 S1**2, N = 2n.
        big_n = 2 * n
        expected = 2 * big_n * s2 - 2 * s1 * s1
        return None if n == 0 or expected == 0 else (expected - (big_n - 1) * d, expected)

    found = parts(n, s1, s2, d)
    if found is None:
        return None
    alpha = Fraction(*found)
    if n < 2:
        return alpha, None, n
    values: list[tuple[float, int]] = []
    for (g, a), count in units:
        left = parts(n - 1, s1 - g - a, s2 - g * g - a * a, d - 2 * (g - a) ** 2)
        if left is None:
            return alpha, None, n
        values.append((left[0] / left[1], count))  # int / int: correctly rounded
    mean = math.fsum(value * count for value, count in values) / n
    spread = math.fsum(count * (value - mean) ** 2 for value, count in values)
    return alpha, (n - 1) / n * spread, n


def alpha_interval(alpha: Fraction, variance: float | None, z: float) -> Interval | None:
    """``alpha -/+ z sqrt(variance)``, clamped as :func:`krippendorff_alpha`'s; None without one."""
    if variance is None:
        return None
    return _clamped(alpha, Fraction(variance), z)[1]


JACKKNIFE_LIMIT: Final = 250_000
"""The largest (distinct cells x categories used) whose jackknife is computed: beyond it (a
sparse table on a long ordinal scale) alpha has no interval rather than minutes of work."""


def _jackknife(
    units: dict[tuple[int, int], int], metric: str, numbers: Sequence[Fraction], n: int
) -> float | None:
    # (n - 1) / n * sum over rows of (alpha_(-row) - mean)**2, each alpha_(-row) exact and
    # rounded once, the sums taken with math.fsum in the cells' sorted order.
    values: list[tuple[float, int]] = []
    for cell in sorted(units):
        count = units[cell]
        units[cell] -= 1
        reduced = {key: m for key, m in units.items() if m}
        found = _alpha_of(reduced, metric, numbers)
        units[cell] += 1
        if found is None:
            return None
        values.append((float(found), count))
    mean = math.fsum(value * count for value, count in values) / n
    return (n - 1) / n * math.fsum(count * (value - mean) ** 2 for value, count in values)


def krippendorff_alpha(
    cells: Iterable[Cell],
    size: int,
    metric: str,
    z: float = Z95,
    values: Sequence[Fraction] | None = None,
) -> tuple[float, Interval | None, int] | None:
    """Krippendorff's alpha for two coders (gold and answers) with a jackknife interval.

    Every unit (answered answerable row) holds two values, so with ``N = 2n``
    pooled values, ``n_c`` of them in category ``c``, and a difference
    function ``delta``::

        alpha = 1 - (N - 1) * sum_units 2 delta(g, a) / sum_ck n_c n_k delta(c, k)

    ``delta`` is ``[c != k]`` (nominal), Krippendorff's ordinal difference
    ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)**2`` (categories in scale order) or
    ``(v_c - v_k)**2`` for the numbers ``values`` (interval). The interval is
    ``alpha -/+ z sqrt(v)`` with the delete-one-unit jackknife variance ``v =
    (n - 1) / n * sum_u (alpha_(-u) - mean_u alpha_(-u))**2`` (every
    leave-one-out alpha recomputed exactly, including the ordinal metric's
    marginals, rounded once and summed with :func:`math.fsum` in sorted order),
    clamped to [-1, 1] (alpha can lie below -1 on a small table: the interval
    then starts at alpha); None when some leave-one-out alpha is undefined,
    ``n < 2``, or the table is beyond :data:`JACKKNIFE_LIMIT`.

    Args:
        cells: Nonzero cells (gold category, answer category, count).
        size: The number of categories (positions ``0 .. size - 1``).
        metric: ``"nominal"``, ``"ordinal"`` or ``"interval"``.
        z: The normal quantile of the interval.
        values: The number of each category, for ``"interval"``.

    Returns:
        ``(alpha, interval or None, pairs)``, or None when alpha is undefined:
        no pairs, or no spread in the pooled values.
    """
    if metric not in ALPHA_METRICS:
        raise ValueError("metric must be nominal, ordinal or interval")
    table = _check_cells(cells, size)
    if metric == "interval" and (values is None or len(values) != size):
        raise ValueError("interval alpha needs a value per category")
    numbers = list(values) if values is not None else []
    units: dict[tuple[int, int], int] = {}
    for i, j, count in table:
        units[i, j] = units.get((i, j), 0) + count
    n = sum(units.values())
    alpha = _alpha_of(units, metric, numbers)
    if alpha is None:
        return None
    interval: Interval | None = None
    used = len(_pooled(units))
    if n >= 2 and len(units) * used <= JACKKNIFE_LIMIT:
        variance = _jackknife(units, metric, numbers, n)
        if variance is not None:
            interval = _clamped(alpha, Fraction(variance), z)[1]
    return float(alpha), interval, n
