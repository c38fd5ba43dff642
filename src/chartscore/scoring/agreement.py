"""Per-field agreement rules: how one answer is judged against one gold value.

A :class:`FieldRule` is built once per field from its type and optional
:class:`~chartscore.records.schema.FieldSpec`. ``outcome`` turns one (gold, answer) pair
into a bit mask of the successes it earns; scoring only ever adds masks up.
This module and ``scoring`` are the last places a value exists.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable
from datetime import date
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind

# The outcome bits are the catalog's; scoring sets them here. They stay importable from here
# (their old home) for callers outside chartscore; chartscore's own modules import the catalog.
from chartscore.metrics import (  # noqa: F401
    ANSWERABLE,
    ANSWERED,
    ANSWERED_ITEMS,
    EARLIER,
    EXACT,
    FUZZY,
    FUZZY_OPTION,
    GOLD_ITEMS,
    LABELS_OPTION,
    LATER,
    MATCHED_ITEMS,
    MISSING,
    NORMALIZED,
    PATTERN,
    REGEX_OPTION,
    SUPPORTED,
    TOLERANCE,
    TOLERANCE_OPTION,
    UNMATCHED_ANSWERED,
    UNMATCHED_GOLD,
    WITHIN_ONE,
    WRONG_TYPE,
    FieldType,
    field_metrics,
)
from chartscore.records.match_engines import MAX_REGEX_ANSWER, fuzzy_text_limit
from chartscore.records.normalize import (
    DateKey,
    boolean_key,
    date_key,
    multi_key,
    normalize_text,
    number_key,
    text_key,
)
from chartscore.records.pattern import Pattern, compile_pattern
from chartscore.records.schema import FieldSpec
from chartscore.records.similarity import SimilarityTest


def item_flags(gold: int, answered: int, matched: int) -> int:
    """The item flags of a multi-select row with these item counts."""
    flags = 0
    if gold:
        flags |= GOLD_ITEMS
    if answered:
        flags |= ANSWERED_ITEMS
    if matched:
        flags |= MATCHED_ITEMS
    if answered > matched:
        flags |= UNMATCHED_ANSWERED
    if gold > matched:
        flags |= UNMATCHED_GOLD
    return flags


_CACHE_LIMIT: Final = 1 << 16
_REMEMBERED_ANSWER: Final = 256
_MATCH_CACHE_LIMIT: Final = 1 << 14
"""(pattern, answer) matches remembered per rule, of answers of at most 256 characters (codes,
short phrases): at most 4 Mi characters of answers kept."""
_PATTERN_CACHE_LIMIT: Final = 32
"""Compiled gold patterns kept per rule: each may hold RE2's memory budget
(records.pattern.PATTERN_MEMORY, 2 MiB), so together at most 64 MiB."""
# Exact arithmetic for tolerances: numbers are bounded (100 digits, exponent
# +-9999), so 40,000 digits of precision make every difference exact.
_EXACT = decimal.Context(
    prec=40_000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[decimal.Inexact]
)

Key = object
"""A normalized value; only ever compared, hashed and counted inside scoring."""


def _cached(key: Callable[[object], Key | None]) -> Callable[[object], Key | None]:
    # Categorical answers repeat a handful of strings millions of times.
    cache: dict[object, Key | None] = {}

    def lookup(value: object) -> Key | None:
        if type(value) is not str:
            return key(value)
        found = cache.get(value, cache)
        if found is not cache:
            return found
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        result = cache[value] = key(value)
        return result

    return lookup


# Any Unicode decimal digits, as number literals accept (docs/metrics.md).
_INTEGER_LITERAL: Final = re.compile(r"[+-]?\d+").fullmatch


def _ordinal_key(spec: FieldSpec) -> Callable[[object], Key | None]:
    ints, texts = spec.level_index()

    def key(value: object) -> Key | None:
        if type(value) is int:
            return ints.get(value)
        if type(value) is not str:
            return None
        text = normalize_text(value)
        found = texts.get(text)
        if found is None and ints and _INTEGER_LITERAL(text) is not None:
            # "4" names the integer level 4, as "35" is the number 35.
            found = ints.get(int(text))
        return found

    return key


def _within_choices(
    key: Callable[[object], Key | None], choices: frozenset[str] | None, multi: bool
) -> Callable[[object], Key | None]:
    # Gold values must stay inside declared choices; answers are judged as given.
    if choices is None:
        return key

    def gold_key(value: object) -> Key | None:
        found = key(value)
        if found is None:
            return None
        inside = found <= choices if multi else found in choices  # type: ignore[operator]
        if not inside:
            return _OUTSIDE
        return found

    return gold_key


_OUTSIDE: Final = object()
_UNPROVEN: Final = object()


def gold_proof(value: object) -> object:
    """What a gold value's checks depend on: a string itself, else its type and value."""
    return value if type(value) is str else (type(value), value)


