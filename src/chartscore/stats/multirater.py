"""Agreement among several raters: Fleiss' kappa, Gwet's AC1/AC2 and Krippendorff's alpha.

Each unit (a chart's field) holds the ratings the raters placed on the field's scale:
``r_uk`` of them in category ``k``, ``r_u = sum_k r_uk`` in all. A rater who abstained,
left the unit out or answered with a value outside the field's type adds nothing: the
coefficients take any number of ratings per unit (docs/metrics.md, "Agreement among
raters"). Units are given as *patterns* (the sorted ``(category, count)`` pairs of a
unit) with their multiplicity, so a field of many charts and few categories costs a few
distinct patterns.

Everything is exact rational arithmetic, rounded once at the end (square roots and
quantiles aside), so the same counts give the same bits everywhere.

Value-free: integers and rationals in, floats out; imports only ``stats``.

References:
    J. L. Fleiss (1971), "Measuring nominal scale agreement among many raters",
    Psychological Bulletin 76(5):378-382; K. L. Gwet (2014), Handbook of Inter-Rater
    Reliability, 4th ed., Advanced Analytics, chapters 2 to 5 (the generalized Fleiss'
    kappa and AC1/AC2 with missing ratings, and their linearized variances: the irrCAC
    package's ``fleiss`` and ``gwet``); K. Krippendorff (2011), "Computing
    Krippendorff's alpha-reliability", Annenberg School for Communication Departmental
    Paper 43; B. Efron, C. Stein (1981), "The jackknife estimate of variance", Annals of
    Statistics 9(3):586-596.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final

from chartscore.stats.student_t import t_quantile

Pattern = tuple[tuple[int, int], ...]
"""One unit's ratings: its ``(category, count)`` pairs, categories ascending, counts > 0."""

Units = Mapping[Pattern, int]
"""Each distinct pattern and how many units have it."""

Interval = tuple[float, float]

WEIGHTINGS: Final = ("none", "quadratic")
"""Agreement weights: identity (nominal) or quadratic ``1 - (k - l)**2 / (q - 1)**2``."""

ALPHA_METRICS: Final = ("nominal", "ordinal", "interval")
"""Krippendorff's difference functions: categories, ranks, or numbers."""

JACKKNIFE_LIMIT: Final = 250_000
"""The largest (distinct patterns x coincidence cells) whose ordinal-alpha jackknife is
computed; beyond it the coefficient has no interval rather than minutes of exact work."""


def check_units(units: Units, size: int) -> list[tuple[Pattern, int]]:
    """The units sorted, after checking every pattern lies on a scale of ``size`` categories.

    Raises:
        ValueError: a size that is not a positive int, a multiplicity that is not a
            positive int, or a pattern whose categories are not ascending positions
            ``0 .. size - 1`` with positive int counts.
    """
    if type(size) is not int or size < 1:
        raise ValueError("size must be a positive int")
    table = []
    for pattern, many in units.items():
        if type(many) is not int or many < 1 or type(pattern) is not tuple or not pattern:
            raise ValueError("units must map non-empty patterns to positive ints")
        previous = -1
        for category, count in pattern:
            if type(category) is not int or type(count) is not int or count < 1:
                raise ValueError("a pattern holds (category, count) ints")
            if not previous < category < size:
                raise ValueError("a pattern's categories ascend inside the scale")
            previous = category
        table.append((pattern, many))
    table.sort()
    return table


def _weight(weighting: str, size: int) -> tuple[Fraction, Fraction]:
    # (scale of the quadratic distance, T_w = sum_kl w_kl over the full q x q scale).
    if weighting not in WEIGHTINGS:
        raise ValueError("weighting must be 'none' or 'quadratic'")
    if weighting == "none" or size < 2:
        return Fraction(0), Fraction(size)
    scale = Fraction(1, (size - 1) ** 2)
    # sum_kl (k - l)**2 over 0..q-1 is q**2 (q**2 - 1) / 6.
    return scale, size * size - scale * Fraction(size * size * (size * size - 1), 6)


def _clamped(value: Fraction, variance: Fraction, quantile: float) -> Interval:
    # value -/+ quantile * sqrt(variance), clamped to [-1, 1] (to [value, 1] below -1).
    point = float(value)
    half = quantile * math.sqrt(float(variance))
    return (max(min(-1.0, point), point - half), min(1.0, point + half))


def _quantile(confidence: float, units: int) -> float:
    return t_quantile(confidence, units - 1)


