"""The shared report: a report's shape with suppressed numbers replaced by ``null``.

A :class:`SharedReport` is what may leave the protected environment once
:func:`chartscore.disclosure.share` has applied the cell-size rule. It keeps
the report's canonical JSON shape; every suppressed count, ``success_count``,
``total_count`` or kappa ``pairs`` is ``null``, a metric with a suppressed part
has ``interval: null``, a withheld kappa has ``value: null, interval: null``,
and a top-level ``disclosure`` object records the rule, the unit, how many
numbers are suppressed, and every field's type (schema knowledge the audit
needs). Every published number equals the full report's number exactly.

Beside a suppressed number ``X`` stands ``X_range``: the exact range ``[lo,
hi]`` an outsider can prove from the published numbers (``hi`` null when
unbounded), and a metric with a suppressed part carries a ``rate_bound``
computed from those ranges alone (docs/disclosure.md, "Provable bounds"). The
audit checks that every published range is the attacker's, no narrower and no
wider.

:meth:`SharedReport.from_json` reads one back strictly, so that the audit (and
anyone outside) can rerun the attack on exactly what was published.

Value-free: field ids, closed names and numbers only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Final, Protocol

import attrs

from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents._shell import (
    COUNT_SUMS,
    STRATA_KEYS,
    TOP_KEYS,
    check_slices,
    check_strata,
    check_sums,
    check_trials,
    read_shell,
    read_strata,
    shell_members,
)
from chartscore.documents._strict_json import require_plain
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.display import Displayed
from chartscore.documents.plugin_layout import (
    PluginStamp,
    check_plugin_metrics,
    is_plugin_metric,
    stamps_from_dict,
    stamps_to_dict,
)
from chartscore.documents.report import (
    WeightedEstimate,
    WeightedMetric,
    is_fraction_text,
    read_design_effect,
    trials_of,
)
from chartscore.documents.shared_disclosure import (
    LABEL_RATES,
    OPTIONAL_FAMILIES,
    STRATUM_RATES,
    SURVIVAL_FAMILIES,
    ComplementCost,
    Disclosure,
    Survival,
    check_min_cell,
    read_disclosure,
)
from chartscore.documents.shared_figures import (
    MAGNITUDE,
    UNCERTAINTY,
    FieldFigures,
    SharedMagnitude,
    SharedUncertainty,
    figure_counts,
    read_magnitude,
    read_uncertainty,
    shared_magnitude,
    shared_uncertainty,
)
from chartscore.documents.shared_labels import (
    COEFFICIENTS,
    LABELLED_TYPES,
    SCORES,
    SharedCoefficient,
    SharedLabel,
    alpha_metric,
    check_label_sums,
    coefficient_names,
    f1_of,
    label_metric,
    label_numbers,
    label_ranges,
    read_coefficient,
    read_labels,
    read_score,
    shared_coefficient,
    shown_macro,
)
from chartscore.documents.shared_metric import (
    CaseFloor,
    Interval,
    Range,
    SharedMetric,
    beside,
    invalid,
    range_list,
    rate_bound,
    read_count,
    read_interval,
    read_metric,
    read_number,
    read_range,
    rows_per_case,
)
from chartscore.documents.shared_rule import (
    CASE_FLOOR_VERSION,
    IGNORED_COUNT,
    KAPPA_TYPES,
    LABELS_VERSION,
    PAIRS,
    RANGE_SUFFIX,
    READABLE_VERSIONS,
    REQUIRED_TYPE_METRICS_OF,
    SHARED_FORMAT,
    SHARED_FORMAT_VERSION,
    STRATUM,
    STRATUM_FIELD_TYPE,
    SUCCESS,
    TOTAL,
    TYPE_METRICS_OF,
    metric_quantity,
)
from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    LABEL_METRICS,
    OPTIONAL_CORE_METRICS,
    REQUIRED_CORE_METRICS,
    TYPE_METRICS,
)
from chartscore.stats.binomial import Z95
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, clustered_wilson, z_for

__all__ = [
    "LABEL_RATES",
    "OPTIONAL_FAMILIES",
    "STRATUM_RATES",
    "SURVIVAL_FAMILIES",
    "ComplementCost",
    "Disclosure",
    "Key",
    "SharedKappa",
    "SharedReport",
    "SharedSlice",
    "Survival",
    "case_floors",
    "check_min_cell",
    "floor_key",
    "shared_from_report",
    "shown_weighted",
]

Key = tuple[str, str, str]
"""A protected quantity: (slice kind, slice name, quantity name)."""

_WEIGHTED: Final = "overall_weighted"
_TOP_KEYS: Final = (*TOP_KEYS, "disclosure")
_OPTIONAL_KEYS: Final = (
    IGNORED_COUNT,
    IGNORED_COUNT + RANGE_SUFFIX,
    "plugins",
    *STRATA_KEYS,
    _WEIGHTED,
)
_KAPPA_KEYS: Final = frozenset({"value", "interval", "pairs"})


@attrs.frozen
class SharedKappa:
    """A field's kappa: value and interval are ``None`` when undefined or withheld."""

    value: float | None
    interval: Interval | None
    pairs: int | None
    pairs_range: Range | None = None

    def to_dict(self) -> dict[str, object]:
        """``{"value", "interval", "pairs"}`` (and ``pairs_range`` beside suppressed pairs)."""
        out: dict[str, object] = {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "pairs": self.pairs,
        }
        if self.pairs_range is not None:
            out["pairs" + RANGE_SUFFIX] = range_list(self.pairs_range)
        return out


