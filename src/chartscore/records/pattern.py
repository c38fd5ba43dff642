"""Gold patterns for ``regex`` fields: a subset of Python's ``re``, matched in linear time.

A regex field's gold value is a pattern that must match the whole normalized
answer. Gold files are data, so a pattern must never be able to stall scoring
(catastrophic backtracking: ``(a|a)*b`` takes 2^n steps in a backtracking
engine). chartscore therefore parses a documented subset of ``re`` syntax
(docs/metrics.md, "Pattern agreement") into a Thompson automaton and runs it
as a lazily built DFA: the time per answer character is bounded by the
automaton's size, whatever the pattern and the answer. No runtime dependency
(a linear-time engine such as RE2 would be a compiled one) and no timer.

Anything outside the subset (backreferences, lookarounds, named groups,
flags, anchors other than a leading ``^`` and a trailing ``$``, possessive
quantifiers, letter escapes other than ``\\d \\D \\w \\W \\s \\S``) and any
pattern beyond the size limits is refused: :func:`compile_pattern` returns
None and the scorer raises ``invalid_gold_pattern``.

Letters are matched as normalized text: every literal character of the pattern
is normalized as an answer is (NFKC, case folding, NFKC), so ``I50`` matches the
answer ``"i50"`` (the normalized form of ``"I50"``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Final

MAX_PATTERN_LENGTH: Final = 1000
"""A pattern may have at most this many characters."""

MAX_REPEAT: Final = 1000
"""The largest bound of a counted repetition ``{m,n}``."""

MAX_STATES: Final = 10_000
"""The largest automaton a pattern may compile to (counted repetitions are copies)."""

_CACHE_LIMIT: Final = 1 << 14
_METACHARACTERS: Final = frozenset(".^$*+?{}[]\\|()")
_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ ")

CharTest = Callable[[str], bool]


class _Refused(Exception):  # noqa: N818 - a control-flow signal, never leaves this module
    """The pattern is outside the subset or its limits."""


def _fold(character: str) -> str:
    # The normalized text of one literal character (whitespace is one space).
    if character.isspace():
        return " "
    if character.isascii():
        return character.lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", character).casefold())


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


_CLASS_ESCAPES: Final[dict[str, CharTest]] = {
    "d": str.isdecimal,
    "D": lambda c: not c.isdecimal(),
    "w": _is_word,
    "W": lambda c: not _is_word(c),
    "s": str.isspace,
    "S": lambda c: not c.isspace(),
}


# The syntax tree: ("chars", text) a literal sequence; ("test", CharTest) one character;
# ("cat", [nodes]); ("alt", [nodes]); ("repeat", node, low, high or None).
Node = tuple[object, ...]


class _Parser:
    """A recursive-descent parser of the subset (docs/metrics.md)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str | None:
        return self.text[self.at] if self.at < len(self.text) else None

    def take(self) -> str:
        if self.at >= len(self.text):
            raise _Refused
        character = self.text[self.at]
        self.at += 1
        return character

    def parse(self) -> Node:
        text = self.text
        # A leading ^ and a trailing (unescaped) $ are no-ops under a whole-answer match.
        if text.startswith("^"):
            self.at = 1
        end = len(text)
        if end > self.at and text.endswith("$") and not _escaped(text, end - 1):
            self.text = text = text[: end - 1]
        node = self.alternation()
        if self.at != len(text):
            raise _Refused  # an unbalanced ')'
        return node

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> Node:
        items: list[Node] = []
        while (character := self.peek()) is not None and character not in "|)":
            atom = self.atom()
            items.append(self.quantified(atom))
        return ("cat", items)

    def atom(self) -> Node:
        character = self.take()
        if character == "(":
            if self.peek() == "?":
                # Only the non-capturing group (?:...); lookarounds, names, flags are refused.
                if self.text[self.at : self.at + 2] != "?:":
                    raise _Refused
                self.at += 2
            inner = self.alternation()
            if self.take() != ")":
                raise _Refused
            return inner
        if character == ".":
            return ("test", _any)
        if character == "[":
            return ("test", self.character_class())
        if character == "\\":
            escaped = self.take()
            test = _CLASS_ESCAPES.get(escaped)
            if test is not None:
                return ("test", test)
            if escaped not in _PUNCTUATION:
                raise _Refused  # \b, \A, \1, \n, \x41, ...: not in the subset
            return ("chars", _fold(escaped))
        if character in _METACHARACTERS:
            raise _Refused  # a quantifier with nothing to repeat, ^ or $ inside, ] or }
        return ("chars", _fold(character))

    def quantified(self, atom: Node) -> Node:
        character = self.peek()
        if character is None or character not in "*+?{":
            return atom
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
        if (following := self.peek()) is not None and following in "*+?{":
            raise _Refused  # possessive (a*+) or a repeated repeat (a**)
        return ("repeat", atom, low, high)

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

    def character_class(self) -> CharTest:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        singles: set[str] = set()
        ranges: list[tuple[str, str]] = []
        tests: list[CharTest] = []
        first = True
        while True:
            character = self.take()
            if character == "]" and not first:
                break
            first = False
            if character == "\\" and self.peek() in _CLASS_ESCAPES:
                tests.append(_CLASS_ESCAPES[self.take()])
                continue
            raw_low, low = self.class_character(character)
            if self.peek() == "-" and self.text[self.at + 1 : self.at + 2] not in ("]", ""):
                self.at += 1
                raw_high, high = self.class_character(self.take())
                if raw_low > raw_high or low > high:
                    raise _Refused
                ranges.append((low, high))
            else:
                singles.add(low)
        frozen = frozenset(singles)
        ranged = tuple(ranges)
        alternatives = tuple(tests)

        def member(c: str) -> bool:
            inside = (
                c in frozen
                or any(low <= c <= high for low, high in ranged)
                or any(test(c) for test in alternatives)
            )
            return inside is not negated

        return member

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


