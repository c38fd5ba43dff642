"""Per-label confusion metrics (docs/metrics.md, "Per-label confusion metrics").

Checked against chart-review's published "cold" table, against scikit-learn's
confusion_matrix / precision_recall_fscore_support / f1_score on generated data (F1 where
scikit-learn's precision and recall are both defined: chartscore's F1, like chart-review's, is
undefined where either is), against per-case sums computed here row by row (the clustered
figures), and against the stand-in baselines.

chart-review's table, quoted exactly from smart-on-fhir/chart-review, tests/test_accuracy.py
(``test_default_output``: ``chart-review accuracy jill jane`` on tests/data/cold, commit
e9e04b7; also its docs/accuracy.md):

    Comparing 3 charts (1, 3–4)
    Truth: jill
    Annotator: jane
    Macro F1: 0.833

    F1     Sens  Spec   PPV  NPV   Kappa  TP  FN  TN  FP  Label
    0.667  0.75  0.6    0.6  0.75  0.341  3   1   3   2   *
    0.667  0.5   1.0    1.0  0.5   0.4    1   1   1   0   Cough
    1.0    1.0   1.0    1.0  1.0   1.0    2   0   1   0   Fatigue
    -      -     0.333  0.0  1.0   0.0    0   0   1   2   Headache
"""  # noqa: RUF002 (chart-review prints an en dash between note ids)

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, Report, score
from chartscore.documents.tally import LABEL_METRICS
from chartscore.importers import import_labelstudio
from chartscore.records.schema import Schema
from chartscore.scoring.scorer import Scorer
from chartscore.stats.clustered import ClusterSums
from chartscore.stats.confusion import f1_score as chartscore_f1

from helpers import examples

COLD = Path(__file__).resolve().parent / "data" / "importers" / "labelstudio_cold.json"
LABELS = ["Cough", "Fatigue", "Headache"]
# chart-review's published rows (the module docstring): label -> (F1, Sens, Spec, PPV, NPV,
# Kappa, TP, FN, TN, FP); None is its "-" (undefined).
PUBLISHED = {
    "*": (0.667, 0.75, 0.6, 0.6, 0.75, 0.341, 3, 1, 3, 2),
    "cough": (0.667, 0.5, 1.0, 1.0, 0.5, 0.4, 1, 1, 1, 0),
    "fatigue": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2, 0, 1, 0),
    "headache": (None, None, 0.333, 0.0, 1.0, 0.0, 0, 0, 1, 2),
}
PUBLISHED_MACRO_F1 = 0.833
CHOICES = ["current", "former", "never"]
SCHEMA = {"fields": {"hx.smoking": {"type": "categorical", "choices": CHOICES}}}
NO_ANSWER = "(none)"  # the extra class for missing, abstained and wrong-type answers


def _rate(metric: object) -> float | None:
    k, n = metric.success_count, metric.total_count  # type: ignore[attr-defined]
    return k / n if n else None


def _shown(value: float | None) -> float | None:
    """A figure as chart-review prints it: 3 decimals, None for "-"."""
    return None if value is None else round(value, 3)


