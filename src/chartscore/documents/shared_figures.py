"""The validation figures a shared report publishes under rules of their own.

A number or date field's **error magnitude** (mean absolute and signed error,
the bias interval, Bland-Altman limits, the chance level) and a field's
**declared uncertainty** (AUROC and its interval, the Brier score, the
risk-coverage steps) are not sums of outcome classes. ``share`` publishes them
beside their counts, which are numbers of the audit's model (its
:data:`FIGURE_QUANTITIES`), under three rules (docs/disclosure.md,
"Validation figures"):

- **count rule**: a figure is shown only where its denominator is published
  and at least ``min_cell`` (the AUROC: both the agreeing and the disagreeing
  rows with an uncertainty);
- **dominance rule**, the (n, k) rule with n = 2, k = 85%: a magnitude is
  shown only when its total is positive and its two largest per-case
  contributions make up at most 85% of it (:class:`Contributions`, computed
  inside and never published); and the **threshold rule**: at least
  ``min_cell`` cases contribute a nonzero amount, so the published moments
  cannot pin how many errors are nonzero below ``min_cell``
  (:mod:`chartscore.disclosure.error_counts`);
- **risk-coverage steps** are counts: a step is shown only when its counts
  and its differences from every other shown step are 0 or at least
  ``min_cell``.

A withheld figure is ``null``, and its group's reason stands in ``withheld``.
The audit cannot recompute a figure; :func:`figure_failures` checks what it
can: every shown figure's counts against the rule, and the figures against
each other and their counts.

Value-free: aggregates, closed names and counts; the per-case contributions
stay in the :class:`Contributions` objects, whose repr shows none.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Final

import attrs

from chartscore.documents import _strict_json
from chartscore.stats.binomial import CountRange, wilson_interval
from chartscore.stats.magnitude import UNITS
from chartscore.stats.student_t import t_for
from chartscore.stats.uncertainty import (
    DECILES,
    delong_interval,
    hanley_mcneil,
    is_published_standard_error,
)

Interval = tuple[float, float]
Range = CountRange

MAGNITUDE: Final = "error_magnitude"
UNCERTAINTY: Final = "declared_uncertainty"
PAIRS_Q: Final = f"{MAGNITUDE}.pairs"
GOLD_ROWS_Q: Final = f"{MAGNITUDE}.gold_rows"
AGREED_Q: Final = f"{UNCERTAINTY}.agreed"
ROWS_Q: Final = f"{UNCERTAINTY}.rows"
DISAGREED_Q: Final = f"{UNCERTAINTY}.disagreed"
WITHOUT_Q: Final = f"{UNCERTAINTY}.without_uncertainty"
FIGURE_QUANTITIES: Final = (PAIRS_Q, GOLD_ROWS_Q, AGREED_Q, ROWS_Q, DISAGREED_Q, WITHOUT_Q)
"""The counts of the figures, quantities of the audit's model (disagreed is derived)."""
FIGURE_NUMBERS: Final = (PAIRS_Q, GOLD_ROWS_Q, AGREED_Q, ROWS_Q, WITHOUT_Q)
"""Those that are JSON numbers of a shared report."""

DOMINANCE_N: Final = 2
DOMINANCE_K: Final = Fraction(85, 100)
"""The (n, k) rule: the two largest contributions may make up at most 85% of the total."""

COUNT_SUPPRESSED: Final = "count_suppressed"
"""The figure's count is suppressed (or, for the AUROC, a class has fewer than min_cell)."""
DOMINANCE: Final = "dominance"
"""Two cases hold over 85% of the magnitude, fewer than min_cell contribute, or it is 0."""
COUNT_RULE: Final = "count_rule"
"""Some risk-coverage steps would show a count, or a difference of two, from 1 to min_cell - 1."""
REASONS: Final = (COUNT_SUPPRESSED, DOMINANCE, COUNT_RULE)

MAGNITUDE_GROUPS: Final = ("mean_absolute_error", "limits_of_agreement", "chance")
"""Withheld together: MAE with the bias; the limits with the bias interval; the chance level."""
UNCERTAINTY_GROUPS: Final = ("auroc", "brier_score", "risk_coverage")

