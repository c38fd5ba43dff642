"""The last steps of score, merge and compare, once their document is computed.

Each writes a site's partial (score, merge) the same way, and answers for ``--gates`` the
same way: their table on stderr, since stdout holds the document.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from chartscore.cli._command import EXIT_OK
from chartscore.cli._options import gate_status
from chartscore.cli._streams import Streams
from chartscore.documents import Document
from chartscore.documents.gates import Gate, evaluate, refuse_unknown_fields
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.io.document_files import load_gates
from chartscore.io.inputs import InputPath
from chartscore.io.output import write_output
from chartscore.io.schema_file import load_schema
from chartscore.records.schema import Schema

__all__ = ["check_gates", "gated_exit", "load_gated_schema", "load_report_gates", "write_partial"]


def load_report_gates(path: InputPath | None) -> tuple[Gate, ...] | None:
    """The gates of a command whose document is a report (score, merge), or None.

    A difference rule needs a comparison: it is refused here, before any work, so
    that no report is written by a command that then fails on it.

    Raises:
        ChartscoreError: any code of :func:`load_gates`; ``gate_needs_comparison``.
    """
    if path is None:
        return None
    gates = load_gates(path)
    for gate in gates:
        if gate.is_difference:
            raise ChartscoreError(ErrorCode.GATE_NEEDS_COMPARISON, gate=gate.number, line=gate.line)
    return gates


def check_gates(
    gates: Sequence[Gate] | None,
    *,
    schema: Schema | None = None,
    document: Document | None = None,
    interval: str | None = None,
) -> None:
    """Refuse gates that could never be checked, before the work and before any output.

    With ``schema`` (before scoring): a field slice outside the schema. With ``document``
    (once computed, before it or a ledger line is written): any slice or metric it lacks,
    checked by :func:`~chartscore.documents.gates.evaluate` itself, whose verdicts wait.

    Raises:
        ChartscoreError: ``gate_slice_missing``, ``gate_metric_missing`` or
            ``gate_needs_comparison``.
    """
    if gates is None:
        return
    if schema is not None:
        refuse_unknown_fields(gates, schema.fields)
    if document is not None:
        evaluate(document, gates, interval=interval or "wilson")


def load_gated_schema(path: InputPath | None, gates: Sequence[Gate] | None) -> Schema | None:
    """The schema (None without ``--schema``), the gates' field slices checked against it.

    Raises:
        ChartscoreError: any code of :func:`~chartscore.io.schema_file.load_schema`;
            ``gate_slice_missing`` as :func:`check_gates`.
    """
    schema = None if path is None else load_schema(path)
    check_gates(gates, schema=schema)
    return schema


def write_partial(partial: str, target: str, *, inputs: Sequence[InputPath | None]) -> None:
    """Write a partial file in mode 0600: it travels only inside the consortium.

    Not for other users of the machine either; never over one of ``inputs``.
    """
    write_output((partial + "\n").encode("utf-8"), target, inputs=inputs, mode=0o600)


def gated_exit(
    document: Document,
    gates: Sequence[Gate] | None,
    args: argparse.Namespace,
    streams: Streams,
    *,
    junit: str | None,
    command: str,
    inputs: Sequence[InputPath | None],
) -> int:
    """The exit status: 0 without ``--gates``; with them, theirs (table on stderr)."""
    if gates is None:
        return EXIT_OK
    return gate_status(
        document,
        gates,
        streams,
        on_stderr=True,
        interval=args.gate_interval,
        junit=junit,
        junit_name=f"chartscore {command}",
        inputs=inputs,
    )
