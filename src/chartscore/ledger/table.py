"""``chartscore ledger show``: the runs of a ledger side by side, never mixed silently.

For each gold set (the same keyed gold identity under the same key), one table per
kind of run: scored runs, shared runs, comparisons, and the runs that failed. Rows
are runs (the latest line of each, or every line with ``every_line``), sorted by run
id; the cells are the overall slice's headline figures, with the case-clustered
interval of the pooled slice.

Runs scored under different configurations (chartscore version, code hash, schema
digest, confidence level, minimum cell) are **not put side by side**: each
configuration gets tables of its own, headed by what it is. ``mixed=True``
(``--mixed``) puts them in one table with a ``config`` column that flags each row's
configuration, and a legend that says in what they differ.

Value-free, inside-only text: run ids and labels, times, digests' first digits and
figures of full reports.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Final

import attrs

from chartscore.documents.comparison import Comparison, PairedMetricResult
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport
from chartscore.documents.tally import ERROR_METRICS
from chartscore.errors import ChartscoreError, ErrorCode, flag_option
from chartscore.ledger.entry import FAILED, Setup
from chartscore.ledger.runs import (
    GoldSet,
    Ledger,
    LedgerAdjudication,
    LedgerRun,
    gold_sets,
    setups,
)
from chartscore.render.comparison_view import paired_difference
from chartscore.render.report_view import rate_estimate
from chartscore.render.table import WIDTH, table_lines
from chartscore.render.view import Cell, Column, Estimate, Row, Table

HEADLINE_METRICS: Final = ("normalized_agreement", "abstention_correctness", "unanswerable_answer")
"""The overall figures a row of scored or shared runs shows."""
COMPARED_METRIC: Final = "normalized_agreement"
"""The paired metric a row of comparisons shows."""
INSIDE_ONLY: Final = (
    "INSIDE ONLY: the ledger holds full reports and keyed gold identities; keep it, and"
    " this table, inside the protected environment."
)
_DIGITS: Final = 12  # how much of a digest is shown
_SECTIONS: Final = (("score", "Scored runs"), ("share", "Shared runs"), ("compare", "Comparisons"))
_ROW_SLICE: Final = "field"  # a row label is shown as given, like a field id


def ledger_table(ledger: Ledger, *, mixed: bool = False, every_line: bool = False) -> str:
    """The text of ``chartscore ledger show``; ends with a line end.

    Args:
        ledger: The ledger, read back.
        mixed: Put runs of different configurations in one table, flagged.
        every_line: Show every line, not only the latest line of each run.

    Raises:
        ChartscoreError: ``usage`` for a ``ledger`` that is not a :class:`Ledger`, or
            flags that are not exactly ``True`` or ``False``.
    """
    if type(ledger) is not Ledger:
        raise ChartscoreError(ErrorCode.USAGE)
    mixed, every_line = flag_option(mixed), flag_option(every_line)
    runs = ledger.runs if every_line else ledger.latest()
    groups = gold_sets(runs)
    shown = "every line" if every_line else f"{ledger.superseded():,} superseded by a later line"
    read = len(ledger.runs) + len(ledger.adjudications)
    lines = [
        f"chartscore ledger: {_plural(len(runs), 'run')} on {_plural(len(groups), 'gold set')}"
        f" ({_plural(read, 'line')} read, {shown})",
        *_wrapped(INSIDE_ONLY),
    ]
    if ledger.damaged:
        lines += _wrapped(f"damaged lines skipped: {_line_list(ledger.damaged)}")
    numbers = {gold_set: number for number, (gold_set, _) in enumerate(groups, start=1)}
    for number, (gold_set, members) in enumerate(groups, start=1):
        block = _gold_set_lines(number, gold_set, members, mixed=mixed)
        block[0] += _made_from(gold_set, ledger.adjudications, numbers)
        lines += ["", *block]
    if ledger.adjudications:
        lines += ["", *_adjudication_lines(ledger.adjudications, numbers)]
    return "\n".join(lines) + "\n"


def _gold_set_name(gold_set: GoldSet, numbers: dict[GoldSet, int]) -> str:
    number = numbers.get(gold_set)
    return f"{_short(gold_set[1])} (no runs)" if number is None else f"gold set {number}"


def _made_from(
    gold_set: GoldSet, links: Sequence[LedgerAdjudication], numbers: dict[GoldSet, int]
) -> str:
    """``, adjudicated from ...`` when a line made this gold set from another (the last such)."""
    made = [link for link in links if link.gold_sets[1] == gold_set]
    if not made:
        return ""
    return f", adjudicated from {_gold_set_name(made[-1].gold_sets[0], numbers)}"


def _adjudication_lines(
    links: Sequence[LedgerAdjudication], numbers: dict[GoldSet, int]
) -> list[str]:
    """The section of gold versions: one paragraph per adjudication line, in file order."""
    lines = ["Gold versions (chartscore import adjudication)"]
    for link in links:
        entry = link.entry
        old, new = link.gold_sets
        counts = entry.counts
        how = ", ".join(
            f"{counts[name]:,} {name.replace('_', ' ')}"
            for name in ("value_changed", "now_unanswerable", "now_answerable")
            if counts[name]
        )
        by_type = ", ".join(f"{count:,} {name}" for name, count in entry.changed_by_type.items())
        text = (
            f"line {link.line}, {_time(entry.time)}: {_gold_set_name(new, numbers)} "
            f"adjudicated from {_gold_set_name(old, numbers)} (key {entry.key_id}), "
            f"chartscore {entry.scorer_version}: {_plural(counts['worklist_rows'], 'worklist row')}"
            f", {counts['changed']:,} changed"
            + (f" ({how}; by type: {by_type})" if how else "")
            + f", {counts['confirmed']:,} confirmed, {counts['blank']:,} left blank; "
            f"{_plural(counts['gold_rows'], 'gold row')}"
        )
        lines += _wrapped(text)
    return lines


def mixed_gold_sets(ledger: Ledger, *, every_line: bool = False) -> int:
    """How many gold sets hold runs of one kind under more than one configuration."""
    if type(ledger) is not Ledger:
        raise ChartscoreError(ErrorCode.USAGE)
    runs = ledger.runs if flag_option(every_line) else ledger.latest()
    return sum(bool(_mixed_sections(members)) for _, members in gold_sets(runs))


def _sections(runs: list[LedgerRun]) -> list[tuple[str, str, list[LedgerRun]]]:
    """(kind, title, scored runs of that kind sorted by run id) for each kind present."""
    found = []
    for kind, title in _SECTIONS:
        members = sorted(
            (r for r in runs if r.entry.kind == kind and r.entry.status != FAILED), key=_order
        )
        if members:
            found.append((kind, title, members))
    return found


def _mixed_sections(runs: list[LedgerRun]) -> list[list[Setup]]:
    """The configurations of each kind of scored run that has more than one.

    Only runs of one kind are ever side by side (a shared run's ``min_cell`` does not
    mix it with scored runs), and a failed run has no figures to compare.
    """
    found = [setups(members) for _, _, members in _sections(runs)]
    return [configurations for configurations in found if len(configurations) > 1]


def _gold_set_lines(
    number: int, gold_set: GoldSet, runs: list[LedgerRun], *, mixed: bool
) -> list[str]:
    key_id, identity = gold_set
    rows = _gold_rows(runs)
    lines = [
        f"gold set {number}: {_short(identity)} (key {key_id})"
        + ("" if rows is None else f", {rows:,} gold rows")
    ]
    configurations = setups(runs)
    for index, setup in enumerate(configurations, start=1):
        lines.append(f"configuration {index}: {_describe(setup)}")
    mixing = _mixed_sections(runs)
    for found in mixing:
        first = configurations.index(found[0]) + 1
        for setup in found[1:]:
            differences = ", ".join(found[0].differences(setup))
            lines.append(
                f"configuration {configurations.index(setup) + 1} differs from {first} in: "
                f"{differences}"
            )
    if mixing:
        lines.append(
            "mixed configurations: put side by side, flagged in the config column (--mixed)"
            if mixed
            else "mixed configurations: shown apart; --mixed puts them side by side, flagged"
        )
    flags = configurations if len(configurations) > 1 else None
    for kind, title, members in _sections(runs):
        here = setups(members)
        if mixed or len(here) == 1:
            suffix = "" if flags is None or len(here) > 1 else _configuration(flags, here[0])
            lines += ["", title + suffix]
            lines += _section(kind, members, flags if len(here) > 1 else None)
            continue
        for setup in here:
            lines += ["", title + _configuration(configurations, setup)]
            lines += _section(kind, [r for r in members if r.entry.setup == setup], None)
    failed = sorted((r for r in runs if r.entry.status == FAILED), key=_order)
    if failed:
        lines += ["", "Failed runs"]
        lines += _failed(failed, flags)
    return lines


def _configuration(configurations: Sequence[Setup], setup: Setup) -> str:
    return f" (configuration {configurations.index(setup) + 1})"


def _order(run: LedgerRun) -> tuple[str, int]:
    return (run.entry.run_id, run.line)


def _gold_rows(runs: list[LedgerRun]) -> int | None:
    for run in runs:
        document = run.entry.result
        if document is not None:
            count = document.overall.counts.get("field_count")
            if count is not None:
                return count
    return None


def _describe(setup: Setup) -> str:
    schema = "no schema" if setup.schema_digest is None else f"schema {_short(setup.schema_digest)}"
    text = (
        f"chartscore {setup.scorer_version}, code {_short(setup.code_hash)}, {schema}, "
        f"{_percent(setup.confidence)} intervals"
    )
    return text if setup.min_cell is None else f"{text}, min cell {setup.min_cell}"


def _section(kind: str, runs: list[LedgerRun], flags: Sequence[Setup] | None) -> list[str]:
    confidences = {run.entry.setup.confidence for run in runs}
    level = _percent(confidences.pop()) if len(confidences) == 1 else "each row's"
    if kind == "compare":
        note = (
            f"{COMPARED_METRIC.replace('_', ' ')}, overall: each system's successes/trials, "
            f"rate, [{level} case-clustered interval]; the difference, candidate minus "
            "baseline (the run id: candidate.vs.baseline), in points, with its paired clustered "
            "interval."
        )
        headings: tuple[str, ...] = ("time (UTC)", "baseline", "candidate", "difference")
    else:
        note = (
            f"Overall: successes/trials (errors/trials for {_error_names()}), rate, "
            f"[{level} case-clustered interval]; rates in percent."
        )
        headings = ("time (UTC)", *(m.replace("_", " ") for m in HEADLINE_METRICS))
    named = kind != "compare" and _named(runs)
    if named:
        headings = ("system", *headings)
    rows = [_row(run, flags, named=named) for run in runs]
    columns = [Column(heading) for heading in headings]
    if flags is not None:
        columns.insert(0, Column("config"))
    table = Table(
        key=kind,
        title="",
        note=note,
        label_heading="run",
        columns=tuple(columns),
        rows=tuple(rows),
        repeat=0,
        cut_labels=True,
    )
    return [*_wrapped(note), *table_lines(table)]


def _named(runs: Sequence[LedgerRun]) -> bool:
    """Whether a system column is needed: some run's id is not its system's label."""
    return any(run.entry.system != run.entry.run_id for run in runs)


def _row(run: LedgerRun, flags: Sequence[Setup] | None, *, named: bool = False) -> Row:
    entry = run.entry
    document = entry.result
    cells: list[Cell] = []
    if flags is not None:
        cells.append(str(flags.index(entry.setup) + 1))
    if type(document) is Comparison:
        paired = document.overall.paired[COMPARED_METRIC]
        cells.append(_time(entry.time))
        cells += [
            overall_rate(paired.baseline, COMPARED_METRIC),
            overall_rate(paired.candidate, COMPARED_METRIC),
            difference_estimate(paired),
        ]
    else:
        assert type(document) is Report or type(document) is SharedReport
        cells += [entry.system, _time(entry.time)] if named else [_time(entry.time)]
        cells += [
            overall_rate(document.overall.metrics[metric], metric) for metric in HEADLINE_METRICS
        ]
    return Row(_ROW_SLICE, entry.run_id, tuple(cells))


def overall_rate(result: object, metric: str) -> Estimate:
    """A pooled slice's metric as an estimate with its case-clustered interval (if any)."""
    estimate = rate_estimate("overall", "", metric, result)  # type: ignore[arg-type]
    clustered = getattr(result, "clustered_interval", None)
    if clustered is None or estimate.suppressed:
        return estimate
    low, high = clustered
    return attrs.evolve(estimate, lower=low, upper=high)


