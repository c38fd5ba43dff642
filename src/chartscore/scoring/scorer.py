"""The join and the single-pass count: private records in, a value-free Tally out.

:class:`Scorer` holds the gold set (the only thing kept in memory), then takes
predictions one at a time: each is joined to its gold row, judged by the
field's :class:`~chartscore.scoring.agreement.FieldRule` and reduced to an outcome bit
mask that is counted. The gold value is dropped as soon as its prediction is
seen, so memory grows with the gold set, never with the prediction stream.
:func:`score` is the library entry point over records.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from itertools import repeat
from operator import is_
from typing import Any, Final, Literal, TypeVar, cast

from chartscore.documents.plugin_layout import PluginLayout
from chartscore.documents.report import Report
from chartscore.documents.tally import Tally
from chartscore.errors import (
    ChartscoreError,
    ErrorCode,
    InputKind,
    caller_iterator,
    flag_option,
    word_option,
)
from chartscore.metrics import (
    ANSWERABLE,
    ANSWERED,
    EVIDENCE_BITS,
    NORMALIZED,
    NOT_APPLICABLE,
    WRONG_TYPE,
    FieldType,
    GoldValue,
    Value,
)
from chartscore.records.match_engines import require_match_engines
from chartscore.records.model import GoldField, Prediction
from chartscore.records.prediction_row import PredictionRow, new_row
from chartscore.records.schema import Schema, to_schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.agreement import FieldRule, Key, item_flags
from chartscore.scoring.clusters import FieldClasses, Group, RowCoding, pooled_sums
from chartscore.scoring.partial import FieldCounts, PartialTally, RuleBook
from chartscore.scoring.plugin_judges import PluginSet
from chartscore.scoring.run_usage import UsageCounter
from chartscore.scoring.strata import strata_parts
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option

UNANSWERABLE: Final = object()  # a gold row with value None
SAME_WHEN_EQUAL: Final = frozenset({str, int, bool, frozenset, type(None)})
"""Value types whose equal values (of one type) are judged alike by every rule: a row's plan
is kept by (gold type, gold, answer type, answer). Not Decimal (``1.0`` and ``1.00`` are equal
but differ in digits, which bound a number) nor float (``0.0`` and ``-0.0``)."""
_SAME_IDS: Final = frozenset(map(id, SAME_WHEN_EQUAL))
"""The same types by identity: a caller's type (its own metaclass) is never asked to hash."""
_NUMBER: Final = FieldType.NUMBER
_PLAN_LIMIT: Final = 1 << 12
"""(gold, answer) pairs whose plans a field keeps at once."""
_ANSWERED_ANSWERABLE: Final = ANSWERED | ANSWERABLE
# A gold row whose prediction has been counted holds its row class, an int
# (scoring.clusters): the clustered intervals of pooled slices are read off them.
_IGNORED: Final = -1  # add_row's answer for a skipped extra prediction
NOT_APPLICABLE_ROW: Final = -2
"""add_row's answer for a prediction on a not-applicable gold row: counted apart, no outcome."""
RUN_HEADER_ROW: Final = -3
"""add_row's answer for a predictions file's run header: no prediction (docs/formats.md)."""

ExtraPredictions = Literal["error", "ignore"]
EXTRA_PREDICTIONS: Final = ("error", "ignore")
"""The values of the ``extra_predictions`` option."""


