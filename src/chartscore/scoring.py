"""The join and the single-pass count: private records in, a value-free Tally out.

:class:`Scorer` holds the gold set (the only thing kept in memory), then takes
predictions one at a time: each is joined to its gold row, judged by the
field's :class:`~chartscore.agreement.FieldRule` and reduced to an outcome bit
mask that is counted. The gold value is dropped as soon as its prediction is
seen, so memory grows with the gold set, never with the prediction stream.
:func:`score` is the library entry point over records.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, TypeVar

from chartscore.agreement import (
    ANSWERABLE,
    ANSWERED,
    EARLIER,
    EXACT,
    LATER,
    NORMALIZED,
    SUPPORTED,
    TOLERANCE,
    WITHIN_ONE,
    WRONG_TYPE,
    FieldRule,
    Key,
)
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.model import FieldType, GoldField, Prediction, Value
from chartscore.report import Report
from chartscore.schema import Schema, to_schema
from chartscore.tally import COUNT_NAMES, Binomial, KappaTable, SliceTally, Tally, pool

_SEEN: Final = object()  # a gold row whose prediction has been counted
_UNANSWERABLE: Final = object()  # a gold row with value None


class _Field:
    """Everything kept for one field id: its rule, its gold rows and its counts."""

    __slots__ = (
        "answerable",
        "answered_items",
        "cases",
        "check_gold",
        "field_type",
        "gold_items",
        "gold_keys",
        "kappa_pairs",
        "matched_items",
        "outcome",
        "outcomes",
        "rule",
        "tracks_items",
        "unanswerable",
    )

    def __init__(self, rule: FieldRule) -> None:
        self.rule = rule
        # Copied from the rule: read once per row, so kept one lookup away.
        self.field_type = rule.field_type
        self.check_gold = rule.check_gold
        self.outcome = rule.outcome
        self.tracks_items = rule.tracks_items
        # case id -> (gold value, gold key), _UNANSWERABLE or _SEEN
        self.cases: dict[str, Any] = {}
        self.outcomes: dict[int, int] = {}
        self.answerable = 0
        self.unanswerable = 0
        self.gold_items = 0
        self.answered_items = 0
        self.matched_items = 0
        self.gold_keys: Counter[Key] | None = Counter() if rule.kappa_weighting else None
        self.kappa_pairs: Counter[tuple[Key, Key]] | None = (
            Counter() if rule.kappa_weighting else None
        )


class Scorer:
    """Streaming scorer: add all gold, then predictions, then :meth:`tally`.

    Args:
        schema: Optional field schema (required for ordinal fields).

    All methods raise :class:`ChartscoreError` without location; callers that
    know the input and line re-raise with them.
    """

    def __init__(self, schema: Schema | None = None) -> None:
        self._schema = schema
        self._fields: dict[str, _Field] = {}
        self._gold_closed = False

    def add_gold(self, case_id: str, field_id: str, field_type: FieldType, value: Value) -> None:
        """Add one validated gold row."""
        state = self._fields.get(field_id)
        if state is None or state.field_type is not field_type:
            state = self._field(field_id, field_type)
        cases = state.cases
        size = len(cases)
        if value is None:
            cases.setdefault(case_id, _UNANSWERABLE)
            if len(cases) == size:
                raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
            state.unanswerable += 1
            return
        key = state.check_gold(value, field_id)
        cases.setdefault(case_id, (value, key))
        if len(cases) == size:
            raise ChartscoreError(ErrorCode.DUPLICATE_GOLD_KEY, input=InputKind.GOLD)
        state.answerable += 1
        if state.gold_keys is not None:
            state.gold_keys[key] += 1
        if state.tracks_items:
            state.gold_items += len(key)  # type: ignore[arg-type]

    def _field(self, field_id: str, field_type: FieldType) -> _Field:
        # A field seen for the first time, or a second type for a known one.
        if field_id in self._fields:
            raise ChartscoreError(ErrorCode.INCONSISTENT_FIELD_TYPE, input=InputKind.GOLD)
        state = self._fields[field_id] = _Field(self._rule(field_id, field_type))
        return state

    def _rule(self, field_id: str, field_type: FieldType) -> FieldRule:
        spec = self._schema.get(field_id) if self._schema is not None else None
        if spec is not None and spec.field_type is not field_type:
            raise ChartscoreError(
                ErrorCode.SCHEMA_TYPE_MISMATCH, input=InputKind.SCHEMA, field_id=field_id
            )
        if spec is None and field_type is FieldType.ORDINAL:
            raise ChartscoreError(
                ErrorCode.SCHEMA_REQUIRED, input=InputKind.SCHEMA, field_id=field_id
            )
        return FieldRule(field_type, spec)

    def close_gold(self) -> None:
        """Mark the gold set complete; an empty gold set is refused."""
        if not self._fields:
            raise ChartscoreError(ErrorCode.EMPTY_GOLD, input=InputKind.GOLD)
        self._gold_closed = True

    def add_prediction(self, case_id: str, field_id: str, value: Value, supported: bool) -> None:
        """Join and count one validated prediction.

        ``supported`` is whether its evidence chain supports it (see
        :meth:`chartscore.Prediction.is_supported`); it only counts for answers.
        """
        state = self._fields.get(field_id)
        if state is None:
            raise ChartscoreError(ErrorCode.UNKNOWN_PREDICTION_KEY, input=InputKind.PREDICTIONS)
        cases = state.cases
        entry = cases.get(case_id)
        if entry is None:
            raise ChartscoreError(ErrorCode.UNKNOWN_PREDICTION_KEY, input=InputKind.PREDICTIONS)
        if entry is _SEEN:
            raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY, input=InputKind.PREDICTIONS)
        cases[case_id] = _SEEN
        if value is None:
            mask = 0 if entry is _UNANSWERABLE else ANSWERABLE
        elif entry is _UNANSWERABLE:
            answer = state.rule.answer_key(value)
            mask = ANSWERED if answer is not None else ANSWERED | WRONG_TYPE
            if state.tracks_items:
                state.answered_items += FieldRule.items(None, answer)[0]
        else:
            gold_value, gold_key = entry
            mask, answer = state.outcome(gold_value, gold_key, value)
            if state.kappa_pairs is not None and answer is not None:
                state.kappa_pairs[gold_key, answer] += 1
            if state.tracks_items:
                answered, matched = FieldRule.items(gold_key, answer)
                state.answered_items += answered
                state.matched_items += matched
        if supported and mask & ANSWERED:
            mask |= SUPPORTED
        outcomes = state.outcomes
        outcomes[mask] = outcomes.get(mask, 0) + 1

    def tally(self) -> Tally:
        """Reduce everything to value-free counts; the scorer's values end here."""
        if not self._gold_closed:
            self.close_gold()
        by_field = {
            field_id: _field_tally(self._fields[field_id]) for field_id in sorted(self._fields)
        }
        members: dict[str, list[SliceTally]] = {}
        for field_id, part in by_field.items():
            members.setdefault(self._fields[field_id].rule.field_type.value, []).append(part)
        by_type = {
            name: pool(parts, keep_type_metrics=True) for name, parts in sorted(members.items())
        }
        overall = pool(by_field.values(), keep_type_metrics=False)
        return Tally(overall=overall, by_field=by_field, by_field_type=by_type)