@attrs.frozen
class SharedSlice:
    """Counts, metrics and kappa of one slice, with ``None`` for suppressed numbers.

    Attributes:
        counts: The six counts by name; the overall slice also holds the
            report's top-level ``ignored_prediction_count`` when it has one (a
            number of its own in the model, written back at the top level).
        metrics: Every binomial metric of the slice, by name.
        kappa: The kappa of a categorical, boolean or ordinal field slice.
        count_ranges: The proven range of suppressed counts, by count name.
        magnitude: A number or date field slice's error magnitude, under its
            rules (docs/disclosure.md, "Validation figures"); None otherwise.
        uncertainty: A field slice's declared-uncertainty figures, likewise.
        labels: A labelled field slice's declared labels and their metrics.
        scores: Its ``macro_f1`` (with labels): None where withheld or undefined.
        coefficients: A field slice's AC1 or AC2 and alpha (or interval alpha).
    """

    counts: Mapping[str, int | None]
    metrics: Mapping[str, SharedMetric]
    kappa: SharedKappa | None = None
    count_ranges: Mapping[str, Range] = attrs.field(factory=dict)
    magnitude: SharedMagnitude | None = None
    uncertainty: SharedUncertainty | None = None
    labels: Mapping[str, SharedLabel] | None = None
    scores: Mapping[str, float | None] = attrs.field(factory=dict)
    coefficients: Mapping[str, SharedCoefficient] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, object]:
        """The slice as JSON-ready data."""
        out: dict[str, object] = dict(self.counts)
        for name, proven in self.count_ranges.items():
            out[name + RANGE_SUFFIX] = range_list(proven)
        for name, metric in self.metrics.items():
            out[name] = metric.to_dict()
        if self.kappa is not None:
            out["kappa"] = self.kappa.to_dict()
        for name, coefficient in self.coefficients.items():
            out[name] = coefficient.to_dict()
        if self.magnitude is not None:
            out[MAGNITUDE] = self.magnitude.to_dict()
        if self.uncertainty is not None:
            out[UNCERTAINTY] = self.uncertainty.to_dict()
        out.update(self.scores)
        if self.labels is not None:
            out["labels"] = {name: label.to_dict() for name, label in self.labels.items()}
        return out

    def numbers(self) -> Iterator[tuple[str, int | None]]:
        """Every protected number the slice publishes (or hides), as (quantity, value).

        Counts, each metric's ``success_count`` and ``total_count``, kappa
        ``pairs``, the figures' counts and each label's counts; not failures
        (derived) nor intervals and kappa values.
        """
        yield from self.counts.items()
        yield from _metric_numbers(self.metrics)
        if self.kappa is not None:
            yield PAIRS, self.kappa.pairs
        for figures in (self.magnitude, self.uncertainty):
            if figures is not None:
                yield from figures.numbers()
        if self.labels is not None:
            yield from label_numbers(self.labels)

    def quantities(self) -> dict[str, int | None]:
        """The six counts and each metric's two counts, for the checks that slices add up."""
        out = {name: self.counts[name] for name in COUNT_NAMES}
        out.update(_metric_numbers(self.metrics))
        return out

    def ranges(self) -> Iterator[tuple[str, Range]]:
        """Every published range, as (quantity, range), in :meth:`numbers` order."""
        for name in self.counts:
            if name in self.count_ranges:
                yield name, self.count_ranges[name]
        for name, metric in self.metrics.items():
            if metric.success_range is not None:
                yield metric_quantity(name, SUCCESS), metric.success_range
            if metric.total_range is not None:
                yield metric_quantity(name, TOTAL), metric.total_range
        if self.kappa is not None and self.kappa.pairs_range is not None:
            yield PAIRS, self.kappa.pairs_range
        for figures in (self.magnitude, self.uncertainty):
            if figures is not None:
                yield from figures.ranges()
        if self.labels is not None:
            yield from label_ranges(self.labels)

    def with_ranges(self, found: Mapping[str, Range], z: float) -> SharedSlice:
        """This slice with ``found``'s range beside every suppressed number, and rate bounds.

        ``found`` maps quantity names (as :meth:`numbers` names them) to ranges;
        it must hold every suppressed one.
        """
        counts = {name: found[name] for name, value in self.counts.items() if value is None}
        metrics = {name: _ranged(name, metric, found, z) for name, metric in self.metrics.items()}
        labels = None
        if self.labels is not None:
            labels = {
                label: attrs.evolve(
                    result,
                    metrics={
                        name: _ranged(label_metric(label, name), metric, found, z)
                        for name, metric in result.metrics.items()
                    },
                )
                for label, result in self.labels.items()
            }
        kappa = self.kappa
        if kappa is not None and kappa.pairs is None:
            kappa = attrs.evolve(kappa, pairs_range=found[PAIRS])
        return attrs.evolve(
            self,
            metrics=metrics,
            labels=labels,
            kappa=kappa,
            count_ranges=counts,
            magnitude=None if self.magnitude is None else self.magnitude.with_ranges(found),
            uncertainty=None if self.uncertainty is None else self.uncertainty.with_ranges(found),
        )


def _metric_numbers(metrics: Mapping[str, SharedMetric]) -> Iterator[tuple[str, int | None]]:
    # Each metric's success_count and total_count, as (quantity, value).
    for name, metric in metrics.items():
        yield metric_quantity(name, SUCCESS), metric.success_count
        yield metric_quantity(name, TOTAL), metric.total_count


def _ranged(name: str, metric: SharedMetric, found: Mapping[str, Range], z: float) -> SharedMetric:
    # A metric with the range of each suppressed part from ``found``, and its rate bound.
    success = None if metric.success_count is not None else found[f"{name}.{SUCCESS}"]
    total = None if metric.total_count is not None else found[f"{name}.{TOTAL}"]
    ranged = attrs.evolve(metric, success_range=success, total_range=total)
    both = ranged.ranges()
    if both is not None and (success is not None or total is not None):
        bound = rate_bound(*both, pooled=metric.pooled, z=z)
        ranged = attrs.evolve(ranged, rate_bound=bound)
    return ranged


