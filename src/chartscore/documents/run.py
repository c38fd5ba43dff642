"""The report's ``run`` section: run cost and latency beside accuracy.

Built from a :class:`~chartscore.stats.run_cost.RunCost` (its exact integers turned into
reported units once, so a merged run gives the same bytes as the pooled one) or read back
from a saved document. A report has the section only when some prediction line carried
``usage``; every other report keeps its exact bytes (docs/reports.md, "Run cost").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Final

import attrs

from chartscore._format import CURRENCY_PATTERN, RUN_NAME_PATTERN
from chartscore.documents import _strict_json
from chartscore.documents.canonical_json import MAX_SAFE_INTEGER
from chartscore.stats.run_cost import (
    PERCENTILES,
    QUANTITIES,
    UNITS_PER,
    QuantityTotal,
    RunCost,
    RunHeader,
    latency_bucket,
    per_chart_mean,
)

RUN_KEY: Final = "run"
"""The report member that holds the section."""
QUANTITY_KEYS: Final = ("rows", "charts", "total", "per_chart_mean")
"""Each quantity's members; ``latency_ms`` adds :data:`PERCENTILE_KEYS`."""
PERCENTILE_KEYS: Final = tuple(f"p{percent}" for percent in PERCENTILES)
"""The latency percentiles' members."""
HEADER_KEYS: Final = (
    "model",
    "model_version",
    "currency",
    "input_per_million_tokens",
    "output_per_million_tokens",
)
"""The run header's members, each present only when the header declared it."""
_NAME: Final = re.compile(RUN_NAME_PATTERN).fullmatch
_CURRENCY: Final = re.compile(CURRENCY_PATTERN).fullmatch

Number = int | float


def _number(value: Fraction) -> Number:
    # An exact quantity in reported units: an int when whole and safe, else the nearest double.
    if value.denominator == 1 and value.numerator <= MAX_SAFE_INTEGER:
        return value.numerator
    return float(value)


