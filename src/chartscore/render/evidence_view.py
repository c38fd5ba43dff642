"""Evidence support where no answer carried evidence: "not provided", not 0%.

A slice whose ``evidence_provided`` is 0 of its trials had no answer with an evidence chain
(imported answers never have one). Its ``evidence_support`` is then 0 too, but 0% would read
as a grounding failure: the tables and plots show "not provided" instead, with a note, and
draw no rate. Where chains were provided and none supported its answer, 0% stays (a real
failure). The CSV and JSON keep the numbers. Value-free: counts only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Protocol

import attrs

from chartscore.documents.gates import Counted
from chartscore.render.view import Estimate

NOT_PROVIDED_NOTE: Final = (
    "Evidence support reads not provided where no answered row carried an evidence chain with "
    "a source span (evidence provided 0 of the answered rows, as for imported answers): it "
    "is not 0%. 0% means chains were provided and none supported its answer."
)


class _Slice(Protocol):
    @property
    def metrics(self) -> Mapping[str, Counted]: ...


def none_provided(part: _Slice) -> bool:
    """Whether a slice's answers carried no evidence: ``evidence_provided`` 0 of its trials.

    Trials not known to be 0 (with none, evidence support reads ``no trials``), and its
    successes 0: shown as 0, or (a shared report) withheld with a published range up to 0.
    A document without the metric (written before it) never reads so.
    """
    return nothing_provided(part.metrics.get("evidence_provided"))


def nothing_provided(provided: Counted | None) -> bool:
    """:func:`none_provided` of one ``evidence_provided`` result (a slice's, or one system's
    in a comparison); False without one."""
    if provided is None or provided.total_count == 0:
        return False
    successes = provided.success_count
    if successes is not None:
        return successes == 0
    found = getattr(provided, "success_range", None)
    return found is not None and found[1] == 0


def shown_support(estimate: Estimate) -> Estimate:
    """``evidence_support``'s estimate as the tables and plots show it where none was provided:
    no counts, rate, interval or bound (the CSV keeps the numbers)."""
    return attrs.evolve(
        estimate,
        success_count=None,
        total_count=None,
        value=None,
        lower=None,
        upper=None,
        suppressed=False,
        design_effect=None,
        clustered_lower=None,
        clustered_upper=None,
        bound=None,
        bound_kind="",
        success_range=None,
        total_range=None,
        not_provided=True,
    )


def support_shown(estimate: Estimate, part: _Slice) -> Estimate:
    """``estimate`` as people read it in ``part``'s row (:func:`shown_support` where due)."""
    if estimate.metric == "evidence_support" and none_provided(part):
        return shown_support(estimate)
    return estimate


def not_provided(
    slices: Iterable[tuple[str, str, _Slice]], estimates: list[Estimate]
) -> list[Estimate]:
    """The estimates people read: evidence support "not provided" where a slice had none."""
    where = {(kind, name) for kind, name, part in slices if none_provided(part)}
    if not where:
        return estimates
    return [
        shown_support(e) if e.metric == "evidence_support" and (e.slice, e.name) in where else e
        for e in estimates
    ]