class _Part(Protocol):
    def numbers(self) -> Iterable[tuple[str, int | None]]: ...
    def ranges(self) -> Iterable[tuple[str, Range]]: ...


class KeyedNumbers:
    """A shared document's protected numbers and published ranges, keyed through its slices.

    The base of :class:`SharedReport` and the shared comparison: each gives its
    :meth:`slices`, and the audits read both the same way.
    """

    __slots__ = ()

    def slices(self) -> Iterator[tuple[str, str, _Part]]:
        """Every slice as (kind, name, slice)."""
        raise NotImplementedError

    def numbers(self) -> Iterator[tuple[Key, int | None]]:
        """Every protected JSON number, keyed; ``None`` when suppressed."""
        for kind, name, part in self.slices():
            for quantity, value in part.numbers():
                yield (kind, name, quantity), value

    def ranges(self) -> Iterator[tuple[Key, Range]]:
        """Every published range of a suppressed number, keyed as :meth:`numbers`."""
        for kind, name, part in self.slices():
            for quantity, proven in part.ranges():
                yield (kind, name, quantity), proven


@attrs.frozen
class SharedReport(KeyedNumbers, Displayed):
    """A report that passed disclosure control: small cells are ``None``.

    Attributes:
        overall: All fields.
        by_field: One slice per field id.
        by_field_type: One slice per field type present.
        disclosure: The rule, the unit, the suppressed count and the field types.
        scorer_version: The chartscore version that scored the data.
        confidence: The confidence level of every interval.
        plugins: The report's plugin stamps (docs/plugins.md), sorted by name.
        by_stratum: Each declared stratum's pooled slice (``"site=A"``); empty
            (and absent from the JSON) without strata.
        by_stratum_field_type: Each stratum's pooled slice per field type.
        overall_weighted: With a declared sampling design, the overall slice's
            weighted estimates, each shown only where every sampled stratum's
            counts of its metric are (:func:`shown_weighted`); None otherwise.
    """

    overall: SharedSlice
    by_field: Mapping[str, SharedSlice]
    by_field_type: Mapping[str, SharedSlice]
    disclosure: Disclosure
    scorer_version: str = __version__
    confidence: float = DEFAULT_CONFIDENCE
    plugins: tuple[PluginStamp, ...] = ()
    by_stratum: Mapping[str, SharedSlice] = attrs.field(factory=dict)
    by_stratum_field_type: Mapping[str, Mapping[str, SharedSlice]] = attrs.field(factory=dict)
    overall_weighted: WeightedEstimate | None = None
    primary_count: int | None = attrs.field(default=None, eq=False, repr=False)
    """How many suppressed numbers were primary (sensitive themselves), as ``share`` knew it.

    Inside only: never written (it is not a function of the published numbers: it says
    how many hidden numbers are small), so a report read from JSON has None.
    """
    ledger_cost: int | None = attrs.field(default=None, eq=False, repr=False)
    """How many more numbers ``share --releases`` suppressed than it would have without the
    ledger. Inside only, like :attr:`primary_count`: it says how many numbers the single
    release would have shown, which the published numbers do not."""
    format_version: int = attrs.field(default=SHARED_FORMAT_VERSION, eq=False, repr=False)
    """The format version the document was read in (3 before labels, 4 before the case
    floor), which :meth:`to_json` writes back."""
    complement: ComplementCost | None = attrs.field(default=None, eq=False, repr=False)
    """How ``share`` chose the complementary cells and the declared cost (inside only, like
    :attr:`primary_count`: its lower bound depends on which hidden numbers are small)."""
    field_level_kept: bool | None = attrs.field(default=None, eq=False, repr=False)
    """With strata: True when ``share`` chose the stratum slices around the plain report's
    choice (the field level is the plain share's), False when it fell back to one step.
    Inside only, like :attr:`primary_count`; None without strata or when read from JSON."""

    def slices(self) -> Iterator[tuple[str, str, SharedSlice]]:
        """Every slice as (kind, name, slice): overall, fields, field types, then strata.

        A stratum-and-type slice is named ``site=A/date``.
        """
        yield "overall", "", self.overall
        for field_id in sorted(self.by_field):
            yield "field", field_id, self.by_field[field_id]
        for type_name in sorted(self.by_field_type):
            yield "field_type", type_name, self.by_field_type[type_name]
        for stratum in sorted(self.by_stratum):
            yield STRATUM, stratum, self.by_stratum[stratum]
        for stratum in sorted(self.by_stratum_field_type):
            parts = self.by_stratum_field_type[stratum]
            for type_name in sorted(parts):
                yield STRATUM_FIELD_TYPE, f"{stratum}/{type_name}", parts[type_name]

    def survival(self) -> dict[str, Survival]:
        """What survives per family: rates shown, bounded, of all (docs/disclosure.md)."""
        families = list(SURVIVAL_FAMILIES)
        if self.by_stratum:
            families.append(STRATUM_RATES)
        if any(part.labels for part in self.by_field.values()):
            families.append(LABEL_RATES)
        counts = {name: [0, 0, 0] for name in families}
        family = {"field": "field_rates", STRATUM: STRATUM_RATES, STRATUM_FIELD_TYPE: STRATUM_RATES}

        def add(tally: list[int], metrics: Iterable[SharedMetric]) -> None:
            for metric in metrics:
                tally[0] += 1
                tally[1] += metric.success_count is not None and metric.total_count is not None
                tally[2] += metric.rate_bound is not None

        for kind, _, part in self.slices():
            add(counts[family.get(kind, "pooled_rates")], part.metrics.values())
            for label in (part.labels or {}).values():
                add(counts[LABEL_RATES], label.metrics.values())
        return {name: Survival(*values) for name, values in counts.items()}

    def with_ranges(self, found: Mapping[Key, Range]) -> SharedReport:
        """This report with every suppressed number's range from ``found``, and rate bounds.

        Args:
            found: The audit's range of every suppressed number (at least).

        Returns:
            The report as ``share`` writes it: published numbers unchanged.
        """
        z = z_for(self.confidence)

        def ranged(kind: str, name: str, part: SharedSlice) -> SharedSlice:
            local = {key[2]: value for key, value in found.items() if key[:2] == (kind, name)}
            return part.with_ranges(local, z)

        report = attrs.evolve(
            self,
            overall=ranged("overall", "", self.overall),
            by_field={k: ranged("field", k, v) for k, v in self.by_field.items()},
            by_field_type={k: ranged("field_type", k, v) for k, v in self.by_field_type.items()},
            by_stratum={k: ranged(STRATUM, k, v) for k, v in self.by_stratum.items()},
            by_stratum_field_type={
                k: {t: ranged(STRATUM_FIELD_TYPE, f"{k}/{t}", v) for t, v in parts.items()}
                for k, parts in self.by_stratum_field_type.items()
            },
        )
        disclosure = attrs.evolve(report.disclosure, survival=report.survival())
        return attrs.evolve(report, disclosure=disclosure)

    def to_dict(self) -> dict[str, object]:
        """The shared report as JSON-ready data.

        The overall slice's ``ignored_prediction_count`` (present when the
        report had one) is written at the top level, where the report has it.
        """
        out = shell_members(SHARED_FORMAT, self)
        out["disclosure"] = self.disclosure.to_dict()
        overall = out["overall"]
        assert isinstance(overall, dict)
        for name in (IGNORED_COUNT, IGNORED_COUNT + RANGE_SUFFIX):
            if name in overall:
                out[name] = overall.pop(name)
        if self.plugins:
            out["plugins"] = stamps_to_dict(self.plugins)
        if self.overall_weighted is not None:
            out["overall_weighted"] = self.overall_weighted.to_dict()
        if self.by_stratum:
            out["by_stratum"] = {k: v.to_dict() for k, v in self.by_stratum.items()}
            out["by_stratum_field_type"] = {
                k: {t: v.to_dict() for t, v in parts.items()}
                for k, parts in self.by_stratum_field_type.items()
            }
        return out

    def to_json(self) -> str:
        """RFC 8785 canonical JSON: the same bytes for the same report, everywhere."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_json(cls, text: str | bytes) -> SharedReport:
        """Read a shared report back, strictly.

        Args:
            text: The document as exactly a ``str``, or UTF-8 ``bytes``.

        Returns:
            The report; ``to_json()`` gives the canonical bytes again.

        Raises:
            ChartscoreError: ``unknown_report_format`` when ``format`` is not
                ``chartscore.shared_report`` or ``format_version`` is not 3, 4 or 5;
                ``invalid_report`` for anything malformed (not strict JSON,
                unknown or missing keys, counts that are not non-negative
                integers, metrics a field of that type cannot have, a
                ``suppressed_count`` that does not match the nulls, ...). The
                message never quotes the document.
        """
        return cls.from_dict(_strict_json.parse(text))

    @classmethod
    def from_dict(cls, document: object) -> SharedReport:
        """Validate parsed JSON as a shared report (see :meth:`from_json`).

        Raises:
            ChartscoreError: as :meth:`from_json`; ``invalid_report`` also for
                any value that ``json.loads`` would not give (a ``str``
                subclass, a tuple, a Decimal, ...), checked by exact type.
        """
        require_plain(document)
        return cls._read(document)

    @classmethod
    def _read(cls, document: object) -> SharedReport:
        shell = read_shell(document, SHARED_FORMAT, READABLE_VERSIONS, _TOP_KEYS, _OPTIONAL_KEYS)
        members, z = shell.members, shell.z
        disclosure = read_disclosure(members["disclosure"])
        field_types = disclosure.field_types
        floors = shell.format_version >= CASE_FLOOR_VERSION
        by_field_raw = _strict_json.mapping(members["by_field"])
        by_type_raw = _strict_json.mapping(members["by_field_type"])
        if set(by_field_raw) != set(field_types):
            invalid()
        if set(by_type_raw) != set(field_types.values()):
            invalid()
        by_field = {
            field_id: _slice(
                raw,
                _field_metrics(field_types[field_id], raw, shell.plugin_metrics),
                kappa=True,
                z=z,
                measured=field_types[field_id] in ("number", "date"),
                field_type=field_types[field_id],
                current=floors,
            )
            for field_id, raw in sorted(by_field_raw.items())
        }
        for field_id, part in by_field.items():
            has_kappa = field_types[field_id] in KAPPA_TYPES
            if (part.kappa is not None) != has_kappa:
                invalid()
        # An optional core metric (evidence_provided) is in every field slice or in none.
        added = {
            name for name in OPTIONAL_CORE_METRICS if name in next(iter(by_field.values())).metrics
        }
        if any(
            added != set(OPTIONAL_CORE_METRICS) & set(part.metrics) for part in by_field.values()
        ):
            invalid()
        pooled_floors = case_floors(disclosure.min_cell, field_types, by_field) if floors else {}

        def pooled(raw: object, type_name: str, exclude: Collection[str] = ()) -> SharedSlice:
            # A pooled slice: the overall slice's metrics (""), or its type's fields'.
            allowed: Collection[str] = (*REQUIRED_CORE_METRICS, *added)
            if type_name:
                parts = [by_field[f] for f, t in field_types.items() if t == type_name]
                allowed = {name for part in parts for name in part.metrics} - set(exclude)
            floor = pooled_floors.get(type_name)
            return _slice(raw, allowed, kappa=False, z=z, pooled=True, floor=floor)

        by_type = {name: pooled(raw, name) for name, raw in sorted(by_type_raw.items())}
        overall = _with_ignored(pooled(members["overall"], ""), members)
        strata, strata_types = read_strata(
            members,
            lambda raw: pooled(raw, ""),
            lambda name, raw: pooled(raw, name, ("majority_baseline",)),
            by_type,
        )
        weighted = None
        if _WEIGHTED in members:
            if not strata:
                invalid()
            weighted = _read_weighted(members[_WEIGHTED], overall, strata, z, floors=floors)
        report = cls(
            overall=overall,
            by_field=by_field,
            by_field_type=by_type,
            disclosure=disclosure,
            scorer_version=shell.scorer_version,
            confidence=shell.confidence,
            plugins=shell.plugins,
            by_stratum=strata,
            by_stratum_field_type=strata_types,
            overall_weighted=weighted,
            format_version=shell.format_version,
        )
        check_plugin_metrics(
            shell.plugins, [(kind, part.metrics) for kind, _, part in report.slices()]
        )
        if shell.format_version < LABELS_VERSION and any(
            part.labels is not None or part.coefficients for part in by_field.values()
        ):
            invalid()  # labels and coefficients are shared from format 4 on
        hidden = sum(1 for _, value in report.numbers() if value is None)
        if hidden != disclosure.suppressed_count:
            invalid()
        if disclosure.survival is not None and disclosure.survival != report.survival():
            invalid()
        for kind, _, part in report.slices():
            _check_identities(part, kind)
        check_slices(overall, by_field.values(), by_type.values())
        check_strata(overall, by_type, strata, strata_types)
        return report


def _with_ignored(overall: SharedSlice, members: Mapping[str, object]) -> SharedSlice:
    # The top-level ignored_prediction_count, modelled with the overall slice (and the
    # range beside it when it is suppressed).
    if IGNORED_COUNT in members:
        ignored = read_count(members[IGNORED_COUNT])
        overall = attrs.evolve(overall, counts={**overall.counts, IGNORED_COUNT: ignored})
    ignored_range = members.get(IGNORED_COUNT + RANGE_SUFFIX)
    if ignored_range is not None or IGNORED_COUNT + RANGE_SUFFIX in members:
        if overall.counts.get(IGNORED_COUNT, 0) is not None:
            invalid()  # a range stands only beside a suppressed number
        proven = {**overall.count_ranges, IGNORED_COUNT: read_range(ignored_range)}
        overall = attrs.evolve(overall, count_ranges=proven)
    return overall


def shown_weighted(
    weighted: WeightedEstimate, strata: Mapping[str, SharedSlice], z: float
) -> WeightedEstimate:
    """The weighted estimates a shared report may show: each where its inputs are shown.

    A metric's estimate is a function of every sampled stratum's counts of it (and the
    public fractions), its design effect a rounded quadratic aggregate like a clustered
    interval's: shown exactly where all those counts are, else ``null``
    (docs/disclosure.md, "Stratum slices"). Its interval counts each stratum's cases
    by the stratum's case floor, as the shared clustered intervals do.
    """
    shared = set.intersection(*(set(part.metrics) for part in strata.values()))
    metrics: dict[str, WeightedMetric] = {}
    for name, figures in weighted.metrics.items():
        if name not in shared:
            continue  # the metrics share publishes (not the withheld validation figures)
        if not _inputs_shown(name, weighted.fractions, strata) or figures.estimate is None:
            metrics[name] = _WITHHELD  # hidden inputs, or no trials (all null either way)
            continue
        parts = [
            (weighted.fractions[stratum], strata[stratum].metrics[name].success_count or 0,
             strata[stratum].metrics[name].total_count or 0)
            for stratum in sorted(weighted.fractions)
        ]  # fmt: skip
        cases = _stratum_floors(name, weighted.fractions, strata, True)
        metrics[name] = WeightedMetric.of(parts, z, shown=figures.design_effect, cases=cases)
    return WeightedEstimate(dict(weighted.fractions), metrics)


_WITHHELD: Final = WeightedMetric(None, None, None)


def _inputs_shown(
    metric: str, fractions: Mapping[str, object], strata: Mapping[str, SharedSlice]
) -> bool:
    return all(
        strata[name].metrics[metric].success_count is not None
        and strata[name].metrics[metric].total_count is not None
        for name in fractions
    )


def _read_weighted(
    value: object,
    overall: SharedSlice,
    strata: Mapping[str, SharedSlice],
    z: float,
    *,
    floors: bool,
) -> WeightedEstimate:
    # As a report's, but a metric whose inputs are not all shown has only nulls.
    if type(value) is not dict or set(value) != {"fractions", "metrics"}:
        invalid()
    listed, shown = value["fractions"], value["metrics"]
    if type(listed) is not dict or type(shown) is not dict or set(shown) != set(overall.metrics):
        invalid()
    fractions: dict[str, Decimal] = {}
    for name, text in sorted(listed.items()):
        if name not in strata or type(text) is not str or not is_fraction_text(text):
            invalid()
        fractions[name] = Decimal(text)
    keys = {name.partition("=")[0] for name in fractions}
    if len(keys) != 1 or {n for n in strata if n.partition("=")[0] in keys} != set(fractions):
        invalid()
    metrics: dict[str, WeightedMetric] = {}
    for metric in overall.metrics:
        figures = shown[metric]
        if type(figures) is not dict or set(figures) != {"estimate", "design_effect", "interval"}:
            invalid()
        if not _inputs_shown(metric, fractions, strata):
            if any(figure is not None for figure in figures.values()):
                invalid()  # shown beside a hidden input
            metrics[metric] = _WITHHELD
            continue
        parts = [
            (fractions[name], strata[name].metrics[metric].success_count or 0,
             strata[name].metrics[metric].total_count or 0)
            for name in sorted(fractions)
        ]  # fmt: skip
        design = read_design_effect(figures["design_effect"], sum(m for _, _, m in parts))
        found = WeightedMetric.of(
            parts, z, shown=design, cases=_stratum_floors(metric, fractions, strata, floors)
        )
        if found.to_dict() != figures:
            invalid()
        metrics[metric] = found
    return WeightedEstimate(fractions, metrics)


def _stratum_floors(
    metric: str, fractions: Mapping[str, object], strata: Mapping[str, SharedSlice], floors: bool
) -> list[int] | None:
    # Each sampled stratum's case floor for a metric whose inputs are all shown (a stratum
    # with no trials has none); None for a document before the floors.
    if not floors:
        return None
    out = []
    for name in sorted(fractions):
        result = strata[name].metrics[metric]
        out.append(0 if not result.total_count else result.clustered_cases or 0)
    return out


def floor_key(kind: str, name: str) -> str:
    """The key of a pooled slice's :func:`case_floors` entry: its type name, or ``""``."""
    if kind == "field_type":
        return name
    if kind == STRATUM_FIELD_TYPE:
        return name.partition("/")[2]
    return ""