class FieldState:
    """What a scorer keeps for one field id: its rule, its gold rows and its counts (private)."""

    __slots__ = (
        "answer_key",
        "apart",
        "cases",
        "check_gold",
        "coding",
        "counts",
        "counts_above",
        "field_type",
        "gold_keys",
        "group",
        "label_cache",
        "label_count",
        "outcome",
        "planned_rows",
        "plans",
        "proven",
        "rule",
        "tracks_items",
    )

    def __init__(
        self,
        rule: FieldRule,
        counts: FieldCounts,
        coding: RowCoding,
        plugin_metrics: tuple[str, ...],
    ) -> None:
        self.rule = rule
        self.coding = coding
        # The field's place in the pooled slices: its type, the type and plugin metrics it reports.
        self.group: Group = (rule.field_type.value, rule.extra_metrics + plugin_metrics)
        # Copied from the rule and the counts: read once per row, so kept one lookup away.
        self.field_type = rule.field_type
        self.check_gold = rule.check_gold
        self.proven = rule.proven
        self.outcome = rule.outcome
        self.answer_key = rule.answer_key
        self.tracks_items = rule.tracks_items
        self.label_count = len(rule.labels)
        self.label_cache: dict[tuple[Key, Key | None], int] = {}  # (gold, answer) -> label bits
        # Item or label counts sit above a row's mask: its outcome is counted without them.
        self.counts_above = self.tracks_items or bool(self.label_count)
        self.counts = counts
        self.gold_keys = counts.gold_keys
        # case id -> (gold value, gold key), UNANSWERABLE, or the row class (an int) once seen
        self.cases: dict[str, Any] = {}
        # case id -> whether a prediction was seen, for the not-applicable gold rows (kept apart)
        self.apart: dict[str, bool] = {}
        # (gold, answer) -> its Plan, while pairs repeat (None: judged row by row). A plugin
        # judge is the caller's code: it is called once per row, as documented.
        self.plans: dict[tuple[object, ...], Plan] | None = None if rule.plugin_judged else {}
        self.planned_rows = 0  # rows counted when the plans were last emptied

    def plan(self, key: tuple[object, ...], entry: object, value: Value) -> Plan:
        """The plan of a (gold, answer) pair not yet in :attr:`plans`, kept there.

        A full table is emptied; if its pairs were not used twice each on average, the
        field's pairs rarely repeat (free text, measurements) and it stops keeping them.
        """
        counts = self.counts
        plan = row_plan(self, entry, value, counts)
        plans = self.plans
        assert plans is not None
        if len(plans) >= _PLAN_LIMIT:
            rows = sum(counts.outcomes.values())
            if rows - self.planned_rows < 2 * _PLAN_LIMIT:
                self.plans = None
                return plan
            self.planned_rows = rows
            plans.clear()
        plans[key] = plan
        return plan

    def missing(self, entry: object) -> int:
        """The row class of a gold row (``entry``: its gold, or UNANSWERABLE) with no answer."""
        coding = self.coding
        if entry is UNANSWERABLE:
            return coding.missing_class(None)
        gold_key = entry[1]  # type: ignore[index]
        row = coding.missing_class(len(gold_key) if self.tracks_items else 0)
        if self.label_count:
            gold = len(gold_key) if self.tracks_items else 1
            row = coding.with_labels(row, gold, 0, 0, self.label_count)
        return row


