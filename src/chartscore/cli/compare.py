"""``chartscore compare``: two systems on the same gold, paired; print or write it."""

from __future__ import annotations

import argparse
from typing import Final

import attrs

from chartscore.cli._command import (
    PROGRAM,
    Command,
    Option,
)
from chartscore.cli._last_steps import check_gates, gated_exit, load_gated_schema
from chartscore.cli._ledger_options import (
    BASELINE_SYSTEM,
    LEDGER_OPTIONS,
    ledger_request,
    record,
)
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    GATE_OPTIONS,
    GATES,
    GOLD,
    QUIET,
    SCHEMA,
    STRATA,
    confidence,
    document_format,
    document_options,
    document_text,
    extra_predictions,
    junit_target,
    output_target,
    progress_shown,
    strata_input,
)
from chartscore.cli._presentation import (
    BASELINE_NAME,
    CANDIDATE_NAME,
    DATE,
    check_date,
    rendering_date,
    system_names,
)
from chartscore.cli._streams import Streams, say
from chartscore.documents.comparison import (
    MISSING_COUNTS_DIFFER,
    MISSING_GAP_POINTS,
    Comparison,
    comparison_warnings,
)
from chartscore.io.document_files import load_gates
from chartscore.io.ledger_file import ledger_key_file
from chartscore.io.output import write_output
from chartscore.io.strata_file import load_strata
from chartscore.workflows.compare import compare_files

_BASELINE: Final = Option(
    "--baseline", "the reference system's predictions", "FILE", required=True, reads_input=True
)
_CANDIDATE: Final = Option(
    "--candidate", "the system under test's predictions", "FILE", required=True, reads_input=True
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Compare; print or write the comparison; check gates if given."""
    gold = GOLD.input_path(args)
    baseline, candidate = _BASELINE.input_path(args), _CANDIDATE.input_path(args)
    schema_path, gates_path = SCHEMA.optional_path(args), GATES.optional_path(args)
    strata_path = strata_input(args)
    inputs = (gold, baseline, candidate, schema_path, gates_path, strata_path)
    out = output_target(args.out, inputs)
    request = ledger_request(
        args,
        "compare",
        gold=gold,
        predictions=candidate,
        schema=schema_path,
        baseline=baseline,
        inputs=inputs,
    )
    # --junit is never an input, nor the ledger's key file, nor another output.
    kept = (*inputs, None if request is None else ledger_key_file(args.ledger_key))
    ledger: str | None = getattr(args, "ledger", None)
    junit = junit_target(args, kept, "compare", outputs=(out, None if ledger == "-" else ledger))
    gates = None if gates_path is None else load_gates(gates_path)
    names = system_names(args, "compare")
    check_date(args, "compare")
    with progress_shown(args, streams) as progress:
        schema = load_gated_schema(schema_path, gates)
        comparison = compare_files(
            gold,
            baseline,
            candidate,
            schema=schema,
            progress=progress,
            extra_predictions=extra_predictions(args),
            confidence=confidence(args),
            strata=None if strata_path is None else load_strata(strata_path, schema),
        )
    ignored = comparison.ignored_prediction_count
    if ignored is not None and (ignored.baseline or ignored.candidate):
        say(
            streams.err,
            f"{PROGRAM}: {ignored.baseline:,} baseline and {ignored.candidate:,} candidate "
            "predictions whose key is not in gold were ignored (--extra-predictions ignore)\n",
        )
    comparison = attrs.evolve(comparison, names=names)
    check_gates(gates, document=comparison, interval=args.gate_interval)
    _warn_missing_gap(comparison, streams)
    fmt = document_format(args, streams, out)
    date = None if fmt == "json" else rendering_date(args, "compare")
    text = document_text(
        comparison,
        fmt,
        gates=gates,
        interval=args.gate_interval,
        date=date,
        axis=args.axis,
        schema=schema,
    )
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    record(request, comparison, streams, gold=gold, schema_path=schema_path, inputs=inputs)
    return gated_exit(comparison, gates, args, streams, junit=junit, command="compare", inputs=kept)


def _warn_missing_gap(comparison: Comparison, streams: Streams) -> None:
    """Say when the systems' missing rates differ materially (docs/compare.md): counts only."""
    if MISSING_COUNTS_DIFFER not in comparison_warnings(comparison.overall):
        return
    overall = comparison.overall
    rows = overall.counts["field_count"]
    baseline = overall.baseline_counts["missing_count"]
    candidate = overall.candidate_counts["missing_count"]
    say(
        streams.err,
        f"{PROGRAM}: warning: missing rows differ by more than {MISSING_GAP_POINTS} points: "
        f"baseline {baseline:,} of {rows:,} ({_percent(baseline, rows)}), candidate "
        f"{candidate:,} ({_percent(candidate, rows)}); a missing row counts against "
        "agreement, so the comparison mixes coverage with agreement (see docs/compare.md)\n",
    )


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


COMMAND: Final = Command(
    name="compare",
    help="compare two systems on the same gold, paired (McNemar, paired difference)",
    description="Compare a baseline's and a candidate's predictions on one gold file, "
    "row by row: each system's metrics, the rows only one got right, the paired "
    "difference with Newcombe's interval and McNemar's exact and mid-p tests.",
    options=(
        GOLD,
        _BASELINE,
        _CANDIDATE,
        SCHEMA,
        *document_options("the comparison's form"),
        QUIET,
        EXTRA_PREDICTIONS,
        CONFIDENCE,
        *GATE_OPTIONS,
        STRATA,
        BASELINE_NAME,
        CANDIDATE_NAME,
        DATE,
        *LEDGER_OPTIONS,
        BASELINE_SYSTEM,
    ),
    run=run,
)