class FieldRule:
    """How answers to one field are normalized, compared and counted.

    Attributes:
        field_type: The field's type.
        spec: The schema entry, or None.
        extra_metrics: Names of the type-specific binomial metrics this field reports.
        kappa_weighting: "none" or "quadratic" for fields with Cohen's kappa, else None.
        levels: The number of ordinal levels (the kappa scale); 0 otherwise.
        tracks_items: Whether multi-select item counts are kept.
        plugin_judged: Whether plugin judges see its answered rows (so each row is judged).
        proven: Gold values whose checks passed (:meth:`check_gold`), by :func:`gold_proof`,
            and their keys: a scorer reads it before calling :meth:`check_gold`.
        perfect_mask: Bits a perfect answer must earn (the stand-in check).
        labels: The declared labels' keys in report order (categorical and
            multi-select ``choices``; ``false``, ``true`` for booleans), whose
            per-label confusion metrics are reported; empty otherwise.
        label_names: The labels' names in the report (the normalized choices).
    """

    __slots__ = (
        "_base_outcome",
        "_judges",
        "_matches",
        "_patterns",
        "_regex",
        "_similar",
        "_text_limit",
        "_threshold",
        "_tolerance",
        "_tolerance_days",
        "_within",
        "answer_key",
        "extra_metrics",
        "field_type",
        "gold_key",
        "kappa_weighting",
        "label_names",
        "labels",
        "levels",
        "outcome",
        "perfect_mask",
        "plugin_judged",
        "proven",
        "spec",
        "tracks_items",
    )

    def __init__(
        self,
        field_type: FieldType,
        spec: FieldSpec | None,
        judges: tuple[Callable[[Key, Key], int], ...] = (),
    ) -> None:
        self.field_type = field_type
        self.spec = spec
        self._tolerance = spec.tolerance if spec is not None else None
        self._tolerance_days = spec.tolerance_days if spec is not None else None
        match = spec.match if spec is not None else None
        self._threshold = spec.threshold if spec is not None else None
        self._text_limit = None if self._threshold is None else fuzzy_text_limit(self._threshold)
        self._patterns: dict[str, Pattern] = {}
        self._matches: dict[tuple[object, Key], bool] = {}
        self._similar: SimilarityTest | None = None  # rapidfuzz's, loaded on first use
        self._regex = match == "regex"
        self.levels = len(spec.levels) if spec is not None else 0
        self.tracks_items = field_type is FieldType.MULTI
        choices = spec.choices if spec is not None else None
        options: set[str] = set()  # which of the catalog's field options this field has
        perfect = EXACT | NORMALIZED
        self.kappa_weighting: str | None = None
        key: Callable[[object], Key | None]
        if field_type in (FieldType.TEXT, FieldType.CATEGORICAL):
            key = _cached(text_key)
        elif field_type is FieldType.NUMBER:
            key = _cached(number_key)
        elif field_type is FieldType.BOOLEAN:
            key = boolean_key
        elif field_type is FieldType.DATE:
            key = _cached(date_key)
        elif field_type is FieldType.ORDINAL:
            if spec is None or not spec.levels:
                raise ChartscoreError(ErrorCode.SCHEMA_REQUIRED, input=InputKind.SCHEMA)
            key = _cached(_ordinal_key(spec))
            perfect |= WITHIN_ONE
            self.kappa_weighting = "quadratic"
        else:
            key = multi_key
        if field_type in (FieldType.CATEGORICAL, FieldType.BOOLEAN):
            self.kappa_weighting = "none"
        if (field_type is FieldType.NUMBER and self._tolerance is not None) or (
            field_type is FieldType.DATE and self._tolerance_days is not None
        ):
            options.add(TOLERANCE_OPTION)
            perfect |= TOLERANCE
        if match == "fuzzy":
            options.add(FUZZY_OPTION)
            perfect |= FUZZY
        elif match == "regex":
            # A pattern need not match its own text: the stand-in check leaves it out.
            options.add(REGEX_OPTION)
        labels: tuple[Key, ...] = ()
        if field_type is FieldType.BOOLEAN:
            labels = (False, True)
        elif choices is not None and field_type in (FieldType.CATEGORICAL, FieldType.MULTI):
            labels = tuple(sorted(choices))
        if labels:
            options.add(LABELS_OPTION)
        self.labels = labels
        self.label_names = tuple(
            ("true" if label else "false") if type(label) is bool else str(label)
            for label in labels
        )
        self.answer_key = key
        self.gold_key = _within_choices(key, choices, field_type is FieldType.MULTI)
        self.proven: dict[object, Key] = {}
        self.outcome: Callable[[object, Key, object], tuple[int, Key | None]]
        """Success bits for an answer (not None) to an answerable field, and the
        answer's key; the type-specific bits follow docs/metrics.md."""
        if self.levels:
            self.outcome = self._ordinal
        elif self._tolerance is not None:
            self.outcome, self._within = self._tolerant, self._within_number
        elif self._tolerance_days is not None:
            self.outcome, self._within = self._tolerant, self._within_days
        elif match == "fuzzy":
            self.outcome = self._fuzzy
        elif match == "regex":
            self.outcome = self._pattern
        else:
            self.outcome = self._agreement
        self.extra_metrics = field_metrics(field_type, options)
        self.perfect_mask = perfect
        # Plugin metrics (docs/plugins.md): each judge adds its label's bits to a row
        # that is answerable and answered with a value of the type.
        self._judges = judges
        self.plugin_judged = bool(judges)
        self._base_outcome = self.outcome
        if judges:
            self.outcome = self._judged

    def check_gold(self, value: object, field_id: str) -> Key:
        """The normalized gold value, after the gold-validity and stand-in checks.

        Raises:
            ChartscoreError: ``invalid_gold_value`` (not a value of the type),
                ``gold_outside_schema`` (not a declared level or choice) or
                ``standin_not_perfect`` (a perfect answer would not score perfectly).
        """
        # The checks depend only on the value and its type: remember passed ones.
        proof = gold_proof(value)
        key = self.proven.get(proof, _UNPROVEN)
        if key is not _UNPROVEN:
            return key
        key = self.gold_key(value)
        if key is None:
            level_shaped = self.levels and (type(value) is int or type(value) is str)
            if level_shaped:
                raise ChartscoreError(
                    ErrorCode.GOLD_OUTSIDE_SCHEMA, input=InputKind.GOLD, field_id=field_id
                )
            raise ChartscoreError(
                ErrorCode.INVALID_GOLD_VALUE, input=InputKind.GOLD, field_id=field_id
            )
        if key is _OUTSIDE:
            raise ChartscoreError(
                ErrorCode.GOLD_OUTSIDE_SCHEMA, input=InputKind.GOLD, field_id=field_id
            )
        if self._regex and self._compiled(value) is None:  # type: ignore[arg-type]
            raise ChartscoreError(
                ErrorCode.INVALID_GOLD_PATTERN, input=InputKind.GOLD, field_id=field_id
            )
        if self._text_limit is not None and len(key) > self._text_limit:  # type: ignore[arg-type]
            raise ChartscoreError(
                ErrorCode.MATCH_TEXT_TOO_LONG, input=InputKind.GOLD, field_id=field_id
            )
        mask, answer = self.outcome(value, key, value)
        perfect = mask & self.perfect_mask == self.perfect_mask and answer == key
        if self.tracks_items:
            perfect = perfect and self.items(key, answer) == (len(key), len(key))  # type: ignore[arg-type]
        if not perfect:
            raise ChartscoreError(
                ErrorCode.STANDIN_NOT_PERFECT, input=InputKind.GOLD, field_id=field_id
            )
        if len(self.proven) >= _CACHE_LIMIT:
            self.proven.clear()
        self.proven[proof] = key
        return key

    def _agreement(
        self, gold_value: object, gold_key: Key, value: object
    ) -> tuple[int, Key | None]:
        # Exact agreement compares type and value as given; normalized compares keys.
        mask = ANSWERED | ANSWERABLE
        if type(value) is type(gold_value) and value == gold_value:
            mask |= EXACT
        answer = self.answer_key(value)
        if answer is None:
            mask |= WRONG_TYPE
        elif answer == gold_key:
            mask |= NORMALIZED
        return mask, answer

    def _ordinal(self, gold_value: object, gold_key: Key, value: object) -> tuple[int, Key | None]:
        mask, answer = self._agreement(gold_value, gold_key, value)
        if answer is not None:
            step = answer - gold_key  # type: ignore[operator]
            if step > 0:
                mask |= LATER
            elif step < 0:
                mask |= EARLIER
            if -1 <= step <= 1:
                mask |= WITHIN_ONE
        return mask, answer

    def _tolerant(self, gold_value: object, gold_key: Key, value: object) -> tuple[int, Key | None]:
        # Agreement under normalization always counts; otherwise the distance decides.
        mask, answer = self._agreement(gold_value, gold_key, value)
        if mask & NORMALIZED or (answer is not None and self._within(answer, gold_key)):
            mask |= TOLERANCE
        return mask, answer

    def _judged(self, gold_value: object, gold_key: Key, value: object) -> tuple[int, Key | None]:
        mask, answer = self._base_outcome(gold_value, gold_key, value)
        if answer is not None:
            for judge in self._judges:
                mask |= judge(gold_key, answer)
        return mask, answer

    def _fuzzy(self, gold_value: object, gold_key: Key, value: object) -> tuple[int, Key | None]:
        # Normalized agreement is similarity 1; otherwise the Levenshtein similarity decides.
        mask, answer = self._agreement(gold_value, gold_key, value)
        if answer is None:
            return mask, answer
        if len(answer) > self._text_limit:  # type: ignore[arg-type,operator]
            raise ChartscoreError(ErrorCode.MATCH_TEXT_TOO_LONG)
        if not mask & NORMALIZED:
            similar = self._similar
            if similar is None:
                similar = self._similar = SimilarityTest(self._threshold)  # type: ignore[arg-type]
            if not similar(answer, gold_key):  # type: ignore[arg-type]
                return mask, answer
        return mask | FUZZY, answer

    def _pattern(self, gold_value: object, gold_key: Key, value: object) -> tuple[int, Key | None]:
        # The gold value is a pattern; the whole normalized answer must match it. Rules and
        # answers repeat (codes), so each (pattern, answer) pair is matched once.
        mask, answer = self._agreement(gold_value, gold_key, value)
        if answer is None:
            return mask, answer
        pair = (gold_value, answer)
        matched = self._matches.get(pair)
        if matched is None:
            if len(answer) > MAX_REGEX_ANSWER:  # type: ignore[arg-type]
                raise ChartscoreError(ErrorCode.MATCH_TEXT_TOO_LONG)
            pattern = self._compiled(gold_value)  # type: ignore[arg-type]
            matched = pattern is not None and pattern.fullmatch(answer)  # type: ignore[arg-type]
            if len(answer) <= _REMEMBERED_ANSWER:  # type: ignore[arg-type]
                if len(self._matches) >= _MATCH_CACHE_LIMIT:
                    self._matches.clear()
                self._matches[pair] = matched
        return (mask | PATTERN if matched else mask), answer

    def _compiled(self, text: str) -> Pattern | None:
        # Gold patterns repeat (one coding rule, many rows): compiled once. The cache is
        # small, since each pattern may hold RE2's memory budget; the oldest goes first.
        found = self._patterns.get(text)
        if found is None:
            found = compile_pattern(text)
            if found is None:
                return None
            if len(self._patterns) >= _PATTERN_CACHE_LIMIT:
                del self._patterns[next(iter(self._patterns))]
            self._patterns[text] = found
        return found

    def _within_number(self, answer: Key, gold_key: Key) -> bool:
        # Exact decimal arithmetic: |answer - gold| <= tolerance.
        return _EXACT.subtract(answer, gold_key).copy_abs() <= self._tolerance  # type: ignore[arg-type,operator]

    def _within_days(self, answer: Key, gold_key: Key) -> bool:
        return _days_apart(answer, gold_key) <= self._tolerance_days  # type: ignore[arg-type,operator]

    def declared_answers(self, answer: Key | None) -> int:
        """How many declared labels an answer of the right type names (0 for None)."""
        if answer is None:
            return 0
        if self.field_type is FieldType.MULTI:
            return len(answer & self.spec.choices)  # type: ignore[operator,union-attr]
        if self.field_type is FieldType.BOOLEAN:
            return 1
        return int(answer in self.spec.choices)  # type: ignore[operator,union-attr]

    @staticmethod
    def items(gold_key: frozenset[str] | None, answer: Key | None) -> tuple[int, int]:
        """(answered items, matched items) of a multi-select answer; wrong types have none."""
        if type(answer) is not frozenset:
            return 0, 0
        if gold_key is None:
            return len(answer), 0
        return len(answer), len(answer & gold_key)


def _days_apart(answer: DateKey, gold: DateKey) -> float:
    # Only full-precision dates have a distance in days.
    if answer[2] is None or gold[2] is None:
        return float("inf")
    return abs(date(*answer).toordinal() - date(*gold).toordinal())  # type: ignore[arg-type]
