"""A report shared around an earlier choice: what it shows stays shown, what it hides hidden.

``share`` makes some choices in two steps: the stratum slices around the report without them
(docs/disclosure.md#stratum-slices), and ``evidence_provided`` around the report without it
(:mod:`chartscore.disclosure.evidence_rule`). The second step holds the first's shown numbers
as known to the attack (never complementary cells) and its hidden ones hidden, and chooses the
rest; the caller keeps a fallback for when that cannot pass the audit.

Value-free: counts only.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Set
from typing import Protocol

from chartscore.disclosure.model import ReportModel
from chartscore.disclosure.sensitivity import Sensitivity
from chartscore.documents.report import Report
from chartscore.documents.shared_report import Key, SharedReport
from chartscore.errors import ChartscoreError, ErrorCode


class ShareFixed(Protocol):
    """``share`` of one report with some numbers known and others hidden (one step)."""

    def __call__(
        self,
        report: Report,
        sensitivity: Sensitivity,
        min_cell: int,
        *,
        hidden: Collection[Key],
        known: Mapping[Key, int],
    ) -> SharedReport: ...


def around(
    choice: SharedReport,
    report: Report,
    sensitivity: Sensitivity,
    min_cell: int,
    *,
    share_fixed: ShareFixed,
) -> SharedReport | None:
    """``report`` shared around an earlier ``choice``: what it shows shown, what it hides hidden.

    The choice's numbers are known to the attack and never complementary cells; the report's
    other numbers are chosen around them and audited. None where that cannot pass its audit
    (a known number alone pins a small cell of the report): the caller keeps its fallback.
    Used for the stratum slices around the plain report and for ``evidence_provided``.
    """
    known = {key: value for key, value in choice.numbers() if value is not None}
    hidden = frozenset(key for key, value in choice.numbers() if value is None)
    failed = False
    try:
        kept = share_fixed(report, sensitivity, min_cell, hidden=hidden, known=known)
    except ChartscoreError as error:
        if error.code is not ErrorCode.DISCLOSURE_AUDIT_FAILED:
            raise
        failed = True
    return None if failed else kept  # decided outside the except block: no chained context


def proven_shown(
    model: ReportModel,
    published: Mapping[Key, int],
    values: Mapping[Key, int],
    proven: Set[Key],
    min_cell: int,
) -> frozenset[Key]:
    """Of the hidden numbers an audit proves exactly (``proven``), those that may be shown.

    A proven number's equality holds on every table consistent with ``published``, but a
    shown number also brings the rule's rows (a shown item count is backed by at least
    ``min_cell`` cases: :meth:`ReportModel.knowledge`), which may be news. So a number is
    shown only where the rows with it shown are the rows without: then no range changes
    and no second audit is needed. All of them at once, else each alone and the survivors
    checked together, else none (value-free: keys and counts).
    """

    def rows(more: Collection[Key]) -> set[object]:
        shown = {**published, **{key: values[key] for key in more}}
        return set(model.knowledge(shown, min_cell))

    before = rows(())
    if rows(proven) == before:
        return frozenset(proven)
    alone = frozenset(key for key in sorted(proven) if rows((key,)) == before)
    return alone if rows(alone) == before else frozenset()
