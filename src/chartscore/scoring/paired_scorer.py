"""Two systems on the same gold: read gold once, stream both prediction sets, count pairs.

The honest comparison of two systems that answered the same gold rows is a
paired one. :class:`PairedScorer` loads gold once, then counts the baseline's
predictions (keeping only each answered row's outcome mask until the
candidate's answer to the same row arrives), then the candidate's. For every
gold row it counts the pair of outcome classes (baseline, candidate); each
paired metric's 2 x 2 table (both succeed, baseline only, candidate only,
neither) is read off those pair counts with the row tests of
:mod:`chartscore.scoring.outcomes`. Each system's own counts are kept too, for its
unpaired metrics and kappa.

Like :mod:`chartscore.scoring.scorer`, this module holds values and case ids; what it
returns (:class:`~chartscore.documents.comparison.PairedTally`) holds counts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, cast

from chartscore.documents.comparison import (
    PAIRED_METRICS,
    Comparison,
    IgnoredPredictions,
    PairedBinomial,
    PairedSliceTally,
    PairedTally,
)
from chartscore.documents.plugin_layout import PluginLayout, is_plugin_metric
from chartscore.documents.tally import TYPE_METRICS, SliceTally, pool
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.metrics import NOT_APPLICABLE, FieldType, GoldValue
from chartscore.records.model import GoldField, Prediction
from chartscore.records.prediction_row import PredictionRow
from chartscore.records.schema import Schema, to_schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.clusters import (
    OVERALL,
    FieldClasses,
    paired_pooled_sums,
    pooled_sums,
)
from chartscore.scoring.outcomes import row_tests
from chartscore.scoring.partial import FieldCounts
from chartscore.scoring.run_usage import UsageCounter
from chartscore.scoring.scorer import (
    RUN_HEADER_ROW,
    ExtraPredictions,
    FieldState,
    Scorer,
    collector_paused,
    count_uncertainty,
    guarded,
    judge,
    row_of,
)
from chartscore.scoring.strata import class_slice, slice_metric_names, split_fields
from chartscore.stats.clustered import (
    DEFAULT_CONFIDENCE,
    ClusterSums,
    PairedClusterSums,
    confidence_option,
)

Side = Literal["baseline", "candidate", "pair"]

_TYPE_PAIRED: Final = frozenset(PAIRED_METRICS) & frozenset(TYPE_METRICS)


class _Pair:
    """Both systems' counts for one field, and the pairs of outcome classes so far."""

    __slots__ = ("baseline", "baseline_masks", "candidate", "pairs")

    def __init__(self, gold: FieldCounts) -> None:
        self.baseline = _gold_only_copy(gold)
        self.candidate = _gold_only_copy(gold)
        self.baseline_masks: dict[str, int] = {}  # baseline row classes, not yet paired
        self.pairs: Counter[tuple[int, int]] = Counter()


def _gold_only_copy(gold: FieldCounts) -> FieldCounts:
    counts = FieldCounts(gold.field_type, gold.spec, kappa=gold.gold_keys is not None)
    counts.answerable = gold.answerable
    counts.unanswerable = gold.unanswerable
    counts.gold_items = gold.gold_items
    if gold.gold_keys is not None and counts.gold_keys is not None:
        counts.gold_keys.update(gold.gold_keys)
    if gold.label_gold is not None and counts.label_gold is not None:
        counts.label_gold.update(gold.label_gold)
    if gold.distance_gold is not None and counts.distance_gold is not None:
        counts.distance_gold.update(gold.distance_gold)  # a copy of gold's: nothing to add
    return counts


