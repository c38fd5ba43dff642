"""Saved documents read back: a report, a shared report or a comparison, by its ``format``.

``chartscore render`` and ``chartscore gate`` take any of them; each class's
``from_json`` checks its own shape strictly. Everything here is value-free.
"""

from __future__ import annotations

from typing import Final

from chartscore import _strict_json
from chartscore.comparison import Comparison
from chartscore.disclosure.rule import SHARED_FORMAT
from chartscore.disclosure.shared import SharedReport
from chartscore.report import REPORT_FORMAT, Report

MAX_DOCUMENT_BYTES: Final = 256 << 20
"""The largest saved document read back, 256 MiB (a 10^5-field report is about 72 MB)."""

Document = Report | SharedReport | Comparison
"""Any document chartscore writes and reads back."""


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
    return Comparison.from_json(text)


def _format_of(text: str | bytes) -> object:
    # Only the format name is read here; the chosen reader checks everything.
    document = _strict_json.parse(text)
    if type(document) is not dict:
        _strict_json.invalid()
    return document.get("format")
