"""Share one publication: several systems' shared reports of one cohort, safe together.

The systems' reports are suppressed one after another (docs/disclosure.md, "One
publication"):

1. **One decision for gold-only numbers.** A number that counts gold alone
   (``answerable_count``, a total over the answerable rows, the majority
   baseline's success count) is the same in every product. An earlier product
   that shows it made it known: a later one treats it as known (like the
   cohort's composition: shown, never a complementary cell). One that hides it
   makes every later one hide it too.
2. **The joint audit and the joint choice.**
   :func:`~chartscore.disclosure.joint_choice.joint_choice` attacks all products
   in one model (the attack of
   :func:`~chartscore.disclosure.audits.audit_publication`). Where it pins a
   hidden number, it chooses the further numbers to hide on that joint model
   (a relaxed escape per pinned number, checked by the joint solver: the one
   complementary loop over the joint view); every
   product is then suppressed again with all it hid and those forced (a leading
   product given nothing more is kept as it is), and attacked together again.
   Only where the choice gives up are the numbers of the pinned slice forced
   hidden in every product, first the gold-only ones, then all of them.
3. **The order.** Each system is tried first in turn (up to :data:`FIRSTS`):
   the publication that hides the fewest numbers in all is kept. The orders are
   independent, so each runs in its own process (:mod:`chartscore.workflows.orders`).

Hiding only grows, so it ends; a publication that still fails after
:data:`ROUNDS` raises ``disclosure_audit_failed`` and nothing is returned. The
case counts stay in this module, as in :mod:`chartscore.workflows.share`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from chartscore.disclosure.evidence_rule import without_evidence
from chartscore.disclosure.limits import check_publication_size
from chartscore.disclosure.rule import DEFAULT_MIN_CELL
from chartscore.disclosure.solver import require_solver
from chartscore.documents.comparison import Comparison
from chartscore.documents.report import Report
from chartscore.documents.shared_comparison import SharedComparison, build_shared_comparison
from chartscore.documents.shared_report import Key, SharedReport, check_min_cell
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, as_part
from chartscore.io.inputs import InputPath
from chartscore.records.model import GoldField, Prediction
from chartscore.records.schema import Schema, to_schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.scorer import ExtraPredictions, collector_paused, feed_records
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.compare import paired_scorer
from chartscore.workflows.orders import each_order
from chartscore.workflows.score import feed_files, resolve_schema, resolve_strata
from chartscore.workflows.share_comparison import compared_cases

if TYPE_CHECKING:
    from chartscore.disclosure.publication_releases import PublicationRelease

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
    extra_predictions: ExtraPredictions = "error",
) -> list[SharedReport]:
    """Each system's shared report, chosen so that the reports are safe held together.

    Args:
        gold: The cohort's gold rows (read once per system).
        systems: Each system's predictions, in the order of the result.
        schema, min_cell, confidence: As for :func:`chartscore.share`.
        extra_predictions: As for :func:`chartscore.score`: each report shows its
            system's ignored count, a number of its own.

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
    inputs = [
        _Input(
            *_scored(gold, predictions, resolved, confidence, extra_predictions), index, min_cell
        )
        for index, predictions in enumerate(systems)
    ]
    return [p for p in _publication(inputs, min_cell, ()) if isinstance(p, SharedReport)]


