"""Declared match modes of text fields: fuzzy (Levenshtein similarity) and regex (gold patterns).

The engines are google-re2 and rapidfuzz (``chartscore[match]``). The patterns, as
chartscore translates them for RE2, are checked against Python's ``re.fullmatch`` on random
patterns of the subset and random texts (Unicode, newlines, lone surrogates); the similarity
against its definition, with a textbook dynamic-programming distance as the oracle; both
metrics against the hand-computed examples of docs/metrics.md; disclosure control on
generated cohorts through the independent reference in ``disclosure_reference.py``.
"""

from __future__ import annotations

import io
import json
import random
import re
import signal
import subprocess
import sys
import tomllib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from chartscore import ChartscoreError, ErrorCode, FieldSpec, GoldField, Prediction, Schema, score
from chartscore.cli import main
from chartscore.documents.comparison import Comparison
from chartscore.documents.report import Report
from chartscore.records.match_engines import (
    FUZZY_WORK,
    LONGEST_FUZZY_TEXT,
    MAX_FUZZY_TEXT,
    MAX_REGEX_ANSWER,
    fuzzy_text_limit,
)
from chartscore.records.pattern import MAX_PATTERN_LENGTH, compile_pattern, translate_pattern
from chartscore.records.similarity import similarity_at_least
from chartscore.scoring.paired_scorer import compare
from chartscore.workflows.partials import score_with_partial
from disclosure_reference import build_cohort
from test_disclosure import assert_shared_properties, scored
from test_sharing import cohort_files

from helpers import examples, write_jsonl

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

_LITERALS = st.sampled_from(
    ["a", "b", "c", "1", " ", "\\.", "\\-", "\\+", "\\\\", "\\ ", "é", "\U0001f600"]
)
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


# Answers of the subset's alphabet and beyond: a Unicode digit and letter, an astral
# character, a newline, NUL and a lone surrogate (which Python strings and JSON can hold).
_ANSWER_CHARACTERS = "abc1 .-+\\xAé_\u0663\U0001f600\n\x00\ud800"


@settings(max_examples=examples(600), suppress_health_check=[HealthCheck.too_slow])
@given(_patterns(), st.lists(st.text(_ANSWER_CHARACTERS, max_size=6), min_size=1, max_size=6))
def test_patterns_match_as_python_re_fullmatch(pattern: str, texts: list[str]) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None, pattern
    reference = re.compile(pattern)
    for text in texts:
        expected = _reference_fullmatch(reference, text)
        assume(expected is not None)  # the reference backtracked for seconds: no verdict
        assert compiled.fullmatch(text) is expected, (pattern, text)


class _ReferenceTooSlowError(Exception):
    pass


def _reference_fullmatch(reference: re.Pattern[str], text: str) -> bool | None:
    """Python's verdict, or None after 2 s: nested quantifiers can make its backtracking
    exponential (a thorough run once spent 25 minutes on one example; RE2 has no such case).
    ``re`` checks for signals while it matches, so an alarm stops it."""

    def stop(number: int, frame: object) -> None:
        raise _ReferenceTooSlowError

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    verdict: bool | None = None
    try:
        verdict = reference.fullmatch(text) is not None
    except _ReferenceTooSlowError:
        verdict = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return verdict


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
        # Nesting a recursive reader could not follow (RecursionError before RE2).
        ("(" * 400 + "a" + ")" * 400, "a", True),
        ("(?:" * 249 + "a|b" + ")" * 249, "b", True),
        ("\\w{1,100}", "x" * 100, True),  # within RE2's memory budget
    ],
)
def test_pattern_examples(pattern: str, text: str, matches: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None
    assert compiled.fullmatch(text) is matches


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (".", "\n"),  # . is any character but a newline, as in re
        (".", "\ud800"),  # a lone surrogate is one character
        (".", "\x00"),
        ("[^a]", "\n"),
        ("\\W", "\ud800"),
        ("\\S", "\n"),
        ("\\s", "\u2028"),  # Unicode whitespace
        ("\\d+", "\u0663\u0664"),  # Arabic-Indic digits
        ("\\d", "\U0001d7ce"),  # MATHEMATICAL BOLD DIGIT ZERO, beyond the basic plane
        ("\\w", "\U00020000"),  # a CJK ideograph of plane 2
        ("\\w", "_"),
        ("[^\\d\\D]", "a"),  # a class that holds no character
        ("\U0001f600{2}", "\U0001f600\U0001f600"),
        ("[\U0001f600-\U0001f602]", "\U0001f601"),
        ("[\ud800-\udbff]", "\ud900"),  # a range of surrogates, as written in JSON
        ("a\x00b", "a\x00b"),
        ("é+", "éé"),
        ("\\.\\ \\+\\-", ". +-"),
    ],
)
def test_unicode_newlines_and_surrogates_match_as_python_re(pattern: str, text: str) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None
    expected = re.fullmatch(pattern, text) is not None
    assert compiled.fullmatch(text) is expected, (pattern, text)
    assert compiled.fullmatch(text + "\n") is (re.fullmatch(pattern, text + "\n") is not None)


