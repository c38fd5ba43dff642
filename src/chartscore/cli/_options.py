"""Options and steps that several commands share: inputs, output, progress, gates, scoring."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, Protocol, TypeVar

from chartscore.cli._command import (
    PROGRAM,
    STANDARD_STREAM,
    Option,
    UsageError,
    min_cell_number,
    output_file,
)
from chartscore.cli._streams import Streams, is_terminal, say
from chartscore.cli.progress import TerminalProgress
from chartscore.documents import Document
from chartscore.documents.agreement import Agreement
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import Gate, evaluate
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_disclosure import check_min_cell
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.output import check_output, check_outputs, write_output
from chartscore.io.strata_file import load_strata
from chartscore.records.schema import Schema
from chartscore.render import AXES, FORMATS, render
from chartscore.render.junit import JUnitSuite, junit_xml
from chartscore.scoring.scorer import ExtraPredictions

GOLD: Final = Option("--gold", "gold JSON Lines file", "FILE", required=True, reads_input=True)
PREDICTIONS: Final = Option(
    "--predictions", "predictions JSON Lines file", "FILE", required=True, reads_input=True
)
EXTRA_PREDICTIONS: Final = Option(
    "--extra-predictions",
    "predictions whose key is not in gold: error (default) or ignore (counted)",
    "{error,ignore}",
    choices=("error", "ignore"),
)
QUIET: Final = Option("--quiet", "no progress on stderr")
JOBS: Final = Option(
    "--jobs",
    "processes: 2 reads predictions while gold loads (default: 2 when 2+ CPUs are free)",
    "{1,2}",
    choices=("1", "2"),
)
STRICT_SCHEMA: Final = Option("--strict-schema", "refuse schema fields that no gold row uses")
SCHEMA: Final = Option(
    "--schema", "field schema (JSON, or TOML if *.toml)", "FILE", reads_input=True
)
STRATA: Final = Option(
    "--strata",
    "case strata (JSON Lines: case_id and {key: label}, declared in the schema's strata)",
    "FILE",
    reads_input=True,
)
GATES: Final = Option(
    "--gates",
    "check these release gates (TOML); their table goes to stderr; exit 3 if a required one fails",
    "FILE",
    reads_input=True,
)
GATE_INTERVAL: Final = Option(
    "--gate-interval",
    "the interval a gate reads on a field slice's rate: wilson (default, the report's) or "
    "exact (Clopper-Pearson: never passes falsely more often than the level says)",
    "KIND",
    choices=("wilson", "exact"),
)
JUNIT: Final = Option(
    "--junit",
    "also write the gates' results here as JUnit XML (atomically), for CI: one test case "
    "per gate; a failed warning gate is skipped",
    "FILE",
)
OUT: Final = Option("--out", "write here (atomically) instead of stdout", "FILE")
CONFIDENCE: Final = Option(
    "--confidence",
    "the level of every interval: 0.90, 0.95 (default) or 0.99",
    "LEVEL",
    choices=("0.90", "0.95", "0.99"),
)
AXIS: Final = Option(
    "--axis",
    "the HTML forest plots' rate and kappa axes: zoom (default: to the data's range, said on "
    "the plot) or full (0-100%%)",
    "{zoom,full}",
    choices=AXES,
)
OUTPUT_FORMATS: Final = ("json", *FORMATS)
GATE_OPTIONS: Final = (GATES, GATE_INTERVAL, JUNIT)
"""The release gates of a command that writes a document (score, compare, merge)."""


def format_option(what: str) -> Option:
    """``--format`` for a command that prints JSON by default (a summary on a terminal)."""
    return Option(
        "--format",
        f"{what}: json (canonical; the default, but summary when stdout is a terminal), "
        "table, markdown, csv, html or summary",
        "FORMAT",
        choices=OUTPUT_FORMATS,
    )


def document_options(what: str) -> tuple[Option, ...]:
    """Where a command's document goes and in which form: ``--out``, ``--format``, ``--axis``."""
    return (OUT, format_option(what), AXIS)


def document_format(args: argparse.Namespace, streams: Streams, out: str | None) -> str:
    """``--format``, or when not given: ``summary`` for a terminal's stdout, else ``json``.

    A pipe, a redirect and ``--out FILE`` get the canonical JSON, byte for byte as ever.
    """
    chosen: str | None = args.format
    if chosen is not None:
        return chosen
    return "summary" if out is None and streams.terminal else "json"