@attrs.frozen
class QuantityFigures:
    """One quantity's reported figures: rows and charts that gave it, total and mean per chart.

    ``percentiles`` holds latency's p50 and p95 (None without a latency); empty otherwise.
    """

    rows: int
    charts: int
    total: Number
    per_chart_mean: Number | None
    percentiles: tuple[Number | None, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The quantity's members."""
        out: dict[str, object] = {
            "rows": self.rows,
            "charts": self.charts,
            "total": self.total,
            "per_chart_mean": self.per_chart_mean,
        }
        out.update(zip(PERCENTILE_KEYS, self.percentiles, strict=False))
        return out


@attrs.frozen
class RunSection:
    """A report's run cost: totals, per-chart means and latency percentiles (value-free).

    Attributes:
        rows: Prediction lines that carried ``usage``.
        charts: Distinct charts with such a line.
        quantities: :class:`QuantityFigures` by quantity name, in :data:`QUANTITIES` order.
        header: The run header's members (model, version, currency, prices), as declared;
            empty without a header.
    """

    rows: int
    charts: int
    quantities: Mapping[str, QuantityFigures]
    header: Mapping[str, object] = attrs.field(factory=dict)

    @classmethod
    def of(cls, cost: RunCost) -> RunSection:
        """The section of a run's counts: each figure from exact integers, rounded once."""
        quantities = {}
        for name in QUANTITIES:
            total = cost.total(name)
            units = UNITS_PER[name]
            mean = per_chart_mean(total)
            percentiles: tuple[Number | None, ...] = ()
            if name == "latency_ms":
                found = (cost.latency_percentile(percent) for percent in PERCENTILES)
                percentiles = tuple(
                    None if ns is None else _number(Fraction(ns, units)) for ns in found
                )
            quantities[name] = QuantityFigures(
                total.rows,
                total.charts,
                _number(Fraction(total.total, units)),
                None if mean is None else _number(mean / units),
                percentiles,
            )
        return cls(cost.rows, cost.charts, quantities, header_figures(cost.header))

    def to_dict(self) -> dict[str, object]:
        """The section as JSON-ready data."""
        out: dict[str, object] = {
            "rows_with_usage": self.rows,
            "charts_with_usage": self.charts,
        }
        for name, figures in self.quantities.items():
            out[name] = figures.to_dict()
        if self.header:
            out["header"] = dict(self.header)
        return out

    @classmethod
    def from_dict(cls, value: object) -> RunSection:
        """Read a saved section strictly; ``from_dict(s.to_dict()) == s``.

        Raises:
            ChartscoreError: ``invalid_report`` for a key outside the vocabulary, a count that
                is not a count, a figure that is not a non-negative number, rows or charts
                that do not fit together (a quantity's rows over the section's, charts over
                rows, a mean without charts), or a header member outside its character set.
        """
        members = _strict_json.members(
            value, ("rows_with_usage", "charts_with_usage", *QUANTITIES), ("header",)
        )
        rows = _strict_json.count(members["rows_with_usage"])
        charts = _strict_json.count(members["charts_with_usage"])
        if not 0 < charts <= rows:
            _strict_json.invalid()
        quantities = {
            name: _read_quantity(members[name], name, rows, charts) for name in QUANTITIES
        }
        header: dict[str, object] = {}
        if "header" in members:
            header = _read_header(members["header"])
        return cls(rows, charts, quantities, header)


def header_figures(header: RunHeader | None) -> dict[str, object]:
    """A run header's members as a report writes them (absent ones left out)."""
    if header is None:
        return {}
    units = UNITS_PER["cost"]
    prices = (header.input_price, header.output_price)
    figures: tuple[object, ...] = (
        header.model,
        header.model_version,
        header.currency,
        *(None if price is None else _number(Fraction(price, units)) for price in prices),
    )
    return {key: item for key, item in zip(HEADER_KEYS, figures, strict=True) if item is not None}


def _non_negative(value: object) -> Number:
    if type(value) is int:
        if not 0 <= value <= MAX_SAFE_INTEGER:
            _strict_json.invalid()
        return value
    return _strict_json.number(value, 0.0, float("inf"))


def _read_quantity(value: object, name: str, rows: int, charts: int) -> QuantityFigures:
    extra = PERCENTILE_KEYS if name == "latency_ms" else ()
    members = _strict_json.members(value, (*QUANTITY_KEYS, *extra))
    given = _strict_json.count(members["rows"])
    cases = _strict_json.count(members["charts"])
    total = _non_negative(members["total"])
    mean_raw = members["per_chart_mean"]
    mean = None if mean_raw is None else _non_negative(mean_raw)
    if not (given <= rows and cases <= charts and cases <= given and (cases == 0) == (given == 0)):
        _strict_json.invalid()
    if (mean is None) != (cases == 0) or (given == 0 and total != 0):
        _strict_json.invalid()
    found: list[Number | None] = []
    for key in extra:
        raw = members[key]
        found.append(None if raw is None else _non_negative(raw))
    if extra and ((found[0] is None) != (given == 0) or (found[1] is None) != (given == 0)):
        _strict_json.invalid()
    if extra and found[0] is not None and found[1] is not None and found[0] > found[1]:
        _strict_json.invalid()
    return QuantityFigures(given, cases, total, mean, tuple(found))


def _read_header(value: object) -> dict[str, object]:
    members = _strict_json.members(value, (), HEADER_KEYS)
    if not members:
        _strict_json.invalid()
    header: dict[str, object] = {}
    for key in HEADER_KEYS:
        if key not in members:
            continue
        item = members[key]
        header[key] = _header_text(key, item) if key in _TEXT_KEYS else _non_negative(item)
    if "currency" not in header and any(key.endswith("_tokens") for key in header):
        _strict_json.invalid()
    return header


# The partial's member (docs/partials.md): the exact integers, which a report cannot rebuild.
# Totals, latency bounds and prices are decimal text: a long run's nanoseconds pass 2**53.
_DECIMAL: Final = re.compile(r"0|[1-9][0-9]{0,39}").fullmatch
PARTIAL_RUN_KEYS: Final = ("rows", "charts", "totals", "latency")
_PARTIAL_HEADER_KEYS: Final = ("model", "model_version", "currency", "input_price", "output_price")


def _read_decimal_text(value: object) -> int:
    if type(value) is not str or _DECIMAL(value) is None:
        _strict_json.invalid()
    return int(value)


def partial_member(cost: RunCost) -> dict[str, object]:
    """A run's exact counts as a partial document holds them (mergeable, value-free)."""
    out: dict[str, object] = {
        "rows": cost.rows,
        "charts": cost.charts,
        "totals": [[total.rows, total.charts, str(total.total)] for total in cost.totals],
        "latency": [[str(bound), count] for bound, count in cost.latency_buckets],
    }
    if cost.header is not None:
        header = attrs.astuple(cost.header)
        out["header"] = {
            key: item if type(item) is str else str(item)
            for key, item in zip(_PARTIAL_HEADER_KEYS, header, strict=True)
            if item is not None
        }
    return out


def read_partial_member(value: object) -> RunCost:
    """Read a partial's run member strictly (:func:`partial_member` gives it back).

    Raises:
        ChartscoreError: ``invalid_report`` (the partial reader names it
            ``invalid_partial``) for a key outside the vocabulary, a number that is not a
            count or canonical decimal text, a latency bound that is not a bucket's or out
            of order, or counts that do not fit together.
    """
    members = _strict_json.members(value, PARTIAL_RUN_KEYS, ("header",))
    rows = _strict_json.count(members["rows"])
    charts = _strict_json.count(members["charts"])
    raw_totals = members["totals"]
    if type(raw_totals) is not list or len(raw_totals) != len(QUANTITIES):
        _strict_json.invalid()
    totals = []
    for entry in raw_totals:
        if type(entry) is not list or len(entry) != 3:
            _strict_json.invalid()
        given, cases = _strict_json.count(entry[0]), _strict_json.count(entry[1])
        total = _read_decimal_text(entry[2])
        if not (given <= rows and cases <= charts and cases <= given):
            _strict_json.invalid()
        if (cases == 0) != (given == 0) or (given == 0 and total):
            _strict_json.invalid()
        totals.append(QuantityTotal(given, cases, total))
    raw_latency = members["latency"]
    if type(raw_latency) is not list:
        _strict_json.invalid()
    buckets = []
    previous = -1
    for entry in raw_latency:
        if type(entry) is not list or len(entry) != 2:
            _strict_json.invalid()
        bound, count = _read_decimal_text(entry[0]), _strict_json.count(entry[1])
        if bound <= previous or count == 0 or latency_bucket(bound) != bound:
            _strict_json.invalid()
        previous = bound
        buckets.append((bound, count))
    latency = totals[QUANTITIES.index("latency_ms")]
    if sum(count for _, count in buckets) != latency.rows or not 0 < charts <= rows:
        _strict_json.invalid()
    header = None
    if "header" in members:
        header = _read_partial_header(members["header"])
    return RunCost(rows, charts, tuple(totals), tuple(buckets), header)


_TEXT_KEYS: Final = frozenset({"model", "model_version", "currency"})


def _header_text(key: str, item: object) -> str:
    # A header's model, version or currency, held to its pattern (invalid_report otherwise).
    pattern = _CURRENCY if key == "currency" else _NAME
    if type(item) is not str or pattern(item) is None:
        _strict_json.invalid()
    assert isinstance(item, str)
    return item


def _read_partial_header(value: object) -> RunHeader:
    members = _strict_json.members(value, (), _PARTIAL_HEADER_KEYS)
    if not members:
        _strict_json.invalid()
    found: list[object] = []
    for key in _PARTIAL_HEADER_KEYS:
        item = members.get(key)
        if item is not None:
            item = _header_text(key, item) if key in _TEXT_KEYS else _read_decimal_text(item)
        found.append(item)
    if found[2] is None and (found[3] is not None or found[4] is not None):
        _strict_json.invalid()
    return RunHeader(*found)  # type: ignore[arg-type]
