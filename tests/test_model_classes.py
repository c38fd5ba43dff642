"""Every layout of the same outcome classes shares which classes each predicate holds for.

``FieldLayout.where`` remembers a predicate's classes in a dict shared by every layout
of equal classes (:func:`~chartscore.disclosure.model.chosen_classes`), so a model built
again finds them without testing each class. A model built that way must be the model
built with nothing remembered: the same quantities, rows, cases and carriers.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.model as model_module
from chartscore import score
from chartscore.disclosure.model import OutcomeClass, ReportModel, model_of
from chartscore.documents.shared_report import shared_from_report
from disclosure_reference import build_cohort

from helpers import examples

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")


def _model(seed: int, types: list[str], cases: int) -> ReportModel:
    made = build_cohort(random.Random(seed).choice, types, cases)
    gold, predictions = made.records()
    report = score(gold, predictions, schema=made.schema_document())
    sensitivity, _ = made.sensitivity()
    types_of = sensitivity.field_types
    return model_of(shared_from_report(report.core().to_dict(), types_of, 11, set(), set()))


def _whole(model: ReportModel) -> object:
    return (
        model.size,
        model.quantities,
        model.inequalities,
        model.cases,
        model.carriers,
        model.knowledge({}, 11),
    )


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.sampled_from(TYPES), min_size=1, max_size=4),
    second=st.lists(st.sampled_from(TYPES), min_size=1, max_size=4),
    seed=st.integers(0, 10_000),
)
def test_a_model_of_remembered_classes_is_the_model_built_afresh(
    first: list[str], second: list[str], seed: int
) -> None:
    # Two cohorts of other field types one after another (the second's layouts meet
    # classes the first remembered), each against a model whose layouts remember nothing.
    for types in (first, second, first):
        remembered = _model(seed, types, 20)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(model_module, "chosen_classes", lambda classes: {})
            afresh = _model(seed, types, 20)
        assert _whole(remembered) == _whole(afresh)


def test_layouts_of_equal_classes_share_one_dict_and_others_do_not() -> None:
    one = (OutcomeClass(answerable=True, status="missing"),)
    other = (OutcomeClass(answerable=False, status="missing"),)
    assert model_module.chosen_classes(one) is model_module.chosen_classes(tuple(one))
    assert model_module.chosen_classes(one) is not model_module.chosen_classes(other)
