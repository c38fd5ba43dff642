"""Several raters on the same charts: their answers joined per (case, field) and counted.

Each rater's predictions are normalized by the schema's field types (the same
:class:`~chartscore.scoring.agreement.FieldRule` that scoring uses) and kept per key
until every rater is read. :meth:`RaterTable.agreement` then counts, per field, every
rater's answered, abstained, wrong-type and missing entries, each pair's agreement
table and the multi-rater patterns, and computes the coefficients
(:mod:`chartscore.stats.multirater`, Cohen's kappa from :mod:`chartscore.stats.binomial`).
What it returns (:class:`~chartscore.documents.agreement.Agreement`) is value-free; the
normalized answers never leave this module.

A unit is a key ``(case_id, field_id)`` that at least one rater's file names. A rater
with no entry for a unit is *missing* there; one whose value is null *abstained*; an
answer that is not a value of the field's type is *wrong-type*. None of the three is a
rating: they are counted apart and never form a category.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Final

from chartscore.documents.agreement import (
    ALPHA_METRIC_OF,
    KAPPA_TYPES,
    Agreement,
    Coefficient,
    FieldAgreement,
    PairAgreement,
    RaterCounts,
    count_result,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.metrics import FieldType
from chartscore.records.schema import Schema
from chartscore.scoring.agreement import FieldRule, Key
from chartscore.stats.binomial import cohen_kappa
from chartscore.stats.clustered import z_for
from chartscore.stats.multirater import chance_corrected, krippendorff_alpha
from chartscore.stats.run_cost import RunHeader

__all__ = ["RaterTable"]

_ABSTAINED: Final = object()
_WRONG_TYPE: Final = object()


class RaterTable:
    """The normalized answers of several raters, by key, for one schema.

    Holds values: inside the boundary only. Its ``repr`` shows nothing.

    Args:
        schema: The schema declaring every field the raters answer.
        raters: The raters' labels, in the order their files are added.
    """

    __slots__ = ("_answers", "_labels", "_rules", "_schema")

    def __init__(self, schema: Schema, raters: Sequence[str]) -> None:
        self._schema = schema
        self._labels = tuple(raters)
        self._rules: dict[str, FieldRule] = {}
        self._answers: list[dict[tuple[str, str], object]] = [{} for _ in self._labels]

    def __repr__(self) -> str:
        return "RaterTable(...)"

    def adder(self, rater: int) -> Callable[[str, str, object, bool, object, object], None]:
        """The row adder of rater number ``rater`` (its position), for ``feed_rows``.

        The adder raises ``undeclared_rater_field`` for a field the schema does not
        declare and ``duplicate_prediction_key`` for a key the rater gave twice. A line's
        run cost is not part of agreement: ``usage`` is skipped, and so is a run header.
        """
        answers = self._answers[rater]

        def add(
            case_id: str, field_id: str, value: object, _s: bool, _u: object, usage: object
        ) -> None:
            if type(usage) is RunHeader:
                return
            rule = self._rule(field_id)
            key = (case_id, field_id)
            if key in answers:
                raise ChartscoreError(ErrorCode.DUPLICATE_PREDICTION_KEY)
            if value is None:
                answers[key] = _ABSTAINED
                return
            found = rule.answer_key(value)
            answers[key] = _WRONG_TYPE if found is None else found

        return add

    def _rule(self, field_id: str) -> FieldRule:
        rule = self._rules.get(field_id)
        if rule is None:
            spec = self._schema.get(field_id)
            if spec is None:
                raise ChartscoreError(ErrorCode.UNDECLARED_RATER_FIELD)
            rule = self._rules[field_id] = FieldRule(spec.field_type, spec)
        return rule

    def agreement(self, confidence: float) -> Agreement:
        """The value-free agreement document of the raters read so far.

        Raters appear in label order, pairs in the order of their labels, so the
        document does not depend on the order the files were given in.
        """
        z = z_for(confidence)
        order = sorted(range(len(self._labels)), key=lambda i: self._labels[i])
        labels = tuple(self._labels[i] for i in order)
        answers = [self._answers[i] for i in order]
        by_field: dict[str, FieldAgreement] = {}
        pooled_cells: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
        pooled_counts: dict[tuple[int, int], list[int]] = {}
        offset = 0
        for field_id in sorted(self._rules):
            rule = self._rules[field_id]
            keys = sorted({key for table in answers for key in table if key[1] == field_id})
            column = [[table.get(key) for table in answers] for key in keys]
            part, categories = _field(rule, labels, column, z, confidence)
            by_field[field_id] = part
            for pair in part.pairs:
                totals = pooled_counts.setdefault(pair.raters_index, [0, 0])
                totals[0] += pair.agreement.success_count
                totals[1] += pair.agreement.total_count
            if rule.field_type in KAPPA_TYPES and categories is not None:
                index, size = categories
                for a, b in itertools.combinations(range(len(labels)), 2):
                    cells = pooled_cells.setdefault((a, b), {})
                    for row in column:
                        x, y = index(row[a]), index(row[b])
                        if x is not None and y is not None:
                            cell = (offset + x, offset + y)
                            cells[cell] = cells.get(cell, 0) + 1
                offset += size
        pooled = []
        for (a, b), (agreeing, both) in sorted(pooled_counts.items()):
            cells = pooled_cells.get((a, b), {})
            found = cohen_kappa([(i, j, n) for (i, j), n in sorted(cells.items())], offset, "none")
            kappa = None  # no field on a scale of categories
            if found is not None:
                kappa = Coefficient(found[0], None, found[2], None)
            elif (a, b) in pooled_cells:  # undefined: null, and over how many pairs
                kappa = Coefficient(None, None, sum(cells.values()), None)
            pooled.append(
                PairAgreement(
                    raters=(labels[a], labels[b]),
                    raters_index=(a, b),
                    agreement=count_result(agreeing, both, None),
                    kappa=kappa,
                )
            )
        return Agreement(
            raters=labels, confidence=confidence, by_field=by_field, pooled=tuple(pooled)
        )


Categories = tuple[Callable[[object], int | None], int]


def _categories(rule: FieldRule, seen: set[Key]) -> tuple[Categories | None, list[Fraction]]:
    # The field's scale: (answer -> position or None, size), and for numbers each position's value.
    kind = rule.field_type
    if kind is FieldType.ORDINAL:
        size = rule.levels
        return (lambda a: a if type(a) is int else None, size), []
    if kind is FieldType.BOOLEAN:
        return (lambda a: int(a) if type(a) is bool else None, 2), []
    if kind is FieldType.CATEGORICAL:
        choices = rule.spec.choices if rule.spec is not None and rule.spec.choices else frozenset()
        names = sorted({*choices, *(key for key in seen if type(key) is str)})
        position = {name: i for i, name in enumerate(names)}
        return (lambda a: position.get(a) if type(a) is str else None, len(names)), []
    if kind is FieldType.NUMBER:
        numbers = sorted(key for key in seen if isinstance(key, int | Decimal))
        where = {number: i for i, number in enumerate(numbers)}
        values = [Fraction(number) for number in numbers]
        return (lambda a: where.get(a) if isinstance(a, int | Decimal) else None, len(numbers)), (
            values
        )
    return None, []


def _answered(answer: object) -> bool:
    return answer is not None and answer is not _ABSTAINED and answer is not _WRONG_TYPE


def _field(
    rule: FieldRule,
    labels: tuple[str, ...],
    column: list[list[object]],
    z: float,
    confidence: float,
) -> tuple[FieldAgreement, Categories | None]:
    raters = len(labels)
    counts = []
    for r in range(raters):
        answered = abstained = wrong = missing = 0
        for row in column:
            answer = row[r]
            if answer is None:
                missing += 1
            elif answer is _ABSTAINED:
                abstained += 1
            elif answer is _WRONG_TYPE:
                wrong += 1
                answered += 1
            else:
                answered += 1
        counts.append(RaterCounts(answered, abstained, wrong, missing))
    seen = {answer for row in column for answer in row if _answered(answer)}
    categories, values = _categories(rule, seen)
    weighting = rule.kappa_weighting or "none"
    pairs = []
    for a, b in itertools.combinations(range(raters), 2):
        agreeing = both = 0
        cells: dict[tuple[int, int], int] = {}
        for row in column:
            x, y = row[a], row[b]
            if not (_answered(x) and _answered(y)):
                continue
            both += 1
            agreeing += x == y
            if categories is not None and rule.field_type in KAPPA_TYPES:
                i, j = categories[0](x), categories[0](y)
                if i is not None and j is not None:
                    cells[i, j] = cells.get((i, j), 0) + 1
        kappa = None
        if rule.field_type in KAPPA_TYPES and categories is not None:
            table = [(i, j, n) for (i, j), n in sorted(cells.items())]
            found = cohen_kappa(table, categories[1], weighting, z)
            # Undefined (no pairs, chance agreement 1): null figures, and over what.
            kappa = Coefficient(None, None, sum(cells.values()), None)
            if found is not None:
                kappa = Coefficient(found[0], found[1], found[2], None)
        pairs.append(
            PairAgreement(
                raters=(labels[a], labels[b]),
                raters_index=(a, b),
                agreement=count_result(agreeing, both, z),
                kappa=kappa,
            )
        )
    fleiss = gwet = alpha = None
    if categories is not None:
        index, size = categories
        units: dict[tuple[tuple[int, int], ...], int] = {}
        for row in column:
            found_counts: dict[int, int] = {}
            for answer in row:
                position = index(answer) if _answered(answer) else None
                if position is not None:
                    found_counts[position] = found_counts.get(position, 0) + 1
            if found_counts:
                pattern = tuple(sorted(found_counts.items()))
                units[pattern] = units.get(pattern, 0) + 1
        pairable = [(sum(c for _, c in p), many) for p, many in units.items()]
        shape = (
            sum(many for r, many in pairable if r >= 2),
            sum(many * r * (r - 1) for r, many in pairable),
        )
        if rule.field_type in KAPPA_TYPES:
            chance = (
                {
                    name: chance_corrected(units, size, weighting, name, confidence)
                    for name in ("fleiss", "gwet")
                }
                if units
                else {}
            )
            fleiss = _coefficient(chance.get("fleiss"), shape)
            gwet = _coefficient(chance.get("gwet"), shape)
        metric = ALPHA_METRIC_OF[rule.field_type.value]
        found_alpha = (
            krippendorff_alpha(units, size, metric, confidence, values or None) if units else None
        )
        alpha = _coefficient(found_alpha, shape)
    part = FieldAgreement(
        field_type=rule.field_type.value,
        unit_count=len(column),
        raters=dict(zip(labels, counts, strict=True)),
        pairs=tuple(pairs),
        fleiss_kappa=fleiss,
        gwet=gwet,
        alpha=alpha,
    )
    return part, categories


def _coefficient(
    found: tuple[float, tuple[float, float] | None, int, int] | None, shape: tuple[int, int]
) -> Coefficient:
    # An undefined coefficient still says over how many units and pairs it was undefined.
    if found is None:
        return Coefficient(None, None, *shape)
    return Coefficient(found[0], found[1], found[2], found[3])