def chance_corrected(
    units: Units, size: int, weighting: str, chance: str, confidence: float = 0.95
) -> tuple[float, Interval | None, int, int] | None:
    """Fleiss' kappa (``chance="fleiss"``) or Gwet's AC1/AC2 (``chance="gwet"``) of many raters.

    With ``n`` units holding at least one rating, ``n2`` of them at least two, agreement
    weights ``w`` (identity, or quadratic for an ordinal scale: AC2 and weighted
    Fleiss), ``r*_uk = sum_l w_kl r_ul`` and ``T_w = sum_kl w_kl``::

        p_a(u) = sum_k r_uk (r*_uk - 1) / (r_u (r_u - 1))        (units with r_u >= 2)
        p_a    = mean of p_a(u) over the n2 units
        pi_k   = (1 / n) sum_u r_uk / r_u
        p_e    = sum_kl w_kl pi_k pi_l                           (Fleiss)
               = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k)         (Gwet, q categories)
        coefficient c = (p_a - p_e) / (1 - p_e)

    With every unit rated by the same raters this is Fleiss' (1971) kappa. The variance
    is Gwet's linearized one over units (irrCAC's)::

        c_u  = (n / n2) (p_a(u) - p_e [r_u >= 2]) / (1 - p_e)
        e_u  = sum_k r_uk pibar_k / r_u,  pibar_k = sum_l w_kl pi_l      (Fleiss)
             = T_w / (q (q - 1)) sum_k r_uk (1 - pi_k) / r_u             (Gwet)
        x_u  = c_u - 2 (1 - c) (e_u - p_e) / (1 - p_e)
        var  = sum_u (x_u - c)**2 / (n (n - 1))

    and the interval is ``c -/+ t sqrt(var)`` with Student's t at ``n - 1`` degrees of
    freedom (docs/metrics.md, "Intervals from few units"), clamped to [-1, 1].

    Args:
        units: The units' patterns and multiplicities (:data:`Units`).
        size: ``q``, the number of categories on the field's scale.
        weighting: ``"none"`` or ``"quadratic"``.
        chance: ``"fleiss"`` or ``"gwet"``.
        confidence: The interval's level: 0.9, 0.95 or 0.99.

    Returns:
        ``(coefficient, interval or None, units, pairs)`` with ``units`` the ``n2``
        units of two or more ratings and ``pairs`` their ordered rating pairs
        ``sum r_u (r_u - 1)``; None when undefined: no unit of two ratings, chance
        agreement of 1, or (Gwet) fewer than two categories. The interval is None
        with fewer than two units.

    Example:
        Fleiss' (1971) 30 subjects, 6 raters, 5 categories: kappa 0.430.
    """
    if chance not in ("fleiss", "gwet"):
        raise ValueError("chance must be 'fleiss' or 'gwet'")
    table = check_units(units, size)
    scale, total_weight = _weight(weighting, size)
    q = size

    def weight(k: int, l: int) -> Fraction:  # noqa: E741
        return Fraction(int(k == l)) if not scale else 1 - scale * (k - l) ** 2

    n = sum(many for _, many in table)
    n2 = sum(many for pattern, many in table if _raters(pattern) >= 2)
    if n2 == 0 or (chance == "gwet" and q < 2):
        return None
    agreement: list[Fraction] = []
    share: dict[int, Fraction] = {}
    for pattern, many in table:
        r = _raters(pattern)
        if r >= 2:
            total = sum(
                (
                    count * (sum((weight(k, other) * m for other, m in pattern), Fraction(0)) - 1)
                    for k, count in pattern
                ),
                Fraction(0),
            )
            agreement.append(total / (r * (r - 1)))
        else:
            agreement.append(Fraction(0))
        for k, count in pattern:
            share[k] = share.get(k, Fraction(0)) + Fraction(many * count, r)
    pi = {k: value / n for k, value in share.items()}
    p_a = sum((a * many for a, (_, many) in zip(agreement, table, strict=True)), Fraction(0)) / n2
    factor = total_weight / (q * (q - 1)) if q >= 2 else Fraction(0)
    if chance == "fleiss":
        pibar = {k: sum((weight(k, other) * p for other, p in pi.items()), Fraction(0)) for k in pi}
        p_e = sum((pi[k] * pibar[k] for k in pi), Fraction(0))
    else:
        p_e = factor * sum((p * (1 - p) for p in pi.values()), Fraction(0))
    if p_e == 1:
        return None
    value = (p_a - p_e) / (1 - p_e)
    pairs = sum(many * _raters(pattern) * (_raters(pattern) - 1) for pattern, many in table)
    if n < 2:
        return float(value), None, n2, pairs
    squares = Fraction(0)
    for a, (pattern, many) in zip(agreement, table, strict=True):
        r = _raters(pattern)
        unit = Fraction(n, n2) * (a - (p_e if r >= 2 else 0)) / (1 - p_e)
        if chance == "fleiss":
            expected = sum((count * pibar[k] for k, count in pattern), Fraction(0)) / r
        else:
            expected = factor * sum((count * (1 - pi[k]) for k, count in pattern), Fraction(0))
            expected /= r
        x = unit - 2 * (1 - value) * (expected - p_e) / (1 - p_e)
        squares += many * (x - value) ** 2
    variance = squares / (n * (n - 1))
    return float(value), _clamped(value, variance, _quantile(confidence, n)), n2, pairs


