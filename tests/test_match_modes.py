"""Declared match modes of text fields: fuzzy (Levenshtein similarity) and regex (gold patterns).

The engines are google-re2 and rapidfuzz (``chartscore[match]``). The patterns, as
chartscore translates them for RE2, are checked against Python's ``re.fullmatch`` on random
patterns of the subset and random texts (Unicode, newlines, lone surrogates); the similarity
against its definition, with a textbook dynamic-programming distance as the oracle; both
metrics against the hand-computed examples of docs/metrics.md; disclosure control on
generated cohorts through the independent reference in ``disclosure_reference.py``.
"""

from __future__ import annotations

import json
import random
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from chartscore import ChartscoreError, ErrorCode, FieldSpec, GoldField, Prediction, Schema, score
from chartscore.comparison import Comparison
from chartscore.records.pattern import MAX_PATTERN_LENGTH, compile_pattern
from chartscore.records.similarity import similarity_at_least
from chartscore.report import Report
from chartscore.scoring.paired_scorer import compare
from disclosure_reference import build_cohort
from test_disclosure import assert_shared_properties, scored

from helpers import examples

FUZZY = {"fields": {"dx.summary": {"type": "text", "match": {"fuzzy": 0.85}}}}
REGEX = {"fields": {"dx.icd10": {"type": "text", "match": "regex"}}}


# --------------------------------------------------------------------------- the distance


def _levenshtein(first: str, second: str) -> int:
    # The textbook dynamic program (Wagner and Fischer, 1974), over code points: the oracle.
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def _similar(first: str, second: str, threshold: Decimal, distance: int) -> bool:
    # docs/metrics.md's definition, in exact fractions.
    longest = max(len(first), len(second))
    return longest == 0 or Fraction(longest - distance, longest) >= Fraction(threshold)


_TEXTS = st.text("abc ßé\U0001f600\ud800\udc00", max_size=14)


@settings(max_examples=examples(400))
@given(_TEXTS, _TEXTS, st.integers(1, 10**6))
def test_similarity_is_the_definition(first: str, second: str, millionths: int) -> None:
    # Any threshold, and the thresholds exactly at, just above and just below the pair's
    # similarity (where the integer cutoff passed to rapidfuzz decides).
    distance = _levenshtein(first, second)
    longest = max(len(first), len(second))
    thresholds = [Decimal(millionths) / 10**6]
    if longest > distance:  # a similarity above 0, rounded to 28 digits
        exact = Decimal(longest - distance) / Decimal(longest)
        thresholds += [exact, exact.next_plus(), exact.next_minus()]
    for threshold in thresholds:
        if not 0 < threshold <= 1:
            continue
        expected = _similar(first, second, threshold, distance)
        assert similarity_at_least(first, second, threshold) is expected, threshold
        assert similarity_at_least(second, first, threshold) is expected, threshold


def test_similarity_on_long_texts_is_the_definition() -> None:
    # Texts longer than rapidfuzz's 64-character words, thresholds at the pair's similarity.
    chooser = random.Random(7)
    for size in (63, 64, 65, 300, 2000):
        first = "".join(chooser.choice("acgt") for _ in range(size))
        second = "".join(chooser.choice("acgt") for _ in range(size + 17))
        distance = Levenshtein.distance(first, second)
        if size <= 300:
            assert distance == _levenshtein(first, second)
        longest = size + 17
        for allowed in (distance - 1, distance, distance + 1):
            threshold = Decimal(longest - allowed) / Decimal(longest)
            expected = _similar(first, second, threshold, distance)
            assert similarity_at_least(first, second, threshold) is expected, (size, allowed)


@pytest.mark.parametrize(
    ("first", "second", "threshold", "similar"),
    [
        ("vegan chia pudding", "vegan chia puding", "0.85", True),  # 17/18
        ("heart failure", "heart failure.", "0.85", True),  # 13/14
        ("bean chili with rice", "bean chilli & rice", "0.85", False),  # 15/20
        ("bean chili with rice", "bean chilli & rice", "0.75", True),  # exactly 15/20
        # One part in 10^31 above 0.75: beyond a default decimal context's 28 digits.
        ("bean chili with rice", "bean chilli & rice", "0.7500000000000000000000000000001", False),
        ("rice pudding", "vegan chia pudding", "0.5", True),  # 9/18
        ("", "", "1", True),
        ("", "a", "0.0001", False),
        ("tide", "diet", "0.25", True),  # 1 - 3/4 both ways (difflib: 0.25 one way, 0.5 the other)
    ],
)
def test_similarity_examples(first: str, second: str, threshold: str, similar: bool) -> None:
    assert similarity_at_least(first, second, Decimal(threshold)) is similar
    assert similarity_at_least(second, first, Decimal(threshold)) is similar