def test_chart_reviews_published_cold_table() -> None:
    imported = import_labelstudio(
        COLD, gold_annotator=6, annotator=3, labels=LABELS, notes=[1, 3, 4]
    )
    report = score(list(imported.gold), list(imported.predictions), schema=imported.schema)
    part = report.by_field["labels"]
    rows = {"*": (part.metrics, part.micro_f1, part.pooled_kappa)}
    assert part.labels is not None
    booleans = import_labelstudio(
        COLD, gold_annotator=6, annotator=3, labels=LABELS, notes=[1, 3, 4], per_label=True
    )
    per_label = score(list(booleans.gold), list(booleans.predictions), schema=booleans.schema)
    for name, label in part.labels.items():
        field = per_label.by_field[f"labels.{name}"]
        assert field.kappa is not None
        rows[name] = (label.metrics, label.f1, field.kappa.value)
    assert set(rows) == set(PUBLISHED)
    for name, (f1, sens, spec, ppv, npv, kappa, tp, fn, tn, fp) in PUBLISHED.items():
        metrics, found_f1, found_kappa = rows[name]
        found = [found_f1, *(_rate(metrics[m]) for m in LABEL_METRICS), found_kappa]
        assert [_shown(v) for v in found] == [f1, sens, spec, ppv, npv, kappa], name
        assert (metrics["sensitivity"].success_count, metrics["sensitivity"].total_count) == (
            tp,
            tp + fn,
        )
        assert (metrics["specificity"].success_count, metrics["specificity"].total_count) == (
            tn,
            tn + fp,
        )
        assert metrics["ppv"].total_count == tp + fp and metrics["npv"].total_count == tn + fn
    assert _shown(part.macro_f1) == PUBLISHED_MACRO_F1
    assert part.macro_f1 == 5 / 6  # (2/3 + 1) / 2: Headache, with no F1, is left out
    # One field: the overall slice pools the same labels, with the clustered figures.
    assert report.overall.metric("sensitivity").total_count == 4
    assert report.overall.micro_f1 == part.micro_f1
    assert report.overall.metric("sensitivity").design_effect is not None
    # Per-label booleans: the label "true" of each field is chart-review's label row.
    for name in ("cough", "fatigue", "headache"):
        label = per_label.by_field[f"labels.{name}"].label("true")
        shown = [_shown(_rate(label.metrics[m])) for m in LABEL_METRICS]
        assert shown == list(PUBLISHED[name][1:5]), name
        counts = [label.metrics[m].success_count for m in ("sensitivity", "specificity")]
        assert counts == [PUBLISHED[name][6], PUBLISHED[name][8]]
        assert _shown(label.f1) == PUBLISHED[name][0]


answers = st.sampled_from([*CHOICES, "Former ", "something else", 7, None, NO_ANSWER])
rows = st.lists(st.tuples(st.sampled_from([*CHOICES, None]), answers), min_size=1, max_size=40)


def _records(
    data: list[tuple[str | None, object]],
) -> tuple[list[GoldField], list[Prediction]]:
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", g) for i, (g, _) in enumerate(data)]
    predictions = [
        Prediction(f"c{i}", "hx.smoking", a)
        for i, (_, a) in enumerate(data)
        if a != NO_ANSWER  # NO_ANSWER: missing
    ]
    return gold, predictions


def _sklearn_classes(data: list[tuple[str | None, object]]) -> tuple[list[str], list[str]]:
    # Answerable rows only; an answer that names no declared label and is not a string is the
    # extra "no answer" class; a string outside the choices is its own (undeclared) class.
    gold, predicted = [], []
    for g, a in data:
        if g is None:
            continue
        gold.append(g)
        if isinstance(a, str) and a != NO_ANSWER:
            predicted.append(" ".join(a.lower().split()))
        else:
            predicted.append(NO_ANSWER)
    return gold, predicted


@settings(max_examples=examples(120), deadline=None)
@given(rows)
def test_the_reports_pooled_kappa_equals_scikit_learns_over_the_label_cells(
    data: list[tuple[str | None, object]],
) -> None:
    # One cell per (answerable row, declared label): gold holds the label or not; an answer of
    # the field's type names it or not; a missing, abstained or wrong-type answer is neither,
    # and chart-review's pooled table counts it as a disagreement (docs/metrics.md).
    gold, predictions = _records(data)
    written = json.loads(score(gold, predictions, schema=SCHEMA).to_json())
    y_true, y_pred = [], []
    for g, a in data:
        if g is None:
            continue
        for label in CHOICES:
            holds = g == label
            y_true.append(holds)
            if isinstance(a, str) and a != NO_ANSWER:
                y_pred.append(" ".join(a.lower().split()) == label)
            else:
                y_pred.append(not holds)
    for part in (written["by_field"]["hx.smoking"], written["overall"]):
        found = part["pooled_kappa"]
        if not y_true or len(set(y_true) | set(y_pred)) == 1:  # n = 0, or p_e = 1: undefined
            assert found is None
            continue
        assert found == pytest.approx(cohen_kappa_score(y_true, y_pred), abs=1e-12)


