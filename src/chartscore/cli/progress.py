"""Progress on a terminal: lines read per input, then a bar through suppression and the
audit (``share``), and elapsed time; counts only.

Progress is best effort: if writing to the terminal fails (closed, hung up,
a broken pipe), progress stops quietly and the work goes on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Final, TextIO

from chartscore.errors import InputKind

_FIRST_AFTER_SECONDS: Final = 1.0  # small inputs finish before any progress shows
_EVERY_SECONDS: Final = 0.5
_BAR: Final = 24
_ESTIMATE_AFTER_SECONDS: Final = 2.0
"""A stage's time left is estimated once it has run this long (earlier rates mislead)."""


class TerminalProgress:
    """Rewrites one status line on ``stream``; never shows anything but counts.

    Call it as ``progress(input, lines_read)``; call :meth:`finish` at the end.
    """

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._started = self._clock()
        self._next = self._started + _FIRST_AFTER_SECONDS
        self._lines: dict[InputKind, int] = {}
        self._shown = False
        self._broken = False
        self._width = 0  # of the last status line, to blank what a shorter one leaves
        self._stage: tuple[str, float, int] | None = None  # name, first shown at, done then

    def __call__(self, source: InputKind, lines: int) -> None:
        self._lines[source] = lines
        now = self._due()
        if now is None:
            return
        parts = [f"{kind} {count:,} lines" for kind, count in self._lines.items()]
        self._status(f"chartscore: {', '.join(parts)}, {now - self._started:.0f} s elapsed")

    def _due(self) -> float | None:
        # The time, when a new status line is due (at most one a second); else None.
        if self._broken:
            return None
        now = self._clock()
        if now < self._next:
            return None
        self._next = now + _EVERY_SECONDS
        return now

    def stage(self, name: str, done: int, total: int) -> None:
        """Show a bar: ``done`` of ``total`` in stage ``name`` (a disclosure progress sink)."""
        now = self._due()
        if now is None:
            return
        filled = _BAR * done // total if total > 0 else 0
        bar = "#" * filled + "." * (_BAR - filled)
        line = f"chartscore: {name} [{bar}] {done:,}/{total:,}, {now - self._started:.0f} s elapsed"
        self._status(line + self._left(name, done, total, now))

    def _left(self, name: str, done: int, total: int, now: float) -> str:
        # ", about N s left" at the stage's rate so far, once it has run a while; else "".
        if self._stage is None or self._stage[0] != name:
            self._stage = (name, now, done)
            return ""
        _, began, done_then = self._stage
        ran = now - began
        if ran < _ESTIMATE_AFTER_SECONDS or done <= done_then or done >= total:
            return ""
        left = ran / (done - done_then) * (total - done)
        return f", about {left:.0f} s left" if left < 90 else f", about {left / 60:.0f} min left"

    def _status(self, line: str) -> None:
        self._show("\r" + line + " " * max(0, self._width - len(line)))
        self._width = len(line)
        self._shown = True

    def finish(self) -> None:
        """End the status line so the next output starts on a fresh line."""
        if self._shown:
            self._show("\n")
            self._shown = False  # finishing twice ends the line once
            self._width = 0

    def _show(self, text: str) -> None:
        self._broken = True  # stays so if writing fails
        with contextlib.suppress(Exception):
            self._stream.write(text)
            self._stream.flush()
            self._broken = False
