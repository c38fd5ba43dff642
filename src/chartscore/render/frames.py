"""Data frames: a document's CSV rows as a pandas ``DataFrame``, for notebooks.

One row per estimate of the document's :class:`~chartscore.render.view.View`, in the CSV's
order: one tidy row per slice, metric and label (docs/reports.md, "Notebooks"). The
columns are the CSV's (:data:`chartscore.render.csv.COLUMNS`), then the shared
documents' ``suppressed`` flag and the ranges their disclosure rule published:

========================  =========  ==================================================
column                    dtype      holds
========================  =========  ==================================================
``slice``                 string     ``field``, ``field_type``, ``overall`` or ``stratum``
``name``                  string     the field id, type name or stratum (``""``: overall)
``metric``                string     the metric's report name (``exact_agreement``, ...)
``label``                 string     a per-label metric's declared label, else ``""``
``success_count``         Int64      successes (errors, for an error metric)
``total_count``           Int64      trials (kappa: pairs)
``rate``                  float64    the rate (kappa, difference, F1, ...)
``lower``, ``upper``      float64    the plain interval (Wilson, Newcombe, kappa's)
``design_effect``         float64    a pooled slice's design effect
``clustered_lower``,      float64    a pooled slice's case-clustered interval
``clustered_upper``
``suppressed``            bool       a disclosure rule withheld part of the row
``success_count_low``,    Int64      the published range of a withheld success count
``success_count_high``               (``high`` missing: no upper end)
``total_count_low``,      Int64      the same for a withheld total count
``total_count_high``
``range_low``,            float64    what the published ranges prove about a withheld
``range_high``                       rate or difference (docs/disclosure.md)
``range_kind``            string     how: ``wilson``, ``rate_range``, ``newcombe`` or
                                     ``difference_range`` (``""`` where no range is)
========================  =========  ==================================================

A number the CSV leaves empty is missing (``pd.NA`` in an ``Int64`` column, ``NaN`` in a
``float64`` one): no trials, not applicable, or withheld. A withheld number is never 0, and
the row's ``suppressed`` says which it is. Names are the document's own text: the CSV's
quote before a cell that a spreadsheet would run as a formula is not added here.

pandas is the optional extra ``chartscore[pandas]``, imported only when a frame is made.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, Final

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint
from chartscore.render.csv import COLUMNS, SUPPRESSED_COLUMN, withheld
from chartscore.render.document_view import Viewable, document_view
from chartscore.render.view import Estimate, View

__all__ = ["DTYPES", "FRAME_COLUMNS", "frame", "to_pandas"]

RANGE_COLUMNS: Final = (
    "success_count_low",
    "success_count_high",
    "total_count_low",
    "total_count_high",
    "range_low",
    "range_high",
    "range_kind",
)
FRAME_COLUMNS: Final = (*COLUMNS, SUPPRESSED_COLUMN, *RANGE_COLUMNS)
"""The frame's columns, in order: the CSV's, then ``suppressed`` and the ranges."""

_TEXT: Final = ("slice", "name", "metric", "label", "range_kind")
_COUNTS: Final = (
    "success_count",
    "total_count",
    "success_count_low",
    "success_count_high",
    "total_count_low",
    "total_count_high",
)
DTYPES: Final[dict[str, str]] = {
    column: "string" if column in _TEXT else "Int64" if column in _COUNTS else "float64"
    for column in FRAME_COLUMNS
} | {SUPPRESSED_COLUMN: "bool"}
"""Each column's pandas dtype: ``string`` text, ``Int64`` (nullable) counts, ``float64``
numbers, and a ``bool`` ``suppressed``."""


def _pandas() -> Any:
    # pandas is the extra chartscore[pandas]: a missing one is a closed error that says how
    # to install it, raised outside any handler so that no ImportError is chained.
    missing = False
    try:
        missing = importlib.util.find_spec("pandas") is None
    except (ImportError, ValueError):  # a broken or blocked entry in sys.modules
        missing = True
    if not missing:
        try:
            return importlib.import_module("pandas")
        except ImportError:
            missing = True
    raise ChartscoreError(ErrorCode.MISSING_DEPENDENCY, hint=ErrorHint.PANDAS_MISSING)


def _range(found: tuple[int, int | None] | None) -> tuple[int | None, int | None]:
    return (None, None) if found is None else found


def _record(estimate: Estimate) -> tuple[object, ...]:
    bound_low, bound_high = (None, None) if estimate.bound is None else estimate.bound
    return (
        estimate.slice,
        estimate.name,
        estimate.metric,
        estimate.label,
        estimate.success_count,
        estimate.total_count,
        estimate.value,
        estimate.lower,
        estimate.upper,
        estimate.design_effect,
        estimate.clustered_lower,
        estimate.clustered_upper,
        bool(withheld(estimate)),
        *_range(estimate.success_range),
        *_range(estimate.total_range),
        bound_low,
        bound_high,
        estimate.bound_kind if estimate.bound is not None else "",
    )


def frame(view: View) -> Any:
    """Every estimate of ``view`` as a ``pandas.DataFrame`` (columns :data:`FRAME_COLUMNS`).

    Returns:
        A new frame with a default ``RangeIndex``, typed as :data:`DTYPES` says.

    Raises:
        ChartscoreError: ``missing_dependency`` without pandas
            (``pip install 'chartscore[pandas]'``).
    """
    pd = _pandas()
    records = [_record(estimate) for estimate in view.estimates]
    data = {}
    for index, name in enumerate(FRAME_COLUMNS):
        # A missing number is NaN in a float64 column, pd.NA in the nullable ones.
        missing = float("nan") if DTYPES[name] == "float64" else pd.NA
        cells = [missing if record[index] is None else record[index] for record in records]
        data[name] = pd.array(cells, dtype=DTYPES[name])
    return pd.DataFrame(data, columns=list(FRAME_COLUMNS))


def to_pandas(document: Viewable) -> Any:
    """A document's estimates as a tidy ``pandas.DataFrame``: its CSV rows, typed.

    One row per slice, metric and label, in the order ``chartscore render --format csv``
    writes them, with counts, rate, interval, clustered interval and design effect; in a
    shared document a withheld number is missing, with its published range beside it
    (this module's docstring lists the columns and their dtypes). The same frame is
    ``document.to_pandas()``.

    Args:
        document: A :class:`~chartscore.documents.report.Report`,
            :class:`~chartscore.documents.shared_report.SharedReport`,
            :class:`~chartscore.documents.comparison.Comparison`,
            :class:`~chartscore.documents.shared_comparison.SharedComparison` or
            :class:`~chartscore.documents.agreement.Agreement`.

    Returns:
        A ``pandas.DataFrame`` (typed ``Any``: pandas is optional).

    Raises:
        ChartscoreError: ``missing_dependency`` without pandas (the extra
            ``chartscore[pandas]``), checked before the document; ``usage`` for anything
            that is not exactly one of the five documents.

    Example:
        >>> frame = chartscore.to_pandas(report)  # doctest: +SKIP
        >>> frame[frame.metric == "exact_agreement"][["name", "rate", "lower", "upper"]]
    """
    _pandas()
    return frame(document_view(document))
