"""Parsing: every command's parser, built from its declarations; every problem a UsageError.

:func:`build_parser` builds every parser from :data:`COMMANDS`, and :func:`parse_arguments`
turns every argument problem into a :class:`UsageError` from a closed set of messages
(required options, values outside ``choices``, standard input given twice, unknown options
and commands, repeated options). A message names at most an option or a command, never a
value or a path.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import Final, NoReturn

from chartscore._version import __version__
from chartscore.cli import (
    agree,
    audit,
    batch,
    compare,
    demo,
    gate,
    imports,
    ledger,
    merge,
    render,
    schema,
    score,
    share,
    worklist,
)
from chartscore.cli._command import PROGRAM, STANDARD_STREAM, Command, UsageError

COMMANDS: Final[tuple[Command, ...]] = (
    score.COMMAND,
    compare.COMMAND,
    share.COMMAND,
    audit.COMMAND,
    gate.COMMAND,
    merge.COMMAND,
    render.COMMAND,
    demo.COMMAND,
    imports.COMMAND,
    worklist.COMMAND,
    ledger.COMMAND,
    batch.COMMAND,
    agree.COMMAND,
    schema.COMMAND,
)
BY_NAME: Final = {command.name: command for command in COMMANDS}
LEAVES: Final = tuple(leaf for command in COMMANDS for leaf in (command.subcommands or (command,)))
"""Every command that runs: the plain commands and each group's subcommands."""
_COMMAND_FLAGS: Final = frozenset(
    option.flag for command in LEAVES for option in command.options if not option.positional
)
_COMMAND_METAVAR: Final = "COMMAND"
_KIND_METAVAR: Final = "KIND"
_KIND_DEST: Final = "subcommand"
# An unknown option is echoed only when it looks like an option name: a typo
# such as --shema, never a value such as --gold=/data/MRN123 or a path.
_OPTION_NAME: Final = re.compile(r"--[a-z][a-z0-9-]{0,40}")
_COMMAND_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,40}")
_NOT_VALID: Final = "the arguments are not valid"


class ShowText(Exception):  # noqa: N818 - a request, not an error
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
        raise ShowText(parser.format_help())


class _Version(_Help):
    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        raise ShowText(f"{PROGRAM} {__version__}\n")


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
            command = " ".join(parser.prog.split()[1:])
            raise UsageError(f"{self.option_strings[-1]} is given twice", command)
        seen.add(self.dest)
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


class _Gather(argparse.Action):
    """Gather an option's values (one or more each time it is given) into one list."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        gathered = getattr(namespace, self.dest, None) or []
        setattr(namespace, self.dest, [*gathered, *(values if isinstance(values, list) else [])])


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
        sub = _add_command(commands, command)
        if command.subcommands:
            kinds = sub.add_subparsers(
                dest=_KIND_DEST, metavar=_KIND_METAVAR, prog=f"{PROGRAM} {command.name}"
            )
            for leaf in command.subcommands:
                _add_command(kinds, leaf)
    return parser


def _add_command(commands: argparse._SubParsersAction[_Parser], command: Command) -> _Parser:
    """One command's parser, with its help and its options."""
    sub = commands.add_parser(
        command.word,
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
        elif option.many or option.repeated:
            sub.add_argument(
                option.flag, action=_Gather, dest=option.dest, metavar=option.metavar,
                nargs="+" if option.many else 1, default=None, help=option.help,
            )  # fmt: skip
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
    return sub


def _usage(command: Command) -> str:
    """The usage line, with required options shown as required (argparse cannot know)."""
    parts = [f"{PROGRAM} {command.name}"]
    if command.subcommands:
        parts.append("{" + ",".join(leaf.word for leaf in command.subcommands) + "} ...")
    for option in command.options:
        if option.positional:
            parts.append(option.metavar or option.flag)
            continue
        text = option.flag if option.metavar is None else f"{option.flag} {option.metavar}"
        if option.many:
            text += f" [{option.metavar} ...]"
        text = text if option.required else f"[{text}]"
        parts.append(text + " ..." if option.repeated else text)
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
    command = command_of(args)
    name = None if command is None else command.name
    if extras:
        raise UsageError(_extra_problem(extras[0], command), name)
    if command is None:
        raise UsageError(f"a command is required ({', '.join(BY_NAME)})")
    if command.subcommands:
        kinds = ", ".join(leaf.word for leaf in command.subcommands)
        raise UsageError(f"a kind of {command.name} is required ({kinds})", command.name)
    _check_options(command, args)
    return args


def command_of(args: argparse.Namespace) -> Command | None:
    """The command the parsed arguments name: a group's subcommand when one was given."""
    command = BY_NAME.get(args.command) if args.command else None
    kind = getattr(args, _KIND_DEST, None)
    if command is not None and command.subcommands and kind:
        return next(leaf for leaf in command.subcommands if leaf.word == kind)
    return command


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
        if option.reads_input:
            standard_inputs += (
                value.count(STANDARD_STREAM) if type(value) is list else value == STANDARD_STREAM
            )
    if standard_inputs > 1:
        raise UsageError("standard input (-) can feed one input only", command.name)


def _argparse_problem(argument: str | None, argv: Sequence[str]) -> str:
    """Name what argparse found wrong, from which argument failed, never from its message."""
    if argument == _KIND_METAVAR:
        group = BY_NAME.get(_command_word(argv) or "")
        kinds = [leaf.word for leaf in group.subcommands] if group is not None else []
        words = [word for word in argv if not word.startswith("-")]
        typed = words[1] if len(words) > 1 else ""
        hint = _closest(typed, kinds) if _COMMAND_NAME.fullmatch(typed) else None
        return "unknown kind" + (f" (did you mean {hint}?)" if hint else "")
    if argument == _COMMAND_METAVAR:
        for before in argv:  # a command's option before the command: its value looked like one
            if not before.startswith("-"):
                break
            if before in _COMMAND_FLAGS:
                return f"{before} goes after the command"
        word = _command_word(argv, known_only=False)
        hint = _closest(word, list(BY_NAME)) if word and _COMMAND_NAME.fullmatch(word) else None
        return "unknown command" + (f" (did you mean {hint}?)" if hint else "")
    for command in LEAVES:
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
    """The command the user typed (the first argument that is not an option).

    For a group (``import``) followed by one of its kinds, the two words (``import redcap``).
    """
    words = [word for word in argv if not word.startswith("-")]
    if not words:
        return None
    word = words[0]
    group = BY_NAME.get(word)
    if group is not None and group.subcommands and len(words) > 1:
        for leaf in group.subcommands:
            if leaf.word == words[1]:
                return leaf.name
    return word if (word in BY_NAME or not known_only) else None