def _count(outcomes: Mapping[int, int], required: int, absent: int = 0) -> int:
    # Predictions whose mask has every ``required`` bit and none of ``absent``.
    return sum(
        n for mask, n in outcomes.items() if mask & required == required and not mask & absent
    )


def _field_tally(state: _Field) -> SliceTally:
    outcomes = state.outcomes
    field_count = state.answerable + state.unanswerable
    present = sum(outcomes.values())
    answered = _count(outcomes, ANSWERED)
    answerable = state.answerable
    counts = dict(
        zip(
            COUNT_NAMES,
            (
                field_count,
                answerable,
                state.unanswerable,
                field_count - present,
                answered,
                present - answered,
            ),
            strict=True,
        )
    )
    metrics = {
        "exact_agreement": Binomial(_count(outcomes, EXACT), answerable),
        "normalized_agreement": Binomial(_count(outcomes, NORMALIZED), answerable),
        "abstention_correctness": Binomial(
            _count(outcomes, ANSWERED | ANSWERABLE) + _count(outcomes, 0, ANSWERED | ANSWERABLE),
            field_count,
        ),
        "answerable_abstention": Binomial(_count(outcomes, ANSWERABLE, ANSWERED), answerable),
        "unanswerable_answer": Binomial(_count(outcomes, ANSWERED, ANSWERABLE), state.unanswerable),
        "wrong_type_answer": Binomial(_count(outcomes, ANSWERED | WRONG_TYPE), answered),
        "evidence_support": Binomial(_count(outcomes, SUPPORTED), answered),
    }
    rule = state.rule
    extra_bits = {
        "tolerance_agreement": TOLERANCE,
        "ordinal_later": LATER,
        "ordinal_earlier": EARLIER,
        "ordinal_within_one": WITHIN_ONE,
    }
    for name in rule.extra_metrics:
        if name in extra_bits:
            metrics[name] = Binomial(_count(outcomes, extra_bits[name]), answerable)
        elif name == "item_precision":
            metrics[name] = Binomial(state.matched_items, state.answered_items)
        elif name == "item_recall":
            metrics[name] = Binomial(state.matched_items, state.gold_items)
        elif name == "majority_baseline":
            assert state.gold_keys is not None
            top = max(state.gold_keys.values(), default=0)
            metrics[name] = Binomial(top, answerable)
    kappa = None
    if rule.kappa_weighting is not None:
        kappa = _kappa_table(state, rule)
    return SliceTally(counts=counts, metrics=metrics, kappa=kappa)


