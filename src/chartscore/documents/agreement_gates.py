"""What a release gate reads in an agreement document (``chartscore agree``).

The gates file's grammar is the one of :mod:`chartscore.documents.gates`; an agreement
document adds its own metric names (docs/compare.md, "Gates on an agreement document"):

- on a field slice, ``fleiss_kappa``, ``ac1``, ``ac2`` and ``alpha`` (all raters);
  ``pair_agreement`` and ``pair_kappa`` with ``label = "a~b"`` (one pair, as the
  document orders it); ``gold_exact_agreement`` and ``gold_normalized_agreement``
  with ``label = "<rater>"`` (with gold);
- on ``overall``, ``gold_exact_agreement`` and ``gold_normalized_agreement`` of one
  rater, and ``ceiling_best`` and ``ceiling_median`` (the ceiling's raters'
  ``normalized_agreement``).

A field slice's rate is read through the interval recomputed from its counts (Wilson, or
Clopper-Pearson with ``--gate-interval exact``); an ``overall`` rate through Wilson's
interval of its pooled counts (``pooled wilson``: the document publishes no design effect,
so the rows of one chart are taken as independent, and the table says so); a coefficient
through its interval as loaded. The pooled pairs carry no interval (rows of one chart are
correlated), and the document has no pooled all-rater coefficient: a gate naming them is
``gate_metric_missing``, as is any metric, pair or rater the document does not have.
No error names a rater or a pair: they are the caller's labels.

Value-free: imports only ``agreement``, ``errors`` and ``stats``.
"""

from __future__ import annotations

from typing import Final

from chartscore.documents._gate_errors import GateLike, missing_metric
from chartscore.documents.agreement import (
    ALPHA_METRIC_OF,
    KAPPA_TYPES,
    RATER_LABEL,
    Agreement,
    Coefficient,
    CountResult,
    FieldAgreement,
)
from chartscore.errors import ChartscoreError, ErrorCode, closest
from chartscore.stats.binomial import wilson_interval
from chartscore.stats.clopper_pearson import clopper_pearson
from chartscore.stats.reliability import too_few_pairs

__all__ = [
    "AGREEMENT_COEFFICIENTS",
    "AGREEMENT_GATE_METRICS",
    "GOLD_GATE_METRICS",
    "PAIR_GATE_METRICS",
    "POOLED_WILSON",
    "TOO_FEW_UNITS",
    "agreement_figure",
    "valid_gate_label",
]

PAIR_GATE_METRICS: Final = ("pair_agreement", "pair_kappa")
"""A pair's figures (field slices; ``label = "a~b"``)."""
GOLD_GATE_METRICS: Final = ("gold_exact_agreement", "gold_normalized_agreement")
"""A rater's agreement with gold (field slices and ``overall``; ``label = "<rater>"``)."""
CEILING_GATE_METRICS: Final = ("ceiling_best", "ceiling_median")
"""The ceiling's best and median rater's ``normalized_agreement`` (``overall``)."""
ALL_RATER_GATE_METRICS: Final = ("fleiss_kappa", "ac1", "ac2", "alpha")
"""The all-rater coefficients of a field slice."""
AGREEMENT_GATE_METRICS: Final = (
    *ALL_RATER_GATE_METRICS,
    *PAIR_GATE_METRICS,
    *GOLD_GATE_METRICS,
    *CEILING_GATE_METRICS,
)
"""Every metric a gate may name on an agreement document."""
AGREEMENT_COEFFICIENTS: Final = ("fleiss_kappa", "pair_kappa")
"""The chance-corrected figures of this vocabulary not already a report's (thresholds from -1)."""
COEFFICIENT_KIND: Final = {
    "fleiss_kappa": "gwet",  # Gwet's linearized variance (docs/metrics.md)
    "ac1": "gwet",
    "ac2": "gwet",
    "alpha": "jackknife",
    "pair_kappa": "kappa",  # Fleiss-Cohen-Everitt, as a report's kappa
}
"""The interval each coefficient carries (a name of ``gates.INTERVAL_KINDS``)."""
POOLED_WILSON: Final = "pooled wilson"
"""The interval of an ``overall`` rate: Wilson's over the rows of every field, taken as
independent (the document publishes no design effect; a rater's own report has one)."""
TOO_FEW_UNITS: Final = "too few pairs"
"""The reason a coefficient from fewer than 100 units cannot pass (``gates.TOO_FEW_PAIRS``)."""


_KAPPA_TYPE_NAMES: Final = frozenset(kind.value for kind in KAPPA_TYPES)

Figure = tuple[tuple[float, float] | None, str]
"""An interval (None: no figure, the gate fails) and the name of the interval read."""


def valid_gate_label(metric: str, label: object) -> bool:
    """Whether ``label`` has the shape ``metric`` takes: ``a~b`` for a pair, a rater's label."""
    if type(label) is not str:
        return False
    if metric in PAIR_GATE_METRICS:
        first, tilde, second = label.partition("~")
        return bool(tilde) and all(RATER_LABEL.fullmatch(name) for name in (first, second))
    return metric in GOLD_GATE_METRICS and RATER_LABEL.fullmatch(label) is not None


