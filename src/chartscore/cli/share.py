"""``chartscore share``: score, suppress small cells, self-audit; print or write it."""

from __future__ import annotations

import argparse
import glob
from dataclasses import replace
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    Command,
    Option,
    UsageError,
    min_cell_number,
)
from chartscore.cli._ledger_options import LEDGER_OPTIONS, ledger_request, record
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    GOLD,
    JOBS,
    OUT,
    PREDICTIONS,
    QUIET,
    SCHEMA,
    STRATA,
    STRICT_SCHEMA,
    confidence,
    extra_predictions,
    output_target,
    progress_shown,
    refuse_combined,
    score_inputs,
    strata_input,
)
from chartscore.cli._publication import share_publication
from chartscore.cli._share_notes import comparison_survival, say_releases, say_suppressed
from chartscore.cli._streams import Streams, say
from chartscore.cli.progress import TerminalProgress
from chartscore.disclosure.progress import reporting
from chartscore.documents.shared_report import (
    SharedReport,
)
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import InputPath
from chartscore.io.output import write_output
from chartscore.io.release_ledger import is_inside
from chartscore.io.schema_file import load_schema
from chartscore.workflows.share import DEFAULT_MIN_CELL, share_files, share_partial_files
from chartscore.workflows.share_comparison import share_comparison_files

_BASELINE: Final = Option(
    "--baseline",
    "instead of --predictions: the reference system's predictions (with --candidate, "
    "shares the paired comparison)",
    "FILE",
    reads_input=True,
)
_CANDIDATE: Final = Option(
    "--candidate", "the system under test's predictions (with --baseline)", "FILE", reads_input=True
)

