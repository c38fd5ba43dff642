"""The scoring vocabulary: the field types, a row's outcome bits and the metric catalog.

Every layer reads the built-in metrics from :data:`CATALOG`, one row per metric, instead of
keeping its own list: the tally and the documents (which metrics a slice of each type
reports, what each one's trials equal), scoring (which rows each metric counts), disclosure
(which outcome classes each number sums, which numbers are hidden last) and the gates. A new
binomial metric is a row here, the bit its judge sets (:mod:`chartscore.scoring.agreement`)
and its definition (:mod:`chartscore.render.definitions`, docs/metrics.md):
docs/architecture.md, "One new metric, end to end".

The field types sit here because a metric row names the types it applies to; the module
holds names, bit numbers and tests on them, never a value.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, final

from chartscore.errors import ChartscoreError, ErrorCode

Scalar = str | int | float | Decimal | bool
Value = Scalar | frozenset[str] | None
"""A field value: None (unanswerable gold / explicit abstention), a scalar, or a
set of strings for multi-select fields."""


@final
class NotApplicable:
    """The gold state of a row whose field does not apply to the chart (docs/formats.md).

    A gold line ``{"...", "value": null, "not_applicable": true}`` is read as the gold value
    :data:`NOT_APPLICABLE`, the one instance: such a row is in no count or metric denominator
    of its slice, only in ``not_applicable_count``, and an answer there is counted apart as
    ``not_applicable_answer`` (docs/metrics.md, "Not applicable").
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_APPLICABLE"

    def __reduce__(self) -> str:
        return "NOT_APPLICABLE"  # pickled as the one instance (the Dask engine's workers)


NOT_APPLICABLE: Final = NotApplicable()
"""The gold value of a not-applicable row: :class:`NotApplicable`'s one instance."""

GoldValue = Value | NotApplicable
"""A gold row's value: a :data:`Value`, or :data:`NOT_APPLICABLE`."""

NOT_APPLICABLE_COUNTS: Final = ("not_applicable_count", "not_applicable_answer")
"""The counts of not-applicable gold rows a slice reports beside its six (only when it has
such rows): the rows, and those a system answered (a non-null prediction). Neither is in any
other count or metric's trials (docs/metrics.md, "Not applicable")."""


class FieldType(enum.StrEnum):
    """The closed set of field types; each has its own normalization."""

    TEXT = "text"
    CATEGORICAL = "categorical"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATE = "date"
    ORDINAL = "ordinal"
    MULTI = "multi"


def to_field_type(value: object) -> FieldType:
    """A :class:`FieldType` from a member or its exact string value."""
    found = field_type_or_none(value)
    if found is None:
        raise ChartscoreError(ErrorCode.INVALID_FIELD_TYPE)
    return found


def field_type_or_none(value: object) -> FieldType | None:
    """The :class:`FieldType` a member or its exact string value names; else None.

    Checked by ``type()`` first, so a caller's object is never asked anything.
    """
    if type(value) is FieldType:
        return value
    if type(value) is str and value in FieldType._value2member_map_:
        return FieldType(value)
    return None


# A gold row's outcome bits: what its prediction earned (scoring sets them, one mask per row).
ANSWERED: Final = 1
ANSWERABLE: Final = 2
EXACT: Final = 4
NORMALIZED: Final = 8
SUPPORTED: Final = 16
TOLERANCE: Final = 32
LATER: Final = 64
EARLIER: Final = 128
WITHIN_ONE: Final = 256
WRONG_TYPE: Final = 512  # an answer that is not a value of the field's type
# Row flags used only to count the distinct cases behind a number (disclosure):
MISSING: Final = 1024  # a gold row with no prediction (never in a prediction's mask)
GOLD_ITEMS: Final = 2048  # multi-select: the gold set has items
ANSWERED_ITEMS: Final = 4096  # the answer set has items
MATCHED_ITEMS: Final = 8192  # some answered item matches gold
UNMATCHED_ANSWERED: Final = 16384  # some answered item does not match
UNMATCHED_GOLD: Final = 32768  # some gold item was not answered
FUZZY: Final = 1 << 16  # a fuzzy field's answer is similar enough to gold
PATTERN: Final = 1 << 17  # a regex field's answer matches the gold pattern
EVIDENCED: Final = 1 << 18  # an answer's evidence chain has a source location (any kind)
# Plugins' labels take the bits from 19 up (documents/plugin_layout.FIRST_BIT).
EVIDENCE_BITS: Final = (0, EVIDENCED | SUPPORTED, EVIDENCED)
"""The bits an answer earns from its prediction row's evidence state, by that state:
:data:`~chartscore.records.prediction_row.NO_EVIDENCE` (0, or False), ``SUPPORTED_EVIDENCE``
(1, or True) and ``UNSUPPORTED_EVIDENCE`` (2). Support needs a clinical-record source, so a
supported answer is always evidenced."""

