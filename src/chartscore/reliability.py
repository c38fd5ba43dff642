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

from chartscore.stats import Z95

Cell = tuple[int, int, int]
"""(gold category, answer category, count) of a sparse square table."""

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
    units: Mapping[tuple[int, int], int], scores: Sequence[Fraction] | None
) -> Fraction | None:
    # alpha = 1 - (N - 1) D_o / D_e over two-coder units, N = 2n pooled values.
    # Nominal (scores None): delta = [c != k]; otherwise delta = (s_c - s_k)**2.
    n = sum(units.values())
    if n == 0:
        return None
    pooled: dict[int, int] = {}
    for (i, j), count in units.items():
        pooled[i] = pooled.get(i, 0) + count
        pooled[j] = pooled.get(j, 0) + count
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


def _ordinal_scores(units: Mapping[tuple[int, int], int], size: int) -> list[Fraction]:
    # Krippendorff's ordinal difference: delta_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)**2,
    # which is (m_k - m_c)**2 with the mid-cumulative position m_c = N_{<c} + n_c / 2.
    pooled = [0] * size
    for (i, j), count in units.items():
        pooled[i] += count
        pooled[j] += count
    scores: list[Fraction] = []
    below = 0
    for m in pooled:
        scores.append(below + Fraction(m, 2))
        below += m
    return scores


def _alpha_of(
    units: Mapping[tuple[int, int], int], metric: str, size: int, values: Sequence[Fraction]
) -> Fraction | None:
    if metric == "nominal":
        return _alpha_exact(units, None)
    if metric == "ordinal":
        return _alpha_exact(units, _ordinal_scores(units, size))
    return _alpha_exact(units, values)


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
    marginals), clamped to [-1, 1] (alpha can lie below -1 on a small table:
    the interval then starts at alpha); None when some leave-one-out alpha is
    undefined or ``n < 2``.

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
    alpha = _alpha_of(units, metric, size, numbers)
    if alpha is None:
        return None
    interval: Interval | None = None
    leave_one_out: list[tuple[Fraction, int]] = []
    for cell, count in units.items():
        units[cell] -= 1
        reduced = {key: m for key, m in units.items() if m}
        found = _alpha_of(reduced, metric, size, numbers) if n >= 2 else None
        units[cell] += 1
        if found is None:
            break
        leave_one_out.append((found, count))
    else:
        mean = sum((a * m for a, m in leave_one_out), Fraction(0)) / n
        spread = sum((m * (a - mean) ** 2 for a, m in leave_one_out), Fraction(0))
        interval = _clamped(alpha, Fraction(n - 1, n) * spread, z)[1]
    return float(alpha), interval, n
