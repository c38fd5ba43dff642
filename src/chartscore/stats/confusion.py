"""F1 scores of per-label confusion counts: integers in, floats out.

A label's confusion metrics are four binomials (docs/metrics.md, "Per-label
confusion metrics"): sensitivity ``TP / gold positives``, specificity ``TN /
gold negatives``, PPV ``TP / answered positives`` and NPV ``TN / answered
negatives``. F1 is their harmonic summary; it and the macro average are exact
rationals of those counts, rounded once.

Value-free: imports nothing from chartscore.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction


def f1_fraction(
    true_positives: int, gold_positives: int, answered_positives: int
) -> Fraction | None:
    """``2 TP / (gold positives + answered positives)`` exactly; None when both are 0.

    This is ``2 TP / (2 TP + FP + FN)``, the harmonic mean of sensitivity and
    PPV (sklearn's ``f1_score``), with FN counting every gold positive the
    answers did not name (missing and abstained ones too).
    """
    counts = (true_positives, gold_positives, answered_positives)
    if any(type(v) is not int or v < 0 for v in counts) or true_positives > min(counts[1:]):
        raise ValueError("need integers 0 <= TP <= gold and answered positives")
    if gold_positives + answered_positives == 0:
        return None
    return Fraction(2 * true_positives, gold_positives + answered_positives)


def f1_score(true_positives: int, gold_positives: int, answered_positives: int) -> float | None:
    """:func:`f1_fraction` correctly rounded to a float (None when undefined).

    Example:
        chart-review's pooled "cold" row, TP 3, FN 1, FP 2:
        ``f1_score(3, 4, 5)`` is 6/9 = 0.6667.
    """
    exact = f1_fraction(true_positives, gold_positives, answered_positives)
    return None if exact is None else float(exact)


def macro_f1(labels: Iterable[tuple[int, int, int]]) -> float | None:
    """The mean F1 over the labels whose F1 is defined, correctly rounded; None if none is.

    Each label is ``(TP, gold positives, answered positives)``. A label that
    neither gold nor the answers ever name has no F1 and is left out of the mean
    (sklearn's ``f1_score(average="macro", zero_division=np.nan)``).
    """
    scores = [f1_fraction(*label) for label in labels]
    defined = [score for score in scores if score is not None]
    if not defined:
        return None
    return float(sum(defined, Fraction(0)) / len(defined))