FIGURE_PUBLISHED: Final = "figure_published"
"""Audit status: a figure shown while its count is hidden or breaks the count rule."""
FIGURE_INCONSISTENT: Final = "inconsistent"

_TOLERANCE: Final = 1e-9


@attrs.frozen(repr=False)
class Contributions:
    """Per-case contributions to one magnitude: inside only, never published.

    Attributes:
        largest: The two largest contributions, largest first (zeros if fewer).
        total: The sum of all contributions.
        contributors: How many cases contribute a positive amount.
        unit: The largest step every positive contribution is a whole multiple
            of (their greatest common divisor; 0 without one): the finest
            lattice an outsider could know the values lie on.
    """

    largest: tuple[Fraction, Fraction]
    total: Fraction
    contributors: int
    unit: Fraction

    def __repr__(self) -> str:
        return "Contributions(<hidden>)"

    @classmethod
    def of(cls, values: Iterable[tuple[Fraction, int]]) -> Contributions:
        """From ``(contribution >= 0, cases)``; each case of a field slice is one row."""
        top: list[Fraction] = []
        total = Fraction(0)
        contributors = 0
        unit = Fraction(0)
        for value, cases in values:
            total += value * cases
            top = sorted([*top, *[value] * min(cases, DOMINANCE_N)], reverse=True)[:DOMINANCE_N]
            if value > 0 and cases > 0:
                contributors += cases
                unit = _gcd(unit, value)
        top += [Fraction(0)] * (DOMINANCE_N - len(top))
        return cls((top[0], top[1]), total, contributors, unit)

    def dominated(self) -> bool:
        """Whether the (2, 85%) rule withholds the magnitude (a zero total too)."""
        return self.total <= 0 or sum(self.largest) > DOMINANCE_K * self.total

    def sensitive(self, min_cell: int) -> bool:
        """Whether the magnitude is withheld: the threshold rule or the dominance rule.

        Threshold: fewer than ``min_cell`` cases contribute (a positive amount).
        Those cases are then a count an outsider could bound from the published
        moments (docs/disclosure.md, "Magnitudes that cannot be worked back").
        """
        return self.contributors < min_cell or self.dominated()