@settings(max_examples=examples(120), deadline=None)
@given(rows)
def test_categorical_labels_equal_scikit_learn(data: list[tuple[str | None, object]]) -> None:
    gold, predictions = _records(data)
    part = score(gold, predictions, schema=SCHEMA).by_field["hx.smoking"]
    assert part.labels is not None and list(part.labels) == CHOICES
    y_true, y_pred = _sklearn_classes(data)
    if not y_true:
        assert all(part.label(c).metric("sensitivity").total_count == 0 for c in CHOICES)
        return
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=CHOICES, zero_division=np.nan
    )
    classes = sorted(set(y_true) | set(y_pred) | set(CHOICES))
    matrix = confusion_matrix(y_true, y_pred, labels=classes)
    no_answer = [g for g, p in zip(y_true, y_pred, strict=True) if p == NO_ANSWER]
    for index, label in enumerate(CHOICES):
        result = part.label(label)
        sens, spec, ppv, npv = (result.metric(m) for m in LABEL_METRICS)
        assert sens.total_count == support[index]
        assert sens.success_count == matrix[classes.index(label), classes.index(label)]
        if sens.total_count:
            assert sens.success_count / sens.total_count == recall[index]
        if ppv.total_count:
            assert ppv.success_count / ppv.total_count == precision[index]
        else:
            assert math.isnan(precision[index])
        # F1 is undefined where precision or recall is (chart-review's definition); elsewhere
        # it is scikit-learn's.
        if math.isnan(precision[index]) or math.isnan(recall[index]):
            assert result.f1 is None
            f1[index] = np.nan
        else:
            assert result.f1 is not None
            assert math.isclose(result.f1, f1[index], rel_tol=1e-15, abs_tol=0)
        # sklearn's true negatives count the "no answer" rows as negatives; chartscore does not.
        j = classes.index(label)
        tn = int(matrix.sum() - matrix[j, :].sum() - matrix[:, j].sum() + matrix[j, j])
        assert spec.success_count == tn - sum(1 for g in no_answer if g != label)
        assert spec.total_count == len(y_true) - support[index]
        assert npv.success_count == spec.success_count
        assert npv.total_count == sum(1 for p in y_pred if p not in (label, NO_ANSWER))
    defined = [value for value in f1 if not math.isnan(value)]  # the labels with an F1
    if part.macro_f1 is None:
        assert not defined
    else:
        assert math.isclose(part.macro_f1, sum(defined) / len(defined), rel_tol=1e-14)
    # The field's own figures pool its labels (micro-average), as sklearn's "micro" F1 does
    # over the declared labels (where its micro precision and recall are defined).
    micro_p, micro_r, micro, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=CHOICES, average="micro", zero_division=np.nan
    )
    if part.micro_f1 is None:
        assert math.isnan(micro_p) or math.isnan(micro_r)
    else:
        assert math.isclose(part.micro_f1, micro, rel_tol=1e-14)