Test = tuple[tuple[int, int], ...]
"""Which rows pass, on their outcome mask: any of its (required bits, forbidden bits)."""


def passes(test: Test, mask: int) -> bool:
    """Whether a row with outcome ``mask`` passes ``test``."""
    return any(mask & required == required and not mask & forbidden for required, forbidden in test)


COUNT_TESTS: Final[dict[str, Test]] = {
    "field_count": ((0, 0),),
    "answerable_count": ((ANSWERABLE, 0),),
    "unanswerable_count": ((0, ANSWERABLE),),
    "missing_count": ((MISSING, 0),),
    "answered_count": ((ANSWERED, 0),),
    "abstained_count": ((0, ANSWERED | MISSING),),
}
"""The six counts every slice reports, in report order, and which rows each counts."""

COUNT_NAMES: Final = tuple(COUNT_TESTS)

ITEM_COUNT_TESTS: Final[dict[str, Test]] = {
    "answered_items": ((ANSWERED_ITEMS, 0),),
    "gold_items": ((GOLD_ITEMS, 0),),
}
"""A multi-select field's item counts, and the rows behind each (rows with such items)."""

# A metric's family: every slice reports it, a slice of its types reports it, or a field with
# declared labels reports it per label (and pooled); each family is modelled apart in disclosure.
CORE: Final = "core"
TYPE: Final = "type"
LABEL: Final = "label"
# How its trials relate across two systems on one gold set (a comparison).
PAIRED: Final = "paired"  # the same gold rows for both: a paired 2 x 2 table
UNPAIRED: Final = "unpaired"  # the system's own answers or items: side by side
GOLD_ONLY: Final = "gold_only"  # the gold set alone, the same for both: left out
# What its successes count.
ROWS: Final = "rows"  # the rows whose mask passes ``successes``
ITEMS: Final = "items"  # matched multi-select items (``successes`` picks the rows behind them)
MAJORITY: Final = "majority"  # answerable rows in gold's most common category
LABELS: Final = "labels"  # a label's confusion counts (stats.confusion)
# The field options (beside its type) a type metric needs; FieldRule and the disclosure
# model's FieldShape say which a field has.
ALWAYS: Final = ""
TOLERANCE_OPTION: Final = "tolerance"
FUZZY_OPTION: Final = "fuzzy"
REGEX_OPTION: Final = "regex"
LABELS_OPTION: Final = "labels"


@dataclass(frozen=True, slots=True)
class Metric:
    """One built-in binomial metric (docs/metrics.md).

    Attributes:
        name: Its report name, also its definition's key (render/definitions.py).
        family: :data:`CORE`, :data:`TYPE` or :data:`LABEL`.
        types: The field types whose slices may report it.
        option: The field option it also needs (:data:`ALWAYS` for none).
        trials: The count its trials equal: a :data:`COUNT_NAMES` name, or for item
            metrics ``answered_items`` / ``gold_items``.
        successes: Which rows succeed (for items, the rows with a matched item).
        counts: :data:`ROWS`, :data:`ITEMS`, :data:`MAJORITY` or :data:`LABELS`.
        pairing: :data:`PAIRED`, :data:`UNPAIRED` or :data:`GOLD_ONLY`.
        error: Its successes are errors: lower is better.
        hidden_last: Its disclosure cost: a field slice's agreement rate, which people need
            most, so suppression hides it last.
        failures: Item metrics: the rows behind its failures (an unmatched item).
        optional: A core metric added after documents of the current formats were first
            written: a document without it still reads (it had no such number), and every
            reader and rendering takes its absence as "not reported".
    """

    name: str
    family: str
    types: frozenset[FieldType]
    option: str
    trials: str
    successes: Test
    counts: str = ROWS
    pairing: str = PAIRED
    error: bool = False
    hidden_last: bool = False
    failures: Test = ()
    optional: bool = False

    def applies(self, field_type: FieldType, options: Iterable[str]) -> bool:
        """Whether a field of ``field_type`` with these options reports this metric."""
        return field_type in self.types and (self.option == ALWAYS or self.option in options)


_ALL: Final = frozenset(FieldType)
_ANSWERABLE: Final = "answerable_count"
_T = FieldType
_NUMBERS: Final = (_T.NUMBER, _T.DATE)
_KAPPA: Final = frozenset({_T.CATEGORICAL, _T.BOOLEAN, _T.ORDINAL})
_OWN: Final = {"pairing": UNPAIRED}  # trials are the system's own answers: side by side


