"""Score and share in one step: the distinct-case counts never leave this module.

Disclosure control (:mod:`chartscore.disclosure`) is value-free: it sees the
report and, for every protected number, how many distinct cases are behind
it. Those case counts come from case ids, so they are computed here, inside
the boundary, by a :class:`~chartscore.scoring.cases.CaseTrackingScorer`, handed
to :func:`chartscore.disclosure.share` and dropped. Only the shared report
comes out.

:mod:`chartscore.disclosure` imports scipy (about a second); it is imported
when a report is shared, not when chartscore is. scipy is the optional extra
``chartscore[share]``: without it, sharing fails first with ``missing_dependency``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from chartscore.disclosure.rule import DEFAULT_MIN_CELL
from chartscore.disclosure.solver import require_solver
from chartscore.documents.report import Report
from chartscore.documents.shared_figures import Contributions, FieldFigures
from chartscore.documents.shared_report import SharedReport, check_min_cell
from chartscore.errors import ChartscoreError, ErrorCode, callback_option
from chartscore.io.inputs import InputPath
from chartscore.records.model import GoldField, Prediction
from chartscore.records.schema import Schema, to_schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer, case_counts, kappa_smallest_margins
from chartscore.scoring.partial import PartialTally
from chartscore.scoring.partial_document import read_partial
from chartscore.scoring.release_atoms import AtomScorer
from chartscore.scoring.scorer import (
    ExtraPredictions,
    check_options,
    collector_paused,
    feed_records,
)
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.partials import merged_partial, partial_paths, read_partial_file
from chartscore.workflows.releases import Ledger

if TYPE_CHECKING:
    from chartscore.disclosure.sensitivity import Sensitivity

from chartscore.workflows.score import (
    Progress,
    check_file_options,
    feed_files,
    resolve_schema,
    resolve_strata,
)

__all__ = ["DEFAULT_MIN_CELL", "share", "share_files", "share_partial_files", "share_partials"]


def share(
    gold: Iterable[GoldField],
    predictions: Iterable[Prediction],
    *,
    schema: Schema | Mapping[str, object] | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    releases: InputPath | None = None,
) -> SharedReport:
    """Score records as :func:`chartscore.score` does and return the shared report.

    Numbers backed by 1 to ``min_cell - 1`` distinct cases are suppressed,
    with enough complementary cells that none can be derived from what is
    published; the result passes :func:`chartscore.disclosure.audit`. See
    docs/disclosure.md.

    Args:
        gold: As for :func:`chartscore.score`.
        predictions: As for :func:`chartscore.score`.
        schema: As for :func:`chartscore.score`.
        min_cell: Publish 0 or at least this many cases (2 to 1,000,000;
            default 11).
        extra_predictions: As for :func:`chartscore.score`.
        strict_schema: As for :func:`chartscore.score`.
        confidence: As for :func:`chartscore.score`.
        releases: As for :func:`share_files`.

    Returns:
        The :class:`~chartscore.disclosure.SharedReport`; ``to_json()`` is
        canonical JSON.

    Raises:
        ChartscoreError: every code of :func:`chartscore.score`;
            ``invalid_min_cell``; ``missing_dependency`` without scipy
            (``pip install 'chartscore[share]'``); ``disclosure_audit_failed``
            if the result would fail its own audit (a bug: nothing is returned);
            with ``releases``, as :func:`share_files`.
    """
    check_options(extra_predictions, strict_schema)
    confidence_option(confidence)
    check_min_cell(min_cell)
    require_solver()
    resolved = None if schema is None else to_schema(schema)
    if releases is None:
        scorer = CaseTrackingScorer(resolved, extra_predictions=extra_predictions)
        with collector_paused():
            feed_records(scorer, gold, predictions, strict_schema=strict_schema)
        return _shared(scorer, min_cell, confidence)
    ledger = Ledger(releases)  # locked from reading the earlier releases to recording this one
    try:
        atoms = ledger.scorer(resolved, extra_predictions=extra_predictions)
        with collector_paused():
            feed_records(atoms, gold, predictions, strict_schema=strict_schema)
        return ledger.share(atoms, min_cell, confidence, field_types_of)
    finally:
        ledger.close()


def share_files(
    gold: InputPath,
    predictions: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    progress: Progress | None = None,
    parallel: bool = False,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
    suppressing: Callable[[], None] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | InputPath | None = None,
    releases: InputPath | None = None,
) -> SharedReport:
    """Score two JSON Lines files as :func:`chartscore.score_files` does, and share.

    Args:
        gold: As for :func:`chartscore.score_files`.
        predictions: As for :func:`chartscore.score_files`.
        schema: As for :func:`chartscore.score_files`.
        min_cell: As for :func:`share`.
        progress: As for :func:`chartscore.score_files`.
        parallel: As for :func:`chartscore.score_files`.
        extra_predictions: As for :func:`chartscore.score_files`.
        strict_schema: As for :func:`chartscore.score_files`.
        suppressing: Called once the files are scored, before suppression
            starts (which can take minutes with hundreds of fields): the
            command line says so on a terminal.
        confidence: As for :func:`chartscore.score`.
        strata: As for :func:`chartscore.score_files`: the stratum slices are
            shared under the same rule (docs/disclosure.md#stratum-slices), up to
            :data:`~chartscore.disclosure.limits.MAX_STRATUM_BLOCKS` field x
            stratum-cell blocks (``share_too_large`` beyond it).
        releases: The ledger folder of successive releases (inside only): the
            new release is audited jointly with every earlier one in it, and
            recorded there, the folder locked from reading it to recording
            (docs/disclosure.md#successive-releases).

    Raises:
        ChartscoreError: every code of :func:`chartscore.score_files`, and as
            :func:`share`; ``usage`` for a ``suppressing`` that is not callable;
            with ``releases``, ``not_a_release_ledger``, ``file_exposed``,
            ``release_mismatch`` and ``output_unwritable`` (``releases``);
            ``usage`` for ``releases`` with ``strata`` (not modelled jointly).
    """
    check_file_options(progress, parallel, extra_predictions, strict_schema)
    callback_option(suppressing)
    confidence_option(confidence)
    check_min_cell(min_cell)
    require_solver()
    if releases is not None and strata is not None:
        # The releases' joint model has no stratum cells: a stratified release stopped,
        # after scoring, with invalid_sensitivity ("a bug in the caller").
        raise ChartscoreError(ErrorCode.USAGE)
    # Checked (and locked) before any scoring; held until this release is recorded.
    ledger = None if releases is None else Ledger(releases)
    try:
        resolved = resolve_schema(schema)
        case_strata = resolve_strata(strata, resolved)
        scorer = (
            CaseTrackingScorer(resolved, extra_predictions=extra_predictions, strata=case_strata)
            if ledger is None
            else ledger.scorer(resolved, extra_predictions=extra_predictions, strata=case_strata)
        )
        feed_files(
            scorer,
            gold,
            predictions,
            progress=progress,
            parallel=parallel,
            strict_schema=strict_schema,
        )
        if suppressing is not None:
            suppressing()
        if ledger is not None:
            assert isinstance(scorer, AtomScorer)
            return ledger.share(scorer, min_cell, confidence, field_types_of)
        return _shared(scorer, min_cell, confidence)
    finally:
        if ledger is not None:
            ledger.close()


def share_partials(
    texts: Sequence[str | bytes],
    *,
    min_cell: int = DEFAULT_MIN_CELL,
    confidence: float = DEFAULT_CONFIDENCE,
) -> SharedReport:
    """The shared report of several sites' partials (the text of each), added up.

    Suppressed and audited once, on the pooled counts: the shared report of
    :func:`share` on the pooled data when case ids do not collide across
    sites, less the figures that need values (error magnitudes and interval
    alpha; byte for byte without number or date fields that have them;
    docs/partials.md).

    Raises:
        ChartscoreError: as :func:`chartscore.workflows.partials.merge_partials`,
            and as :func:`share` (``invalid_min_cell``, ``missing_dependency``).
    """
    confidence_option(confidence)
    check_min_cell(min_cell)
    if type(texts) is not list and type(texts) is not tuple:
        raise ChartscoreError(ErrorCode.USAGE)
    require_solver()
    partial, _ = merged_partial([read_partial(text) for text in texts])
    return _shared_partial(partial, min_cell, confidence)


def share_partial_files(
    pattern: str, *, min_cell: int = DEFAULT_MIN_CELL, confidence: float = DEFAULT_CONFIDENCE
) -> SharedReport:
    """The shared report of the partial files a glob pattern names (``share --partials``).

    Raises:
        ChartscoreError: as :func:`share_partials`, and as
            :func:`chartscore.workflows.partials.merge_partial_files`.
    """
    confidence_option(confidence)
    check_min_cell(min_cell)
    require_solver()
    sites = [read_partial_file(path) for path in partial_paths(pattern)]
    partial, _ = merged_partial(sites)
    return _shared_partial(partial, min_cell, confidence)


def _shared(scorer: CaseTrackingScorer, min_cell: int, confidence: float) -> SharedReport:
    return _shared_partial(scorer.partial(), min_cell, confidence, scorer.case_strata)


def _shared_partial(
    partial: PartialTally, min_cell: int, confidence: float, strata: CaseStrata | None = None
) -> SharedReport:
    # scipy (the audit's solver) loads here, when a report is shared, not with chartscore.
    from chartscore.disclosure.suppress import share as share_report  # noqa: PLC0415

    report, sensitivity = sensitivity_of(partial, confidence, strata)
    return share_report(report, sensitivity, min_cell)


def sensitivity_of(
    partial: PartialTally, confidence: float, strata: CaseStrata | None = None
) -> tuple[Report, Sensitivity]:
    """The full report of a partial tally and its distinct-case counts (inside only)."""
    from chartscore.disclosure.sensitivity import Sensitivity  # noqa: PLC0415

    tally = partial.tally()
    report = Report.from_tally(tally, confidence)
    if strata is None:
        # Sites' partials hold their cases as counts, without ids: a case cannot be placed
        # in its stratum, so the stratum slices' case counts are unknown and they are
        # withheld (docs/disclosure.md, "Stratum slices").
        report = attrs.evolve(report, by_stratum={}, by_stratum_field_type={})
    sensitivity = Sensitivity(
        case_counts(partial, tally, strata),
        kappa_smallest_margins(partial),
        field_types_of(partial),
        _figures(partial),
    )
    return report, sensitivity


def _figures(partial: PartialTally) -> dict[str, FieldFigures]:
    # The dominance rule's per-case contributions (each field-slice row is one case):
    # only the two largest and the total of each reach disclosure control.
    out: dict[str, FieldFigures] = {}
    for field_id, counts in partial.fields.items():
        absolute, squares, deviation, brier, spread = counts.figure_contributions()
        measured = counts.distances is not None and counts.distance_gold is not None
        out[field_id] = FieldFigures(
            absolute=Contributions.of(absolute) if measured else None,
            squares=Contributions.of(squares) if measured else None,
            deviation=Contributions.of(deviation) if measured else None,
            brier=Contributions.of(brier),
            spread=Contributions.of(spread) if measured else None,
        )
    return out


def field_types_of(partial: PartialTally) -> dict[str, str]:
    """Each field's type name, as a release's case counts need it (inside only)."""
    return {field_id: counts.field_type.value for field_id, counts in partial.fields.items()}
