"""The ledger of scored runs: its lines, its code hash, its runs and their table.

Value-free but **inside-only** (docs/ledger.md, docs/privacy.md): a ledger line holds
a full report and the gold set's keyed identity, never a value, a case id, a path or
a plain digest of an input. Appending and reading the file are in
:mod:`chartscore.io.ledger_file`; recording a run from files is
:func:`chartscore.workflows.ledger.record_run`.
"""

from chartscore.ledger.adjudication import ADJUDICATION, AdjudicationEntry
from chartscore.ledger.entry import (
    KINDS,
    LEDGER_FORMAT,
    LEDGER_FORMAT_VERSION,
    LINE_PREFIX,
    LedgerEntry,
    Problem,
    Setup,
    is_label,
    is_run_id,
    utc_time,
)
from chartscore.ledger.runs import Ledger, LedgerAdjudication, LedgerRun
from chartscore.ledger.scoring_code import code_hash
from chartscore.ledger.table import ledger_table

__all__ = [
    "ADJUDICATION",
    "KINDS",
    "LEDGER_FORMAT",
    "LEDGER_FORMAT_VERSION",
    "LINE_PREFIX",
    "AdjudicationEntry",
    "Ledger",
    "LedgerAdjudication",
    "LedgerEntry",
    "LedgerRun",
    "Problem",
    "Setup",
    "code_hash",
    "is_label",
    "is_run_id",
    "ledger_table",
    "utc_time",
]