def share_publication_files(
    gold: InputPath,
    systems: Sequence[InputPath],
    *,
    schema: Schema | InputPath | None = None,
    min_cell: int = DEFAULT_MIN_CELL,
    confidence: float = DEFAULT_CONFIDENCE,
    comparisons: Sequence[tuple[int, int]] = (),
    strata: CaseStrata | InputPath | None = None,
    also_min_cell: int | None = None,
    extra_predictions: ExtraPredictions = "error",
    releases: InputPath | None = None,
) -> list[SharedReport | SharedComparison]:
    """:func:`share_publication` of a gold file and each system's predictions file.

    Variants join the publication: with ``strata``, each system's report is also
    shared with stratum slices; with ``also_min_cell``, each report (and variant)
    is also shared at that min cell. The result holds, for each system in order,
    its report, then its stratified one, then each again at ``also_min_cell``;
    then the comparisons.

    ``comparisons``: pairs of system indices (baseline, candidate) whose shared
    comparison joins the publication (at ``min_cell``), in this order.

    ``extra_predictions``: as for :func:`chartscore.score_files` (a gold sample of
    charts that every system answered): each report shows its system's ignored
    count, a number of its own; the comparisons withhold theirs.

    ``releases``: the ledger folder of successive releases (inside only): the
    publication is suppressed and audited jointly with every earlier one there,
    then recorded as one release (docs/disclosure.md#successive-releases). Each
    report is then shared as a release is: without labels, its ignored count
    hidden; the comparisons are recorded with it. Not with ``strata`` or
    ``also_min_cell`` (``usage``).

    Raises:
        ChartscoreError: as :func:`chartscore.workflows.share.share_files` and
            :func:`share_publication` (an error in a system's file names it as
            ``predictions part N``, its place in ``systems``); ``usage`` for a
            pair that does not name two different given systems;
            ``share_too_large`` when its stratified reports and comparisons hold more
            than :data:`~chartscore.disclosure.limits.MAX_PUBLICATION_STRATUM_BLOCKS`
            field x stratum-cell blocks in all (after scoring, before any suppression).
    """
    from chartscore.workflows.share import sensitivity_of  # noqa: PLC0415

    confidence_option(confidence)
    check_min_cell(min_cell)
    if not systems:
        raise ChartscoreError(ErrorCode.USAGE)
    require_solver()
    pairs = [(int(b), int(c)) for b, c in comparisons]
    if any(b == c or not (0 <= b < len(systems) and 0 <= c < len(systems)) for b, c in pairs):
        raise ChartscoreError(ErrorCode.USAGE)
    if also_min_cell is not None:
        check_min_cell(also_min_cell)
    resolved = resolve_schema(schema)
    if releases is not None:
        if strata is not None or also_min_cell is not None:
            raise ChartscoreError(ErrorCode.USAGE)  # not in the releases' joint model yet
        return [
            *_publication_release(
                gold,
                systems,
                releases,
                resolved,
                min_cell=min_cell,
                confidence=confidence,
                extra_predictions=extra_predictions,
                pairs=pairs,
            )
        ]
    case_strata = None if strata is None else resolve_strata(strata, resolved)
    inputs: list[_Input] = []
    for index, predictions in enumerate(systems):
        for split in (None, case_strata) if case_strata is not None else (None,):
            scorer = CaseTrackingScorer(resolved, extra_predictions=extra_predictions, strata=split)
            # An error in a system's file names it by its place: predictions part N.
            read = functools.partial(feed_files, scorer, gold, predictions)
            as_part(index + 1, (InputKind.PREDICTIONS,), InputKind.PREDICTIONS, read)
            report, counts = without_evidence(*sensitivity_of(scorer.partial(), confidence, split))
            for rule in (min_cell, also_min_cell):
                if rule is not None:
                    inputs.append(_Input(report, counts, index, rule))
    # Before any suppression: a publication's stratified products are attacked together.
    check_publication_size(
        ((len(i.report.by_field), i.report.by_stratum) for i in inputs), len(pairs)
    )
    compared = [
        _Compared(
            b,
            c,
            *compared_cases(
                paired_scorer(
                    gold,
                    systems[b],
                    systems[c],
                    schema=resolved,
                    extra_predictions=extra_predictions,
                ),
                confidence,
            ),
        )
        for b, c in pairs
    ]
    return [*_publication(inputs, min_cell, compared)]


@attrs.frozen(repr=False)  # inside only: no field in a repr
class _Input:
    # A report of the publication: the full report, its case counts (inside only), its
    # system's index and its min cell.
    report: Report
    counts: object
    system: int
    min_cell: int
    step: object = None  # a release's product step (share --releases)

    @property
    def stratified(self) -> bool:
        """Whether the report has stratum slices."""
        return bool(self.report.by_stratum)


@attrs.frozen(repr=False)  # inside only: no field in a repr
class _Compared:
    # A comparison of the publication: its systems' indices, the full comparison, its
    # distinct-case counts and field types (inside only).
    baseline: int
    candidate: int
    comparison: Comparison
    cases: Mapping[Key, int]
    field_types: Mapping[str, str]

    def values(self, min_cell: int) -> dict[Key, int]:
        """Every protected quantity's true value (derived ones too)."""
        from chartscore.disclosure.comparison_model import (  # noqa: PLC0415
            ComparisonModel,
            comparison_values,
        )

        full = build_shared_comparison(self.comparison, self.field_types, min_cell, set())
        found = comparison_values(full, ComparisonModel(self.field_types))
        return {key: value for key, value in found.items() if value is not None}


