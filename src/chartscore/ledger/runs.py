"""A ledger read back: its entries in file order, the latest line per run, and its groups.

Lines are never edited, so a run is re-recorded by appending: for each run (its kind
and run id) the **last** line in the file wins, whatever its ``time`` says (clocks
can go back). Runs are comparable only on the same gold set (gold identity and key)
and under the same configuration (:class:`~chartscore.ledger.entry.Setup`); the
groups here are what ``chartscore ledger show`` lays out.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from chartscore.ledger.adjudication import AdjudicationEntry
from chartscore.ledger.entry import LedgerEntry, Setup

GoldSet = tuple[str, str]
"""(key id, gold identity): which gold set, under which key."""


@attrs.frozen
class LedgerRun:
    """One line of a ledger and where it is.

    Attributes:
        line: Its 1-based line number in the file.
        entry: The line.
    """

    line: int
    entry: LedgerEntry

    @property
    def gold_set(self) -> GoldSet:
        """The gold set it was scored on."""
        return (self.entry.key_id, self.entry.gold_identity)


@attrs.frozen
class LedgerAdjudication:
    """One adjudication line of a ledger (two gold versions linked) and where it is.

    Attributes:
        line: Its 1-based line number in the file.
        entry: The line.
    """

    line: int
    entry: AdjudicationEntry

    @property
    def gold_sets(self) -> tuple[GoldSet, GoldSet]:
        """(the old gold set, the new one), each under the line's key."""
        key_id = self.entry.key_id
        return (key_id, self.entry.previous_gold_identity), (key_id, self.entry.gold_identity)


@attrs.frozen
class Ledger:
    """A ledger's lines, read back and checked.

    Attributes:
        runs: Every valid run line, in file order.
        damaged: The line numbers of lines that are not valid entries (a write
            cut short by a crash, or an edit), skipped.
        adjudications: Every valid adjudication line (``import adjudication``), in
            file order: which gold version was made from which.
    """

    runs: tuple[LedgerRun, ...]
    damaged: tuple[int, ...] = ()
    adjudications: tuple[LedgerAdjudication, ...] = ()

    @classmethod
    def of(
        cls,
        runs: Iterable[LedgerRun],
        damaged: Iterable[int] = (),
        adjudications: Iterable[LedgerAdjudication] = (),
    ) -> Ledger:
        """A ledger of these lines (sorted by line number)."""
        return cls(
            tuple(sorted(runs, key=lambda run: run.line)),
            tuple(sorted(set(damaged))),
            tuple(sorted(adjudications, key=lambda link: link.line)),
        )

    def latest(self) -> tuple[LedgerRun, ...]:
        """The last line of each run (kind and run id), in file order."""
        last: dict[tuple[str, str], LedgerRun] = {}
        for run in self.runs:
            last[run.entry.run] = run
        return tuple(sorted(last.values(), key=lambda run: run.line))

    def superseded(self) -> int:
        """How many lines a later line of the same run replaces."""
        return len(self.runs) - len(self.latest())


def gold_sets(runs: Iterable[LedgerRun]) -> list[tuple[GoldSet, list[LedgerRun]]]:
    """The runs grouped by gold set, the groups in order of their first line."""
    groups: dict[GoldSet, list[LedgerRun]] = {}
    for run in sorted(runs, key=lambda run: run.line):
        groups.setdefault(run.gold_set, []).append(run)
    return list(groups.items())


def setups(runs: Iterable[LedgerRun]) -> list[Setup]:
    """The distinct configurations of ``runs``, in order of their first line."""
    found: list[Setup] = []
    for run in sorted(runs, key=lambda run: run.line):
        if run.entry.setup not in found:
            found.append(run.entry.setup)
    return found
