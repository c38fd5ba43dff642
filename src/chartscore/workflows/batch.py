"""Batch scoring: many prediction files against one gold file, each recorded in the ledger.

:func:`batch_files` (``chartscore batch``, docs/batch.md):

1. takes the prediction files (a glob pattern, expanded here, or a list), sorted by
   path; each is a run labelled by its file name's stem (``runs/model-v2.jsonl.gz``
   is ``model-v2``); a file that is an input of the batch itself (the gold file, the
   schema, the gates, the ledger or its key file) is skipped;
2. reads the gold set once, checking it as ``score`` does and computing its keyed
   identity in the same pass: a gold problem stops the batch before any run;
3. scores every run, ``jobs`` at a time in forked processes
   (:mod:`chartscore.workflows.forked`): a run that fails (a malformed file) is
   recorded as failed, with its code and line, and the others go on;
4. compares every other scored run with the ``baseline`` run, paired, as
   ``compare`` does, and checks the gates against each comparison (against each
   report when there is no baseline);
5. appends one ledger line per run (in label order), then one per comparison, all
   in one locked write (:func:`chartscore.io.ledger_file.append_lines`): the ledger
   gains every line of the batch or none, whatever stops it.

The runs' labels are developer-chosen file names, shown in the summary and written
in the ledger; a path is never shown, and a file whose stem is not a plain label
(letters, digits, ``_ . + -``) is refused by its position, never by its name.
"""

from __future__ import annotations

import datetime
import glob
import textwrap
from collections.abc import Callable, Sequence
from typing import Final, cast

import attrs

from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import Gate, GateResults, evaluate
from chartscore.documents.report import Report
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, caller_items
from chartscore.io.hints import explained
from chartscore.io.inputs import (
    InputPath,
    StandardInput,
    identity,
    input_path,
    input_path_or_none,
)
from chartscore.io.ledger_file import (
    Appended,
    append_lines,
    check_ledger,
    file_state,
    gold_file_identity,
)
from chartscore.ledger.entry import LedgerEntry
from chartscore.ledger.table import COMPARED_METRIC, difference_estimate, overall_rate
from chartscore.records.gold_identity import GoldIdentity, LedgerKey
from chartscore.records.schema import Schema
from chartscore.render.table import WIDTH, table_lines
from chartscore.render.view import Cell, Column, Row, Table
from chartscore.scoring.scorer import ExtraPredictions, Scorer, check_options
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option
from chartscore.workflows.compare import compare_files
from chartscore.workflows.forked import run_tasks
from chartscore.workflows.ledger import failed_entry, gold_state, ledger_entry, run_label
from chartscore.workflows.score import resolve_schema, score_files

__all__ = ["Batch", "BatchRun", "batch_files"]

EXIT_OK: Final = 0
EXIT_RUN_FAILED: Final = 1
EXIT_REQUIRED_GATE_FAILED: Final = 3


@attrs.frozen
class BatchRun:
    """One run of a batch: its report (or why it failed), its comparison, its gates.

    Attributes:
        label: The run's label (its file name's stem).
        report: The report; None when scoring failed.
        failure: Why scoring failed; None when it did not.
        baseline: Whether this run is the batch's baseline.
        comparison: This run against the baseline; None for the baseline, a failed
            run, a batch without a baseline, or a failed comparison.
        comparison_failure: Why the comparison failed, if it did.
        gates: The gates checked against the comparison (or, without a baseline,
            the report); None without gates or when they could not be checked.
        gate_failure: Why the gates could not be checked (a slice the gold set
            does not have), if so.
    """

    label: str
    report: Report | None
    failure: ChartscoreError | None
    baseline: bool = False
    comparison: Comparison | None = None
    comparison_failure: ChartscoreError | None = None
    gates: GateResults | None = None
    gate_failure: ChartscoreError | None = None

    @property
    def failed(self) -> bool:
        """Whether anything of this run failed: scoring, comparison or the gate check."""
        return any(
            problem is not None
            for problem in (self.failure, self.comparison_failure, self.gate_failure)
        )


@attrs.frozen
class Batch:
    """A finished batch: every run in label order, and the ledger lines it appended.

    Attributes:
        runs: The runs, sorted by label.
        baseline: The baseline's label, or None.
        entries: The ledger entries appended, in file order.
        skipped: How many matched files were inputs of the batch, not runs.
        gated: Whether gates were checked.
    """

    runs: tuple[BatchRun, ...]
    baseline: str | None
    entries: tuple[LedgerEntry, ...]
    skipped: int = 0
    gated: bool = False

    @property
    def exit_status(self) -> int:
        """1 if any run failed; else 3 if a required gate failed; else 0."""
        if any(run.failed for run in self.runs):
            return EXIT_RUN_FAILED
        if any(
            run.gates is not None and run.gates.exit_status == EXIT_REQUIRED_GATE_FAILED
            for run in self.runs
        ):
            return EXIT_REQUIRED_GATE_FAILED
        return EXIT_OK

    def summary(self) -> str:
        """The summary table ``chartscore batch`` prints; ends with a line end."""
        return _summary(self)