# --------------------------------------------------------------------------- the pattern engine

_LITERALS = st.sampled_from(["a", "b", "c", "1", " ", "\\.", "\\-", "\\+", "\\\\", "\\ "])
_CLASS_ITEMS = st.sampled_from(["a", "b", "1", "a-c", "0-9", "\\d", "\\w", "\\s", "\\-", "\\."])


@st.composite
def _classes(draw: st.DrawFn) -> str:
    items = draw(st.lists(_CLASS_ITEMS, min_size=1, max_size=3))
    return "[" + ("^" if draw(st.booleans()) else "") + "".join(items) + "]"


def _quantifiers() -> st.SearchStrategy[str]:
    bounds = st.sampled_from(["{2}", "{1,}", "{,2}", "{0,3}", "{1,2}", "{,}"])
    plain = st.sampled_from(["", "", "", "*", "+", "?"]) | bounds
    return st.tuples(plain, st.sampled_from(["", "", "?"])).map(
        lambda q: q[0] + (q[1] if q[0] else "")
    )


def _patterns() -> st.SearchStrategy[str]:
    atoms = _LITERALS | _classes() | st.sampled_from([".", "\\d", "\\W", "\\S"])

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        piece = st.tuples(inner, _quantifiers()).map(
            lambda p: (f"(?:{p[0]})" if (len(p[0]) != 1 or p[0] == "|") and p[1] else p[0]) + p[1]
        )
        sequence = st.lists(piece, max_size=3).map("".join)
        group = sequence.map(lambda s: f"({s})")
        alternation = st.lists(sequence, min_size=2, max_size=3).map("|".join)
        return group | alternation | sequence

    return st.recursive(atoms, grow, max_leaves=8)


@settings(max_examples=examples(600), suppress_health_check=[HealthCheck.too_slow])
@given(_patterns(), st.lists(st.text("abc1 .-+\\x", max_size=6), min_size=1, max_size=6))
def test_patterns_match_as_python_re_fullmatch(pattern: str, texts: list[str]) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None, pattern
    reference = re.compile(pattern)
    for text in texts:
        assert compiled.fullmatch(text) is (reference.fullmatch(text) is not None), (pattern, text)


