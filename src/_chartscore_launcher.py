"""The ``chartscore`` console script, outside the package so Ctrl-C is handled from the start.

Importing chartscore (attrs, the scorer, the readers) takes a few tenths of a
second. A console script that imported ``chartscore.cli`` directly would show
Python's KeyboardInterrupt traceback when Ctrl-C lands in that time, and die
with status -2. This module imports nothing of chartscore until it is inside a
``try``, so an interrupt at any moment prints one line and exits 130, as it does
later in the run.
"""

import contextlib
import sys

_INTERRUPTED_LINE = "chartscore: error: interrupted: stopped by Ctrl-C or a termination signal\n"
_EXIT_INTERRUPTED = 130


def run() -> None:
    """Import and run the command line; Ctrl-C during the imports ends with one line."""
    try:
        from chartscore.cli import run as run_command_line  # noqa: PLC0415 - inside the guard

        run_command_line()  # exits through SystemExit
    except KeyboardInterrupt:
        _interrupted()


def _interrupted() -> None:
    with contextlib.suppress(Exception):  # stderr is best effort
        sys.stderr.write(_INTERRUPTED_LINE)
        sys.stderr.flush()
    sys.exit(_EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
