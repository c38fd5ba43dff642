"""F1 scores of per-label confusion counts: integers in, floats out.

A label's confusion metrics are four binomials (docs/metrics.md, "Per-label
confusion metrics"): sensitivity ``TP / gold positives``, specificity ``TN /
gold negatives``, PPV ``TP / answered positives`` and NPV ``TN / answered
negatives``. F1 is the harmonic mean of sensitivity and PPV, undefined when either is; it
and the macro average are exact rationals of those counts, rounded once.

Value-free: imports nothing from chartscore.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction


def f1_fraction(
    true_positives: int, gold_positives: int, answered_positives: int
) -> Fraction | None:
    """``2 TP / (gold positives + answered positives)`` exactly; None when either is 0.

    This is ``2 TP / (2 TP + FP + FN)``, the harmonic mean of sensitivity and
    PPV, with FN counting every gold positive the answers did not name (missing
    and abstained ones too). It is undefined, as chart-review
    (smart-on-fhir/chart-review, ``agree.score_matrix``) has it, when either of
    the two rates is: a label gold never holds (no sensitivity) or the answers
    never name (no PPV). scikit-learn's ``f1_score`` gives 0 there, and a macro
    average would count the label as a failure of a system that was never
    asked (or never answered) it. Where both rates are defined and TP is 0, F1
    is 0, their harmonic mean (chart-review prints "-" there; see
    docs/import.md).
    """
    counts = (true_positives, gold_positives, answered_positives)
    if any(type(v) is not int or v < 0 for v in counts) or true_positives > min(counts[1:]):
        raise ValueError("need integers 0 <= TP <= gold and answered positives")
    if gold_positives == 0 or answered_positives == 0:
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
    gold never holds or the answers never name has no F1 and is left out of the
    mean, as chart-review's "Macro F1" leaves it out.
    """
    scores = [f1_fraction(*label) for label in labels]
    defined = [score for score in scores if score is not None]
    if not defined:
        return None
    return float(sum(defined, Fraction(0)) / len(defined))


def pooled_kappa(
    true_positives: int, false_negatives: int, true_negatives: int, false_positives: int
) -> float | None:
    """Cohen's kappa of one two-by-two table, exactly, rounded once; None when undefined.

    With ``n = TP + FN + TN + FP``, observed agreement ``p_o = (TP + TN) / n``
    and chance agreement ``p_e = ((TP + FP)(TP + FN) + (TN + FN)(TN + FP)) / n²``,
    kappa is ``(p_o - p_e) / (1 - p_e)`` (Cohen 1960). Over label cells pooled
    into one table it is chart-review's pooled (``*``) kappa; None when ``n``
    is 0 or ``p_e`` is 1 (every cell on one side).

    Example:
        chart-review's "cold" pooled row, TP 3, FN 1, TN 3, FP 2: ``n = 9``,
        ``n² p_e = 5·4 + 4·5 = 40``, so ``pooled_kappa(3, 1, 3, 2)`` is
        ``(9·6 - 40) / (81 - 40) = 14/41``, 0.341 as chart-review prints it.
    """
    counts = (true_positives, false_negatives, true_negatives, false_positives)
    if any(type(v) is not int or v < 0 for v in counts):
        raise ValueError("need four integers >= 0")
    n = sum(counts)
    chance = (true_positives + false_positives) * (true_positives + false_negatives) + (
        true_negatives + false_negatives
    ) * (true_negatives + false_positives)
    if n == 0 or chance == n * n:
        return None
    return float(Fraction(n * (true_positives + true_negatives) - chance, n * n - chance))