def _raters(pattern: Pattern) -> int:
    return sum(count for _, count in pattern)


# --------------------------------------------------------------------------- alpha


def _marginals(table: Sequence[tuple[Pattern, int]]) -> dict[int, int]:
    totals: dict[int, int] = {}
    for pattern, many in table:
        for k, count in pattern:
            totals[k] = totals.get(k, 0) + many * count
    return totals


def _rank_scores(totals: Mapping[int, int]) -> dict[int, Fraction]:
    # Krippendorff's ordinal difference (sum_{g=c..k} n_g - (n_c + n_k) / 2)**2 is
    # (s_k - s_c)**2 with the mid-cumulative position s_c = N_{<c} + n_c / 2.
    scores: dict[int, Fraction] = {}
    below = 0
    for level in sorted(totals):
        m = totals[level]
        if m:
            scores[level] = below + Fraction(m, 2)
            below += m
    return scores


class _Sums:
    """What alpha is made of, kept so that one unit can be taken out and put back."""

    __slots__ = ("expected_parts", "metric", "observed", "total", "values")

    def __init__(self, metric: str, values: Sequence[Fraction]) -> None:
        self.metric = metric
        self.values = values
        self.total = 0  # N, the pairable ratings
        self.observed = Fraction(0)  # sum over units of their disagreement / (r_u - 1)
        # nominal: {category: n_c}; interval: [S1, S2] of the values
        self.expected_parts: dict[int, int] | list[Fraction] = (
            {}
            if metric == "nominal"
            else [
                Fraction(0),
                Fraction(0),
            ]
        )

    def unit_observed(self, pattern: Pattern) -> Fraction:
        r = _raters(pattern)
        if self.metric == "nominal":
            return Fraction(r * r - sum(count * count for _, count in pattern), r - 1)
        s1 = sum((count * self.values[k] for k, count in pattern), Fraction(0))
        s2 = sum((count * self.values[k] ** 2 for k, count in pattern), Fraction(0))
        return (2 * r * s2 - 2 * s1 * s1) / (r - 1)

    def add(self, pattern: Pattern, many: int) -> None:
        self.total += many * _raters(pattern)
        self.observed += many * self.unit_observed(pattern)
        parts = self.expected_parts
        for k, count in pattern:
            if isinstance(parts, dict):
                parts[k] = parts.get(k, 0) + many * count
            else:
                parts[0] += many * count * self.values[k]
                parts[1] += many * count * self.values[k] ** 2

    def alpha(self) -> Fraction | None:
        big_n = self.total
        parts = self.expected_parts
        if isinstance(parts, dict):
            expected = Fraction(big_n * big_n - sum(m * m for m in parts.values()))
        else:
            expected = 2 * big_n * parts[1] - 2 * parts[0] * parts[0]
        if big_n == 0 or expected == 0:
            return None
        return 1 - (big_n - 1) * self.observed / expected


def _ordinal_alpha(coincidence: Mapping[tuple[int, int], Fraction]) -> Fraction | None:
    # alpha = 1 - (N - 1) sum_ck o_ck (s_c - s_k)**2 / (2 N S2 - 2 S1**2), with o the
    # coincidences off the diagonal, n_c the marginals and s the rank scores.
    totals: dict[int, int] = {}
    for (c, k), value in coincidence.items():
        if c == k:  # the diagonal holds the marginals (see _coincidences)
            totals[c] = int(value)
    scores = _rank_scores(totals)
    big_n = sum(totals.values())
    s1 = sum((m * scores[c] for c, m in totals.items() if m), Fraction(0))
    s2 = sum((m * scores[c] ** 2 for c, m in totals.items() if m), Fraction(0))
    expected = 2 * big_n * s2 - 2 * s1 * s1
    if big_n == 0 or expected == 0:
        return None
    observed = sum(
        (value * (scores[c] - scores[k]) ** 2 for (c, k), value in coincidence.items() if c != k),
        Fraction(0),
    )
    return 1 - (big_n - 1) * observed / expected


def _coincidences(
    table: Sequence[tuple[Pattern, int]], sign: int = 1
) -> dict[tuple[int, int], Fraction]:
    # Off the diagonal: o_ck = sum_u r_uc r_uk / (r_u - 1); on it: the marginal n_c.
    found: dict[tuple[int, int], Fraction] = {}
    for pattern, many in table:
        r = _raters(pattern)
        for c, count in pattern:
            found[c, c] = found.get((c, c), Fraction(0)) + sign * many * count
            for k, other in pattern:
                if k != c:
                    step = Fraction(sign * many * count * other, r - 1)
                    found[c, k] = found.get((c, k), Fraction(0)) + step
    return found


