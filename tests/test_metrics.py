"""The metric catalog (chartscore.metrics) against the tests' own oracle of metric names."""

from __future__ import annotations

from chartscore import metrics
from chartscore.documents.tally import CORE_METRICS, LABEL_METRICS, TYPE_METRICS
from chartscore.scoring.outcomes import METRIC_ROWS

from helpers import CORE_METRIC_NAMES, COUNT_NAMES, LABEL_METRIC_NAMES, TYPE_METRIC_NAMES


def test_the_catalog_holds_the_oracle_metrics_in_report_order() -> None:
    assert tuple(metrics.METRICS) == CORE_METRIC_NAMES + TYPE_METRIC_NAMES + LABEL_METRIC_NAMES
    assert metrics.COUNT_NAMES == COUNT_NAMES
    assert (CORE_METRICS, TYPE_METRICS, LABEL_METRICS) == (
        CORE_METRIC_NAMES,
        TYPE_METRIC_NAMES,
        LABEL_METRIC_NAMES,
    )


def test_a_row_metric_succeeds_only_within_its_trials() -> None:
    for name, (in_trials, succeeds) in METRIC_ROWS.items():
        if metrics.METRICS[name].counts != metrics.ROWS:
            continue  # an item metric counts items: a matched item implies both kinds
        for mask in range(1 << 18):
            assert not succeeds(mask) or in_trials(mask), name


def test_a_field_reports_the_metrics_of_its_type_and_options() -> None:
    field_type = metrics.FieldType
    assert metrics.field_metrics(field_type.NUMBER, ()) == ()
    assert metrics.field_metrics(field_type.NUMBER, {"tolerance"}) == ("tolerance_agreement",)
    assert metrics.field_metrics(field_type.ORDINAL, ()) == (
        "ordinal_later",
        "ordinal_earlier",
        "ordinal_within_one",
        "majority_baseline",
    )
    assert metrics.field_metrics(field_type.MULTI, {"labels"})[:2] == (
        "item_precision",
        "item_recall",
    )