class Scorer:
    """Streaming scorer: add all gold, then predictions, then :meth:`tally`.

    Args:
        schema: Optional field schema (required for ordinal fields).
        extra_predictions: ``"error"`` (the contract's rule: a prediction whose
            key is not in gold is refused) or ``"ignore"`` (it is skipped and
            counted in ``ignored_prediction_count``).

    The scorer's counts are a :class:`~chartscore.scoring.partial.PartialTally`
    (:meth:`partial`): one process is the one-partition case of the mergeable
    core. All methods raise :class:`ChartscoreError` without a line; callers
    that know the input and line re-raise with them.
    """

    def __init__(
        self,
        schema: Schema | None = None,
        *,
        extra_predictions: ExtraPredictions = "error",
        strata: CaseStrata | None = None,
    ) -> None:
        ignore_extra = word_option(extra_predictions, EXTRA_PREDICTIONS) == "ignore"
        if strata is not None and (type(strata) is not CaseStrata or schema is None):
            raise ChartscoreError(ErrorCode.USAGE)
        if strata is not None and strata.declared != schema.strata:  # type: ignore[union-attr]
            raise ChartscoreError(ErrorCode.STRATA_NOT_DECLARED, input=InputKind.SCHEMA)
        self._strata = strata
        self._schema = schema
        require_match_engines(schema)  # missing_dependency before anything is read
        self._plugins = PluginSet(schema)  # loads every plugin the schema names, once
        self._rules = RuleBook(self._plugins)
        self._coding = RowCoding(self._plugins.layout)
        self._row_bits = self._coding.row_bits
        self._fields: dict[str, FieldState] = {}
        self._gold_closed = False
        self._ignore_extra = ignore_extra
        self._ignored = 0
        self._classes: dict[int, int] = {}
        # Each case id's first string: every field's table keys its rows by the same string,
        # so a look-up compares one shared string (and the table holds one copy, not one a field).
        self._case_ids: dict[str, str] = {}
        self._usage = UsageCounter()

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one validated gold row (a not-applicable one is kept apart: docs/metrics.md)."""
        case_id = self._case_ids.setdefault(case_id, case_id)
        state = self._fields.get(field_id)
        if state is None or state.field_type is not field_type:
            state = self._field(field_id, field_type)
        cases = state.cases
        size = len(cases)
        counts = state.counts
        if state.apart and case_id in state.apart:
            raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
        if value is NOT_APPLICABLE:
            if case_id in cases:
                raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
            state.apart[case_id] = False
            counts.not_applicable += 1
            return
        if value is None:
            cases.setdefault(case_id, UNANSWERABLE)
            if len(cases) == size:
                raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
            counts.unanswerable += 1
            return
        # check_gold(), its memory of passed values (by gold_proof, written out) read first.
        key = state.proven.get(value if type(value) is str else (type(value), value))
        if key is None:
            key = state.check_gold(value, field_id)
        cases.setdefault(case_id, (value, key))
        if len(cases) == size:
            raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
        counts.answerable += 1
        if state.gold_keys is not None:
            state.gold_keys[key] += 1
        distance_gold = counts.distance_gold
        # has_distance(field_type, key), written out: once per gold row.
        if distance_gold is not None and (field_type is _NUMBER or key[2] is not None):  # type: ignore[index]
            distance_gold[key] = distance_gold.get(key, 0) + 1
        if state.tracks_items:
            counts.gold_items += len(key)  # type: ignore[arg-type]
            if counts.label_gold is not None:
                counts.label_gold.update(key)  # type: ignore[call-overload]

    def _field(self, field_id: str, field_type: FieldType) -> FieldState:
        # A field seen for the first time, or a second type for a known one.
        if field_id in self._fields:
            raise ChartscoreError(ErrorCode.INCONSISTENT_FIELD_TYPE, input=InputKind.GOLD)
        spec = self._schema.get(field_id) if self._schema is not None else None
        if spec is not None and spec.field_type is not field_type:
            raise ChartscoreError(
                ErrorCode.SCHEMA_TYPE_MISMATCH, input=InputKind.SCHEMA, field_id=field_id
            )
        if spec is None and field_type is FieldType.ORDINAL:
            raise ChartscoreError(
                ErrorCode.SCHEMA_REQUIRED, input=InputKind.SCHEMA, field_id=field_id
            )
        rule = self._rules.rule(field_type, spec)
        counts = FieldCounts(field_type, spec, kappa=rule.kappa_weighting is not None)
        layout = self._plugins.layout
        plugin_metrics: tuple[str, ...] = ()
        if layout is not None and spec is not None and spec.plugins:
            plugin_metrics = layout.metric_names_of(spec.plugins)
        state = self._fields[field_id] = FieldState(rule, counts, self._coding, plugin_metrics)
        return state

    def close_gold(self) -> None:
        """Mark the gold set complete; an empty gold set is refused."""
        if not self._fields:
            raise ChartscoreError(ErrorCode.EMPTY_GOLD, input=InputKind.GOLD)
        self._gold_closed = True

    def add_row(self, row: PredictionRow) -> int:
        """Join and count one validated prediction row; returns its outcome bit mask.

        The row's ``evidence`` only counts for answers; its ``uncertainty`` is
        counted for answered answerable rows. A skipped extra prediction returns -1.
        The row's ``usage`` counts once, for this line (docs/metrics.md, "Run cost");
        a run header row returns :data:`RUN_HEADER_ROW`.
        """
        case_id, field_id, value, evidence, uncertainty, usage = row
        if usage is not None and self._usage.add(case_id, usage, InputKind.PREDICTIONS):
            return RUN_HEADER_ROW
        state = self._fields.get(field_id)
        entry = None if state is None else state.cases.get(case_id)
        if entry is None:
            if state is not None and case_id in state.apart:
                return _not_applicable(state, case_id, value)
            if not self._ignore_extra:
                raise ChartscoreError(ErrorCode.UNKNOWN_PREDICTION_KEY, input=InputKind.PREDICTIONS)
            self._ignored += 1
            return _IGNORED
        assert state is not None
        if type(entry) is int:
            raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY, input=InputKind.PREDICTIONS)
        counts = state.counts
        plans = state.plans
        gold = None if entry is UNANSWERABLE else entry[0]
        if plans is not None and id(type(value)) in _SAME_IDS and id(type(gold)) in _SAME_IDS:
            pair = (type(gold), gold, type(value), value)
            plan = plans.get(pair)
            if plan is None:
                plan = state.plan(pair, entry, value)
        else:
            plan = row_plan(state, entry, value, counts)
        # count_plan(state, plan, evidence, counts), written out: once per row.
        row_class, kappa, distance, answered, matched, labelled = plan
        if kappa is not None:
            counts.kappa_pairs[kappa] += 1  # type: ignore[index]  # kept when the plan has one
        if distance is not None:
            distances = counts.distances
            assert distances is not None
            distances[distance] = distances.get(distance, 0) + 1
        if answered or matched:
            counts.answered_items += answered
            counts.matched_items += matched
        if labelled is not None:
            counts.count_labels(*labelled)
        if evidence and row_class & ANSWERED:
            row_class |= EVIDENCE_BITS[evidence]
        outcomes = counts.outcomes
        bits = row_class & self._row_bits if state.counts_above else row_class
        outcomes[bits] = outcomes.get(bits, 0) + 1
        if uncertainty is not None and row_class & _ANSWERED_ANSWERABLE == _ANSWERED_ANSWERABLE:
            uncertain = counts.uncertain
            key = (uncertainty, row_class & NORMALIZED != 0)
            uncertain[key] = uncertain.get(key, 0) + 1
        if row_class > 256:  # one object per distinct class, not per row (small ints are shared)
            row_class = self._classes.setdefault(row_class, row_class)
        state.cases[case_id] = row_class
        return row_class & self._row_bits

    def add_prediction(
        self,
        case_id: str,
        field_id: str,
        value: Value,
        supported: int,
        uncertainty: object = None,
    ) -> int:
        """:meth:`add_row` of ``PredictionRow(case_id, field_id, value, supported, uncertainty)``.

        ``supported`` is the row's evidence state (a bool keeps its old meaning: True is
        supported, False no evidence). Kept for callers written before the row; new code passes a
        :class:`~chartscore.records.prediction_row.PredictionRow`.
        """
        return self.add_row(PredictionRow(case_id, field_id, value, supported, uncertainty))

    @property
    def fields(self) -> Mapping[str, FieldState]:
        """Each gold field id's state (private: gold values and case ids), as it grows."""
        return self._fields

    @property
    def coding(self) -> RowCoding:
        """How this run's row classes are laid out (:mod:`chartscore.scoring.clusters`)."""
        return self._coding

    @property
    def plugin_layout(self) -> PluginLayout | None:
        """Where the schema's plugin metrics sit in a row's outcome mask, or None."""
        return self._plugins.layout

    @property
    def case_strata(self) -> CaseStrata | None:
        """The strata file's cases (private: case ids), for the stratum slices."""
        return self._strata

    @property
    def ignores_extra(self) -> bool:
        """Whether a prediction whose key is not in gold is skipped (``"ignore"``)."""
        return self._ignore_extra

    @property
    def rule_book(self) -> RuleBook:
        """The run's field rules (to reduce this scorer's partial tally: ``partial.tally``)."""
        return self._rules

    @property
    def ignored_prediction_count(self) -> int | None:
        """Predictions skipped for a key not in gold; None unless ``extra_predictions="ignore"``."""
        return self._ignored if self._ignore_extra else None

    def unused_schema_fields(self) -> list[str]:
        """Schema field ids that no gold row uses, sorted (a typo drops a tolerance)."""
        if self._schema is None:
            return []
        return sorted(set(self._schema.fields) - set(self._fields))

    def partial(self) -> PartialTally:
        """This scorer's counts as a mergeable partial tally (private: see partial.py).

        Raises:
            ChartscoreError: ``strata_case_missing`` when a strata file was given
                and lacks a gold case.
        """
        return self.counts_partial(with_strata=True)

    def counts_partial(self, *, with_strata: bool) -> PartialTally:
        """:meth:`partial`, with or without the stratum counts (a paired run counts its own)."""
        strata = None
        if with_strata and self._strata is not None:
            named = [(field_id, self._fields[field_id]) for field_id in sorted(self._fields)]
            rows = [(name, (state.group, state.cases, state.missing)) for name, state in named]
            strata = strata_parts(self._strata, rows, self._coding)
        return PartialTally(
            {field_id: state.counts for field_id, state in self._fields.items()},
            self.ignored_prediction_count,
            clusters=pooled_sums(self.field_classes(), self._coding),
            plugins=self._plugins.layout,
            strata=strata,
            run=self._usage.run_cost(),
        )

    def field_classes(self) -> list[FieldClasses]:
        """Each field's group and rows (case id, row class), for the pooled slices' sums."""
        return [
            (state.group, state.cases, state.missing) for _, state in sorted(self._fields.items())
        ]

    def tally(self) -> Tally:
        """Reduce everything to value-free counts; the scorer's values end here."""
        if not self._gold_closed:
            self.close_gold()
        return self.partial().tally(self._rules)

    def missing_rows(self) -> Iterator[tuple[str, str, Key | None]]:
        """(case id, field id, gold key or None) of every gold row with no prediction yet."""
        for field_id, state in self._fields.items():
            for case_id, entry in state.cases.items():
                if type(entry) is int:
                    continue
                yield case_id, field_id, (None if entry is UNANSWERABLE else entry[1])

    def field_type(self, field_id: str) -> FieldType:
        """The type of a gold field id."""
        return self._fields[field_id].field_type

    def field_rule(self, field_id: str) -> FieldRule:
        """The agreement rule of a gold field id."""
        return self._fields[field_id].rule