def _byte_offset_to_code_point(offset: int) -> int:
    # In the UTF-8 of every code point in order (surrogates kept as three bytes each).
    for first, width in ((0x10000, 4), (0x800, 3), (0x80, 2), (0, 1)):
        start = sum(w * (end - begin) for begin, end, w in _PLANES if end <= first)
        if offset >= start:
            return first + (offset - start) // width
    raise AssertionError(offset)


_PLANES = ((0, 0x80, 1), (0x80, 0x800, 2), (0x800, 0x10000, 3), (0x10000, 0x110000, 4))


@pytest.mark.parametrize("escape", ["\\d", "\\D", "\\w", "\\W", "\\s", "\\S"])
def test_escapes_match_as_python_re_on_every_plane(escape: str) -> None:
    # RE2, given the translated class, finds the same runs of code points as re does, over
    # all 1,114,112 (lone surrogates included).
    from re2 import _re2

    universe = "".join(map(chr, range(sys.maxunicode + 1)))
    expected = [(run.start(), run.end()) for run in re.finditer(escape + "+", universe)]
    translated = translate_pattern(escape + "+")
    assert translated is not None
    options = _re2.RE2.Options()
    options.max_mem = 64 << 20
    options.log_errors = False
    regexp = _re2.RE2(translated.encode(), options)
    assert regexp.ok()
    data = universe.encode("utf-8", "surrogatepass")
    found = []
    at = 0
    while at < len(data):
        (start, end), *_ = regexp.Match(_re2.RE2.Anchor.UNANCHORED, data, at, len(data))
        if start < 0:
            break
        found.append((_byte_offset_to_code_point(start), _byte_offset_to_code_point(end)))
        at = end
    assert found == expected


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
    "(a{100}){101}",  # a size over 10,000
    "a" * (MAX_PATTERN_LENGTH + 1),
    "(a{10}){101}",  # RE2: nested counted repetitions whose bounds multiply beyond 1,000
    "\\w{1000}",  # RE2: a program beyond the memory budget of one pattern
    "(?:\\w+ ){104}",
]


@pytest.mark.parametrize("pattern", REFUSED)
def test_patterns_outside_the_subset_are_refused(pattern: str) -> None:
    assert compile_pattern(pattern) is None


