"""Text similarity for ``fuzzy`` fields: the normalized Levenshtein similarity.

``similarity(a, b) = 1 - levenshtein(a, b) / max(len(a), len(b))`` over the
code points of two normalized texts (1 when both are empty), where
``levenshtein`` counts the fewest single-character insertions, deletions and
substitutions that turn one text into the other. docs/metrics.md says why this
and not difflib's ratio: it is symmetric, a metric, has no length-dependent
heuristics, and can be worked out by hand.

The distance is rapidfuzz's (``chartscore[match]``), asked only whether it is
within the largest distance the threshold allows (``score_cutoff``): rapidfuzz
then works in a band around the diagonal and stops as soon as the distance
exceeds it.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from chartscore.records.match_engines import match_engine

Distance = Callable[..., int]


def levenshtein_distance() -> Distance:
    """rapidfuzz's ``Levenshtein.distance``, loaded on first use.

    Raises:
        ChartscoreError: ``missing_dependency`` without ``chartscore[match]``.
    """
    distance: Distance = match_engine("fuzzy").distance
    return distance


def allowed_distance(longest: int, threshold: Decimal) -> int:
    """The largest distance with ``1 - distance / longest >= threshold``, exactly.

    With the threshold as its exact ratio ``p / q``: ``(longest - d) * q >= p * longest``
    holds exactly when ``d <= (q - p) * longest // q``, in integers, so no rounding
    (and no caller's decimal context) can move a pair across the threshold.
    """
    numerator, denominator = threshold.as_integer_ratio()
    return (denominator - numerator) * longest // denominator


def similarity_at_least(
    first: str, second: str, threshold: Decimal, distance: Distance | None = None
) -> bool:
    """Whether ``1 - levenshtein / max(len)`` is at least ``threshold``, exactly.

    Two empty texts are identical (similarity 1).

    Args:
        first, second: Normalized texts.
        threshold: The declared threshold, ``0 < t <= 1``.
        distance: rapidfuzz's distance (see :func:`levenshtein_distance`);
            loaded here when not given.
    """
    longest = max(len(first), len(second))
    if longest == 0:
        return True
    allowed = allowed_distance(longest, threshold)
    # A cheap bound first: the distance is at least the difference in length.
    if abs(len(first) - len(second)) > allowed:
        return False
    measure = distance or levenshtein_distance()
    return measure(first, second, weights=(1, 1, 1), score_cutoff=allowed) <= allowed