def _core(name: str, trials: str, *successes: tuple[int, int], **more: Any) -> Metric:
    # A metric every slice reports.
    return Metric(name, CORE, _ALL, ALWAYS, trials, successes, **more)


def _typed(name: str, types: Iterable[FieldType], option: str, bit: int, **more: Any) -> Metric:
    # A type metric of the answerable rows that succeeds on one more bit.
    successes = ((ANSWERABLE | bit, 0),)
    return Metric(name, TYPE, frozenset(types), option, _ANSWERABLE, successes, **more)


def _items(name: str, trials: str, unmatched: int) -> Metric:
    # A multi-select item metric: it counts items, not rows.
    return Metric(
        name, TYPE, frozenset({_T.MULTI}), ALWAYS, trials, ((MATCHED_ITEMS, 0),), counts=ITEMS,
        pairing=UNPAIRED, hidden_last=True, failures=((unmatched, 0),),
    )  # fmt: skip


def _label(name: str, trials: str) -> Metric:
    # A per-label confusion metric: its counts come from the label's table.
    types = frozenset({_T.CATEGORICAL, _T.BOOLEAN, _T.MULTI})
    return Metric(name, LABEL, types, LABELS_OPTION, trials, (), counts=LABELS, pairing=UNPAIRED)


CATALOG: Final[tuple[Metric, ...]] = (
    _core("exact_agreement", _ANSWERABLE, (ANSWERABLE | EXACT, 0), hidden_last=True),
    _core("normalized_agreement", _ANSWERABLE, (ANSWERABLE | NORMALIZED, 0), hidden_last=True),
    _core(
        "abstention_correctness",
        "field_count",
        (ANSWERED | ANSWERABLE, 0),  # answerable and answered, or
        (0, ANSWERABLE | ANSWERED | MISSING),  # unanswerable and abstained
    ),
    _core("answerable_abstention", _ANSWERABLE, (ANSWERABLE, ANSWERED | MISSING), error=True),
    _core("unanswerable_answer", "unanswerable_count", (ANSWERED, ANSWERABLE), error=True),
    _core("wrong_type_answer", "answered_count", (ANSWERED | WRONG_TYPE, 0), error=True, **_OWN),
    _core("evidence_support", "answered_count", (ANSWERED | SUPPORTED, 0), **_OWN),
    _core("evidence_provided", "answered_count", (ANSWERED | EVIDENCED, 0), optional=True, **_OWN),
    _typed("tolerance_agreement", _NUMBERS, TOLERANCE_OPTION, TOLERANCE, hidden_last=True),
    _typed("fuzzy_agreement", (_T.TEXT,), FUZZY_OPTION, FUZZY, hidden_last=True),
    _typed("pattern_agreement", (_T.TEXT,), REGEX_OPTION, PATTERN, hidden_last=True),
    _typed("ordinal_later", (_T.ORDINAL,), ALWAYS, LATER, error=True),
    _typed("ordinal_earlier", (_T.ORDINAL,), ALWAYS, EARLIER, error=True),
    _typed("ordinal_within_one", (_T.ORDINAL,), ALWAYS, WITHIN_ONE, hidden_last=True),
    _items("item_precision", "answered_items", UNMATCHED_ANSWERED),
    _items("item_recall", "gold_items", UNMATCHED_GOLD),
    Metric("majority_baseline", TYPE, _KAPPA, ALWAYS, _ANSWERABLE, (), MAJORITY, GOLD_ONLY),
    _label("sensitivity", "gold_positives"),
    _label("specificity", "gold_negatives"),
    _label("ppv", "answered_positives"),
    _label("npv", "answered_negatives"),
)
"""Every built-in binomial metric, in report order."""

METRICS: Final = {metric.name: metric for metric in CATALOG}
"""The catalog by name."""


def names(keep: Callable[[Metric], bool]) -> tuple[str, ...]:
    """The names of the catalog's metrics that ``keep`` keeps, in report order."""
    return tuple(metric.name for metric in CATALOG if keep(metric))


def field_metrics(field_type: FieldType, options: Iterable[str]) -> tuple[str, ...]:
    """The type and label metrics a field of ``field_type`` with these options reports."""
    found = frozenset(options)
    return names(lambda m: m.family != CORE and m.applies(field_type, found))


def trial_rows(metric: Metric) -> Test:
    """Which rows are behind a rows or items metric's trials."""
    return COUNT_TESTS.get(metric.trials) or ITEM_COUNT_TESTS[metric.trials]


def options_of(metric_names: Iterable[str]) -> frozenset[str]:
    """The field options the built-in metrics among ``metric_names`` need."""
    return frozenset(METRICS[name].option for name in metric_names if name in METRICS)