def _not_applicable(state: FieldState, case_id: str, value: Value) -> int:
    # A prediction on a not-applicable gold row: an answer is counted apart, an abstention
    # nowhere; the row keeps no outcome.
    if state.apart[case_id]:
        raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY, input=InputKind.PREDICTIONS)
    state.apart[case_id] = True
    if value is not None:
        state.counts.not_applicable_answer += 1
    return NOT_APPLICABLE_ROW


_Pair = tuple[Key, Key]
Plan = tuple[int, _Pair | None, _Pair | None, int, int, _Pair | None]
"""What one prediction makes of its gold row, its evidence aside: (row class, kappa pair or
None, distance pair or None, answered items, matched items, label pair or None): the class,
and the (gold key, answer key) pairs and item counts the row adds (:func:`count_plan`)."""


def row_plan(state: FieldState, entry: object, value: Value, counts: FieldCounts) -> Plan:
    """The :data:`Plan` of an answer ``value`` to the gold row ``entry``: judged, not counted.

    A function of the gold value and the answer alone (and of which tables ``counts``
    keeps), so rows with the same pair share one plan (:meth:`FieldState.plan`).
    """
    answer: Key | None = None
    kappa: _Pair | None = None
    distance: _Pair | None = None
    labelled: _Pair | None = None
    answered = matched = 0
    if value is None:
        if entry is UNANSWERABLE:
            mask = 0
        else:
            mask = ANSWERABLE
            if state.tracks_items:
                bits, answered, matched = _item_bits(state.coding, entry[1], None)  # type: ignore[index]
                mask |= bits
    elif entry is UNANSWERABLE:
        answer = state.answer_key(value)
        mask = ANSWERED if answer is not None else ANSWERED | WRONG_TYPE
        if state.tracks_items:
            bits, answered, matched = _item_bits(state.coding, None, answer)
            mask |= bits
    else:
        gold_value: object
        gold_key: Key
        gold_value, gold_key = entry  # type: ignore[misc]
        mask, answer = state.outcome(gold_value, gold_key, value)
        if counts.kappa_pairs is not None and answer is not None:
            kappa = (gold_key, answer)
        # Numbers always have a distance; dates only at full precision (day not None).
        if (
            counts.distances is not None
            and answer is not None
            and (
                state.field_type is FieldType.NUMBER
                or (gold_key[2] is not None and answer[2] is not None)  # type: ignore[index]
            )
        ):
            distance = (gold_key, answer)
        if state.tracks_items:
            bits, answered, matched = _item_bits(state.coding, gold_key, answer)
            mask |= bits
    if state.label_count and entry is not UNANSWERABLE:
        if state.tracks_items:
            mask, labelled = _label_bits(state, entry, value, mask, answer, counts=counts)
        else:  # one label per row: its label counts depend on (gold, answer) only
            pair = (entry[1], answer)  # type: ignore[index]
            label_bits = state.label_cache.get(pair)
            if label_bits is None:
                label_bits = _label_bits(state, entry, value, 0, answer, counts=counts)[0]
                state.label_cache[pair] = label_bits
            mask |= label_bits
    return mask, kappa, distance, answered, matched, labelled


