"""Where suppression and the audit report how far they are: a sink the caller may set.

Suppression and the audit can take minutes on wide reports. They call
:func:`step` with a stage name and two counts (done, total); nothing happens
unless a caller set a sink with :func:`reporting` (the command line does on a
terminal, to draw a progress bar). Counts only: no value, name or key passes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Final

Sink = Callable[[str, int, int], None]
"""Called as ``sink(stage, done, total)``."""

_SINK: Final[ContextVar[Sink | None]] = ContextVar("chartscore_disclosure_progress", default=None)


@contextlib.contextmanager
def reporting(sink: Sink | None) -> Iterator[None]:
    """Send the steps of suppression and audits run inside the block to ``sink``."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def step(stage: str, done: int, total: int) -> None:
    """Report ``done`` of ``total`` in ``stage``, when a sink is set (best effort)."""
    sink = _SINK.get()
    if sink is not None:
        sink(stage, done, total)


def silence() -> None:
    """Drop the sink in this context (a forked helper process must not draw)."""
    _SINK.set(None)
