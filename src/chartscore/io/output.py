"""Writing outputs: one checked route for every output option, to a file or to stdout.

Every output of the command line (the report of ``score`` today; shared
reports, audits, comparisons and renderings later) goes through
:func:`write_output`, which keeps four promises:

- **An input is never overwritten.** A target that is the same file as any
  input (the same path, a symbolic link to it or a hard link: the same device
  and inode) is refused with ``output_is_input`` and nothing is touched.
- **Odd targets are refused.** A target that exists but is not a regular file
  (``/dev/null``, ``/dev/stdout``, a directory, any symbolic link, even one
  to a regular file: name the file itself), and a path that ends with a
  separator (``missing/``), give ``output_unwritable``.
- **Files are written atomically.** A temporary file beside the target is
  written, flushed to disk and renamed over the target, so the target holds
  the old content or the complete new one. On any failure, and on Ctrl-C or
  SIGTERM (the command line turns both into exceptions), the temporary file
  is removed.
- **Every byte is checked.** Short writes are retried and every write and
  flush is checked, so a full disk, a closed stdout or a reader that went
  away (``| head -c1``) gives ``output_unwritable``, never a silent
  truncation. Bytes go to the binary stream unchanged: the terminal's or
  ``PYTHONIOENCODING``'s encoding does not apply.

A command with several outputs (an import's gold, predictions and schema)
checks them together with :func:`check_outputs` (no two on one file:
``duplicate_output``) and writes them together with :func:`write_atomic_all`:
every one to a temporary file first, then all renamed, so a failure leaves
no new output beside old ones.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, Protocol

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, caller_items
from chartscore.io.inputs import (
    InputPath,
    StandardInput,
    identity,
    input_path,
    input_path_or_none,
)
from chartscore.io.signals import signals_held

_TEMPORARY_PREFIX: Final = ".chartscore-"
_TEMPORARY_SUFFIX: Final = ".tmp"
_TEMPORARY: Final = re.compile(r"\.chartscore-[A-Za-z0-9_]+\.tmp")


class BinaryOutput(Protocol):
    """What :func:`write_all` needs: ``write`` (may write less, or return None) and ``flush``."""

    def write(self, data: memoryview, /) -> int | None: ...

    def flush(self) -> None: ...


def _unwritable(
    hint: ErrorHint | None = None, *, kind: InputKind = InputKind.OUTPUT
) -> ChartscoreError:
    return ChartscoreError(ErrorCode.OUTPUT_UNWRITABLE, input=kind, hint=hint)


def _no_folder(kind: InputKind = InputKind.OUTPUT) -> ChartscoreError:
    """The target's folder does not exist (or is not a folder): said, the path never shown."""
    return _unwritable(ErrorHint.OUTPUT_FOLDER_MISSING, kind=kind)


def write_output(
    data: bytes,
    out: object,
    *,
    inputs: Sequence[InputPath | None],
    stdout: BinaryOutput | None = None,
    mode: int | None = None,
) -> None:
    """Write ``data`` to the file ``out``, or to ``stdout`` when ``out`` is None.

    Args:
        data: The bytes to write (a report is UTF-8 already).
        out: The target path (``str`` or ``os.PathLike``), or None for stdout.
        inputs: Every input of the command (None for an absent optional one);
            ``out`` must not be any of them.
        stdout: The binary stream for ``out=None`` (default: ``sys.stdout.buffer``).
        mode: The file's permission bits (``0o600`` for patient-level files);
            default: ``0o666`` less the umask, as ``open`` gives.

    Raises:
        ChartscoreError: ``output_is_input``, ``output_unwritable`` or
            ``invalid_path``; ``usage`` for ``inputs`` as :func:`check_output`.
    """
    if out is None:
        stream = stdout if stdout is not None else _standard_output()
        if stream is None:
            raise _unwritable()
        write_all(stream, data)
        return
    target = check_output(out, inputs=inputs)
    write_atomic(target, data, mode=mode)