def count_plan(state: FieldState, plan: Plan, evidence: int, counts: FieldCounts) -> int:
    """Count one row judged to ``plan`` (with its ``evidence`` state) into ``counts``.

    Returns the row's class: the plan's, with the evidence bits of an answer.
    """
    mask, kappa, distance, answered, matched, labelled = plan
    if kappa is not None:
        counts.kappa_pairs[kappa] += 1  # type: ignore[index]  # kept when the plan has one
    if distance is not None:
        distances = counts.distances
        assert distances is not None
        distances[distance] = distances.get(distance, 0) + 1
    if answered or matched:
        counts.answered_items += answered
        counts.matched_items += matched
    if labelled is not None:
        counts.count_labels(*labelled)
    if evidence and mask & ANSWERED:
        mask |= EVIDENCE_BITS[evidence]
    outcomes = counts.outcomes
    bits = mask & state.coding.row_bits if state.counts_above else mask
    outcomes[bits] = outcomes.get(bits, 0) + 1
    return mask


def judge(
    state: FieldState, entry: object, value: Value, evidence: int, counts: FieldCounts
) -> int:
    """Count one prediction against its gold row ``entry`` into ``counts``; return its class.

    The class is the outcome mask (``class & coding.row_bits``), with a multi-select
    row's item counts above it (:mod:`chartscore.scoring.clusters`).
    """
    return count_plan(state, row_plan(state, entry, value, counts), evidence, counts)


