"""Text similarity for ``fuzzy`` fields: the normalized Levenshtein similarity.

``similarity(a, b) = 1 - levenshtein(a, b) / max(len(a), len(b))`` over the
code points of two normalized texts (1 when both are empty), where
``levenshtein`` counts the fewest single-character insertions, deletions and
substitutions that turn one text into the other. docs/metrics.md says why this
and not difflib's ratio: it is symmetric, a metric, has no length-dependent
heuristics, and can be worked out by hand.

The distance is computed with Hyyrö's bit-parallel form of Myers' algorithm
(one pass over the longer text, the shorter one's columns packed into a Python
integer): time linear in the longer text for texts up to a few thousand
characters, with no quadratic table.
"""

from __future__ import annotations

from decimal import Decimal


def levenshtein(first: str, second: str) -> int:
    """The Levenshtein distance between two strings (unit costs, code points).

    Hyyrö (2001), "Explaining and extending the bit-parallel approximate string
    matching algorithm of Myers", the global-distance variant: the vertical
    deltas of the dynamic-programming column are kept as two bit vectors.
    """
    if len(first) < len(second):
        first, second = second, first
    if not second:
        return len(first)
    # Bit i of ``equal[c]`` is set when second[i] == c.
    equal: dict[str, int] = {}
    for index, character in enumerate(second):
        equal[character] = equal.get(character, 0) | (1 << index)
    size = len(second)
    full = (1 << size) - 1
    top = 1 << (size - 1)
    positive, negative = full, 0  # vertical deltas +1 and -1
    distance = size
    for character in first:
        match = equal.get(character, 0)
        crossing = match | negative
        horizontal = (((match & positive) + positive) ^ positive) | match
        up = negative | (~(horizontal | positive) & full)
        down = positive & horizontal
        if up & top:
            distance += 1
        elif down & top:
            distance -= 1
        up = ((up << 1) | 1) & full
        down = (down << 1) & full
        positive = down | (~(crossing | up) & full)
        negative = up & crossing
    return distance


def similarity_at_least(first: str, second: str, threshold: Decimal) -> bool:
    """Whether ``1 - levenshtein / max(len)`` is at least ``threshold``, exactly.

    Decided in integers, with the threshold as its exact ratio ``p / q``:
    ``(longest - distance) * q >= p * longest``, so no rounding (and no caller's
    decimal context) can move a pair across the threshold. Two empty texts are
    identical (similarity 1).
    """
    longest = max(len(first), len(second))
    if longest == 0:
        return True
    numerator, denominator = threshold.as_integer_ratio()
    needed = numerator * longest
    # A cheap bound first: the distance is at least the difference in length.
    if (longest - abs(len(first) - len(second))) * denominator < needed:
        return False
    return (longest - levenshtein(first, second)) * denominator >= needed