# --partials replaces the scoring inputs and their options: the sites scored already; one
# pooled report, not a publication.
_SCORING_ONLY: Final = (
    "gold",
    "predictions",
    "baseline",
    "candidate",
    "schema",
    "strata",
    "jobs",
    "extra_predictions",
    "strict_schema",
    "ledger",
    "ledger_key",
    "system",
    "run_id",
    "releases",
    "publication",
    "out_dir",
    "compare",
    "also_min_cell",
)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Share; print or write the shared report; say how many numbers were suppressed."""
    min_cell = DEFAULT_MIN_CELL
    if args.min_cell is not None:
        min_cell = min_cell_number(args.min_cell, "--min-cell", "share")
    if args.partials is not None:
        return _share_partials(args, streams, min_cell)
    if args.publication is None and (args.out_dir, args.also_min_cell) != (None, None):
        flag = "--out-dir" if args.out_dir is not None else "--also-min-cell"
        raise UsageError(f"{flag} needs --publication", "share")
    if args.publication is not None:
        # Deferred: the solver's modules load only when sharing runs.
        from chartscore.disclosure.audits import remembering_attacks  # noqa: PLC0415

        options = [option.dest for option in COMMAND.options]
        # A product's own audit after share's self-audit reuses its answers (the same
        # published numbers: the same integer programs).
        with remembering_attacks():
            return share_publication(args, streams, min_cell, options)
    if args.compare or args.also_min_cell is not None:
        flag = "--compare" if args.compare else "--also-min-cell"
        raise UsageError(f"{flag} needs --publication", "share")
    if args.baseline is not None or args.candidate is not None:
        return _share_comparison(args, streams, min_cell)
    if args.gold is None or args.predictions is None:
        raise UsageError("share needs --gold and --predictions, or --partials", "share")
    if args.releases is not None and args.strata is not None:  # not in the releases' model
        raise UsageError("--releases cannot be combined with --strata", "share")
    gold, predictions = GOLD.input_path(args), PREDICTIONS.input_path(args)
    schema_path = SCHEMA.optional_path(args)
    inputs = (gold, predictions, schema_path, strata_input(args))
    out = output_target(args.out, inputs)
    if out is not None and args.releases is not None and is_inside(out, args.releases):
        # Never onto a release record, the head, or beside them: share writes that folder alone.
        raise ChartscoreError(
            ErrorCode.OUTPUT_IS_INPUT, input=InputKind.OUTPUT, hint=ErrorHint.OUTPUT_IN_RELEASES
        )
    request = ledger_request(
        args, "share", gold=gold, predictions=predictions, schema=schema_path, inputs=inputs
    )

    def share_with_notice(
        gold: InputPath,
        predictions: InputPath,
        *,
        progress: TerminalProgress | None,
        **options: object,
    ) -> SharedReport:
        def suppressing() -> None:
            if progress is not None:  # a terminal, without --quiet
                progress.finish()
                say(streams.err, f"{PROGRAM}: suppressing small cells and auditing...\n")

        # On a terminal, a bar through suppression and the audit (nothing elsewhere).
        with reporting(None if progress is None else progress.stage):
            shared = share_files(
                gold,
                predictions,
                progress=progress,
                min_cell=min_cell,
                suppressing=suppressing,
                releases=args.releases,
                **options,  # type: ignore[arg-type]
            )
        if progress is not None:
            progress.finish()
        return shared

    shared = score_inputs(
        args,
        streams,
        share_with_notice,
        gold=gold,
        predictions=predictions,
        schema=None if schema_path is None else load_schema(schema_path),
    )
    # No ignored-prediction count on stderr, unlike score: it may be a suppressed number.
    write_output((shared.to_json() + "\n").encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    say_suppressed(shared, streams)
    say_releases(shared, streams)
    weighted = shared.overall_weighted
    if weighted is not None:
        shown = sum(1 for metric in weighted.metrics.values() if metric.estimate is not None)
        say(
            streams.err,
            f"{PROGRAM}: weighted estimates shown {shown:,}/{len(weighted.metrics):,} "
            "(each only where every sampled stratum's counts are)\n",
        )
    record(request, shared, streams, gold=gold, schema_path=schema_path, inputs=inputs)
    return EXIT_OK


def _share_partials(args: argparse.Namespace, streams: Streams, min_cell: int) -> int:
    # The sites' partials, merged, suppressed and audited once on the pooled counts.
    refuse_combined(args, _SCORING_ONLY, "--partials")
    inputs = tuple(sorted(glob.glob(args.partials)))
    out = output_target(args.out, inputs)
    shared = share_partial_files(args.partials, min_cell=min_cell, confidence=confidence(args))
    write_output((shared.to_json() + "\n").encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    say_suppressed(shared, streams)
    say_releases(shared, streams)
    return EXIT_OK


# Of the scoring inputs and options, a shared comparison takes these only.
_FOR_COMPARISON: Final = ("gold", "baseline", "candidate", "schema", "extra_predictions")
_NOT_FOR_COMPARISON: Final = tuple(n for n in _SCORING_ONLY if n not in _FOR_COMPARISON)


def _share_comparison(args: argparse.Namespace, streams: Streams, min_cell: int) -> int:
    # Both systems on one gold file, compared and shared (docs/disclosure.md).
    refuse_combined(args, _NOT_FOR_COMPARISON, "--baseline and --candidate")
    if args.gold is None or args.baseline is None or args.candidate is None:
        raise UsageError("sharing a comparison needs --gold, --baseline and --candidate", "share")
    gold = GOLD.input_path(args)
    baseline, candidate = _BASELINE.input_path(args), _CANDIDATE.input_path(args)
    schema_path = SCHEMA.optional_path(args)
    inputs = (gold, baseline, candidate, schema_path)
    out = output_target(args.out, inputs)
    with progress_shown(args, streams) as progress:
        shared = share_comparison_files(
            gold,
            baseline,
            candidate,
            schema=None if schema_path is None else load_schema(schema_path),
            min_cell=min_cell,
            progress=progress,
            extra_predictions=extra_predictions(args),
            confidence=confidence(args),
        )
    write_output((shared.to_json() + "\n").encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    say(
        streams.err,
        f"{PROGRAM}: {shared.disclosure.suppressed_count:,} numbers of the comparison suppressed "
        f"(min cell {shared.disclosure.min_cell}); the audit passed\n",
    )
    say(streams.err, comparison_survival(shared))
    say(
        streams.err,
        f"{PROGRAM}: differencing against other shared comparisons of overlapping cohorts "
        "is not covered, nor combining this comparison with either system's shared report "
        "unless shared with it (--publication --compare; docs/disclosure.md)\n",
    )
    return EXIT_OK


COMMAND: Final = Command(
    name="share",
    help="score, then suppress small cells so the report may leave (audited)",
    description="Score predictions against gold as score does, then print the shared "
    "report: numbers backed by 1 to min-cell - 1 distinct cases are null, with enough "
    "complementary cells that none can be derived. share audits its own output first "
    "and writes nothing if the audit would fail. With --partials, the sites' partial "
    "tallies are added first: the shared report of the pooled data.",
    options=(
        replace(GOLD, required=False),
        replace(PREDICTIONS, required=False),
        _BASELINE,
        _CANDIDATE,
        SCHEMA,
        Option(
            "--partials",
            "instead of --gold and --predictions: a glob pattern of sites' partial files "
            "(score --partial-out), merged and shared once",
            "PATTERN",
        ),
        Option(
            "--min-cell",
            f"publish 0 or at least N cases (default {DEFAULT_MIN_CELL})",
            "N",
        ),
        OUT,
        QUIET,
        JOBS,
        EXTRA_PREDICTIONS,
        STRATA,
        STRICT_SCHEMA,
        CONFIDENCE,
        Option(
            "--publication",
            "instead of --predictions: a glob pattern of several systems' predictions on the "
            "same gold; each system's shared report is written to --out-dir, chosen so that "
            "they are safe held together (docs/disclosure.md)",
            "PATTERN",
        ),
        Option(
            "--out-dir",
            "with --publication: the existing folder for the shared reports "
            "(NAME.shared.json per predictions file NAME.jsonl; with --strata, also "
            "NAME.strata.shared.json, the report with stratum slices)",
            "DIR",
        ),
        Option(
            "--also-min-cell",
            "with --publication: also share each report at this min cell "
            "(NAME.min-N.shared.json, NAME.strata.min-N.shared.json with --strata), safe "
            "held together with the others",
            "N",
        ),
        Option(
            "--compare",
            "with --publication: also share the comparison of every pair of systems (the "
            "earlier file in sorted order is the baseline) into --out-dir, as "
            "A_vs_B.shared-comparison.json, safe held together with the reports",
        ),
        Option(
            "--releases",
            "an inside-only folder of earlier releases: audit jointly with them against "
            "differencing, and record this one there (docs/disclosure.md)",
            "DIR",
        ),
        *LEDGER_OPTIONS,
    ),
    run=run,
)
