"""What a command is: its options, declared once, the function that runs it, and its exits."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from chartscore.cli._streams import Streams
from chartscore.errors import ErrorCode
from chartscore.io.inputs import STDIN, InputPath

EXIT_OK: Final = 0
EXIT_DATA: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERNAL: Final = 70
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT; SIGTERM and SIGHUP give 128 + their number

PROGRAM: Final = "chartscore"
STANDARD_STREAM: Final = "-"
"""The command-line word for standard input (as an input) or stdout (as ``--out``)."""


@dataclass(frozen=True)
class Option:
    """One command-line option, declared once; parsing and checking follow from it.

    Attributes:
        flag: ``--name`` for an option; a plain word (``report``) for a required
            positional argument.
        help: One line for ``--help``.
        metavar: The value's name in ``--help``; None for a flag without a value.
        required: Whether the command needs it.
        choices: The only values allowed (checked after parsing, with a fixed message).
        reads_input: The value names an input file, which may be ``-`` (standard
            input); at most one input of a command may be ``-``.
        many: The option takes one or more values (``--raters A B C``), and may be
            repeated; the values are gathered in order into one list.
        repeated: The option takes one value and may be repeated (``--system P
            --system Q``); the values are gathered in order into one list. Unlike
            ``many``, a pattern the shell expanded into several words is refused.
    """

    flag: str
    help: str
    metavar: str | None = None
    required: bool = False
    choices: tuple[str, ...] = ()
    reads_input: bool = False
    many: bool = False
    repeated: bool = False

    @property
    def dest(self) -> str:
        """The attribute name on the parsed arguments."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def positional(self) -> bool:
        """A positional argument (``REPORT``) rather than an option (``--out``)."""
        return not self.flag.startswith("-")

    def input_path(self, args: argparse.Namespace) -> InputPath:
        """The input file this option names in ``args``; :data:`~chartscore.io.STDIN` for ``-``."""
        return input_argument(getattr(args, self.dest))

    def optional_path(self, args: argparse.Namespace) -> InputPath | None:
        """As :meth:`input_path`, for an option that may be left out: None when it was."""
        return optional_input(getattr(args, self.dest))


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, help texts, options and the function that runs it.

    A command with ``subcommands`` (``import``) is a group: its word is followed by
    one of theirs (``chartscore import redcap ...``), whose ``name`` is the whole
    phrase (``import redcap``); the group's own ``run`` is never called.
    """

    name: str
    help: str
    description: str
    options: tuple[Option, ...]
    run: Callable[[argparse.Namespace, Streams], int]
    subcommands: tuple[Command, ...] = ()

    @property
    def word(self) -> str:
        """The word typed for this command (the last word of its name)."""
        return self.name.split()[-1]


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


def command_group(
    name: str, help: str, description: str, subcommands: tuple[Command, ...]
) -> Command:
    """A command that only groups others (``import``: ``import redcap``, ``import csv``...).

    The parser requires one of its subcommands; its own ``run`` says so if it is ever
    reached without one.
    """
    kinds = ", ".join(command.word for command in subcommands)

    def run(args: argparse.Namespace, streams: Streams) -> int:
        raise UsageError(f"a kind of {name} is required ({kinds})", name)

    return Command(name, help, description, (), run, subcommands)


def input_argument(value: str) -> InputPath:
    """An input argument as a path, or :data:`~chartscore.io.STDIN` for ``-``."""
    return STDIN if value == STANDARD_STREAM else value


def optional_input(value: str | None) -> InputPath | None:
    """An optional input argument (``--schema``, ``--gates``), None when not given."""
    return None if value is None else input_argument(value)


def output_file(value: str | None, flag: str, command: str) -> str | None:
    """An output option that names a file: ``-`` (standard output) is refused.

    For outputs that hold patient-level data or are read again (a ledger, a partial, an
    imported gold file), or that would mix with the document on stdout (``--junit``).
    """
    if value == STANDARD_STREAM:
        raise UsageError(f"{flag} must name a file", command)
    return value


_DIGITS: Final = re.compile(r"[0-9]+")


def min_cell_number(value: str, flag: str, command: str) -> int:
    """``FLAG N``'s number (``--min-cell``, ``--also-min-cell``), for ``check_min_cell``.

    Past nine digits the number is kept to ten: out of range, as it is, not a usage error.

    Raises:
        UsageError: N is not a whole number.
    """
    if not _DIGITS.fullmatch(value):
        raise UsageError(f"{flag} must be a whole number", command)
    return int(value.lstrip("0")[:10] or 0)