def case_floors(
    min_cell: int, field_types: Mapping[str, str], by_field: Mapping[str, object]
) -> dict[str, CaseFloor]:
    """Each pooled slice's case floor (docs/disclosure.md, "Clustered intervals").

    Keyed ``""`` for the overall slice (and every stratum slice) and by type name
    for a type slice (and every stratum's slice of that type); ``by_field`` holds
    each field's slice, whose metric names say which fields report a metric.
    """

    def names(part: object) -> Collection[str]:
        metrics = part.metrics if isinstance(part, SharedSlice) else part
        assert isinstance(metrics, Mapping)
        return list(metrics)

    out = {"": CaseFloor(min_cell, rows_per_case(names(p) for p in by_field.values()))}
    for type_name in sorted(set(field_types.values())):
        members = [names(by_field[f]) for f, t in field_types.items() if t == type_name]
        out[type_name] = CaseFloor(min_cell, rows_per_case(members))
    return out


def _check_identities(part: SharedSlice, kind: str) -> None:
    # The full report's identities, wherever every number in them is published.
    check_sums(part.counts, COUNT_SUMS)
    check_trials(
        part.counts, ((trials_of(name, kind), m.total_count) for name, m in part.metrics.items())
    )


def _field_metrics(field_type: str, raw: object, plugin_metrics: Collection[str]) -> set[str]:
    # The metrics a field slice of this type must have; optional ones (and the declared
    # plugin metrics) are added if present.
    names = set(REQUIRED_CORE_METRICS) | REQUIRED_TYPE_METRICS_OF[field_type]
    if type(raw) is dict:
        optional = TYPE_METRICS_OF[field_type] | set(plugin_metrics) | set(OPTIONAL_CORE_METRICS)
        names |= optional & set(raw)
    return names


