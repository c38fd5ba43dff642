"""The command line's streams: stdout as bytes, stderr as text, both best effort."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from chartscore.io.output import BinaryOutput


@dataclass(frozen=True)
class Streams:
    """Where a command writes: stdout as bytes, stderr as text (best effort)."""

    out: BinaryOutput | None
    err: TextIO | None


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
