"""Error magnitude for numbers and dates: exact sums in, figures out.

For a number or date field, each answered answerable row whose answer and gold
have a distance (a number; two full-precision dates, in days) has a signed
error ``d = answer - gold``. The report publishes the exact sums of ``|d|``,
``d`` and ``d**2`` over those rows, and of ``|gold - median(gold)|`` over the
answerable rows with such a gold: every figure (mean absolute error, mean
signed error and its interval, Bland-Altman limits of agreement, the chance
level) is a function of them, recomputed when a document is read
(docs/metrics.md, "Error magnitude").

Sums are :class:`~fractions.Fraction` while counted (numbers are exact
decimals, dates whole days), so partial tallies merge exactly; a document
writes them as exact decimal strings, and only the figures are floats (null
when beyond the float range: numbers may reach 1e9999).

Value-free: aggregates only; imports only ``student_t``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from decimal import Context, Decimal, Inexact, localcontext
from fractions import Fraction
from typing import Final

import attrs

from chartscore.stats.student_t import t_for

UNITS: Final = ("field", "days")
"""A number field's errors are in its own unit; a date field's in days."""

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")
MAX_DECIMAL_DIGITS: Final = 100_000
"""The longest exact decimal a document may hold: sums of squares of numbers between 1e-9999
and 1e9999 have at most about 40,000 digits."""

_EXACT: Final = Context(prec=200_000, Emax=10**6, Emin=-(10**6), traps=[Inexact])


def as_float(value: Fraction) -> float | None:
    """``value`` correctly rounded to a float, or None beyond the float range (1.8e308)."""
    try:
        return float(value)
    except OverflowError:
        return None


def exact_decimal(value: Fraction) -> str:
    """The exact decimal text of a fraction whose denominator has no prime but 2 and 5.

    ``Fraction(5, 2)`` is ``"2.5"``, ``Fraction(-3)`` is ``"-3"``; no exponent,
    no trailing zeros, ``"0"`` for zero. Computed in decimal arithmetic, so a
    sum of 100-digit numbers near 1e9999 (tens of thousands of digits) is fine.

    Raises:
        ValueError: for a fraction with no finite decimal expansion.
    """
    denominator = value.denominator
    places = 0
    while denominator % 10 == 0 or denominator % 2 == 0 or denominator % 5 == 0:
        if denominator % 10 == 0:
            denominator //= 10
        elif denominator % 2 == 0:
            denominator //= 2
        else:
            denominator //= 5
        places += 1
    if denominator != 1:
        raise ValueError("no finite decimal expansion")
    with localcontext(_EXACT):
        quotient = Decimal(value.numerator) / Decimal(value.denominator)
    if not quotient:
        return "0"
    text = format(quotient, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def parse_exact_decimal(text: object) -> Fraction | None:
    """The fraction an :func:`exact_decimal` string stands for; None for any other text."""
    if type(text) is not str or len(text) > MAX_DECIMAL_DIGITS or not _DECIMAL.fullmatch(text):
        return None
    if text == "-0":
        return None
    return Fraction(Decimal(text))


@attrs.frozen
class ErrorSums:
    """The exact sums behind one field's error magnitude (docs/metrics.md).

    Attributes:
        unit: ``"field"`` (numbers) or ``"days"`` (dates).
        pairs: Answered answerable rows with a distance: the denominator of
            every error figure.
        sum_absolute, sum_signed, sum_squares: Sums of ``|d|``, ``d`` and
            ``d**2``, with ``d = answer - gold``.
        gold_rows: Answerable rows whose gold has a distance (every number; a
            full-precision date): the chance level's denominator.
        sum_deviation: Sum of ``|gold - median|`` over those rows.
    """

    unit: str
    pairs: int
    sum_absolute: Fraction
    sum_signed: Fraction
    sum_squares: Fraction
    gold_rows: int
    sum_deviation: Fraction

    def __attrs_post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError("unit must be 'field' or 'days'")
        if type(self.pairs) is not int or type(self.gold_rows) is not int:
            raise ValueError("counts must be int")
        if not consistent(self):
            raise ValueError("error sums are inconsistent")

    @classmethod
    def of(
        cls, unit: str, errors: Iterable[tuple[Fraction, int]], gold: Iterable[tuple[Fraction, int]]
    ) -> ErrorSums:
        """The sums of ``(error d, rows)`` and of ``(gold value, rows)`` (any order)."""
        pairs = 0
        absolute = signed = squares = Fraction(0)
        for d, rows in errors:
            pairs += rows
            absolute += rows * abs(d)
            signed += rows * d
            squares += rows * d * d
        values = sorted(gold)
        gold_rows = sum(rows for _, rows in values)
        centre = median(values)
        deviation = sum((rows * abs(v - centre) for v, rows in values), Fraction(0))
        return cls(unit, pairs, absolute, signed, squares, gold_rows, deviation)

    @classmethod
    def scaled(
        cls,
        unit: str,
        scale: int,
        pairs: Mapping[tuple[int, int], int],
        gold: Mapping[int, int],
    ) -> ErrorSums:
        """:meth:`of` in integers: every value times ``scale``, as ``(gold, answer)`` pairs.

        The same sums, computed with integer arithmetic (a tally may hold a
        hundred thousand distinct pairs), divided by the scale once at the end.
        """
        absolute = signed = squares = 0
        count = 0
        for (g, a), rows in pairs.items():
            d = a - g
            count += rows
            absolute += rows * abs(d)
            signed += rows * d
            squares += rows * d * d
        values = sorted(gold.items())
        gold_rows = sum(rows for _, rows in values)
        centre = median([(Fraction(v), rows) for v, rows in values])
        twice = 2 * centre  # an integer: the middle value, or the sum of the two middle ones
        deviation = sum(rows * abs(2 * v - int(twice)) for v, rows in values)
        return cls(
            unit,
            count,
            Fraction(absolute, scale),
            Fraction(signed, scale),
            Fraction(squares, scale * scale),
            gold_rows,
            Fraction(deviation, 2 * scale),
        )


def consistent(sums: ErrorSums) -> bool:
    """Whether the sums could come from real rows (a check on documents).

    Non-negative counts and sums of absolutes and squares, none without rows,
    ``|sum d| <= sum |d|`` and ``(sum |d|)**2 <= n sum d**2`` (Cauchy-Schwarz);
    whole days for dates.
    """
    n = sums.pairs
    days = (sums.sum_absolute, sums.sum_signed, sums.sum_squares, 2 * sums.sum_deviation)
    if sums.unit == "days" and any(value.denominator != 1 for value in days):
        return False  # whole days, and a median of whole days or halves
    if n < 0 or sums.gold_rows < 0 or sums.sum_absolute < 0 or sums.sum_squares < 0:
        return False
    if sums.sum_deviation < 0 or (sums.gold_rows == 0 and sums.sum_deviation != 0):
        return False
    if n == 0:
        return sums.sum_absolute == sums.sum_signed == sums.sum_squares == 0
    return (
        abs(sums.sum_signed) <= sums.sum_absolute and sums.sum_absolute**2 <= n * sums.sum_squares
    )


def median(values: list[tuple[Fraction, int]]) -> Fraction:
    """The median of sorted ``(value, rows)``: the middle value, or the mean of the two middle."""
    total = sum(rows for _, rows in values)
    if total == 0:
        return Fraction(0)
    low_rank, high_rank = (total - 1) // 2, total // 2
    seen = 0
    low = high = None
    for value, rows in values:
        if low is None and seen + rows > low_rank:
            low = value
        if seen + rows > high_rank:
            high = value
            break
        seen += rows
    assert low is not None and high is not None
    return (low + high) / 2


def mean_absolute_error(sums: ErrorSums) -> float | None:
    """``sum |d| / n``, correctly rounded; None with no pairs."""
    return None if sums.pairs == 0 else as_float(sums.sum_absolute / sums.pairs)


def mean_signed_error(sums: ErrorSums) -> float | None:
    """``sum d / n`` (the bias: positive when answers run above gold); None with no pairs."""
    return None if sums.pairs == 0 else as_float(sums.sum_signed / sums.pairs)


def error_variance(sums: ErrorSums) -> Fraction | None:
    """The sample variance of ``d``: ``(sum d**2 - (sum d)**2 / n) / (n - 1)``; None for n < 2."""
    n = sums.pairs
    if n < 2:
        return None
    return (sums.sum_squares - sums.sum_signed**2 / n) / (n - 1)


def bias_interval(sums: ErrorSums, z: float, *, student: bool = True) -> tuple[float, float] | None:
    """``bias -/+ t s / sqrt(n)``: the t interval of the mean signed error.

    ``t`` is Student's quantile with ``n - 1`` degrees of freedom at ``z``'s
    level (the variance is estimated from the ``n`` pairs); ``student`` False
    keeps ``z``, the large-sample interval of a report before format 3.
    None with fewer than two pairs.
    """
    variance = error_variance(sums)
    bias = mean_signed_error(sums)
    if variance is None or bias is None:
        return None
    spread = as_float(variance / sums.pairs)
    if spread is None:
        return None
    quantile = t_for(z, sums.pairs - 1) if student else z
    half = quantile * math.sqrt(spread)
    return (bias - half, bias + half)


def limits_of_agreement(sums: ErrorSums, z: float) -> tuple[float, float] | None:
    """Bland and Altman's limits: ``bias -/+ z s`` (95%: 1.96 s); None for n < 2."""
    variance = error_variance(sums)
    bias = mean_signed_error(sums)
    if variance is None or bias is None:
        return None
    spread = as_float(variance)
    if spread is None:
        return None
    half = z * math.sqrt(spread)
    return (bias - half, bias + half)


def chance_level(sums: ErrorSums) -> float | None:
    """Mean ``|gold - median(gold)|``: the mean absolute error of a constant answer at the median.

    No constant does better: the median minimizes the mean absolute deviation.
    None with no gold rows.
    """
    return None if sums.gold_rows == 0 else as_float(sums.sum_deviation / sums.gold_rows)