def _kappa(value: object) -> SharedKappa:
    if type(value) is not dict:
        invalid()
    if not set(value) >= _KAPPA_KEYS or not set(value) <= _KAPPA_KEYS | {"pairs" + RANGE_SUFFIX}:
        invalid()
    kappa = None if value["value"] is None else read_number(value["value"], -1.0, 1.0)
    interval = read_interval(value["interval"], -1.0, 1.0)
    if (kappa is None) != (interval is None):
        invalid()
    if kappa is not None and interval is not None and not interval[0] <= kappa <= interval[1]:
        invalid()
    pairs = read_count(value["pairs"])
    return SharedKappa(kappa, interval, pairs, beside(value, "pairs", pairs))


def _slice(
    value: object,
    metric_names: Collection[str],
    *,
    kappa: bool,
    z: float = Z95,
    pooled: bool = False,
    measured: bool = False,
    field_type: str = "",
    floor: CaseFloor | None = None,
    current: bool = True,
) -> SharedSlice:
    # Exactly the six counts, exactly ``metric_names``, and kappa only where the
    # caller allows it; a field slice (``field_type``) may hold the validation figures
    # (an error magnitude only for a number or date field), its labels and coefficients;
    # a slice with pooled label metrics holds their micro F1. ``current`` is False for a
    # document before format 5 (z bias intervals, Hanley-McNeil AUROC intervals).
    if type(value) is not dict:
        invalid()
    keys = set(value)
    count_keys = keys & set(COUNT_NAMES)
    metric_keys = keys & set(metric_names)
    range_keys = keys & {name + RANGE_SUFFIX for name in COUNT_NAMES}
    other = keys - count_keys - metric_keys - range_keys
    if not set(COUNT_NAMES) <= count_keys or metric_keys != set(metric_names):
        invalid()
    figures = {UNCERTAINTY, MAGNITUDE} if measured else {UNCERTAINTY}
    allowed = {"kappa", *figures} if kappa else set()
    coefficients = coefficient_names(field_type, MAGNITUDE in value) if field_type else ()
    allowed |= set(coefficients)
    labelled = field_type in LABELLED_TYPES and "labels" in keys
    if labelled:
        allowed |= {"labels", "macro_f1"}
    if other - allowed or (labelled and "macro_f1" not in keys):
        invalid()
    counts = {name: read_count(value[name]) for name in COUNT_NAMES}
    count_ranges = {
        name: proven
        for name in COUNT_NAMES
        if (proven := beside(value, name, counts[name])) is not None
    }
    order = (*CORE_METRICS, *TYPE_METRICS, *sorted(filter(is_plugin_metric, metric_keys)))
    metrics = {
        name: read_metric(
            value[name], z, pooled=pooled, cases=None if floor is None else floor.of(name)
        )
        for name in order
        if name in metric_keys
    }
    part = SharedSlice(
        counts=counts,
        metrics=metrics,
        kappa=_kappa(value["kappa"]) if "kappa" in value else None,
        count_ranges=count_ranges,
        magnitude=read_magnitude(value[MAGNITUDE], student=current) if MAGNITUDE in value else None,
        uncertainty=read_uncertainty(value[UNCERTAINTY], z, delong=current)
        if UNCERTAINTY in value
        else None,
    )
    if labelled:
        part = _with_labels(part, value, field_type, z)
    present = [name for name in coefficients if name in keys]
    if present:
        if present != list(coefficients):
            invalid()  # all of a field's coefficients, or none (a document before them)
        part = attrs.evolve(
            part, coefficients={name: read_coefficient(name, value[name]) for name in present}
        )
        _check_coefficients(part, field_type)
    return part


