"""The ledger's files: its key file, its gold identity, appending a line, reading lines back.

**Appending is safe** (docs/ledger.md#appending):

- one ``write`` of the whole line (or of all of a batch's lines) to a descriptor
  opened ``O_APPEND``, under an exclusive ``flock`` held from the checks to
  ``fsync``, with Ctrl-C and termination signals held back from the write to the
  ``fsync``: two processes appending at once never interleave, and a reader sees
  whole lines;
- a write or ``fsync`` that fails (a full disk) is undone under the lock (the file
  is cut back to its length), so an append adds every line or none
  (``ledger_unwritable``); only if that fails too is a cut line left
  (``ledger_cut_short``);
- a line that a crash cut short (the file does not end with ``\\n``) is closed with
  a ``\\n`` written in the same ``write`` as the next line, so the next line is whole
  and the damaged one is skipped, counted and reported by the reader;
- the file is created with mode ``0600``; an existing ledger that group or others
  may read or write is refused (``file_exposed``), as are a symbolic link
  (``O_NOFOLLOW``), anything but a regular file, and a file that is not a ledger
  (its first bytes are not :data:`~chartscore.ledger.entry.LINE_PREFIX`).

**The key** is read from a file named by ``--ledger-key`` or by the environment
variable :data:`KEY_FILE_VARIABLE`; never from the command line itself, where
``ps`` and shell histories would show it. The file must be a regular file (a
symbolic link to one is fine: secret mounts use them) that group and others cannot
read or write, holding 32 to 4096 bytes (a text key's one final line end is not part of it).

Errors name ``ledger``, ``ledger_key`` or ``gold``, never a path or a byte of a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, caller_items
from chartscore.io.fastpath import fast_gold
from chartscore.io.feed import feed_rows
from chartscore.io.inputs import (
    InputPath,
    StandardInput,
    input_path,
    input_path_or_none,
    open_input,
)
from chartscore.io.output import check_target, sync_directory
from chartscore.io.signals import signals_held
from chartscore.ledger.adjudication import ADJUDICATION, AdjudicationEntry
from chartscore.ledger.entry import LINE_PREFIX, MAX_LINE_BYTES, LedgerEntry
from chartscore.ledger.runs import Ledger, LedgerAdjudication, LedgerRun
from chartscore.records.gold_identity import (
    MAX_KEY_BYTES,
    MIN_KEY_BYTES,
    GoldIdentity,
    LedgerKey,
)
from chartscore.records.rows import gold_row

KEY_FILE_VARIABLE: Final = "CHARTSCORE_LEDGER_KEY_FILE"
"""The environment variable naming the ledger key file when ``--ledger-key`` is not given."""
LEDGER_MODE: Final = 0o600
"""A new ledger's mode: read and written by its owner only."""
MIN_DISTINCT_KEY_BYTES: Final = 8
"""A key with fewer distinct byte values (a file of zeros, ``aaaa...``) is refused."""

_EXPOSED_BITS: Final = 0o077
_READ_CHUNK: Final = 1 << 20
_ADJUDICATION_KIND: Final = f'"kind":"{ADJUDICATION}"'.encode()

FileState = tuple[int, int, int, int]
"""A regular file's (device, inode, size, modification time in ns): has it changed?"""


# --- the key ----------------------------------------------------------------------


