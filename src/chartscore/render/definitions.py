"""Every metric's name for people, one-line definition and place in the docs.

The legend of the HTML and Markdown reports. The lines summarize
docs/metrics.md, which has the full definitions; a test checks that every
metric has one and that each ``source`` anchor exists in that page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from chartscore.documents.plugin_layout import PluginStamp, split_metric
from chartscore.documents.tally import CORE_METRICS, ERROR_METRICS, LABEL_METRICS, TYPE_METRICS
from chartscore.render.view import Definition

_CORE = "docs/metrics.md#core-metrics-every-slice"
_TYPE = "docs/metrics.md#type-specific-metrics"
_KAPPA = "docs/metrics.md#kappa-field-slices-of-categorical-boolean-and-ordinal-fields"
_LABELS = "docs/metrics.md#per-label-confusion-metrics"
_GWET = "docs/metrics.md#gwets-ac1-and-ac2"
_ALPHA = "docs/metrics.md#krippendorffs-alpha"
_MAGNITUDE = "docs/metrics.md#error-magnitude"
_UNCERTAINTY = "docs/metrics.md#declared-uncertainty"

_ENTRIES: Final[dict[str, tuple[str, str, str]]] = {
    "exact_agreement": (
        "exact agreement",
        "Answerable rows answered with gold's value exactly (same JSON type and value), "
        "of answerable rows.",
        _CORE,
    ),
    "normalized_agreement": (
        "normalized agreement",
        "Answerable rows whose answer equals gold after normalization for the field's type, "
        "of answerable rows.",
        _CORE,
    ),
    "abstention_correctness": (
        "abstention correctness",
        "Rows answered when answerable or abstained when unanswerable, of all rows; "
        "a missing answer is never correct.",
        _CORE,
    ),
    "answerable_abstention": (
        "answerable abstention",
        "Error: answerable rows on which the system abstained, of answerable rows.",
        _CORE,
    ),
    "unanswerable_answer": (
        "unanswerable answer",
        "Error: rows the chart cannot answer that were answered anyway, of unanswerable rows. "
        "The safety number.",
        _CORE,
    ),
    "wrong_type_answer": (
        "wrong-type answer",
        "Error: answered rows whose answer is not a value of the field's type "
        "(a formatting fault, not a content error), of answered rows.",
        _CORE,
    ),
    "evidence_support": (
        "evidence support",
        "Answered rows whose evidence chain cites a clinical-record span for the same field "
        "and the declared fact digest, of answered rows.",
        _CORE,
    ),
    "evidence_provided": (
        "evidence provided",
        "Answered rows whose prediction carries an evidence chain with at least one source "
        "span (clinical record or generated text), of answered rows. Where it is 0, evidence "
        "support reads not provided.",
        "docs/metrics.md#evidence-provided",
    ),
    "tolerance_agreement": (
        "tolerance agreement",
        "Answerable rows answered within the schema's tolerance of gold "
        "(numbers, full dates), of answerable rows.",
        _TYPE,
    ),
    "fuzzy_agreement": (
        "fuzzy agreement",
        "Answerable rows answered with text at least as similar to gold as the schema's "
        "threshold (normalized Levenshtein similarity), of answerable rows.",
        _TYPE,
    ),
    "pattern_agreement": (
        "pattern agreement",
        "Answerable rows whose whole normalized answer matches the gold pattern "
        "(regex fields), of answerable rows.",
        _TYPE,
    ),
    "ordinal_later": (
        "ordinal later",
        "Error: answerable rows answered with a level later in the schema's list than gold's "
        "(with acuity 1 = most urgent: under-triage), of answerable rows.",
        _TYPE,
    ),
    "ordinal_earlier": (
        "ordinal earlier",
        "Error: answerable rows answered with a level earlier in the list than gold's "
        "(over-triage), of answerable rows.",
        _TYPE,
    ),
    "ordinal_within_one": (
        "ordinal within one",
        "Answerable rows answered at most one level from gold's, of answerable rows.",
        _TYPE,
    ),
    "item_precision": (
        "item precision",
        "Answered items that match a gold item, of all answered items (multi-select).",
        _TYPE,
    ),
    "item_recall": (
        "item recall",
        "Gold items matched by an answered item, of all gold items of answerable rows "
        "(multi-select).",
        _TYPE,
    ),
    "majority_baseline": (
        "majority baseline",
        "What always answering the field's most common gold value would score on normalized "
        "agreement: chance level, of answerable rows.",
        _TYPE,
    ),
    "kappa": (
        "kappa",
        "Chance-corrected agreement between gold and answers over the pairs (answerable rows "
        "answered with a value of the field's type): Cohen's kappa, and on an ordinal field "
        "weighted kappa (quadratic), where a near miss counts as partial agreement. "
        "Interval: Fleiss-Cohen-Everitt; from fewer than 100 pairs it is marked too few pairs "
        "(not reliable).",
        _KAPPA,
    ),
    "sensitivity": (
        "sensitivity",
        "Per declared label: gold positives the answers name, of gold positives (answerable "
        "rows whose gold is or holds the label); missing and abstained answers are failures. "
        "A report's slice also pools its labels (micro-average); a shared report does not.",
        _LABELS,
    ),
    "specificity": (
        "specificity",
        "Per declared label: gold negatives answered without the label, of gold negatives; "
        "a missing or abstained answer is not a negative answer, so it fails here too.",
        _LABELS,
    ),
    "ppv": (
        "PPV",
        "Per declared label: answers naming the label that gold holds, of answers naming it "
        "(positive predictive value, precision).",
        _LABELS,
    ),
    "npv": (
        "NPV",
        "Per declared label: answers of the right type not naming the label where gold does "
        "not hold it either, of those answers (negative predictive value).",
        _LABELS,
    ),
    "f1": (
        "F1",
        "2 TP / (gold positives + answered positives): the harmonic mean of sensitivity and "
        "PPV; micro F1 pools the labels' counts, macro F1 averages the labels' F1.",
        _LABELS,
    ),
    "pooled_kappa": (
        "pooled kappa",
        "Cohen's kappa of the labels' cells pooled into one two-by-two table (TP, FN, TN, "
        "FP summed over the labels; a missing or abstained answer is a disagreement): "
        "chart-review's pooled kappa. No interval: a case's cells are not independent.",
        _LABELS,
    ),
    "ac1": (
        "Gwet's AC1",
        "Agreement corrected for chance from the spread of the pooled categories: robust at "
        "high prevalence, where kappa can fall to 0. Interval: Gwet's linearized variance "
        "(from fewer than 100 pairs: too few pairs).",
        _GWET,
    ),
    "ac2": (
        "Gwet's AC2",
        "AC1 with quadratic weights, for ordinal fields. Interval: Gwet's linearized variance.",
        _GWET,
    ),
    "alpha": (
        "Krippendorff's alpha",
        "1 - observed / expected disagreement of the pooled values (nominal, ordinal or "
        "interval differences). Interval: delete-one-row jackknife.",
        _ALPHA,
    ),
    "mean_absolute_error": (
        "mean absolute error",
        "Mean |answer - gold| over answered answerable rows with a distance (numbers in the "
        "field's unit; full dates in days); lower is better.",
        _MAGNITUDE,
    ),
    "mean_signed_error": (
        "mean signed error",
        "Mean (answer - gold), the bias: positive when answers run above gold. Interval: "
        "Student's t over pairs - 1 degrees of freedom.",
        _MAGNITUDE,
    ),
    "limits_of_agreement": (
        "limits of agreement",
        "Bland-Altman: bias -/+ z standard deviations of the errors (95%: 1.96), the range of "
        "most single errors.",
        _MAGNITUDE,
    ),
    "chance_level": (
        "chance level",
        "Mean distance of gold from its median over answerable rows: what answering the "
        "median everywhere scores on mean absolute error.",
        _MAGNITUDE,
    ),
    "uncertainty_auroc": (
        "uncertainty AUROC",
        "Probability that a random agreeing answer declared less uncertainty than a random "
        "disagreeing one (ties half): 0.5 is chance, 1 perfect. Interval: DeLong's variance "
        "on the logit scale (a format 2 report: Hanley-McNeil).",
        _UNCERTAINTY,
    ),
    "brier_score": (
        "Brier score",
        "Mean squared distance of 1 - uncertainty from agreement (1 or 0); lower is better.",
        _UNCERTAINTY,
    ),
    "without_uncertainty": (
        "without uncertainty",
        "Answered answerable rows whose answer declared no uncertainty (no evidence chain).",
        _UNCERTAINTY,
    ),
    "risk_coverage": (
        "risk and coverage",
        "Agreement among the most certain 10%, 20%, ..., 100% of the rows with an "
        "uncertainty, the rest abstaining (selective answering).",
        _UNCERTAINTY,
    ),
}

UNCERTAINTY: Final = ("uncertainty_auroc", "brier_score", "without_uncertainty", "risk_coverage")
"""A field's declared-uncertainty figures, in the order chartscore shows them."""

