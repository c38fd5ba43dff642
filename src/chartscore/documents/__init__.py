"""Saved documents read back: a report, a comparison or a shared one, by its ``format``.

``chartscore render`` and ``chartscore gate`` take any of them; each class's
``from_json`` checks its own shape strictly and recomputes every derived
figure from the counts. Everything here is value-free.

The folder holds the value-free documents and what they are made of: ``tally`` (the
counts), ``report`` and ``comparison``, ``canonical_json`` (the bytes written),
``_strict_json`` (the one reader) and ``_shell`` (the one reader of what every document
opens with: format, version, scorer, confidence, plugins, strata), ``plugin_layout`` and the
release ``gates`` (docs/architecture.md), and the shared documents: ``shared_report`` and
``shared_comparison``, with what they are made of (``shared_rule``, ``shared_metric``,
``shared_labels``, ``shared_figures``), and ``display`` (the hooks of a document's
``to_pandas()`` and ``_repr_html_()``, which the public API fills from render/). The
readers are imported here only when called, so that importing one module of this folder
(``tally``, say) does not import every document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from chartscore.documents import _strict_json

if TYPE_CHECKING:
    from typing import TypeAlias

    from chartscore.documents.agreement import Agreement
    from chartscore.documents.comparison import Comparison
    from chartscore.documents.report import Report
    from chartscore.documents.shared_comparison import SharedComparison
    from chartscore.documents.shared_report import SharedReport

    Document: TypeAlias = Report | SharedReport | Comparison | SharedComparison
    """Any document chartscore writes and reads back."""

MAX_DOCUMENT_BYTES: Final = _strict_json.MAX_DOCUMENT_BYTES
"""The largest saved document read back, 16 MiB (after decompression; see ``_document``)."""


if not TYPE_CHECKING:  # for mypy, ``Document`` is the alias above and nothing else is lazy

    def __getattr__(name: str) -> object:
        # ``Document`` at run time (``from chartscore.documents import Document``), built on
        # first use so that importing this package does not import every reader.
        if name == "Document":
            from chartscore.documents.comparison import Comparison
            from chartscore.documents.report import Report
            from chartscore.documents.shared_comparison import SharedComparison
            from chartscore.documents.shared_report import SharedReport

            document = Report | SharedReport | Comparison | SharedComparison
            globals()["Document"] = document
            return document
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_document(value: object) -> bool:
    """Whether ``value`` is exactly a Report, SharedReport, Comparison or SharedComparison.

    By identity of its type: ``isinstance`` would run a proxy's ``__class__``,
    and ``type(value) in (...)`` its metaclass's ``__eq__``.
    """
    from chartscore.documents.comparison import Comparison
    from chartscore.documents.report import Report
    from chartscore.documents.shared_comparison import SharedComparison
    from chartscore.documents.shared_report import SharedReport

    kind = type(value)
    return kind is Report or kind is SharedReport or kind is Comparison or kind is SharedComparison


def load_document(text: str | bytes) -> Document:
    """Read a saved report, shared report or comparison, choosing the reader by its ``format``.

    Raises:
        ChartscoreError: ``unknown_report_format`` or ``invalid_report``; the
            message never quotes the document.
    """
    from chartscore.documents.comparison import Comparison
    from chartscore.documents.report import REPORT_FORMAT, Report
    from chartscore.documents.shared_comparison import SHARED_COMPARISON_FORMAT, SharedComparison
    from chartscore.documents.shared_report import SharedReport
    from chartscore.documents.shared_rule import SHARED_FORMAT

    format_name = format_of(text)
    if format_name == REPORT_FORMAT:
        return Report.from_json(text)
    if format_name == SHARED_FORMAT:
        return SharedReport.from_json(text)
    if format_name == SHARED_COMPARISON_FORMAT:
        return SharedComparison.from_json(text)
    return Comparison.from_json(text)


def load_rendered_document(text: str | bytes) -> Document | Agreement:
    """:func:`load_document`, or an agreement document (``render`` and ``gate`` take it).

    Raises:
        ChartscoreError: as :func:`load_document`.
    """
    from chartscore.documents.agreement import AGREEMENT_FORMAT, Agreement

    if format_of(text) == AGREEMENT_FORMAT:
        return Agreement.from_json(text)
    return load_document(text)


def refuse_agreement(text: str | bytes) -> None:
    """Refuse an agreement document where a shared one is expected (``audit``).

    Raises:
        ChartscoreError: ``agreement_not_shareable`` (report) when ``text`` is an
            agreement document (by its ``format``); ``invalid_report`` when it is not JSON.
    """
    from chartscore.documents.agreement import AGREEMENT_FORMAT
    from chartscore.errors import ChartscoreError, ErrorCode, InputKind

    if format_of(text) == AGREEMENT_FORMAT:
        raise ChartscoreError(ErrorCode.AGREEMENT_NOT_SHAREABLE, input=InputKind.REPORT)


def format_of(text: str | bytes) -> object:
    """A document's ``format`` value (None without one), read by the strict JSON reader.

    Only the name is read; the chosen reader checks everything else.

    Raises:
        ChartscoreError: ``invalid_report`` when ``text`` is not a JSON object.
    """
    document = _strict_json.parse(text)
    if type(document) is not dict:
        _strict_json.invalid()
    return document.get("format")
