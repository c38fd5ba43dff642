"""Recording a run in the ledger: the document, the gold set's keyed identity, the setup.

``score``, ``share`` and ``compare`` with ``--ledger`` call :func:`record_run` once
their document exists; ``batch`` builds its entries with :func:`ledger_entry` and
:func:`failed_entry` and appends them itself. The gold identity is read from the
gold file again once the document exists, with the file's state compared before
scoring and after reading: if it changed in between, nothing is recorded
(``ledger_gold_changed``). A gold set from standard input cannot be read twice, so
it cannot be recorded.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from pathlib import PurePath
from typing import Final, cast

from chartscore._version import __version__
from chartscore.documents import Document, is_document
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, caller_items
from chartscore.io.inputs import InputPath, StandardInput, input_path_or_none
from chartscore.io.ledger_file import (
    FileState,
    append_line,
    check_ledger,
    file_state,
    gold_file_identity,
)
from chartscore.ledger.entry import LedgerEntry, Problem, Setup, is_label, utc_time
from chartscore.ledger.scoring_code import code_hash
from chartscore.records.gold_identity import LedgerKey
from chartscore.records.schema import Schema
from chartscore.records.schema_digest import schema_digest

_GZIP_SUFFIX: Final = ".gz"

__all__ = [
    "compare_run_id",
    "failed_entry",
    "gold_state",
    "ledger_entry",
    "pinned_gold_identity",
    "record_run",
    "run_label",
]


def run_label(path: InputPath) -> str | None:
    """A prediction file's run label: its name without ``.gz`` and then one suffix.

    None when that is not a plain label (:data:`~chartscore.ledger.entry.LABEL_PATTERN`).
    """
    where = input_path_or_none(path, InputKind.PREDICTIONS)
    if where is None or isinstance(where, StandardInput):
        return None
    name = os.path.basename(where).removesuffix(_GZIP_SUFFIX)
    stem = PurePath(name).stem if name else ""
    return stem if is_label(stem) else None


def compare_run_id(system: str, versus: str) -> str:
    """A comparison's default run id: ``<candidate>.vs.<baseline>``."""
    return f"{system}.vs.{versus}"


def gold_state(gold: InputPath) -> FileState:
    """The gold file's state before scoring, to check it did not change before recording.

    Raises:
        ChartscoreError: ``invalid_path (gold)`` for standard input or anything but
            a regular file (a ledger needs the gold file read twice).
    """
    state = file_state(gold)
    if state is None:
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.GOLD)
    return state


def pinned_gold_identity(gold: InputPath, key: LedgerKey, before: FileState) -> str:
    """The gold file's keyed identity, provided the file is as it was (``before``).

    Raises:
        ChartscoreError: ``ledger_gold_changed (gold)`` when the file changed (its
            device, inode, size or modification time), or any gold reading code;
            ``usage`` when ``before`` is not a :data:`FileState`.
    """
    if not _is_state(before):
        raise ChartscoreError(ErrorCode.USAGE)
    failure: ChartscoreError | None = None
    digest = ""
    try:
        digest = gold_file_identity(gold, key).digest()
    except ChartscoreError as error:
        failure = error
    if file_state(gold) != before:
        raise ChartscoreError(ErrorCode.LEDGER_GOLD_CHANGED, input=InputKind.GOLD)
    if failure is not None:
        raise failure
    return digest


def _is_state(value: object) -> bool:
    return type(value) is tuple and len(value) == 4 and all(type(item) is int for item in value)


