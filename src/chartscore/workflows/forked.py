"""Run independent tasks in forked processes, a few at a time; results in task order.

``chartscore batch`` scores one prediction file per task. Each task runs in a child
process forked for it (at most ``jobs`` at once), which sends back one pickle through
an anonymous pipe: the task's result, or the :class:`~chartscore.ChartscoreError` it
raised (value-free by construction), or nothing at all if it died, which the parent
reports as ``internal_error`` for that task alone. A failed task never stops the
others.

The children are built like the prediction reader's (:mod:`chartscore.io.parallel`):
Ctrl-C, SIGTERM and SIGHUP are held across ``fork``; a child ignores Ctrl-C (the
parent handles it), dies on SIGTERM, dies with the parent however the parent dies,
SIGKILL included (:mod:`chartscore.processes.lifeline`: Linux's ``PR_SET_PDEATHSIG``), points
stdout and stderr at ``/dev/null`` and closes every other inherited descriptor, so
nothing it might print reaches a terminal or a log. Whatever stops the parent (an
error, Ctrl-C, SIGTERM) kills and reaps every child still running. Without ``fork``
(or with ``jobs=1``) the tasks run in this process, one after another, with the same
results.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeVar, cast

from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.processes.descriptors import keep_only
from chartscore.processes.lifeline import before_fork, die_with_parent

T = TypeVar("T")
Outcome = tuple[T | None, ChartscoreError | None]
"""A task's result, or the error it failed with (exactly one is not None)."""

_SIGNALS: Final = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
_READ_BYTES: Final = 1 << 20


def run_tasks(tasks: Sequence[Callable[[], T]], jobs: int) -> list[Outcome[T]]:
    """Run every task (at most ``jobs`` at once); one outcome per task, in task order.

    A task's :class:`ChartscoreError` is its outcome's error; any other exception
    (or, in a child, its death) is ``internal_error`` for that task.

    Raises:
        ChartscoreError: ``usage`` for ``jobs`` not an int from 1.
    """
    if type(jobs) is not int or jobs < 1:
        raise ChartscoreError(ErrorCode.USAGE)
    if jobs == 1 or len(tasks) <= 1 or not hasattr(os, "fork"):
        return [_run_here(task) for task in tasks]
    return _Children(tasks, jobs).run()


def _run_here(task: Callable[[], T]) -> Outcome[T]:
    failure = ChartscoreError(ErrorCode.INTERNAL_ERROR)
    try:
        return task(), None
    except ChartscoreError as error:
        failure = error
    except Exception:  # noqa: BLE001 - a bug in one task does not stop the others
        pass
    return None, _fresh(failure)


def _fresh(error: ChartscoreError) -> ChartscoreError:
    """The same error without its traceback (whose frames hold values) or context.

    A copy by pickle, with its traceback and chain cleared as well: a library that
    makes exceptions pickle their tracebacks (distributed installs tblib's) keeps them.
    """
    fresh = cast(ChartscoreError, pickle.loads(pickle.dumps(error)))
    fresh.__traceback__ = fresh.__context__ = fresh.__cause__ = None
    return fresh


class _Children(Generic[T]):
    """The parent's side: forks, reads, reaps; kills whatever is left on the way out."""

    def __init__(self, tasks: Sequence[Callable[[], T]], jobs: int) -> None:
        self._tasks = tasks
        self._jobs = jobs
        self._outcomes: list[Outcome[T] | None] = [None] * len(tasks)
        self._running: dict[int, tuple[int, int, bytearray]] = {}  # fd -> (pid, task, bytes)

    def run(self) -> list[Outcome[T]]:
        pending = list(range(len(self._tasks)))
        pending.reverse()
        try:
            while pending or self._running:
                while pending and len(self._running) < self._jobs:
                    index = pending.pop()
                    if not self._start(index):
                        self._outcomes[index] = _run_here(self._tasks[index])
                self._read_some()
        finally:
            self._kill_all()
        return [outcome for outcome in self._outcomes if outcome is not None]

    def _start(self, index: int) -> bool:
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return False
        previous = _hold_signals()
        parent = before_fork()
        try:
            pid = os.fork()
        except OSError:
            _restore_signals(previous)
            os.close(read_end)
            os.close(write_end)
            return False
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _child(self._tasks[index], write_end, previous, parent)
        _restore_signals(previous)
        os.close(write_end)
        self._running[read_end] = (pid, index, bytearray())
        return True

    def _read_some(self) -> None:
        ready, _, _ = select.select(list(self._running), [], [])
        for descriptor in ready:
            chunk = b""
            with contextlib.suppress(OSError):
                chunk = os.read(descriptor, _READ_BYTES)
            pid, index, received = self._running[descriptor]
            if chunk:
                received += chunk
                continue
            del self._running[descriptor]
            os.close(descriptor)
            _reap(pid)
            self._outcomes[index] = _decode(bytes(received))

    def _kill_all(self) -> None:
        for descriptor, (pid, _, _) in list(self._running.items()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _reap(pid)
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self._running.clear()


def _decode(data: bytes) -> Outcome[T]:
    """A child's message, or ``internal_error`` when it died without sending a whole one."""
    outcome: object = None
    with contextlib.suppress(Exception):
        outcome = pickle.loads(data)
    if (
        type(outcome) is tuple
        and len(outcome) == 2
        and (outcome[1] is None or type(outcome[1]) is ChartscoreError)
    ):
        return cast("Outcome[T]", outcome)
    return None, ChartscoreError(ErrorCode.INTERNAL_ERROR)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _hold_signals() -> set[int | signal.Signals] | None:
    try:
        return signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def _restore_signals(previous: set[int | signal.Signals] | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _child(task: Callable[[], object], write_end: int, previous: object, parent: int) -> None:
    """The forked child: run the task, send its outcome, exit; never returns or prints."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
        for number in _SIGNALS[1:]:
            signal.signal(number, signal.SIG_DFL)
        die_with_parent(parent)
        _restore_signals(previous)  # type: ignore[arg-type]
        keep_only({write_end})
        data = pickle.dumps(_run_here(task))
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        status = 0
    except BaseException:  # noqa: BLE001 - the parent reports internal_error
        pass
    finally:
        os._exit(status)
