"""The ``chartscore`` command: JSON Lines in, canonical JSON out, no data on any stream.

Exit status: 0 success; 1 a controlled input, data or output error; 2 a usage
error; 3 a required release gate failed; 4 a shared report failed its audit
(``audit``); 70 an internal error; 130 interrupted by Ctrl-C (129 SIGHUP, 143
SIGTERM). Every failure prints one line on stderr, never content, a path or a
traceback: ``chartscore: error: <code> (<input> line <n>): <what it means>``,
or for usage ``chartscore: error: usage: <what is wrong>; see chartscore
<command> --help``.

Extending it: a command is a :class:`Command` in :data:`COMMANDS`, with its
:class:`Option` declarations and one function ``(args, streams) -> status``.
:func:`build_parser` builds every parser from those declarations, and
:func:`parse_arguments` turns every argument problem into a
:class:`UsageError` from a closed set of messages (required options, values
outside ``choices``, standard input given twice, unknown options and
commands, repeated options). Outputs go through
:func:`chartscore.io.output.write_output`, which refuses to overwrite any
input the command names: pass all of them.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import glob
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, NoReturn, TextIO, TypeVar

from chartscore._version import __version__
from chartscore.cli.progress import TerminalProgress
from chartscore.disclosure.shared import SharedReport
from chartscore.documents import Document
from chartscore.engine import score_dask
from chartscore.errors import ChartscoreError, ErrorCode, describe
from chartscore.gates import Gate, evaluate
from chartscore.io.document_files import load_document_file, load_gates, read_document_bytes
from chartscore.io.inputs import STDIN, InputPath
from chartscore.io.output import BinaryOutput, check_output, write_output
from chartscore.io.schema_file import load_schema
from chartscore.records.schema import Schema
from chartscore.render import FORMATS, SORTS, render
from chartscore.report import Report
from chartscore.scoring.scorer import ExtraPredictions
from chartscore.workflows.compare import compare_files
from chartscore.workflows.demo import demo_summary, run_demo
from chartscore.workflows.score import score_files
from chartscore.workflows.share import DEFAULT_MIN_CELL, share_files

EXIT_OK: Final = 0
EXIT_DATA: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERNAL: Final = 70
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT; SIGTERM and SIGHUP give 128 + their number

PROGRAM: Final = "chartscore"
STANDARD_STREAM: Final = "-"
"""The command-line word for standard input (as an input) or stdout (as ``--out``)."""

_COMMAND_METAVAR: Final = "COMMAND"
# An unknown option is echoed only when it looks like an option name: a typo
# such as --shema, never a value such as --gold=/data/MRN123 or a path.
_OPTION_NAME: Final = re.compile(r"--[a-z][a-z0-9-]{0,40}")
_COMMAND_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,40}")
_NOT_VALID: Final = "the arguments are not valid"


# --- declarations -------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One command-line option, declared once; parsing and checking follow from it.

    Attributes:
        flag: The option, ``--name``.
        help: One line for ``--help``.
        flag: ``--name`` for an option; a plain word (``report``) for a required
            positional argument.
        metavar: The value's name in ``--help``; None for a flag without a value.
        required: Whether the command needs it.
        choices: The only values allowed (checked after parsing, with a fixed message).
        reads_input: The value names an input file, which may be ``-`` (standard
            input); at most one input of a command may be ``-``.
    """

    flag: str
    help: str
    metavar: str | None = None
    required: bool = False
    choices: tuple[str, ...] = ()
    reads_input: bool = False

    @property
    def dest(self) -> str:
        """The attribute name on the parsed arguments."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def positional(self) -> bool:
        """A positional argument (``REPORT``) rather than an option (``--out``)."""
        return not self.flag.startswith("-")


@dataclass(frozen=True)
class Streams:
    """Where a command writes: stdout as bytes, stderr as text (best effort)."""

    out: BinaryOutput | None
    err: TextIO | None


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, help texts, options and the function that runs it."""

    name: str
    help: str
    description: str
    options: tuple[Option, ...]
    run: Callable[[argparse.Namespace, Streams], int]