@pytest.mark.parametrize(
    "secret",
    [
        "(?=CANARY-PATTERN)x",  # refused by the subset's reader
        "CANARY-PATTERN(?:a{10}){101}",  # refused by RE2's parser (its error quotes the pattern)
        "CANARY-PATTERN\\w{1000}",  # refused by RE2's compiler (over the memory budget)
    ],
)
def test_a_refused_gold_pattern_is_a_coded_error_without_the_pattern(
    secret: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        score([GoldField("c1", "dx.icd10", "text", secret)], [], schema=REGEX)
    error = caught.value
    assert error.code is ErrorCode.INVALID_GOLD_PATTERN
    assert str(error) == "invalid_gold_pattern (gold field dx.icd10)"
    assert "canary" not in repr(error).lower()
    assert error.__cause__ is None and error.__context__ is None
    # RE2 logs a refused pattern on standard error unless told not to: nothing may reach it,
    # at the file descriptor (C++ writes there, not to sys.stderr).
    assert capfd.readouterr() == ("", "")


def test_a_pattern_that_exhausts_re2s_cache_logs_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    # The DFA runs out of memory on this pattern and RE2 falls back to its NFA; by default it
    # would log the pattern's length and program size on standard error.
    gold = [GoldField(f"c{i}", "dx.icd10", "text", f".*CANARY{i}.{{990}}x") for i in range(3)]
    answer = "".join(random.Random(3).choice("canry0123") for _ in range(5_000))
    predictions = [Prediction(f"c{i}", "dx.icd10", answer) for i in range(3)]
    field = score(gold, predictions, schema=REGEX).by_field["dx.icd10"]
    assert field.metric("pattern_agreement").success_count == 0
    assert capfd.readouterr() == ("", "")


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


# --------------------------------------------------------------------------- the length limit


def _one_row(schema: dict[str, Any], gold: object, answer: object) -> Report:
    field_id = next(iter(schema["fields"]))  # type: ignore[call-overload]
    return score(
        [GoldField("c1", field_id, "text", gold)],
        [Prediction("c1", field_id, answer)],
        schema=schema,
    )


def _refused(schema: dict[str, Any], gold: object, answer: object) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as caught:
        _one_row(schema, gold, answer)
    error = caught.value
    assert error.code is ErrorCode.MATCH_TEXT_TOO_LONG
    assert error.__cause__ is None and error.__context__ is None
    assert "secret" not in str(error) + repr(error)
    return error


def test_a_regex_answer_may_have_5000_normalized_characters() -> None:
    limit = MAX_REGEX_ANSWER
    assert limit == 5_000
    field = _one_row(REGEX, "(?:secret )+", "secret " * 714 + "x" * 2).by_field["dx.icd10"]
    assert field.metric("pattern_agreement").total_count == 1  # 5,000 characters: scored
    error = _refused(REGEX, "(?:secret )+", "secret " * 714 + "x" * 3)  # 5,001
    assert str(error) == "match_text_too_long"  # the library knows no line; the CLI names it
    # The limit is on the normalized answer: surrounding space is trimmed first, and the
    # ligature ﬀ (one code point) normalizes to "ff" (two).
    _one_row(REGEX, "f+", "  " + "f" * limit + "  ")
    _refused(REGEX, "f+", "\ufb00" * (limit // 2 + 1))
    # Answers that are not strings have no length, and are simply wrong.
    assert _one_row(REGEX, "f+", 5).by_field["dx.icd10"].metric("pattern_agreement").total_count


def test_fuzzy_answers_and_gold_may_have_their_limit_of_normalized_characters() -> None:
    assert MAX_FUZZY_TEXT == 50_000
    limit = fuzzy_text_limit(Decimal("0.85"))  # FUZZY's threshold
    assert limit == 129_099
    near = ("secret " * (limit // 7 + 1))[: limit - 6] + "x"  # limit - 5 characters
    field = _one_row(FUZZY, near + "abcde", near + "abcdf").by_field["dx.summary"]
    assert field.metric("fuzzy_agreement").success_count == 1
    _refused(FUZZY, near, near + "abcdef")  # the answer, limit + 1
    with pytest.raises(ChartscoreError) as caught:
        _one_row(FUZZY, near + "abcdef", near)  # the gold value, before any answer is read
    assert str(caught.value) == "match_text_too_long (gold field dx.summary)"
    assert caught.value.__context__ is None


@pytest.mark.parametrize(
    ("threshold", "limit"),
    # Hand-computed: n * floor((1 - t) * n) <= 50,000**2 at n and not at n + 1.
    [("0.0001", 50_003), ("0.5", 70_711), ("0.85", 129_099), ("0.9", 158_117)],
)
def test_the_fuzzy_length_limit_is_the_largest_length_within_the_work(
    threshold: str, limit: int
) -> None:
    p, q = Decimal(threshold).as_integer_ratio()

    def work(n: int) -> int:
        return n * ((q - p) * n // q)

    assert work(limit) <= FUZZY_WORK < work(limit + 1)
    assert fuzzy_text_limit(Decimal(threshold)) == limit


@settings(max_examples=examples(200))
@given(st.decimals(min_value=0, max_value=1, places=4))
def test_the_fuzzy_length_limit_holds_its_definition(threshold: Decimal) -> None:
    p, q = threshold.as_integer_ratio()
    limit = fuzzy_text_limit(threshold)
    assert MAX_FUZZY_TEXT <= limit <= LONGEST_FUZZY_TEXT
    assert limit == MAX_FUZZY_TEXT or limit * ((q - p) * limit // q) <= FUZZY_WORK
    nxt = limit + 1
    assert limit == LONGEST_FUZZY_TEXT or nxt * ((q - p) * nxt // q) > FUZZY_WORK


def test_two_200000_character_texts_are_compared_at_a_high_threshold() -> None:
    high = {"fields": {"dx.summary": {"type": "text", "match": {"fuzzy": 0.95}}}}
    text = "secret " * 28_571 + "abc"  # 200,000 characters
    field = _one_row(high, text, text[:-3] + "abd").by_field["dx.summary"]  # one substitution
    assert field.metric("fuzzy_agreement").success_count == 1
    field = _one_row(high, text, "x" * 200_000).by_field["dx.summary"]
    assert field.metric("fuzzy_agreement").success_count == 0
    _refused(high, text, text + "d")  # 200,001 characters
    # The same texts are refused at 0.85 (limit 129,099): the gold value, before any answer.
    with pytest.raises(ChartscoreError) as caught:
        _one_row(FUZZY, text, text)
    assert caught.value.code is ErrorCode.MATCH_TEXT_TOO_LONG
    assert caught.value.__context__ is None and "secret" not in str(caught.value)


def test_the_command_line_names_the_line_of_a_long_answer(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {"case_id": f"c{i}", "field_id": "dx.icd10", "field_type": "text", "value": "a+"}
            for i in range(3)
        ],
    )
    answers = ["a", "secret" * 1000, "a"]
    predictions = write_jsonl(
        tmp_path / "predictions.jsonl",
        [{"case_id": f"c{i}", "field_id": "dx.icd10", "value": a} for i, a in enumerate(answers)],
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(REGEX), encoding="utf-8")
    out = tmp_path / "report.json"
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    argv += ["--schema", str(schema), "--out", str(out)]
    for jobs in ("1", "2"):
        status, stdout, stderr = _run_cli([*argv, "--jobs", jobs])
        assert (status, stdout) == (1, "")
        assert stderr.startswith("chartscore: error: match_text_too_long (predictions line 2): ")
        assert "secret" not in stderr and not out.exists()


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- the extra


def test_the_engines_are_the_match_extra_not_dependencies() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    for engine in ("google-re2", "rapidfuzz"):
        assert not any(d.startswith(engine) for d in project["dependencies"])
        assert any(d.startswith(engine) for d in extras["match"])
        assert any(d.startswith(engine) for d in extras["test"])  # CI runs these tests


def _without(modules: tuple[str, ...], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A process where the named packages cannot be imported.
    block = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    return subprocess.run(
        [sys.executable, "-c", block + code],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


_RE2 = ("re2", "re2._re2")
_RAPIDFUZZ = ("rapidfuzz", "rapidfuzz.distance", "rapidfuzz.distance.Levenshtein")
_INSTALL = "pip install 'chartscore[share]' (share, audit) or 'chartscore[match]' (regex, fuzzy)"


@pytest.mark.parametrize(
    ("blocked", "schema", "message"),
    [
        (_RE2, REGEX, "missing_dependency (schema field dx.icd10)"),
        (_RAPIDFUZZ, FUZZY, "missing_dependency (schema field dx.summary)"),
        (_RE2 + _RAPIDFUZZ, {"fields": {**FUZZY["fields"], **REGEX["fields"]}}, None),
    ],
)
def test_without_the_extra_a_match_mode_says_how_to_install_it(
    tmp_path: Path, blocked: tuple[str, ...], schema: dict[str, Any], message: str | None
) -> None:
    # The first field (in sorted order) whose engine is missing is named, before any row is
    # read, by the library, the Dask engine's client and the command line.
    message = message or "missing_dependency (schema field dx.icd10)"
    field_id = message.rsplit(" ", 1)[1][:-1]
    write_jsonl(
        tmp_path / "gold.jsonl",
        [{"case_id": "c1", "field_id": field_id, "field_type": "text", "value": "secret"}],
    )
    (tmp_path / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    code = (
        "import chartscore\n"
        "from chartscore import ChartscoreError, GoldField, score\n"
        "from chartscore.cli import main\n"
        "calls = [\n"
        f"    lambda: score([GoldField('c1', {field_id!r}, 'text', 'secret')], [],\n"
        f"                  schema={schema!r}),\n"
        "    lambda: chartscore.score_files('gold.jsonl', 'gold.jsonl', schema='schema.json'),\n"
        "    lambda: chartscore.score_dask('gold.jsonl', 'gold.jsonl',\n"
        "                                  schema='schema.json', scheduler='synchronous'),\n"
        "]\n"
        "for call in calls:\n"
        "    try:\n"
        "        call()\n"
        "    except ChartscoreError as error:\n"
        "        assert error.__context__ is None and error.__cause__ is None\n"
        "        print(error)\n"
        "    else:\n"
        "        raise AssertionError('no error')\n"
        "status = main(['score', '--gold', 'gold.jsonl', '--predictions', 'gold.jsonl',\n"
        "               '--schema', 'schema.json', '--out', 'report.json'])\n"
        "print(status)\n"
    )
    result = _without(blocked, code, tmp_path)
    assert result.stdout == f"{message}\n" * 3 + "1\n", result.stderr
    assert result.stderr == f"chartscore: error: {message}: {_INSTALL}\n"
    assert not (tmp_path / "report.json").exists()


def test_each_mode_needs_only_its_own_engine(tmp_path: Path) -> None:
    code = (
        "from chartscore import GoldField, Prediction, score\n"
        "for field_id, schema, gold, answer in [\n"
        f"    ('dx.icd10', {REGEX!r}, 'I50[.][0-9]', 'I50.1'),\n"
        f"    ('dx.summary', {FUZZY!r}, 'heart failure', 'heart failur'),\n"
        "]:\n"
        "    rows = [GoldField('c1', field_id, 'text', gold)]\n"
        "    try:\n"
        "        report = score(rows, [Prediction('c1', field_id, answer)], schema=schema)\n"
        "    except Exception as error:\n"
        "        print(field_id, error)\n"
        "    else:\n"
        "        print(field_id, report.by_field[field_id].metric(\n"
        "            'pattern_agreement' if field_id == 'dx.icd10' else 'fuzzy_agreement'\n"
        "        ).success_count)\n"
    )
    assert _without(_RAPIDFUZZ, code, tmp_path).stdout == (
        "dx.icd10 1\ndx.summary missing_dependency (schema field dx.summary)\n"
    )
    assert _without(_RE2, code, tmp_path).stdout == (
        "dx.icd10 missing_dependency (schema field dx.icd10)\ndx.summary 1\n"
    )


def test_the_engines_are_imported_only_for_a_match_mode(tmp_path: Path) -> None:
    # Importing chartscore, reading a schema with match modes, scoring without them, and
    # adding up partials of a schema with match modes load no engine; scoring with one does.
    code = (
        "import sys\n"
        "import chartscore\n"
        "from chartscore import GoldField, Prediction, Schema, score\n"
        "from chartscore.workflows.partials import merge_partials\n"
        "engines = ('re2', 'rapidfuzz')\n"
        f"both = Schema.from_dict({{'fields': {{**{FUZZY['fields']!r}, **{REGEX['fields']!r}}}}})\n"
        "score([GoldField('c1', 'dx.note', 'text', 'x')], [Prediction('c1', 'dx.note', 'x')])\n"
        "merge_partials([sys.stdin.read()])\n"
        "print(sorted(e for e in engines if e in sys.modules))\n"
        f"score([GoldField('c1', 'dx.icd10', 'text', 'x')], [], schema={REGEX!r})\n"
        "print(sorted(e for e in engines if e in sys.modules))\n"
    )
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {"case_id": "c1", "field_id": "dx.icd10", "field_type": "text", "value": "a+"},
            {"case_id": "c1", "field_id": "dx.summary", "field_type": "text", "value": "abc"},
        ],
    )
    predictions = write_jsonl(
        tmp_path / "predictions.jsonl",
        [
            {"case_id": "c1", "field_id": "dx.icd10", "value": "aa"},
            {"case_id": "c1", "field_id": "dx.summary", "value": "abd"},
        ],
    )
    both = {"fields": {**FUZZY["fields"], **REGEX["fields"]}}
    _, partial = score_with_partial(gold, predictions, schema=Schema.from_dict(both))
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=partial,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert (result.stdout, result.stderr) == ("[]\n['re2']\n", "")


# --------------------------------------------------------------------------- scaling out


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(1, 12), st.integers(1, 4))
def test_the_dask_engine_and_partials_give_the_same_match_figures(
    tmp_path_factory: pytest.TempPathFactory, chooser: random.Random, cases: int, sites: int
) -> None:
    from chartscore import score_dask, score_files
    from chartscore.workflows.partials import merge_partials

    cohort = build_cohort(chooser.choice, ["text:regex", "text:fuzzy", "text"], cases)
    where = tmp_path_factory.mktemp("match")
    gold, predictions, schema = cohort_files(cohort, where)
    pooled = score_files(gold, predictions, schema=schema)
    dask = score_dask(gold, predictions, schema=schema, scheduler="synchronous", partitions=3)
    assert dask.to_json() == pooled.to_json()
    # Sites score their own cases; the merged partials are the pooled report (a partial has
    # no error magnitudes, and text fields have none).
    site_of = {case: chooser.randrange(sites) for case, *_ in cohort.gold}
    texts = []
    for site in sorted(set(site_of.values())):
        site_gold = [line for line in gold.read_text().splitlines() if _site(line, site_of) == site]
        site_predictions = [
            line for line in predictions.read_text().splitlines() if _site(line, site_of) == site
        ]
        folder = where / f"site-{site}"
        folder.mkdir()
        (folder / "gold.jsonl").write_text("\n".join(site_gold) + "\n")
        (folder / "predictions.jsonl").write_text("\n".join(site_predictions) + "\n")
        _, text = score_with_partial(
            folder / "gold.jsonl", folder / "predictions.jsonl", schema=schema
        )
        texts.append(text)
    assert merge_partials(texts).to_json() == pooled.without_magnitudes().to_json()


def _site(line: str, site_of: dict[str, int]) -> int:
    return site_of[json.loads(line)["case_id"]]


def test_the_demo_runs_without_the_match_extra(tmp_path: Path) -> None:
    # README's first command installs chartscore alone: `chartscore demo` must still run. Its
    # fuzzy and regex fields are then scored as plain text, and the summary says so.
    # The summary, then the JSON report (which names the type metrics the summary leaves out).
    code = (
        "from chartscore.cli import main\nimport sys\n"
        "sys.exit(main(['demo']) or main(['demo', '--json']))\n"
    )
    result = _without(_RE2 + _RAPIDFUZZ, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fuzzy and regex fields were scored as plain text" in result.stdout
    assert "pip install 'chartscore[match]'" in result.stdout
    assert '"fuzzy_agreement"' not in result.stdout and result.stderr == ""
    with_extra = _without((), code, tmp_path)
    assert with_extra.returncode == 0 and "plain text" not in with_extra.stdout
    assert '"fuzzy_agreement"' in with_extra.stdout
