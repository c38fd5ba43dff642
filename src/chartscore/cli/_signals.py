"""SIGTERM and SIGHUP as an exception, so that a command unwinds and cleans up; Ctrl-C counted.

SIGINT keeps Python's behaviour (``KeyboardInterrupt``) under a handler that also
counts it, so that a plugin's own ``KeyboardInterrupt`` is told from Ctrl-C
(:mod:`chartscore.scoring.plugin_guard`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from chartscore.scoring.plugin_guard import counting_ctrl_c


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (stopping the reader, removing temporary files)."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number


def _raise_terminated(number: int, frame: object) -> None:
    signal.signal(number, signal.SIG_IGN)  # a second signal must not interrupt the cleanup
    raise Terminated(number)


@contextlib.contextmanager
def termination_as_exception() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception while a command runs, and count Ctrl-C.

    Only in the main thread, and only where the handler is the default one (a
    signal the caller ignores stays ignored).
    """
    installed: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            with contextlib.suppress(ValueError, OSError, TypeError):
                if number is not None and signal.getsignal(number) == signal.SIG_DFL:
                    installed[number] = signal.signal(number, _raise_terminated)
        with contextlib.suppress(ValueError, OSError, TypeError):
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                installed[signal.SIGINT] = signal.signal(signal.SIGINT, counting_ctrl_c)
    try:
        yield
    finally:
        for number, previous in installed.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(number, previous)  # type: ignore[arg-type]