class PairedScorer:
    """Gold once, then the baseline's predictions, then the candidate's.

    Add gold with :meth:`add_gold` and :meth:`close_gold`, every baseline
    prediction row with :meth:`add_baseline`, then every candidate row with
    :meth:`add_candidate`; :meth:`paired_tally` gives the value-free counts.
    Errors name the input (``baseline`` or ``candidate``) but no line; callers
    reading files add it. ``extra_predictions`` is :class:`Scorer`'s, applied to
    each system: with ``"ignore"`` each system's skipped predictions are counted
    apart.

    It holds a :class:`Scorer` for the gold set and its rules (composition: a
    paired scorer has no single prediction stream, so it is not a scorer).
    """

    def __init__(
        self,
        schema: Schema | None = None,
        *,
        extra_predictions: ExtraPredictions = "error",
        strata: CaseStrata | None = None,
    ) -> None:
        self._gold = Scorer(schema, extra_predictions=extra_predictions, strata=strata)
        # The gold scorer's parts, read once per row: one attribute away.
        self._fields = self._gold.fields  # grows as gold is added
        self._coding = self._gold.coding
        self._layout = self._gold.plugin_layout
        self._strata = self._gold.case_strata
        self._ignore_extra = self._gold.ignores_extra
        self._pairs: dict[str, _Pair] = {}
        self._classes: dict[int, int] = {}  # one object per distinct pair of classes
        self._candidate_started = False
        self._ignored_by_system = {InputKind.BASELINE: 0, InputKind.CANDIDATE: 0}
        self._usage = {InputKind.BASELINE: UsageCounter(), InputKind.CANDIDATE: UsageCounter()}

    def __repr__(self) -> str:
        return f"PairedScorer(<{len(self._fields)} fields; values hidden>)"

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one validated gold row (see :meth:`Scorer.add_gold`).

        Raises:
            ChartscoreError: ``not_applicable_unsupported`` for a not-applicable gold row:
                a comparison does not pair those rows' counts yet (docs/compare.md).
        """
        if value is NOT_APPLICABLE:
            raise ChartscoreError(ErrorCode.NOT_APPLICABLE_UNSUPPORTED, input=InputKind.GOLD)
        self._gold.add_gold(case_id, field_id, field_type, value)

    def close_gold(self) -> None:
        """Mark the gold set complete (an empty one is refused)."""
        self._gold.close_gold()
        self._pairs = {field_id: _Pair(state.counts) for field_id, state in self._fields.items()}

    def unused_schema_fields(self) -> list[str]:
        """Schema field ids that no gold row uses, sorted (see :class:`Scorer`)."""
        return self._gold.unused_schema_fields()

    def add_baseline(self, row: PredictionRow) -> int:
        """Count one baseline prediction row; returns its outcome mask."""
        if self._candidate_started:
            raise ValueError("every baseline prediction comes before the candidate's")
        case_id, field_id, value, evidence, uncertainty, _ = row
        known = self._known(row, InputKind.BASELINE)
        if isinstance(known, int):
            return known
        state, entry = known
        pair = self._pairs[field_id]
        if case_id in pair.baseline_masks:
            raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY, input=InputKind.BASELINE)
        row_class = judge(state, entry, value, evidence, pair.baseline)
        count_uncertainty(pair.baseline, row_class, uncertainty)
        pair.baseline_masks[case_id] = row_class
        return row_class & self._coding.row_bits

    def add_candidate(self, row: PredictionRow) -> int:
        """Count one candidate prediction row and its pair with the baseline; returns its mask."""
        self._candidate_started = True
        case_id, field_id, value, evidence, uncertainty, _ = row
        known = self._known(row, InputKind.CANDIDATE)
        if isinstance(known, int):
            return known
        state, entry = known
        if type(entry) is int:
            raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY, input=InputKind.CANDIDATE)
        pair = self._pairs[field_id]
        row_class = judge(state, entry, value, evidence, pair.candidate)
        count_uncertainty(pair.candidate, row_class, uncertainty)
        baseline = pair.baseline_masks.pop(case_id, None)
        coding = self._coding
        if baseline is None:
            baseline = state.missing(entry)
        both = baseline | row_class << coding.pair_shift  # the pair of classes (scoring.clusters)
        state.cases[case_id] = self._classes.setdefault(both, both)
        pair.pairs[baseline & coding.row_bits, row_class & coding.row_bits] += 1
        return row_class & coding.row_bits

    def _known(self, row: PredictionRow, source: InputKind) -> tuple[FieldState, Any] | int:
        """The row's gold field state and case entry, or the mask its caller returns at once.

        Both systems' rows pass the same two gates before they are judged: a run-usage
        header row is counted and ends there, and a key that gold does not hold is
        refused or skipped (``_extra``); only what remains differs between the two.
        """
        case_id, field_id, _, _, _, usage = row
        if usage is not None and self._usage[source].add(case_id, usage, source):
            return RUN_HEADER_ROW
        state = self._fields.get(field_id)
        entry = None if state is None else state.cases.get(case_id)
        if state is None or entry is None:
            return self._extra(source)
        return state, entry

    def _extra(self, source: InputKind) -> int:
        # A prediction whose key is not in gold: refused, or skipped and counted (-1).
        if not self._ignore_extra:
            raise ChartscoreError(ErrorCode.UNKNOWN_PREDICTION_KEY, input=source)
        self._ignored_by_system[source] += 1
        return -1

    def paired_tally(self) -> PairedTally:
        """Both systems' slices and every paired metric's 2 x 2 counts; values end here."""
        by_field: dict[str, PairedSliceTally] = {}
        members: dict[str, list[PairedSliceTally]] = {}
        for field_id in sorted(self._fields):
            state = self._fields[field_id]
            pair = self._pairs[field_id]
            pairs = Counter(pair.pairs)
            for case_id, entry in state.cases.items():
                if type(entry) is not int:  # the candidate did not answer this row
                    missing = state.missing(entry)
                    waiting = pair.baseline_masks.get(case_id, missing)
                    pairs[waiting & self._coding.row_bits, missing & self._coding.row_bits] += 1
            baseline = pair.baseline.slice_tally(state.rule, self._layout)
            candidate = pair.candidate.slice_tally(state.rule, self._layout)
            paired = {
                name: _paired_binomial(pairs, name, self._layout)
                for name in (*PAIRED_METRICS, *filter(is_plugin_metric, baseline.metrics))
                if name in baseline.metrics
            }
            part = PairedSliceTally(baseline=baseline, candidate=candidate, paired=paired)
            by_field[field_id] = part
            members.setdefault(state.field_type.value, []).append(part)
        coding = self._coding
        sums = {
            side: pooled_sums(self._field_classes(side), coding)
            for side in ("baseline", "candidate")
        }
        paired_sums = paired_pooled_sums(self._field_classes("pair"), coding, PAIRED_METRICS)

        def pooled(name: str, parts: Iterable[PairedSliceTally], keep: bool) -> PairedSliceTally:
            return _pool(
                parts,
                keep_type_metrics=keep,
                clusters=(sums["baseline"].get(name, {}), sums["candidate"].get(name, {})),
                paired_clusters=paired_sums.get(name, {}),
            )

        by_type = {name: pooled(name, parts, True) for name, parts in sorted(members.items())}
        overall = pooled(OVERALL, by_field.values(), False)
        ignored = None
        if self._ignore_extra:
            ignored = IgnoredPredictions(
                self._ignored_by_system[InputKind.BASELINE],
                self._ignored_by_system[InputKind.CANDIDATE],
            )
        return PairedTally(
            overall=overall,
            by_field=by_field,
            by_field_type=by_type,
            ignored_prediction_count=ignored,
            plugins=self._gold.counts_partial(with_strata=False).plugin_stamps(),  # one plugin set
            by_stratum=self._stratum_slices(),
            run=(
                self._usage[InputKind.BASELINE].run_cost(),
                self._usage[InputKind.CANDIDATE].run_cost(),
            ),
        )

    def _stratum_slices(self) -> dict[str, PairedSliceTally]:
        # Each stratum's pooled paired slice, from its rows' (baseline, candidate) classes.
        if self._strata is None:
            return {}
        coding = self._coding
        shift, bits = coding.pair_shift, coding.row_bits
        low = (1 << shift) - 1
        layout = self._layout
        groups = {field_id: state.group for field_id, state in sorted(self._fields.items())}
        metrics = slice_metric_names(groups.values(), overall=True)
        fields = [
            (field_id, (group, self._rows(field_id, "pair"), _known))
            for field_id, group in groups.items()
        ]
        out: dict[str, PairedSliceTally] = {}
        for name, members in split_fields(self._strata, fields):
            both = [(group, cast("dict[str, int]", rows)) for _, (group, rows, _) in members]
            sides = []
            for candidate in (False, True):
                own = [
                    (group, {c: r >> shift if candidate else r & low for c, r in rows.items()})
                    for group, rows in both
                ]
                sums = pooled_sums([(g, rows, _known) for g, rows in own], coding).get(OVERALL, {})
                counted = [(group, dict(Counter(rows.values()))) for group, rows in own]
                sides.append(class_slice(counted, coding, metrics, sums))
            pairs: Counter[tuple[int, int]] = Counter()
            for _, rows in both:
                for row in rows.values():
                    pairs[row & low & bits, row >> shift & bits] += 1
            paired = {
                metric: _paired_binomial(pairs, metric, layout)
                for metric in sides[0].metrics
                if metric in PAIRED_METRICS
            }
            paired_sums = paired_pooled_sums(
                [field for _, field in members], coding, PAIRED_METRICS
            ).get(OVERALL, {})
            out[name] = PairedSliceTally(
                baseline=sides[0],
                candidate=sides[1],
                paired=paired,
                clusters={metric: paired_sums.get(metric, _NO_PAIRS) for metric in paired},
            )
        return out

    def paired_rows(self) -> dict[str, tuple[str, dict[str, tuple[int, int]]]]:
        """Each field's type, and every gold row's (baseline, candidate) classes by case id.

        For disclosure control inside the boundary only (it holds case ids):
        :mod:`chartscore.scoring.comparison_cases` counts distinct cases from it.
        """
        shift = self._coding.pair_shift
        low = (1 << shift) - 1
        bits = self._coding.row_bits
        out: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {}
        for field_id, state in sorted(self._fields.items()):
            rows = self._rows(field_id, "pair")
            pairs = {case: (row & low & bits, row >> shift & bits) for case, row in rows.items()}
            out[field_id] = (state.field_type.value, pairs)
        return out

    def _field_classes(self, side: Side) -> list[FieldClasses]:
        """Each field's rows as (case id -> class) of one system, or of the pair."""
        return [
            (state.group, self._rows(field_id, side), _known)
            for field_id, state in sorted(self._fields.items())
        ]

    def _rows(self, field_id: str, side: Side) -> dict[str, int]:
        state = self._fields[field_id]
        waiting = self._pairs[field_id].baseline_masks
        coding = self._coding
        shift = coding.pair_shift
        low = (1 << shift) - 1
        rows: dict[str, int] = {}
        for case_id, entry in state.cases.items():
            if type(entry) is int:
                baseline, candidate = entry & low, entry >> shift
            else:
                candidate = state.missing(entry)
                baseline = waiting.get(case_id, candidate)
            if side == "baseline":
                rows[case_id] = baseline
            elif side == "candidate":
                rows[case_id] = candidate
            else:
                rows[case_id] = baseline | candidate << shift
        return rows


