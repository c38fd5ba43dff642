"""File descriptors: copies numbered above 2, and a forked child's clean slate.

Why above 2: where the caller closed standard output or error (``>&-``, ``2>&-``),
``open`` and ``pipe`` return that very number. A copy or the null device opened there,
then closed, frees it again; the next file or pipe takes it, and whatever points
standard output at /dev/null next points that file there too (the predictions a
forked reader was reading, once). Value-free: numbers only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os


def copy_above_2(descriptor: int | None) -> int | None:
    """A copy of ``descriptor`` numbered above 2, closed on exec; None if it is closed."""
    if descriptor is None:
        return None
    try:
        return fcntl.fcntl(descriptor, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return None


def null_above_2() -> int | None:
    """The null device, open for writing on a descriptor above 2 (None: it cannot be opened)."""
    opened = -1
    with contextlib.suppress(OSError):
        opened = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    if opened < 0:
        return None
    null = copy_above_2(opened)
    os.close(opened)
    return null


def keep_only(keep: set[int]) -> None:
    """In a forked child: close every inherited descriptor but ``keep``; point stdout and
    stderr at /dev/null (unless one of ``keep`` took its number: the caller had it closed).

    The child then holds no file, socket or pipe of the caller's, and nothing it might
    print can reach a terminal or a log.
    """
    null = os.open(os.devnull, os.O_RDWR)
    for standard in (1, 2):
        if standard not in keep:
            os.dup2(null, standard)
    kept = keep | {0, 1, 2}
    for descriptor in _open_descriptors():
        if descriptor not in kept:
            with contextlib.suppress(OSError):
                os.close(descriptor)


def _open_descriptors() -> list[int]:
    """This process's open descriptors, from the kernel's list where there is one."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError, ValueError):
            return [int(name) for name in os.listdir(listing)]
    return list(range(3, 4096))  # pragma: no cover - no descriptor listing
