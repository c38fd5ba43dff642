"""The value-free agreement document of several raters (``chartscore agree``).

Several rater files (predictions format) on the same charts: per field, each rater's
answered, abstained, wrong-type and missing entries; each pair of raters' observed
agreement and Cohen's kappa; over all raters Fleiss' kappa, Gwet's AC1 (AC2 on an
ordinal scale) and Krippendorff's alpha; the pairs pooled over fields; and, with a gold
file, each rater's agreement with gold and the best and median rater: the ceiling a
model is judged against (docs/metrics.md, "Agreement among raters"; docs/formats.md).

It holds counts, coefficients, field ids, closed type names and the raters' labels
(developer-chosen plain names, as a batch's run labels). ``to_json`` is RFC 8785
canonical JSON; :meth:`Agreement.from_json` reads it back strictly: every Wilson
interval and the ceiling are recomputed from the counts and must be what the document
says, and every count must obey its identities.

Value-free: imports only ``_types``, ``_version``, ``stats`` and the document readers.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Final, TypeVar

import attrs

from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents._shell import SCORER_NAME, read_confidence, read_scorer
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.display import Displayed
from chartscore.errors import valid_field_id
from chartscore.metrics import FieldType
from chartscore.stats.binomial import wilson_interval
from chartscore.stats.clustered import z_for

__all__ = [
    "AGREEMENT_FORMAT",
    "AGREEMENT_FORMAT_VERSION",
    "Agreement",
    "Coefficient",
    "CountResult",
    "FieldAgreement",
    "GoldAgreement",
    "PairAgreement",
    "RaterCounts",
    "ceiling_of",
    "count_result",
]

AGREEMENT_FORMAT: Final = "chartscore.agreement"
AGREEMENT_FORMAT_VERSION: Final = 1

RATER_LABEL: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
"""A rater's label: a plain name, as a batch's run label (``ledger.entry.LABEL_PATTERN``)."""

MIN_RATERS: Final = 2
MAX_RATERS: Final = 64
"""An agreement compares 2 to 64 raters (pairs grow with the square)."""

KAPPA_TYPES: Final = (FieldType.CATEGORICAL, FieldType.BOOLEAN, FieldType.ORDINAL)
"""Field types on a scale of categories: Cohen's and Fleiss' kappa and Gwet's AC1/AC2."""

ALPHA_METRIC_OF: Final = {
    "categorical": "nominal",
    "boolean": "nominal",
    "ordinal": "ordinal",
    "number": "interval",
}
"""Krippendorff's alpha's difference function by field type; other types have no alpha."""

GOLD_METRICS: Final = ("exact_agreement", "normalized_agreement")
"""What each rater is given against gold, as ``score`` reports them (docs/metrics.md)."""

CEILING_METRIC: Final = "normalized_agreement"
"""The metric raters are ranked by for the ceiling."""

_V = TypeVar("_V")
_KAPPA_NAMES: Final = frozenset(kind.value for kind in KAPPA_TYPES)
_LOWEST: Final = -1e300


@attrs.frozen
class CountResult:
    """``success_count`` of ``total_count``, with its Wilson interval (None when not given)."""

    success_count: int
    total_count: int
    interval: tuple[float, float] | None

    def to_dict(self, *, with_interval: bool = True) -> dict[str, object]:
        """The JSON object."""
        out: dict[str, object] = {
            "success_count": self.success_count,
            "total_count": self.total_count,
        }
        if with_interval:
            out["interval"] = None if self.interval is None else list(self.interval)
        return out

    @property
    def rate(self) -> float | None:
        """``success_count / total_count``; None without trials."""
        return None if not self.total_count else self.success_count / self.total_count


def count_result(successes: int, trials: int, z: float | None) -> CountResult:
    """A :class:`CountResult` with its Wilson interval at ``z`` (None: no interval)."""
    if not (type(successes) is int and type(trials) is int and 0 <= successes <= trials):
        raise ValueError("need integers 0 <= successes <= trials")
    interval = None if z is None else wilson_interval(successes, trials, z)
    return CountResult(successes, trials, interval)