def _with_labels(
    part: SharedSlice, value: Mapping[str, object], field_type: str, z: float
) -> SharedSlice:
    # A field slice's labels with their identities, and its macro F1 (the value its
    # published counts give, where they are).
    labels = read_labels(value["labels"], field_type, z)
    scores = {"macro_f1": read_score(value["macro_f1"], shown_macro(labels))}
    check_label_sums(labels, part.counts["answerable_count"])
    return attrs.evolve(part, labels=labels, scores=scores)


def _check_coefficients(part: SharedSlice, field_type: str) -> None:
    # Over kappa's pairs (interval alpha: the error magnitude's), with the type's metric.
    pairs = part.kappa.pairs if part.kappa is not None else None
    if part.magnitude is not None:
        pairs = part.magnitude.pairs
    for coefficient in part.coefficients.values():
        if coefficient.pairs != pairs:
            invalid()
        if coefficient.name == "alpha" and coefficient.metric != alpha_metric(field_type):
            invalid()


def _pair(interval: object) -> Interval:
    assert isinstance(interval, list | tuple) and len(interval) == 2
    return float(interval[0]), float(interval[1])


def _with_shown_labels(
    part: SharedSlice,
    kind: str,
    name: str,
    raw: Mapping[str, object],
    *,
    metric: Callable[[str, str, str, object], SharedMetric],
    figures: Mapping[str, FieldFigures] | None,
    withheld_kappa: Collection[str],
    min_cell: int,
) -> SharedSlice:
    # A slice's labels and F1 figures, and a field's coefficients, under their rules
    # (chartscore.documents.shared_labels): F1 where its counts are shown; AC1/AC2 and
    # alpha where kappa is; interval alpha where the limits are and the spread may show.
    labels = None
    raw_labels = raw.get("labels")
    if isinstance(raw_labels, Mapping):
        labels = {}
        for label, table in raw_labels.items():
            assert isinstance(table, Mapping)
            shown = {m: metric(kind, name, label_metric(label, m), table[m]) for m in LABEL_METRICS}
            labels[label] = SharedLabel(shown, f1_of(shown))
    scores: dict[str, float | None] = {}
    if labels is not None:
        scores["macro_f1"] = shown_macro(labels)
    coefficients: dict[str, SharedCoefficient] = {}
    for coefficient in COEFFICIENTS:
        value = raw.get(coefficient)
        if not isinstance(value, Mapping):
            continue
        if part.kappa is not None:
            withheld = part.kappa.pairs is None or name in withheld_kappa
            pairs = part.kappa.pairs
        else:  # interval alpha: a magnitude of the values (docs/disclosure.md)
            magnitude = part.magnitude
            inside = None if figures is None else figures.get(name)
            spread = None if inside is None else inside.spread
            if magnitude is None:
                continue  # withheld with the error magnitude
            withheld = (
                magnitude.limits_of_agreement is None
                or spread is None
                or spread.sensitive(min_cell)
            )
            pairs = magnitude.pairs
        coefficients[coefficient] = shared_coefficient(coefficient, value, pairs, not withheld)
    return attrs.evolve(part, labels=labels, scores=scores, coefficients=coefficients)


