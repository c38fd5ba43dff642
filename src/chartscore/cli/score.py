"""``chartscore score``: score predictions against gold; print or write the report."""

from __future__ import annotations

import argparse
import glob
import re
from collections.abc import Callable
from typing import Final

from chartscore.cli._command import (
    PROGRAM,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._last_steps import (
    check_gates,
    gated_exit,
    load_gated_schema,
    load_report_gates,
    write_partial,
)
from chartscore.cli._ledger_options import LEDGER_OPTIONS, ledger_request, record
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    GATE_OPTIONS,
    GATES,
    GOLD,
    JOBS,
    PREDICTIONS,
    QUIET,
    SCHEMA,
    STRATA,
    STRICT_SCHEMA,
    document_format,
    document_options,
    document_text,
    junit_target,
    output_targets,
    score_inputs,
    strata_input,
)
from chartscore.cli._streams import Streams, say
from chartscore.documents.report import Report
from chartscore.engine import score_dask
from chartscore.io.inputs import InputPath
from chartscore.io.ledger_file import ledger_key_file
from chartscore.io.output import write_output
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.scorer import ExtraPredictions
from chartscore.workflows.partials import score_with_partial
from chartscore.workflows.score import score_files

_PARTITIONS: Final = re.compile(r"[1-9][0-9]{0,6}")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Score; print or write the report; check gates if given."""
    on_dask = args.engine == "dask"
    _check_engine_options(args, on_dask)
    gold, predictions = GOLD.input_path(args), PREDICTIONS.input_path(args)
    schema_path, gates_path = SCHEMA.optional_path(args), GATES.optional_path(args)
    data: tuple[InputPath, ...] = (gold, predictions)
    if on_dask:  # part files: every file a pattern names is an input
        data = tuple(sorted({*glob.glob(args.gold), *glob.glob(args.predictions)}))
    inputs = (*data, schema_path, gates_path, strata_input(args))
    out, partial_out = output_targets(args, inputs, "score")
    written: list[str] = []
    if on_dask and args.ledger is not None:
        raise UsageError("--ledger applies to --engine local only", "score")
    request = ledger_request(
        args, "score", gold=gold, predictions=predictions, schema=schema_path, inputs=inputs
    )
    # --junit is never an input, nor the ledger's key file, nor another output.
    kept = (*inputs, None if request is None else ledger_key_file(args.ledger_key))
    junit = junit_target(args, kept, "score", outputs=(out, partial_out, _ledger(args)))
    gates = load_report_gates(gates_path)
    scorer = _dask_scorer(args) if on_dask else score_files
    if partial_out is not None:
        scorer = _partial_scorer(written)
    schema = load_gated_schema(schema_path, gates)
    report = score_inputs(
        args,
        streams,
        scorer,
        gold=gold,
        predictions=predictions,
        schema=schema,
        shown=not on_dask,
    )
    if report.ignored_prediction_count:
        say(
            streams.err,
            f"{PROGRAM}: {report.ignored_prediction_count:,} predictions whose key is not in "
            "gold were ignored (--extra-predictions ignore)\n",
        )
    _warn_if_gold_mirrored(report, streams)
    check_gates(gates, document=report, interval=args.gate_interval)
    fmt = document_format(args, streams, out)
    text = document_text(
        report, fmt, gates=gates, interval=args.gate_interval, axis=args.axis, schema=schema
    )
    if partial_out is not None:  # inside the consortium only: not for other users of the machine
        write_partial(written[0], partial_out, inputs=(*inputs, out))
    write_output(text.encode("utf-8"), out, inputs=(*inputs, partial_out), stdout=streams.out)
    record(request, report, streams, gold=gold, schema_path=schema_path, inputs=inputs)
    return gated_exit(report, gates, args, streams, junit=junit, command="score", inputs=kept)


def mirrors_gold(report: Report) -> bool:
    """Whether every gold row got gold's own answer: answered exactly, abstained where unanswerable.

    Gold imported twice (once as gold, once as predictions: a Double Data Entry export, or a
    slip in a pipeline) scores 100% by construction; no system does that on a real cohort.
    """
    overall = report.overall
    exact = overall.metric("exact_agreement")
    answerable = overall.count("answerable_count")
    return (
        overall.count("field_count") > 0
        and overall.count("missing_count") == 0
        and overall.count("answered_count") == answerable
        and exact.success_count == exact.total_count == answerable
    )


def _warn_if_gold_mirrored(report: Report, streams: Streams) -> None:
    if mirrors_gold(report):
        say(
            streams.err,
            f"{PROGRAM}: warning: every prediction is gold's own answer "
            f"({report.overall.count('field_count'):,} gold rows): were the predictions made "
            "from the gold file?\n",
        )


def _ledger(args: argparse.Namespace) -> str | None:
    """``--ledger``'s file, an output that ``--junit`` must not name (None: not given)."""
    ledger: str | None = getattr(args, "ledger", None)
    return None if ledger in (None, STANDARD_STREAM) else ledger


