"""Compare and share in one step: the distinct-case counts never leave this module.

As :mod:`chartscore.workflows.share` does for a report: the paired scorer
reads gold and both prediction files, the distinct cases behind every
protected number of the comparison are counted here, inside the boundary,
handed to :func:`chartscore.disclosure.comparison_share.share_comparison` and
dropped. Only the shared comparison comes out.
"""

from __future__ import annotations

from chartscore.disclosure.rule import DEFAULT_MIN_CELL
from chartscore.disclosure.solver import require_solver
from chartscore.documents.comparison import Comparison
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import Key, check_min_cell
from chartscore.errors import callback_option
from chartscore.io.feed import Progress
from chartscore.io.inputs import InputPath
from chartscore.records.schema import Schema
from chartscore.scoring.comparison_cases import comparison_case_counts
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import ExtraPredictions, check_options
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.compare import paired_scorer

__all__ = ["compared_cases", "share_comparison_files"]


def share_comparison_files(
    gold: InputPath,
    baseline: InputPath,
    candidate: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    progress: Progress | None = None,
    extra_predictions: ExtraPredictions = "error",
    confidence: float = DEFAULT_CONFIDENCE,
) -> SharedComparison:
    """Compare two systems as :func:`chartscore.compare_files` does, and share the comparison.

    The core paired metrics are published with every number backed by 1 to
    ``min_cell - 1`` distinct cases suppressed, with complementary cells, so
    that the result passes
    :func:`~chartscore.disclosure.audits.audit_comparison`
    (docs/disclosure.md, "Sharing a comparison").

    Raises:
        ChartscoreError: every code of :func:`chartscore.compare_files`;
            ``invalid_min_cell``; ``missing_dependency`` without scipy;
            ``disclosure_audit_failed`` if the result would fail its own audit.
    """
    check_options(extra_predictions, False)
    callback_option(progress)
    confidence_option(confidence)
    check_min_cell(min_cell)
    require_solver()
    scorer = paired_scorer(
        gold, baseline, candidate, schema=schema, progress=progress,
        extra_predictions=extra_predictions,
    )  # fmt: skip
    comparison, cases, field_types = compared_cases(scorer, confidence)
    del scorer  # case ids end here
    # scipy (the audit's solver) loads here, when a comparison is shared.
    from chartscore.disclosure.comparison_share import share_comparison  # noqa: PLC0415

    return share_comparison(comparison, cases, field_types, min_cell)


def compared_cases(
    scorer: PairedScorer, confidence: float
) -> tuple[Comparison, dict[Key, int], dict[str, str]]:
    """The full comparison, its distinct-case counts and field types (inside only).

    The case counts are what :func:`share_comparison` needs and must never leave
    the boundary; the paired rows and their case ids end here (the caller drops
    ``scorer``, from :func:`~chartscore.workflows.compare.paired_scorer`).
    """
    comparison = Comparison.from_tally(scorer.paired_tally(), confidence)
    rows = scorer.paired_rows()
    field_types = {field_id: field_type for field_id, (field_type, _) in rows.items()}
    cases = comparison_case_counts(rows)
    del rows  # case ids end here
    return comparison, cases, field_types
