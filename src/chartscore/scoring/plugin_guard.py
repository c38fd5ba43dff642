"""Calling a plugin's judge: what it prints is discarded, and only Ctrl-C gets past it.

A judge is the caller's code, run on patient values (docs/plugins.md). While one runs:

- **Python's standard streams are a sink.** ``sys.stdout`` and ``sys.stderr`` drop
  whatever is written to them (``print``, warnings): it may hold the values the judge
  was given, so it is discarded, never kept, logged or shown. They are put back as
  soon as the judge returns or raises (with judges running in several threads, when
  the last one does). On the command line, file descriptors 1 and 2 point at
  ``/dev/null`` for the whole run as well (:mod:`chartscore.cli._streams`), so
  ``os.write``, C code and child processes are silenced there too.
- **Whatever it raises is a failure of the plugin**, any :exc:`BaseException` (its
  message may hold the values it was given: :exc:`SystemExit` included), and a
  :exc:`KeyboardInterrupt` too unless Ctrl-C may have raised it. On the command line
  :func:`counting_ctrl_c` is SIGINT's handler: it counts each Ctrl-C, so a judge's own
  ``KeyboardInterrupt`` is told from the user's. Where SIGINT is ignored (a batch's
  forked processes) none can come from Ctrl-C. Under any other handler (Python's
  own, in a notebook or a script) the two cannot be told apart, and the interrupt is
  let through: Ctrl-C must stop the caller.

Holds no value: the judge's arguments are passed through.
"""

from __future__ import annotations

import io
import signal
import sys
import threading
from collections.abc import Callable
from typing import Final, NoReturn, TextIO, cast

__all__ = ["FAILED", "call_judge", "counting_ctrl_c"]

FAILED: Final = object()
"""What :func:`call_judge` returns when the judge failed."""


_CTRL_C: Final = [0]
"""How many times :func:`counting_ctrl_c` has run in this process."""


def counting_ctrl_c(number: int, frame: object) -> NoReturn:
    """SIGINT's handler on the command line: Python's own (``KeyboardInterrupt``), counted."""
    _CTRL_C[0] += 1
    raise KeyboardInterrupt


def call_judge(judge: Callable[[object, object], object], gold: object, answer: object) -> object:
    """``judge(gold, answer)`` with its output discarded; its label, or :data:`FAILED`.

    Raises:
        KeyboardInterrupt: Ctrl-C (or what may be it) while the judge ran.
    """
    before = _CTRL_C[0]
    label: object = FAILED
    try:
        _silence()
        try:
            label = judge(gold, answer)
        finally:
            _restore()
    except KeyboardInterrupt:
        if _may_be_ctrl_c(before):
            raise
        label = FAILED
    except BaseException:  # noqa: BLE001 - the plugin's exception may hold a value
        label = FAILED  # SystemExit, GeneratorExit, a BaseException of its own: all dropped
    return label


def _may_be_ctrl_c(before: int) -> bool:
    handler = signal.getsignal(signal.SIGINT)
    if handler is counting_ctrl_c:
        return _CTRL_C[0] != before
    return handler not in (signal.SIG_IGN, signal.SIG_DFL, None)


# --- the output ------------------------------------------------------------------------


class _Sink(io.TextIOBase):
    """A text stream that drops whatever is written to it."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


class _Silence:
    """Python's standard streams while any judge runs, and what to put back."""

    __slots__ = ("depth", "lock", "streams")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.streams: tuple[TextIO, TextIO] | None = None


_SINK: Final = cast(TextIO, _Sink())
_SILENCE: Final = _Silence()


def _silence() -> None:
    with _SILENCE.lock:
        _SILENCE.depth += 1
        if _SILENCE.depth == 1:
            _SILENCE.streams = (sys.stdout, sys.stderr)
            sys.stdout = sys.stderr = _SINK


def _restore() -> None:
    with _SILENCE.lock:
        _SILENCE.depth -= 1
        if _SILENCE.depth == 0 and _SILENCE.streams is not None:
            sys.stdout, sys.stderr = _SILENCE.streams
            _SILENCE.streams = None