def agreement_figure(document: Agreement, gate: GateLike, *, z: float, exact: bool) -> Figure:
    """The interval ``gate`` reads in ``document``, and its name.

    Args:
        document: The agreement document.
        gate: The gate (its slice, metric and label).
        z: The normal quantile of the intervals recomputed from counts.
        exact: Clopper-Pearson's interval for a field slice's rates (``--gate-interval
            exact``), else Wilson's; ``overall`` rates read Wilson's either way.

    Returns:
        ``(interval, kind)``; the interval is None when the figure is null (undefined, no
        trials) and the kind is :data:`TOO_FEW_UNITS` for a coefficient from fewer than
        100 units.

    Raises:
        ChartscoreError: ``gate_slice_missing`` for a slice the document does not have
            (a field it does not hold, a type or stratum slice), ``gate_metric_missing``
            for a metric, pair or rater it does not have (with a metric of the slice's
            vocabulary as a suggestion, never a rater's label).
    """
    kind, _, name = gate.slice.partition(":")
    if kind == "overall":
        return _overall(document, gate, z)
    part = document.by_field.get(name) if kind == "field" else None
    if part is None:
        guess = closest(name, document.by_field) if kind == "field" else None
        raise ChartscoreError(
            ErrorCode.GATE_SLICE_MISSING,
            gate=gate.number,
            line=gate.line,
            field_id=name if kind == "field" else None,
            suggestion=None if guess is None else f"field:{guess}",
        )
    return _field(document, name, gate, z=z, exact=exact)


def _overall(document: Agreement, gate: GateLike, z: float) -> Figure:
    # Gold and the ceiling only (the pooled pairs have no interval); Wilson's interval of the
    # pooled counts whatever --gate-interval says, as a report's pooled slice reads its one.
    present = (*GOLD_GATE_METRICS, *CEILING_GATE_METRICS) if document.gold else ()
    if document.gold is None or gate.metric not in present:
        raise missing_metric(gate, present)
    if gate.metric in CEILING_GATE_METRICS:
        found = document.gold.ceiling()["best" if gate.metric == "ceiling_best" else "median"]
        if not isinstance(found, dict):  # no rater has a trial
            return None, POOLED_WILSON
        successes, trials = found["success_count"], found["total_count"]
    else:
        results = document.gold.overall.get(gate.label)
        if results is None:
            raise missing_metric(gate)
        result = results[gate.metric.removeprefix("gold_")]
        successes, trials = result.success_count, result.total_count
    # Pooled rows of one chart are correlated: read as the document states it, with a note.
    assert type(successes) is int and type(trials) is int
    return wilson_interval(successes, trials, z), POOLED_WILSON


def _field_metrics(part: FieldAgreement, gold: bool) -> list[str]:
    # The field's own vocabulary: what its type has (docs/formats.md, "Agreement").
    present = ["pair_agreement"]
    if part.field_type in _KAPPA_TYPE_NAMES:
        present += ["pair_kappa", "fleiss_kappa", "ac2" if part.field_type == "ordinal" else "ac1"]
    if part.field_type in ALPHA_METRIC_OF:
        present.append("alpha")
    return [*present, *(GOLD_GATE_METRICS if gold else ())]


def _field(document: Agreement, field_id: str, gate: GateLike, *, z: float, exact: bool) -> Figure:
    part = document.by_field[field_id]
    present = _field_metrics(part, document.gold is not None)
    if gate.metric not in present:
        raise missing_metric(gate, present)
    if gate.metric in PAIR_GATE_METRICS:
        pair = next((p for p in part.pairs if "~".join(p.raters) == gate.label), None)
        if pair is None:
            raise missing_metric(gate)
        if gate.metric == "pair_agreement":
            return _counts(pair.agreement, z, exact)
        return _coefficient(pair.kappa, gate.metric)
    if gate.metric in GOLD_GATE_METRICS:
        assert document.gold is not None
        results = document.gold.by_field.get(field_id, {}).get(gate.label)
        if results is None:
            raise missing_metric(gate)
        return _counts(results[gate.metric.removeprefix("gold_")], z, exact)
    found = {"fleiss_kappa": part.fleiss_kappa, "alpha": part.alpha}.get(gate.metric, part.gwet)
    return _coefficient(found, gate.metric)


def _coefficient(coefficient: Coefficient | None, metric: str) -> Figure:
    # Undefined (null): no figure. From fewer than 100 units: not reliable, cannot pass.
    kind = COEFFICIENT_KIND[metric]
    if coefficient is None or coefficient.value is None:
        return None, kind
    if too_few_pairs(coefficient.units):
        return None, TOO_FEW_UNITS
    return coefficient.interval, kind


def _counts(result: CountResult, z: float, exact: bool) -> Figure:
    # A field slice's rate, recomputed from its counts (never the interval as loaded).
    successes, trials = result.success_count, result.total_count
    if exact:
        return clopper_pearson(successes, trials, z), "clopper-pearson"
    return wilson_interval(successes, trials, z), "wilson"