def batch_files(
    gold: InputPath,
    predictions: str | Sequence[InputPath],
    *,
    ledger: InputPath,
    key: LedgerKey,
    baseline: str | None = None,
    gates: Sequence[Gate] = (),
    schema: Schema | InputPath | None = None,
    jobs: int = 1,
    extra_predictions: ExtraPredictions = "error",
    inputs: Sequence[InputPath | None] = (),
    time: datetime.datetime | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    appended: Appended | None = None,
) -> Batch:
    """Score many prediction files against one gold file; record every run in the ledger.

    Args:
        gold: The gold file (a path: it is read more than once).
        predictions: A glob pattern (expanded here) or a list of prediction files.
        ledger: The ledger file to append to (created with mode 0600).
        key: The ledger key.
        baseline: The label of the run every other run is compared with.
        gates: Gates checked against each comparison (without a baseline: each
            report; then a difference rule is refused).
        schema: A :class:`Schema` or a schema file.
        jobs: How many runs are scored at once, each in a forked process
            (1: one after another, in this process).
        extra_predictions: As for :func:`chartscore.score_files`.
        inputs: Other files of the command (a gates file, the ledger key file): never
            runs, never the ledger.
        time: The ledger lines' time (default: when each is written).
        confidence: The level of every interval, as for :func:`chartscore.score`.
        appended: Set once the batch's lines are in the ledger (all of them: one
            locked write), before a Ctrl-C held back meanwhile can stop this
            function: a caller it stops can tell whether the runs were recorded.

    Returns:
        The :class:`Batch`; its ``exit_status`` is 0, 1 (a run failed) or 3 (a
        required gate failed).

    Raises:
        ChartscoreError: ``no_part_files (predictions)`` when nothing matches;
            ``invalid_run_label`` / ``duplicate_run_label (predictions part N)``
            naming a file by its position in sorted order; ``unknown_baseline``;
            ``gate_needs_comparison`` for a difference rule without a baseline;
            every gold and schema code (before any run is scored); the ledger's
            codes (:func:`chartscore.io.ledger_file.append_lines`: nothing of the
            batch is recorded when appending fails).
    """
    check_options(extra_predictions, False)
    confidence_option(confidence)
    gates = _gates(gates)
    listed = caller_items(inputs)
    if listed is None or type(jobs) is not int or jobs < 1:
        raise ChartscoreError(ErrorCode.USAGE)
    if baseline is not None and type(baseline) is not str:
        raise ChartscoreError(ErrorCode.UNKNOWN_BASELINE)
    inputs = listed  # type: ignore[assignment]
    if baseline is None and any(gate.is_difference for gate in gates):
        raise ChartscoreError(ErrorCode.GATE_NEEDS_COMPARISON, input=InputKind.GATES)
    schema_path = None if schema is None or type(schema) is Schema else cast(InputPath, schema)
    others = (gold, schema_path, ledger, *inputs)
    paths, skipped = _run_files(predictions, others)
    labels = _labels(paths)
    if baseline is not None and baseline not in labels:
        raise ChartscoreError(ErrorCode.UNKNOWN_BASELINE)
    check_ledger(ledger, inputs=(gold, schema_path, *paths, *inputs))
    resolved = resolve_schema(schema)
    before = gold_state(gold)
    checker = Scorer(resolved, extra_predictions=extra_predictions)
    identity = _gold_identity(gold, key, checker, paths)
    checker.close_gold()
    gold_identity = identity.digest()
    del checker

    def score_task(path: InputPath) -> Callable[[], str]:
        def task() -> str:
            report = score_files(
                gold,
                path,
                schema=resolved,
                extra_predictions=extra_predictions,
                confidence=confidence,
            )
            return report.to_json()

        return task

    scored = run_tasks([score_task(path) for path in paths], jobs)
    reports = [None if text is None else Report.from_json(text) for text, _ in scored]
    base_index = None if baseline is None else labels.index(baseline)
    compared: dict[int, tuple[Comparison | None, ChartscoreError | None]] = {}
    if base_index is not None and reports[base_index] is not None:
        base_path = paths[base_index]

        def compare_task(path: InputPath) -> Callable[[], str]:
            def task() -> str:
                return compare_files(
                    gold,
                    base_path,
                    path,
                    schema=resolved,
                    extra_predictions=extra_predictions,
                    confidence=confidence,
                ).to_json()

            return task

        candidates = [
            i for i, report in enumerate(reports) if report is not None and i != base_index
        ]
        outcomes = run_tasks([compare_task(paths[i]) for i in candidates], jobs)
        for index, (text, failure) in zip(candidates, outcomes, strict=True):
            compared[index] = (None if text is None else Comparison.from_json(text), failure)
    if file_state(gold) != before:
        raise ChartscoreError(ErrorCode.LEDGER_GOLD_CHANGED, input=InputKind.GOLD)
    runs = []
    for index, label in enumerate(labels):
        report, failure = reports[index], scored[index][1]
        comparison, comparison_failure = compared.get(index, (None, None))
        document = comparison if baseline is not None else report
        checked, gate_failure = _check_gates(document, gates)
        runs.append(
            BatchRun(
                label,
                report,
                failure,
                baseline=index == base_index,
                comparison=comparison,
                comparison_failure=comparison_failure,
                gates=checked,
                gate_failure=gate_failure,
            )
        )
    entries = _entries(
        runs,
        baseline=baseline,
        gold_identity=gold_identity,
        key=key,
        schema=resolved,
        time=time,
        confidence=confidence,
    )
    lines = [entry.to_line() for entry in entries]
    every = (gold, schema_path, *paths, *inputs)
    append_lines(ledger, lines, inputs=every, appended=appended)
    return Batch(tuple(runs), baseline, tuple(entries), skipped, gated=bool(gates))