def _partial_scorer(written: list[str]) -> Callable[..., Report]:
    """:func:`score_with_partial` as a files scorer: the report, the partial kept aside."""

    def score_keeping_partial(gold: InputPath, predictions: InputPath, **options: object) -> Report:
        report, partial = score_with_partial(gold, predictions, **options)  # type: ignore[arg-type]
        written.append(partial)
        return report

    return score_keeping_partial


def _dask_scorer(args: argparse.Namespace) -> Callable[..., Report]:
    """:func:`chartscore.score_dask` with this command's engine options, as a files scorer."""

    def score_parts(
        gold: InputPath,
        predictions: InputPath,
        *,
        schema: Schema | None,
        extra_predictions: ExtraPredictions,
        strict_schema: bool,
        confidence: float,
        strata: CaseStrata | None,
        **_local_only: object,  # progress and parallel: the local engine's
    ) -> Report:
        return score_dask(
            args.gold,
            args.predictions,
            schema=schema,
            scheduler=args.scheduler,
            partitions=None if args.partitions is None else int(args.partitions),
            extra_predictions=extra_predictions,
            strict_schema=strict_schema,
            confidence=confidence,
            strata=strata,
        )

    return score_parts


def _check_engine_options(args: argparse.Namespace, on_dask: bool) -> None:
    # Options of one engine given to the other are mistakes worth naming.
    if on_dask:
        if STANDARD_STREAM in (args.gold, args.predictions):
            raise UsageError("--engine dask reads part files, not standard input", "score")
        if args.jobs is not None:
            raise UsageError("--jobs applies to --engine local only", "score")
        if args.partitions is not None and not _PARTITIONS.fullmatch(args.partitions):
            raise UsageError("--partitions must be a whole number from 1", "score")
        if args.partial_out is not None:
            raise UsageError("--partial-out applies to --engine local only", "score")
    elif args.scheduler is not None or args.partitions is not None:
        raise UsageError("--scheduler and --partitions need --engine dask", "score")


COMMAND: Final = Command(
    name="score",
    help="score a predictions file against a gold file",
    description="Score predictions (JSON Lines) against gold (JSON Lines). Prints the "
    "canonical JSON report (on a terminal: its summary), or writes it atomically with "
    "--out. An input may be - (standard input) or gzip-compressed.",
    options=(
        GOLD,
        PREDICTIONS,
        SCHEMA,
        *document_options("the report's form"),
        QUIET,
        JOBS,
        EXTRA_PREDICTIONS,
        STRICT_SCHEMA,
        CONFIDENCE,
        *GATE_OPTIONS,
        STRATA,
        Option(
            "--engine",
            "local (default: this machine) or dask (part files on a Dask cluster; "
            "--gold and --predictions are then glob patterns)",
            "{local,dask}",
            choices=("local", "dask"),
        ),
        Option(
            "--scheduler",
            "with --engine dask: an existing cluster's address (default: a private local cluster)",
            "ADDRESS",
        ),
        Option("--partitions", "with --engine dask: how many partitions", "N"),
        Option(
            "--partial-out",
            "also write this site's partial tally here (mode 0600; for chartscore merge)",
            "FILE",
        ),
        *LEDGER_OPTIONS,
    ),
    run=run,
)
