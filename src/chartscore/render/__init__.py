"""Reports for people: a terminal table, Markdown, CSV and a self-contained HTML page.

Every renderer takes only a value-free document, so rendering may happen
outside the protected environment. The pipeline is report -> :class:`View`
(an adapter decides what is shown and in which order) -> text (a renderer lays
it out). :func:`render` is the one call the command line needs.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from typing import Final

import attrs

from chartscore.documents.agreement import Agreement
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import Gate, GateResults
from chartscore.documents.report import Report
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, word_option
from chartscore.render.axis import AXES, zoomed_plots
from chartscore.render.choice_labels import ChoiceLabels, checked_labels, labelled_view
from chartscore.render.csv import render_csv
from chartscore.render.document_view import document_view
from chartscore.render.html import render_html
from chartscore.render.markdown import render_markdown
from chartscore.render.report_view import SORTS, report_view
from chartscore.render.summary import render_summary
from chartscore.render.table import render_table
from chartscore.render.view import View

RENDERERS: Final[dict[str, Callable[[View], str]]] = {
    "table": render_table,
    "markdown": render_markdown,
    "csv": render_csv,
    "html": render_html,
    "summary": render_summary,
}
FORMATS: Final = tuple(RENDERERS)
"""The output formats, in the order ``--format`` lists them."""

__all__ = [
    "AXES",
    "FORMATS",
    "SORTS",
    "View",
    "is_iso_date",
    "render",
    "render_view",
    "report_view",
]


_ISO_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_iso_date(value: object) -> bool:
    """Whether ``value`` is a calendar date written ``YYYY-MM-DD``, by exact type."""
    if type(value) is not str or _ISO_DATE.fullmatch(value) is None:
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def render_view(view: View, fmt: str) -> str:
    """Lay out a :class:`View` in one format.

    Raises:
        ChartscoreError: ``usage`` for a format not in :data:`FORMATS`, or a
            ``view`` that is not exactly a :class:`View`.
    """
    if type(view) is not View or type(fmt) is not str or fmt not in RENDERERS:
        raise ChartscoreError(ErrorCode.USAGE)
    return RENDERERS[fmt](view)


def render(
    report: Report | SharedReport | Comparison | SharedComparison | Agreement,
    fmt: str,
    *,
    sort: str = "name",
    gates: Sequence[Gate] = (),
    verdicts: GateResults | None = None,
    rater_labels: bool = False,
    date: str | None = None,
    axis: str = "zoom",
    choice_labels: ChoiceLabels | None = None,
) -> str:
    """Render a report for people (or, as CSV, for spreadsheets).

    Args:
        report: A value-free :class:`~chartscore.documents.report.Report` (from
            ``chartscore.score`` or ``Report.from_json``),
            :class:`~chartscore.documents.shared_report.SharedReport` (from
            ``chartscore.workflows.share.share`` or ``SharedReport.from_json``: a
            suppressed number reads ``suppressed``, a metric with a suppressed
            part has no rate or interval, and the disclosure rule is stated) or
            :class:`~chartscore.documents.comparison.Comparison` (its paired differences
            are drawn around 0, on a ±5 to ±50 point axis) or
            :class:`~chartscore.documents.shared_comparison.SharedComparison`
            (the same, with suppressed numbers and the bounds their ranges prove) or
            :class:`~chartscore.documents.agreement.Agreement` (``chartscore agree``: the
            raters' pairs, their all-rater coefficients and each rater against gold;
            ``sort`` and ``gates`` do not apply to it).
        fmt: ``"table"`` (terminal, at most 100 columns), ``"markdown"``,
            ``"csv"``, ``"html"`` (one self-contained file) or ``"summary"``
            (a line per field: answerable rows, normalized agreement, the worst
            safety rate and kappa; then all fields; docs/reports.md).
        sort: Row order of a report: ``"name"`` (field ids in code point
            order) or ``"rate"`` (normalized agreement rate, lowest first;
            no trials or a suppressed rate last; for a comparison, the
            candidate's rate).
        gates: On a comparison, release gates whose difference rules are
            drawn as margins on the difference plots (HTML); other rules, and
            gates on a report, draw nothing. The gates are not checked here.
        verdicts: Gates already checked on this document
            (:func:`chartscore.documents.gates.evaluate`): the summary lists their
            verdicts after its table; a comparison's (or shared comparison's) header
            gives them in every format.
        rater_labels: An agreement's raters named by their labels. By default they are
            named by position (``rater-1``, ...): a label is a file's stem, which may name
            a person, and a rendering is what gets passed around (docs/raters.md).
        date: The date a comparison's header shows, ``YYYY-MM-DD`` (None: no date, so
            the same document renders to the same bytes on any day).
        axis: The HTML forest plots' rate and kappa axes: ``"zoom"`` (default: the
            narrowest round range that holds the panel's intervals, said under the axis)
            or ``"full"`` (0-100%, kappa -1 to 1).
        choice_labels: ``{field_id: {code: label}}`` from the schema
            (:meth:`chartscore.Schema.choice_labels`): a report's per-label rows show
            each declared label by its name (the CSV keeps the codes).

    Returns:
        The complete text, ending with a line end (CSV: RFC 4180 CRLF line ends).

    Raises:
        ChartscoreError: ``usage`` for an unknown ``fmt`` or ``sort``, or a
            ``report`` that is not one of the three documents. Each argument
            is checked by its exact type, so a caller's object (a ``str``
            subclass, say) never runs code here.
    """
    fmt = word_option(fmt, FORMATS)
    sort = word_option(sort, SORTS)
    axis = word_option(axis, AXES)
    if (type(gates) is not tuple and type(gates) is not list) or any(
        type(gate) is not Gate for gate in gates
    ):
        raise ChartscoreError(ErrorCode.USAGE)
    if verdicts is not None and type(verdicts) is not GateResults:
        raise ChartscoreError(ErrorCode.USAGE)
    if type(rater_labels) is not bool:
        raise ChartscoreError(ErrorCode.USAGE)
    if date is not None and not is_iso_date(date):
        raise ChartscoreError(ErrorCode.USAGE)
    view = document_view(
        report, sort=sort, gates=gates, rater_labels=rater_labels, verdicts=verdicts, date=date
    )
    if axis == "zoom":
        view = attrs.evolve(view, plots=zoomed_plots(view.plots))
    if choice_labels is not None and fmt != "csv":
        view = labelled_view(view, checked_labels(choice_labels))
    if fmt == "summary":
        return render_summary(view, verdicts)
    return RENDERERS[fmt](view)
