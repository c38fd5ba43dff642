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


class SimilarityTest:
    """Whether ``1 - levenshtein / max(len) >= threshold``, exactly, for one threshold.

    Decided in integers, with the threshold as its exact ratio ``p / q``:
    ``(longest - d) * q >= p * longest`` holds exactly when
    ``d <= (q - p) * longest // q``, the largest distance that still agrees, which
    is what rapidfuzz is asked about (``score_cutoff``). So no rounding (and no
    caller's decimal context) can move a pair across the threshold. Two empty
    texts are identical (similarity 1).

    Raises:
        ChartscoreError: ``missing_dependency`` without ``chartscore[match]``.
    """

    __slots__ = ("_denominator", "_distance", "_numerator")

    def __init__(self, threshold: Decimal) -> None:
        self._numerator, self._denominator = threshold.as_integer_ratio()
        self._distance = levenshtein_distance()

    def __repr__(self) -> str:
        return f"SimilarityTest({self._numerator}/{self._denominator})"

    def __call__(self, first: str, second: str) -> bool:
        """Whether two normalized texts are similar enough."""
        longest = max(len(first), len(second))
        if longest == 0:
            return True
        allowed = (self._denominator - self._numerator) * longest // self._denominator
        # A cheap bound first: the distance is at least the difference in length.
        if abs(len(first) - len(second)) > allowed:
            return False
        return self._distance(first, second, weights=(1, 1, 1), score_cutoff=allowed) <= allowed


def similarity_at_least(first: str, second: str, threshold: Decimal) -> bool:
    """Whether ``1 - levenshtein / max(len) >= threshold`` (see :class:`SimilarityTest`).

    Raises:
        ChartscoreError: ``missing_dependency`` without ``chartscore[match]``.
    """
    return SimilarityTest(threshold)(first, second)