class UsageError(Exception):
    """An argument problem; ``problem`` is a fixed phrase that never holds a value or path."""

    def __init__(self, problem: str, command: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.command = command

    def line(self) -> str:
        """The one line printed on stderr."""
        help_command = f"{PROGRAM} {self.command} --help" if self.command else f"{PROGRAM} --help"
        return f"{PROGRAM}: error: {ErrorCode.USAGE}: {self.problem}; see {help_command}\n"


# --- the commands -------------------------------------------------------------------


def _score(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore score``: score predictions against gold; print or write the report."""
    on_dask = args.engine == "dask"
    _check_engine_options(args, on_dask)
    gold, predictions = _input(args.gold), _input(args.predictions)
    schema_path = None if args.schema is None else _input(args.schema)
    gates_path = None if args.gates is None else _input(args.gates)
    data: tuple[InputPath, ...] = (gold, predictions)
    if on_dask:  # part files: every file a pattern names is an input
        data = tuple(sorted({*glob.glob(args.gold), *glob.glob(args.predictions)}))
    inputs = (*data, schema_path, gates_path)
    out = _output(args.out, inputs)
    gates = None if gates_path is None else load_gates(gates_path)
    extra: ExtraPredictions = args.extra_predictions or "error"

    def work(schema: Schema | None, progress: TerminalProgress | None) -> Report:
        if on_dask:
            return score_dask(
                args.gold,
                args.predictions,
                schema=schema,
                scheduler=args.scheduler,
                partitions=None if args.partitions is None else int(args.partitions),
                extra_predictions=extra,
                strict_schema=args.strict_schema,
            )
        return score_files(
            gold,
            predictions,
            schema=schema,
            progress=progress,
            parallel=_parallel(args),
            extra_predictions=extra,
            strict_schema=args.strict_schema,
        )

    schema, report = _with_progress(args, streams, schema_path, work, shown=not on_dask)
    if schema is not None:
        _warn_unused_schema_fields(sorted(set(schema.fields) - set(report.by_field)), streams)
    if report.ignored_prediction_count:
        _say(
            streams.err,
            f"{PROGRAM}: {report.ignored_prediction_count:,} predictions whose key is not in "
            "gold were ignored (--extra-predictions ignore)\n",
        )
    fmt = args.format or "json"
    text = report.to_json() + "\n" if fmt == "json" else render(report, fmt)
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    return EXIT_OK if gates is None else _gate_status(report, gates, streams, on_stderr=True)


_PARTITIONS: Final = re.compile(r"[1-9][0-9]{0,6}")


def _check_engine_options(args: argparse.Namespace, on_dask: bool) -> None:
    # Options of one engine given to the other are mistakes worth naming.
    if on_dask:
        if STANDARD_STREAM in (args.gold, args.predictions):
            raise UsageError("--engine dask reads part files, not standard input", "score")
        if args.jobs is not None:
            raise UsageError("--jobs applies to --engine local only", "score")
        if args.partitions is not None and not _PARTITIONS.fullmatch(args.partitions):
            raise UsageError("--partitions must be a whole number from 1", "score")
    elif args.scheduler is not None or args.partitions is not None:
        raise UsageError("--scheduler and --partitions need --engine dask", "score")


def _compare(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore compare``: two systems on the same gold, paired; print or write it."""
    gold, baseline, candidate = _input(args.gold), _input(args.baseline), _input(args.candidate)
    schema_path = None if args.schema is None else _input(args.schema)
    gates_path = None if args.gates is None else _input(args.gates)
    inputs = (gold, baseline, candidate, schema_path, gates_path)
    out = _output(args.out, inputs)
    gates = None if gates_path is None else load_gates(gates_path)
    progress = _progress(args, streams)
    try:
        schema = None if schema_path is None else load_schema(schema_path)
        comparison = compare_files(gold, baseline, candidate, schema=schema, progress=progress)
    finally:
        if progress is not None:
            progress.finish()
    fmt = args.format or "json"
    text = comparison.to_json() + "\n" if fmt == "json" else render(comparison, fmt)
    write_output(text.encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    return EXIT_OK if gates is None else _gate_status(comparison, gates, streams, on_stderr=True)


_MIN_CELL: Final = re.compile(r"[0-9]{1,9}")


def _share(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore share``: score, suppress small cells, self-audit; print or write it."""
    gold, predictions = _input(args.gold), _input(args.predictions)
    schema_path = None if args.schema is None else _input(args.schema)
    if args.min_cell is not None and not _MIN_CELL.fullmatch(args.min_cell):
        raise UsageError("--min-cell must be a whole number", "share")
    min_cell = DEFAULT_MIN_CELL if args.min_cell is None else int(args.min_cell)
    inputs = (gold, predictions, schema_path)
    out = _output(args.out, inputs)
    extra: ExtraPredictions = args.extra_predictions or "error"

    def work(schema: Schema | None, progress: TerminalProgress | None) -> SharedReport:
        def suppressing() -> None:
            if progress is not None:  # a terminal, without --quiet
                progress.finish()
                _say(streams.err, f"{PROGRAM}: suppressing small cells and auditing...\n")

        return share_files(
            gold,
            predictions,
            schema=schema,
            min_cell=min_cell,
            progress=progress,
            parallel=_parallel(args),
            extra_predictions=extra,
            strict_schema=args.strict_schema,
            suppressing=suppressing,
        )

    schema, shared = _with_progress(args, streams, schema_path, work)
    # No ignored-prediction count on stderr, unlike score: it may be a suppressed number.
    if schema is not None:
        _warn_unused_schema_fields(sorted(set(schema.fields) - set(shared.by_field)), streams)
    write_output((shared.to_json() + "\n").encode("utf-8"), out, inputs=inputs, stdout=streams.out)
    _say(
        streams.err,
        f"{PROGRAM}: {shared.disclosure.suppressed_count:,} numbers suppressed "
        f"(min cell {shared.disclosure.min_cell}); the audit passed\n",
    )
    return EXIT_OK


def _audit(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore audit``: an outsider's attack on a shared report; exit 4 if it fails."""
    # scipy (the solver) loads here, for this command only.
    from chartscore.disclosure.attack import audit  # noqa: PLC0415

    document_path = _input(args.shared)
    result = audit(SharedReport.from_json(read_document_bytes(document_path)))
    write_output(result.table().encode("utf-8"), None, inputs=(), stdout=streams.out)
    return result.exit_status


def _gate(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore gate``: check a saved report or comparison against a gates file."""
    document_path, gates_path = _input(args.report), _input(args.gates)
    gates = load_gates(gates_path)
    document = load_document_file(document_path)
    return _gate_status(document, gates, streams, on_stderr=False)


def _render(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore render``: lay out a saved report, shared report or comparison for people."""
    document_path = _input(args.report)
    out = _output(args.out, (document_path,))
    document = load_document_file(document_path)
    text = render(document, args.format, sort=args.sort or "name")
    write_output(text.encode("utf-8"), out, inputs=(document_path,), stdout=streams.out)
    return EXIT_OK


_T = TypeVar("_T")


def _with_progress(
    args: argparse.Namespace,
    streams: Streams,
    schema_path: InputPath | None,
    work: Callable[[Schema | None, TerminalProgress | None], _T],
    *,
    shown: bool = True,
) -> tuple[Schema | None, _T]:
    """Load the schema and run ``work`` with a progress line (if wanted), always ended."""
    progress = _progress(args, streams) if shown else None
    try:
        schema = None if schema_path is None else load_schema(schema_path)
        result = work(schema, progress)
    finally:
        if progress is not None:
            progress.finish()
    return schema, result


def _parallel(args: argparse.Namespace) -> bool:
    """Whether to read predictions in a second process (``--jobs``, default: 2+ CPUs)."""
    jobs = int(args.jobs) if args.jobs is not None else min(2, _available_cpus())
    return jobs > 1


def _output(value: str | None, inputs: Sequence[InputPath | None]) -> str | None:
    """The ``--out`` target (None: stdout), checked before any work: never an input."""
    out = None if value in (None, STANDARD_STREAM) else value
    if out is not None:
        check_output(out, inputs=inputs)
    return out


def _progress(args: argparse.Namespace, streams: Streams) -> TerminalProgress | None:
    if not args.quiet and streams.err is not None and _is_terminal(streams.err):
        return TerminalProgress(streams.err)
    return None


_MAX_UNUSED_SHOWN: Final = 20


def _warn_unused_schema_fields(unused: list[str], streams: Streams) -> None:
    # Field ids are developer-authored schema names (validated by the schema), never data.
    for field_id in unused[:_MAX_UNUSED_SHOWN]:
        _say(
            streams.err,
            f"{PROGRAM}: warning: schema field {field_id} is not in the gold file "
            "(a typo? --strict-schema makes this an error)\n",
        )
    if len(unused) > _MAX_UNUSED_SHOWN:
        _say(streams.err, f"{PROGRAM}: warning: and {len(unused) - _MAX_UNUSED_SHOWN:,} more\n")


def _gate_status(
    document: Document, gates: Sequence[Gate], streams: Streams, *, on_stderr: bool
) -> int:
    """Check gates, print their table (stderr when stdout holds a report), return the status."""
    results = evaluate(document, gates)
    table = results.table()
    if on_stderr:
        _say(streams.err, table)
    else:
        write_output(table.encode("utf-8"), None, inputs=(), stdout=streams.out)
    return results.exit_status


def _demo(args: argparse.Namespace, streams: Streams) -> int:
    """``chartscore demo``: score the bundled synthetic data; print a summary or the report."""
    report = run_demo()
    text = report.to_json() if args.json else demo_summary(report)
    write_output((text + "\n").encode("utf-8"), None, inputs=(), stdout=streams.out)
    return EXIT_OK


_GOLD: Final = Option("--gold", "gold JSON Lines file", "FILE", required=True, reads_input=True)
_PREDICTIONS: Final = Option(
    "--predictions", "predictions JSON Lines file", "FILE", required=True, reads_input=True
)
_EXTRA_PREDICTIONS: Final = Option(
    "--extra-predictions",
    "predictions whose key is not in gold: error (default) or ignore (counted)",
    "{error,ignore}",
    choices=("error", "ignore"),
)
_QUIET: Final = Option("--quiet", "no progress on stderr")
_JOBS: Final = Option(
    "--jobs",
    "processes: 2 reads predictions while gold loads (default: 2 when 2+ CPUs are free)",
    "{1,2}",
    choices=("1", "2"),
)
_STRICT_SCHEMA: Final = Option("--strict-schema", "refuse schema fields that no gold row uses")
_SCHEMA: Final = Option(
    "--schema", "field schema (JSON, or TOML if *.toml)", "FILE", reads_input=True
)
_GATES: Final = Option(
    "--gates",
    "check these release gates (TOML); their table goes to stderr; exit 3 if a required one fails",
    "FILE",
    reads_input=True,
)
_OUT: Final = Option("--out", "write here (atomically) instead of stdout", "FILE")
_OUTPUT_FORMATS: Final = ("json", *FORMATS)


def _format_option(what: str) -> Option:
    return Option(
        "--format",
        f"{what}: json (default, canonical), table, markdown, csv or html",
        "FORMAT",
        choices=_OUTPUT_FORMATS,
    )


COMMANDS: Final[tuple[Command, ...]] = (
    Command(
        name="score",
        help="score a predictions file against a gold file",
        description="Score predictions (JSON Lines) against gold (JSON Lines). Prints the "
        "canonical JSON report, or writes it atomically with --out. An input may be - "
        "(standard input) or gzip-compressed.",
        options=(
            _GOLD,
            _PREDICTIONS,
            _SCHEMA,
            _OUT,
            _format_option("the report's form"),
            _QUIET,
            _JOBS,
            _EXTRA_PREDICTIONS,
            _STRICT_SCHEMA,
            _GATES,
            Option(
                "--engine",
                "local (default: this machine) or dask (part files on a Dask cluster; "
                "--gold and --predictions are then glob patterns)",
                "{local,dask}",
                choices=("local", "dask"),
            ),
            Option(
                "--scheduler",
                "with --engine dask: an existing cluster's address (default: a private "
                "local cluster)",
                "ADDRESS",
            ),
            Option("--partitions", "with --engine dask: how many partitions", "N"),
        ),
        run=_score,
    ),
    Command(
        name="compare",
        help="compare two systems on the same gold, paired (McNemar, paired difference)",
        description="Compare a baseline's and a candidate's predictions on one gold file, "
        "row by row: each system's metrics, the rows only one got right, the paired "
        "difference with Newcombe's interval and McNemar's exact and mid-p tests.",
        options=(
            _GOLD,
            Option(
                "--baseline",
                "the reference system's predictions",
                "FILE",
                required=True,
                reads_input=True,
            ),
            Option(
                "--candidate",
                "the system under test's predictions",
                "FILE",
                required=True,
                reads_input=True,
            ),
            _SCHEMA,
            _OUT,
            _format_option("the comparison's form"),
            _QUIET,
            _GATES,
        ),
        run=_compare,
    ),
    Command(
        name="share",
        help="score, then suppress small cells so the report may leave (audited)",
        description="Score predictions against gold as score does, then print the shared "
        "report: numbers backed by 1 to min-cell - 1 distinct cases are null, with enough "
        "complementary cells that none can be derived. share audits its own output first "
        "and writes nothing if the audit would fail.",
        options=(
            _GOLD,
            _PREDICTIONS,
            _SCHEMA,
            Option(
                "--min-cell",
                f"publish 0 or at least N cases (default {DEFAULT_MIN_CELL})",
                "N",
            ),
            _OUT,
            _QUIET,
            _JOBS,
            _EXTRA_PREDICTIONS,
            _STRICT_SCHEMA,
        ),
        run=_share,
    ),
    Command(
        name="audit",
        help="attack a shared report: can any suppressed small cell be worked out?",
        description="Compute, by integer programming, the range an outsider can prove for "
        "every suppressed number of a shared report, from the report alone. Prints a table "
        "and a verdict; exit 0 when it passes, 4 when it fails.",
        options=(Option("shared", "a shared report (JSON)", "SHARED", True, reads_input=True),),
        run=_audit,
    ),
    Command(
        name="gate",
        help="check a saved report or comparison against release gates",
        description="Check a report or comparison (JSON) against a gates file (TOML). Prints "
        "a table of every gate; exit 0 when every required gate passes, 3 when one fails.",
        options=(
            Option(
                "report",
                "a report, shared report or comparison (JSON)",
                "REPORT",
                True,
                reads_input=True,
            ),
            Option("--gates", "the gates file (TOML)", "FILE", required=True, reads_input=True),
        ),
        run=_gate,
    ),
    Command(
        name="render",
        help="lay out a saved report or comparison for people",
        description="Render a report or comparison (JSON) as a terminal table, Markdown, CSV "
        "or one self-contained HTML page with a Wilson forest plot.",
        options=(
            Option(
                "report",
                "a report, shared report or comparison (JSON)",
                "REPORT",
                True,
                reads_input=True,
            ),
            Option(
                "--format",
                "table, markdown, csv or html",
                "FORMAT",
                required=True,
                choices=FORMATS,
            ),
            Option(
                "--sort",
                "row order: name (default) or rate (lowest normalized agreement first)",
                "{name,rate}",
                choices=SORTS,
            ),
            _OUT,
        ),
        run=_render,
    ),
    Command(
        name="demo",
        help="score the bundled synthetic data and print a summary",
        description="Score the synthetic data bundled with chartscore (no patient data).",
        options=(Option("--json", "print the canonical JSON report instead"),),
        run=_demo,
    ),
)
_BY_NAME: Final = {command.name: command for command in COMMANDS}
_COMMAND_FLAGS: Final = frozenset(
    option.flag for command in COMMANDS for option in command.options if not option.positional
)


# --- parsing ------------------------------------------------------------------------


class _ShowText(Exception):  # noqa: N818 - a request, not an error
    """--help or --version: text to print on stdout, then exit 0."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that never prints and never exits: problems become UsageError."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(_NOT_VALID)  # argparse's own messages echo arguments

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(_NOT_VALID)


class _Help(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help=help,
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        raise _ShowText(parser.format_help())


class _Version(_Help):
    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        raise _ShowText(f"{PROGRAM} {__version__}\n")


class _Once(argparse.Action):
    """Store an option's value, refusing a second occurrence (which one would win?)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_seen_options", set())
        if self.dest in seen:
            raise UsageError(f"{self.option_strings[-1]} is given twice", parser.prog.split()[-1])
        seen.add(self.dest)
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def build_parser() -> argparse.ArgumentParser:
    """The parser for every command, built from :data:`COMMANDS`."""
    parser = _Parser(
        prog=PROGRAM,
        description="Score chart abstraction against gold; print a value-free report.",
        add_help=False,
        allow_abbrev=False,
        exit_on_error=False,
    )
    parser.add_argument("-h", "--help", action=_Help, help="show this help and exit")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar=_COMMAND_METAVAR)
    for command in COMMANDS:
        sub = commands.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            usage=_usage(command),
            add_help=False,
            allow_abbrev=False,
            exit_on_error=False,
        )
        sub.add_argument("-h", "--help", action=_Help, help="show this help and exit")
        for option in command.options:
            if option.positional:
                sub.add_argument(
                    option.dest, metavar=option.metavar, nargs="?", default=None, help=option.help
                )
            elif option.metavar is None:  # a flag: present or not
                sub.add_argument(
                    option.flag, action=_Once, dest=option.dest, nargs=0, default=False,
                    help=option.help,
                )  # fmt: skip
            else:
                sub.add_argument(
                    option.flag, action=_Once, dest=option.dest, metavar=option.metavar,
                    help=option.help,
                )  # fmt: skip
    return parser


def _usage(command: Command) -> str:
    """The usage line, with required options shown as required (argparse cannot know)."""
    parts = [f"{PROGRAM} {command.name}"]
    for option in command.options:
        if option.positional:
            parts.append(option.metavar or option.flag)
            continue
        text = option.flag if option.metavar is None else f"{option.flag} {option.metavar}"
        parts.append(text if option.required else f"[{text}]")
    return " ".join(parts)


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """Parse and check the arguments of one command.

    Raises:
        UsageError: with a fixed message that names at most an option or a
            command, never a value or a path.
    """
    parser = build_parser()
    problem: str | None = None
    try:
        args, extras = parser.parse_known_args(list(argv))
    except argparse.ArgumentError as error:
        problem = _argparse_problem(error.argument_name, argv)
    if problem is not None:
        raise UsageError(problem, _command_word(argv))
    command = _BY_NAME.get(args.command) if args.command else None
    name = None if command is None else command.name
    if extras:
        raise UsageError(_extra_problem(extras[0], command), name)
    if command is None:
        raise UsageError(f"a command is required ({', '.join(_BY_NAME)})")
    _check_options(command, args)
    return args


def _check_options(command: Command, args: argparse.Namespace) -> None:
    standard_inputs = 0
    for option in command.options:
        value = getattr(args, option.dest, None)
        if value is None:
            if option.required:
                name = option.metavar if option.positional else option.flag
                raise UsageError(f"{name} is required", command.name)
            continue
        if option.choices and value not in option.choices:
            allowed = (
                " or ".join(option.choices)
                if len(option.choices) <= 2
                else "one of " + ", ".join(option.choices)
            )
            raise UsageError(f"{option.flag} must be {allowed}", command.name)
        if option.reads_input and value == STANDARD_STREAM:
            standard_inputs += 1
    if standard_inputs > 1:
        raise UsageError("standard input (-) can feed one input only", command.name)


def _argparse_problem(argument: str | None, argv: Sequence[str]) -> str:
    """Name what argparse found wrong, from which argument failed, never from its message."""
    if argument == _COMMAND_METAVAR:
        for before in argv:  # a command's option before the command: its value looked like one
            if not before.startswith("-"):
                break
            if before in _COMMAND_FLAGS:
                return f"{before} goes after the command"
        word = _command_word(argv, known_only=False)
        hint = _closest(word, list(_BY_NAME)) if word and _COMMAND_NAME.fullmatch(word) else None
        return "unknown command" + (f" (did you mean {hint}?)" if hint else "")
    for command in COMMANDS:
        for option in command.options:
            if argument == option.flag:
                wrong = "takes no value" if option.metavar is None else "needs a value"
                return f"{option.flag} {wrong}"
    if argument is not None and argument.endswith("--help"):
        return "--help takes no value"
    return _NOT_VALID


def _extra_problem(extra: str, command: Command | None) -> str:
    """Name an argument the command does not take; echo it only if it looks like an option."""
    if not extra.startswith("-") or extra in (STANDARD_STREAM, "--"):
        return "unexpected argument"
    if not _OPTION_NAME.fullmatch(extra):
        return "unknown option"
    if command is None and extra in _COMMAND_FLAGS:
        return f"{extra} goes after the command"
    hint = _closest(extra, _flags(command))
    return f"unknown option {extra}" + (f" (did you mean {hint}?)" if hint else "")


def _flags(command: Command | None) -> list[str]:
    if command is None:
        return ["--help", "--version"]
    return [*(option.flag for option in command.options if not option.positional), "--help"]


def _closest(word: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


def _command_word(argv: Sequence[str], *, known_only: bool = True) -> str | None:
    """The command the user typed (the first argument that is not an option)."""
    for word in argv:
        if not word.startswith("-"):
            return word if (word in _BY_NAME or not known_only) else None
    return None


def _input(value: str) -> InputPath:
    return STDIN if value == STANDARD_STREAM else value


# --- running ------------------------------------------------------------------------


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (stopping the reader, removing temporary files)."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number


def _raise_terminated(number: int, frame: object) -> None:
    signal.signal(number, signal.SIG_IGN)  # a second signal must not interrupt the cleanup
    raise _Terminated(number)


@contextlib.contextmanager
def _termination_as_exception() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception while a command runs (main thread only)."""
    installed: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            with contextlib.suppress(ValueError, OSError, TypeError):
                if number is not None and signal.getsignal(number) == signal.SIG_DFL:
                    installed[number] = signal.signal(number, _raise_terminated)
    try:
        yield
    finally:
        for number, previous in installed.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(number, previous)  # type: ignore[arg-type]


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the command line; returns the exit status (never raises, never a traceback).

    Args:
        argv: The arguments (default: ``sys.argv[1:]``).
        stdout: Where reports go (default ``sys.stdout``); written as UTF-8
            bytes to its binary buffer when it has one.
        stderr: Where the one error line goes (default ``sys.stderr``); writing
            it is best effort and never stops the work.
    """
    text_out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    streams = Streams(out=_binary(text_out), err=err)
    arguments = sys.argv[1:] if argv is None else list(argv)
    with _termination_as_exception():
        try:
            return _run(arguments, streams)
        except _Terminated as terminated:  # a signal while reporting another failure
            return 128 + terminated.number
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED


def _run(argv: Sequence[str], streams: Streams) -> int:
    failure: ChartscoreError | None = None
    usage: UsageError | None = None
    shown: str | None = None
    status = EXIT_INTERNAL
    try:
        args = parse_arguments(argv)
        status = _BY_NAME[args.command].run(args, streams)
    except _ShowText as show:
        shown = show.text
    except ChartscoreError as error:
        failure = error
    except UsageError as error:
        usage = error
    except KeyboardInterrupt:
        failure, status = ChartscoreError(ErrorCode.INTERRUPTED), EXIT_INTERRUPTED
    except _Terminated as terminated:
        failure, status = ChartscoreError(ErrorCode.INTERRUPTED), 128 + terminated.number
    except BaseException:  # noqa: BLE001 - never show a traceback: it could hold data
        failure = ChartscoreError(ErrorCode.INTERNAL_ERROR)
    if shown is not None:
        try:
            write_output(shown.encode("utf-8"), None, inputs=(), stdout=streams.out)
            return EXIT_OK
        except ChartscoreError as error:
            failure = error
    if usage is not None:
        _say(streams.err, usage.line())
        return EXIT_USAGE
    if failure is None:
        return status
    _say(streams.err, f"{PROGRAM}: error: {failure}: {describe(failure.code)}\n")
    if failure.code is ErrorCode.INTERRUPTED:
        return status
    return _EXIT_BY_CODE.get(failure.code, EXIT_DATA)


_EXIT_BY_CODE: Final = {ErrorCode.USAGE: EXIT_USAGE, ErrorCode.INTERNAL_ERROR: EXIT_INTERNAL}


def run() -> NoReturn:
    """The console script: run :func:`main` on ``sys.argv`` and exit with its status.

    After a failed write to stdout or stderr, the stream is pointed at
    ``/dev/null`` so Python's own final flush cannot print a message or change
    the exit status.
    """
    status = main()
    settle_standard_streams()
    sys.exit(status)


def settle_standard_streams() -> None:
    """Flush stdout and stderr; where that fails, point the descriptor at /dev/null."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a broken stream must not change the outcome
            _discard(stream)


def _discard(stream: TextIO) -> None:
    with contextlib.suppress(Exception):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def _say(stream: TextIO | None, line: str) -> None:
    """Write one line on stderr, best effort: a closed stderr never changes the outcome."""
    if stream is None:
        return
    with contextlib.suppress(Exception):
        stream.write(line)
        stream.flush()


def _is_terminal(stream: TextIO | None) -> bool:
    if stream is None:
        return False
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stderr is simply not a terminal
        return False


class _TextOutput:
    """A text stream seen as a binary one (for callers that pass ``io.StringIO``)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, data: memoryview, /) -> int:
        self._stream.write(bytes(data).decode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self._stream.flush()


def _binary(stream: TextIO | None) -> BinaryOutput | None:
    """The binary layer under a text stream: reports are UTF-8 bytes whatever its encoding."""
    if stream is None:
        return None
    buffer: BinaryOutput | None = None
    with contextlib.suppress(Exception):
        buffer = getattr(stream, "buffer", None)
    if buffer is None:
        return _TextOutput(stream)
    with contextlib.suppress(Exception):
        stream.flush()  # text written earlier goes first
    return buffer


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