def _escaped(text: str, index: int) -> bool:
    # Whether text[index] is preceded by an odd number of backslashes.
    count = 0
    while index > count and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 4


def _any(character: str) -> bool:
    return character != "\n"


class _Automaton:
    """A Thompson automaton: node i has a character test and target, or epsilon edges."""

    def __init__(self) -> None:
        self.tests: list[CharTest | None] = []
        self.targets: list[int] = []
        self.epsilon: list[list[int]] = []

    def node(self) -> int:
        if len(self.tests) >= MAX_STATES:
            raise _Refused
        self.tests.append(None)
        self.targets.append(-1)
        self.epsilon.append([])
        return len(self.tests) - 1

    def build(self, tree: Node) -> tuple[int, int]:
        """The (start, accept) nodes of a fragment matching ``tree``."""
        kind = tree[0]
        if kind == "chars":
            start = end = self.node()
            for character in tree[1]:  # type: ignore[attr-defined]
                following = self.node()
                self.tests[end] = character.__eq__
                self.targets[end] = following
                end = following
            return start, end
        if kind == "test":
            start, end = self.node(), self.node()
            self.tests[start] = tree[1]  # type: ignore[call-overload]
            self.targets[start] = end
            return start, end
        if kind == "cat":
            start = end = self.node()
            for item in tree[1]:  # type: ignore[attr-defined]
                first, last = self.build(item)
                self.epsilon[end].append(first)
                end = last
            return start, end
        if kind == "alt":
            start, end = self.node(), self.node()
            for branch in tree[1]:  # type: ignore[attr-defined]
                first, last = self.build(branch)
                self.epsilon[start].append(first)
                self.epsilon[last].append(end)
            return start, end
        _, inner, low, high = tree
        start = end = self.node()
        for _ in range(low):  # type: ignore[call-overload]
            first, last = self.build(inner)  # type: ignore[arg-type]
            self.epsilon[end].append(first)
            end = last
        if high is None:
            first, last = self.build(inner)  # type: ignore[arg-type]
            loop_end = self.node()
            self.epsilon[end] += [first, loop_end]
            self.epsilon[last] += [first, loop_end]
            return start, loop_end
        finish = self.node()
        for _ in range(high - low):  # type: ignore[operator]
            first, last = self.build(inner)  # type: ignore[arg-type]
            self.epsilon[end] += [first, finish]
            end = last
        self.epsilon[end].append(finish)
        return start, finish


class Pattern:
    """A compiled gold pattern: :meth:`fullmatch` runs in time linear in the answer.

    The DFA is built lazily: a state is the set of automaton nodes the answer
    read so far can reach; each (state, character) step is computed once and
    cached (the cache is bounded, and cleared when full). Holds a gold value:
    its repr shows nothing of it.
    """

    __slots__ = ("_accept", "_automaton", "_start", "_steps")

    def __init__(self, automaton: _Automaton, start: int, accept: int) -> None:
        self._automaton = automaton
        self._accept = accept
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self._start = self._closure([start])

    def __repr__(self) -> str:
        return "Pattern(<hidden>)"

    def _closure(self, nodes: list[int]) -> frozenset[int]:
        # The nodes reachable by epsilon edges that test a character, plus the accept node.
        epsilon = self._automaton.epsilon
        tests = self._automaton.tests
        seen = set(nodes)
        todo = list(nodes)
        while todo:
            for following in epsilon[todo.pop()]:
                if following not in seen:
                    seen.add(following)
                    todo.append(following)
        return frozenset(n for n in seen if tests[n] is not None or n == self._accept)

    def _step(self, state: frozenset[int], character: str) -> frozenset[int]:
        tests = self._automaton.tests
        targets = self._automaton.targets
        reached = [targets[n] for n in state if (test := tests[n]) is not None and test(character)]
        following = self._closure(reached)
        if len(self._steps) >= _CACHE_LIMIT:
            self._steps.clear()
        self._steps[state, character] = following
        return following

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text`` (a normalized answer)."""
        state = self._start
        steps = self._steps
        for character in text:
            following = steps.get((state, character))
            if following is None:
                following = self._step(state, character)
            if not following:
                return False
            state = following
        return self._accept in state


def compile_pattern(text: str) -> Pattern | None:
    """The compiled pattern, or None when it is outside the subset or its limits.

    Args:
        text: The gold value of a regex field, as written in the gold file.
    """
    if type(text) is not str or len(text) > MAX_PATTERN_LENGTH:
        return None
    pattern: Pattern | None = None
    try:
        tree = _Parser(text).parse()
        automaton = _Automaton()
        start, accept = automaton.build(tree)
        pattern = Pattern(automaton, start, accept)
    except _Refused:
        pattern = None
    return pattern
