"""``--ledger`` on ``score``, ``share`` and ``compare``: the options and the two steps.

:func:`ledger_request` runs before any scoring (the key is read, the labels and the
ledger checked, the gold file's state taken); :func:`record` runs once the document
is written, and appends the run's line (docs/ledger.md).
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from typing import Final

from chartscore.cli._command import PROGRAM, STANDARD_STREAM, Option, UsageError, output_file
from chartscore.cli._streams import Streams, say
from chartscore.documents import Document
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.ledger_file import KEY_FILE_VARIABLE, FileState, check_ledger, load_ledger_key
from chartscore.io.schema_file import load_schema
from chartscore.ledger.entry import LABEL_PATTERN, RUN_ID_PATTERN
from chartscore.records.gold_identity import LedgerKey
from chartscore.workflows.ledger import gold_state, record_run, run_label

LEDGER: Final = Option(
    "--ledger",
    "append this run to a ledger (JSON Lines, mode 0600; inside only: docs/ledger.md)",
    "FILE",
)
LEDGER_KEY: Final = Option(
    "--ledger-key",
    f"the ledger's key file (default: the file ${KEY_FILE_VARIABLE} names)",
    "FILE",
)
SYSTEM: Final = Option(
    "--system", "the system's label in the ledger (default: the predictions file's name)", "NAME"
)
RUN_ID: Final = Option("--run-id", "the run's id in the ledger (default: the system label)", "ID")
BASELINE_SYSTEM: Final = Option(
    "--baseline-system",
    "the baseline's label in the ledger (default: the baseline file's name)",
    "NAME",
)
LEDGER_OPTIONS: Final = (LEDGER, LEDGER_KEY, SYSTEM, RUN_ID)
"""The ledger options of ``score`` and ``share`` (``compare`` adds ``--baseline-system``)."""

_LABEL: Final = re.compile(LABEL_PATTERN)
_RUN_ID: Final = re.compile(RUN_ID_PATTERN)
_PLAIN: Final = "a plain name such as model-v2"


@dataclass(frozen=True)
class LedgerRequest:
    """What ``--ledger`` asks for, checked before any work."""

    path: str
    key: LedgerKey
    system: str
    run_id: str | None
    versus: str | None
    gold_before: FileState


def ledger_request(
    args: argparse.Namespace,
    command: str,
    *,
    gold: InputPath,
    predictions: InputPath,
    schema: InputPath | None = None,
    baseline: InputPath | None = None,
    inputs: tuple[InputPath | None, ...] = (),
) -> LedgerRequest | None:
    """The ledger request of a command's arguments, or None without ``--ledger``.

    Raises:
        UsageError: a ledger option without ``--ledger``, ``--ledger -``, gold or
            schema from standard input, a label option that is not a plain name, or
            a ledger that is also an output (``--out``, ``--partial-out``) by any name.
        ChartscoreError: the key's codes (``ledger_key_missing``, ...), the
            ledger's checks, ``invalid_run_label (predictions)`` when a file's name
            cannot be the label (give ``--system``).
    """
    given = args.ledger
    if given is None:
        for option in (LEDGER_KEY, SYSTEM, RUN_ID, BASELINE_SYSTEM):
            if getattr(args, option.dest, None) is not None:
                raise UsageError(f"{option.flag} needs --ledger", command)
        return None
    output_file(given, "--ledger", command)
    if gold is STDIN:
        raise UsageError("--ledger needs --gold from a file: it is read again", command)
    if schema is STDIN:
        raise UsageError("--ledger needs --schema from a file: it is read again", command)
    for option, pattern in ((SYSTEM, _LABEL), (RUN_ID, _RUN_ID), (BASELINE_SYSTEM, _LABEL)):
        value = getattr(args, option.dest, None)
        if value is not None and not pattern.fullmatch(value):
            raise UsageError(f"{option.flag} must be {_PLAIN}", command)
    for flag, dest in (("--out", "out"), ("--partial-out", "partial_out")):
        output = getattr(args, dest, None)
        if output not in (None, STANDARD_STREAM) and _same_file(output, given):
            raise UsageError(f"--ledger and {flag} must name different files", command)
    system = args.system or _label_of(predictions, InputKind.PREDICTIONS, command)
    versus = None
    if baseline is not None:
        versus = getattr(args, "baseline_system", None) or _label_of(
            baseline, InputKind.BASELINE, command
        )
    key = load_ledger_key(args.ledger_key)
    check_ledger(given, inputs=(gold, predictions, schema, baseline, *inputs))
    return LedgerRequest(given, key, system, args.run_id, versus, gold_state(gold))


def _same_file(one: str, other: str) -> bool:
    """Whether two paths name one file: by any spelling, or (existing) by any link."""
    same = False
    try:
        same = os.path.realpath(one) == os.path.realpath(other)
        if not same:
            status, other_status = os.stat(one), os.stat(other)
            same = (status.st_dev, status.st_ino) == (other_status.st_dev, other_status.st_ino)
    except (OSError, ValueError):
        pass
    return same


def _label_of(path: InputPath, source: InputKind, command: str) -> str:
    if path is STDIN:
        flag = "--system" if source is InputKind.PREDICTIONS else "--baseline-system"
        raise UsageError(f"{flag} is required with --ledger and standard input", command)
    label = run_label(path)
    if label is None:
        raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL, input=source)
    return label


def record(
    request: LedgerRequest | None,
    document: Document,
    streams: Streams,
    *,
    gold: InputPath,
    schema_path: InputPath | None,
    inputs: tuple[InputPath | None, ...],
) -> None:
    """Append the run to the ledger (nothing without a request); say so on stderr."""
    if request is None:
        return
    schema = None if schema_path is None else load_schema(schema_path)
    entry = record_run(
        request.path,
        document,
        key=request.key,
        gold=gold,
        gold_before=request.gold_before,
        system=request.system,
        schema=schema,
        run_id=request.run_id,
        versus=request.versus,
        inputs=inputs,
    )
    say(streams.err, f"{PROGRAM}: ledger: {entry.kind} run {entry.run_id} recorded\n")
