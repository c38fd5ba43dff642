"""The ``chartscore`` command: JSON Lines in, canonical JSON out, no data on any stream.

Exit status: 0 success; 1 a controlled input or data error; 2 a usage error;
70 an internal error; 130 interrupted. Every failure prints one line on stderr
of the form ``chartscore: error: <code> (<input> line <n>)``: never content,
a path or a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from chartscore._version import __version__
from chartscore.demo import demo_summary, run_demo
from chartscore.errors import ChartscoreError, ErrorCode, describe
from chartscore.io.files import load_schema, score_files, write_atomic
from chartscore.progress import TerminalProgress

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class _UsageError(Exception):
    """argparse wanted to print a message that may echo an argument (a path)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="chartscore",
        description="Score chart abstraction against gold; print a value-free report.",
    )
    parser.add_argument("--version", action="version", version=f"chartscore {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    run = commands.add_parser(
        "score",
        help="score a predictions file against a gold file",
        description="Score predictions (JSON Lines) against gold (JSON Lines). "
        "Prints the canonical JSON report, or writes it atomically with --out.",
    )
    run.add_argument("--gold", required=True, metavar="FILE", help="gold JSON Lines file")
    run.add_argument(
        "--predictions", required=True, metavar="FILE", help="predictions JSON Lines file"
    )
    run.add_argument("--schema", metavar="FILE", help="field schema (JSON, or TOML if *.toml)")
    run.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    run.add_argument(
        "--jobs",
        type=int,
        choices=(1, 2),
        default=None,
        help="processes: 2 reads predictions while gold loads (default: 2 when 2+ CPUs are free)",
    )
    demo = commands.add_parser(
        "demo",
        help="score the bundled synthetic data and print a summary",
        description="Score the synthetic data bundled with chartscore (no patient data).",
    )
    demo.add_argument("--json", action="store_true", help="print the canonical JSON report instead")
    return parser


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _fail(code: ErrorCode, stream: TextIO, where: str = "") -> None:
    stream.write(f"chartscore: error: {code}{where}: {describe(code)}\n")


def _score(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    progress = None
    if not args.quiet and stderr.isatty():
        progress = TerminalProgress(stderr)
    try:
        schema = None if args.schema is None else load_schema(args.schema)
        jobs = args.jobs if args.jobs is not None else min(2, _available_cpus())
        report = score_files(
            args.gold, args.predictions, schema=schema, progress=progress, parallel=jobs > 1
        )
    finally:
        if progress is not None:
            progress.finish()
    payload = report.to_json() + "\n"
    if args.out is None:
        stdout.write(payload)
        stdout.flush()
    else:
        write_atomic(args.out, payload.encode("utf-8"))
    return EXIT_OK


def _demo(args: argparse.Namespace, stdout: TextIO) -> int:
    report = run_demo()
    stdout.write((report.to_json() if args.json else demo_summary(report)) + "\n")
    stdout.flush()
    return EXIT_OK


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the command line; returns the exit status (never raises, never a traceback)."""
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    status: int
    error: ChartscoreError | None = None
    try:
        args = _parser().parse_args(argv)
        if args.command == "score":
            status = _score(args, out, err)
        elif args.command == "demo":
            status = _demo(args, out)
        else:
            _fail(ErrorCode.USAGE, err)
            status = EXIT_USAGE
    except ChartscoreError as caught:
        error = caught
        status = EXIT_DATA
    except _UsageError:
        _fail(ErrorCode.USAGE, err)
        status = EXIT_USAGE
    except KeyboardInterrupt:
        _fail(ErrorCode.INTERRUPTED, err)
        status = EXIT_INTERRUPTED
    except BrokenPipeError:
        _fail(ErrorCode.OUTPUT_UNWRITABLE, err, " (output)")
        status = EXIT_DATA
    except SystemExit as exit_request:  # --help and --version
        status = exit_request.code if type(exit_request.code) is int else EXIT_OK
    except BaseException:  # noqa: BLE001 - never show a traceback: it could hold data
        _fail(ErrorCode.INTERNAL_ERROR, err)
        status = EXIT_INTERNAL
    if error is not None:
        _fail(error.code, err, str(error)[len(error.code) :])
    return status
