"""The CSV renderer: one row per slice and metric, for spreadsheets and pandas.

Columns: ``slice,name,metric,success_count,total_count,rate,lower,upper``.
``slice`` is ``overall``, ``field`` or ``field_type``; ``name`` the field id
or type name (empty for overall). Numbers are written as the report's JSON
writes them (the shortest digits that read back as the same double), so every
cell equals the report's number exactly. Kappa has its own rows
(``metric`` = ``kappa``): the kappa in ``rate``, its interval in
``lower``/``upper``, the pairs in ``total_count`` and an empty
``success_count``. An empty ``rate``, ``lower`` or ``upper`` means no trials
(or an undefined kappa); a withheld count reads ``suppressed``, never 0 (a
kappa's ``success_count`` stays empty: it has none).
RFC 4180: comma-separated, CRLF line ends, quotes only where needed.
"""

from __future__ import annotations

import csv
import io
from typing import Final

from chartscore.canonical_json import format_number
from chartscore.render._numbers import SUPPRESSED
from chartscore.render.view import Estimate, Kind, View

COLUMNS: Final = (
    "slice",
    "name",
    "metric",
    "success_count",
    "total_count",
    "rate",
    "lower",
    "upper",
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _text(text: str) -> str:
    # A spreadsheet runs a cell that starts like a formula: neutralize it (OWASP).
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _count(count: int | None, estimate: Estimate, *, applies: bool = True) -> str:
    if count is None:
        return SUPPRESSED if estimate.suppressed and applies else ""
    return str(count)


def _number(number: float | None) -> str:
    return "" if number is None else format_number(number)


def row(estimate: Estimate) -> list[str]:
    """The CSV cells of one estimate, in :data:`COLUMNS` order."""
    return [
        _text(estimate.slice),
        _text(estimate.name),
        _text(estimate.metric),
        _count(estimate.success_count, estimate, applies=estimate.kind is Kind.RATE),
        _count(estimate.total_count, estimate),
        _number(estimate.value),
        _number(estimate.lower),
        _number(estimate.upper),
    ]


def render_csv(view: View) -> str:
    """Every estimate of the view as CSV text with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    writer.writerows(row(estimate) for estimate in view.estimates)
    return out.getvalue()