def _known(entry: object) -> int:
    raise AssertionError("every row of a paired side has its class")  # pragma: no cover


def _paired_binomial(
    pairs: Mapping[tuple[int, int], int], metric: str, plugins: PluginLayout | None
) -> PairedBinomial:
    in_trials, succeeds = row_tests(metric, plugins)
    cells = [0, 0, 0, 0]  # both, baseline only, candidate only, neither
    for (baseline, candidate), count in pairs.items():
        if not in_trials(baseline):
            continue
        first, second = succeeds(baseline), succeeds(candidate)
        cells[0 if first and second else 1 if first else 2 if second else 3] += count
    return PairedBinomial(*cells)


def _pool(
    parts: Iterable[PairedSliceTally],
    *,
    keep_type_metrics: bool,
    clusters: tuple[Mapping[str, ClusterSums], Mapping[str, ClusterSums]],
    paired_clusters: Mapping[str, PairedClusterSums],
) -> PairedSliceTally:
    chosen = list(parts)
    paired: dict[str, PairedBinomial] = {}
    for part in chosen:
        for name, cells in part.paired.items():
            if (name in _TYPE_PAIRED or is_plugin_metric(name)) and not keep_type_metrics:
                continue
            before = paired.get(name)
            paired[name] = (
                cells
                if before is None
                else PairedBinomial(
                    before.both + cells.both,
                    before.baseline_only + cells.baseline_only,
                    before.candidate_only + cells.candidate_only,
                    before.neither + cells.neither,
                )
            )
    return PairedSliceTally(
        baseline=_pool_slices([p.baseline for p in chosen], keep_type_metrics, clusters[0]),
        candidate=_pool_slices([p.candidate for p in chosen], keep_type_metrics, clusters[1]),
        paired=paired,
        clusters={name: paired_clusters.get(name, _NO_PAIRS) for name in paired},
    )