def _gold_identity(
    gold: InputPath, key: LedgerKey, checker: Scorer, paths: Sequence[str]
) -> GoldIdentity:
    # The gold file's keyed identity, checked as score checks it; a failure on line 1 gets the
    # hint score gives (a CSV, a report or strata file, the predictions swapped), decided from
    # the shape of the first records only, and is raised outside the handler.
    failure: ChartscoreError | None = None
    try:
        return gold_file_identity(gold, key, also=checker.add_gold)
    except ChartscoreError as error:
        failure = error
    if failure.line != 1:
        raise failure
    gold_where = input_path(gold, InputKind.GOLD)  # gold_file_identity read its line 1
    runs = [(path, InputKind.PREDICTIONS) for path in paths]
    raise explained(failure, [(gold_where, InputKind.GOLD), *runs])


def _gates(gates: object) -> tuple[Gate, ...]:
    items = caller_items(gates)
    if items is None or any(type(gate) is not Gate for gate in items):
        raise ChartscoreError(ErrorCode.USAGE)
    return items  # type: ignore[return-value]


def _run_files(predictions: object, others: Sequence[InputPath | None]) -> tuple[list[str], int]:
    """The prediction files, sorted, without the batch's own inputs; and how many those were."""
    if type(predictions) is str:
        found = glob.glob(predictions)
    else:
        items = caller_items(predictions)
        if items is None:
            raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=InputKind.PREDICTIONS)
        found = []
        for item in items:
            where = input_path(item, InputKind.PREDICTIONS)
            if isinstance(where, StandardInput):
                raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.PREDICTIONS)
            found.append(where)
    own = {identity(where) for where in _paths(others)} - {None}
    paths = sorted(set(found))
    kept = [path for path in paths if identity(path) not in own]
    if not kept:
        raise ChartscoreError(ErrorCode.NO_PART_FILES, input=InputKind.PREDICTIONS)
    return kept, len(paths) - len(kept)


def _paths(items: Sequence[InputPath | None]) -> list[str]:
    found = []
    for item in items:
        if item is None:
            continue
        where = input_path_or_none(item, InputKind.PREDICTIONS)
        if where is not None and not isinstance(where, StandardInput):
            found.append(where)
    return found


def _labels(paths: Sequence[str]) -> list[str]:
    labels: list[str] = []
    for part, path in enumerate(paths, start=1):
        label = run_label(path)
        if label is None:
            raise ChartscoreError(
                ErrorCode.INVALID_RUN_LABEL, input=InputKind.PREDICTIONS, part=part
            )
        if label in labels:
            raise ChartscoreError(
                ErrorCode.DUPLICATE_RUN_LABEL, input=InputKind.PREDICTIONS, part=part
            )
        labels.append(label)
    return labels


def _check_gates(
    document: Report | Comparison | None, gates: tuple[Gate, ...]
) -> tuple[GateResults | None, ChartscoreError | None]:
    if document is None or not gates:
        return None, None
    failure: ChartscoreError | None = None
    try:
        return evaluate(document, gates), None
    except ChartscoreError as error:
        failure = error
    return None, failure


