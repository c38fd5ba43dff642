"""A shared comparison inside a publication: its paired classes, split to meet the reports'.

A shared comparison alone is modelled on paired classes
(:class:`~chartscore.disclosure.comparison_model.ComparisonModel`): a row's
answerability and each system's state (missing, abstained, exact,
normalized-only, other; for unanswerable rows, answered). In a publication the
same rows are also counted by each system's shared report, in finer outcome
classes, per stratum cell and, for fields with a majority baseline, in or out of
the majority category.

:class:`PairedBlock` splits every paired class of a field by the stratum cell of
one reference report and, where a report of either system splits it, by the
majority bit of answerable rows. A report's classes then map onto the block by
:func:`state_of` (the one system state each outcome class has), and the ties of
:mod:`chartscore.disclosure.publication` say that, per cell and gold part, a
system's report and the block's side count the same rows in each state.

Why split: with the block unsplit, a table of rows by (cell, majority, the first
system's class, the second's) would need a three-way table with only its two-way
margins fixed, which need not exist; the model would then admit counts no cohort
has, and the audit could miss a leak. Split, each block cell is a transportation
problem with its margins fixed, which always has a solution: the model admits
exactly what the products together admit (docs/disclosure.md, "One publication").

Value-free: names and integers only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import attrs

from chartscore.disclosure.comparison_model import OTHER, ComparisonModel, PairedClass
from chartscore.disclosure.forms import Form
from chartscore.disclosure.model import (
    ANSWERED,
    DISAGREE,
    FieldLayout,
    Key,
    OutcomeClass,
    Quantity,
    Strata,
)


def state_of(outcome: OutcomeClass) -> str:
    """The one system state (a comparison's) of a report's outcome class."""
    if not outcome.answerable or outcome.status != ANSWERED:
        return outcome.status  # missing, abstained; an unanswerable row's answered
    if outcome.wrong_type or outcome.agreement == DISAGREE:
        return OTHER
    return outcome.agreement  # exact or normalized


@attrs.frozen
class BlockLayout:
    """Where a field's block variables lie (what the range solver reads)."""

    offset: int
    size: int


@attrs.frozen
class BlockVariable:
    """One variable of the block: a paired class in one stratum cell, in or out of the majority."""

    cell: int
    paired: PairedClass
    majority: bool


class PairedBlock(ComparisonModel):
    """A shared comparison's model split by stratum cell and majority bit (see the module).

    A comparison model in all the solver reads (its knowledge: none); built from the
    comparison's own, whose forms it expands.

    Args:
        comparison: The comparison's own model.
        strata: The reference report's strata (empty: one cell).
        cells: Each field's number of stratum cells (absent: 1).
        majority: The fields whose answerable classes are split by the majority bit.

    Attributes:
        variables: Each field's block variables, in order (``layouts`` gives the start).
        majority: The fields split by the majority bit.
    """

    def __init__(
        self,
        comparison: ComparisonModel,
        strata: Strata,
        cells: Mapping[str, int],
        majority: frozenset[str],
    ) -> None:
        self.knows_rule = True
        self.composition: dict[Key, int] = {}  # what the outside knows: only what is shown
        self._negated: dict[Form, Form] = {}
        self.strata = strata
        self.majority = majority
        self.variables: dict[str, tuple[BlockVariable, ...]] = {}
        expanded: dict[int, list[int]] = {}
        layouts: dict[str, BlockLayout] = {}
        offset = 0
        for field_id, classes in comparison.classes.items():
            start = comparison.layouts[field_id].offset
            block: list[BlockVariable] = []
            for cell in range(cells.get(field_id, 1)):
                for index, paired in enumerate(classes):
                    split = paired[0] and field_id in majority
                    for bit in (False, True) if split else (False,):
                        expanded.setdefault(start + index, []).append(offset + len(block))
                        block.append(BlockVariable(cell, paired, bit))
            self.variables[field_id] = tuple(block)
            layouts[field_id] = BlockLayout(offset, len(block))
            offset += len(block)
        self.size = offset
        # The solver reads only each layout's offset and size.
        self.layouts = cast("dict[str, FieldLayout]", layouts)
        self.quantities: dict[Key, Quantity] = {
            key: Quantity(
                key,
                tuple(sorted((v, c) for base, c in q.form for v in expanded[base])),
                q.derived,
            )
            for key, q in comparison.quantities.items()
        }
        self.inequalities: list[Form] = []
        self.cases: dict[Key, Form] = {}
        self.carriers: dict[Key, Form] = {}

    def side(
        self,
        field_id: str,
        side: int,
        wanted: tuple[bool, bool | None, str],
        cells: Sequence[int] | None,
    ) -> list[int]:
        """A system's variables of one gold part and state (``side``: 1 baseline, 2 candidate).

        ``wanted``: (answerable, majority bit or None for either, state); ``cells``:
        the stratum cells, or None for all.
        """
        answerable, bit, state = wanted
        start = cast("BlockLayout", self.layouts[field_id]).offset
        return [
            start + index
            for index, v in enumerate(self.variables[field_id])
            if v.paired[0] == answerable
            and v.paired[side] == state
            and (bit is None or v.majority == bit)
            and (cells is None or v.cell in cells)
        ]


__all__ = ["BlockLayout", "BlockVariable", "PairedBlock", "state_of"]
