"""Opening inputs as people have them: regular files, gzip files and standard input.

Every input (gold, predictions, schema) is opened here, with the same rules:

- A path is a ``str`` or an ``os.PathLike`` whose ``__fspath__`` gives a
  ``str``; :data:`STDIN` (``-`` on the command line) names standard input.
  Anything else (bytes, an int file descriptor, a path object whose
  ``__fspath__`` raises) is refused with ``invalid_path``, and the caller's
  exception is dropped, never chained.
- A named file must be a regular file. It is opened with ``O_NONBLOCK`` and
  checked with ``fstat`` before anything is read, so a FIFO, a device or a
  directory is refused with ``file_unreadable`` at once instead of blocking
  for a writer that may never come. Standard input is the explicit way to
  stream.
- A file (or standard input) that starts with the gzip magic bytes
  ``1f 8b`` is decompressed while it is read, whatever its name. The
  decompressed stream is read in blocks, so memory stays bounded: a gzip
  bomb meets the readers' limits (1 MiB per line, 16 MiB per schema) after
  decompressing little more than that. An input opened with a ``limit``
  (the importers' exports) is refused with ``file_too_large`` as soon as
  more than ``limit`` bytes have been read, counted after decompression.
"""

from __future__ import annotations

import contextlib
import enum
import gzip
import io
import os
import stat
import zlib
from typing import BinaryIO, Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind

GZIP_MAGIC: Final = b"\x1f\x8b"
"""The first two bytes of every gzip member (RFC 1952)."""


class StandardInput(enum.Enum):
    """The type of :data:`STDIN`."""

    STDIN = "-"


STDIN: Final = StandardInput.STDIN
"""Pass this instead of a path to read an input from standard input (``-`` on the CLI)."""

InputPath = str | os.PathLike[str] | StandardInput
"""What the library accepts as an input: a path, or :data:`STDIN`."""

_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)


def input_path(path: object, source: InputKind) -> str | StandardInput:
    """The caller's path as a plain ``str``, or :data:`STDIN`.

    Calls ``__fspath__`` inside a guard: a failing path object becomes
    ``invalid_path`` with no trace of the caller's exception.

    Raises:
        ChartscoreError: ``invalid_path``.
    """
    if type(path) is StandardInput:
        return STDIN
    text: str | None = None
    try:
        if isinstance(path, str):
            text = str.__str__(path)  # an exact str, whatever a subclass does
        elif not isinstance(path, bytes | int):
            value = os.fspath(path)  # type: ignore[call-overload]
            if isinstance(value, str):
                text = str.__str__(value)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        text = None
    if text is None:
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=source)
    return text


def input_path_or_none(path: object, source: InputKind) -> str | StandardInput | None:
    """:func:`input_path`, or None where it would refuse ``path`` (nothing is raised).

    For a path that is only compared or named (an output's inputs, a run's label): one
    that is not a path is then no file at all.
    """
    where: str | StandardInput | None = None
    try:
        where = input_path(path, source)
    except ChartscoreError:
        where = None
    return where


def open_input(
    path: str | StandardInput, source: InputKind, *, limit: int | None = None
) -> InputStream:
    """Open an input checked by :func:`input_path` for reading, refusing non-regular files.

    Args:
        path: The input.
        source: Its name in errors.
        limit: The most bytes it may give, counted after decompression (None: no limit).

    Raises:
        ChartscoreError: ``file_unreadable``; ``file_too_large`` from a read
            that goes past ``limit``.
    """
    descriptor = _open_descriptor(path)
    if descriptor is None:
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    raw: BinaryIO | None = None
    try:
        raw = os.fdopen(descriptor, "rb")
    except (OSError, ValueError):
        raw = None
    if raw is None:
        _close_quietly(descriptor)
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    return InputStream(raw, source=source, limit=limit)


def _open_descriptor(path: str | StandardInput) -> int | None:
    """A blocking file descriptor for a regular file (or standard input), or None."""
    if isinstance(path, StandardInput):
        try:
            descriptor = os.dup(0)
        except OSError:
            return None
        try:
            if _NONBLOCK and not os.get_blocking(descriptor):
                os.set_blocking(descriptor, True)  # reads must wait, not come back empty-handed
        except OSError:
            _close_quietly(descriptor)
            return None
        return descriptor
    descriptor = -1
    try:
        descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            _close_quietly(descriptor)
            return None
        if _NONBLOCK:
            os.set_blocking(descriptor, True)
        return descriptor
    except (OSError, ValueError):
        if descriptor >= 0:
            _close_quietly(descriptor)
        return None


