"""Read and check the predictions file in a second process while gold loads.

Reading and checking lines is most of a large run's work, and it splits
cleanly: the main process loads the gold set while a reader process parses and
validates predictions into compact rows; the main process then joins and
counts them in file order. On two cores a 10^6-row run takes about 40% less
time (docs/performance.md).

Checking predictions costs more than loading gold and counting together, so
the reader would finish last while the main process waits. Instead, whenever
the main process has caught up (nothing to read) it says so, and the reader
sends its next batch as raw lines for the main process to check itself, with
the same code as the one-process route. Both processes then stay busy to the
end, and the rows still arrive in file order.

What stays the same as the one-process route: the rows, their order, every
error code and line (the reader sends codes and line numbers, never content,
and errors are raised in the main process outside any ``except``), and the
report bytes.

How it is built, so that faults end cleanly (docs/faults.md lists the cases):

- The main process opens the predictions input itself (with every check of
  :mod:`chartscore.io.inputs`) and forks; the reader never touches a
  caller's object, so nothing of the caller's can reach its output.
- Messages travel through one anonymous pipe (``os.pipe``), as
  length-prefixed pickles of ``("rows", line_numbers, rows)`` or
  ``("lines", first_line_number, lines)``, then one ``("error", code, line,
  key)`` or ``("done",)``. The other way, the main process says "I have
  nothing to read" by setting one byte of an anonymous shared page
  (``mmap``), which the reader reads and clears between slices: a hint, so a
  lost or late one costs time, never rows, and a dead reader cannot make it
  fail. No semaphores, no named shared memory, no feeder thread. Each process
  closes the pipe end it does not use, so when the reader dies, however it
  dies, the main process reads the end of the pipe and raises
  ``internal_error`` instead of waiting forever.
- The reader keeps at most :data:`MAX_BYTES_AHEAD` bytes of messages waiting,
  so its memory stays bounded while the main process is busy with gold. The
  bound is in bytes and large enough that the reader rarely waits: at the
  earlier bound of 512 batches (a third of a 10^6-row file) it sat idle while
  gold loaded.
- The reader ignores Ctrl-C (the main process handles it and stops the
  reader), dies on SIGTERM, and dies with the main process
  (:mod:`chartscore.processes.lifeline`): on Linux the kernel kills it
  (``PR_SET_PDEATHSIG``) even if the main process is killed with SIGKILL;
  elsewhere a watchdog thread notices the new parent. It closes
  every inherited file descriptor it does not need and writes nothing on
  stdout or stderr (both point to ``/dev/null``).
- If the reader cannot start (no ``fork``, no process or pipe left), the main
  process reads the predictions itself: :meth:`PredictionReader.start`
  returns None.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import io
import mmap
import os
import pickle
import select
import signal
import struct
from collections.abc import Callable, Iterator
from typing import Any, Final, NoReturn

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.fastpath import check_batch, fast_prediction
from chartscore.io.inputs import InputStream
from chartscore.io.jsonl import iter_batches
from chartscore.processes.descriptors import keep_only
from chartscore.processes.lifeline import before_fork, die_with_parent
from chartscore.records.prediction_row import PredictionRow, new_row
from chartscore.records.rows import prediction_row

MAX_BYTES_AHEAD: Final = 128 << 20
"""Bytes of pickled rows the reader may hold while the main process is busy (about 48 a row)."""

Message = tuple[Any, ...]
_Mask = set[int | signal.Signals]

_LINES_PER_SLICE: Final = 64
_NO_BOUND: Final = 1 << 62
_HEADER: Final = struct.Struct("<Q")  # the byte length of the pickle that follows
_MAX_MESSAGE_BYTES: Final = 1 << 30
_SIGNALS: Final = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class PredictionReader:
    """A started reader process for one opened predictions input.

    Start it with :meth:`start`; call :meth:`stop` when done (also after an
    error): it ends and reaps the process.
    """

    def __init__(self, pid: int, messages: io.FileIO, waiting: mmap.mmap) -> None:
        self._pid: int | None = pid
        self._messages = messages
        self._waiting = waiting
        self._poller = select.poll()
        self._poller.register(messages.fileno(), select.POLLIN)

    @property
    def pid(self) -> int | None:
        """The reader's process id until :meth:`stop` (for tests and diagnostics)."""
        return self._pid

    @classmethod
    def start(cls, stream: InputStream) -> PredictionReader | None:
        """Fork a reader for ``stream``; None if it cannot start (then read it here).

        The caller keeps ``stream`` and should close its own copy: the reader
        has one of its own.
        """
        if not hasattr(os, "fork"):
            return None
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            waiting = mmap.mmap(-1, 1)  # anonymous and shared: the reader sees the same byte
        except (OSError, ValueError):
            os.close(read_end)
            os.close(write_end)
            return None
        previous = _hold_signals()
        parent = before_fork()
        pid = -1
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            _reader_process(
                stream,
                read_end=read_end,
                write_end=write_end,
                waiting=waiting,
                parent=parent,
                previous=previous,
            )
        messages: io.FileIO | None = None
        try:
            os.close(write_end)  # only the reader writes: its death ends the pipe
            if pid > 0:
                messages = io.FileIO(read_end, "rb")  # unbuffered: poll sees every byte
        except OSError:
            messages = None
        if messages is None:
            with contextlib.suppress(OSError):
                os.close(read_end)
            waiting.close()
            if pid > 0:
                _end(pid)
            _restore_signals(previous)
            return None
        reader = cls(pid, messages, waiting)
        try:
            _restore_signals(previous)  # a Ctrl-C held during fork is raised here
        except BaseException:
            reader.stop()
            raise
        return reader

    def stop(self) -> None:
        """End the reader process, whether or not it finished, and reap it."""
        with contextlib.suppress(OSError):
            self._messages.close()
        self._waiting.close()
        pid, self._pid = self._pid, None
        if pid is not None:
            _end(pid)

    def _next(self) -> Message | None:
        """The next message, or None if the reader died (end of pipe, torn message)."""
        if not self._poller.poll(0):
            self._waiting[0] = 1  # nothing to read: the reader sends raw lines next
        message: Message | None = None
        with contextlib.suppress(Exception):
            header = self._receive(_HEADER.size)
            if header is not None:
                (size,) = _HEADER.unpack(header)
                if size <= _MAX_MESSAGE_BYTES:
                    body = self._receive(size)
                    if body is not None:
                        message = pickle.loads(body)  # our own child wrote it
        return message

    def _receive(self, size: int) -> bytearray | None:
        """Exactly ``size`` bytes from the pipe, or None at its end."""
        buffer = bytearray(size)
        view = memoryview(buffer)
        received = 0
        while received < size:
            count = self._messages.readinto(view[received:])
            if not count:
                return None
            received += count
        return buffer

    def batches(
        self, progress: Callable[[int], None] | None = None
    ) -> Iterator[tuple[list[int], list[PredictionRow]]]:
        """Yield ``(line_numbers, rows)`` in file order; raise the reader's error, if any.

        Raises:
            ChartscoreError: the code and line the reader met, or
                ``internal_error`` if the reader process died.
        """
        source = InputKind.PREDICTIONS
        while True:
            message = self._next()
            if message is None or message[0] not in ("rows", "lines", "done", "error"):
                raise ChartscoreError(ErrorCode.INTERNAL_ERROR, input=source)
            if message[0] == "done":
                return
            if message[0] == "error":
                code, line, key = ErrorCode(message[1]), message[2], message[3]
                raise ChartscoreError(code, input=source, line=line, key=key)
            failure = None
            if message[0] == "lines":  # check them here, as the one-process route does
                numbers, rows, failure = check_batch(
                    message[1], message[2], source, fast_prediction, prediction_row
                )
            else:
                numbers, rows = message[1], [new_row(PredictionRow, row) for row in message[2]]
            if progress is not None and numbers:
                progress(numbers[-1])
            yield numbers, rows  # the rows before an error count first, in line order
            if failure is not None:
                raise failure