def count_uncertainty(counts: FieldCounts, row: int, uncertainty: object) -> None:
    """Count an answered answerable row's declared uncertainty against its agreement.

    Rows without one are not counted: they are the answered answerable rows less these.
    """
    if uncertainty is not None and row & _ANSWERED_ANSWERABLE == _ANSWERED_ANSWERABLE:
        key = (uncertainty, row & NORMALIZED != 0)
        counts.uncertain[key] = counts.uncertain.get(key, 0) + 1


def _label_bits(
    state: FieldState,
    entry: object,
    value: Value,
    mask: int,
    answer: Key | None,
    *,
    counts: FieldCounts,
) -> tuple[int, tuple[Key, Key] | None]:
    # An answerable row of a labelled field: its gold, declared and matched label counts, and
    # the (gold, answer) pair a multi-select row of the right type counts label by label.
    gold_key: Key = entry[1]  # type: ignore[index]
    rule = state.rule
    multi = state.tracks_items
    gold = len(gold_key) if multi else 1  # type: ignore[arg-type]
    declared = matched = 0
    labelled = None
    if value is not None and answer is not None:
        declared = rule.declared_answers(answer)
        matched = len(answer & gold_key) if multi else int(answer == gold_key)  # type: ignore[operator]
        if counts.label_rows is not None:
            labelled = (gold_key, answer)
    return state.coding.with_labels(mask, gold, declared, matched, state.label_count), labelled


