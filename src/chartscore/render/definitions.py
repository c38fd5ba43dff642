"""Every metric's name for people, one-line definition and place in the docs.

The legend of the HTML and Markdown reports. The lines summarize
docs/metrics.md, which has the full definitions; a test checks that every
metric has one and that each ``source`` anchor exists in that page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from chartscore.plugin_layout import PluginStamp, split_metric
from chartscore.render.view import Definition
from chartscore.tally import CORE_METRICS, ERROR_METRICS, TYPE_METRICS

_CORE = "docs/metrics.md#core-metrics-every-slice"
_TYPE = "docs/metrics.md#type-specific-metrics"
_KAPPA = "docs/metrics.md#kappa-field-slices-of-categorical-boolean-and-ordinal-fields"

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
        "Cohen's kappa",
        "Chance-corrected agreement between gold and answers over the pairs (answerable rows "
        "answered with a value of the field's type); quadratic weights for ordinal fields. "
        "Interval: Fleiss-Cohen-Everitt.",
        _KAPPA,
    ),
}

METRIC_ORDER: Final = (*CORE_METRICS, *TYPE_METRICS, "kappa")
"""Every metric a report can hold, in the order chartscore shows them."""


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
