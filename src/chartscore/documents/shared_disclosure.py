"""A shared report's ``disclosure`` object: the rule, what survived, and how it was chosen.

:class:`Disclosure` records the rule a shared report was made under (cell size, counted in
cases), how many numbers it suppresses, every field's type (the schema knowledge the audit
assumes), and, as ``share`` writes them, what survives per family of rates
(:class:`Survival`) and how many earlier releases it was audited with;
:func:`read_disclosure` reads it back strictly. :class:`ComplementCost` is the inside-only
account of the complementary cells' price. These records and their reader live apart from
:mod:`chartscore.documents.shared_report`, which re-exports them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import attrs

from chartscore._format import FIELD_ID_PATTERN
from chartscore.documents.shared_metric import invalid, read_count
from chartscore.documents.shared_rule import FIELD_TYPE_NAMES, RULE, UNIT
from chartscore.errors import ChartscoreError, ErrorCode

_MAX_MIN_CELL: Final = 1_000_000
_FIELD_ID = re.compile(FIELD_ID_PATTERN).fullmatch
_MAX_RELEASES: Final = 9999
_DISCLOSURE_KEYS: Final = frozenset({"rule", "min_cell", "unit", "suppressed_count", "field_types"})
_RECORDED: Final = frozenset({"survival", "earlier_releases"})


def check_min_cell(min_cell: object) -> int:
    """``min_cell`` as an int from 2 to 1,000,000, or ``invalid_min_cell``."""
    if type(min_cell) is not int or not 2 <= min_cell <= _MAX_MIN_CELL:
        raise ChartscoreError(ErrorCode.INVALID_MIN_CELL)
    return min_cell


@attrs.frozen
class Survival:
    """How many of one family's rates survive sharing: shown, bounded, or neither.

    Counted from the shared report itself (so it publishes nothing new).

    Attributes:
        rates: The family's binomial metrics.
        shown: Those with both counts (and so their interval) published.
        bounded: Those with a suppressed part that carry a rate bound.
    """

    rates: int
    shown: int
    bounded: int

    def to_dict(self) -> dict[str, int]:
        """``{"rates", "shown", "bounded"}``."""
        return {"rates": self.rates, "shown": self.shown, "bounded": self.bounded}


SURVIVAL_FAMILIES: Final = ("field_rates", "pooled_rates")
"""Field slices' rates, and the pooled slices' (field types and overall)."""
STRATUM_RATES: Final = "stratum_rates"
"""The stratum slices' rates (and their type slices'): a family only with strata."""
LABEL_RATES: Final = "label_rates"
"""Each declared label's four rates: a family only with labels."""
OPTIONAL_FAMILIES: Final = (STRATUM_RATES, LABEL_RATES)


@attrs.frozen
class Disclosure:
    """The rule a shared report was made under, and the schema knowledge it assumes.

    Attributes:
        min_cell: The smallest nonzero number of cases that may be shown.
        suppressed_count: How many protected numbers of the report are null.
        field_types: Every field id's type (the attacker is assumed to know it).
        rule: Always ``"cell_size"``.
        unit: Always ``"cases"``.
        survival: What survives per family (:data:`SURVIVAL_FAMILIES`), as
            ``share`` records it; None in a document without it.
        earlier_releases: How many earlier releases ``share --releases``
            audited this one with (docs/disclosure.md, successive releases);
            None when differencing between releases was not covered.
    """

    min_cell: int
    suppressed_count: int
    field_types: Mapping[str, str]
    rule: str = RULE
    unit: str = UNIT
    survival: Mapping[str, Survival] | None = None
    earlier_releases: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The ``disclosure`` object of the shared report's JSON."""
        out: dict[str, object] = {
            "rule": self.rule,
            "min_cell": self.min_cell,
            "unit": self.unit,
            "suppressed_count": self.suppressed_count,
            "field_types": dict(self.field_types),
        }
        if self.survival is not None:
            out["survival"] = {name: value.to_dict() for name, value in self.survival.items()}
        if self.earlier_releases is not None:
            out["earlier_releases"] = self.earlier_releases
        return out


@attrs.frozen
class ComplementCost:
    """How the complementary cells were chosen, and at what declared cost (inside only).

    Attributes:
        method: ``exact`` (the minimum-cost pattern) or ``greedy``.
        cost: The chosen pattern's price (:func:`~chartscore.disclosure.cost.pattern_price`).
        greedy_cost: The greedy pattern's price (equal to ``cost`` for ``greedy``).
        lower_bound: A proven lower bound on any passing pattern's price (``cost``
            for ``exact``); None when none was computed.
        labels: With per-label metrics, what their (greedy) step added to the
            core's price, after the core was chosen as above; None without labels.
    """

    method: str
    cost: int
    greedy_cost: int
    lower_bound: int | None
    labels: int | None = None

    @property
    def gap(self) -> float | None:
        """``(cost - lower_bound) / cost``: how far the pattern may be from the optimum."""
        if self.lower_bound is None or self.cost == 0:
            return None
        return (self.cost - self.lower_bound) / self.cost


def read_disclosure(value: object, *, recorded: bool = True) -> Disclosure:
    """A shared document's ``disclosure`` object, checked strictly (``invalid_report`` otherwise).

    Args:
        value: The decoded object.
        recorded: Whether it may record ``survival`` and ``earlier_releases`` (a shared
            report's may; a shared comparison's holds only the rule and the field types).
    """
    if type(value) is not dict:
        invalid()
    if set(value) - (_RECORDED if recorded else set()) != _DISCLOSURE_KEYS:
        invalid()
    if value["rule"] != RULE or value["unit"] != UNIT:
        invalid()
    min_cell = value["min_cell"]
    if type(min_cell) is not int or not 2 <= min_cell <= _MAX_MIN_CELL:
        invalid()
    suppressed = read_count(value["suppressed_count"], nullable=False)
    types = value["field_types"]
    if type(types) is not dict or not types:
        invalid()
    for field_id, type_name in types.items():
        if not _FIELD_ID(field_id) or type_name not in FIELD_TYPE_NAMES:
            invalid()
    assert suppressed is not None
    return Disclosure(
        min_cell=min_cell,
        suppressed_count=suppressed,
        field_types={k: types[k] for k in sorted(types)},
        survival=_survival(value["survival"]) if "survival" in value else None,
        earlier_releases=_earlier(value.get("earlier_releases")),
    )


def _earlier(value: object) -> int | None:
    # The number of earlier releases audited jointly: absent, or a whole number.
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= _MAX_RELEASES:
        invalid()
    return value


def _survival(value: object) -> dict[str, Survival]:
    if type(value) is not dict or set(value) - set(OPTIONAL_FAMILIES) != set(SURVIVAL_FAMILIES):
        invalid()
    out = {}
    for name in (*SURVIVAL_FAMILIES, *OPTIONAL_FAMILIES):
        if name not in value:
            continue
        family = value[name]
        if type(family) is not dict or set(family) != {"rates", "shown", "bounded"}:
            invalid()
        numbers = [read_count(family[key], nullable=False) for key in ("rates", "shown", "bounded")]
        out[name] = Survival(*numbers)  # type: ignore[arg-type]
    return out
