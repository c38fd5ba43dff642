"""Gold patterns for ``regex`` fields: a subset of Python's ``re``, matched by RE2.

A regex field's gold value is a pattern that must match the whole normalized
answer. Gold files are data, so a pattern must never be able to stall scoring
(catastrophic backtracking: ``(a|a)*b`` takes 2^n steps in a backtracking
engine). chartscore therefore reads a documented subset of ``re`` syntax
(docs/metrics.md, "Pattern agreement") and hands it to google-re2, whose time
is linear in the answer and whose memory is bounded per pattern (its
``max_mem`` option, :data:`PATTERN_MEMORY`).

The subset is read here, not by RE2, so that a pattern means what ``re.fullmatch``
makes of it, whatever RE2's own dialect and Unicode tables say:

- every literal character is normalized as an answer is (NFKC, case folding,
  NFKC), so ``I50`` matches the answer ``"i50"`` (the normalized ``"I50"``),
  and is written to RE2 as its code point (``\\x{...}``);
- ``\\d \\w \\s`` and their complements become explicit classes of the code
  points for which Python's ``re`` matches them (RE2's ``\\d`` is ASCII, and its
  Unicode tables may be of another version than Python's);
- text is given to RE2 as UTF-8 with lone surrogates kept (``surrogatepass``),
  which RE2 reads as one character each, as Python does.

Anything outside the subset (backreferences, lookarounds, named groups,
flags, anchors other than a leading ``^`` and a trailing ``$``, possessive
quantifiers, letter escapes other than ``\\d \\D \\w \\W \\s \\S``), any pattern
beyond the size limits, and any pattern RE2 refuses (nested counted
repetitions whose bounds multiply to more than 1,000, or a compiled program
over the memory budget) is refused: :func:`compile_pattern` returns None and
the scorer raises ``invalid_gold_pattern``.
"""

from __future__ import annotations

import array
import functools
import re
import sys
import unicodedata
from typing import Final

from chartscore.records.match_engines import match_engine

MAX_PATTERN_LENGTH: Final = 1000
"""A pattern may have at most this many characters."""

MAX_REPEAT: Final = 1000
"""The largest bound of a counted repetition ``{m,n}``."""

MAX_STATES: Final = 10_000
"""The largest pattern size: the states of its Thompson automaton (docs/metrics.md, "Pattern
agreement": two per literal character and character test, one per sequence, two per
alternation and repetition, with repetitions counted as copies)."""

PATTERN_MEMORY: Final = 2 << 20
"""RE2's memory budget for one compiled pattern (``max_mem``): its program and its DFA cache."""

_METACHARACTERS: Final = frozenset(".^$*+?{}[]\\|()")
_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ ")
_CLASS_ESCAPES: Final = frozenset("dDwWsS")
_QUANTIFIERS: Final = frozenset("*+?{")

# A translated piece of pattern: (RE2 text, size as MAX_STATES counts it, whether a
# quantifier may follow the text as it is).
Piece = tuple[str, int, bool]


class _Refused(Exception):  # noqa: N818 - a control-flow signal, never leaves this module
    """The pattern is outside the subset or its limits."""


def _fold(character: str) -> str:
    # The normalized text of one literal character (whitespace is one space).
    if character.isspace():
        return " "
    if character.isascii():
        return character.lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", character).casefold())


def _code(code_point: int) -> str:
    # One character, written so that RE2 reads it as itself whatever it is.
    character = chr(code_point)
    if character.isascii() and character.isalnum():
        return character
    return f"\\x{{{code_point:X}}}"


@functools.cache
def _escape_ranges(letter: str) -> tuple[tuple[int, int], ...]:
    """The code point ranges Python's ``re`` matches with ``\\d``, ``\\w``, ``\\s`` or a complement.

    Computed once per process by running ``re`` itself over every code point
    (about 0.2 s), so the classes are Python's by construction.
    """
    if letter.isupper():
        return _complement(_escape_ranges(letter.lower()))
    every = array.array("I", range(sys.maxunicode + 1)).tobytes()
    universe = every.decode(f"utf-32-{sys.byteorder[0]}e", "surrogatepass")
    return tuple((run.start(), run.end() - 1) for run in re.finditer(f"\\{letter}+", universe))


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    gaps = []
    following = 0
    for low, high in ranges:
        if low > following:
            gaps.append((following, low - 1))
        following = high + 1
    if following <= sys.maxunicode:
        gaps.append((following, sys.maxunicode))
    return tuple(gaps)


@functools.cache
def _escape_class(letter: str) -> str:
    # The RE2 class of an escape outside brackets, written once per process (value-free:
    # \w alone is 734 ranges, and a pattern may use it hundreds of times).
    return _class(list(_escape_ranges(letter)), negated=False)