def ledger_entry(
    document: Document,
    *,
    system: str,
    gold_identity: str,
    key: LedgerKey,
    schema: Schema | None = None,
    run_id: str | None = None,
    versus: str | None = None,
    time: datetime.datetime | None = None,
) -> LedgerEntry:
    """The ledger entry of a scored run (nothing is written).

    Args:
        document: The run's report, shared report or comparison.
        system: The system's label (a comparison: the candidate's).
        gold_identity: The gold set's keyed identity (:func:`pinned_gold_identity`
            or :func:`chartscore.records.gold_identity.gold_identity`).
        key: The ledger key that made it.
        schema: The schema the run was scored with.
        run_id: Default: ``system``, or for a comparison :func:`compare_run_id`.
        versus: A comparison's baseline label (required for one, refused otherwise).
        time: When (default now); an aware datetime.

    Raises:
        ChartscoreError: ``invalid_run_label`` for a label or run id that is not
            a plain name; ``usage`` for arguments out of shape.
    """
    if not is_document(document) or type(key) is not LedgerKey:
        raise ChartscoreError(ErrorCode.USAGE)
    return LedgerEntry.scored(
        document,
        run_id=_run_id(run_id, system, versus),
        system=system,
        time=utc_time(time),
        code_hash=code_hash(),
        schema_digest=schema_digest(schema, key),
        gold_identity=gold_identity,
        key_id=key.key_id,
        versus=versus,
    )


def failed_entry(
    error: ChartscoreError,
    *,
    kind: str,
    system: str,
    gold_identity: str,
    key: LedgerKey,
    confidence: float,
    schema: Schema | None = None,
    min_cell: int | None = None,
    run_id: str | None = None,
    versus: str | None = None,
    time: datetime.datetime | None = None,
) -> LedgerEntry:
    """The ledger entry of a run that failed with ``error`` (its code and location only).

    Raises:
        ChartscoreError: as :func:`ledger_entry`.
    """
    if type(error) is not ChartscoreError or type(key) is not LedgerKey:
        raise ChartscoreError(ErrorCode.USAGE)
    setup = Setup(__version__, code_hash(), schema_digest(schema, key), confidence, min_cell)
    return LedgerEntry.failed(
        Problem.of(error),
        kind=kind,
        run_id=_run_id(run_id, system, versus),
        system=system,
        time=utc_time(time),
        setup=setup,
        gold_identity=gold_identity,
        key_id=key.key_id,
        versus=versus,
    )


def _run_id(run_id: str | None, system: str, versus: str | None) -> str:
    if run_id is not None:
        return run_id
    if not is_label(system) or (versus is not None and not is_label(versus)):
        raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL)
    return system if versus is None else compare_run_id(system, versus)


def record_run(
    ledger: InputPath,
    document: Document,
    *,
    key: LedgerKey,
    gold: InputPath,
    gold_before: FileState,
    system: str,
    schema: Schema | None = None,
    run_id: str | None = None,
    versus: str | None = None,
    inputs: Sequence[InputPath | None] = (),
    time: datetime.datetime | None = None,
) -> LedgerEntry:
    """Append one scored run to the ledger and return its entry.

    Args:
        ledger: The ledger file (created with mode 0600 if missing).
        document: The run's report, shared report or comparison.
        key: The ledger key (:func:`chartscore.io.ledger_file.load_ledger_key`).
        gold: The gold file the run was scored on (read again for its identity).
        gold_before: :func:`gold_state` of ``gold``, taken before scoring.
        system, schema, run_id, versus, time: As for :func:`ledger_entry`.
        inputs: Every input of the run: the ledger is never one of them.

    Raises:
        ChartscoreError: as :func:`ledger_entry`, :func:`pinned_gold_identity` and
            :func:`chartscore.io.ledger_file.append_line`.
    """
    listed = caller_items(inputs)
    if listed is None:
        raise ChartscoreError(ErrorCode.USAGE)
    every = cast("tuple[InputPath | None, ...]", (gold, *listed))
    check_ledger(ledger, inputs=every)
    identity = pinned_gold_identity(gold, key, gold_before)
    entry = ledger_entry(
        document,
        system=system,
        gold_identity=identity,
        key=key,
        schema=schema,
        run_id=run_id,
        versus=versus,
        time=time,
    )
    append_line(ledger, entry.to_line(), inputs=every)
    return entry
