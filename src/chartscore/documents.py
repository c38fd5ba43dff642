"""Saved documents read back: a report, a comparison or a shared one, by its ``format``.

``chartscore render`` and ``chartscore gate`` take any of them; each class's
``from_json`` checks its own shape strictly and recomputes every derived
figure from the counts. Everything here is value-free.
"""

from __future__ import annotations

from typing import Final

from chartscore import _strict_json
from chartscore.comparison import Comparison
from chartscore.disclosure.rule import SHARED_FORMAT
from chartscore.disclosure.shared import SharedReport
from chartscore.disclosure.shared_comparison import SHARED_COMPARISON_FORMAT, SharedComparison
from chartscore.report import REPORT_FORMAT, Report

MAX_DOCUMENT_BYTES: Final = _strict_json.MAX_DOCUMENT_BYTES
"""The largest saved document read back, 16 MiB (after decompression; see ``_document``)."""

Document = Report | SharedReport | Comparison | SharedComparison
"""Any document chartscore writes and reads back."""


def is_document(value: object) -> bool:
    """Whether ``value`` is exactly a Report, SharedReport, Comparison or SharedComparison.

    By identity of its type: ``isinstance`` would run a proxy's ``__class__``,
    and ``type(value) in (...)`` its metaclass's ``__eq__``.
    """
    kind = type(value)
    return kind is Report or kind is SharedReport or kind is Comparison or kind is SharedComparison


def load_document(text: str | bytes) -> Document:
    """Read a saved report, shared report or comparison, choosing the reader by its ``format``.

    Raises:
        ChartscoreError: ``unknown_report_format`` or ``invalid_report``; the
            message never quotes the document.
    """
    format_name = _format_of(text)
    if format_name == REPORT_FORMAT:
        return Report.from_json(text)
    if format_name == SHARED_FORMAT:
        return SharedReport.from_json(text)
    if format_name == SHARED_COMPARISON_FORMAT:
        return SharedComparison.from_json(text)
    return Comparison.from_json(text)


def _format_of(text: str | bytes) -> object:
    # Only the format name is read here; the chosen reader checks everything.
    document = _strict_json.parse(text)
    if type(document) is not dict:
        _strict_json.invalid()
    return document.get("format")