def krippendorff_alpha(
    units: Units,
    size: int,
    metric: str,
    confidence: float = 0.95,
    values: Sequence[Fraction] | None = None,
) -> tuple[float, Interval | None, int, int] | None:
    """Krippendorff's alpha of many raters, with a delete-one-unit jackknife interval.

    Over the pairable units (two or more ratings), with ``N`` pairable ratings, ``n_c``
    of them in category ``c`` and a difference function ``delta``::

        alpha = 1 - (N - 1) sum_u [sum_ck r_uc r_uk delta(c, k) / (r_u - 1)]
                          / sum_ck n_c n_k delta(c, k)

    ``delta`` is ``[c != k]`` (nominal), Krippendorff's ordinal difference
    ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)**2`` over the categories in scale order, or
    ``(v_c - v_k)**2`` for the numbers ``values`` (interval). The interval is ``alpha
    -/+ t sqrt(v)``, with the jackknife variance ``v = (n - 1) / n sum_u (alpha_(-u) -
    mean alpha_(-u))**2`` over the ``n`` pairable units (each leave-one-out alpha exact,
    the ordinal metric's marginals included) and Student's t at ``n - 1`` degrees of
    freedom, clamped to [-1, 1] as for the two-rater alpha.

    Args:
        units: The units' patterns and multiplicities (:data:`Units`).
        size: The number of categories (positions ``0 .. size - 1``).
        metric: ``"nominal"``, ``"ordinal"`` or ``"interval"``.
        confidence: The interval's level: 0.9, 0.95 or 0.99.
        values: The number of each category, for ``"interval"``.

    Returns:
        ``(alpha, interval or None, units, pairs)`` over the pairable units and their
        ordered rating pairs; None when alpha is undefined (no pairable unit, or no
        spread in the pooled ratings). The interval is None with fewer than two
        pairable units, when some leave-one-out alpha is undefined, or (ordinal) beyond
        :data:`JACKKNIFE_LIMIT`.
    """
    if metric not in ALPHA_METRICS:
        raise ValueError("metric must be nominal, ordinal or interval")
    if metric == "interval" and (values is None or len(values) != size):
        raise ValueError("interval alpha needs a value per category")
    table = [item for item in check_units(units, size) if _raters(item[0]) >= 2]
    n = sum(many for _, many in table)
    pairs = sum(many * _raters(pattern) * (_raters(pattern) - 1) for pattern, many in table)
    if metric == "ordinal":
        coincidence = _coincidences(table)
        alpha = _ordinal_alpha(coincidence)
        if alpha is None:
            return None
        leave_out: list[Fraction | None] = []
        if n >= 2 and len(table) * len(coincidence) <= JACKKNIFE_LIMIT:
            for pattern, _ in table:
                reduced = dict(coincidence)
                for key, step in _coincidences([(pattern, 1)], -1).items():
                    reduced[key] += step
                leave_out.append(_ordinal_alpha({k: v for k, v in reduced.items() if v}))
        return _with_jackknife(
            alpha, leave_out=leave_out, table=table, n=n, pairs=pairs, confidence=confidence
        )
    sums = _Sums(metric, list(values) if values is not None else [])
    for pattern, many in table:
        sums.add(pattern, many)
    alpha = sums.alpha()
    if alpha is None:
        return None
    leave_out = []
    if n >= 2:
        for pattern, _ in table:
            sums.add(pattern, -1)
            leave_out.append(sums.alpha())
            sums.add(pattern, 1)
    return _with_jackknife(
        alpha, leave_out=leave_out, table=table, n=n, pairs=pairs, confidence=confidence
    )


def _with_jackknife(
    alpha: Fraction,
    *,
    leave_out: list[Fraction | None],
    table: Sequence[tuple[Pattern, int]],
    n: int,
    pairs: int,
    confidence: float,
) -> tuple[float, Interval | None, int, int]:
    if len(leave_out) != len(table) or any(value is None for value in leave_out):
        return float(alpha), None, n, pairs
    known = [value for value in leave_out if value is not None]
    mean = sum((v * many for v, (_, many) in zip(known, table, strict=True)), Fraction(0)) / n
    spread = sum(
        (many * (v - mean) ** 2 for v, (_, many) in zip(known, table, strict=True)), Fraction(0)
    )
    variance = Fraction(n - 1, n) * spread
    return float(alpha), _clamped(alpha, variance, _quantile(confidence, n)), n, pairs
