"""The gold rows a system got wrong, one by one, for an abstractor to adjudicate.

Scoring counts outcomes; adjudication needs the rows behind them. A
:class:`DisagreementScorer` scores exactly as :class:`~chartscore.scoring.scorer.Scorer`
does and also keeps, for every gold row whose outcome is not agreement, its case id,
field id and :func:`outcome_class`. The classes (docs/worklist.md defines them) are a
closed vocabulary, decided from the row's outcome bits alone:

======================== ====================================================================
``missing``              no prediction for the gold row (answerable or not)
``abstained_answerable`` an explicit abstention (``value: null``) where gold has a value
``answered_unanswerable`` an answer where gold says the chart cannot answer the field
``wrong_type``           an answer that is not a value of the field's type
``wrong_answer``         a value of the right type that does not agree with gold after
                         normalization (and is not within a declared tolerance)
``partial_match``        a multi-select answer sharing some, not all, items with gold
``within_tolerance``     a number or date within the declared tolerance, not equal to gold
======================== ====================================================================

A row agrees, and is not listed, when its answer agrees with gold after normalization
(``normalized_agreement``), or when both gold and the system say the chart cannot
answer it. Values never leave the scorer: a disagreement is three strings, two of
them private (the case id is patient-level, so the list is inside-only).
"""

from __future__ import annotations

from typing import Final

from chartscore.metrics import (
    ANSWERABLE,
    ANSWERED,
    MATCHED_ITEMS,
    MISSING,
    NORMALIZED,
    TOLERANCE,
    WRONG_TYPE,
)
from chartscore.records.prediction_row import PredictionRow
from chartscore.records.schema import Schema
from chartscore.scoring.scorer import NOT_APPLICABLE_ROW, RUN_HEADER_ROW, ExtraPredictions, Scorer

NOT_IN_GOLD: Final = "not_in_gold"
"""The class of ``list_ignored``'s rows: an answer to a field gold does not hold."""
OUTCOME_CLASSES: Final = (
    "missing",
    "abstained_answerable",
    "answered_unanswerable",
    "wrong_type",
    "wrong_answer",
    "partial_match",
    "within_tolerance",
    "answered_not_applicable",
    NOT_IN_GOLD,
)
"""Every class a disagreement can have (the closed vocabulary of docs/worklist.md).

``answered_not_applicable``: gold says the field does not apply, the system answered.
``not_in_gold``: a prediction whose key gold does not hold (gold blank, system filled),
listed only when asked (``list_ignored``, with ``extra_predictions="ignore"``)."""

Disagreement = tuple[str, str, str]
"""(case id, field id, outcome class): private, the case id is patient-level."""


def outcome_class(row: int) -> str | None:
    """The class of a gold row's outcome bits, or None when the row agrees with gold."""
    if row & MISSING:
        return "missing"
    answerable = bool(row & ANSWERABLE)
    if not row & ANSWERED:
        return "abstained_answerable" if answerable else None
    if not answerable:
        return "answered_unanswerable"
    if row & WRONG_TYPE:
        return "wrong_type"
    if row & NORMALIZED:
        return None
    if row & TOLERANCE:
        return "within_tolerance"
    if row & MATCHED_ITEMS:
        return "partial_match"
    return "wrong_answer"


class DisagreementScorer(Scorer):
    """A :class:`Scorer` that also keeps every disagreeing row's case id, field id and class.

    It holds case ids: private, in memory, for :mod:`chartscore.workflows.worklist`.
    """

    def __init__(
        self,
        schema: Schema | None = None,
        *,
        extra_predictions: ExtraPredictions = "error",
        list_ignored: bool = False,
    ) -> None:
        super().__init__(schema, extra_predictions=extra_predictions)
        self._disagreements: list[Disagreement] = []
        self._list_ignored = list_ignored

    def add_row(self, row: PredictionRow) -> int:
        """Join and count one prediction (see :class:`Scorer`); keep it if it disagrees."""
        mask = super().add_row(row)
        if mask >= 0:
            found = outcome_class(mask)
        elif mask == RUN_HEADER_ROW:
            found = None
        elif mask == NOT_APPLICABLE_ROW:
            found = None if row.value is None else "answered_not_applicable"
        else:  # a prediction whose key gold does not hold, skipped
            found = NOT_IN_GOLD if self._list_ignored else None
        if found is not None:
            self._disagreements.append((row.case_id, row.field_id, found))
        return mask

    def disagreements(self) -> list[Disagreement]:
        """Every disagreeing gold row, missing ones included, sorted by case id then field id."""
        rows = list(self._disagreements)
        rows += [(case_id, field_id, "missing") for case_id, field_id, _ in self.missing_rows()]
        return sorted(rows)
