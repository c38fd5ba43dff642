"""Read and check the predictions file in a second process while gold loads.

Reading and checking lines is most of a large run's work, and it splits
cleanly: the main process loads the gold set while a reader process parses and
validates predictions into compact rows; the main process then joins and
counts them in file order. On two cores a 10^6-row run takes about a third
less time (docs/performance.md).

What stays the same as the one-process route: the rows, their order, every
error code and line (the reader sends codes and line numbers, never content,
and errors are raised in the main process outside any ``except``), and the
report bytes. Rows travel through an anonymous pipe between the two processes
of one chartscore run; nothing is written to disk. The reader buffers at most
:data:`MAX_BATCHES_AHEAD` batches, so memory stays bounded.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
from collections.abc import Callable, Iterator
from typing import Any, Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.fastpath import check_batch, fast_prediction
from chartscore.io.jsonl import iter_batches
from chartscore.io.records import prediction_row
from chartscore.model import Value

MAX_BATCHES_AHEAD: Final = 512
"""Batches (one per 256 KiB of input) the reader may run ahead of the main process."""

_POLL_SECONDS: Final = 1.0
PredictionRow = tuple[str, str, Value, bool]
# Messages from the reader: ("rows", line_numbers, rows), ("error", code, line, key),
# ("crashed",) and ("done",).
Message = tuple[object, ...]


def _read(path: str | os.PathLike[str], out: multiprocessing.Queue[Message]) -> None:
    """The reader process: check every prediction line, send rows in file order.

    Rows before an error are sent first, so the main process meets errors in
    line order (a join error on line 2 before a parse error on line 3).
    """
    source = InputKind.PREDICTIONS
    message: Message = ("crashed",)
    stream = None
    with contextlib.suppress(OSError, ValueError, TypeError):
        stream = open(path, "rb")  # noqa: SIM115 - closed by the with-block below
    if stream is None:
        with contextlib.suppress(BaseException):
            out.put(("error", ErrorCode.FILE_UNREADABLE.value, None))
        return
    try:
        with stream:
            message = ("done",)
            for first, lines in iter_batches(stream, source):
                numbers, rows, failure = check_batch(
                    first, lines, source, fast_prediction, prediction_row
                )
                out.put(("rows", numbers, rows))
                if failure is not None:
                    message = ("error", failure.code.value, failure.line, failure.key)
                    break
    except ChartscoreError as error:
        message = ("error", error.code.value, error.line, error.key)
    except KeyboardInterrupt:
        return  # the main process reports the interruption
    except BaseException:  # noqa: BLE001 - never let a traceback reach stderr
        message = ("crashed",)
    with contextlib.suppress(BaseException):
        out.put(message)


class PredictionReader:
    """A started reader process for one predictions file.

    Call :meth:`stop` when done (also after an error): it ends the process.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        methods = multiprocessing.get_all_start_methods()
        # typeshed's BaseContext lacks Process; the concrete contexts have it.
        context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._queue: multiprocessing.Queue[Message] = context.Queue(MAX_BATCHES_AHEAD)
        self._process = context.Process(target=_read, args=(path, self._queue), daemon=True)
        self._process.start()

    def stop(self) -> None:
        """End the reader process, whether or not it finished."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)
        self._queue.close()

    def _next(self) -> Message:
        while True:
            with contextlib.suppress(queue.Empty):
                return self._queue.get(timeout=_POLL_SECONDS)
            if not self._process.is_alive():
                with contextlib.suppress(queue.Empty):
                    return self._queue.get(timeout=_POLL_SECONDS)
                return ("crashed",)

    def batches(
        self, progress: Callable[[int], None] | None = None
    ) -> Iterator[tuple[list[int], list[PredictionRow]]]:
        """Yield ``(line_numbers, rows)`` in file order; raise the reader's error, if any.

        Raises:
            ChartscoreError: the code and line the reader met, or
                ``internal_error`` if the reader process died.
        """
        while True:
            message = self._next()
            kind = message[0]
            if kind == "rows":
                numbers, rows = message[1], message[2]
                if progress is not None and numbers:
                    progress(numbers[-1])  # type: ignore[index]
                yield numbers, rows  # type: ignore[misc]
            elif kind == "done":
                return
            elif kind == "error":
                code, line, key = message[1], message[2], message[3:4]
                raise ChartscoreError(
                    ErrorCode(code),  # type: ignore[arg-type]
                    input=InputKind.PREDICTIONS,
                    line=line,  # type: ignore[arg-type]
                    key=key[0] if key else None,  # type: ignore[arg-type]
                )
            else:
                raise ChartscoreError(ErrorCode.INTERNAL_ERROR, input=InputKind.PREDICTIONS)