def _standard_output() -> BinaryOutput | None:
    text = sys.stdout  # read at call time: callers and tests replace it
    if text is None:  # Python starts with sys.stdout = None when fd 1 is closed
        return None
    buffer: BinaryOutput | None = getattr(text, "buffer", None)
    with contextlib.suppress(OSError, ValueError):
        text.flush()
    return buffer


def check_output(out: object, *, inputs: Sequence[InputPath | None]) -> str:
    """Check an output target before anything is computed; return the path to write.

    Call it early (to fail fast); :func:`write_output` calls it again at the end.

    Raises:
        ChartscoreError: ``output_is_input`` (the target is an input, by any
            name, link or hard link), ``output_unwritable`` (it ends with a
            separator, exists but is not a regular file (a symbolic link, a
            device, a directory, a FIFO), or its folder does not exist (the
            error's hint says so), or ``invalid_path``; ``usage`` when ``inputs``
            is not iterable, or iterating it failed (the caller's exception is dropped).
    """
    listed = _listed(inputs)
    text = input_path(out, InputKind.OUTPUT)
    if isinstance(text, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.OUTPUT)
    separators = tuple(filter(None, (os.sep, os.altsep)))
    if not text or text.endswith(separators) or os.path.basename(text) in (".", ".."):
        raise _unwritable()
    check_target(text, listed, InputKind.OUTPUT)
    return text


def check_target(where: str, inputs: Iterable[object], kind: InputKind) -> None:
    """Refuse to write ``where`` (an output, or the ledger: ``kind``) over what it must not.

    Raises:
        ChartscoreError: ``output_is_input`` when it is one of ``inputs`` (by any name,
            link or hard link); ``output_unwritable`` when it exists but is not a regular
            file (a symbolic link, a device, a directory, a FIFO), or its folder does not
            exist (the error's hint says so). Each names ``kind``.
    """
    followed = identity(where)  # through any links: the file a write would replace
    if followed is not None and any(_identity(item) == followed for item in inputs):
        raise ChartscoreError(ErrorCode.OUTPUT_IS_INPUT, input=kind)
    status: os.stat_result | None = None
    problem = False
    try:
        status = os.lstat(where)  # the name itself: a link is not a regular file
    except (FileNotFoundError, NotADirectoryError):  # no such file, or no such folder
        status = None
    except (OSError, ValueError):
        problem = True
    if problem or (status is not None and not stat.S_ISREG(status.st_mode)):
        raise _unwritable(kind=kind)
    if not os.path.isdir(os.path.dirname(os.path.abspath(where))):
        raise _no_folder(kind)


def _listed(inputs: object) -> tuple[object, ...]:
    # The caller's inputs: a list or tuple is read directly (that runs no caller
    # code), any other iterable inside a guard whose exception is dropped.
    items = caller_items(inputs)
    if items is None:
        raise ChartscoreError(ErrorCode.USAGE)
    return items


def _identity(item: object) -> tuple[int, int] | None:
    if item is None:
        return None
    path = input_path_or_none(item, InputKind.OUTPUT)  # None: no file the output could be
    return None if path is None else identity(path)


def write_all(stream: BinaryOutput, data: bytes) -> None:
    """Write every byte of ``data`` to ``stream`` and flush it, checking each step.

    Retries short writes (an unbuffered stdout under ``python -u`` may write
    less than asked) and waits when a non-blocking stream is full.

    Raises:
        ChartscoreError: ``output_unwritable`` on any failure (closed stream,
            broken pipe, full disk), so a truncated output never looks complete.
    """
    view = memoryview(data)
    failed = False
    try:
        while view:
            written: int | None = None
            try:
                written = stream.write(view)
            except BlockingIOError as blocked:  # a non-blocking stream took part of it
                written = blocked.characters_written or None
            if written is None:  # a non-blocking stream is full: wait, then go on
                _wait_writable(stream)
                continue
            if written <= 0:
                failed = True
                break
            view = view[written:]
        if not failed:
            stream.flush()
    except (OSError, ValueError, TypeError, AttributeError):
        failed = True
    if failed:
        raise _unwritable()