def _item_bits(coding: RowCoding, gold_key: Key | None, answer: Key | None) -> tuple[int, int, int]:
    # A multi-select row's item flags and counts (its class bits), answered and matched items.
    answered, matched = FieldRule.items(gold_key, answer)  # type: ignore[arg-type]
    gold = len(gold_key) if gold_key is not None else 0  # type: ignore[arg-type]
    bits = coding.with_items(item_flags(gold, answered, matched), gold, answered, matched)
    return bits, answered, matched


_T = TypeVar("_T")


class collector_paused:  # noqa: N801 - used like a function: ``with collector_paused():``
    """Pause Python's cyclic garbage collector for the duration of a scoring run.

    The scorer creates no reference cycles, but it keeps millions of small
    long-lived objects (the gold set), and every automatic collection would
    rescan them: about 8% of a 10^6-row run. Reference counting still frees
    everything as usual; the collector is restored on exit, even on error.
    """

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._was_enabled:
            gc.enable()


def guarded(items: object, kind: type[_T], source: InputKind) -> Iterator[_T]:
    """Iterate a caller's collection; any failure becomes one code with no context.

    Every touch of the caller's object (even ``isinstance``, which runs a lazy
    proxy's ``__class__``) happens inside a guard that drops the exception;
    the coded error is raised outside it. An item that is not a ``kind``
    record is named by its 0-based position, never by its content.
    """
    # Exactly a list or tuple: iterating it runs no caller code, so no guard is needed; when
    # every item is a ``kind`` record (checked in one pass in C), it is its own iterator.
    if type(items) is list or type(items) is tuple:
        records = cast("list[_T] | tuple[_T, ...]", items)
        if all(map(is_, map(type, records), repeat(kind))):  # identity only: no caller code
            return iter(records)
    return _item_by_item(items, kind, source)


def _item_by_item(items: object, kind: type[_T], source: InputKind) -> Iterator[_T]:
    # guarded(), item by item: a caller's iterator, or a list with an item of another type.
    iterator = caller_iterator(items)
    if iterator is None:
        raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=source)
    if type(items) is list or type(items) is tuple:
        for index, item in enumerate(items):
            if type(item) is not kind:
                raise ChartscoreError(ErrorCode.INVALID_RECORD, input=source, item=index)
            yield item
        return
    index = 0
    while True:
        failed = False
        try:
            item = next(iterator)
        except StopIteration:
            return
        except Exception:  # noqa: BLE001
            failed = True
        if failed:
            raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=source)
        if type(item) is not kind:
            raise ChartscoreError(ErrorCode.INVALID_RECORD, input=source, item=index)
        yield item
        index += 1


def score(
    gold: Iterable[GoldField],
    predictions: Iterable[Prediction],
    *,
    schema: Schema | Mapping[str, object] | None = None,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | None = None,
) -> Report:
    """Score predictions against gold, field by field, into a value-free report.

    Joins on ``(case_id, field_id)``. A gold row with no prediction is
    *missing* (never an abstention); a prediction with value None is an
    explicit abstention. Counts and metrics are computed for the overall set,
    each field id and each field type, exactly as docs/metrics.md defines them.

    Args:
        gold: Non-empty iterable of :class:`GoldField`; keys must be unique and
            each field id must have one type.
        predictions: Iterable of :class:`Prediction` (may be empty); keys must be
            unique and present in gold. Consumed once, in a single pass.
        schema: Optional :class:`Schema` or schema document (the JSON shape),
            required for ordinal fields.
        extra_predictions: ``"error"`` (default, the contract's rule) refuses a
            prediction whose key is not in gold; ``"ignore"`` skips it and
            counts it in the report's ``ignored_prediction_count`` (gold often
            covers a sample of the charts a model ran on).
        strict_schema: Refuse a schema that declares a field id no gold row
            uses (``schema_field_unused``); otherwise such entries are simply
            unused (the command line warns about them).
        confidence: The level of every interval: 0.9, 0.95 (default) or 0.99.
            Pooled slices (overall, field types) carry a case-clustered
            interval beside the Wilson interval (docs/metrics.md).
        strata: Each case's declared strata (:class:`~chartscore.records.strata.CaseStrata`,
            from :func:`chartscore.io.load_strata` or ``CaseStrata.from_mapping``):
            the report gains stratum slices (docs/reports.md, "Stratum slices").

    Returns:
        The :class:`Report`; ``report.to_json()`` is canonical JSON.

    Raises:
        ChartscoreError: ``empty_gold``, ``duplicate_gold_key``,
            ``duplicate_prediction_key``, ``unknown_prediction_key``,
            ``inconsistent_field_type``, ``invalid_collection``,
            ``invalid_record``, ``schema_field_unused``, a schema code,
            ``invalid_gold_pattern`` or ``match_text_too_long`` (match modes),
            ``missing_dependency`` for a schema that declares a match mode
            without ``chartscore[match]``, or
            ``usage`` for an option that is not exactly one of its documented
            values (``extra_predictions`` a ``str``, ``strict_schema`` a
            ``bool``, ``confidence`` one of the three levels, a ``float``).
            Never carries a value, and never a ``__cause__`` or ``__context__``.

    Example:
        >>> from chartscore import GoldField, Prediction, score
        >>> gold = [GoldField("c1", "hx.smoking", "categorical", "former")]
        >>> report = score(gold, [Prediction("c1", "hx.smoking", " Former ")])
        >>> report.overall.metric("normalized_agreement").success_count
        1
    """
    check_options(extra_predictions, strict_schema)
    confidence_option(confidence)
    # Any caller object is read once into a validated Schema (never touched again).
    scorer = Scorer(
        None if schema is None else to_schema(schema),
        extra_predictions=extra_predictions,
        strata=strata,
    )
    with collector_paused():
        feed_records(scorer, gold, predictions, strict_schema=strict_schema)
        tally = scorer.tally()
    return Report.from_tally(tally, confidence)