@attrs.frozen
class Coefficient:
    """A chance-corrected coefficient: value (None when undefined), interval, units, pairs.

    For a pair of raters (Cohen's kappa) ``units`` is the units both rated on the scale
    and ``pairs`` is None; for all raters ``units`` counts the units with two or more
    ratings and ``pairs`` their ordered rating pairs ``sum r_u (r_u - 1)``.
    """

    value: float | None
    interval: tuple[float, float] | None
    units: int
    pairs: int | None

    def to_dict(self) -> dict[str, object]:
        """The JSON object."""
        if self.pairs is None:
            return {
                "value": self.value,
                "interval": None if self.interval is None else list(self.interval),
                "pairs": self.units,
            }
        return {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "units": self.units,
            "pairs": self.pairs,
        }


@attrs.frozen
class RaterCounts:
    """One rater's entries in a field: answered (wrong-type ones included), abstained, missing."""

    answered_count: int
    abstained_count: int
    wrong_type_count: int
    missing_count: int

    def to_dict(self) -> dict[str, object]:
        """The JSON object."""
        return {
            "answered_count": self.answered_count,
            "abstained_count": self.abstained_count,
            "wrong_type_count": self.wrong_type_count,
            "missing_count": self.missing_count,
        }


@attrs.frozen
class PairAgreement:
    """Two raters: observed agreement over the units both answered, and Cohen's kappa."""

    raters: tuple[str, str] = attrs.field(repr=False)  # labels may name people: no repr
    raters_index: tuple[int, int] = attrs.field(eq=False)
    agreement: CountResult
    kappa: Coefficient | None

    def to_dict(self, *, pooled: bool = False) -> dict[str, object]:
        """The JSON object; pooled over fields it has no intervals."""
        kappa = None
        if self.kappa is not None:
            kappa = self.kappa.to_dict()
            if pooled:
                del kappa["interval"]
        return {
            "raters": list(self.raters),
            "agreement": self.agreement.to_dict(with_interval=not pooled),
            "kappa": kappa,
        }


@attrs.frozen
class FieldAgreement:
    """One field: its units, each rater's counts, the pairs and the all-rater coefficients."""

    field_type: str
    unit_count: int
    raters: Mapping[str, RaterCounts] = attrs.field(repr=False)  # keyed by label: no repr
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: Coefficient | None
    gwet: Coefficient | None
    alpha: Coefficient | None

    def to_dict(self) -> dict[str, object]:
        """The JSON object."""
        out: dict[str, object] = {
            "field_type": self.field_type,
            "unit_count": self.unit_count,
            "raters": {name: counts.to_dict() for name, counts in self.raters.items()},
            "pairs": [pair.to_dict() for pair in self.pairs],
        }
        if self.field_type in _KAPPA_NAMES:
            out["fleiss_kappa"] = None if self.fleiss_kappa is None else self.fleiss_kappa.to_dict()
            name = "ac2" if self.field_type == FieldType.ORDINAL.value else "ac1"
            out[name] = None if self.gwet is None else self.gwet.to_dict()
        if self.field_type in ALPHA_METRIC_OF:
            alpha: dict[str, object] | None = None
            if self.alpha is not None:
                alpha = {"metric": ALPHA_METRIC_OF[self.field_type], **self.alpha.to_dict()}
            out["alpha"] = alpha
        return out


@attrs.frozen(repr=False)
class GoldAgreement:
    """Each rater against gold (``score``'s agreement metrics), per field and overall.

    Keyed by the raters' labels, which may name people: its repr counts them instead.
    """

    def __repr__(self) -> str:
        return f"<GoldAgreement: {len(self.overall)} raters, {len(self.by_field)} fields>"

    overall: Mapping[str, Mapping[str, CountResult]]
    by_field: Mapping[str, Mapping[str, Mapping[str, CountResult]]]

    def ceiling(self) -> dict[str, object]:
        """The best and the median rater by overall :data:`CEILING_METRIC` (:func:`ceiling_of`)."""
        return ceiling_of({name: found[CEILING_METRIC] for name, found in self.overall.items()})

    def to_dict(self) -> dict[str, object]:
        """The JSON object."""
        return {
            "raters": {
                name: {metric: result.to_dict() for metric, result in found.items()}
                for name, found in self.overall.items()
            },
            "by_field": {
                field_id: {
                    name: {metric: result.to_dict() for metric, result in found.items()}
                    for name, found in raters.items()
                }
                for field_id, raters in self.by_field.items()
            },
            "ceiling": self.ceiling(),
        }


