"""``chartscore batch``: score many prediction files, compare them with a baseline, record all."""

from __future__ import annotations

import argparse
import glob
import os
import re
from typing import Final

from chartscore.cli._command import (
    PROGRAM,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
    output_file,
)
from chartscore.cli._ledger_options import LEDGER_KEY
from chartscore.cli._options import (
    CONFIDENCE,
    EXTRA_PREDICTIONS,
    GATES,
    GOLD,
    JUNIT,
    SCHEMA,
    confidence,
    extra_predictions,
    junit_target,
)
from chartscore.cli._signals import Terminated
from chartscore.cli._streams import Streams, say
from chartscore.io.document_files import load_gates
from chartscore.io.inputs import identity
from chartscore.io.ledger_file import Appended, ledger_key_file, load_ledger_key
from chartscore.io.output import write_output
from chartscore.render.junit import JUnitSuite, junit_xml
from chartscore.workflows.batch import Batch, batch_files

NAME: Final = "batch"
MAX_JOBS: Final = 64
_JOBS: Final = re.compile(r"[1-9][0-9]?")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Run the batch; print its summary; the failing gates' tables go to stderr.

    Stopped by Ctrl-C or a termination signal, it says whether its runs were
    recorded: its ledger lines go in one locked write, so all of them or none.
    """
    appended = Appended()
    try:
        return _batch(args, streams, appended)
    except (KeyboardInterrupt, Terminated):
        if appended.lines:
            stopped = f"after appending its {appended.lines:,} ledger lines: every run was recorded"
        else:
            stopped = "before appending its ledger lines: no run was recorded"
        say(streams.err, f"{PROGRAM}: batch stopped {stopped}\n")
        raise


def _batch(args: argparse.Namespace, streams: Streams, appended: Appended) -> int:
    if args.predictions == STANDARD_STREAM:
        raise UsageError("--predictions is a pattern of files, not standard input", NAME)
    output_file(args.ledger, "--ledger", NAME)
    if args.jobs is not None and not (_JOBS.fullmatch(args.jobs) and int(args.jobs) <= MAX_JOBS):
        raise UsageError(f"--jobs must be a whole number from 1 to {MAX_JOBS}", NAME)
    if STANDARD_STREAM in (args.gold, args.schema, args.gates):
        raise UsageError("batch reads every input from a file, not standard input", NAME)
    gold = GOLD.input_path(args)
    schema_path, gates_path = SCHEMA.optional_path(args), GATES.optional_path(args)
    key_file = ledger_key_file(args.ledger_key)  # never a run, even when the pattern names it
    key = load_ledger_key(key_file)
    # --junit is never an input: the gold, schema, gates, key file or a run the pattern names
    # (the ledger is no run, even where the pattern names it: the batch skips it too).
    ledger = identity(args.ledger)
    matched = sorted(glob.glob(args.predictions))
    runs = [path for path in matched if ledger is None or identity(path) != ledger]
    kept = (gold, schema_path, gates_path, key_file, *runs)
    junit = junit_target(args, kept, NAME, outputs=(args.ledger,))
    gates = () if gates_path is None else load_gates(gates_path)
    jobs = _available_cpus() if args.jobs is None else int(args.jobs)
    batch = batch_files(
        gold,
        args.predictions,
        ledger=args.ledger,
        key=key,
        baseline=args.baseline,
        gates=gates,
        schema=schema_path,
        jobs=jobs,
        extra_predictions=extra_predictions(args),
        inputs=(gates_path, key_file),
        confidence=confidence(args),
        appended=appended,
    )
    write_output(batch.summary().encode("utf-8"), None, inputs=(), stdout=streams.out)
    for run_ in batch.runs:
        if run_.gates is not None and any(not result.passed for result in run_.gates.results):
            versus = "" if batch.baseline is None else f" against {batch.baseline}"
            say(streams.err, f"{PROGRAM}: gates of {run_.label}{versus}:\n")
            say(streams.err, run_.gates.table())
    if junit is not None:
        write_output(junit_xml(junit_suites(batch)), junit, inputs=kept)
    return batch.exit_status


def junit_suites(batch: Batch) -> list[JUnitSuite]:
    """One JUnit test suite per run, named by its label (docs/batch.md).

    A run's gates are its test cases; a run that failed (scoring, its comparison or the
    gate check) has one case, ``run``, with an error per failed step (the coded error's
    line); the baseline, whose gates are not checked, has none.
    """
    suites = []
    for run_ in batch.runs:
        errors = tuple(
            (step, str(problem))
            for step, problem in (
                ("scoring", run_.failure),
                ("comparison", run_.comparison_failure),
                ("gates", run_.gate_failure),
            )
            if problem is not None
        )
        properties: tuple[tuple[str, str], ...] = ()
        if run_.baseline:
            properties = (("role", "baseline"),)
        elif batch.baseline is not None:
            properties = (("compared_with", batch.baseline),)
        suites.append(JUnitSuite(run_.label, run_.gates, errors, properties))
    return suites


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


COMMAND: Final = Command(
    name=NAME,
    help="score many prediction files, compare each with a baseline, record all in a ledger",
    description="Score every prediction file a glob pattern names (quote it: chartscore "
    "expands it, sorted) against one gold file, in parallel processes; a malformed run is "
    "recorded as failed and the batch goes on. Each run is labelled by its file name; with "
    "--baseline NAME every other run is compared with it, paired, and --gates are checked "
    "against each comparison. Every run goes to the ledger. Exit 0: all scored and every "
    "required gate passed; 3: a required gate failed; 1: a run failed. See docs/batch.md.",
    options=(
        GOLD,
        Option(
            "--predictions",
            "a glob pattern of prediction files, quoted (each file is a run named by its stem)",
            "PATTERN",
            required=True,
        ),
        Option("--ledger", "the ledger to append every run to (inside only)", "FILE", True),
        LEDGER_KEY,
        Option("--baseline", "the run (a file name stem) every other run is compared with", "NAME"),
        SCHEMA,
        GATES,
        Option("--jobs", f"runs scored at once, 1 to {MAX_JOBS} (default: the CPUs free)", "N"),
        EXTRA_PREDICTIONS,
        CONFIDENCE,
        JUNIT,
    ),
    run=run,
)