def feed_records(
    scorer: Scorer,
    gold: Iterable[GoldField],
    predictions: Iterable[Prediction],
    *,
    strict_schema: bool = False,
) -> None:
    """Add gold records, close gold, then join predictions (see :func:`score`)."""
    # Once per row, millions of times: methods bound once, support tested inline.
    add_gold = scorer.add_gold
    for row in guarded(gold, GoldField, InputKind.GOLD):
        add_gold(row.case_id, row.field_id, row.field_type, row.value)
    scorer.close_gold()
    if flag_option(strict_schema):
        refuse_unused_schema_fields(scorer)
    add_row = scorer.add_row
    for answer in guarded(predictions, Prediction, InputKind.PREDICTIONS):
        # row_of(answer), written out: one call less per row.
        chain = answer.evidence_chain
        fields: tuple[str, str, Value, int, object, None]
        if chain is None:
            fields = (answer.case_id, answer.field_id, answer.value, 0, None, None)
        else:
            field_id = answer.field_id
            evidence = chain.evidence_state(field_id, answer.normalized_fact_digest)
            fields = (answer.case_id, field_id, answer.value, evidence, chain.uncertainty, None)
        add_row(new_row(PredictionRow, fields))


def row_of(answer: Prediction) -> PredictionRow:
    """The row a scorer takes for a :class:`~chartscore.Prediction` record: its chain reduced."""
    chain = answer.evidence_chain
    if chain is None:
        return new_row(
            PredictionRow, (answer.case_id, answer.field_id, answer.value, 0, None, None)
        )
    field_id = answer.field_id
    evidence = chain.evidence_state(field_id, answer.normalized_fact_digest)
    fields = (answer.case_id, field_id, answer.value, evidence, chain.uncertainty, None)
    return new_row(PredictionRow, fields)


def check_options(extra_predictions: object, strict_schema: object) -> None:
    """Refuse, with ``usage``, scoring options that are not exactly their documented values.

    Checked before any input is read, by exact type: a caller's object never runs code here.
    """
    word_option(extra_predictions, EXTRA_PREDICTIONS)
    flag_option(strict_schema)


def refuse_unused_schema_fields(scorer: Scorer) -> None:
    """Raise ``schema_field_unused`` naming the first schema field id no gold row uses."""
    unused = scorer.unused_schema_fields()
    if unused:
        raise ChartscoreError(
            ErrorCode.SCHEMA_FIELD_UNUSED, input=InputKind.SCHEMA, field_id=unused[0]
        )