def _gcd(first: Fraction, second: Fraction) -> Fraction:
    # Of two non-negative fractions: gcd of the numerators over lcm of the denominators.
    if first == 0:
        return second
    denominator = math.lcm(first.denominator, second.denominator)
    return Fraction(
        math.gcd(
            first.numerator * (denominator // first.denominator),
            second.numerator * (denominator // second.denominator),
        ),
        denominator,
    )


@attrs.frozen(repr=False)
class FieldFigures:
    """What the dominance rule needs of one field, computed inside while sharing.

    Attributes:
        absolute: Contributions ``|d|`` (mean absolute and signed error).
        squares: Contributions ``d**2`` (the limits and the bias interval).
        deviation: Contributions ``|gold - median|`` (the chance level).
        brier: Contributions ``(1 - uncertainty - agreed)**2`` (the Brier score).
        spread: Contributions ``(gold - mean)**2 + (answer - mean)**2`` over the
            pairs, the mean of their pooled values (interval alpha's denominator).
    """

    absolute: Contributions | None = None
    squares: Contributions | None = None
    deviation: Contributions | None = None
    brier: Contributions | None = None
    spread: Contributions | None = None

    def __repr__(self) -> str:
        return "FieldFigures(<hidden>)"


def _allowed(value: int, min_cell: int) -> bool:
    return value == 0 or value >= min_cell


@attrs.frozen
class SharedMagnitude:
    """A number or date field's error magnitude in a shared report (None: withheld).

    ``student`` is False for a document before format 5, whose bias interval
    used ``z`` rather than Student's t with ``pairs - 1`` degrees of freedom.
    """

    unit: str
    pairs: int | None
    gold_rows: int | None
    mean_absolute_error: float | None
    bias: float | None
    bias_interval: Interval | None
    limits_of_agreement: Interval | None
    chance_level: float | None
    withheld: Mapping[str, str] = attrs.field(factory=dict)
    pairs_range: Range | None = None
    gold_rows_range: Range | None = None
    student: bool = attrs.field(default=True, eq=False)

    def numbers(self) -> Iterator[tuple[str, int | None]]:
        """The counts, as quantities of the model."""
        yield PAIRS_Q, self.pairs
        yield GOLD_ROWS_Q, self.gold_rows

    def ranges(self) -> Iterator[tuple[str, Range]]:
        """The published ranges of the suppressed counts."""
        if self.pairs_range is not None:
            yield PAIRS_Q, self.pairs_range
        if self.gold_rows_range is not None:
            yield GOLD_ROWS_Q, self.gold_rows_range

    def with_ranges(self, found: Mapping[str, Range]) -> SharedMagnitude:
        """With the range of each suppressed count from ``found``."""
        return attrs.evolve(
            self,
            pairs_range=found[PAIRS_Q] if self.pairs is None else None,
            gold_rows_range=found[GOLD_ROWS_Q] if self.gold_rows is None else None,
        )

    def to_dict(self) -> dict[str, object]:
        """The JSON object (figures null where withheld)."""
        signed: dict[str, object] = {"estimate": self.bias, "interval": _list(self.bias_interval)}
        chance: dict[str, object] = {
            "gold_rows": self.gold_rows,
            "mean_absolute_deviation": self.chance_level,
        }
        if self.gold_rows_range is not None:
            chance["gold_rows_range"] = list(self.gold_rows_range)
        out: dict[str, object] = {
            "unit": self.unit,
            "pairs": self.pairs,
            "mean_absolute_error": self.mean_absolute_error,
            "mean_signed_error": signed,
            "limits_of_agreement": _list(self.limits_of_agreement),
            "chance": chance,
            "withheld": dict(self.withheld),
        }
        if self.pairs_range is not None:
            out["pairs_range"] = list(self.pairs_range)
        return out


@attrs.frozen
class SharedStep:
    """One risk-coverage step: agreement among the most certain k tenths (None: withheld)."""

    success_count: int
    total_count: int
    interval: Interval | None

    def to_dict(self) -> dict[str, object]:
        """``{"success_count", "total_count", "interval"}``."""
        return {
            "success_count": self.success_count,
            "total_count": self.total_count,
            "interval": _list(self.interval),
        }


@attrs.frozen
class SharedUncertainty:
    """A field's declared-uncertainty figures in a shared report (None: withheld).

    ``auroc_standard_error`` (DeLong's, rounded up) stands beside the AUROC
    wherever it is shown and defined; ``delong`` is False for a document
    before format 5, whose AUROC interval was Hanley and McNeil's.
    """

    agreed: int | None
    rows: int | None
    without: int | None
    auroc: float | None
    auroc_interval: Interval | None
    brier_score: float | None
    risk_coverage: tuple[SharedStep | None, ...]
    withheld: Mapping[str, str] = attrs.field(factory=dict)
    agreed_range: Range | None = None
    rows_range: Range | None = None
    without_range: Range | None = None
    auroc_standard_error: float | None = None
    delong: bool = True

    def numbers(self) -> Iterator[tuple[str, int | None]]:
        """The counts, as quantities of the model."""
        yield AGREED_Q, self.agreed
        yield ROWS_Q, self.rows
        yield WITHOUT_Q, self.without

    def ranges(self) -> Iterator[tuple[str, Range]]:
        """The published ranges of the suppressed counts."""
        for name, proven in (
            (AGREED_Q, self.agreed_range),
            (ROWS_Q, self.rows_range),
            (WITHOUT_Q, self.without_range),
        ):
            if proven is not None:
                yield name, proven

    def with_ranges(self, found: Mapping[str, Range]) -> SharedUncertainty:
        """With the range of each suppressed count from ``found``."""
        return attrs.evolve(
            self,
            agreed_range=found[AGREED_Q] if self.agreed is None else None,
            rows_range=found[ROWS_Q] if self.rows is None else None,
            without_range=found[WITHOUT_Q] if self.without is None else None,
        )

    def to_dict(self) -> dict[str, object]:
        """The JSON object (figures null where withheld)."""
        out: dict[str, object] = {
            "agreed": self.agreed,
            "rows": self.rows,
            "without_uncertainty": self.without,
            "auroc": self.auroc,
            "auroc_interval": _list(self.auroc_interval),
            "brier_score": self.brier_score,
            "risk_coverage": [None if s is None else s.to_dict() for s in self.risk_coverage],
            "withheld": dict(self.withheld),
        }
        if self.delong:
            out["auroc_standard_error"] = self.auroc_standard_error
        for name, proven in (
            ("agreed", self.agreed_range),
            ("rows", self.rows_range),
            ("without_uncertainty", self.without_range),
        ):
            if proven is not None:
                out[name + "_range"] = list(proven)
        return out


def _list(value: Interval | None) -> list[float] | None:
    return None if value is None else [value[0], value[1]]


def _pair(value: object) -> Interval | None:
    if value is None:
        return None
    assert isinstance(value, list | tuple) and len(value) == 2
    return float(value[0]), float(value[1])


# --- building (inside: share) ---------------------------------------------------------


def shared_magnitude(
    raw: Mapping[str, object],
    figures: FieldFigures | None,
    shown: Mapping[str, int | None],
    min_cell: int,
) -> SharedMagnitude:
    """A full report's ``error_magnitude`` under the rules.

    ``shown`` holds the published value of each count (None: suppressed);
    ``figures`` the inside contributions (None: every figure withheld).
    """
    pairs, gold_rows = shown[PAIRS_Q], shown[GOLD_ROWS_Q]
    signed = raw["mean_signed_error"]
    chance = raw["chance"]
    assert isinstance(signed, Mapping) and isinstance(chance, Mapping)
    withheld: dict[str, str] = {}

    def verdict(count: int | None, parts: Contributions | None) -> str | None:
        if count is None or count < min_cell:
            return COUNT_SUPPRESSED
        return DOMINANCE if parts is None or parts.sensitive(min_cell) else None

    mae = raw["mean_absolute_error"]
    errors = verdict(pairs, None if figures is None else figures.absolute)
    if mae is not None and errors is not None:
        withheld["mean_absolute_error"] = errors
    limits = raw["limits_of_agreement"]
    spread = errors or verdict(pairs, None if figures is None else figures.squares)
    if limits is not None and spread is not None:
        withheld["limits_of_agreement"] = spread
    level = chance["mean_absolute_deviation"]
    centre = verdict(gold_rows, None if figures is None else figures.deviation)
    if level is not None and centre is not None:
        withheld["chance"] = centre
    show_errors = "mean_absolute_error" not in withheld
    show_spread = "limits_of_agreement" not in withheld
    return SharedMagnitude(
        unit=str(raw["unit"]),
        pairs=pairs,
        gold_rows=gold_rows,
        mean_absolute_error=mae if show_errors else None,  # type: ignore[arg-type]
        bias=signed["estimate"] if show_errors else None,
        bias_interval=_pair(signed["interval"]) if show_spread else None,
        limits_of_agreement=_pair(limits) if show_spread else None,
        chance_level=level if "chance" not in withheld else None,
        withheld=withheld,
    )


def shared_steps(steps: list[tuple[int, int]], min_cell: int) -> tuple[tuple[int, int] | None, ...]:
    """The risk-coverage steps that may be shown: from the last (every row) down.

    A step is kept when its agreeing and disagreeing rows, and their differences
    from the last kept step, are each 0 or at least ``min_cell``: then every
    difference of two kept steps is a sum of such differences.
    """
    kept: list[tuple[int, int] | None] = [None] * len(steps)
    last = steps[-1]
    kept[-1] = last
    for index in range(len(steps) - 2, -1, -1):
        agreed, rows = steps[index]
        failures = rows - agreed
        differences = (agreed, failures, last[0] - agreed, (last[1] - last[0]) - failures)
        if all(_allowed(value, min_cell) for value in differences):
            kept[index] = steps[index]
            last = steps[index]
    return tuple(kept)


def shared_uncertainty(
    raw: Mapping[str, object],
    figures: FieldFigures | None,
    shown: Mapping[str, int | None],
    min_cell: int,
    z: float,
) -> SharedUncertainty:
    """A full report's ``declared_uncertainty`` under the rules (see :func:`shared_magnitude`)."""
    agreed, rows = shown[AGREED_Q], shown[ROWS_Q]
    counts = None if agreed is None or rows is None else (agreed, rows)
    withheld: dict[str, str] = {}
    auroc = raw["auroc"]
    if auroc is not None and (
        counts is None or agreed < min_cell or rows - agreed < min_cell  # type: ignore[operator]
    ):
        withheld["auroc"] = COUNT_SUPPRESSED
    brier = raw["brier_score"]
    if brier is not None:
        if counts is None or counts[1] < min_cell:
            withheld["brier_score"] = COUNT_SUPPRESSED
        elif figures is None or figures.brier is None or figures.brier.sensitive(min_cell):
            withheld["brier_score"] = DOMINANCE
    raw_steps = raw["risk_coverage"]
    assert isinstance(raw_steps, list)
    full = [(int(step["success_count"]), int(step["total_count"])) for step in raw_steps]
    steps: tuple[SharedStep | None, ...]
    if counts is None:
        steps = (None,) * len(full)
        if full[-1][1]:
            withheld["risk_coverage"] = COUNT_SUPPRESSED
    else:
        kept = shared_steps(full, min_cell)
        steps = tuple(
            None if step is None else SharedStep(*step, wilson_interval(*step, z)) for step in kept
        )
        if any(step is None for step in steps):
            withheld["risk_coverage"] = COUNT_RULE
    return SharedUncertainty(
        agreed=agreed,
        rows=rows,
        without=shown[WITHOUT_Q],
        auroc=None if "auroc" in withheld else auroc,  # type: ignore[arg-type]
        auroc_interval=None if "auroc" in withheld else _pair(raw["auroc_interval"]),
        brier_score=None if "brier_score" in withheld else brier,  # type: ignore[arg-type]
        risk_coverage=steps,
        withheld=withheld,
        auroc_standard_error=None if "auroc" in withheld else raw["auroc_standard_error"],  # type: ignore[arg-type]
    )


def figure_counts(raw_magnitude: object, raw_uncertainty: object) -> dict[str, int]:
    """The model's figure counts of a full report's field slice, by quantity."""
    out: dict[str, int] = {}
    if isinstance(raw_magnitude, Mapping):
        chance = raw_magnitude["chance"]
        assert isinstance(chance, Mapping)
        out[PAIRS_Q] = int(raw_magnitude["pairs"])
        out[GOLD_ROWS_Q] = int(chance["gold_rows"])
    if isinstance(raw_uncertainty, Mapping):
        agreed, rows = int(raw_uncertainty["agreed"]), int(raw_uncertainty["rows"])
        out[AGREED_Q] = agreed
        out[ROWS_Q] = rows
        out[DISAGREED_Q] = rows - agreed
        out[WITHOUT_Q] = int(raw_uncertainty["without_uncertainty"])
    return out


# --- reading (outside: the audit) -----------------------------------------------------

_MAGNITUDE_KEYS: Final = (
    "unit",
    "pairs",
    "mean_absolute_error",
    "mean_signed_error",
    "limits_of_agreement",
    "chance",
    "withheld",
)
_UNCERTAINTY_KEYS: Final = (
    "agreed",
    "rows",
    "without_uncertainty",
    "auroc",
    "auroc_interval",
    "brier_score",
    "risk_coverage",
    "withheld",
)


def _count(value: object) -> int | None:
    return None if value is None else _strict_json.count(value)


def _beside(value: Mapping[str, object], name: str, number: int | None) -> Range | None:
    key = name + "_range"
    if key not in value:
        return None
    if number is not None:
        _strict_json.invalid()
    found = value[key]
    if type(found) is not list or len(found) != 2:
        _strict_json.invalid()
    low = _strict_json.count(found[0])
    high = _count(found[1])
    if high is not None and high < low:
        _strict_json.invalid()
    return low, high


def _figure(value: object) -> float | None:
    return None if value is None else _strict_json.number(value, -1e308, 1e308)


def _bounds(value: object) -> Interval | None:
    return None if value is None else _strict_json.interval(value, -1e308, 1e308)


def _withheld(value: object, groups: Collection[str]) -> dict[str, str]:
    found = _strict_json.mapping(value)
    if any(key not in groups or reason not in REASONS for key, reason in found.items()):
        _strict_json.invalid()
    return {key: str(found[key]) for key in groups if key in found}


def read_magnitude(value: object, *, student: bool = True) -> SharedMagnitude:
    """A shared report's ``error_magnitude``, checked for shape (the audit checks the rule).

    ``student`` False reads a document before format 5 (a ``z`` bias interval).
    """
    members = _strict_json.members(value, _MAGNITUDE_KEYS, ("pairs_range",))
    signed = _strict_json.members(members["mean_signed_error"], ("estimate", "interval"))
    chance = _strict_json.members(
        members["chance"], ("gold_rows", "mean_absolute_deviation"), ("gold_rows_range",)
    )
    if members["unit"] not in UNITS:
        _strict_json.invalid()
    pairs, gold_rows = _count(members["pairs"]), _count(chance["gold_rows"])
    result = SharedMagnitude(
        unit=str(members["unit"]),
        pairs=pairs,
        gold_rows=gold_rows,
        mean_absolute_error=_figure(members["mean_absolute_error"]),
        bias=_figure(signed["estimate"]),
        bias_interval=_bounds(signed["interval"]),
        limits_of_agreement=_bounds(members["limits_of_agreement"]),
        chance_level=_figure(chance["mean_absolute_deviation"]),
        withheld=_withheld(members["withheld"], MAGNITUDE_GROUPS),
        pairs_range=_beside(members, "pairs", pairs),
        gold_rows_range=_beside(chance, "gold_rows", gold_rows),
        student=student,
    )
    shown = {
        "mean_absolute_error": (result.mean_absolute_error, result.bias),
        "limits_of_agreement": (result.bias_interval, result.limits_of_agreement),
        "chance": (result.chance_level,),
    }
    counts = {"mean_absolute_error": pairs, "limits_of_agreement": pairs, "chance": gold_rows}
    _check_withheld(result.withheld, shown, counts)
    return result


def _check_withheld(
    withheld: Mapping[str, str],
    shown: Mapping[str, tuple[object, ...]],
    counts: Mapping[str, int | None],
) -> None:
    # A withheld group shows nothing; "count_suppressed" stands only beside a null count
    # (or, for the AUROC and the Brier score, counts that the rule does not allow).
    for group, reason in withheld.items():
        if any(figure is not None for figure in shown[group]):
            _strict_json.invalid()
        if reason == DOMINANCE and counts[group] is None:
            _strict_json.invalid()


def read_uncertainty(value: object, z: float, *, delong: bool = True) -> SharedUncertainty:
    """A shared report's ``declared_uncertainty``, checked for shape.

    ``delong`` False reads a document before format 5 (no standard error).
    """
    optional = ("agreed_range", "rows_range", "without_uncertainty_range")
    keys = (*_UNCERTAINTY_KEYS, "auroc_standard_error") if delong else _UNCERTAINTY_KEYS
    members = _strict_json.members(value, keys, optional)
    agreed, rows = _count(members["agreed"]), _count(members["rows"])
    without = _count(members["without_uncertainty"])
    raw_steps = members["risk_coverage"]
    if type(raw_steps) is not list or len(raw_steps) != DECILES:
        _strict_json.invalid()
    steps = tuple(None if step is None else _step(step, z) for step in raw_steps)
    auroc = members["auroc"]
    brier = members["brier_score"]
    result = SharedUncertainty(
        agreed=agreed,
        rows=rows,
        without=without,
        auroc=None if auroc is None else _strict_json.number(auroc, 0, 1),
        auroc_interval=None
        if members["auroc_interval"] is None
        else _strict_json.interval(members["auroc_interval"], 0, 1),
        brier_score=None if brier is None else _strict_json.number(brier, 0, 1),
        risk_coverage=steps,
        withheld=_withheld(members["withheld"], UNCERTAINTY_GROUPS),
        agreed_range=_beside(members, "agreed", agreed),
        rows_range=_beside(members, "rows", rows),
        without_range=_beside(members, "without_uncertainty", without),
        auroc_standard_error=_standard_error(members.get("auroc_standard_error")),
        delong=delong,
    )
    if result.auroc is None and result.auroc_standard_error is not None:
        _strict_json.invalid()  # shown only beside the AUROC
    counts = None if agreed is None or rows is None else rows
    shown: dict[str, tuple[object, ...]] = {
        "auroc": (result.auroc, result.auroc_interval),
        "brier_score": (result.brier_score,),
        "risk_coverage": (),
    }
    _check_withheld(result.withheld, shown, dict.fromkeys(UNCERTAINTY_GROUPS, counts))
    if (result.auroc is None) != (result.auroc_interval is None):
        _strict_json.invalid()
    return result


def _standard_error(value: object) -> float | None:
    if value is None:
        return None
    shown = _strict_json.number(value, 0.0, 0.5)
    if not is_published_standard_error(shown):
        _strict_json.invalid()
    return shown


def _step(value: object, z: float) -> SharedStep:
    members = _strict_json.members(value, ("success_count", "total_count", "interval"))
    success = _strict_json.count(members["success_count"])
    total = _strict_json.count(members["total_count"])
    if success > total:
        _strict_json.invalid()
    shown = members["interval"]
    interval = None if shown is None else _strict_json.interval(shown, 0, 1)
    if interval != wilson_interval(success, total, z):
        _strict_json.invalid()
    return SharedStep(success, total, interval)


# --- the audit's checks ---------------------------------------------------------------


def figure_failures(
    magnitude: SharedMagnitude | None,
    uncertainty: SharedUncertainty | None,
    min_cell: int,
    z: float,
) -> list[tuple[str, str]]:
    """Every breach of the figures' rules visible in one field slice, as (name, status).

    ``figure_published``: a figure shown while its count is hidden or below
    ``min_cell``, or risk-coverage steps whose counts or differences break the
    count rule. ``inconsistent``: figures that their counts and each other do
    not allow (a hand-edited file).
    """
    out: list[tuple[str, str]] = []
    if magnitude is not None:
        out += _magnitude_failures(magnitude, min_cell, z)
    if uncertainty is not None:
        out += _uncertainty_failures(uncertainty, min_cell, z)
    return out


def _close(first: float, second: float) -> bool:
    return math.isclose(first, second, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


def _magnitude_failures(m: SharedMagnitude, min_cell: int, z: float) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    name = MAGNITUDE
    n = m.pairs
    errors = m.mean_absolute_error is not None or m.bias is not None
    spread = m.limits_of_agreement is not None or m.bias_interval is not None
    if (errors or spread) and (n is None or n < min_cell):
        out.append((f"{name}.mean_absolute_error", FIGURE_PUBLISHED))
    if m.chance_level is not None and (m.gold_rows is None or m.gold_rows < min_cell):
        out.append((f"{name}.chance", FIGURE_PUBLISHED))
    if out or n is None:
        return out
    consistent = True
    if spread and not errors:
        consistent = False  # the limits' midpoint is the bias: never shown without it
    mae, bias = m.mean_absolute_error, m.bias
    if (mae is None) != (bias is None) or (mae is not None and not mae >= 0):
        consistent = False
    if mae is not None and bias is not None and abs(bias) > mae * (1 + _TOLERANCE):
        consistent = False
    if m.unit == "days" and mae is not None and bias is not None:
        # whole days: n times each mean is an integer
        consistent &= all(_close(v * n, round(v * n)) for v in (mae, bias))
    limits, interval = m.limits_of_agreement, m.bias_interval
    if (limits is None) != (interval is None):
        consistent = False
    if limits is not None and interval is not None and bias is not None and mae is not None:
        half_limits = (limits[1] - limits[0]) / 2
        half_interval = (interval[1] - interval[0]) / 2
        centred = _close((limits[0] + limits[1]) / 2, bias) and _close(
            (interval[0] + interval[1]) / 2, bias
        )
        # limits: bias -/+ z s; interval: bias -/+ t s / sqrt(n) (z before format 5)
        quantile = t_for(z, n - 1) if m.student and n >= 2 else z
        expected = z * math.sqrt(n) / quantile
        ratio = half_interval > 0 and _close(half_limits / half_interval, expected)
        zero = half_limits == half_interval == 0
        s = half_limits / z
        # Cauchy-Schwarz: (sum |d|)**2 <= n sum d**2, with sum d**2 = (n-1) s**2 + n bias**2
        squares = (n - 1) * s * s + n * bias * bias
        schwarz = (n * mae) ** 2 <= n * squares * (1 + 1e-6) + _TOLERANCE
        consistent &= centred and (ratio or zero) and schwarz and n >= 2
    if m.chance_level is not None and not m.chance_level >= 0:
        consistent = False
    if not consistent:
        out.append((name, FIGURE_INCONSISTENT))
    return out


def _uncertainty_failures(u: SharedUncertainty, min_cell: int, z: float) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    name = UNCERTAINTY
    counts = None if u.agreed is None or u.rows is None else (u.agreed, u.rows)
    if counts is not None and counts[0] > counts[1]:
        return [(name, FIGURE_INCONSISTENT)]
    if u.auroc is not None and (
        counts is None or counts[0] < min_cell or counts[1] - counts[0] < min_cell
    ):
        out.append((f"{name}.auroc", FIGURE_PUBLISHED))
    if u.brier_score is not None and (counts is None or counts[1] < min_cell):
        out.append((f"{name}.brier_score", FIGURE_PUBLISHED))
    steps = [(k, step) for k, step in enumerate(u.risk_coverage) if step is not None]
    if steps and counts is None:
        out.append((f"{name}.risk_coverage", FIGURE_PUBLISHED))
    if out or counts is None:
        return out
    consistent = True
    if u.auroc is not None and u.auroc_interval is not None:
        n1, n0 = counts[0], counts[1] - counts[0]
        ranked = round(u.auroc * 2 * n1 * n0)
        exact = Fraction(ranked, 2 * n1 * n0)
        if u.delong:
            # Both classes have at least min_cell >= 2 rows: the standard error is defined.
            defined = u.auroc_standard_error is not None
            recomputed = delong_interval(n1, n0, ranked, u.auroc_standard_error, z)
            consistent &= defined
        else:
            recomputed = hanley_mcneil(n1, n0, ranked, z)
        consistent &= float(exact) == u.auroc and recomputed == u.auroc_interval
    last = steps[-1][1] if steps else None
    if last is not None and (
        steps[-1][0] != DECILES - 1 or (last.success_count, last.total_count) != counts
    ):
        # the last step holds every row with an uncertainty; shown steps include it
        consistent = False
    later: tuple[int, int] | None = None
    breach = False
    for _, step in reversed(steps):
        agreed, rows = step.success_count, step.total_count
        values = [agreed, rows - agreed]
        if later is not None:
            if agreed > later[0] or rows - agreed > later[1] - later[0] or rows > later[1]:
                consistent = False
            values += [later[0] - agreed, (later[1] - later[0]) - (rows - agreed)]
        breach |= not all(_allowed(v, min_cell) for v in values if v >= 0)
        later = (agreed, rows)
    if breach:
        out.append((f"{name}.risk_coverage", FIGURE_PUBLISHED))
    if not consistent:
        out.append((name, FIGURE_INCONSISTENT))
    return out
