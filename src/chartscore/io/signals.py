"""Holding Ctrl-C and termination signals back for the few statements that must not be cut.

The command line turns SIGINT, SIGTERM and SIGHUP into exceptions; one that arrives inside
:func:`signals_held` is delivered when the block ends, so it can never fall between two
steps that belong together (creating a temporary file and remembering its name, a rename
and forgetting it, writing a ledger line and syncing it).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Final

HELD_SIGNALS: Final = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold :data:`HELD_SIGNALS` back until the block ends (where the platform can)."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None or not HELD_SIGNALS:  # pragma: no cover - platforms without it
        yield
        return
    previous = mask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, previous)