def document_text(
    document: Document,
    fmt: str,
    *,
    gates: Sequence[Gate] | None = None,
    interval: str | None = None,
    date: str | None = None,
    axis: str | None = None,
    schema: Schema | None = None,
) -> str:
    """The document in ``fmt``: canonical JSON and a line end, or rendered for people.

    A summary lists the verdicts of ``gates`` (checked as :func:`gate_status` checks
    them, ``interval`` being ``--gate-interval``), and a comparison's header gives
    them in every format; the formats draw a comparison's difference gates as
    margins. ``date``: the date a comparison's header shows; ``axis``: ``--axis``;
    ``schema``: its ``choice_labels`` name the choices in a report's label rows.
    """
    if fmt == "json":
        return document.to_json() + "\n"
    verdicts = None
    if gates is not None and (
        fmt == "summary" or isinstance(document, Comparison | SharedComparison)
    ):
        verdicts = evaluate(document, gates, interval=interval or "wilson")
    return render(
        document,
        fmt,
        gates=gates or (),
        verdicts=verdicts,
        date=date,
        axis=axis or "zoom",
        choice_labels=None if schema is None else schema.choice_labels(),
    )


def output_target(value: str | None, inputs: Sequence[InputPath | None]) -> str | None:
    """The ``--out`` target (None: stdout), checked before any work: never an input."""
    out = None if value in (None, STANDARD_STREAM) else value
    if out is not None:
        check_output(out, inputs=inputs)
    return out


def output_targets(
    args: argparse.Namespace, inputs: Sequence[InputPath | None], command: str
) -> tuple[str | None, str | None]:
    """``--out`` and ``--partial-out``'s targets (as :func:`output_target`): the partial goes
    to a file of its own, never stdout nor the report's file.

    Raises:
        UsageError: ``--partial-out -``.
        ChartscoreError: ``duplicate_output``: ``--out``'s file, by any spelling or link.
    """
    out = output_target(args.out, inputs)
    partial_out = output_target(output_file(args.partial_out, "--partial-out", command), inputs)
    check_outputs([path for path in (out, partial_out) if path is not None], inputs=inputs)
    return out, partial_out


def progress_line(args: argparse.Namespace, streams: Streams) -> TerminalProgress | None:
    """A progress line on a terminal's stderr, unless ``--quiet``."""
    if not args.quiet and streams.err is not None and is_terminal(streams.err):
        return TerminalProgress(streams.err)
    return None


@contextlib.contextmanager
def progress_shown(
    args: argparse.Namespace, streams: Streams, *, shown: bool = True
) -> Iterator[TerminalProgress | None]:
    """:func:`progress_line` (None when not ``shown``) for one step, ended however it ends."""
    progress = progress_line(args, streams) if shown else None
    try:
        yield progress
    finally:
        if progress is not None:
            progress.finish()


def parallel(args: argparse.Namespace) -> bool:
    """Whether to read predictions in a second process (``--jobs``, default: 2+ CPUs)."""
    jobs = int(args.jobs) if args.jobs is not None else min(2, _available_cpus())
    return jobs > 1


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Scored(Protocol):
    """What a files-level scorer returns: a document with per-field results."""

    @property
    def by_field(self) -> Mapping[str, object]: ...


_T = TypeVar("_T", bound=Scored)


def score_inputs(
    args: argparse.Namespace,
    streams: Streams,
    scorer: Callable[..., _T],
    *,
    gold: InputPath,
    predictions: InputPath,
    schema: Schema | None,
    shown: bool = True,
) -> _T:
    """``score`` and ``share``'s scoring step, with every option they share.

    Shows progress (when ``shown`` and on a terminal; always ended), calls ``scorer``
    (``score_files``, ``share_files`` or the same signature) with the loaded schema,
    then warns of schema fields that no gold row used.
    """
    strata_path = strata_input(args)
    with progress_shown(args, streams, shown=shown) as progress:
        result = scorer(
            gold,
            predictions,
            schema=schema,
            strata=None if strata_path is None else load_strata(strata_path, schema),
            progress=progress,
            parallel=parallel(args),
            extra_predictions=extra_predictions(args),
            strict_schema=args.strict_schema,
            confidence=confidence(args),
        )
    if schema is not None:
        _warn_unused_schema_fields(sorted(set(schema.fields) - set(result.by_field)), streams)
    return result


def strata_input(args: argparse.Namespace) -> InputPath | None:
    """``--strata``'s file (None when not given, or for a command without the option)."""
    given: str | None = getattr(args, "strata", None)
    if given is None:
        return None
    return STDIN if given == STANDARD_STREAM else given


def confidence(args: argparse.Namespace) -> float:
    """``--confidence`` as a level (0.9, 0.95 or 0.99); 0.95 when not given."""
    chosen: str | None = getattr(args, "confidence", None)
    return 0.95 if chosen is None else float(chosen)