Product = SharedReport | SharedComparison
Memo = dict[tuple[int, frozenset[Key], frozenset[tuple[Key, int]]], Product]
"""Each product suppressed under given hidden and known numbers: the same choice, made once."""


def _publication_release(
    gold: InputPath,
    systems: Sequence[InputPath],
    folder: InputPath,
    schema: Schema | None,
    *,
    min_cell: int,
    confidence: float,
    extra_predictions: ExtraPredictions,
    pairs: Sequence[tuple[int, int]],
) -> list[Product]:
    # The publication as the next release of the ledger: scored with every atom apart,
    # suppressed until it passes its own joint audit and the releases' one, recorded.
    from chartscore.workflows.compare import feed_paired  # noqa: PLC0415
    from chartscore.workflows.releases import Ledger  # noqa: PLC0415
    from chartscore.workflows.share import field_types_of  # noqa: PLC0415

    ledger = Ledger(folder)  # locked from reading the earlier releases to recording this one
    try:
        ledger.require(publication=True)  # before any scoring: a report's ledger is refused
        scorers = []
        for index, predictions in enumerate(systems):
            scorer = ledger.scorer(schema, extra_predictions=extra_predictions)
            read = functools.partial(feed_files, scorer, gold, predictions)
            as_part(index + 1, (InputKind.PREDICTIONS,), InputKind.PREDICTIONS, read)
            scorers.append(scorer)
        paired = [
            ((b, c), ledger.paired_scorer(schema, extra_predictions=extra_predictions))
            for b, c in pairs
        ]
        for (b, c), paired_scorer_of in paired:
            feed_paired(paired_scorer_of, gold, systems[b], systems[c])
        step, fulls, digests = ledger.publication(
            scorers, min_cell, confidence, field_types_of, paired
        )
        inputs = [
            _Input(*without_evidence(*full), index, min_cell, step.product_step(index))
            for index, full in enumerate(fulls)
        ]
        compared = [
            _Compared(b, c, *compared_cases(scorer, confidence)) for (b, c), scorer in paired
        ]
        products = _publication(inputs, min_cell, compared, release=step)
        reports = [p for p in products if isinstance(p, SharedReport)]
        comparisons = [p for p in products if isinstance(p, SharedComparison)]
        ledger.record_publication(reports, digests, list(zip(pairs, comparisons, strict=True)))
        return products
    finally:
        ledger.close()


def _publication(
    inputs: Sequence[_Input],
    min_cell: int,
    compared: Sequence[_Compared],
    release: PublicationRelease | None = None,
) -> list[Product]:
    # Each system first in turn (up to FIRSTS of them): the choice that hides the fewest
    # numbers in all, the earliest on a tie; the reports back in the given order, then the
    # comparisons. Within a system, the strictest min cell goes first (a variant at a smaller
    # one then hides all the stricter hides), and the stratified report before the plain one
    # (whose numbers it also holds: the plain one follows its choice, an easier problem).
    made: Memo = {}
    truths = [_true_values(i) for i in inputs]  # once, whatever the order
    truths_compared = [c.values(min_cell) for c in compared]
    # Each order is a whole publication's work of its own: on every core at once.
    best: list[Product] | None = None
    tries = [
        functools.partial(
            _first,
            first,
            inputs,
            compared,
            min_cell=min_cell,
            made=made,
            truths=truths,
            truths_compared=truths_compared,
            release=release,
        )
        for first in range(min(1 + max(i.system for i in inputs), FIRSTS))
    ]
    for products in each_order(tries):
        if best is None or _hidden(products) < _hidden(best):
            best = products
    assert best is not None
    return best