def test_escapes_match_as_python_re_on_the_basic_plane() -> None:
    characters = [chr(code) for code in range(0x10000) if not 0xD800 <= code < 0xE000]
    for escape in ("\\d", "\\D", "\\w", "\\W", "\\s", "\\S"):
        ours = compile_pattern(escape)
        theirs = re.compile(escape)
        assert ours is not None
        assert [c for c in characters if ours.fullmatch(c)] == [
            c for c in characters if theirs.fullmatch(c)
        ], escape


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("I50\\.[0-9]+", "i50.9", True),  # letters match as normalized (case-folded) text
        ("I50\\.[0-9]+", "i50.", False),
        ("[A-Z]{3}", "abc", True),
        ("STRASSE", "strasse", True),
        ("Straße", "strasse", True),  # ß folds to ss, as the answer's does
        ("^a|b$", "b", True),  # a leading ^ and a trailing $ change nothing
        ("a\\$", "a$", True),
        ("a|", "", True),
        ("", "", True),
        ("(a|a)*b", "a" * 20_000, False),  # 2^20000 steps for a backtracking engine
        ("(x+x+)+y", "x" * 20_000, False),
        ("(a*)*", "a" * 20_000, True),
    ],
)
def test_pattern_examples(pattern: str, text: str, matches: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None
    assert compiled.fullmatch(text) is matches


REFUSED = [
    "(a)\\1",  # backreference
    "(?=a)",
    "(?!a)",
    "(?<=a)b",
    "(?P<name>a)",
    "(?i)a",
    "(?>a)",
    "a*+",  # possessive
    "a**",
    "*a",
    "a^",
    "$a",
    "a$b",
    "\\b",
    "\\A",
    "\\n",
    "\\x41",
    "[]a]",
    "a]",
    "a}",
    "a{",
    "a{x}",
    "a{}",
    "a{3,2}",
    "a{1001}",
    "[a-]",
    "[z-a]",
    "[a-Z]",  # in order only once folded: refused as written
    "[ß]",  # a class member that folds to two characters
    "[\\d-z]",
    "(a",
    "a)",
    "\\",
    "(a{100}){101}",  # over 10,000 automaton states
    "a" * (MAX_PATTERN_LENGTH + 1),
]


@pytest.mark.parametrize("pattern", REFUSED)
def test_patterns_outside_the_subset_are_refused(pattern: str) -> None:
    assert compile_pattern(pattern) is None


def test_a_refused_gold_pattern_is_a_coded_error_without_the_pattern() -> None:
    secret = "(?=CANARY-PATTERN)x"
    with pytest.raises(ChartscoreError) as caught:
        score([GoldField("c1", "dx.icd10", "text", secret)], [], schema=REGEX)
    error = caught.value
    assert error.code is ErrorCode.INVALID_GOLD_PATTERN
    assert "CANARY" not in str(error) and "CANARY" not in repr(error)
    assert error.__cause__ is None and error.__context__ is None


def test_the_pattern_repr_hides_the_pattern() -> None:
    assert "secret" not in repr(compile_pattern("secret"))


# --------------------------------------------------------------------------- scoring


def _rows(
    field_id: str, pairs: list[tuple[object, object]]
) -> tuple[list[GoldField], list[Prediction]]:
    gold = [GoldField(f"c{i}", field_id, "text", g) for i, (g, _) in enumerate(pairs)]
    answers = [Prediction(f"c{i}", field_id, a) for i, (_, a) in enumerate(pairs) if a != "-"]
    return gold, answers


def test_fuzzy_agreement_is_the_docs_example() -> None:
    # docs/metrics.md, "Fuzzy agreement": threshold 0.85; two of five agree.
    gold, answers = _rows(
        "dx.summary",
        [
            ("Vegan chia pudding", "vegan chia puding"),
            ("Heart failure", "heart failure."),
            ("Bean chili with rice", "bean chilli & rice"),
            ("Rice pudding", "Vegan chia pudding"),
            ("heart failure with reduced ejection fraction", "HFrEF heart failure, reduced EF"),
        ],
    )
    report = score(gold, answers, schema=FUZZY)
    field = report.by_field["dx.summary"]
    assert field.metric("fuzzy_agreement").success_count == 2
    assert field.metric("fuzzy_agreement").total_count == 5
    assert field.metric("normalized_agreement").success_count == 0
    assert "fuzzy_agreement" in report.by_field_type["text"].metrics
    assert "fuzzy_agreement" not in report.overall.metrics
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_fuzzy_agreement_counts_only_answers_of_the_type() -> None:
    gold, answers = _rows(
        "dx.summary",
        [("abc", "abc"), ("abc", None), ("abc", "-"), ("abc", 5), (None, "abc")],
    )
    field = score(gold, answers, schema=FUZZY).by_field["dx.summary"]
    assert (
        field.metric("fuzzy_agreement").success_count,
        field.metric("fuzzy_agreement").total_count,
    ) == (1, 4)


def test_pattern_agreement_is_the_docs_example() -> None:
    # docs/metrics.md, "Pattern agreement": three of six answers match I50\.[0-9]+.
    rule = "I50\\.[0-9]+"
    answers = ["I50.9", "i50.22", " I50.1 ", "I50", "I51.0", "I50.9 HFrEF"]
    gold, predictions = _rows("dx.icd10", [(rule, answer) for answer in answers])
    report = score(gold, predictions, schema=REGEX)
    field = report.by_field["dx.icd10"]
    assert field.metric("pattern_agreement").success_count == 3
    assert field.metric("pattern_agreement").total_count == 6
    # Exact and normalized agreement still compare with the pattern's own text.
    assert field.metric("normalized_agreement").success_count == 0
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_a_pattern_that_does_not_match_itself_passes_the_stand_in_check() -> None:
    gold, predictions = _rows("dx.icd10", [("I50\\.[0-9]+", "I50\\.[0-9]+")])
    field = score(gold, predictions, schema=REGEX).by_field["dx.icd10"]
    assert field.metric("exact_agreement").success_count == 1
    assert field.metric("pattern_agreement").success_count == 0


def test_match_modes_are_paired_in_a_comparison() -> None:
    rule = "I50\\.[0-9]+"
    gold = [GoldField(f"c{i}", "dx.icd10", "text", rule) for i in range(4)]
    old = [Prediction(f"c{i}", "dx.icd10", "I51.0") for i in range(4)]
    new = [Prediction(f"c{i}", "dx.icd10", f"I50.{i}") for i in range(3)]
    comparison = compare(gold, old, new, schema=REGEX)
    paired = comparison.by_field["dx.icd10"].paired["pattern_agreement"]
    assert (paired.baseline_only, paired.candidate_only) == (0, 3)
    assert Comparison.from_json(comparison.to_json()).to_json() == comparison.to_json()


# --------------------------------------------------------------------------- the schema


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"type": "text", "match": "fuzzy"}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": {"fuzzy": 0}}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": {"fuzzy": Decimal("1.5")}}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": {"fuzzy": "high"}}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": {"fuzzy": True}}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": {"fuzzy": 0.8, "x": 1}}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": "glob"}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "match": ["regex"]}, ErrorCode.SCHEMA_INVALID_MATCH),
        ({"type": "text", "threshold": 0.8}, ErrorCode.SCHEMA_UNKNOWN_OPTION),
        ({"type": "categorical", "match": "regex"}, ErrorCode.SCHEMA_UNKNOWN_OPTION),
        ({"type": "number", "match": {"fuzzy": 0.8}}, ErrorCode.SCHEMA_UNKNOWN_OPTION),
    ],
)
def test_bad_match_declarations_are_refused(entry: dict[str, Any], code: ErrorCode) -> None:
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict({"fields": {"dx.summary": entry}})
    assert caught.value.code is code