def difference_estimate(paired: PairedMetricResult) -> Estimate:
    """A paired difference, candidate minus baseline, with its clustered interval (if any)."""
    estimate = paired_difference("overall", "", COMPARED_METRIC, paired, None)
    clustered = paired.clustered_interval
    if clustered is None:
        return estimate
    low, high = clustered
    return attrs.evolve(estimate, lower=low, upper=high)


def _failed(runs: list[LedgerRun], flags: Sequence[Setup] | None) -> list[str]:
    named = _named(runs)
    rows = []
    for run in runs:
        entry = run.entry
        assert entry.problem is not None
        cells: list[Cell] = [] if flags is None else [str(flags.index(entry.setup) + 1)]
        cells += [entry.system] if named else []
        cells += [entry.kind, _time(entry.time), str(entry.problem.error())]
        rows.append(Row(_ROW_SLICE, entry.run_id, tuple(cells)))
    headings: tuple[str, ...] = ("kind", "time (UTC)", "error")
    if named:
        headings = ("system", *headings)
    columns = tuple(Column(h) for h in (("config", *headings) if flags is not None else headings))
    table = Table(
        key="failed",
        title="",
        note="",
        label_heading="run",
        columns=columns,
        rows=tuple(rows),
        cut_labels=True,
    )
    return table_lines(table)


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def _error_names() -> str:
    return ", ".join(m.replace("_", " ") for m in HEADLINE_METRICS if m in ERROR_METRICS)


def _time(text: str) -> str:
    return text[:10] + " " + text[11:16]  # YYYY-MM-DD HH:MM


def _short(digest: str) -> str:
    name, _, hexdigits = digest.partition(":")
    return f"{name}:{hexdigits[:_DIGITS]}"


def _percent(confidence: float) -> str:
    return f"{100 * confidence:g}%"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _line_list(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:20])
    return shown + (f" and {len(numbers) - 20:,} more" if len(numbers) > 20 else "")