def _entries(
    runs: Sequence[BatchRun],
    *,
    baseline: str | None,
    gold_identity: str,
    key: LedgerKey,
    schema: Schema | None,
    time: datetime.datetime | None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[LedgerEntry]:
    common = {"gold_identity": gold_identity, "key": key, "schema": schema, "time": time}
    entries = []
    # Every run's report (or why scoring failed), then every run's comparison (or why it
    # failed) with the baseline it was compared with.
    for kind, versus in (("score", None), ("compare", baseline)):
        for run in runs:
            document = run.report if kind == "score" else run.comparison
            failure = run.failure if kind == "score" else run.comparison_failure
            if document is not None:
                entries.append(
                    ledger_entry(document, system=run.label, versus=versus, **common)  # type: ignore[arg-type]
                )
            elif failure is not None:
                entries.append(
                    failed_entry(
                        failure,
                        kind=kind,
                        system=run.label,
                        versus=versus,
                        confidence=confidence,
                        **common,  # type: ignore[arg-type]
                    )
                )
    return entries


# --- the summary ------------------------------------------------------------------


def _summary(batch: Batch) -> str:
    scored = [run for run in batch.runs if run.report is not None]
    failed = [run for run in batch.runs if run.failed]
    head = (
        f"chartscore batch: {len(batch.runs):,} run{'s' if len(batch.runs) != 1 else ''}, "
        f"{len(scored):,} scored, {len(batch.runs) - len(scored):,} failed"
    )
    if batch.baseline is not None:
        head += f"; baseline {batch.baseline}"
    lines = [head]
    if batch.skipped:
        lines.append(
            f"{batch.skipped:,} matched file{'s' if batch.skipped != 1 else ''} skipped: "
            "an input of the batch (gold, schema, gates, ledger or its key), not a run"
        )
    if scored:
        lines += ["", *_scored_table(batch)]
    if failed:
        lines += ["", "Failed runs", *_failed_table(failed)]
    lines += ["", _verdict(batch)]
    return "\n".join(lines) + "\n"


def _scored_table(batch: Batch) -> list[str]:
    note = (
        f"{COMPARED_METRIC.replace('_', ' ')}, overall: successes/trials, rate, [case-clustered "
        "interval]"
    )
    headings = ["status", "normalized agreement"]
    if batch.baseline is not None:
        note += f"; difference: the run minus {batch.baseline}, paired, in points"
        headings.append(f"difference vs {batch.baseline}")
    if batch.gated:
        headings.append("gates")
    rows = []
    for run in batch.runs:
        if run.report is None:
            continue
        metric = run.report.overall.metrics[COMPARED_METRIC]
        cells: list[Cell] = [
            "baseline" if run.baseline else "scored",
            overall_rate(metric, COMPARED_METRIC),
        ]
        if batch.baseline is not None:
            cells.append(
                ""
                if run.comparison is None
                else difference_estimate(run.comparison.overall.paired[COMPARED_METRIC])
            )
        if batch.gated:
            cells.append(_gate_text(run))
        rows.append(Row("field", run.label, tuple(cells)))
    table = Table(
        key="batch",
        title="",
        note=note,
        label_heading="run",
        columns=tuple(Column(heading) for heading in headings),
        rows=tuple(rows),
    )
    return [*textwrap.wrap(note + ".", WIDTH, break_on_hyphens=False), *table_lines(table)]


def _gate_text(run: BatchRun) -> str:
    if run.gates is None:
        return "-"
    failed_required = sum(1 for r in run.gates.results if r.gate.required and not r.passed)
    failed_warning = sum(1 for r in run.gates.results if not r.gate.required and not r.passed)
    if failed_required:
        return f"FAIL ({failed_required} required)"
    return f"pass ({failed_warning} warning)" if failed_warning else "pass"


def _failed_table(runs: Sequence[BatchRun]) -> list[str]:
    rows = []
    for run in runs:
        for step, problem in (
            ("scoring", run.failure),
            ("comparison", run.comparison_failure),
            ("gates", run.gate_failure),
        ):
            if problem is not None:
                rows.append(Row("field", run.label, (step, str(problem))))
    table = Table(
        key="failed",
        title="",
        note="",
        label_heading="run",
        columns=(Column("step"), Column("error")),
        rows=tuple(rows),
    )
    return table_lines(table)


def _verdict(batch: Batch) -> str:
    status = batch.exit_status
    lines = f"{len(batch.entries):,} ledger line{'s' if len(batch.entries) != 1 else ''} appended"
    if status == EXIT_RUN_FAILED:
        return f"batch FAILED: a run failed (exit 1); {lines}"
    if status == EXIT_REQUIRED_GATE_FAILED:
        return f"batch FAILED: a required gate failed (exit 3); {lines}"
    passed = "; every required gate passed" if batch.gated else ""
    return f"batch passed: every run scored{passed} (exit 0); {lines}"