items = st.frozensets(st.sampled_from(["cough", "fever", "rash"]))
multi_rows = st.lists(
    st.tuples(
        st.one_of(st.none(), items),
        st.one_of(st.none(), st.just("x"), items, items.map(lambda s: s | {"mystery"})),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=examples(80), deadline=None)
@given(multi_rows)
def test_multi_select_labels_equal_scikit_learns_multilabel_counts(
    data: list[tuple[frozenset[str] | None, object]],
) -> None:
    labels = ["cough", "fever", "rash"]
    schema = {"fields": {"hx.symptoms": {"type": "multi", "choices": labels}}}
    gold = [GoldField(f"c{i}", "hx.symptoms", "multi", g) for i, (g, _) in enumerate(data)]
    predictions = [Prediction(f"c{i}", "hx.symptoms", a) for i, (_, a) in enumerate(data)]
    part = score(gold, predictions, schema=schema).by_field["hx.symptoms"]
    assert part.labels is not None
    answerable = [(g, a) for g, a in data if g is not None]
    for label in labels:
        result = part.label(label)
        y_true = [label in g for g, _ in answerable]
        y_pred = [isinstance(a, frozenset) and label in a for _, a in answerable]
        answered = [isinstance(a, frozenset) for _, a in answerable]
        if answerable:
            tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[False, True]).ravel()
        else:
            tn = fp = fn = tp = 0
        not_answered_negatives = sum(
            1 for t, ok in zip(y_true, answered, strict=True) if not t and not ok
        )
        assert (
            result.metric("sensitivity").success_count,
            result.metric("sensitivity").total_count,
        ) == (tp, tp + fn)
        assert result.metric("ppv").total_count == tp + fp
        assert result.metric("specificity").success_count == tn - not_answered_negatives
        assert result.metric("specificity").total_count == tn + fp
        assert result.f1 == chartscore_f1(int(tp), int(tp + fn), int(tp + fp))


def _per_case_sums(
    gold: list[GoldField], predictions: list[Prediction], metric: str
) -> ClusterSums:
    # Row by row, from the definitions: each labelled row's (successes, trials) for ``metric``.
    answers = {(p.case_id, p.field_id): p.value for p in predictions}
    labels = {"c.smoking": ["current", "former", "never"], "b.flag": [False, True]}
    per_case: dict[str, list[int]] = {}
    for row in gold:
        if row.value is None or row.field_id not in labels:
            continue
        answer = answers.get((row.case_id, row.field_id))
        if row.field_id == "c.smoking" and isinstance(answer, str):
            answer = " ".join(answer.lower().split())
        right_type = (
            isinstance(answer, bool) if row.field_id == "b.flag" else isinstance(answer, str)
        )
        y = m = 0
        for label in labels[row.field_id]:
            positive, named = row.value == label, right_type and answer == label
            if metric == "sensitivity" and positive:
                m += 1
                y += named
            elif metric == "specificity" and not positive:
                m += 1
                y += right_type and not named
            elif metric == "ppv" and named:
                m += 1
                y += positive
            elif metric == "npv" and right_type and not named:
                m += 1
                y += not positive
        total = per_case.setdefault(row.case_id, [0, 0])
        total[0] += y
        total[1] += m
    cases = [(y, m) for y, m in per_case.values() if m]
    return ClusterSums(
        len(cases),
        sum(y * y for y, _ in cases),
        sum(y * m for y, m in cases),
        sum(m * m for _, m in cases),
        sum(1 for y, _ in cases if y),
        sum(1 for y, m in cases if y < m),
    )


