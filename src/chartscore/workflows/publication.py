"""Share one publication: several systems' shared reports of one cohort, safe together.

The systems' reports are suppressed one after another (docs/disclosure.md, "One
publication"):

1. **One decision for gold-only numbers.** A number that counts gold alone
   (``answerable_count``, a total over the answerable rows, the majority
   baseline's success count) is the same in every product. An earlier product
   that shows it made it known: a later one treats it as known (like the
   cohort's composition: shown, never a complementary cell). One that hides it
   makes every later one hide it too.
2. **The joint audit.** :func:`~chartscore.disclosure.publication.audit_publication`
   attacks all products in one model. Where it pins a hidden number, the
   numbers of that slice are forced hidden in every product, first the
   gold-only ones, then all of them, and the publication is suppressed again.
3. **The order.** Each system is tried first in turn (up to :data:`FIRSTS`):
   the publication that hides the fewest numbers in all is kept.

Hiding only grows, so it ends; a publication that still fails after
:data:`ROUNDS` raises ``disclosure_audit_failed`` and nothing is returned. The
case counts stay in this module, as in :mod:`chartscore.workflows.share`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from chartscore.disclosure.rule import DEFAULT_MIN_CELL
from chartscore.disclosure.solver import require_solver
from chartscore.documents.report import Report
from chartscore.documents.shared_report import Key, SharedReport, check_min_cell
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.io.inputs import InputPath
from chartscore.records.model import GoldField, Prediction
from chartscore.records.schema import Schema, to_schema
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.scorer import collector_paused, feed_records
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.score import feed_files, resolve_schema

ROUNDS: Final = 12
"""The most suppressions of the whole publication before it gives up."""
FIRSTS: Final = 4
"""How many systems are tried first (each order is a whole publication's work)."""


def share_publication(
    gold: Sequence[GoldField],
    systems: Sequence[Iterable[Prediction]],
    *,
    schema: Schema | Mapping[str, object] | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[SharedReport]:
    """Each system's shared report, chosen so that the reports are safe held together.

    Args:
        gold: The cohort's gold rows (read once per system).
        systems: Each system's predictions, in the order of the result.
        schema, min_cell, confidence: As for :func:`chartscore.share`.

    Raises:
        ChartscoreError: as :func:`chartscore.share`; ``usage`` for no system;
            ``disclosure_audit_failed`` when no consistent choice passes the joint
            audit within :data:`ROUNDS` (nothing is returned).
    """
    confidence_option(confidence)
    check_min_cell(min_cell)
    if not systems:
        raise ChartscoreError(ErrorCode.USAGE)
    require_solver()
    resolved = None if schema is None else to_schema(schema)
    inputs = [_scored(gold, predictions, resolved, confidence) for predictions in systems]
    return _publication(inputs, min_cell)


def share_publication_files(
    gold: InputPath,
    systems: Sequence[InputPath],
    *,
    schema: Schema | InputPath | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[SharedReport]:
    """:func:`share_publication` of a gold file and each system's predictions file.

    Raises:
        ChartscoreError: as :func:`chartscore.workflows.share.share_files` and
            :func:`share_publication`.
    """
    from chartscore.workflows.share import sensitivity_of  # noqa: PLC0415

    confidence_option(confidence)
    check_min_cell(min_cell)
    if not systems:
        raise ChartscoreError(ErrorCode.USAGE)
    require_solver()
    resolved = resolve_schema(schema)
    inputs = []
    for predictions in systems:
        scorer = CaseTrackingScorer(resolved)
        feed_files(scorer, gold, predictions)
        inputs.append(sensitivity_of(scorer.partial(), confidence))
    return _publication(inputs, min_cell)


def _publication(inputs: Sequence[tuple[Report, object]], min_cell: int) -> list[SharedReport]:
    # Each system first in turn (up to FIRSTS of them): the choice that hides the fewest
    # numbers in all, the earliest on a tie; the products back in the given order.
    best: list[SharedReport] | None = None
    for first in range(min(len(inputs), FIRSTS)):
        order = [*range(first, len(inputs)), *range(first)]
        found = _in_order([inputs[i] for i in order], min_cell)
        products = [found[order.index(i)] for i in range(len(inputs))]
        if best is None or _hidden(products) < _hidden(best):
            best = products
    assert best is not None
    return best


def _hidden(products: Sequence[SharedReport]) -> int:
    return sum(product.disclosure.suppressed_count for product in products)


def _in_order(inputs: Sequence[tuple[Report, object]], min_cell: int) -> list[SharedReport]:
    # The loop of the module's docstring, on each system's report and case counts.
    from chartscore.disclosure.model import model_of  # noqa: PLC0415
    from chartscore.disclosure.publication import (  # noqa: PLC0415
        audit_publication,
        gold_only_keys,
    )

    labels = [str(index) for index in range(len(inputs))]
    forced: list[set[Key]] = [set() for _ in inputs]
    level: dict[tuple[str, str], int] = {}
    for _ in range(ROUNDS):
        shared: list[SharedReport] = []
        for (report, counts), hide in zip(inputs, forced, strict=True):
            # In order: an earlier product's gold-only choice is this one's (shown: known;
            # hidden: hidden too).
            gold_keys = gold_only_keys(model_of(shared[0])) if shared else frozenset()
            known = {
                key: value
                for product in shared
                for key, value in product.numbers()
                if value is not None and key in gold_keys and key not in hide
            }
            hidden = {
                key
                for product in shared
                for key, value in product.numbers()
                if value is None and key in gold_keys
            }
            for key in hidden:
                known.pop(key, None)
            shared.append(_suppressed(report, counts, min_cell, hide | hidden, known))
        result = audit_publication(shared, labels)
        if result.passed:
            return shared
        gold_keys = gold_only_keys(model_of(shared[0]))
        failing = {row.key[:2] for row in result.rows if not row.passed}
        for where in failing:
            level[where] = level.get(where, 0) + 1
        more = {
            key
            for product in shared
            for key, _ in product.numbers()
            if key[:2] in failing and (level[key[:2]] > 1 or key in gold_keys)
        }
        if not _force(forced, shared, more):
            break  # nothing more to hide in the failing slices: give up
    raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)


def _force(forced: list[set[Key]], shared: Sequence[SharedReport], keys: set[Key]) -> bool:
    # Add to every product's forced set those of ``keys`` it shows; whether any was.
    changed = False
    for index, product in enumerate(shared):
        for key, value in product.numbers():
            if value is not None and key in keys and key not in forced[index]:
                forced[index].add(key)
                changed = True
    return changed


def _scored(
    gold: Sequence[GoldField],
    predictions: Iterable[Prediction],
    schema: Schema | None,
    confidence: float,
) -> tuple[Report, object]:
    # One system's full report and its case counts (inside only).
    from chartscore.workflows.share import sensitivity_of  # noqa: PLC0415

    scorer = CaseTrackingScorer(schema)
    with collector_paused():
        feed_records(scorer, gold, predictions)
    return sensitivity_of(scorer.partial(), confidence)


def _suppressed(
    report: Report, counts: object, min_cell: int, hidden: set[Key], known: dict[Key, int]
) -> SharedReport:
    from chartscore.disclosure.suppress import Sensitivity  # noqa: PLC0415
    from chartscore.disclosure.suppress import share as share_report  # noqa: PLC0415

    assert isinstance(counts, Sensitivity)
    return share_report(report, counts, min_cell, hidden=frozenset(hidden), known=known)


__all__ = ["FIRSTS", "ROUNDS", "share_publication", "share_publication_files"]
