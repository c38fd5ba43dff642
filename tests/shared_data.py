"""Shared reports for the renderer and gate tests: synthetic cohorts through ``sharing.share``.

``cohort()`` is a fixed cohort of three kappa fields (boolean, categorical,
ordinal) in which some numbers are large enough to publish and others are
small, so that a shared report at the default rule (``min_cell`` 11) has
published counts, suppressed counts, published intervals, metrics with a
suppressed part, a published kappa and withheld kappas. ``full_and_shared``
scores it both ways (share takes a few seconds: cached).
"""

from __future__ import annotations

import functools
from unittest import mock

import chartscore.disclosure.suppress as suppress_module
from chartscore import GoldField, Prediction, Report, score
from chartscore.documents.shared_report import SharedReport
from chartscore.workflows.share import share

SCHEMA: dict[str, object] = {
    "fields": {
        "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
        "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
    }
}


def cohort(cases: int = 60) -> tuple[list[GoldField], list[Prediction]]:
    """Gold and predictions of ``cases`` synthetic charts over three fields."""
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for index in range(cases):
        case = f"chart-{index:03d}"
        # Boolean: 3 unanswerable charts, 2 of them answered anyway; 3 missing answers.
        flag: object = None if index < 3 else index % 4 == 0
        gold.append(GoldField(case, "dx.diabetes", "boolean", flag))
        if index < 3:
            predictions.append(Prediction(case, "dx.diabetes", None if index == 0 else True))
        elif index >= 6:
            answer = flag if index % 7 else (not flag)
            predictions.append(Prediction(case, "dx.diabetes", answer))
        # Categorical: every tenth chart unanswerable; every fifth answer "never".
        smoking = ["never", "former", "current"][index % 3] if index % 10 else None
        gold.append(GoldField(case, "hx.smoking", "categorical", smoking))
        predictions.append(Prediction(case, "hx.smoking", smoking if index % 5 else "never"))
        # Ordinal: every sixth answer one level off.
        level = str(1 + index % 5)
        off = str(1 + (index + 1) % 5)
        gold.append(GoldField(case, "triage.acuity", "ordinal", level))
        predictions.append(Prediction(case, "triage.acuity", level if index % 6 else off))
    return gold, predictions


@functools.cache
def full_and_shared(min_cell: int = 11) -> tuple[Report, SharedReport]:
    """The full report of :func:`cohort` and its shared report under ``min_cell``."""
    gold, predictions = cohort()
    report = score(gold, predictions, schema=SCHEMA)
    # The greedy's choice: the renderer and gate tests need every kind of cell, a published
    # kappa among them; the minimum-cost choice withholds all three kappas here (it hides the
    # boolean and categorical fields' kappa pairs and keeps ten error rates instead), and the
    # suppression choice is not what these tests are about (tests/test_disclosure_optimal.py).
    # Nor is the public composition (tests/test_composition.py), which here leaves no label
    # rate with both its bound and its total shown: it is left out, as before it was modelled.
    with (
        mock.patch.object(suppress_module, "_exact", lambda state, primary, sensitive: None),
        mock.patch.object(suppress_module, "_composition", lambda model, values, min_cell: {}),
    ):
        shared = share(gold, predictions, schema=SCHEMA, min_cell=min_cell)
    return report, shared


@functools.cache
def shared_with_kappa(min_cell: int = 11) -> SharedReport:
    """A shared report whose ordinal field's kappa, AC2 and alpha are shown.

    They are shown only where every number of their field is (docs/disclosure.md, "What
    is protected"), which :func:`cohort`'s small cells never allow: here 60 charts of
    one ordinal field, every level-1 answer one level later and every level-5 one earlier
    (12 each), so that every number is 0 or at least 12.
    """
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for index in range(60):
        level = 1 + index % 5
        answer = level + (level == 1) - (level == 5)
        gold.append(GoldField(f"chart-{index:03d}", "triage.acuity", "ordinal", str(level)))
        predictions.append(Prediction(f"chart-{index:03d}", "triage.acuity", str(answer)))
    schema = {"fields": {"triage.acuity": SCHEMA["fields"]["triage.acuity"]}}  # type: ignore[index]
    return share(gold, predictions, schema=schema, min_cell=min_cell)