_NO_PAIRS: Final = PairedClusterSums(())


def _pool_slices(
    parts: list[SliceTally], keep_type_metrics: bool, clusters: Mapping[str, ClusterSums]
) -> SliceTally:
    return pool(parts, keep_type_metrics=keep_type_metrics, clusters=clusters)


def compare(
    gold: Iterable[GoldField],
    baseline: Iterable[Prediction],
    candidate: Iterable[Prediction],
    *,
    schema: Schema | Mapping[str, object] | None = None,
    extra_predictions: ExtraPredictions = "error",
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | None = None,
) -> Comparison:
    """Compare two systems' predictions on the same gold, paired row by row.

    Each gold row is one paired trial for the metrics whose trials are gold
    rows (agreement, abstention, the ordinal and tolerance metrics): the
    comparison gives each system's rate and Wilson interval, the rows only one
    system got right, the paired difference (candidate minus baseline) with
    Newcombe's hybrid score interval, and McNemar's exact and mid-p tests
    (docs/metrics.md, "Paired comparison"). Metrics whose trials differ between
    the systems (answered rows, items) are shown side by side, unpaired.

    Args:
        gold: Non-empty iterable of :class:`GoldField`.
        baseline: The reference system's :class:`Prediction` records.
        candidate: The system under test's records (same keys rule as ``score``).
        schema: Optional :class:`Schema` or schema document.
        extra_predictions: As for :func:`chartscore.score`, for each system:
            ``"error"`` (default) refuses a prediction whose key is not in
            gold; ``"ignore"`` skips it and counts it in the comparison's
            ``ignored_prediction_count`` (one count per system).
        confidence: The level of every interval: 0.9, 0.95 (default) or 0.99.
        strata: Each case's declared strata, as for :func:`chartscore.score`: the
            comparison gains each stratum's pooled paired slice (``by_stratum``).

    Returns:
        The value-free :class:`~chartscore.documents.comparison.Comparison`.

    Raises:
        ChartscoreError: as :func:`chartscore.score`, with the input named
            ``baseline`` or ``candidate`` for prediction errors.

    Example:
        >>> from chartscore import GoldField, Prediction, compare
        >>> gold = [GoldField(f"c{i}", "hx.smoking", "categorical", "former") for i in range(4)]
        >>> old = [Prediction(f"c{i}", "hx.smoking", "never") for i in range(4)]
        >>> new = [Prediction(f"c{i}", "hx.smoking", "former") for i in range(3)]
        >>> result = compare(gold, old, new).overall.paired["normalized_agreement"]
        >>> result.candidate_only, result.baseline_only
        (3, 0)
    """
    confidence_option(confidence)
    scorer = PairedScorer(
        None if schema is None else to_schema(schema),
        extra_predictions=extra_predictions,
        strata=strata,
    )
    with collector_paused():
        for row in guarded(gold, GoldField, InputKind.GOLD):
            scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
        scorer.close_gold()
        for answer in guarded(baseline, Prediction, InputKind.BASELINE):
            scorer.add_baseline(row_of(answer))
        for answer in guarded(candidate, Prediction, InputKind.CANDIDATE):
            scorer.add_candidate(row_of(answer))
        tally = scorer.paired_tally()
    return Comparison.from_tally(tally, confidence)