def shared_from_report(
    document: Mapping[str, object],
    field_types: Mapping[str, str],
    min_cell: int,
    hidden: Collection[Key],
    withheld_kappa: Collection[str],
    *,
    figures: Mapping[str, FieldFigures] | None = None,
) -> SharedReport:
    """Build a shared report from a full report's ``to_dict()``, hiding some numbers.

    Args:
        document: ``Report.to_dict()`` of the full report.
        field_types: Every field id's type.
        min_cell: The rule's minimum cell size.
        hidden: Keys of the numbers to replace by ``None`` (counts, success and
            total counts, ``kappa.pairs``).
        withheld_kappa: Field ids whose kappa value and interval are withheld.
        figures: The inside contributions of the validation figures, by field
            id; None to leave the figures out (a field slice's
            ``error_magnitude`` and ``declared_uncertainty`` are then ignored).
            A field missing from it has every figure withheld.

    Returns:
        The shared report; metrics with a hidden part lose their interval, and
        a pooled metric's clustered interval counts the cases its published
        numbers prove (:class:`~chartscore.documents.shared_metric.CaseFloor`).
    """
    hidden_set = set(hidden)
    z = z_for(document.get("confidence", DEFAULT_CONFIDENCE))  # type: ignore[arg-type]
    by_field_raw = document["by_field"]
    assert isinstance(by_field_raw, Mapping)
    floors = case_floors(min_cell, field_types, by_field_raw)

    def build(kind: str, name: str, raw: Mapping[str, object]) -> SharedSlice:
        counts: dict[str, int | None] = {}
        metrics: dict[str, SharedMetric] = {}
        kappa: SharedKappa | None = None
        magnitude: SharedMagnitude | None = None
        uncertainty: SharedUncertainty | None = None
        if figures is not None and kind == "field":
            raw_magnitude, raw_uncertainty = raw.get(MAGNITUDE), raw.get(UNCERTAINTY)
            published: dict[str, int | None] = {
                quantity: None if (kind, name, quantity) in hidden_set else value
                for quantity, value in figure_counts(raw_magnitude, raw_uncertainty).items()
            }
            inside = figures.get(name)
            if isinstance(raw_magnitude, Mapping):
                magnitude = shared_magnitude(raw_magnitude, inside, published, min_cell)
            if isinstance(raw_uncertainty, Mapping):
                uncertainty = shared_uncertainty(raw_uncertainty, inside, published, min_cell, z)
        for key, value in raw.items():
            if key in (MAGNITUDE, UNCERTAINTY, "labels", *SCORES, *COEFFICIENTS):
                continue
            if key in COUNT_NAMES or key == IGNORED_COUNT:
                counts[key] = None if (kind, name, key) in hidden_set else value  # type: ignore[assignment]
            elif key == "kappa":
                assert isinstance(value, Mapping)
                pairs = None if (kind, name, PAIRS) in hidden_set else value["pairs"]
                withheld = pairs is None or name in withheld_kappa
                interval = value["interval"]
                kappa = SharedKappa(
                    None if withheld else value["value"],
                    None if withheld or interval is None else _pair(interval),
                    pairs,
                )
            else:
                metrics[key] = metric(kind, name, key, value)
        ordered: dict[str, int | None] = {
            n: counts[n] for n in (*COUNT_NAMES, IGNORED_COUNT) if n in counts
        }
        part = SharedSlice(
            counts=ordered,
            metrics=metrics,
            kappa=kappa,
            magnitude=magnitude,
            uncertainty=uncertainty,
        )
        return _with_shown_labels(
            part,
            kind,
            name,
            raw,
            metric=metric,
            figures=figures,
            withheld_kappa=withheld_kappa,
            min_cell=min_cell,
        )

    def metric(kind: str, name: str, key: str, value: object) -> SharedMetric:
        assert isinstance(value, Mapping)
        success = None if (kind, name, f"{key}.{SUCCESS}") in hidden_set else value[SUCCESS]
        total = None if (kind, name, f"{key}.{TOTAL}") in hidden_set else value[TOTAL]
        interval = value["interval"]
        shown = success is not None and total is not None and interval is not None
        if kind == "field" or not shown or not total:
            return SharedMetric(
                success, total, _pair(interval) if shown else None, pooled=kind != "field"
            )
        design = value["design_effect"]  # 1 is written as an integer (canonical JSON)
        assert type(design) in (int, float) and success is not None
        design = float(design)
        floor = floors[floor_key(kind, name)].cases(key, total)
        clustered = clustered_wilson(success, total, design, z, cases=floor)
        return SharedMetric(
            success, total, _pair(interval), design, clustered, pooled=True, clustered_cases=floor
        )

    by_type_raw = document["by_field_type"]
    assert isinstance(by_type_raw, Mapping)
    overall_raw = document["overall"]
    assert isinstance(overall_raw, Mapping)
    if IGNORED_COUNT in document:  # top-level in the report; modelled with the overall slice
        overall_raw = {**overall_raw, IGNORED_COUNT: document[IGNORED_COUNT]}
    overall = build("overall", "", overall_raw)
    by_field = {k: build("field", k, by_field_raw[k]) for k in sorted(by_field_raw)}
    by_type = {k: build("field_type", k, by_type_raw[k]) for k in sorted(by_type_raw)}
    strata_raw = document.get("by_stratum", {})
    strata_types_raw = document.get("by_stratum_field_type", {})
    assert isinstance(strata_raw, Mapping) and isinstance(strata_types_raw, Mapping)
    by_stratum = {k: build(STRATUM, k, strata_raw[k]) for k in sorted(strata_raw)}
    by_stratum_type = {
        k: {t: build(STRATUM_FIELD_TYPE, f"{k}/{t}", v) for t, v in sorted(parts.items())}
        for k, parts in sorted(strata_types_raw.items())
    }
    scorer = document["scorer"]
    assert isinstance(scorer, Mapping)
    plugins = stamps_from_dict(document["plugins"]) if "plugins" in document else ()
    draft = SharedReport(
        overall=overall,
        by_field=by_field,
        by_field_type=by_type,
        disclosure=Disclosure(min_cell, 0, {k: field_types[k] for k in sorted(field_types)}),
        scorer_version=str(scorer["version"]),
        confidence=document.get("confidence", DEFAULT_CONFIDENCE),  # type: ignore[arg-type]
        plugins=plugins,
        by_stratum=by_stratum,
        by_stratum_field_type=by_stratum_type,
    )
    suppressed = sum(1 for _, value in draft.numbers() if value is None)
    return attrs.evolve(
        draft, disclosure=attrs.evolve(draft.disclosure, suppressed_count=suppressed)
    )
