"""Numbers as people read them: counts, percentages, kappa and intervals.

Shared by the text renderers so that a number reads the same in a terminal, in
Markdown and in HTML. One rule matters for safety: a rate or a bound is written
as 0% or 100% (a kappa as 1.00 or -1.00) only when it is exactly that. An error
rate of 1/3000 is written 0.03, not 0, so a rounded figure never hides the one
error. The output is ASCII only, so any terminal encoding can print it.
"""

from __future__ import annotations

import math
from typing import Final

from chartscore.render.view import Cell, Estimate, Kind, LabelText
from chartscore.stats.reliability import too_few_pairs

SUPPRESSED = "suppressed"
"""How a withheld count or estimate is shown: never as 0."""
NO_TRIALS = "no trials"
UNDEFINED = "undefined"
NOT_PROVIDED = "not provided"
"""Evidence support where no answered row carried evidence (``Estimate.not_provided``)."""


def no_trials(estimate: Estimate) -> bool:
    """A rate with no trials: read as ``no trials``, even if its success count was withheld.

    A shared report may withhold the success count of a metric with 0 trials
    (it can only be 0); ``suppressed/0`` would hide the one fact that matters.
    """
    return estimate.kind is Kind.RATE and estimate.total_count == 0


def withheld_rate(estimate: Estimate) -> bool:
    """A rate that a disclosure rule withheld and that had trials: shown as its counts only."""
    return (
        estimate.kind is Kind.RATE
        and estimate.suppressed
        and not no_trials(estimate)
        and not estimate.not_provided
    )


def count_text(count: int | None) -> str:
    """A count, or ``suppressed`` for None."""
    return SUPPRESSED if count is None else str(count)


def _trim(scaled: float, places: int) -> str:
    return f"{scaled:.{places}f}"


def percent(fraction: float) -> str:
    """``fraction`` (in [-1, 1]) in percent, without the % sign.

    Whole percents, with more decimals only where rounding would print 0 or
    100 for a number that is not exactly 0 or 1: 0.0003 is ``0.03``; beyond
    two decimals, ``<0.01`` or ``>99.99``. Negative numbers keep their sign.
    """
    scaled = abs(fraction) * 100
    sign = "-" if fraction < 0 else ""
    for places in (0, 1, 2):
        text = _trim(scaled, places)
        if float(text) not in (0.0, 100.0) or scaled in (0.0, 100.0):
            return sign + text
    return sign + ("<0.01" if scaled < 50 else ">99.99")


def kappa_number(value: float) -> str:
    """A kappa to two decimals; three where rounding would print an exact-looking -1 or 1."""
    text = f"{value:.2f}"
    if float(text) == 0.0:
        return "0.00"  # never "-0.00"
    if abs(float(text)) == 1.0 and abs(value) != 1.0:
        text = f"{value:.3f}"
        if abs(float(text)) == 1.0:
            return ">0.999" if value > 0 else "<-0.999"
    return text


def magnitude_number(value: float) -> str:
    """An error in the field's unit or in days, to four significant digits (``-0`` as ``0``)."""
    text = f"{value:.4g}"
    return "0" if float(text) == 0.0 else text


def _signed_points(fraction: float) -> str:
    text = percent(fraction)
    return text if fraction <= 0 or text.startswith("-") else "+" + text


def fraction_text(estimate: Estimate) -> str:
    """``k/n`` for a rate (a None part as ``suppressed``); ``n pairs`` for kappa; else ``""``."""
    k, n = estimate.success_count, estimate.total_count
    if estimate.kind is Kind.RATE:
        if no_trials(estimate) and k is None:
            return ""  # the rest says "no trials"
        if k is None and n is None:
            return SUPPRESSED
        return f"{count_text(k)}/{count_text(n)}"
    if estimate.kind is Kind.KAPPA:
        return f"{count_text(n)} pairs"
    return ""


def value_text(estimate: Estimate) -> str:
    """The point estimate: ``65%``, kappa ``0.43``, a difference ``+5 pp``.

    ``suppressed`` when withheld, ``no trials`` for a rate with no trials,
    ``undefined`` for a kappa or difference that has no value.
    """
    value = estimate.value
    if estimate.not_provided:
        return NOT_PROVIDED
    if value is None:
        if no_trials(estimate):
            return NO_TRIALS
        if estimate.suppressed:
            return SUPPRESSED
        if estimate.kind is Kind.RATE:
            return NO_TRIALS
        if estimate.kind is Kind.KAPPA and estimate.total_count == 0:
            return NO_TRIALS
        return UNDEFINED
    if estimate.kind is Kind.RATE:
        return percent(value) + "%"
    if estimate.kind is Kind.KAPPA:
        return kappa_number(value)
    if estimate.kind is Kind.SCORE:
        return kappa_number(value)
    if estimate.kind is Kind.MAGNITUDE:
        return magnitude_number(value)
    return _signed_points(value) + " pp"


COEFFICIENT_METRICS: Final = frozenset(
    {"kappa", "ac1", "ac2", "alpha", "pair_kappa", "fleiss_kappa"}
)
"""Coefficients whose interval is marked :data:`TOO_FEW_PAIRS` below ``MIN_COEFFICIENT_PAIRS``."""
TOO_FEW_PAIRS: Final = "too few pairs"