def _first(
    first: int,
    inputs: Sequence[_Input],
    compared: Sequence[_Compared],
    *,
    min_cell: int,
    made: Memo,
    truths: Sequence[Mapping[Key, int]],
    truths_compared: Sequence[Mapping[Key, int]],
    release: PublicationRelease | None = None,
) -> list[Product]:
    # The publication with system ``first`` first: the reports in the given order, then the
    # comparisons. ``made``: shared by the orders one process runs (each child has its copy).
    count = 1 + max(i.system for i in inputs)
    rank = {system: (system - first) % count for system in range(count)}
    order = sorted(
        range(len(inputs)),
        key=lambda i: (rank[inputs[i].system], -inputs[i].min_cell, -inputs[i].stratified, i),
    )
    values = [truths[i] for i in order] + [*truths_compared]
    found = _in_order([inputs[i] for i in order], compared, min_cell, made, values, release=release)
    products = [found[order.index(i)] for i in range(len(inputs))]
    return products + found[len(inputs) :]


def _hidden(products: Sequence[Product]) -> int:
    return sum(product.disclosure.suppressed_count for product in products)


def _in_order(
    inputs: Sequence[_Input],
    compared: Sequence[_Compared],
    min_cell: int,
    made: Memo,
    values: Sequence[Mapping[Key, int]],
    *,
    release: PublicationRelease | None = None,
) -> list[Product]:
    # The loop of the module's docstring: the reports in this order, then the comparisons.
    # ``release``: the ledger's joint check, run on each publication that passes its own.
    # ``made``: each product already suppressed under the same hidden and known numbers (in
    # another order or round). ``values``: each product's true values, in this order.
    from chartscore.disclosure.joint_choice import Proof, joint_choice  # noqa: PLC0415
    from chartscore.disclosure.publication import System  # noqa: PLC0415

    systems: list[System] = [str(i.system) for i in inputs]
    systems += [(str(c.baseline), str(c.candidate)) for c in compared]
    sources: list[_Input | _Compared] = [*inputs, *compared]
    forced: list[set[Key]] = [set() for _ in systems]
    level: dict[tuple[str, str], int] = {}
    kept: list[Product] = []  # the products the joint choice leaves as they are, in order
    if release is not None:
        release.begin()
    proofs: tuple[Proof, ...] = ()  # what earlier rounds' joint attacks proved protected
    for _ in range(ROUNDS):
        shared, gold_keys = _round(sources, systems, forced, kept, made, min_cell=min_cell)
        verdict = joint_choice(shared, systems, values, gold_keys, proofs)
        proofs = verdict.proofs
        if not verdict.leaks:
            extra = [] if release is None else _release_extra(release, inputs, shared)
            if not any(extra):
                return shared
            for index, product in enumerate(shared):  # hide more, keep all hidden: it ends
                hidden_now = {key for key, value in product.numbers() if value is None}
                forced[index] |= hidden_now | extra[index]
            kept = []
            continue
        if verdict.extra is not None:
            # The joint choice: each product keeps all it hides and hides its extra too, so
            # every pattern only grows and the chosen one's joint attack passes. The leading
            # products with nothing extra are kept as they are: suppressed again with their
            # own hidden numbers forced, under the same earlier choices, they would choose
            # them again.
            for index, product in enumerate(shared):
                hidden_now = {key for key, value in product.numbers() if value is None}
                forced[index] |= hidden_now | verdict.extra[index]
            unchanged = len(list(itertools.takewhile(lambda more: not more, verdict.extra)))
            kept = shared[:unchanged]
            continue
        kept = []
        failing = {row.key[:2] for row in verdict.leaks}
        for where in failing:  # no joint choice: hide the failing slices (gold-only first)
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


def _release_extra(
    release: PublicationRelease, inputs: Sequence[_Input], shared: Sequence[Product]
) -> list[set[Key]]:
    # The releases' joint check of the reports in the systems' order, then the comparisons;
    # per product, in this round's order, the numbers to hide more.
    by_system = sorted(range(len(inputs)), key=lambda i: inputs[i].system)
    order = [*by_system, *range(len(inputs), len(shared))]
    extra = release.extra([shared[i] for i in order])
    out: list[set[Key]] = [set() for _ in shared]
    for index, more in zip(order, extra, strict=True):
        out[index] = more
    return out


