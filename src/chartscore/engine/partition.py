"""Score one partition, combine partition results, and turn them into the report.

The second and last stages of the Dask engine, written without Dask. A
partition's :class:`~chartscore.scoring.scorer.Scorer` takes its gold rows, then its
predictions, each in (part, line) order: the one-process scorer restricted to
the keys that hash to this partition, so duplicate and unknown keys are
refused with the same codes. Results merge by
:meth:`~chartscore.scoring.partial.PartialTally.merge` in a tree; :func:`finish`
applies the checks that need every partition (one type per field id, empty
gold, unused schema fields), picks the failure one process would have met
first, or reduces the merged partial to the value-free :class:`Report`.

Which failure is reported: one process meets failures in (input, part, line)
order, gold first. Every failure a partition meets is one that one process
would meet at the same place if nothing came before it (its checks only look
at the rows of one key, and a row's type and schema entry are those of its
field), except for field types: a field id whose rows have two types, seen
from a partition that only holds rows of the second type. So the engine
checks types globally from the part summaries, and at the same line that
check wins. The smallest failure over all tasks is then exactly the one-process
failure.

Nothing here raises: failures are returned as values (see ``parts.py``).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from chartscore.documents.report import Report
from chartscore.engine.parts import Bucket, Failure, PartSummary, Stage
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.feed import first_add_failure
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.partial import PartialTally, merge_all
from chartscore.scoring.scorer import ExtraPredictions, Scorer, collector_paused


class PartitionResult:
    """A partition's partial tally, or the first failure met (private: holds a partial)."""

    __slots__ = ("failure", "partial")

    def __init__(self, partial: PartialTally | None, failure: Failure | None) -> None:
        self.partial = partial
        self.failure = failure

    def __repr__(self) -> str:
        state = "failed" if self.failure is not None else "scored"
        return f"PartitionResult(<{state}; counts and values hidden>)"


def _feed(
    add: Callable[..., object], buckets: Sequence[Bucket], source: InputKind
) -> Failure | None:
    """Add the rows of every part's bucket, in (part, line) order; the first failure.

    A prediction row is added whole (a ``PredictionRow``), a gold row's fields as arguments.
    """
    whole = source is not InputKind.GOLD
    for part, chunks in enumerate(buckets, 1):
        for chunk in chunks:
            lines, rows = pickle.loads(chunk)
            found = first_add_failure(add, lines, rows, whole=whole)
            if found is not None:
                return Failure.at(found[0], source, part, found[1])
    return None


def _score(
    schema: Schema | None,
    extra_predictions: ExtraPredictions,
    gold: Sequence[Bucket],
    predictions: Sequence[Bucket],
    strata: CaseStrata | None = None,
) -> PartitionResult:
    scorer = Scorer(schema, extra_predictions=extra_predictions, strata=strata)
    failure = _feed(scorer.add_gold, gold, InputKind.GOLD)
    if failure is None:
        failure = _feed(scorer.add_row, predictions, InputKind.PREDICTIONS)
    if failure is not None:
        return PartitionResult(None, failure)
    code: ErrorCode | None = None
    try:
        partial = scorer.partial()
    except ChartscoreError as error:  # a gold case the strata file lacks: met after the reads
        code = error.code
    if code is not None:
        late = (Stage.MERGE, 0, 0, 1)
        return PartitionResult(None, Failure(late, code.value, InputKind.STRATA.value, *_NONE))
    return PartitionResult(partial, None)


_NONE: Final = (None, None, None)


def score_partition(
    schema: Schema | None,
    extra_predictions: ExtraPredictions,
    gold: Sequence[Bucket],
    predictions: Sequence[Bucket],
    strata: CaseStrata | None = None,
) -> list[PartitionResult]:
    """Score one partition: its gold buckets (one per gold part), then its predictions.

    Returns:
        A one-item list (a Dask bag partition) holding the partition's result.
        Never raises.
    """
    result: PartitionResult | None = None
    try:
        with collector_paused():
            result = _score(schema, extra_predictions, gold, predictions, strata)
    except Exception:  # noqa: BLE001 - a bug; its message could hold data
        result = None
    if result is None:
        result = PartitionResult(None, Failure.internal())
    return [result]


def first_result(partition: Sequence[PartitionResult]) -> PartitionResult:
    """The result of a one-item bag partition (the per-partition step of the reduction)."""
    return partition[0]


