"""The declared cost of a suppression pattern: the rates it destroys, then its cells.

A rate (a metric's ``success_count`` of its ``total_count``) loses its use when
either part is hidden: its interval goes, and only a bound is left. So a
complementary choice is priced by the rates it destroys, each once, plus one
unit per hidden cell (fewer cells break ties). The weights, cheapest first
(docs/disclosure.md, cost order):

- a count that is no rate's part (``missing_count``, ``abstained_count``):
  1 in a field slice, 2 pooled, 3 overall (and so is each further hidden cell);
- a field slice's safety or error rate (``unanswerable_answer``,
  ``answerable_abstention``, ``abstention_correctness``, ``wrong_type_answer``,
  ``evidence_support``, ordinal later and earlier, the majority baseline,
  plugin labels), and a field's error magnitude or declared uncertainty (their
  figures go with their counts): 6;
- a field slice's agreement rate (:data:`~chartscore.disclosure.rule.AGREEMENT_METRICS`),
  and its kappa (whose value goes with its ``pairs``): 10;
- a pooled rate (field-type, stratum and stratum-and-type slices): 10, 12 for agreement;
- an overall rate: 14, 16 for agreement.

A count that is some rate's total (``answerable_count`` is
``exact_agreement.total_count``'s twin) costs its twins' rates through the
identities that force them hidden with it. Value-free: names and integers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

import attrs

from chartscore.disclosure.rule import (
    AGREEMENT_METRICS,
    PAIRS,
    STRATUM,
    STRATUM_FIELD_TYPE,
    SUCCESS,
    TOTAL,
)
from chartscore.documents.shared_disclosure import ComplementCost as ComplementCost  # noqa: PLC0414 (old pickles)
from chartscore.documents.shared_figures import FIGURE_QUANTITIES, MAGNITUDE, UNCERTAINTY

Key = tuple[str, str, str]

COUNTS: Final = "counts"
"""Family of the numbers that are no rate's part (and, in survival tables, of all counts)."""
ERRORS: Final = "safety/error rates"
AGREEMENT: Final = "agreement"
FAMILIES: Final = (AGREEMENT, ERRORS, COUNTS)

CELL: Final = {"field": 1, "pooled": 2, "overall": 3}
"""The price of one hidden cell, by level."""
RATE: Final = {
    ("field", ERRORS): 6,
    ("field", AGREEMENT): 10,
    ("pooled", ERRORS): 10,
    ("pooled", AGREEMENT): 12,
    ("overall", ERRORS): 14,
    ("overall", AGREEMENT): 16,
}
"""The price of destroying one rate, by level and family."""

KAPPA: Final = "kappa"
"""Kappa's value, lost with its ``pairs``: priced as an agreement rate."""
FIGURE_GROUPS: Final = frozenset({MAGNITUDE, UNCERTAINTY})
"""The validation figures' groups, lost with their counts: priced as error rates."""

Rate = tuple[str, str, str]
"""A rate: (slice kind, slice name, metric name)."""


def level(kind: str) -> str:
    """``field``, ``pooled`` (field-type and stratum slices) or ``overall``."""
    if kind in ("field", "overall"):
        return kind
    return "pooled"


def rate_of(key: Key) -> Rate | None:
    """The rate (or figure) a number is a part of, or None for a plain count.

    A metric's success or total is its rate's; kappa ``pairs`` is kappa's (its value is
    shown only beside them); an error magnitude's or declared uncertainty's count is
    that figure group's (its figures are shown only beside their counts).
    """
    kind, name, quantity = key
    metric, _, part = quantity.rpartition(".")
    if part in (SUCCESS, TOTAL) and metric:
        return kind, name, metric
    if quantity == PAIRS:
        return kind, name, KAPPA
    if metric in FIGURE_GROUPS and quantity in FIGURE_QUANTITIES:
        return kind, name, metric
    return None


def family(metric: str) -> str:
    """A rate's family: agreement (and kappa), or safety and error rates (and figures)."""
    return AGREEMENT if metric in AGREEMENT_METRICS or metric == KAPPA else ERRORS


def rate_price(rate: Rate) -> int:
    """The price of destroying ``rate``."""
    return RATE[level(rate[0]), family(rate[2])]


def cell_price(key: Key) -> int:
    """The price of one hidden cell."""
    return CELL[level(key[0])]


def key_price(key: Key) -> int:
    """The price of hiding ``key`` alone, when nothing else is hidden."""
    rate = rate_of(key)
    return cell_price(key) + (0 if rate is None else rate_price(rate))


def pattern_price(hidden: Iterable[Key]) -> int:
    """The price of a hidden set: its cells, and each rate it destroys once."""
    keys = set(hidden)
    rates = {rate for rate in map(rate_of, keys) if rate is not None}
    return sum(map(cell_price, keys)) + sum(map(rate_price, rates))


def marginal_price(keys: Iterable[Key], hidden: set[Key], destroyed: Mapping[Rate, int]) -> int:
    """What hiding ``keys`` adds to a pattern ``hidden`` whose rates are ``destroyed``.

    ``destroyed`` maps each rate with a hidden part to how many parts are hidden.
    """
    added = {key for key in keys if key not in hidden}
    rates = {rate for rate in map(rate_of, added) if rate is not None and rate not in destroyed}
    return sum(map(cell_price, added)) + sum(map(rate_price, rates))


@attrs.frozen
class Pricing:
    """A declared cost: each hidden cell, and each rate with a hidden part once.

    The report's is :data:`REPORT_PRICING`; a shared comparison, whose numbers can
    be parts of several rates (a metric's trials are both systems' and their
    difference's), brings its own (:mod:`chartscore.disclosure.comparison_share`).

    Attributes:
        rates: The rates a number is a part of (none for a plain count).
        cell: The price of one hidden cell.
        rate: The price of destroying one rate.
    """

    rates: Callable[[Key], tuple[Rate, ...]]
    cell: Callable[[Key], int]
    rate: Callable[[Rate], int]

    def pattern(self, hidden: Iterable[Key]) -> int:
        """The price of a hidden set: its cells, and each rate it destroys once."""
        keys = set(hidden)
        destroyed = {rate for key in keys for rate in self.rates(key)}
        return sum(map(self.cell, keys)) + sum(map(self.rate, destroyed))


def _report_rates(key: Key) -> tuple[Rate, ...]:
    rate = rate_of(key)
    return () if rate is None else (rate,)


REPORT_PRICING: Final = Pricing(_report_rates, cell_price, rate_price)
"""The shared report's declared cost (:func:`pattern_price`)."""


def slice_family(kind: str) -> str:
    """The survival table's group of a slice kind: field, pooled or strata."""
    if kind == "field":
        return "field"
    return "strata" if kind in (STRATUM, STRATUM_FIELD_TYPE) else "pooled"
