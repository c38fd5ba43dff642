"""Independent questions answered on both cores: half here, half in a forked child.

The audit's ranges and a suppression round's exact checks are many questions
about one solver whose answers do not depend on each other (each is an exact
optimum), so their order and their split cannot change an answer. Where the
work is large enough to pay for a process (:data:`MIN_QUESTIONS`), a child
forked with the solver answers the second half while this process answers the
first; the answers are put back in order, so the result is the one-process
result, byte for byte.

The child sends back only the answers (integers, booleans, None), pickled,
through a pipe. It never prints: whatever it raises (an error, an interrupt)
is caught and replaced by one fixed word, with no message, and this process
then answers that half itself (and raises what there is to raise, as the one
process would). Where ``fork`` is not available, or the work is small, one
process answers everything.

The child dies with this process (:mod:`chartscore.processes.lifeline`): if this process
is killed (SIGKILL, which it cannot catch to stop the child), the kernel kills
the child too, or elsewhere the child notices its new parent and exits.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from chartscore.disclosure import progress
from chartscore.processes.lifeline import before_fork, die_with_parent

T = TypeVar("T")
R = TypeVar("R")

MIN_QUESTIONS: Final = 64
"""Fewer questions than this are answered in one process (a fork would not pay)."""
_FAILED: Final = b"failed"

ENABLED = True
"""Whether the second core may be used (tests compare both ways)."""


def answers(question: Callable[[T], R], items: Sequence[T], *, worth: bool) -> list[R]:
    """``[question(item) for item in items]``, on two processes when ``worth`` it.

    Args:
        question: Answers one item; its answer must be picklable and depend on the
            item alone (not on which items were answered before).
        items: The questions, in order.
        worth: The caller's judgement that the work is large (with at least
            :data:`MIN_QUESTIONS` items): otherwise one process answers all.
    """
    if not (ENABLED and worth and len(items) >= MIN_QUESTIONS and hasattr(os, "fork")):
        return [question(item) for item in items]
    half = len(items) // 2
    first, second = items[:half], items[half:]
    forked = _fork(question, second)
    if forked is None:
        return [question(item) for item in items]
    pid, read = forked
    try:
        ours = [question(item) for item in first]
    except BaseException:
        _stop(pid, read)
        raise
    theirs: list[R] | None = _collect(pid, read)
    if theirs is None or len(theirs) != len(second):
        theirs = [question(item) for item in second]
    return ours + theirs


def _fork(question: Callable[[T], R], items: Sequence[T]) -> tuple[int, int] | None:
    # A child answering ``items``: its pid and the pipe's read end (None: no fork).
    read, write = os.pipe()
    parent = before_fork()
    pid = -1
    with contextlib.suppress(OSError):
        pid = os.fork()
    if pid < 0:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: answer, send, and leave without running any exit handler
        os.close(read)
        payload = _FAILED
        try:
            die_with_parent(parent)  # a parent killed mid-solve (SIGKILL) takes the child along
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers for both
            progress.silence()
            payload = pickle.dumps([question(item) for item in items])
        except BaseException:  # noqa: BLE001 - nothing of it leaves the child
            payload = _FAILED
        with contextlib.suppress(BaseException):
            view = memoryview(payload)
            while view:
                view = view[os.write(write, view) :]
        os._exit(0)
    os.close(write)
    return pid, read


def _collect(pid: int, read: int) -> list[R] | None:
    # Everything the child sent, then the child reaped; None when it failed.
    chunks: list[bytes] = []
    try:
        with os.fdopen(read, "rb") as pipe:
            while chunk := pipe.read(1 << 16):
                chunks.append(chunk)
    except BaseException:
        _stop(pid, None)
        raise
    os.waitpid(pid, 0)
    payload = b"".join(chunks)
    if not payload or payload == _FAILED:
        return None
    loaded: list[R] | None = None
    with contextlib.suppress(Exception):
        loaded = pickle.loads(payload)
    return loaded if isinstance(loaded, list) else None


def _stop(pid: int, read: int | None) -> None:
    # The child is no longer wanted (this process is failing): end it and reap it.
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)
    if read is not None:
        with contextlib.suppress(OSError):
            os.close(read)