def _class(ranges: list[tuple[int, int]], negated: bool) -> str:
    # An RE2 character class of the union of ``ranges`` (merged, so its text stays short).
    merged: list[list[int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    items = "".join(
        _code(low) if low == high else f"{_code(low)}-{_code(high)}" for low, high in merged
    )
    return f"[{'^' if negated else ''}{items}]"


def _sequence(pieces: list[Piece]) -> Piece:
    return "".join(text for text, _, _ in pieces), 1 + sum(size for _, size, _ in pieces), False


def _alternation(branches: list[list[Piece]]) -> Piece:
    # A group or the whole pattern: one sequence, or an alternation of sequences.
    sequences = [_sequence(pieces) for pieces in branches]
    if len(sequences) == 1:
        text, size, _ = sequences[0]
    else:
        text = "|".join(text for text, _, _ in sequences)
        size = 2 + sum(size for _, size, _ in sequences)
    return f"(?:{text})", size, True


def _repeat(piece: Piece, low: int, high: int | None) -> Piece:
    text, size, atomic = piece
    # The copies the documented size counts: low, then high - low optional ones or one loop.
    size = 2 + ((low + 1) if high is None else high) * size
    if size > MAX_STATES:
        raise _Refused
    if not atomic:
        text = f"(?:{text})"
    if (low, high) == (0, None):
        quantifier = "*"
    elif (low, high) == (1, None):
        quantifier = "+"
    elif (low, high) == (0, 1):
        quantifier = "?"
    elif high is None:
        quantifier = f"{{{low},}}"
    elif low == high:
        quantifier = f"{{{low}}}"
    else:
        quantifier = f"{{{low},{high}}}"
    return text + quantifier, size, False


class _Translator:
    """Reads the subset (docs/metrics.md) and writes the same pattern in RE2 syntax.

    Iterative (a stack of open groups), so that no nesting depth a 1,000-character
    pattern can reach exhausts Python's stack.
    """

    def __init__(self, text: str) -> None:
        # A leading ^ and a trailing (unescaped) $ are no-ops under a whole-answer match.
        start = 1 if text.startswith("^") else 0
        end = len(text)
        if end > start and text.endswith("$") and not _escaped(text, end - 1):
            end -= 1
        self.text = text[start:end]
        self.at = 0
        # Each distinct class of this pattern, by its text, written once (never kept beyond
        # the pattern: it is part of a gold value).
        self.classes: dict[str, str] = {}

    def peek(self) -> str | None:
        return self.text[self.at] if self.at < len(self.text) else None

    def take(self) -> str:
        if self.at >= len(self.text):
            raise _Refused
        character = self.text[self.at]
        self.at += 1
        return character

    def translate(self) -> str:
        """The RE2 text of the whole pattern."""
        groups: list[list[list[Piece]]] = [[[]]]  # open groups, each a list of branches
        while (character := self.peek()) is not None:
            self.at += 1
            if character == "(":
                if self.peek() == "?":
                    # Only the non-capturing group (?:...); lookarounds, names, flags are refused.
                    if self.text[self.at : self.at + 2] != "?:":
                        raise _Refused
                    self.at += 2
                groups.append([[]])
            elif character == ")":
                if len(groups) == 1:
                    raise _Refused  # an unbalanced ')'
                group = _alternation(groups.pop())
                groups[-1][-1].append(self.quantified(group))
            elif character == "|":
                groups[-1].append([])
            else:
                groups[-1][-1].append(self.quantified(self.atom(character)))
        if len(groups) != 1:
            raise _Refused  # a '(' never closed
        text, size, _ = _alternation(groups[0])
        if size > MAX_STATES:
            raise _Refused
        return text

    def atom(self, character: str) -> Piece:
        if character == ".":
            return ".", 2, True
        if character == "[":
            return self.character_class(), 2, True
        if character == "\\":
            escaped = self.take()
            if escaped in _CLASS_ESCAPES:
                return _escape_class(escaped), 2, True
            if escaped not in _PUNCTUATION:
                raise _Refused  # \b, \A, \1, \n, \x41, ...: not in the subset
            return _literal(_fold(escaped))
        if character in _METACHARACTERS:
            raise _Refused  # a quantifier with nothing to repeat, ^ or $ inside, ] or }
        return _literal(_fold(character))

    def quantified(self, piece: Piece) -> Piece:
        character = self.peek()
        if character is None or character not in _QUANTIFIERS:
            return piece
        self.at += 1
        if character == "*":
            low, high = 0, None
        elif character == "+":
            low, high = 1, None
        elif character == "?":
            low, high = 0, 1
        else:
            low, high = self.bounds()
        if self.peek() == "?":
            self.at += 1  # lazy: the same set of whole-answer matches
        if (following := self.peek()) is not None and following in _QUANTIFIERS:
            raise _Refused  # possessive (a*+) or a repeated repeat (a**)
        return _repeat(piece, low, high)

    def bounds(self) -> tuple[int, int | None]:
        close = self.text.find("}", self.at)
        if close < 0:
            raise _Refused
        inside = self.text[self.at : close]
        self.at = close + 1
        first, comma, second = inside.partition(",")
        if not _digits(first) and not (comma and first == ""):
            raise _Refused
        if comma and second and not _digits(second):
            raise _Refused
        low = int(first) if first else 0
        high: int | None = low if not comma else (int(second) if second else None)
        if low > MAX_REPEAT or (high is not None and not low <= high <= MAX_REPEAT):
            raise _Refused
        return low, high

    def character_class(self) -> str:
        start = self.at
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            character = self.take()
            if character == "]" and not first:
                break
            first = False
            escape = self.peek() if character == "\\" else None
            if escape is not None and escape in _CLASS_ESCAPES:
                self.at += 1
                ranges += _escape_ranges(escape)
                continue
            raw_low, low = self.class_character(character)
            if self.peek() == "-" and self.text[self.at + 1 : self.at + 2] not in ("]", ""):
                self.at += 1
                raw_high, high = self.class_character(self.take())
                if raw_low > raw_high or low > high:
                    raise _Refused
                ranges.append((ord(low), ord(high)))
            else:
                ranges.append((ord(low), ord(low)))
        source = self.text[start : self.at]
        found = self.classes.get(source)
        if found is None:
            found = self.classes[source] = _class(ranges, negated)
        return found

    def class_character(self, character: str) -> tuple[str, str]:
        # One character of a class, as written and folded; [ ] \ and an unranged - must
        # be escaped.
        if character == "\\":
            character = self.take()
            if character not in _PUNCTUATION:
                raise _Refused
        elif character in "[]-":
            raise _Refused
        folded = _fold(character)
        if len(folded) != 1:
            raise _Refused  # a class member that folds to two characters (such as ß)
        return character, folded


def _literal(folded: str) -> Piece:
    # A literal character, normalized: one character, or several (ß is ss), or none.
    return "".join(_code(ord(c)) for c in folded), 1 + len(folded), len(folded) == 1


def _escaped(text: str, index: int) -> bool:
    # Whether text[index] is preceded by an odd number of backslashes.
    count = 0
    while index > count and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 4


def translate_pattern(text: str) -> str | None:
    """The RE2 pattern that means what ``text`` means under docs/metrics.md, or None.

    None when ``text`` is outside the subset or its size limits (RE2's own
    limits are checked when it is compiled). No engine is needed.
    """
    if type(text) is not str or len(text) > MAX_PATTERN_LENGTH:
        return None
    translated: str | None = None
    try:
        translated = _Translator(text).translate()
    except _Refused:
        translated = None
    return translated


class Pattern:
    """A compiled gold pattern: :meth:`fullmatch` runs in time linear in the answer.

    Holds a gold value (RE2's compiled form of it): its repr shows nothing of it.
    """

    __slots__ = ("_anchor", "_match")

    def __init__(self, regexp: object, anchor: object) -> None:
        self._match = regexp.Match  # type: ignore[attr-defined]
        self._anchor = anchor

    def __repr__(self) -> str:
        return "Pattern(<hidden>)"

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text`` (a normalized answer)."""
        data = text.encode("utf-8", "surrogatepass")
        return bool(self._match(self._anchor, data, 0, len(data))[0][0] >= 0)


def compile_pattern(text: str) -> Pattern | None:
    """The compiled pattern, or None when it is outside the subset or its limits.

    Args:
        text: The gold value of a regex field, as written in the gold file.

    Raises:
        ChartscoreError: ``missing_dependency`` without ``chartscore[match]``.
    """
    translated = translate_pattern(text)
    if translated is None:
        return None
    # google-re2's binding itself (re2._re2): the package's re2.compile would keep the last
    # 128 patterns in a process-wide cache (gold values beyond the run, each with its
    # budget) and raise errors that quote the pattern.
    engine = match_engine("regex")
    options = engine.RE2.Options()
    options.max_mem = PATTERN_MEMORY
    options.never_capture = True
    options.log_errors = False  # RE2 would log the pattern on stderr
    regexp = None
    try:
        regexp = engine.RE2(translated.encode("utf-8", "surrogatepass"), options)
    except Exception:  # noqa: BLE001 - whatever it is, its message may quote the pattern
        regexp = None
    if regexp is None or not regexp.ok():  # RE2's error text quotes the pattern: never read
        return None
    return Pattern(regexp, engine.RE2.Anchor.ANCHOR_BOTH)