MAGNITUDES: Final = (
    "mean_absolute_error",
    "mean_signed_error",
    "limits_of_agreement",
    "chance_level",
)
"""A number or date field's error magnitude figures, in the order chartscore shows them."""

COEFFICIENTS: Final = ("kappa", "ac1", "ac2", "alpha")
"""Chance-corrected coefficients of a field slice, in the order chartscore shows them."""

COHEN_KAPPA: Final = "Cohen's kappa"
WEIGHTED_KAPPA: Final = "weighted kappa (quadratic)"
"""An ordinal field's kappa: its name wherever people read it (the documents say ``kappa``)."""


def kappa_name(weighted: bool) -> str:
    """What a kappa is called for people: Cohen's, or an ordinal field's weighted kappa."""
    return WEIGHTED_KAPPA if weighted else COHEN_KAPPA


METRIC_ORDER: Final = (*CORE_METRICS, *TYPE_METRICS, *LABEL_METRICS, *COEFFICIENTS)
"""Every metric a report can hold, in the order chartscore shows them."""

LEGEND_ORDER: Final = (*METRIC_ORDER, "f1", "pooled_kappa", *MAGNITUDES, *UNCERTAINTY)
"""The legend's entries: every metric, F1 (``f1``, ``micro_f1``, ``macro_f1``), the labels'
pooled kappa, magnitudes."""


