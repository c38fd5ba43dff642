"""Several sites, one report: write a site's partial tally, merge the partials of all sites.

A consortium's sites score their own charts (``score --partial-out``), send the
value-free partials to one place under their agreement, and ``merge`` adds them:
the report equals, byte for byte, what one process scoring the pooled data
would give when case ids do not collide across sites (docs/partials.md).
``share --partials`` suppresses and audits the pooled counts once.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence

from chartscore.documents.report import Report
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.document_files import read_document_bytes
from chartscore.io.hints import format_explained
from chartscore.io.inputs import InputPath
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.partial import PartialTally, merge_all
from chartscore.scoring.partial_document import SitePartial, partial_json, read_partial
from chartscore.scoring.scorer import ExtraPredictions, collector_paused
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.score import (
    Progress,
    check_file_options,
    feed_files,
    resolve_schema,
    resolve_strata,
)

__all__ = [
    "merge_partial_files",
    "merge_partials",
    "merged_partial_text",
    "partial_paths",
    "score_with_partial",
]


def score_with_partial(
    gold: InputPath,
    predictions: InputPath,
    *,
    schema: Schema | InputPath | None = None,
    progress: Progress | None = None,
    parallel: bool = False,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | InputPath | None = None,
) -> tuple[Report, str]:
    """Score two files as :func:`chartscore.score_files` does; also return the site's partial.

    Returns:
        The report, and the partial as canonical JSON text (no value, case id or
        digest: counts only, with kappa over declared labels).

    Raises:
        ChartscoreError: every code of :func:`chartscore.score_files`;
            ``partial_needs_declared_labels`` for a categorical field that has
            kappa but no declared choices.
    """
    check_file_options(progress, parallel, extra_predictions, strict_schema)
    confidence_option(confidence)
    resolved = resolve_schema(schema)
    scorer = CaseTrackingScorer(
        resolved, extra_predictions=extra_predictions, strata=resolve_strata(strata, resolved)
    )
    feed_files(
        scorer, gold, predictions, progress=progress, parallel=parallel, strict_schema=strict_schema
    )
    with collector_paused():
        partial = scorer.partial()
        report = Report.from_tally(partial.tally(scorer.rule_book), confidence)
        text = partial_json(partial, resolved, extra_predictions=extra_predictions)
    return report, text


def partial_paths(pattern: object) -> list[str]:
    """The partial files a glob pattern names, in sorted order.

    Raises:
        ChartscoreError: ``usage`` for a pattern that is not a ``str``;
            ``no_partials`` when it names no file.
    """
    if type(pattern) is not str:
        raise ChartscoreError(ErrorCode.USAGE)
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise ChartscoreError(ErrorCode.NO_PARTIALS, input=InputKind.PARTIAL)
    return paths


def merged_partial(sites: Sequence[SitePartial]) -> tuple[PartialTally, SitePartial]:
    """Every site's partial added up, and the first site (its schema and options).

    Raises:
        ChartscoreError: ``partials_differ`` when the sites' schemas,
            ``extra_predictions`` options or chartscore versions differ (plugins:
            ``plugin_mismatch``); ``duplicate_partial`` when two partials share
            an id (the same partial twice, under any name, or a merged partial
            and one it holds); ``no_partials`` with none.
    """
    if not sites:
        raise ChartscoreError(ErrorCode.NO_PARTIALS, input=InputKind.PARTIAL)
    _check_distinct(sites)
    first = sites[0]
    for site in sites:
        same = (
            site.schema == first.schema
            and site.extra_predictions == first.extra_predictions
            and site.scorer_version == first.scorer_version
        )
        if not same:
            raise ChartscoreError(ErrorCode.PARTIALS_DIFFER, input=InputKind.PARTIAL)
    return merge_all(site.partial for site in sites), first


def _check_distinct(sites: Sequence[SitePartial]) -> None:
    """Refuse a site counted twice: two partials whose identities overlap.

    The message names neither the files nor the ids (inside-only identifiers).
    """
    seen: set[str] = set()
    for site in sites:
        if not seen.isdisjoint(site.keys):
            raise ChartscoreError(ErrorCode.DUPLICATE_PARTIAL, input=InputKind.PARTIAL)
        seen.update(site.keys)


def merged_partial_text(texts: Sequence[str | bytes]) -> str:
    """The partial of several sites' partials (the text of each) added up.

    It carries every constituent's id, so that merging it again with one of
    them is refused (``duplicate_partial``), as the same partial twice is.

    Raises:
        ChartscoreError: any code of :func:`read_partial` and
            :func:`merged_partial`; ``partials_differ`` when a partial is older
            than format 3 (it has no id to pass on); ``usage`` for ``texts``
            that is not a list or tuple.
    """
    if type(texts) is not list and type(texts) is not tuple:
        raise ChartscoreError(ErrorCode.USAGE)
    sites = [read_partial(text) for text in texts]
    return _merged_text(sites, *merged_partial(sites))


def _merged_text(sites: Sequence[SitePartial], merged: PartialTally, first: SitePartial) -> str:
    # An older partial has no id: a merged partial holding it could be merged with it again.
    if any(site.ids is None for site in sites):
        raise ChartscoreError(ErrorCode.PARTIALS_DIFFER, input=InputKind.PARTIAL)
    ids = frozenset().union(*(site.keys for site in sites))
    with collector_paused():
        return partial_json(
            merged, first.schema, extra_predictions=first.extra_predictions, ids=ids
        )


def merge_partials(
    texts: Sequence[str | bytes], *, confidence: float = DEFAULT_CONFIDENCE
) -> Report:
    """The report of several sites' partials (the text of each), added up.

    Raises:
        ChartscoreError: any code of :func:`read_partial` and
            :func:`merged_partial`; ``usage`` for a ``confidence`` that is not
            one of the three levels, or ``texts`` that is not a list or tuple.
    """
    confidence_option(confidence)
    if type(texts) is not list and type(texts) is not tuple:
        raise ChartscoreError(ErrorCode.USAGE)
    partial, _ = merged_partial([read_partial(text) for text in texts])
    return Report.from_tally(partial.tally(), confidence)


def read_partial_file(path: InputPath) -> SitePartial:
    """Read one partial file (at most 16 MiB), located as ``partial`` in any error."""
    failure: ChartscoreError | None = None
    data = b""
    try:
        data = read_document_bytes(path, InputKind.PARTIAL)
    except ChartscoreError as error:
        failure = error
    if failure is not None:  # the reader names a report: this input is a partial
        code = (
            ErrorCode.INVALID_PARTIAL if failure.code is ErrorCode.INVALID_REPORT else failure.code
        )
        raise ChartscoreError(code, input=InputKind.PARTIAL)
    try:
        return read_partial(data)
    except ChartscoreError as error:
        failure = error
    raise format_explained(failure, data, InputKind.PARTIAL)  # a report given: its hint


def merge_partial_files(pattern: str, *, confidence: float = DEFAULT_CONFIDENCE) -> Report:
    """The report of the partial files a glob pattern names (``chartscore merge``).

    Raises:
        ChartscoreError: as :func:`merge_partials`, and the reading codes
            (``file_unreadable``, ``file_too_large``, ...) located as ``partial``.
    """
    return merge_partial_files_with_partial(pattern, confidence=confidence, partial=False)[0]


def merge_partial_files_with_partial(
    pattern: str, *, confidence: float = DEFAULT_CONFIDENCE, partial: bool = True
) -> tuple[Report, str | None]:
    """:func:`merge_partial_files`, and the merged partial's text (``merge --partial-out``).

    Raises:
        ChartscoreError: as :func:`merge_partial_files`, and with ``partial``
            as :func:`merged_partial_text`.
    """
    confidence_option(confidence)
    sites = [read_partial_file(path) for path in partial_paths(pattern)]
    merged, first = merged_partial(sites)
    text = _merged_text(sites, merged, first) if partial else None
    return Report.from_tally(merged.tally(), confidence), text
