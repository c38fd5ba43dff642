"""Forked children die with their parent, however the parent dies (SIGKILL included).

Every place chartscore forks (the disclosure engine's second core in
:mod:`chartscore.disclosure.split`, the prediction reader in
:mod:`chartscore.io.parallel`, a batch's runs in :mod:`chartscore.workflows.forked`)
uses the same two calls::

    parent = before_fork()      # in the parent, just before os.fork()
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent)  # first thing in the child

A parent that ends normally, or by an error, Ctrl-C or SIGTERM, stops and reaps its
children itself. These calls cover what it cannot: SIGKILL (a scheduler's time limit,
the out-of-memory killer). Without them a child busy with a long solve kept running on
its own, at full CPU, after its parent was gone.

How the child notices:

- On Linux, the kernel is asked to send it SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, through libc with :mod:`ctypes`).
  The request only covers a death that comes after it, so the child then checks
  that its parent is still the process that forked it (``os.getppid()``
  against the pid :func:`before_fork` took): a parent that died between the
  fork and the request has already left the child to another parent, and the
  child exits at once.
- Where the kernel cannot be asked (another system, no libc, the call refused),
  a daemon thread in the child checks ``os.getppid()`` every
  :data:`WATCH_SECONDS` and exits the child once the parent has changed (an
  orphan is adopted by init or a subreaper, so its parent id changes).

Linux sends the signal when the *thread* that forked the child ends, not only the
process: each caller forks from the thread that waits for the child, so the
child is never wanted after that thread is gone.

libc is loaded in the parent (:func:`before_fork`), never in a child: a child
forked from a process with other threads must not take the dynamic loader's lock.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Final

WATCH_SECONDS: Final = 0.5
"""How often a child without the kernel's help checks that its parent is alive."""

_PR_SET_PDEATHSIG: Final = 1  # from <linux/prctl.h>
_ORPHANED: Final = 1  # the exit status of a child whose parent is gone (nobody reads it)


def before_fork() -> int:
    """The parent's side: call it just before ``os.fork()`` and give its result to the child.

    Returns:
        This process's id, which the child compares with its parent's.
    """
    _prctl()  # loaded here, in the parent, and inherited by every child
    return os.getpid()


def die_with_parent(parent: int) -> None:
    """The child's side, right after ``fork``: make sure it does not outlive ``parent``.

    Exits at once (``os._exit``, no exit handler runs) if ``parent`` is already
    gone; otherwise returns, with the kernel's parent-death signal set or, where
    that is not available, a watchdog thread started.

    Args:
        parent: What :func:`before_fork` returned in the parent.
    """
    if os.getppid() != parent:
        os._exit(_ORPHANED)
    if _parent_death_signal():
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(_ORPHANED)
        return
    threading.Thread(
        target=_watch_parent, args=(parent,), name="chartscore-lifeline", daemon=True
    ).start()


def _parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; False if it cannot."""
    prctl = _prctl()
    if prctl is None:
        return False
    with contextlib.suppress(OSError, ValueError, TypeError):
        return prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    return False


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux, None elsewhere or when it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # noqa: PLC0415 - only a process that forks needs it, only on Linux

        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None
    return function


def _watch_parent(parent: int) -> None:
    """Where the kernel cannot do it: exit the child as soon as its parent is gone."""
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(_ORPHANED)