def _kappa_table(state: _Field, rule: FieldRule) -> KappaTable:
    # Replace category keys by positions: ordinal levels keep schema order;
    # other categories get a deterministic order that carries no label.
    assert state.kappa_pairs is not None and state.gold_keys is not None
    if rule.levels:
        size = rule.levels
        position: dict[Key, int] = {level: level for level in range(size)}
    else:
        categories = set(state.gold_keys) | {answer for _, answer in state.kappa_pairs}
        ordered = sorted(categories, key=lambda key: (type(key).__name__, key))
        position = {key: index for index, key in enumerate(ordered)}
        size = len(ordered)
    cells = tuple(
        sorted(
            (position[gold], position[answer], count)
            for (gold, answer), count in state.kappa_pairs.items()
        )
    )
    return KappaTable(cells=cells, size=size, weighting=rule.kappa_weighting)  # type: ignore[arg-type]


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


def _guarded(items: object, kind: type[_T], source: InputKind) -> Iterator[_T]:
    """Iterate a caller's collection; any failure becomes one code with no context.

    Every touch of the caller's object (even ``isinstance``, which runs a lazy
    proxy's ``__class__``) happens inside a guard that drops the exception;
    the coded error is raised outside it. An item that is not a ``kind``
    record is named by its 0-based position, never by its content.
    """
    iterator: Iterator[object] | None = None
    try:
        if not isinstance(items, str | bytes | Mapping):
            iterator = iter(items)  # type: ignore[call-overload]
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        iterator = None
    if iterator is None:
        raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=source)
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

    Returns:
        The :class:`Report`; ``report.to_json()`` is canonical JSON.

    Raises:
        ChartscoreError: ``empty_gold``, ``duplicate_gold_key``,
            ``duplicate_prediction_key``, ``unknown_prediction_key``,
            ``inconsistent_field_type``, ``invalid_collection``,
            ``invalid_record``, or a schema code. Never carries a value, and
            never a ``__cause__`` or ``__context__``.

    Example:
        >>> from chartscore import GoldField, Prediction, score
        >>> gold = [GoldField("c1", "hx.smoking", "categorical", "former")]
        >>> report = score(gold, [Prediction("c1", "hx.smoking", " Former ")])
        >>> report.overall.metric("normalized_agreement").success_count
        1
    """
    # Any caller object is read once into a validated Schema (never touched again).
    scorer = Scorer(None if schema is None else to_schema(schema))
    with collector_paused():
        for row in _guarded(gold, GoldField, InputKind.GOLD):
            scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
        scorer.close_gold()
        for answer in _guarded(predictions, Prediction, InputKind.PREDICTIONS):
            scorer.add_prediction(
                answer.case_id, answer.field_id, answer.value, answer.is_supported
            )
        tally = scorer.tally()
    return Report.from_tally(tally)
