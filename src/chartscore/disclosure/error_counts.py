"""What a published error magnitude says about how many errors are nonzero.

A shown mean absolute error, mean signed error and limits of agreement give an
outsider the sums ``S1 = sum |d|`` and ``S2 = sum d**2`` over the ``pairs``
(docs/disclosure.md, "Magnitudes that cannot be worked back"). Errors lie on a
lattice: a date's are whole days, a number's whole multiples of some unit
``u``. So the number ``N`` of nonzero errors obeys

- ``N <= S1 / u`` (each nonzero error is at least ``u``), and
- ``N >= S1**2 / S2`` (Cauchy-Schwarz: ``S1**2 <= N * S2``), whatever ``u``.

The audit's model holds ``N`` as an unknown (its layout's ``nonzero_errors``
variable) with these bounds and the threshold rule's ``N >= min_cell``: a
count that they pin into 1..min_cell-1 is then found like any other. A date's
unit (one day) is public; a number's is not in the shared report, so ``share``
passes the finest unit the errors themselves lie on (known inside only), and
the outside audit uses the Cauchy-Schwarz bound alone for numbers.

Value-free: figures of a shared report and one inside unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Final, TypeVar

from chartscore.documents.shared_figures import (
    FIGURE_INCONSISTENT,
    FIGURE_PUBLISHED,
    MAGNITUDE,
    SharedMagnitude,
)

_SLACK: Final = 1e-6
"""Absolute slack before rounding a bound: the figures are floats of exact sums."""
_RELATIVE: Final = 1e-9

_Number = TypeVar("_Number", float, Fraction)

DAY: Final = Fraction(1)
"""A date's errors are whole days."""


def moment_sums(magnitude: SharedMagnitude, z: float) -> tuple[float, float | None] | None:
    """``(S1, S2)`` from the shown figures (``S2`` None without the limits); None if hidden."""
    return _moment_sums(magnitude, z, float)


def _moment_sums(
    magnitude: SharedMagnitude, z: float, number: Callable[[float], _Number]
) -> tuple[_Number, _Number | None] | None:
    # moment_sums in ``number``'s arithmetic: float, or Fraction where a float overflows.
    n, mae, bias = magnitude.pairs, magnitude.mean_absolute_error, magnitude.bias
    if n is None or mae is None or bias is None:
        return None
    first = number(mae) * n
    limits = magnitude.limits_of_agreement
    if limits is None or n < 2 or z <= 0:
        return first, None
    deviation = (number(limits[1]) - number(limits[0])) / (2 * number(z))
    return first, (n - 1) * deviation * deviation + n * number(bias) * number(bias)


def nonzero_bounds(
    magnitude: SharedMagnitude, z: float, unit: Fraction | None
) -> tuple[int, int | None] | None:
    """Bounds ``(lower, upper)`` on the nonzero errors an outsider derives; None if hidden.

    ``unit``: the lattice step of the errors (one day for dates), None when the
    outsider cannot know it (``upper`` is then None).
    """
    sums = moment_sums(magnitude, z)
    if sums is None:
        return None
    first, squares = sums
    overflowed = False
    try:
        upper = None
        if unit is not None and unit > 0:
            upper = math.floor(first / float(unit) * (1 + _RELATIVE) + _SLACK)
        lower = 1 if first > _SLACK else 0
        if squares is not None and squares > _SLACK:
            lower = max(lower, math.ceil(first * first / squares * (1 - _RELATIVE) - _SLACK))
    except (OverflowError, ValueError, ZeroDivisionError):
        overflowed = True  # answers near 1e308 or a unit under 1e-308: beyond a float
    if overflowed:
        return _exact_bounds(magnitude, z, unit)
    return lower, upper


def _exact_bounds(
    magnitude: SharedMagnitude, z: float, unit: Fraction | None
) -> tuple[int, int | None]:
    # nonzero_bounds in exact arithmetic, where its float steps fail (an infinite or NaN
    # bound raised, an internal_error of share); the same figures and slack. An upper
    # bound at or above the pairs (each nonzero error is one pair) bounds nothing: None.
    pairs, sums = magnitude.pairs, _moment_sums(magnitude, z, Fraction)
    assert pairs is not None and sums is not None  # shown: nonzero_bounds had them
    first, squares = sums
    upper = None
    if unit is not None and unit > 0:
        upper = math.floor(first / unit * (1 + Fraction(_RELATIVE)) + Fraction(_SLACK))
        upper = None if upper >= pairs else upper
    lower = 1 if first > Fraction(_SLACK) else 0
    if squares is not None and squares > Fraction(_SLACK):
        quotient = first * first / squares * (1 - Fraction(_RELATIVE)) - Fraction(_SLACK)
        lower = max(lower, math.ceil(quotient))
    return lower, upper


def public_unit(magnitude: SharedMagnitude) -> Fraction | None:
    """The unit an outsider knows from the shared report alone: a day for dates."""
    return DAY if magnitude.unit == "days" else None


def error_count_failures(
    magnitude: SharedMagnitude | None, min_cell: int, z: float
) -> list[tuple[str, str]]:
    """The audit's rows for a shown magnitude that the threshold rule forbids.

    ``figure_published`` when the public bounds leave fewer than ``min_cell``
    nonzero errors (say, dates whose absolute errors sum to fewer than
    ``min_cell`` days); ``inconsistent`` when the bounds contradict each other.
    """
    if magnitude is None:
        return []
    bounds = nonzero_bounds(magnitude, z, public_unit(magnitude))
    if bounds is None:
        return []
    lower, upper = bounds
    if upper is None:
        return []
    label = f"{MAGNITUDE}.mean_absolute_error"
    if upper < lower:
        return [(label, FIGURE_INCONSISTENT)]
    if upper < min_cell:
        return [(label, FIGURE_PUBLISHED)]
    return []


__all__ = ["DAY", "error_count_failures", "moment_sums", "nonzero_bounds", "public_unit"]