def title(metric: str) -> str:
    """The metric's name for people, e.g. ``"wrong-type answer"``; a plugin's: ``"name: label"``."""
    parts = split_metric(metric)
    if parts is not None:
        return f"{parts[0]}: {parts[1]}"
    return _ENTRIES[metric][0]


def plugin_order(stamps: Iterable[PluginStamp]) -> tuple[str, ...]:
    """The plugin metrics of these stamps in the order chartscore shows them (name, then label)."""
    return tuple(name for stamp in stamps for name in stamp.metric_names())


def plugin_definitions(
    stamps: Iterable[PluginStamp], present: Iterable[str]
) -> tuple[Definition, ...]:
    """The legend entries of the plugin metrics in ``present``, with each plugin's version."""
    shown = set(present)
    return tuple(
        Definition(
            metric,
            title(metric),
            f"Plugin metric: answerable rows that the plugin {stamp.name} {stamp.version} "
            f"(code {stamp.code_digest[:19]}) labelled {label}, of answerable rows. The "
            "plugin, not chartscore, defines the label.",
            "docs/plugins.md",
            error=False,
        )
        for stamp in stamps
        for label, metric in zip(stamp.outcomes, stamp.metric_names(), strict=True)
        if metric in shown
    )


def definition(metric: str) -> Definition:
    """The legend entry for ``metric`` (a name in :data:`METRIC_ORDER`)."""
    name, text, source = _ENTRIES[metric]
    return Definition(metric, name, text, source, error=metric in ERROR_METRICS)


def interval_note(level: str) -> str:
    """How to read every interval of a document at confidence ``level`` (``"95%"``)."""
    return (
        f"Intervals are two-sided {level}: Wilson score intervals in field rows (kappa: "
        "Fleiss-Cohen-Everitt), and case-clustered intervals in rows that pool fields (types, "
        "all fields), where a chart's rows count as one cluster; the design effect is in the "
        "JSON and the CSV. A release gate reads the interval its row shows, one side of it "
        "(docs/metrics.md#intervals)."
    )


INTERVAL_NOTE: Final = interval_note("95%")
"""The interval note at the default 95% level."""
