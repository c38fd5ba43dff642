"""What ``share`` says on stderr: what was suppressed, what survives, how it was chosen.

Counts only. Some lines are marked "inside only": they say how many hidden numbers are small
or what a choice cost, which the published numbers do not, so they stay on the operator's
terminal and never in the shared document.
"""

from __future__ import annotations

from typing import Final

from chartscore.cli._command import PROGRAM
from chartscore.cli._streams import Streams, say
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_quantities import hidden_counts
from chartscore.documents.shared_report import (
    LABEL_RATES,
    STRATUM_RATES,
    ComplementCost,
    SharedReport,
)


def say_releases(shared: SharedReport, streams: Streams) -> None:
    # Whether differencing against earlier releases was audited, and what it cost.
    earlier = shared.disclosure.earlier_releases
    if earlier is None:
        say(
            streams.err,
            f"{PROGRAM}: differencing against earlier or later releases of overlapping cohorts "
            "is not covered (--releases DIR), nor combining this report with other systems' "
            "products of the cohort unless shared with them (--publication; "
            "docs/disclosure.md)\n",
        )
        return
    if earlier == 0:
        say(
            streams.err,
            f"{PROGRAM}: recorded as the first release in the releases folder: later "
            "releases are audited jointly with it (other systems' products of the cohort "
            "are not: --publication shares them together; docs/disclosure.md)\n",
        )
        return
    cost = shared.ledger_cost or 0
    say(
        streams.err,
        f"{PROGRAM}: audited jointly with {earlier:,} earlier release"
        f"{'' if earlier == 1 else 's'}; the ledger cost {cost:,} more numbers suppressed "
        "(inside only); recorded in the releases folder (other systems' products of the "
        "cohort are not audited with it: docs/disclosure.md)\n",
    )


def comparison_survival(shared: SharedComparison) -> str:
    # What survives, from the shared comparison alone (so it says nothing the file does not).
    metrics = shown = bounded = rates = rate_bounds = 0
    for _, _, part in shared.slices():
        for item in part.paired.values():
            metrics += 1
            shown += item.result is not None
            bounded += item.difference_bound is not None
            for side in (item.baseline, item.candidate):
                rates += side.success_count is not None and side.total_count is not None
                rate_bounds += side.rate_bound is not None
    return (
        f"{PROGRAM}: differences shown {shown:,}/{metrics:,}, bounded {bounded:,}; "
        f"system rates shown {rates:,}/{2 * metrics:,}, bounded {rate_bounds:,}\n"
    )


_FIELD_LEVEL: Final = {
    True: f"{PROGRAM}: the field and pooled slices show every number share shows without "
    "strata, and the site slices are chosen around them (inside only)\n",
    False: f"{PROGRAM}: warning: the site slices could not be protected around the field level "
    "share publishes without strata; chosen in one step, so the field level differs (inside "
    "only; docs/disclosure.md#stratum-slices)\n",
}


def say_suppressed(shared: SharedReport, streams: Streams) -> None:
    # The audit checks the suppressed numbers and those derived from them (it prints the sum).
    suppressed, derived = hidden_counts(shared)
    primary = shared.primary_count
    split = ""
    if primary is not None:  # inside only: it says how many hidden numbers are small
        split = f": {primary:,} primary, {suppressed - primary:,} complementary (inside only)"
    say(
        streams.err,
        f"{PROGRAM}: {suppressed:,} numbers suppressed (min cell {shared.disclosure.min_cell})"
        f"{split}; {suppressed + derived:,} hidden numbers checked, these and {derived:,} "
        "derived from them (failures, disagreed rows); the audit passed\n",
    )
    # What survives (in the shared report too).
    survival = shared.survival()
    fields, pooled = survival["field_rates"], survival["pooled_rates"]
    line = (
        f"{PROGRAM}: rates shown {fields.shown:,}/{fields.rates:,} field-level, bounded "
        f"{fields.bounded:,}; pooled {pooled.shown:,}/{pooled.rates:,}, range {pooled.bounded:,}"
    )
    strata = survival.get(STRATUM_RATES)
    if strata is not None:
        line += f"; strata {strata.shown:,}/{strata.rates:,}, range {strata.bounded:,}"
    labels = survival.get(LABEL_RATES)
    if labels is not None:
        line += f"; labels {labels.shown:,}/{labels.rates:,}, bounded {labels.bounded:,}"
    say(streams.err, line + "\n")
    if shared.field_level_kept is not None:
        say(streams.err, _FIELD_LEVEL[shared.field_level_kept])
    complement = shared.complement
    if complement is not None:
        say(streams.err, complement_line(complement))


def complement_line(complement: ComplementCost) -> str:
    # The declared cost of the complementary choice, and how far from the optimum it may
    # be (inside only: the lower bound depends on which hidden numbers are small).
    if complement.method == "exact":
        choice = f"exact, the minimum declared cost {complement.cost:,}"
    elif complement.lower_bound is None:
        choice = f"greedy, declared cost {complement.cost:,}"
    else:
        choice = (
            f"greedy, declared cost {complement.cost:,}, "
            f"at least {complement.lower_bound:,} for any passing choice"
        )
    if complement.labels is not None:
        choice += f"; then the labels, greedy, {complement.labels:,} more"
    return f"{PROGRAM}: complementary cells: {choice} (inside only)\n"
