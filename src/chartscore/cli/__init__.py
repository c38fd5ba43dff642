"""The ``chartscore`` command: JSON Lines in, canonical JSON out, no data on any stream.

Exit status: 0 success; 1 a controlled input, data or output error; 2 a usage
error; 3 a required release gate failed; 4 a shared report failed its audit
(``audit``); 70 an internal error; 130 interrupted by Ctrl-C (129 SIGHUP, 143
SIGTERM). Every failure prints one line on stderr, never content, a path or a
traceback: ``chartscore: error: <code> (<input> line <n>): <what it means>``,
or for usage ``chartscore: error: usage: <what is wrong>; see chartscore
<command> --help``.

Extending it: a command is a module of this package with a ``COMMAND`` (a
:class:`Command` with its :class:`Option` declarations and one function
``(args, streams) -> status``), listed in :data:`COMMANDS` (``_parser``).
Options several commands share are in ``_options``. Outputs go through
:func:`chartscore.io.output.write_output`, which refuses to overwrite any
input the command names: pass all of them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Final, NoReturn, TextIO

from chartscore.cli._command import (
    EXIT_DATA,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROGRAM,
    STANDARD_STREAM,
    Command,
    Option,
    UsageError,
)
from chartscore.cli._parser import COMMANDS, ShowText, build_parser, command_of, parse_arguments
from chartscore.cli._signals import Terminated, termination_as_exception
from chartscore.cli._streams import Streams, command_streams, say, settle_standard_streams
from chartscore.errors import ChartscoreError, ErrorCode, describe
from chartscore.io.output import write_output

__all__ = [
    "COMMANDS",
    "EXIT_DATA",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROGRAM",
    "STANDARD_STREAM",
    "Command",
    "Option",
    "Streams",
    "UsageError",
    "build_parser",
    "main",
    "parse_arguments",
    "run",
    "settle_standard_streams",
]


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the command line; returns the exit status (never raises, never a traceback).

    Args:
        argv: The arguments (default: ``sys.argv[1:]``).
        stdout: Where reports go (default: standard output); written as UTF-8
            bytes to its binary buffer when it has one.
        stderr: Where the one error line goes (default: standard error); writing
            it is best effort and never stops the work.

    While it runs, file descriptors 1 and 2 point at ``/dev/null`` and
    chartscore writes through copies of them (or the streams given): whatever
    else the process writes to standard output or error (a plugin's ``print``,
    C code, a child process) is discarded.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    with termination_as_exception():
        try:
            # Descriptors 1 and 2 point at /dev/null meanwhile: only chartscore's own
            # writes get out, never a plugin's print (it could hold a value).
            with command_streams(stdout, stderr) as streams:
                return _run(arguments, streams)
        except Terminated as terminated:  # a signal while reporting another failure
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
        command = command_of(args)
        assert command is not None  # parse_arguments refuses arguments without one
        status = command.run(args, streams)
    except ShowText as show:
        shown = show.text
    except ChartscoreError as error:
        failure = error
    except UsageError as error:
        usage = error
    except KeyboardInterrupt:
        failure, status = ChartscoreError(ErrorCode.INTERRUPTED), EXIT_INTERRUPTED
    except Terminated as terminated:
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
        say(streams.err, usage.line())
        return EXIT_USAGE
    if failure is None:
        return status
    say(streams.err, f"{PROGRAM}: error: {failure}: {describe(failure.code)}\n")
    if failure.code is ErrorCode.INTERRUPTED:
        return status
    return _EXIT_BY_CODE.get(failure.code, EXIT_DATA)


def _dropped(report: object) -> None:
    """Python's report of an exception raised where nothing can catch it: not printed."""


_EXIT_BY_CODE: Final = {ErrorCode.USAGE: EXIT_USAGE, ErrorCode.INTERNAL_ERROR: EXIT_INTERNAL}


def run() -> NoReturn:
    """The console script: run :func:`main` on ``sys.argv`` and exit with its status.

    After a failed write to stdout or stderr, the stream is pointed at
    ``/dev/null`` so Python's own final flush cannot print a message or change
    the exit status. An exception Python can only report (raised in a finalizer,
    such as a half-made Dask client's at exit, or in a thread) is dropped, not
    printed: its traceback names files and may hold an address or a value.
    """
    sys.unraisablehook = _dropped
    threading.excepthook = _dropped
    status = main()
    settle_standard_streams()
    sys.exit(status)
