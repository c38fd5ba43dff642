"""The CSV renderer: one row per slice and metric, for spreadsheets and pandas.

Columns: ``slice,name,metric,label,success_count,total_count,rate,lower,upper,
design_effect,clustered_lower,clustered_upper``. ``slice`` is ``overall``,
``field``, ``field_type`` or ``stratum``; ``name`` the field id or type name (empty for
overall), or a stratum's ``site=A`` (its slice of one type: ``site=A/type:date``);
``label`` the declared label of a per-label metric (``sensitivity``,
``specificity``, ``ppv``, ``npv``, ``f1``), empty otherwise.
``lower``/``upper`` are the Wilson (or Newcombe, or kappa's) interval; the
last three hold a pooled slice's (overall, type) design effect and
case-clustered interval, and are empty in field rows. Numbers are written as the report's JSON
writes them (the shortest digits that read back as the same double), so every
cell equals the report's number exactly. Kappa has its own rows
(``metric`` = ``kappa``): the kappa in ``rate``, its interval in
``lower``/``upper``, the pairs in ``total_count`` and an empty
``success_count``; so have AC1, AC2 and alpha. F1 (``f1`` per label,
``micro_f1`` and ``macro_f1`` per slice) has its value in ``rate`` and every
other cell empty, and so has the labels' ``pooled_kappa`` (per slice, beside
``micro_f1``). Error magnitudes (``mean_absolute_error``,
``mean_signed_error``, ``limits_of_agreement``: the bias in ``rate`` and the
limits in ``lower``/``upper``; ``chance_level``) have their pairs (or gold
rows) in ``total_count``. Declared uncertainty: ``uncertainty_auroc`` (its rows
in ``total_count``), ``brier_score``, ``without_uncertainty`` (the count in
``total_count``) and ten ``risk_coverage`` rows labelled ``10%`` to ``100%``.
An empty ``rate``, ``lower`` or ``upper`` means no trials (or an undefined
kappa).

A shared report's CSV adds a last column, ``suppressed``: the names of the
row's cells that are withheld, space-separated (``success_count``,
``total_count``, ``rate``, ``lower``, ``upper``, and in pooled rows the three
clustered cells), empty when nothing is. A
withheld cell is empty, never 0, so the count columns stay integers for
pandas; a metric with a withheld count has no rate and no interval either.
Its labels' rows (``sensitivity`` ... ``npv``, ``f1``, by ``label``), the
macro F1 and the coefficients follow the same rules (a withheld F1 names
``rate lower upper``: it has no count); it has no pooled label rows and no
``micro_f1`` or ``pooled_kappa``.
RFC 4180: comma-separated, CRLF line ends, quotes only where needed.
"""

from __future__ import annotations

import csv
import io
from typing import Final

from chartscore.documents.canonical_json import format_number
from chartscore.render.view import Estimate, Kind, View

COLUMNS: Final = (
    "slice",
    "name",
    "metric",
    "label",
    "success_count",
    "total_count",
    "rate",
    "lower",
    "upper",
    "design_effect",
    "clustered_lower",
    "clustered_upper",
)
SUPPRESSED_COLUMN: Final = "suppressed"
"""The last column of a shared report's CSV: the row's withheld cells."""
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
F1_FIGURES: Final = frozenset({"f1", "micro_f1", "macro_f1", "pooled_kappa"})
"""Figures with a value and no count or interval (F1, and the labels' pooled kappa)."""


def _text(text: str) -> str:
    # A spreadsheet runs a cell that starts like a formula: neutralize it (OWASP).
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _count(count: int | None) -> str:
    return "" if count is None else str(count)


def _number(number: float | None) -> str:
    return "" if number is None else format_number(number)


def withheld(estimate: Estimate) -> list[str]:
    """The names of an estimate's CSV cells that a disclosure rule withheld."""
    if not estimate.suppressed:
        return []
    names = []
    if estimate.kind is Kind.RATE and estimate.success_count is None:
        names.append("success_count")
    if estimate.total_count is None and estimate.metric not in F1_FIGURES:
        names.append("total_count")  # an F1 figure has no count: only its value is withheld
    names += ["rate", "lower", "upper"]
    if estimate.slice != "field" and estimate.kind is Kind.RATE:
        names += ["design_effect", "clustered_lower", "clustered_upper"]
    return names


def row(estimate: Estimate) -> list[str]:
    """The CSV cells of one estimate, in :data:`COLUMNS` order."""
    return [
        _text(estimate.slice),
        _text(estimate.name),
        _text(estimate.metric),
        _text(estimate.label),
        _count(estimate.success_count),
        _count(estimate.total_count),
        _number(estimate.value),
        _number(estimate.lower),
        _number(estimate.upper),
        _number(estimate.design_effect),
        _number(estimate.clustered_lower),
        _number(estimate.clustered_upper),
    ]


def render_csv(view: View) -> str:
    """Every estimate of the view as CSV text with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    if view.shared or any(estimate.suppressed for estimate in view.estimates):
        writer.writerow((*COLUMNS, SUPPRESSED_COLUMN))
        writer.writerows([*row(e), " ".join(withheld(e))] for e in view.estimates)
    else:
        writer.writerow(COLUMNS)
        writer.writerows(row(estimate) for estimate in view.estimates)
    return out.getvalue()
