"""REDCap branching logic, the documented subset: parsed, then evaluated on a record's cells.

A dictionary's "Branching Logic" says when REDCap shows a field. ``import redcap`` turns a
gold field left blank because its logic was false into a not-applicable gold row
(docs/import.md, "Branching logic"). Only this subset is read, by a small recursive-descent
parser (no ``eval``)::

    logic      := disjunct ("or" disjunct)*
    disjunct   := term ("and" term)*
    term       := "(" logic ")" | comparison
    comparison := reference ("=" | "<>" | "!=") literal
    reference  := "[" name "]" | "[" name "(" code ")" "]"      (a checkbox option)
    literal    := "'" text "'" | '"' text '"' | number

``and`` and ``or`` in any case; ``and`` binds tighter than ``or``. Anything else (events,
functions, ``<`` and ``>``, arithmetic, smart variables) is not parsed: :func:`parse` gives
None and the importer counts the field, never guessing. A parsed logic compares a record's
cells as REDCap does: a field's raw cell (trimmed) equals the literal, a checkbox option's
column is ``1`` or ``0``; a number literal also equals a cell holding the same number.
The text here comes from the dictionary, never from a record, and is never shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Final

import attrs

_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<ref>\[(?P<name>[a-z][a-z0-9_]*)(?:\((?P<code>[^()\[\]]+)\))?\])
      | (?P<op><>|!=|=)
      | '(?P<single>[^']*)'
      | "(?P<double>[^"]*)"
      | (?P<number>-?[0-9]+(?:\.[0-9]+)?)
      | (?P<paren>[()])
      | (?P<word>[A-Za-z]+)
    )""",
    re.VERBOSE,
)


@attrs.frozen(repr=False)
class Comparison:
    """``[name] op literal``, or ``[name(code)] op literal`` for a checkbox option."""

    name: str
    code: str | None
    equal: bool
    literal: str
    number: bool

    def __repr__(self) -> str:
        return "Comparison(<hidden>)"

    def holds(self, cell: Callable[[str, str | None], str | None]) -> bool | None:
        """Whether it holds for a record (``cell``: a column's trimmed text, None if absent)."""
        found = cell(self.name, self.code)
        if found is None:
            return None
        same = found == self.literal
        if not same and self.number and found:
            same = _number(found) == _number(self.literal)
        return same if self.equal else not same


@attrs.frozen(repr=False)
class Logic:
    """An ``or`` of ``and``s of terms (a :class:`Comparison` or a nested :class:`Logic`)."""

    disjuncts: tuple[tuple[Comparison | Logic, ...], ...]

    def __repr__(self) -> str:
        return "Logic(<hidden>)"

    def holds(self, cell: Callable[[str, str | None], str | None]) -> bool | None:
        """Whether the field is shown; None when a referenced column is not in the export."""
        shown = False
        for terms in self.disjuncts:
            every = True
            for term in terms:
                found = term.holds(cell)
                if found is None:
                    return None
                every = every and found
            shown = shown or every
        return shown

    def references(self) -> frozenset[tuple[str, str | None]]:
        """The (field name, checkbox code or None) pairs it reads."""
        found: set[tuple[str, str | None]] = set()
        for terms in self.disjuncts:
            for term in terms:
                if type(term) is Comparison:
                    found.add((term.name, term.code))
                else:
                    found |= term.references()  # type: ignore[union-attr]
        return frozenset(found)


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except (InvalidOperation, ValueError):
        return None


def _tokens(text: str) -> list[tuple[str, object]] | None:
    tokens: list[tuple[str, object]] = []
    position = 0
    end = len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        position = match.end()
        if match["ref"] is not None:
            code = match["code"]
            tokens.append(("ref", (match["name"], None if code is None else code.strip())))
        elif match["op"] is not None:
            tokens.append(("op", match["op"]))
        elif match["single"] is not None or match["double"] is not None:
            literal = match["single"] if match["single"] is not None else match["double"]
            tokens.append(("literal", (literal.strip(), False)))
        elif match["number"] is not None:
            tokens.append(("literal", (match["number"], True)))
        elif match["paren"] is not None:
            tokens.append((match["paren"], None))
        else:
            word = match["word"].lower()
            if word not in ("and", "or"):
                return None
            tokens.append((word, None))
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, object]]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def take(self, kind: str) -> object:
        if self.peek() != kind:
            raise ValueError
        value = self.tokens[self.at][1]
        self.at += 1
        return value

    def logic(self) -> Logic:
        disjuncts = [self.disjunct()]
        while self.peek() == "or":
            self.take("or")
            disjuncts.append(self.disjunct())
        return Logic(tuple(disjuncts))

    def disjunct(self) -> tuple[Comparison | Logic, ...]:
        terms = [self.term()]
        while self.peek() == "and":
            self.take("and")
            terms.append(self.term())
        return tuple(terms)

    def term(self) -> Comparison | Logic:
        if self.peek() == "(":
            self.take("(")
            inner = self.logic()
            self.take(")")
            return inner
        reference: tuple[str, str | None] = self.take("ref")  # type: ignore[assignment]
        operator = self.take("op")
        literal: tuple[str, bool] = self.take("literal")  # type: ignore[assignment]
        return Comparison(reference[0], reference[1], operator == "=", literal[0], literal[1])


def parse(text: str) -> Logic | None:
    """The logic of a "Branching Logic" cell in the documented subset, or None.

    None for an empty cell too: the caller tells "no logic" (empty) from "not parsed".
    """
    tokens = _tokens(text)
    if not tokens:
        return None
    parser = _Parser(tokens)
    try:
        logic = parser.logic()
    except ValueError:
        return None
    return logic if parser.at == len(tokens) else None


def evaluate(logic: Logic, cells: Mapping[tuple[str, str | None], str]) -> bool | None:
    """Whether a record shows the field, from its referenced columns' trimmed cells."""
    return logic.holds(lambda name, code: cells.get((name, code)))