two_fields = st.lists(
    st.tuples(
        st.sampled_from(["current", "former", "never", None]),
        st.sampled_from(["current", "Never", "other", 3, None, NO_ANSWER]),
        st.sampled_from([True, False, None]),
        st.sampled_from([True, False, "yes", None, NO_ANSWER]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=examples(80), deadline=None)
@given(two_fields)
def test_pooled_label_metrics_have_the_per_case_sums_of_their_rows(
    data: list[tuple[object, ...]],
) -> None:
    schema = Schema.from_dict(
        {
            "fields": {
                "c.smoking": {"type": "categorical", "choices": ["current", "former", "never"]}
            }
        }
    )
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for i, (smoking, answer, flag, flag_answer) in enumerate(data):
        gold += [
            GoldField(f"c{i}", "c.smoking", "categorical", smoking),
            GoldField(f"c{i}", "b.flag", "boolean", flag),
        ]
        if answer != NO_ANSWER:
            predictions.append(Prediction(f"c{i}", "c.smoking", answer))
        if flag_answer != NO_ANSWER:
            predictions.append(Prediction(f"c{i}", "b.flag", flag_answer))
    scorer = Scorer(schema)
    for row in gold:
        scorer.add_gold(row.case_id, row.field_id, row.field_type, row.value)
    scorer.close_gold()
    for answer in predictions:
        scorer.add_prediction(answer.case_id, answer.field_id, answer.value, False)
    tally = scorer.tally()
    assert tally.overall.clusters is not None
    for metric in LABEL_METRICS:
        assert tally.overall.clusters[metric] == _per_case_sums(gold, predictions, metric), metric
        fields = sum(part.metrics[metric].total_count for part in tally.by_field.values())
        assert tally.overall.metrics[metric].total_count == fields
    report = Report.from_tally(tally)
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_perfect_and_constant_stand_ins() -> None:
    values = ["current", "former", "never", "never", "current", "never"]
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", v) for i, v in enumerate(values)]
    perfect = score(gold, [Prediction(g.case_id, g.field_id, g.value) for g in gold], schema=SCHEMA)
    part = perfect.by_field["hx.smoking"]
    for label in CHOICES:
        for metric in LABEL_METRICS:
            found = part.label(label).metric(metric)
            assert found.success_count == found.total_count > 0, (label, metric)
        assert part.label(label).f1 == 1.0
    assert part.macro_f1 == part.micro_f1 == 1.0
    coefficients = part.coefficients or {}
    assert coefficients["ac1"].value == coefficients["alpha"].value == 1.0
    assert part.kappa is not None and part.kappa.value == 1.0
    # A constant answer ("never", the majority): sensitivity 1 for it, 0 for the others.
    constant = score(
        gold, [Prediction(g.case_id, g.field_id, "never") for g in gold], schema=SCHEMA
    )
    part = constant.by_field["hx.smoking"]
    assert part.label("never").metric("sensitivity").success_count == 3
    assert part.label("never").metric("specificity").success_count == 0
    assert part.label("current").metric("sensitivity").success_count == 0
    assert part.label("current").metric("specificity").success_count == 4
    assert part.kappa is not None and part.kappa.value == 0.0


def _edited(report: Report, edit: object) -> str:
    document = json.loads(report.to_json())
    edit(document["by_field"]["hx.smoking"])  # type: ignore[operator]
    return json.dumps(document)


@pytest.mark.parametrize(
    "edit",
    [
        lambda part: part.update(micro_f1=0.5),
        lambda part: part.update(macro_f1=0.7),
        lambda part: part["labels"]["never"].update(f1=0.25),
        lambda part: part["labels"].pop("never"),
        lambda part: part.pop("labels"),
        lambda part: part.pop("sensitivity"),
        lambda part: part["labels"].update({"x\n": part["labels"]["never"]}),
        lambda part: part["labels"]["never"]["npv"].update(success_count=0, interval=[0, 0.9]),
    ],
)
def test_edited_label_figures_are_refused(edit: object) -> None:
    values = ["current", "former", "never", "never"]
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", v) for i, v in enumerate(values)]
    answers = ["current", "never", "never", None]
    predictions = [Prediction(g.case_id, g.field_id, a) for g, a in zip(gold, answers, strict=True)]
    report = score(gold, predictions, schema=SCHEMA)
    assert Report.from_json(report.to_json()).to_json() == report.to_json()
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(_edited(report, edit))
    assert caught.value.code is ErrorCode.INVALID_REPORT


def test_undeclared_categories_are_never_named() -> None:
    gold = [
        GoldField("c1", "hx.smoking", "categorical", "never"),
        GoldField("c2", "hx.note", "categorical", "free text value"),
    ]
    predictions = [
        Prediction("c1", "hx.smoking", "secret other answer"),
        Prediction("c2", "hx.note", "another value"),
    ]
    text = score(gold, predictions, schema=SCHEMA).to_json()
    assert "secret" not in text and "free text" not in text and "another" not in text
    document = json.loads(text)
    assert "labels" not in document["by_field"]["hx.note"]  # no choices declared: no labels
    assert list(document["by_field"]["hx.smoking"]["labels"]) == CHOICES
    counts = Counter(json.dumps(document).count(f'"{c}"') for c in CHOICES)
    assert counts == Counter({1: 3})  # each declared label named once, as a key