def _round(
    sources: Sequence[_Input | _Compared],
    systems: Sequence[object],
    forced: Sequence[set[Key]],
    kept: Sequence[Product],
    made: Memo,
    *,
    min_cell: int,
) -> tuple[list[Product], frozenset[Key]]:
    # Every product in order (the first ``len(kept)`` as they are), and the gold-only keys.
    from chartscore.disclosure.model import model_of  # noqa: PLC0415
    from chartscore.disclosure.publication import (  # noqa: PLC0415
        gold_only_keys,
        label_gold_keys,
    )

    shared: list[Product] = []
    gold_keys: frozenset[Key] = frozenset()
    for index, hide in enumerate(forced):
        if index < len(kept):
            shared.append(kept[index])
        else:
            # In order: an earlier product's choice is this one's (shown: known; hidden:
            # hidden too), for every number of the same system, for gold-only ones of others.
            earlier = [
                (product, None if systems[k] == systems[index] else gold_keys)
                for k, product in enumerate(shared)
            ]
            known, hidden = _decisions(earlier, hide)
            source = sources[index]
            memo = (id(source), frozenset(hide | hidden), frozenset(known.items()))
            if memo not in made:
                if isinstance(source, _Input):
                    made[memo] = _suppressed(
                        source.report,
                        source.counts,
                        source.min_cell,
                        hide | hidden,
                        known,
                        step=source.step,
                    )
                else:
                    made[memo] = _compared(source, min_cell, hide | hidden, known)
            shared.append(made[memo])
        if index == 0:
            assert isinstance(shared[0], SharedReport)
            first = model_of(shared[0])
            gold_keys = gold_only_keys(first) | label_gold_keys(first)
    return shared, gold_keys


def _decisions(
    earlier: Sequence[tuple[Product, frozenset[Key] | None]], hide: set[Key]
) -> tuple[dict[Key, int], set[Key]]:
    # The numbers earlier products show (known, with their values) and hide: of each, those
    # of its key set (None: all of them).
    known: dict[Key, int] = {}
    hidden: set[Key] = set()
    for product, keys in earlier:
        for key, value in product.numbers():
            if keys is not None and key not in keys:
                continue
            if value is None:
                hidden.add(key)
            elif key not in hide:
                known[key] = value
    for key in hidden:
        known.pop(key, None)
    return known, hidden


def _force(forced: list[set[Key]], shared: Sequence[Product], keys: set[Key]) -> bool:
    # Add to every product's forced set those of ``keys`` it shows; whether any was.
    changed = False
    for index, product in enumerate(shared):
        for key, value in product.numbers():
            if value is not None and key in keys and key not in forced[index]:
                forced[index].add(key)
                changed = True
    return changed


def _true_values(product: _Input) -> dict[Key, int]:
    from chartscore.disclosure.sensitivity import Sensitivity  # noqa: PLC0415
    from chartscore.disclosure.suppress import true_values  # noqa: PLC0415

    assert isinstance(product.counts, Sensitivity)
    return true_values(product.report, product.counts)


def _compared(
    compared: _Compared, min_cell: int, hidden: set[Key], known: dict[Key, int]
) -> SharedComparison:
    from chartscore.disclosure.comparison_share import share_comparison  # noqa: PLC0415

    return share_comparison(
        compared.comparison,
        compared.cases,
        compared.field_types,
        min_cell,
        hidden=frozenset(hidden),
        known=known,
        exact=False,  # the greedy's: suppressed again in every round and order
    )


def _scored(
    gold: Sequence[GoldField],
    predictions: Iterable[Prediction],
    schema: Schema | None,
    confidence: float,
    extra_predictions: ExtraPredictions,
) -> tuple[Report, object]:
    # One system's full report and its case counts (inside only).
    from chartscore.workflows.share import sensitivity_of  # noqa: PLC0415

    scorer = CaseTrackingScorer(schema, extra_predictions=extra_predictions)
    with collector_paused():
        feed_records(scorer, gold, predictions)
    return without_evidence(*sensitivity_of(scorer.partial(), confidence))


def _suppressed(
    report: Report,
    counts: object,
    min_cell: int,
    hidden: set[Key],
    known: dict[Key, int],
    *,
    step: object = None,
) -> SharedReport:
    from chartscore.disclosure.publication_releases import ProductStep  # noqa: PLC0415
    from chartscore.disclosure.sensitivity import Sensitivity  # noqa: PLC0415
    from chartscore.disclosure.suppress import share as share_report  # noqa: PLC0415

    assert isinstance(counts, Sensitivity)
    joint = step if isinstance(step, ProductStep) else None
    return share_report(
        report, counts, min_cell, joint=joint, hidden=frozenset(hidden), known=known
    )


__all__ = ["FIRSTS", "ROUNDS", "share_publication", "share_publication_files"]
