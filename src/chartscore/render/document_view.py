"""Which adapter lays out a document: the one dispatch from a document to its :class:`View`.

:func:`chartscore.render.render`, the data frames (:mod:`chartscore.render.frames`) and the
notebook display (:func:`chartscore.render.html.notebook_html`) all start here, so a
document's CSV rows, its data frame and its rich display come from the same view.
"""

from __future__ import annotations

from collections.abc import Sequence

from chartscore.documents.agreement import Agreement
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import Gate, GateResults
from chartscore.documents.report import Report
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.render.agreement_view import agreement_view
from chartscore.render.comparison_view import comparison_view
from chartscore.render.report_view import report_view
from chartscore.render.shared_comparison_view import shared_comparison_view
from chartscore.render.view import View

__all__ = ["Viewable", "document_view"]

Viewable = Report | SharedReport | Comparison | SharedComparison | Agreement
"""Every value-free document that has a view."""


def document_view(
    document: Viewable,
    *,
    sort: str = "name",
    gates: Sequence[Gate] = (),
    rater_labels: bool = False,
    verdicts: GateResults | None = None,
    date: str | None = None,
) -> View:
    """The :class:`View` of any value-free document, by its exact type.

    Args:
        document: A report, shared report, comparison, shared comparison or agreement.
        sort: ``"name"`` or ``"rate"`` (checked by the caller); an agreement ignores it.
        gates: A comparison's gates, drawn as margins; ignored by the other documents.
        rater_labels: An agreement's raters by their labels, not by position (the default).
        verdicts: A comparison's checked gates, whose verdict its header gives; ignored by
            the other documents.
        date: The date a comparison's header shows (``YYYY-MM-DD``); ignored by the others.

    Raises:
        ChartscoreError: ``usage`` for anything else (checked by the exact type, so a
            caller's object never runs code here).
    """
    if type(document) is Agreement:
        return agreement_view(document, rater_labels=rater_labels is True)
    if type(document) is Comparison:
        return comparison_view(document, sort=sort, gates=gates, verdicts=verdicts, date=date)
    if type(document) is SharedComparison:
        return shared_comparison_view(
            document, sort=sort, gates=gates, verdicts=verdicts, date=date
        )
    if type(document) is Report or type(document) is SharedReport:
        return report_view(document, sort=sort)
    raise ChartscoreError(ErrorCode.USAGE)
