"""The command line's streams: stdout as bytes, stderr as text, both best effort.

While a command runs (:func:`command_streams`), file descriptors 1 and 2 point at
``/dev/null``, and chartscore writes its documents and messages through copies of
them. So nothing else in the process reaches standard output or error: not a
plugin's ``print`` or ``os.write``, not C code, not a child process. What they write
may hold patient values (a report piped to a file must be the report alone), and it
is discarded, never kept or logged.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final, TextIO, TypeVar

from chartscore.io.output import BinaryOutput
from chartscore.io.signals import signals_held
from chartscore.processes.descriptors import copy_above_2, null_above_2


@dataclass(frozen=True)
class Streams:
    """Where a command writes: stdout as bytes, stderr as text (best effort).

    ``terminal``: whether stdout is a terminal (a person reads it), checked once
    when the command starts; a pipe, a file or a closed stdout is not.
    """

    out: BinaryOutput | None
    err: TextIO | None
    terminal: bool = False


def say(stream: TextIO | None, line: str) -> None:
    """Write one line on stderr, best effort: a closed stderr never changes the outcome."""
    if stream is None:
        return
    with contextlib.suppress(Exception):
        stream.write(line)
        stream.flush()


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal; a closed or odd stream is not."""
    if stream is None:
        return False
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stderr is simply not a terminal
        return False


class TextOutput:
    """A text stream seen as a binary one (for callers that pass ``io.StringIO``)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, data: memoryview, /) -> int:
        self._stream.write(bytes(data).decode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self._stream.flush()


def binary(stream: TextIO | None) -> BinaryOutput | None:
    """The binary layer under a text stream: reports are UTF-8 bytes whatever its encoding."""
    if stream is None:
        return None
    buffer: BinaryOutput | None = None
    with contextlib.suppress(Exception):
        buffer = getattr(stream, "buffer", None)
    if buffer is None:
        return TextOutput(stream)
    with contextlib.suppress(Exception):
        stream.flush()  # text written earlier goes first
    return buffer


_DESCRIPTORS: Final = (1, 2)


@contextlib.contextmanager
def command_streams(stdout: TextIO | None, stderr: TextIO | None) -> Iterator[Streams]:
    """The command's streams; meanwhile descriptors 1 and 2 point at ``/dev/null``.

    Args:
        stdout: Where documents go (None: ``sys.stdout``); a stream on descriptor 1
            (Python's own) is replaced by a copy of it, made before it is pointed away.
        stderr: Where messages go (None: ``sys.stderr``); the same for descriptor 2.

    A descriptor that is closed is left closed (its stream is then None, as
    Python's is). Both are restored when the block ends; Ctrl-C and termination
    signals are held back while they are switched, so no signal leaves them away.
    """
    reserved: _Reserved | None = None
    try:
        with signals_held():
            reserved = _Reserved(stdout, stderr)
        yield reserved.streams
    finally:
        if reserved is not None:
            with signals_held():
                reserved.release()


class _Reserved:
    """Descriptors 1 and 2 pointed at /dev/null, and the command's own copies of them."""

    def __init__(self, stdout: TextIO | None, stderr: TextIO | None) -> None:
        _flush_standard_streams()  # what was written before goes where it was going
        # Copies above 2, so that a closed descriptor is never taken by one of them.
        self._copies: dict[int, int | None] = {}
        for descriptor in _DESCRIPTORS:
            self._copies[descriptor] = copy_above_2(descriptor)  # None: it is closed
        self._own: list[BinaryIO | TextIO] = []
        stdout = sys.stdout if stdout is None else stdout
        terminal = is_terminal(stdout)  # before descriptor 1 points at /dev/null
        stdout_copy = copy_above_2(self._copies[1]) if _on(stdout, 1) else None
        out: BinaryOutput | None = binary(stdout)
        if stdout_copy is not None:
            out = self._own_stream(os.fdopen(stdout_copy, "wb"))
        err = sys.stderr if stderr is None else stderr
        stderr_copy = copy_above_2(self._copies[2]) if _on(err, 2) else None
        if stderr_copy is not None:
            encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
            err = self._own_stream(
                os.fdopen(
                    stderr_copy, "w", encoding=encoding, errors="backslashreplace", buffering=1
                )
            )
        self.streams = Streams(out=out, err=err, terminal=terminal)
        null = null_above_2()
        if null is None:  # no null device: the descriptors stay as they are
            return
        for descriptor in _DESCRIPTORS:  # a closed one too: nothing may open in its place
            with contextlib.suppress(OSError):
                os.dup2(null, descriptor)
        os.close(null)

    def _own_stream(self, stream: _Stream) -> _Stream:
        self._own.append(stream)
        return stream

    def release(self) -> None:
        """Put the descriptors back (a closed one closed); close the command's own streams."""
        _flush_standard_streams()  # what went astray goes to /dev/null
        for descriptor, copy in self._copies.items():
            with contextlib.suppress(OSError):
                if copy is None:
                    os.close(descriptor)
                else:
                    os.dup2(copy, descriptor)
                    os.close(copy)
        self._copies = {}
        for stream in self._own:
            with contextlib.suppress(Exception):  # a full disk or a closed pipe: said already
                stream.close()


_Stream = TypeVar("_Stream", BinaryIO, TextIO)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def _on(stream: TextIO | None, descriptor: int) -> bool:
    """Whether ``stream`` writes to ``descriptor`` itself (Python's standard stream does)."""
    if stream is None:
        return False
    number: object = None
    with contextlib.suppress(Exception):
        number = stream.fileno()
    return number == descriptor


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