def extra_predictions(args: argparse.Namespace) -> ExtraPredictions:
    """``--extra-predictions``, default ``error``."""
    chosen: ExtraPredictions = args.extra_predictions or "error"
    return chosen


_MAX_UNUSED_SHOWN: Final = 20


def _warn_unused_schema_fields(unused: list[str], streams: Streams) -> None:
    # Field ids are developer-authored schema names (validated by the schema), never data.
    for field_id in unused[:_MAX_UNUSED_SHOWN]:
        say(
            streams.err,
            f"{PROGRAM}: warning: schema field {field_id} is not in the gold file "
            "(a typo? --strict-schema makes this an error)\n",
        )
    if len(unused) > _MAX_UNUSED_SHOWN:
        say(streams.err, f"{PROGRAM}: warning: and {len(unused) - _MAX_UNUSED_SHOWN:,} more\n")


def gate_status(
    document: Document | Agreement,
    gates: Sequence[Gate],
    streams: Streams,
    *,
    on_stderr: bool,
    level: float | None = None,
    interval: str | None = None,
    junit: str | None = None,
    junit_name: str = "chartscore",
    inputs: Sequence[InputPath | None] = (),
    checks: Sequence[tuple[str, str]] = (),
) -> int:
    """Check gates, print their table (stderr when stdout holds a report), return the status.

    ``level``: the confidence of the intervals the gates read; None: the document's.
    ``interval``: ``--gate-interval`` (None: ``wilson``). ``junit``: :func:`junit_target`'s
    file, written (atomically, never over one of ``inputs``) with one test suite named
    ``junit_name``, and ``checks`` (a name, and why it failed or ``""``) as required test
    cases after the gates'; the status is the same with or without it.
    """
    results = evaluate(document, gates, confidence=level, interval=interval or "wilson")
    table = results.table()
    if on_stderr:
        say(streams.err, table)
    else:
        write_output(table.encode("utf-8"), None, inputs=(), stdout=streams.out)
    if junit is not None:
        suite = JUnitSuite(junit_name, results, checks=tuple(checks))
        write_output(junit_xml([suite]), junit, inputs=inputs)
    return results.exit_status


def junit_target(
    args: argparse.Namespace,
    inputs: Sequence[InputPath | None],
    command: str,
    *,
    outputs: Sequence[str | None] = (),
) -> str | None:
    """``--junit``'s file (None when not given), checked before any work.

    It must name a file (not ``-``), needs ``--gates``, is never an input, and is not
    another output of the command (``outputs``: ``--out``, ``--partial-out``, a ledger).

    Raises:
        UsageError: ``--junit -``, or ``--junit`` without ``--gates``.
        ChartscoreError: as :func:`~chartscore.io.output.check_outputs`; a folder is
            ``output_unwritable`` with a hint naming ``--junit``.
    """
    value: str | None = getattr(args, "junit", None)
    if value is None:
        return None
    output_file(value, "--junit", command)
    if getattr(args, "gates", None) is None:
        raise UsageError("--junit needs --gates", command)
    if os.path.isdir(value):  # of the command's outputs, say which one: never its path
        raise ChartscoreError(
            ErrorCode.OUTPUT_UNWRITABLE, input=InputKind.OUTPUT, hint=ErrorHint.JUNIT_FOLDER_GIVEN
        )
    others = [out for out in outputs if out is not None]
    return check_outputs([*others, value], inputs=inputs)[-1]


DOCUMENT: Final = Option(
    "report", "a report, shared report or comparison (JSON)", "REPORT", True, reads_input=True
)

REQUIRED_MIN_CELL: Final = Option(
    "--min-cell",
    "fail a document shared at a smaller min cell than N (the reader's own rule)",
    "N",
)


def required_min_cell(value: str | None, command: str) -> int | None:
    """``--min-cell N`` of ``audit`` and ``gate``, checked as ``share --min-cell`` is.

    Raises:
        UsageError: N is not a whole number.
        ChartscoreError: ``invalid_min_cell`` for N outside 2 to 1,000,000.
    """
    if value is None:
        return None
    return check_min_cell(min_cell_number(value, "--min-cell", command))


def declared_min_cell(document: Document | Agreement) -> int | None:
    """The min cell a shared document declares (``disclosure.min_cell``); None if not shared."""
    if isinstance(document, SharedReport | SharedComparison):
        return document.disclosure.min_cell
    return None


def refuse_combined(args: argparse.Namespace, names: Sequence[str], what: str) -> None:
    """A usage error naming the first of ``names`` given (a mode that takes none of them)."""
    given = [name for name in names if getattr(args, name, None) not in (None, False)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{what} cannot be combined with {flag}", "share")