def _end(pid: int) -> None:
    """Kill the reader unless it has exited, and reap it (no zombie is left)."""
    with contextlib.suppress(ChildProcessError):  # already reaped by the caller's own handler
        finished, _ = os.waitpid(pid, os.WNOHANG)
        if finished == 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _hold_signals() -> _Mask | None:
    """Block Ctrl-C and termination signals across fork; returns the previous mask."""
    try:
        return signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def _restore_signals(previous: _Mask | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# --- the reader process ---------------------------------------------------------------


def _reader_process(
    stream: InputStream,
    *,
    read_end: int,
    write_end: int,
    waiting: mmap.mmap,
    parent: int,
    previous: _Mask | None,
) -> NoReturn:
    """The forked reader: never returns, never raises, never prints."""
    status = 1
    try:
        # Signals are still held: set the reader's own handling before letting them in.
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
        for number in _SIGNALS[1:]:
            signal.signal(number, signal.SIG_DFL)
        gc.disable()  # no cycles are made; and collections would copy the parent's pages
        os.close(read_end)
        die_with_parent(parent)
        _restore_signals(previous)
        keep_only({stream.fileno(), write_end})
        _send_rows(stream, _Channel(write_end, waiting))
        status = 0
    except BaseException:  # noqa: BLE001 - the main process reports internal_error
        status = 1
    finally:
        os._exit(status)


def _send_rows(stream: InputStream, channel: _Channel) -> None:
    """Check every prediction line and send rows in file order, then the outcome.

    Rows before an error are sent first, so the main process meets errors in
    line order (a join error on line 2 before a parse error on line 3).
    """
    outcome: Message = ("done",)
    try:
        for first, lines in iter_batches(stream, InputKind.PREDICTIONS):
            failure = _send_batch(first, lines, channel)
            if failure is not None:
                outcome = ("error", failure.code.value, failure.line, failure.key)
                break
    except ChartscoreError as error:
        outcome = ("error", error.code.value, error.line, error.key)
    channel.send(outcome)
    channel.finish()


def _send_batch(first: int, lines: list[str], channel: _Channel) -> ChartscoreError | None:
    """Check one batch in slices and send its rows; the error that ends it, if any.

    Between slices the reader tops up the pipe (it holds about two messages,
    and written only between batches it would run dry while the main process
    works through a backlog), and if the main process has caught up and asked
    for work, the rest of the batch goes to it as raw lines to check itself.
    """
    numbers: list[int] = []
    rows: list[PredictionRow] = []
    failure: ChartscoreError | None = None
    for start in range(0, len(lines), _LINES_PER_SLICE):
        if channel.main_is_waiting():
            if rows:
                channel.send(("rows", numbers, _plain(rows)))
            channel.send(("lines", first + start, lines[start:]))
            return None
        some_numbers, some_rows, failure = check_batch(
            first + start,
            lines[start : start + _LINES_PER_SLICE],
            InputKind.PREDICTIONS,
            fast_prediction,
            prediction_row,
        )
        numbers += some_numbers
        rows += some_rows
        if failure is not None:
            break
        channel.write_what_fits()
    if rows:
        channel.send(("rows", numbers, _plain(rows)))
    return failure


def _plain(rows: list[PredictionRow]) -> list[tuple[object, ...]]:
    # Plain tuples cross the pipe: pickling a named tuple goes through Python once a row
    # (about ten times a plain tuple's cost here); the main process rebuilds each in C.
    return [tuple(row) for row in rows]


class _Channel:
    """The reader's end of the pipe (length-prefixed pickles, a bounded backlog) and of the hint.

    Writes are non-blocking so the reader keeps reading while the main process
    loads gold; it waits only when more than :data:`MAX_BYTES_AHEAD` bytes are
    pending, and at the end. A main process that went away makes a write fail
    (EPIPE), which ends the reader.
    """

    def __init__(self, descriptor: int, waiting: mmap.mmap) -> None:
        os.set_blocking(descriptor, False)
        self._descriptor = descriptor
        self._waiting = waiting
        self._pending: collections.deque[memoryview] = collections.deque()
        self._pending_bytes = 0
        self._poller = select.poll()
        self._poller.register(descriptor, select.POLLOUT)

    def main_is_waiting(self) -> bool:
        """Whether the main process asked for work and has read everything sent.

        A request made while messages are still queued here is dropped: they
        are on their way, so the main process is not idle for long.
        """
        if not self._waiting[0]:
            return False
        self._waiting[0] = 0
        return not self._pending

    def send(self, message: Message) -> None:
        body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending.append(memoryview(_HEADER.pack(len(body)) + body))
        self._pending_bytes += _HEADER.size + len(body)
        self._pump(MAX_BYTES_AHEAD)

    def write_what_fits(self) -> None:
        """Write what the pipe takes now, without waiting."""
        if self._pending:
            self._pump(_NO_BOUND)

    def finish(self) -> None:
        self._pump(0)

    def _pump(self, backlog: int) -> None:
        """Write what the pipe takes now; wait while more than ``backlog`` bytes remain."""
        pending = self._pending
        while pending:
            try:
                written = os.write(self._descriptor, pending[0])
            except BlockingIOError:
                if self._pending_bytes <= backlog:
                    return
                self._poller.poll()
                continue
            self._pending_bytes -= written
            rest = pending[0][written:]
            if rest:
                pending[0] = rest
            else:
                pending.popleft()
