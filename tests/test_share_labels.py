"""Per-label metrics in a shared report (docs/disclosure.md, "Per-label metrics").

- The label model's facts are exact: every count it allows is some cohort's (brute force over
  small tables of disagreements), and every cohort's counts satisfy it (the model's facts hold
  at the scorer's own counts, for generated cohorts).
- F1, the macro F1 and the coefficients are shown only under their rules; the audit fails a
  hand-edited report that shows one beside a hidden count, and the reader refuses an F1 that
  its counts do not give.
- The core numbers are chosen first: a report shares them as it would without labels.
- A format 3 shared report (before labels) is still read; one with labels is not format 3.
- Gates read a shared label's rate, or its bound where it is suppressed.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import score
from chartscore.disclosure import audit
from chartscore.disclosure.forms import Form
from chartscore.disclosure.label_model import ClassSums, LabelLayout
from chartscore.disclosure.model import model_of
from chartscore.disclosure.ranges import RangeSolver
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.shared_labels import label_metric
from chartscore.documents.shared_report import SharedReport, shared_from_report
from chartscore.errors import ChartscoreError
from chartscore.workflows.share import share
from disclosure_reference import build_cohort
from shared_data import SCHEMA, cohort

from helpers import examples, thorough_only

# --- the facts are exact ---------------------------------------------------------------------


def _value(form: Form, point: dict[int, int]) -> int:
    return sum(c * point.get(v, 0) for v, c in form)


def _single_layout(labels: int, *, boolean: bool) -> LabelLayout:
    # Classes 0 (agreeing), 1 (disagreeing), 2 (answerable without a pair): one unknown each.
    sums = ClassSums(answerable=((0, 1), (1, 1), (2, 1)), agreeing=((0, 1),), disagreeing=((1, 1),))
    names = tuple(f"l{i}" for i in range(labels))
    return LabelLayout(names, "boolean" if boolean else "categorical", 3, sums)


def _realizable(gold: tuple[int, ...], answered: tuple[int, ...], outside: int) -> bool:
    # Is there a table of disagreements (gold label -> answer label, or outside) with an
    # empty diagonal and these margins? Brute force over every table.
    labels = len(gold)
    cells = [(i, j) for i in range(labels) for j in range(labels + 1) if i != j]
    total = sum(gold)

    def fill(index: int, rows: list[int], columns: list[int]) -> bool:
        if index == len(cells):
            return rows == list(gold) and columns == [*answered, outside]
        i, j = cells[index]
        for n in range(total + 1):
            if rows[i] + n > gold[i] or columns[j] + n > ([*answered, outside])[j]:
                break
            rows[i] += n
            columns[j] += n
            if fill(index + 1, rows, columns):
                return True
            rows[i] -= n
            columns[j] -= n
        return False

    return fill(0, [0] * labels, [0] * (labels + 1))


@pytest.mark.parametrize(("labels", "boolean"), [(1, False), (2, False), (3, False), (2, True)])
def test_single_label_margins_satisfy_the_facts_exactly_when_a_table_gives_them(
    labels: int, boolean: bool
) -> None:
    layout = _single_layout(labels, boolean=boolean)
    rows = layout.rows()
    for disagreeing in range(5):
        for gold in itertools.product(range(disagreeing + 1), repeat=labels):
            for answered in itertools.product(range(disagreeing + 1), repeat=labels):
                point = {1: disagreeing}
                for index in range(labels):
                    point[layout.unknown(index, "gold")[0][0]] = gold[index]
                    point[layout.unknown(index, "answered")[0][0]] = answered[index]
                # Agreeing and unpaired rows: none here (they split freely among labels).
                holds = all(_value(row, point) >= 0 for row in rows)
                outside = disagreeing - sum(answered)
                if boolean and outside:
                    expected = False  # every boolean answer names a label
                else:
                    expected = (
                        sum(gold) == disagreeing
                        and outside >= 0
                        and _realizable(gold, answered, outside)
                    )
                assert holds == expected, (gold, answered, disagreeing)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_every_cohort_satisfies_the_label_facts(data: st.DataObject) -> None:
    # Every number of the report published at once: the model must still have an integer
    # table (the true one). A fact that some cohort breaks would make it inconsistent.
    types = data.draw(
        st.lists(st.sampled_from(["categorical", "boolean", "multi", "text"]), min_size=1)
    )

    def choose(options: Any) -> Any:
        return data.draw(st.sampled_from(list(options)))

    generated = build_cohort(choose, types[:3], data.draw(st.integers(1, 12)))
    gold, predictions = generated.records()
    report = score(gold, predictions, schema=generated.schema_document())
    types_of = {f: t for _, f, t, _ in generated.gold}
    full = shared_from_report(report.core().to_dict(), types_of, 2, set(), set())
    model = model_of(full)
    published = {key: value for key, value in full.numbers() if value is not None}
    RangeSolver(model, published)  # raises Inconsistent if the facts exclude the cohort
    if "boolean" in types[:3]:
        assert any(layout.shape.labels for layout in model.layouts.values())


# --- the shared report of the fixture cohort --------------------------------------------------


def _fixture(min_cell: int = 11) -> tuple[Any, SharedReport]:
    gold, predictions = cohort()
    return score(gold, predictions, schema=SCHEMA), share(
        gold, predictions, schema=SCHEMA, min_cell=min_cell
    )


def test_a_labelled_field_is_shared_with_its_labels_and_without_their_pooled_counts() -> None:
    report, shared = _fixture(5)
    document = json.loads(shared.to_json())
    smoking = document["by_field"]["hx.smoking"]
    assert sorted(smoking["labels"]) == ["current", "former", "never"]
    assert sorted(document["by_field"]["dx.diabetes"]["labels"]) == ["false", "true"]
    assert "macro_f1" in smoking and {"ac1", "alpha"} <= set(smoking)
    for part in (
        document["overall"],
        *document["by_field"].values(),
        *document["by_field_type"].values(),
    ):
        assert not {"sensitivity", "specificity", "ppv", "npv", "micro_f1"} & set(part)
    # Every shown label count is the report's.
    full = report.by_field["hx.smoking"].labels
    assert full is not None
    for label, table in shared.by_field["hx.smoking"].labels.items():  # type: ignore[union-attr]
        for metric, shown in table.metrics.items():
            expected = full[label].metrics[metric]
            assert shown.success_count in (None, expected.success_count)
            assert shown.total_count in (None, expected.total_count)


def _edited(shared: SharedReport, edit: Any) -> str:
    document = json.loads(shared.to_json())
    edit(document)
    return canonical_json(document)


def _with_hidden_true_positives(document: dict[str, Any]) -> None:
    # Hide a shown label's true positives (both twins), keep its F1: the F1 gives them back.
    table = document["by_field"]["hx.smoking"]["labels"]["never"]
    for metric in ("sensitivity", "ppv"):
        table[metric]["success_count"] = None
        table[metric]["interval"] = None
    document["disclosure"]["suppressed_count"] += 2
    document["disclosure"].pop("survival")


def test_an_f1_beside_a_hidden_count_fails_the_audit() -> None:
    _, shared = _fixture(2)
    table = shared.by_field["hx.smoking"].labels["never"]  # type: ignore[index]
    assert table.f1 is not None  # all its counts are shown at min cell 2
    result = audit(_edited(shared, _with_hidden_true_positives))
    statuses = {(r.name, r.status) for r in result.rows}
    assert ("labels.never.f1", "figure_published") in statuses
    assert ("macro_f1", "figure_published") in statuses
    assert not result.passed


def test_an_f1_its_counts_do_not_give_is_refused() -> None:
    _, shared = _fixture(2)

    def wrong(document: dict[str, Any]) -> None:
        table = document["by_field"]["hx.smoking"]["labels"]["never"]
        table["f1"] = 0.5 if table["f1"] != 0.5 else 0.25

    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(_edited(shared, wrong))
    assert caught.value.code.value == "invalid_report"


@thorough_only("shares of labelled cohorts (about 5 s)")
def test_coefficients_are_shown_exactly_where_kappa_is() -> None:
    for min_cell in (2, 5, 11):
        _, shared = _fixture(min_cell)
        for part in shared.by_field.values():
            if part.kappa is None:
                continue
            for coefficient in part.coefficients.values():
                if coefficient.value is not None:
                    assert part.kappa.value is not None
                assert coefficient.pairs == part.kappa.pairs


@thorough_only("two shares of a labelled cohort (about 6 s)")
def test_the_core_is_shared_as_without_labels() -> None:
    # The core is chosen first, as without labels; the labels' step then hides a core number
    # only where no label number protects a label's cell. On the fixture at min cell 5 it
    # needs none; at 11 it hides 22 (three zeros before the cohort's composition was public:
    # with every field's 60 rows known, the boolean field's answered rows and its majority
    # baseline pin its small labels' cells, and the labels' greedy step hides them and what
    # follows from them, in the field, its type and overall).
    gold, predictions = cohort()
    plain = {
        "fields": {
            name: {k: v for k, v in spec.items() if k != "choices"}
            for name, spec in SCHEMA["fields"].items()  # type: ignore[attr-defined]
        }
    }
    for min_cell, lost in ((5, 0), (11, 22)):
        with_labels = dict(share(gold, predictions, schema=SCHEMA, min_cell=min_cell).numbers())
        # Without choices the categorical field has no labels; the boolean keeps its two.
        without = dict(share(gold, predictions, schema=plain, min_cell=min_cell).numbers())
        core = [k for k in without if not k[2].startswith("labels.")]
        assert all(with_labels[k] in (None, without[k]) for k in core)
        hidden = [k for k in core if with_labels[k] is None and without[k] is not None]
        # No answer carries evidence, so evidence_provided is shared (0 in every slice); its
        # total is answered_count's twin, hidden exactly with it, and not counted here.
        twins = [k for k in core if k[2] == "evidence_provided.total_count"]
        assert twins and all(
            (with_labels[k] is None) == (with_labels[(*k[:2], "answered_count")] is None)
            for k in twins
        )
        assert len([k for k in hidden if k not in twins]) == lost


@thorough_only("shares of labelled cohorts (about 5 s)")
def test_a_format_3_report_is_read_and_one_with_labels_is_not() -> None:
    # A format 4 document as chartscore wrote it before case floors (tests/data/legacy), with
    # its labels and coefficients taken out and its version set to 3.
    legacy = Path(__file__).resolve().parent / "data" / "legacy" / "shared_report_format4.json"
    four = SharedReport.from_json(legacy.read_bytes())
    assert any(part.labels for part in four.by_field.values())

    def plain(document: dict[str, Any]) -> None:
        hidden = sum(
            1 for kind, name, value in _numbers(document) if value is None and ".labels." in name
        )
        document["format_version"] = 3
        for part in document["by_field"].values():
            for key in ("labels", "macro_f1", "ac1", "ac2", "alpha"):
                part.pop(key, None)
        survival = document["disclosure"].get("survival", {})
        survival.pop("label_rates", None)
        document["disclosure"]["suppressed_count"] -= hidden

    old = SharedReport.from_json(_edited(four, plain))
    assert all(part.labels is None for part in old.by_field.values())
    # It is audited as a format 3 document: only the ranges its labels' facts had proven are
    # now narrower than the audit can prove without them (the edit's doing, not a leak), and
    # its kappas were written beside hidden numbers of their fields, which the rule has
    # forbidden since (they pinned label counts): kappa_published.
    statuses = {row.status for row in audit(old).rows}
    assert statuses <= {"protected", "derivable", "range_narrow", "bound_narrow", "kappa_published"}
    # Rendered, it says which format it was read in, and writes itself back in it.
    from chartscore.render import render

    assert "shared_report, format version 3" in render(old, "table")
    assert json.loads(old.to_json())["format_version"] == 3
    _, shared = _fixture()
    assert "shared_report, format version 5" in render(shared, "table")

    def mislabelled(document: dict[str, Any]) -> None:
        document["format_version"] = 3

    with pytest.raises(ChartscoreError):
        SharedReport.from_json(_edited(four, mislabelled))


def _numbers(document: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    # Every label count of the document, as (field, "<field>.labels.<...>", value).
    out = []
    for field, part in document["by_field"].items():
        for label, table in part.get("labels", {}).items():
            for metric, value in table.items():
                if metric == "f1":
                    continue
                for which in ("success_count", "total_count"):
                    out.append((field, f"{field}.labels.{label}.{metric}", value[which]))
    return out


def test_gates_read_a_shared_label_or_its_bound() -> None:
    _, shared = _fixture(3)  # some of the categorical field's label rates shown, some bounded
    labels = shared.by_field["hx.smoking"].labels
    assert labels is not None
    shown = [
        (label, metric)
        for label, table in labels.items()
        for metric, value in table.metrics.items()
        if value.success_count is not None and value.total_count is not None
    ]
    bounded = [
        (label, metric)
        for label, table in labels.items()
        for metric, value in table.metrics.items()
        if value.rate_bound is not None
    ]
    assert shown and bounded
    for label, metric in (shown[0], bounded[0]):
        text = (
            f'[[gate]]\nslice = "field:hx.smoking"\nmetric = "{metric}"\nlabel = "{label}"\n'
            'min_lower = 0.0\nlevel = "required"\n'
        )
        row = evaluate(shared, parse_gates(text)).results[0]
        assert row.passed
        assert row.interval == ("wilson" if (label, metric) == shown[0] else "wilson bound")
        text = text.replace("min_lower = 0.0", "min_lower = 1.0")
        assert not evaluate(shared, parse_gates(text)).results[0].passed


def test_label_metric_names_read_from_the_right() -> None:
    from chartscore.documents.shared_labels import split_label_metric

    for label in ("never", "a.b", "x.sensitivity", "labels.y", "ppv"):
        for metric in ("sensitivity", "specificity", "ppv", "npv"):
            assert split_label_metric(label_metric(label, metric)) == (label, metric)
    assert split_label_metric("exact_agreement") is None
    assert split_label_metric("labels.x.f1") is None


def test_a_coefficient_follows_kappa_s_rule_where_kappa_is_undefined() -> None:
    # Every pair says `true` on both sides: kappa is undefined (one category), AC1 is 1. Three
    # missing answers make the agreement numerator's failures small, so it is hidden; AC1
    # (with the agreement and the pairs, a function of the category table) is withheld too.
    from chartscore import GoldField, Prediction

    gold = [GoldField(f"c{i:02d}", "dx.flag", "boolean", True) for i in range(20)]
    predictions = [Prediction(f"c{i:02d}", "dx.flag", True) for i in range(17)]
    full = score(gold, predictions).by_field["dx.flag"]
    assert full.kappa is not None and full.kappa.value is None
    assert full.coefficients is not None and full.coefficients["ac1"].value == 1.0
    shared = share(gold, predictions, min_cell=11)
    part = shared.by_field["dx.flag"]
    assert part.metrics["normalized_agreement"].success_count is None
    assert part.coefficients["ac1"].value is None and part.coefficients["alpha"].value is None
    assert audit(shared.to_json()).passed


def _false_positives_cohort() -> tuple[list[Any], list[Any]]:
    # 80 charts of one boolean field: gold true on 40; answered true on 28 of them and on 9
    # false ones. Every margin is at least 11 and the agreement (59) is shown, so kappa's
    # old rule showed it; but the 9 false positives (the true label's ppv failures) are
    # hidden, and kappa with the answered margins pins a 2 x 2 table's every cell.
    from chartscore import GoldField, Prediction

    gold, answers = [], []
    for index in range(80):
        truth = index < 40
        answer = index < 28 or 40 <= index < 49
        gold.append(GoldField(f"c{index:02d}", "dx.flag", "boolean", truth))
        answers.append(Prediction(f"c{index:02d}", "dx.flag", answer))
    return gold, answers


def test_kappa_and_its_coefficients_are_shown_only_where_every_number_of_the_field_is() -> None:
    gold, answers = _false_positives_cohort()
    shared = share(gold, answers, schema={"fields": {"dx.flag": {"type": "boolean"}}})
    part = shared.by_field["dx.flag"]
    ppv = part.labels["true"].metrics["ppv"]  # type: ignore[index]
    assert ppv.success_count is None  # 28 of 37: its 9 failures are hidden
    assert part.metrics["normalized_agreement"].success_count == 59 and part.kappa is not None
    assert part.kappa.value is None and part.kappa.interval is None and part.kappa.pairs == 80
    assert all(c.value is None and c.interval is None for c in part.coefficients.values())
    assert audit(shared).passed
    # The same document with kappa and AC1 shown, as before: the audit fails it.
    full = score(gold, answers, schema={"fields": {"dx.flag": {"type": "boolean"}}})
    document = json.loads(shared.to_json())
    written = json.loads(full.to_json())["by_field"]["dx.flag"]
    for name in ("kappa", "ac1"):
        document["by_field"]["dx.flag"][name] = written[name]
    result = audit(json.dumps(document))
    assert not result.passed
    failing = {row.name for row in result.rows if row.status == "kappa_published"}
    assert failing == {"kappa.value", "ac1.value"}