def _wait_writable(stream: object) -> None:
    """Block until a non-blocking stream can take more bytes (or has failed)."""
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        raise OSError("the stream cannot be waited on")
    descriptor = fileno()
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(descriptor, select.POLLOUT)
        poller.poll()
    else:  # pragma: no cover - platforms without poll()
        select.select([], [descriptor], [])


def write_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` all at once: a reader sees the old file or the new one.

    Writes a temporary file beside the target, flushes it to disk and renames it
    over the target; on any failure (and on an exception such as
    KeyboardInterrupt) the temporary file is removed. It does not check the
    target: :func:`write_output` does, through :func:`check_output`. The file
    gets ``mode`` (for example ``0o600``), or by default ``0o666`` less the
    umask; the temporary file is created ``0o600``, so the bytes are never
    readable by others in between.

    Raises:
        ChartscoreError: ``output_unwritable``, or ``invalid_path`` for a path
            that is not a ``str`` or ``os.PathLike``.
    """
    write_atomic_all([(path, data, mode)])


def is_temporary_name(name: str) -> bool:
    """Whether a file name is one of this module's temporary files (``.chartscore-*.tmp``).

    A SIGKILL during a write can leave one behind; a folder that chartscore
    alone writes (the releases ledger) ignores them rather than take them for
    a foreign file.
    """
    return _TEMPORARY.fullmatch(name) is not None


def write_new(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> bool:
    """Write ``data`` to a new file ``path`` all at once, never replacing one.

    As :func:`write_atomic`, but the complete temporary file gets its name by a
    hard link, which fails when the name exists (a rename would replace it):
    two writers of one name cannot both succeed.

    Returns:
        True when written; False when ``path`` exists (nothing is written).

    Raises:
        ChartscoreError: ``output_unwritable`` (a file system without hard
            links included), or ``invalid_path``.
    """
    target = input_path(path, InputKind.OUTPUT)
    if isinstance(target, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.OUTPUT)
    folder = os.path.dirname(target) or os.curdir
    staged: list[str] = []
    exists = failed = False
    try:
        _stage(target, data, mode, staged)
        with signals_held():
            try:
                os.link(staged[0], target)
            except FileExistsError:
                exists = True
        if not exists:
            sync_directory(folder)
    except (OSError, ValueError, TypeError, ChartscoreError):
        failed = True
    finally:
        for temporary in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    if failed:
        raise _unwritable() if os.path.isdir(folder) else _no_folder()
    return not exists


def check_outputs(outs: Sequence[object], *, inputs: Sequence[InputPath | None]) -> list[str]:
    """Check every output of one command before anything is computed; return the paths.

    Each is checked as :func:`check_output` checks one, and no two may name one
    file: the same path by any spelling, or an existing file by any link.

    Raises:
        ChartscoreError: any code of :func:`check_output`; ``duplicate_output``
            when two outputs name one file.
    """
    checked: list[str] = []
    for out in outs:
        path = check_output(out, inputs=inputs)
        if any(_same_file(path, other) for other in checked):
            raise ChartscoreError(ErrorCode.DUPLICATE_OUTPUT, input=InputKind.OUTPUT)
        checked.append(path)
    return checked


def _same_file(first: str, second: str) -> bool:
    """Whether two output paths name one file (by spelling, or an existing file's identity)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    found = identity(first)
    return found is not None and found == identity(second)


def write_atomic_all(files: Sequence[tuple[str | os.PathLike[str], bytes, int | None]]) -> None:
    """Write several files as one: no target is replaced until every one is ready.

    Each ``(path, data, mode)`` is written as :func:`write_atomic` writes one, to
    a temporary file beside its target, flushed to disk and given its mode.
    Only when all of them are complete are they renamed over their targets, one
    after the other, with Ctrl-C and termination signals held back meanwhile.
    The renames of two files or more hold an exclusive ``flock`` on each target
    folder (:func:`folders_locked`), so two commands writing the same names at
    once leave one command's set whole, never a mixture of the two (one file is
    one rename, whole without a lock).
    A failure before that (a full disk on any of them, an exception such as
    KeyboardInterrupt) leaves every target as it was and removes every
    temporary file. A rename needs no space; if one still fails after others
    were done, the error says so (``some outputs were replaced, the others
    not``) and the temporary files left are removed. The targets are not
    checked: :func:`check_outputs` does that, before any work.

    Raises:
        ChartscoreError: ``output_unwritable``, or ``invalid_path`` for a path
            that is not a ``str`` or ``os.PathLike``.
    """
    targets: list[str] = []
    for path, _, _ in files:
        target = input_path(path, InputKind.OUTPUT)
        if isinstance(target, StandardInput):
            raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.OUTPUT)
        targets.append(target)
    folders = list(dict.fromkeys(os.path.dirname(target) or os.curdir for target in targets))
    staged: list[str] = []  # the temporary files made so far, in the targets' order
    renamed = 0
    failed = False
    try:
        for target, (_, data, mode) in zip(targets, files, strict=True):
            _stage(target, data, mode, staged)
        # One writer's set at a time, uncut. One file is one rename, atomic alone: it takes
        # no lock, so a folder this process holds locked already (the releases ledger's,
        # whose head is written so) is not waited on by this process itself, for ever.
        locked = folders_locked(folders) if len(targets) > 1 else contextlib.nullcontext()
        with locked, signals_held():
            for temporary, target in zip(staged, targets, strict=True):
                os.replace(temporary, target)
                renamed += 1
        for folder in folders:
            sync_directory(folder)
    except (OSError, ValueError, TypeError, ChartscoreError):
        failed = True
    finally:
        for temporary in staged[renamed:]:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    if failed:
        if renamed:
            raise _unwritable(ErrorHint.OUTPUTS_PARTLY_REPLACED)
        raise _unwritable() if all(os.path.isdir(folder) for folder in folders) else _no_folder()


def _stage(target: str, data: bytes, mode: int | None, staged: list[str]) -> None:
    """Write ``data`` to a new temporary file beside ``target`` (added to ``staged``)."""
    with signals_held():  # the temporary file is remembered as soon as it exists
        handle, temporary = tempfile.mkstemp(
            dir=os.path.dirname(target) or os.curdir,
            prefix=_TEMPORARY_PREFIX,
            suffix=_TEMPORARY_SUFFIX,
        )
        staged.append(temporary)
        stream = os.fdopen(handle, "wb")
    with stream:
        write_all(stream, data)
        os.fsync(stream.fileno())
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)


def sync_directory(directory: str) -> None:
    """Make a rename or a new file in ``directory`` durable where the platform can (best effort)."""
    with contextlib.suppress(OSError, AttributeError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@contextlib.contextmanager
def folders_locked(folders: Sequence[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on every folder in ``folders`` while the block runs.

    Why: two ``share --publication`` runs into one folder rename the same names; under
    the lock the later one's renames all follow the earlier one's, so the folder ends
    with one publication whole, not A from one and B from the other. The folders are
    locked in the order of their device and inode, however they are named, so two
    writers cannot wait on each other. Best effort: a folder that cannot be opened or
    locked (a file system without ``flock``) is written unlocked, as before.
    """
    opened: list[tuple[tuple[int, int], int]] = []
    try:
        for folder in folders:
            with contextlib.suppress(OSError):
                descriptor = os.open(folder, os.O_RDONLY)
                try:
                    status = os.fstat(descriptor)
                except OSError:
                    os.close(descriptor)  # not left open when it cannot be placed
                    raise
                opened.append(((status.st_dev, status.st_ino), descriptor))
        seen: set[tuple[int, int]] = set()
        for key, descriptor in sorted(opened):
            if key not in seen:  # one folder named two ways is locked once
                seen.add(key)
                with contextlib.suppress(OSError):
                    fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        for _, descriptor in opened:
            os.close(descriptor)  # closing releases its lock