def load_ledger_key(
    path: InputPath | None = None, *, environ: Mapping[str, str] | None = None
) -> LedgerKey:
    """Read the ledger key from ``path``, or from the file :data:`KEY_FILE_VARIABLE` names.

    Raises:
        ChartscoreError: ``ledger_key_missing`` when neither names a file;
            ``usage`` for an ``environ`` that is not a ``dict`` (or None: ``os.environ``);
            ``invalid_path (ledger_key)`` for standard input; ``file_unreadable
            (ledger_key)``; ``file_exposed (ledger_key)`` when group or others
            may read or write it; ``ledger_key_invalid (ledger_key)`` for fewer
            than 32 or more than 4096 bytes (see :func:`key_bytes`), or fewer than
            8 distinct bytes.
    """
    source = InputKind.LEDGER_KEY
    where = input_path(ledger_key_file(path, environ=environ), source)
    if isinstance(where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=source)
    code: ErrorCode | None = None
    data = b""
    descriptor = -1
    try:
        descriptor = os.open(where, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            code = ErrorCode.FILE_UNREADABLE
        elif status.st_mode & _EXPOSED_BITS:
            code = ErrorCode.FILE_EXPOSED
        else:
            data = os.read(descriptor, MAX_KEY_BYTES + 3)
    except (OSError, ValueError):
        code = ErrorCode.FILE_UNREADABLE
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    if code is not None:
        raise ChartscoreError(code, input=source)
    secret = key_bytes(data)
    if not MIN_KEY_BYTES <= len(secret) <= MAX_KEY_BYTES or (
        len(set(secret)) < MIN_DISTINCT_KEY_BYTES
    ):
        raise ChartscoreError(ErrorCode.LEDGER_KEY_INVALID, input=source)
    return LedgerKey(secret)


def ledger_key_file(
    path: InputPath | None = None, *, environ: Mapping[str, str] | None = None
) -> InputPath:
    """The ledger key file: ``path``, or else the file :data:`KEY_FILE_VARIABLE` names.

    A command skips it among its inputs (``batch`` never reads it as a run).

    Raises:
        ChartscoreError: ``ledger_key_missing`` when neither names a file; ``usage``
            for an ``environ`` that is not a ``dict`` (or None: ``os.environ``).
    """
    if path is not None:
        return path
    if environ is None:
        environ = os.environ
    elif type(environ) is not dict:  # a caller's mapping is never asked anything
        raise ChartscoreError(ErrorCode.USAGE)
    named = environ.get(KEY_FILE_VARIABLE)
    if type(named) is not str or not named:
        raise ChartscoreError(ErrorCode.LEDGER_KEY_MISSING, input=InputKind.LEDGER_KEY)
    return named


def key_bytes(data: bytes) -> bytes:
    """The key a key file's bytes hold: a text key's one final line end is not part of it.

    A file of printable ASCII (``openssl rand -hex 32 > key``) may end with ``\n`` or
    ``\r\n``, which is dropped; any other file (``head -c 32 /dev/urandom > key``) is
    the key, whole, whatever its last bytes are.
    """
    text = data.removesuffix(b"\n")
    if text is not data:
        text = text.removesuffix(b"\r")
        if text and all(0x20 <= byte <= 0x7E for byte in text):
            return text
    return data


# --- the gold set's identity ------------------------------------------------------------


def file_state(path: InputPath) -> FileState | None:
    """A regular file's state (see :data:`FileState`), or None (standard input, no file)."""
    where = input_path_or_none(path, InputKind.GOLD)
    if where is None or isinstance(where, StandardInput):
        return None
    try:
        status = os.stat(where)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def gold_file_identity(
    gold: InputPath, key: LedgerKey, *, also: Callable[..., object] | None = None
) -> GoldIdentity:
    """The keyed identity of a gold JSON Lines file, read as ``score`` reads it.

    Args:
        gold: The gold file (a path; gzip is read).
        key: The ledger key.
        also: Called with every row as well (a scorer's ``add_gold``, to check the
            gold set in the same pass); its errors are located by line.

    Raises:
        ChartscoreError: every reading code of a gold file, by line;
            ``invalid_path (gold)`` for standard input (it cannot be read twice).
    """
    identity = GoldIdentity(key)
    where = input_path(gold, InputKind.GOLD)
    if isinstance(where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.GOLD)
    add: Callable[..., object] = identity.add
    if also is not None:
        checked_add = also

        def add(case_id: str, field_id: str, field_type: str, value: object) -> None:
            checked_add(case_id, field_id, field_type, value)
            identity.add(case_id, field_id, field_type, value)  # type: ignore[arg-type]

    with open_input(where, InputKind.GOLD) as stream:
        feed_rows(stream, InputKind.GOLD, fast=fast_gold, checked=gold_row, add=add, progress=None)
    return identity


# --- appending ------------------------------------------------------------------------


def check_ledger(ledger: InputPath, *, inputs: Sequence[InputPath | None] = ()) -> str:
    """Check a ledger path before any work: never an input, never standard output, and an
    existing ledger one that the append would take (a regular file, mode 0600, a ledger).

    Raises:
        ChartscoreError: ``invalid_path (ledger)``, ``output_is_input (ledger)``, or
            ``output_unwritable (ledger)`` when it exists but is not a regular file
            (a symbolic link included) or its folder does not exist; ``file_exposed
            (ledger)``, ``not_a_ledger (ledger)`` and ``ledger_unwritable (ledger)`` as
            :func:`append_lines`; ``usage`` when ``inputs`` cannot be read as a collection.
    """
    where = input_path(ledger, InputKind.LEDGER)
    if isinstance(where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.LEDGER)
    listed = caller_items(inputs)
    if listed is None:
        raise ChartscoreError(ErrorCode.USAGE)
    check_target(where, listed, InputKind.LEDGER)
    code = _existing_ledger_refused(where)
    if code is not None:
        raise ChartscoreError(code, input=InputKind.LEDGER)
    return where


class Appended:
    """What :func:`append_lines` has written: its caller's record of a stopped append.

    ``lines`` is set once every line is written and synced, while Ctrl-C and
    termination signals are still held back: a caller stopped by one right
    after the append can tell that its lines were recorded (``batch`` says so).
    """

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines = 0


def append_line(ledger: InputPath, line: bytes, *, inputs: Sequence[InputPath | None] = ()) -> None:
    """Append one whole line to the ledger: locked, one ``write``, ``fsync``; mode 0600.

    As :func:`append_lines` with one line.
    """
    append_lines(ledger, (line,), inputs=inputs)


def append_lines(
    ledger: InputPath,
    lines: Sequence[bytes],
    *,
    inputs: Sequence[InputPath | None] = (),
    appended: Appended | None = None,
) -> None:
    """Append whole lines to the ledger, all or none: locked, one ``write``, ``fsync``.

    The lines go in one ``write`` under the lock, with Ctrl-C and termination
    signals held back until they are synced; if writing or syncing fails (a
    full disk), the file is cut back to its length before the append, still
    under the lock. So the ledger gains every line or none, and nothing cut.

    Args:
        ledger: The ledger file; created (mode 0600) if it does not exist.
        lines: Ledger lines, each ending with ``\\n`` (:meth:`LedgerEntry.to_line`).
        inputs: The command's inputs: the ledger is never one of them.
        appended: Set to the number of lines once they are synced (see :class:`Appended`).

    Raises:
        ChartscoreError: as :func:`check_ledger`; ``file_exposed (ledger)`` when
            group or others may read or write it; ``not_a_ledger (ledger)`` when
            the file holds something else; ``ledger_unwritable (ledger)`` when
            it cannot be opened, written or synced (the file is as it was; a
            new one is empty); ``ledger_cut_short (ledger)`` when it could not
            be cut back either (its last line is then cut, and skipped by
            readers); ``usage`` for ``lines`` that are not bytes starting with
            the ledger's prefix and ending with one ``\\n``, or for ``appended``
            that is not an :class:`Appended`.
    """
    listed = caller_items(lines)
    if (
        not listed
        or any(not _is_line(line) for line in listed)
        or (appended is not None and type(appended) is not Appended)
    ):
        raise ChartscoreError(ErrorCode.USAGE)
    data = b"".join(listed)  # type: ignore[arg-type]
    where = check_ledger(ledger, inputs=inputs)
    code: ErrorCode | None = None
    hint: ErrorHint | None = None
    descriptor = -1
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        descriptor = os.open(where, flags | os.O_CLOEXEC, LEDGER_MODE)
        code = _append_locked(descriptor, data, appended, len(listed))
    except FileNotFoundError:
        code, hint = ErrorCode.LEDGER_UNWRITABLE, ErrorHint.OUTPUT_FOLDER_MISSING
    except (OSError, ValueError):
        code = ErrorCode.LEDGER_UNWRITABLE
    finally:
        if descriptor >= 0:
            with contextlib.suppress(OSError):
                os.close(descriptor)  # closing releases the lock
    if code is not None:
        raise ChartscoreError(code, input=InputKind.LEDGER, hint=hint)
    sync_directory(os.path.dirname(os.path.abspath(where)))


def _is_line(line: object) -> bool:
    return (
        type(line) is bytes
        and line.startswith(LINE_PREFIX)
        and line.endswith(b"\n")
        and b"\n" not in line[:-1]
    )


def _append_locked(
    descriptor: int, data: bytes, appended: Appended | None, count: int
) -> ErrorCode | None:
    """The checks and the write, under the lock; an error code or None. Raises OSError."""
    code = _kind_refused(descriptor)
    if code is not None:
        return code
    os.set_blocking(descriptor, True)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    size = os.fstat(descriptor).st_size  # after the lock: every earlier line is whole
    if size:
        if not _starts_as_ledger(descriptor, size):
            return ErrorCode.NOT_A_LEDGER
        if os.pread(descriptor, 1, size - 1) != b"\n":
            data = b"\n" + data  # a line a crash cut short: close it, keep these whole
    with signals_held():
        try:
            _write_all(descriptor, data)
            os.fsync(descriptor)
        except OSError:
            return _cut_back(descriptor, size)
        if appended is not None:  # before a signal held back meanwhile can stop the caller
            appended.lines = count
    return None


def _kind_refused(descriptor: int) -> ErrorCode | None:
    """Why an open ledger file cannot take lines (not a regular file, or exposed), or None."""
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        return ErrorCode.OUTPUT_UNWRITABLE
    if status.st_mode & _EXPOSED_BITS:
        return ErrorCode.FILE_EXPOSED
    return None


def _starts_as_ledger(descriptor: int, size: int) -> bool:
    """Whether a non-empty file begins with the ledger's prefix (or a cut-short part of it)."""
    head = os.pread(descriptor, len(LINE_PREFIX), 0)
    return head == LINE_PREFIX or (size < len(LINE_PREFIX) and LINE_PREFIX.startswith(head))


def _existing_ledger_refused(where: str) -> ErrorCode | None:
    """The append's own checks on an existing ledger, made before any work (unlocked: the
    append makes them again under its lock); None when it is absent or would take lines."""
    descriptor = -1
    try:
        descriptor = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        code = _kind_refused(descriptor)
        if code is None:
            size = os.fstat(descriptor).st_size
            if size and not _starts_as_ledger(descriptor, size):
                code = ErrorCode.NOT_A_LEDGER
    except FileNotFoundError:
        code = None  # created by the append
    except OSError:
        code = ErrorCode.LEDGER_UNWRITABLE
    finally:
        if descriptor >= 0:
            with contextlib.suppress(OSError):
                os.close(descriptor)
    return code


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        if written <= 0:
            raise OSError("nothing written")
        view = view[written:]


def _cut_back(descriptor: int, size: int) -> ErrorCode:
    """Undo a failed append (the file back to ``size`` bytes); the code that says how it ended."""
    try:
        os.ftruncate(descriptor, size)
    except OSError:
        return ErrorCode.LEDGER_CUT_SHORT
    with contextlib.suppress(OSError):
        os.fsync(descriptor)
    return ErrorCode.LEDGER_UNWRITABLE


# --- reading --------------------------------------------------------------------------


def read_ledger(ledger: InputPath) -> Ledger:
    """Read a ledger: every valid line, and the numbers of the damaged ones (skipped).

    Run lines are :attr:`Ledger.runs`; the lines ``import adjudication`` appends,
    which link two gold versions, are :attr:`Ledger.adjudications`. A damaged line
    (cut short by a crash, or edited) does not stop the reading: it is counted, and
    ``chartscore ledger show`` names its line number.

    Raises:
        ChartscoreError: as :func:`ledger_lines`.
    """
    runs: list[LedgerRun] = []
    damaged: list[int] = []
    adjudications: list[LedgerAdjudication] = []
    for number, data in ledger_lines(ledger):
        entry: LedgerEntry | None = None
        link: AdjudicationEntry | None = None
        if data is not None:
            try:
                entry = LedgerEntry.from_line(data)
            except ChartscoreError:
                entry = None
        if entry is None and data is not None and _ADJUDICATION_KIND in data:
            try:
                link = AdjudicationEntry.from_line(data)
            except ChartscoreError:
                link = None
        if entry is not None:
            runs.append(LedgerRun(number, entry))
        elif link is not None:
            adjudications.append(LedgerAdjudication(number, link))
        else:
            damaged.append(number)
    return Ledger.of(runs, damaged, adjudications)


def ledger_lines(ledger: InputPath) -> Iterator[tuple[int, bytes | None]]:
    """Every line of a ledger as ``(1-based line number, bytes without the line end)``.

    A line longer than :data:`~chartscore.ledger.entry.MAX_LINE_BYTES` is given as
    None (it is damaged: no ledger line is that long). An empty file has no lines.

    Raises:
        ChartscoreError: ``invalid_path (ledger)``, ``file_unreadable (ledger)``,
            ``not_a_ledger (ledger line 1)`` when the file does not start as a
            ledger does.
    """
    where = input_path(ledger, InputKind.LEDGER)
    with open_input(where, InputKind.LEDGER) as stream:
        number = 0
        pending = b""
        skipping = False
        first = True
        while True:
            chunk = _read(stream)
            if first and chunk:
                first = False
                if not LINE_PREFIX.startswith(chunk[: len(LINE_PREFIX)]):
                    raise ChartscoreError(ErrorCode.NOT_A_LEDGER, input=InputKind.LEDGER, line=1)
            if not chunk:
                if pending or skipping:
                    yield number + 1, None if skipping else pending
                return
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    break
                number += 1
                piece = pending + chunk[start:end]
                yield number, None if skipping or len(piece) > MAX_LINE_BYTES else piece
                pending, skipping, start = b"", False, end + 1
            if not skipping:
                pending += chunk[start:]
                if len(pending) > MAX_LINE_BYTES:
                    pending, skipping = b"", True


def _read(stream: object) -> bytes:
    data = b""
    failed = False
    try:
        data = stream.read(_READ_CHUNK)  # type: ignore[attr-defined]
    except OSError:
        failed = True
    if failed:
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=InputKind.LEDGER)
    return data