def identity(path: str | StandardInput) -> tuple[int, int] | None:
    """The ``(device, inode)`` of an existing input, or None (for comparing with an output).

    Standard input counts when it is redirected from a regular file.
    """
    try:
        if isinstance(path, StandardInput):
            status = os.fstat(0)
            if not stat.S_ISREG(status.st_mode):
                return None
        else:
            status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def is_gzip(path: str) -> bool:
    """Whether ``path`` is a regular file that starts with the gzip magic bytes.

    Opened as :func:`open_input` opens a file, so a FIFO never blocks (it is
    not a regular file: False). For estimates only; reading decides again.
    """
    descriptor = _open_descriptor(path)
    if descriptor is None:
        return False
    try:
        return os.read(descriptor, len(GZIP_MAGIC)) == GZIP_MAGIC
    except OSError:
        return False
    finally:
        _close_quietly(descriptor)


def _close_quietly(descriptor: int) -> None:
    with contextlib.suppress(OSError):
        os.close(descriptor)


def read_whole(path: object, source: InputKind, limit: int) -> bytes:
    """All of a small input (a schema, a report, a gates file), at most ``limit`` bytes.

    The same rules as every input: a path or :data:`STDIN`, regular files only
    (never blocking on a FIFO), gzip decompressed, and never the path in an error.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``, or
            ``file_too_large`` when the input holds more than ``limit`` bytes.
    """
    where = input_path(path, source)
    data = b""
    failed = False
    with open_input(where, source) as stream:
        try:
            data = stream.read(limit + 1)
        except OSError:
            failed = True
    if failed:
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    if len(data) > limit:
        raise ChartscoreError(ErrorCode.FILE_TOO_LARGE, input=source)
    return data


class InputStream:
    """An opened input's bytes, decompressed if it is gzip; a context manager.

    ``read(size)`` returns up to ``size`` bytes (fewer only at the end), and
    ``b""`` at the end. The format is decided by the first read, so opening
    never waits for a stream's first bytes. A damaged or truncated gzip
    stream raises ``OSError`` like any other read failure, without the
    decompressor's message. With a ``limit``, no read asks for more than one
    byte past it, and a read that goes past it raises ``file_too_large``.
    """

    def __init__(
        self, raw: BinaryIO, *, source: InputKind | None = None, limit: int | None = None
    ) -> None:
        self._raw = raw
        self._plain: _Prefixed | None = None
        self._decompressed: gzip.GzipFile | None = None
        self._source = source
        self._left = limit  # bytes still allowed; None: no limit

    def fileno(self) -> int:
        """The descriptor of the underlying file (for the reader process)."""
        return self._raw.fileno()

    def read(self, size: int = -1, /) -> bytes:
        """Read up to ``size`` bytes (all of the rest if negative).

        Raises:
            OSError: the input cannot be read, or is damaged gzip.
            ChartscoreError: ``file_too_large`` past the limit.
        """
        if self._plain is None:
            prefix = self._raw.read(len(GZIP_MAGIC))
            self._plain = _Prefixed(prefix, self._raw)
            if prefix == GZIP_MAGIC:
                self._decompressed = gzip.GzipFile(fileobj=self._plain, mode="rb")
        if self._left is not None and not 0 <= size <= self._left:
            size = self._left + 1  # enough to tell that the limit is passed, never more
        if self._decompressed is not None:
            data = _read_gzip(self._decompressed, size)
        else:
            data = self._plain.read(size)
        if self._left is not None:
            self._left -= len(data)
            if self._left < 0:
                raise ChartscoreError(ErrorCode.FILE_TOO_LARGE, input=self._source)
        return data

    def close(self) -> None:
        """Close the input (idempotent)."""
        try:
            if self._decompressed is not None:
                self._decompressed.close()
        finally:
            self._raw.close()

    def __enter__(self) -> InputStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _read_gzip(stream: gzip.GzipFile, size: int) -> bytes:
    data = b""
    damaged = False
    try:
        data = stream.read(size)
    except (EOFError, zlib.error, gzip.BadGzipFile):
        damaged = True
    if damaged:  # raised outside the handler: no decompressor message in a chain
        raise OSError("damaged gzip stream")
    return data


class _Prefixed:
    """The bytes already read from ``raw`` (to sniff the format), then the rest of ``raw``."""

    def __init__(self, prefix: bytes, raw: BinaryIO) -> None:
        self._prefix = prefix
        self._raw = raw

    def read(self, size: int = -1, /) -> bytes:
        if not self._prefix:
            return self._raw.read(size)
        prefix, self._prefix = self._prefix, b""
        if 0 <= size < len(prefix):
            self._prefix = prefix[size:]
            return prefix[:size]
        return prefix + self._raw.read(-1 if size < 0 else size - len(prefix))

    def seek(self, offset: int, /) -> int:
        """Inputs are read once, front to back (gzip asks for this method, never calls it)."""
        raise io.UnsupportedOperation("inputs are read once")