def combine(results: Iterable[PartitionResult]) -> PartitionResult:
    """Merge partition results: the smallest failure, or the merged partial.

    Associative and commutative like the merge itself, so any tree of
    combinations gives the same result. Once a failure is known, partials are
    dropped. Never raises.
    """
    outcome: PartitionResult | None = None
    try:
        outcome = _combine(list(results))
    except Exception:  # noqa: BLE001 - a bug; its message could hold data
        outcome = None
    return outcome if outcome is not None else PartitionResult(None, Failure.internal())


def _combine(results: list[PartitionResult]) -> PartitionResult:
    failures = [result.failure for result in results if result.failure is not None]
    if failures:
        return PartitionResult(None, min(failures, key=Failure.rank))
    merged: PartialTally | None = None
    conflict = False
    try:
        merged = merge_all(result.partial for result in results if result.partial is not None)
    except ChartscoreError:
        conflict = True  # one field id with two types: the global type check names the line
    if conflict or merged is None:
        late = (Stage.MERGE, 0, 0, 0)
        return PartitionResult(
            None,
            Failure(late, ErrorCode.INCONSISTENT_FIELD_TYPE.value, "gold", None, None, None),
        )
    return PartitionResult(merged, None)


def type_failures(gold: Sequence[PartSummary]) -> list[Failure]:
    """Per field id, the first gold row whose type differs from the field's first row's.

    One process refuses that row with ``inconsistent_field_type``. Found from
    each part's first line per (field id, type), so it sees every partition.
    """
    seen: dict[str, list[tuple[int, int, str]]] = {}
    for part, summary in enumerate(gold, 1):
        for (field_id, type_name), line in summary.first_lines.items():
            seen.setdefault(field_id, []).append((part, line, type_name))
    failures = []
    error = ChartscoreError(ErrorCode.INCONSISTENT_FIELD_TYPE, input=InputKind.GOLD)
    for places in seen.values():
        places.sort()
        first_type = places[0][2]
        for part, line, type_name in places:
            if type_name != first_type:
                failures.append(Failure.at(error, InputKind.GOLD, part, line, tie=0))
                break
    return failures


def finish(
    combined: PartitionResult,
    gold: Sequence[PartSummary],
    predictions: Sequence[PartSummary],
    schema: Schema | None,
    strict_schema: bool,
    *,
    confidence: float = 0.95,
) -> Report | Failure:
    """The report, or the failure one process would have met first. Never raises.

    Args:
        combined: All partitions' results, combined.
        gold, predictions: The part summaries, in part order.
        schema: The schema, for ``strict_schema``.
        strict_schema: Refuse schema field ids that no gold row uses.
        confidence: The level of the report's intervals.
    """
    outcome: Report | Failure | None = None
    try:
        outcome = _finish(combined, gold, predictions, schema, strict_schema, confidence=confidence)
    except Exception:  # noqa: BLE001 - a bug; its message could hold data
        outcome = None
    return outcome if outcome is not None else Failure.internal()


def _finish(
    combined: PartitionResult,
    gold: Sequence[PartSummary],
    predictions: Sequence[PartSummary],
    schema: Schema | None,
    strict_schema: bool,
    *,
    confidence: float,
) -> Report | Failure:
    failures = [s.failure for s in (*gold, *predictions) if s.failure is not None]
    failures += type_failures(gold)
    if combined.failure is not None:
        failures.append(combined.failure)
    if sum(summary.rows for summary in gold) == 0:
        failures.append(
            Failure((Stage.EMPTY_GOLD, 0, 0, 0), ErrorCode.EMPTY_GOLD.value, "gold", *_NOWHERE)
        )
    if strict_schema and schema is not None:
        used = {field_id for summary in gold for field_id, _ in summary.first_lines}
        unused = sorted(set(schema.fields) - used)
        if unused:
            failures.append(
                Failure(
                    (Stage.UNUSED_SCHEMA, 0, 0, 0),
                    ErrorCode.SCHEMA_FIELD_UNUSED.value,
                    "schema",
                    None,
                    None,
                    unused[0],
                )
            )
    if failures:
        return min(failures, key=Failure.rank)
    partial: Any = combined.partial
    return Report.from_tally(partial.tally(), confidence)


_NOWHERE = (None, None, None)