def ceiling_of(results: Mapping[str, CountResult]) -> dict[str, object]:
    """The best and the median rater: raters ranked by rate (highest first, then by label).

    The median is the rater at rank ``ceil(k / 2)`` of ``k`` ranked raters (with an even
    number, the better of the two middle ones: the stricter bar for a model). A rater with
    no trials is not ranked; with none ranked, both are None.
    """
    ranked = sorted(
        ((result.success_count, result.total_count, name) for name, result in results.items()
         if result.total_count),
        key=lambda item: (-Fraction(item[0], item[1]), item[2]),
    )  # fmt: skip
    if not ranked:
        return {"metric": CEILING_METRIC, "best": None, "median": None}
    median = ranked[(len(ranked) + 1) // 2 - 1]
    return {
        "metric": CEILING_METRIC,
        "best": {"rater": ranked[0][2], **results[ranked[0][2]].to_dict()},
        "median": {"rater": median[2], **results[median[2]].to_dict()},
    }


@attrs.frozen(repr=False)
class Agreement(Displayed):
    """The agreement document: raters, per-field figures, the pooled pairs, gold if given.

    Its repr counts raters and fields: a rater's label is a file's stem or a caller's name,
    and may name a person (docs/raters.md), so it never reaches a repr or a traceback.
    """

    def __repr__(self) -> str:
        gold = "with gold" if self.gold is not None else "without gold"
        return f"<Agreement: {len(self.raters)} raters, {len(self.by_field)} fields, {gold}>"

    raters: tuple[str, ...]
    confidence: float
    by_field: Mapping[str, FieldAgreement]
    pooled: tuple[PairAgreement, ...]
    gold: GoldAgreement | None = None
    version: str = __version__

    def to_dict(self) -> dict[str, object]:
        """The document as JSON values."""
        return {
            "format": AGREEMENT_FORMAT,
            "format_version": AGREEMENT_FORMAT_VERSION,
            "scorer": {"name": SCORER_NAME, "version": self.version},
            "confidence": self.confidence,
            "raters": list(self.raters),
            "by_field": {field_id: part.to_dict() for field_id, part in self.by_field.items()},
            "pooled": {"pairs": [pair.to_dict(pooled=True) for pair in self.pooled]},
            "gold": None if self.gold is None else self.gold.to_dict(),
        }

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same counts, everywhere."""
        return canonical_json(self.to_dict())

    def by_position(self) -> Agreement:
        """The same figures with each rater named by position: ``rater-1``, ``rater-2``, ...

        A rater's label is a file's stem or a name the caller gave, and may name a person:
        renderings show these positional names unless asked for the labels (docs/raters.md).
        The names follow the labels' sorted order (zero-padded from 10 raters on), so the
        pairs, the ceiling and its ties are the same.
        """
        width = len(str(len(self.raters)))
        names = {label: f"rater-{i:0{width}d}" for i, label in enumerate(self.raters, start=1)}

        def pair(found: PairAgreement) -> PairAgreement:
            first, second = found.raters
            return attrs.evolve(found, raters=(names[first], names[second]))

        def keyed(found: Mapping[str, _V]) -> dict[str, _V]:
            return {names[label]: value for label, value in found.items()}

        by_field = {
            field_id: attrs.evolve(
                part, raters=keyed(part.raters), pairs=tuple(pair(p) for p in part.pairs)
            )
            for field_id, part in self.by_field.items()
        }
        gold = None
        if self.gold is not None:
            gold = GoldAgreement(
                keyed(self.gold.overall),
                {field_id: keyed(found) for field_id, found in self.gold.by_field.items()},
            )
        return Agreement(
            tuple(names[label] for label in self.raters),
            self.confidence,
            by_field,
            tuple(pair(p) for p in self.pooled),
            gold,
            self.version,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Agreement:
        """Read a saved agreement document back, strictly.

        Raises:
            ChartscoreError: ``unknown_report_format`` for another format or version;
                ``invalid_report`` for anything malformed, a count that breaks an
                identity, or an interval or ceiling that is not the counts' own.
        """
        return cls.from_dict(_strict_json.parse(text))

    @classmethod
    def from_dict(cls, document: object) -> Agreement:
        """As :meth:`from_json`, from already-parsed JSON values."""
        _strict_json.require_plain(document)
        found = _strict_json.check_format(document, AGREEMENT_FORMAT, AGREEMENT_FORMAT_VERSION)
        top = _strict_json.members(
            found,
            (
                "format",
                "format_version",
                "scorer",
                "confidence",
                "raters",
                "by_field",
                "pooled",
                "gold",
            ),
        )
        version = read_scorer(top["scorer"])
        confidence = read_confidence(top["confidence"])
        z = z_for(confidence)
        raters = _read_raters(top["raters"])
        by_field = {}
        for field_id, part in _strict_json.mapping(top["by_field"]).items():
            if not valid_field_id(field_id):
                _strict_json.invalid()
            by_field[field_id] = _read_field(part, raters, z)
        pooled_raw = _strict_json.members(top["pooled"], ("pairs",))["pairs"]
        pooled = _read_pairs(pooled_raw, raters, None)
        gold = None if top["gold"] is None else _read_gold(top["gold"], raters, by_field, z)
        agreement = cls(raters, confidence, by_field, pooled, gold, version)
        if agreement.to_dict() != found:  # every derived figure is the counts' own
            _strict_json.invalid()
        return agreement


def _read_raters(value: object) -> tuple[str, ...]:
    if type(value) is not list or not MIN_RATERS <= len(value) <= MAX_RATERS:
        _strict_json.invalid()
    names = []
    for name in value:
        if type(name) is not str or RATER_LABEL.fullmatch(name) is None:
            _strict_json.invalid()
        names.append(name)
    if names != sorted(set(names)):
        _strict_json.invalid()
    return tuple(names)


def _read_count_result(value: object, z: float | None) -> CountResult:
    keys = ("success_count", "total_count") + (("interval",) if z is not None else ())
    found = _strict_json.members(value, keys)
    successes = _strict_json.count(found["success_count"])
    trials = _strict_json.count(found["total_count"])
    if successes > trials:
        _strict_json.invalid()
    return count_result(successes, trials, z)


def _read_coefficient(value: object, *, pair: bool, pooled: bool = False) -> Coefficient:
    keys: tuple[str, ...] = ("value", "pairs") if pooled else ("value", "interval", "pairs")
    if not pair:
        keys = ("value", "interval", "units", "pairs")
    found = _strict_json.members(value, keys)
    raw = found["value"]
    number = None if raw is None else _strict_json.number(raw, _LOWEST, 1.0)
    interval = None
    if not pooled and found["interval"] is not None:
        interval = _strict_json.interval(found["interval"], _LOWEST, 1.0)
        if number is None or not interval[0] <= number <= interval[1]:
            _strict_json.invalid()
    if pair:
        return Coefficient(number, interval, _strict_json.count(found["pairs"]), None)
    units, pairs = _strict_json.count(found["units"]), _strict_json.count(found["pairs"])
    if pairs < 2 * units:
        _strict_json.invalid()
    return Coefficient(number, interval, units, pairs)


def _read_pairs(
    value: object, raters: tuple[str, ...], z: float | None, kappa_allowed: bool = True
) -> tuple[PairAgreement, ...]:
    if type(value) is not list:
        _strict_json.invalid()
    expected = list(itertools.combinations(range(len(raters)), 2))
    if len(value) != len(expected):
        _strict_json.invalid()
    pairs = []
    for (a, b), raw in zip(expected, value, strict=True):
        found = _strict_json.members(raw, ("raters", "agreement", "kappa"))
        if found["raters"] != [raters[a], raters[b]]:
            _strict_json.invalid()
        agreement = _read_count_result(found["agreement"], z)
        kappa = None
        if found["kappa"] is not None:
            if not kappa_allowed:
                _strict_json.invalid()
            kappa = _read_coefficient(found["kappa"], pair=True, pooled=z is None)
            if z is not None and kappa.units != agreement.total_count:
                _strict_json.invalid()
        pairs.append(PairAgreement((raters[a], raters[b]), (a, b), agreement, kappa))
    return tuple(pairs)


def _read_field(value: object, raters: tuple[str, ...], z: float) -> FieldAgreement:
    found = _strict_json.mapping(value)
    kind = found.get("field_type")
    if type(kind) is not str or kind not in {member.value for member in FieldType}:
        _strict_json.invalid()
    optional = []
    if kind in _KAPPA_NAMES:
        optional += ["fleiss_kappa", "ac2" if kind == FieldType.ORDINAL.value else "ac1"]
    if kind in ALPHA_METRIC_OF:
        optional.append("alpha")
    found = _strict_json.members(value, ("field_type", "unit_count", "raters", "pairs", *optional))
    units = _strict_json.count(found["unit_count"])
    counts_raw = _strict_json.members(found["raters"], raters)
    counts = {}
    for name in raters:
        item = _strict_json.members(
            counts_raw[name],
            ("answered_count", "abstained_count", "wrong_type_count", "missing_count"),
        )
        answered, abstained, wrong, missing = (
            _strict_json.count(item[key])
            for key in ("answered_count", "abstained_count", "wrong_type_count", "missing_count")
        )
        if answered + abstained + missing != units or wrong > answered:
            _strict_json.invalid()
        counts[name] = RaterCounts(answered, abstained, wrong, missing)
    pairs = _read_pairs(found["pairs"], raters, z, kind in _KAPPA_NAMES)
    for pair in pairs:
        a, b = pair.raters
        placed = min(
            counts[a].answered_count - counts[a].wrong_type_count,
            counts[b].answered_count - counts[b].wrong_type_count,
        )
        if pair.agreement.total_count > placed:
            _strict_json.invalid()
    coefficients: list[Coefficient | None] = []
    for name in optional:
        raw = found[name]
        if name == "alpha" and raw is not None:
            alpha = _strict_json.mapping(raw)
            if alpha.get("metric") != ALPHA_METRIC_OF[kind]:
                _strict_json.invalid()
            raw = {key: item for key, item in alpha.items() if key != "metric"}
        coefficient = None if raw is None else _read_coefficient(raw, pair=False)
        if coefficient is not None and coefficient.units > units:
            _strict_json.invalid()
        coefficients.append(coefficient)
    fleiss = coefficients[0] if kind in _KAPPA_NAMES else None
    gwet = coefficients[1] if kind in _KAPPA_NAMES else None
    alpha_found = coefficients[-1] if kind in ALPHA_METRIC_OF else None
    return FieldAgreement(kind, units, counts, pairs, fleiss, gwet, alpha_found)


def _read_results(value: object, z: float) -> dict[str, CountResult]:
    found = _strict_json.members(value, GOLD_METRICS)
    return {metric: _read_count_result(found[metric], z) for metric in GOLD_METRICS}


def _read_gold(
    value: object, raters: tuple[str, ...], by_field: Mapping[str, FieldAgreement], z: float
) -> GoldAgreement:
    found = _strict_json.members(value, ("raters", "by_field", "ceiling"))
    overall_raw = _strict_json.members(found["raters"], raters)
    overall = {name: _read_results(overall_raw[name], z) for name in raters}
    fields = {}
    for field_id, raw in _strict_json.mapping(found["by_field"]).items():
        if not valid_field_id(field_id):
            _strict_json.invalid()
        per_rater = _strict_json.members(raw, raters)
        fields[field_id] = {name: _read_results(per_rater[name], z) for name in raters}
    for name in raters:
        for metric in GOLD_METRICS:
            total = sum(fields[field_id][name][metric].total_count for field_id in fields)
            hits = sum(fields[field_id][name][metric].success_count for field_id in fields)
            result = overall[name][metric]
            if (result.success_count, result.total_count) != (hits, total):
                _strict_json.invalid()
    return GoldAgreement(overall, fields)