def interval_text(estimate: Estimate) -> str:
    """``[43-82]`` (percent), ``[0.01, 0.85]`` (kappa), ``[-3, +12]`` (points); ``""`` if none.

    A coefficient's interval from fewer than ``MIN_COEFFICIENT_PAIRS`` pairs reads
    ``[0.01, 0.85] too few pairs`` (docs/metrics.md, "Coefficients from few pairs").

    Rates are never negative, so their bounds are joined by a hyphen, which is
    shorter; bounds that can be negative are separated by a comma.
    """
    bounds = estimate.interval
    if bounds is None:
        return ""
    if estimate.kind is Kind.RATE:
        return f"[{percent(bounds[0])}-{percent(bounds[1])}]"
    if estimate.kind is Kind.KAPPA:
        low, high = kappa_number(bounds[0]), kappa_number(bounds[1])
        pairs = estimate.total_count if estimate.units is None else estimate.units
        if estimate.metric in COEFFICIENT_METRICS and pairs is not None and too_few_pairs(pairs):
            return f"[{low}, {high}] {TOO_FEW_PAIRS}"
    elif estimate.kind is Kind.MAGNITUDE:
        low, high = magnitude_number(bounds[0]), magnitude_number(bounds[1])
    else:
        low, high = _signed_points(bounds[0]), _signed_points(bounds[1])
    return f"[{low}, {high}]"


def _outward(fraction: float, *, up: bool) -> str:
    # A bound in percent to one decimal, rounded away from the rate (a bound never
    # tightens by rounding); where that would print 0 or 100 for a number that is not
    # exactly 0 or 1, the finer digits of :func:`percent`.
    if fraction in (0.0, 1.0):
        return percent(fraction)
    tenths = math.ceil(fraction * 1000) if up else math.floor(fraction * 1000)
    if tenths in (0, 1000):
        return percent(fraction)
    return f"{tenths / 10:.1f}"


def _outward_points(fraction: float, *, up: bool) -> str:
    # A difference bound in points to one decimal, rounded away from the estimate.
    tenths = math.ceil(fraction * 1000) if up else math.floor(fraction * 1000)
    return f"{tenths / 10:+.1f}" if tenths else "0.0"


def bound_text(estimate: Estimate) -> str:
    """A suppressed rate's bound: ``<= 9.1% (95% upper bound)``; ``""`` when it has none.

    A field row's bound is the widest Wilson interval its published ranges
    allow; a pooled row's is the range of the rate itself, which is not an
    interval and says so.
    """
    if estimate.bound is None:
        return ""
    low, high = estimate.bound
    if estimate.kind is Kind.DIFFERENCE:  # a shared comparison's difference (docs/disclosure.md)
        span = f"[{_outward_points(low, up=False)}, {_outward_points(high, up=True)}] pp"
        if estimate.bound_kind == "newcombe":
            return f"{span} ({estimate.bound_level} bounds)"
        return f"difference {span} (provable range)"
    if estimate.bound_kind != "wilson":
        return f"rate {_outward(low, up=False)}-{_outward(high, up=True)}% (provable range)"
    level = estimate.bound_level
    if low == 0.0 and high < 1.0:
        return f"<= {_outward(high, up=True)}% ({level} upper bound)"
    if high == 1.0 and low > 0.0:
        return f">= {_outward(low, up=False)}% ({level} lower bound)"
    return f"{_outward(low, up=False)}-{_outward(high, up=True)}% ({level} bounds)"


def bound_range(estimate: Estimate) -> str:
    """A suppressed rate's bound in short: ``<=9.1%``, ``>=3.2%`` or ``3.2-9.1%``.

    A suppressed difference's: ``[-3.1, +5.2] pp``. ``""`` when there is none, or
    when a rate's is 0-100% (it then says nothing). The bounds are rounded outward
    as in :func:`bound_text`, which says what kind of bound it is.
    """
    if estimate.bound is None:
        return ""
    low, high = estimate.bound
    if estimate.kind is Kind.DIFFERENCE:
        return f"[{_outward_points(low, up=False)}, {_outward_points(high, up=True)}] pp"
    if estimate.kind is not Kind.RATE:
        return ""
    if low == 0.0 and high == 1.0:
        return ""
    if low == 0.0:
        return f"<={_outward(high, up=True)}%"
    if high == 1.0:
        return f">={_outward(low, up=False)}%"
    return f"{_outward(low, up=False)}-{_outward(high, up=True)}%"


def estimate_parts(estimate: Estimate) -> tuple[str, str, str]:
    """``(fraction, value, rest)``: the pieces of :func:`estimate_text` that line up in columns.

    ``rest`` is the interval, or the word that stands for a missing value
    (``no trials``, ``undefined``); a suppressed rate is its fraction alone.
    """
    if estimate.not_provided:  # no count or rate: 0 supported of rows that had no evidence
        return ("", "", NOT_PROVIDED)
    fraction = fraction_text(estimate) if estimate.kind is Kind.RATE else ""
    if withheld_rate(estimate):
        return (fraction, "", bound_text(estimate))
    if estimate.kind is Kind.DIFFERENCE and estimate.suppressed and estimate.bound is not None:
        return (fraction, "", bound_text(estimate))
    if estimate.value is None:
        return (fraction, "", value_text(estimate))
    return (fraction, value_text(estimate), interval_text(estimate))


def estimate_text(estimate: Estimate) -> str:
    """One line for an estimate.

    A rate reads ``13/20 65% [43-82]``; a kappa ``0.43 [0.01, 0.85]``; a
    difference ``+5 pp [-3, +12]``. With no trials: ``0/0 no trials`` (``no
    trials`` alone when the success count was withheld); a suppressed rate shows
    its counts with ``suppressed`` for the withheld ones, and its bound where
    the shared report has one (``suppressed/40 <= 9.1% (95% upper bound)``).
    """
    return " ".join(part for part in estimate_parts(estimate) if part)


def cell_text(cell: Cell) -> str:
    """Any table cell as plain text: estimates per :func:`estimate_text`, counts, text."""
    if isinstance(cell, Estimate):
        return estimate_text(cell)
    if cell is None or isinstance(cell, int):
        return count_text(cell)
    if isinstance(cell, LabelText):
        return cell.text
    return cell