def test_match_declarations_read_as_field_specs() -> None:
    schema = Schema.from_dict(
        {
            "fields": {
                "a.fuzzy": {"type": "text", "match": {"fuzzy": "0.85"}},
                "b.fuzzy": {"type": "text", "match": {"fuzzy": 1}},
                "c.regex": {"type": "text", "match": "regex"},
            }
        }
    )
    assert schema.fields["a.fuzzy"] == FieldSpec("text", match="fuzzy", threshold=Decimal("0.85"))
    assert schema.fields["b.fuzzy"].threshold == Decimal(1)
    assert schema.fields["c.regex"] == FieldSpec("text", match="regex")
    with pytest.raises(ChartscoreError) as caught:
        FieldSpec("text", match="regex", threshold=Decimal("0.5"))
    assert caught.value.code is ErrorCode.SCHEMA_INVALID_MATCH
    with pytest.raises(ChartscoreError):
        FieldSpec("text", match="fuzzy", threshold="0.5")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- disclosure


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(st.sampled_from(["text:fuzzy", "text:regex", "text"]), min_size=1, max_size=3),
    st.integers(1, 20),
    st.randoms(use_true_random=False),
    st.sampled_from([2, 11]),
)
def test_match_metrics_are_shared_under_the_rule(
    types: list[str], cases: int, chooser: random.Random, min_cell: int
) -> None:
    cohort = build_cohort(chooser.choice, types, cases)
    report, sensitivity, tally = scored(cohort)
    for field_id, part in report.by_field.items():
        assert ("fuzzy_agreement" in part.metrics) is field_id.endswith("text_fuzzy")
        assert ("pattern_agreement" in part.metrics) is field_id.endswith("text_regex")
    # The reference (rapidfuzz and re) agrees on every number; the shared report holds the rule.
    shared = assert_shared_properties(report, sensitivity, tally, min_cell)
    document = json.loads(shared.to_json())
    for field_id in report.by_field:
        if field_id.endswith("text_regex"):
            assert "pattern_agreement" in document["by_field"][field_id]
