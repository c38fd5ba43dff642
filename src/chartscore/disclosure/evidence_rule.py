"""Whether a shared report carries ``evidence_provided``: only where no answer carried evidence.

``evidence_provided`` counts the answered rows that carry an evidence chain. Suppressed beside
``evidence_support``, it splits a slice's answers three ways (no evidence, evidence that
supports nothing, supported), and the middle class is often a small cell of its own: on the
invented 200-case study, sharing it hid four agreement rates of two categorical fields and
made ``share`` about 30% slower (docs/disclosure.md, "Evidence provided").

Its purpose in a shared report is narrow: to say "not provided" where a system gave no
evidence at all (an imported abstraction, say), rather than a 0% that reads as a grounding
failure. So ``share`` chooses every cell without it, and only where no answered row of the
report carries evidence (the metric is 0 in every slice) and at least ``min_cell`` rows were
answered does it add the metric around that choice (:func:`with_evidence`): every number the
choice shows stays shown, every one it hides stays hidden (but a stratum number the audit then
proves exactly, around a stratified choice: docs/disclosure.md), and the result is audited with
the three-way model. Products of a publication or a release never carry it.

The choice depends on the data, so what it tells an outsider is stated here. The metric
present says that no answered row carried evidence and that the answered rows number
``min_cell`` or more. The metric absent says that some answered row carried evidence *or* that
fewer than ``min_cell`` rows were answered (zero included), a disjunction that pins no count
into 1 to ``min_cell - 1``.

Value-free: counts only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from chartscore.disclosure.around import ShareFixed, around
from chartscore.disclosure.sensitivity import Sensitivity
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport

EVIDENCE_PROVIDED: Final = "evidence_provided"


def evidence_shared(report: Report, min_cell: int) -> bool:
    """Whether ``share`` publishes ``evidence_provided`` (the module's rule)."""
    provided = report.overall.metrics.get(EVIDENCE_PROVIDED)
    if provided is None:
        return False
    return provided.success_count == 0 and report.overall.count("answered_count") >= min_cell


def without_evidence(report: Report, sensitivity: Sensitivity) -> tuple[Report, Sensitivity]:
    """The report and case counts without ``evidence_provided`` (as written before it)."""
    if EVIDENCE_PROVIDED not in report.overall.metrics:
        return report, sensitivity
    prefix = f"{EVIDENCE_PROVIDED}."
    counts = sensitivity.case_counts
    if isinstance(counts, Mapping):  # anything else is refused by share's own check
        counts = {key: n for key, n in counts.items() if not _evidence_key(key, prefix)}
    return report.without_metric(EVIDENCE_PROVIDED), attrs.evolve(sensitivity, case_counts=counts)


def with_evidence(
    report: Report,
    sensitivity: Sensitivity,
    min_cell: int,
    shared: SharedReport,
    *,
    share_fixed: ShareFixed,
) -> SharedReport:
    """``shared`` (chosen without the metric) with ``evidence_provided`` added around it.

    Every number ``shared`` shows is known, every one it hides stays hidden, and the result
    passes its own audit with the metric; should it not, ``shared`` stands without it.
    """
    kept = around(shared, report, sensitivity, min_cell, share_fixed=share_fixed)
    if kept is None:
        return shared
    # What share says inside (stderr) is the choice's: the metric added no cell of its own.
    return attrs.evolve(
        kept,
        primary_count=shared.primary_count,
        complement=shared.complement,
        field_level_kept=shared.field_level_kept,
    )


def _evidence_key(key: object, prefix: str) -> bool:
    return isinstance(key, tuple) and len(key) == 3 and str(key[2]).startswith(prefix)
