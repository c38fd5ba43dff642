"""Standard output closed to native code while HiGHS solves integer programs.

HiGHS prints some MIP repairs with ``printf``, whatever its output options say.
Such a line is written while a protected table is being solved, so it can be a
function of the hidden data, and ``share`` may write its report to standard
output afterwards: nothing may land there. The file descriptor, not
``sys.stdout``, is redirected, since the print bypasses Python. (Another thread's
writes to standard output during a solve are dropped too.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator

from chartscore.processes.descriptors import copy_above_2, null_above_2


@contextlib.contextmanager
def stdout_closed() -> Iterator[None]:
    """File descriptor 1 points at the null device until the block ends.

    Python's ``sys.stdout`` is None where descriptor 1 was closed at start-up; the
    copies are numbered above 2, so that a closed 0 or 2 is never taken by one.
    """
    if sys.stdout is not None:
        with contextlib.suppress(Exception):  # a broken stdout is the writer's to report
            sys.stdout.flush()
    saved = copy_above_2(1)
    if saved is None:  # no standard output at all: nothing to protect
        yield
        return
    sink = null_above_2()
    if sink is None:  # no null device: nothing may reach standard output, so no solve
        os.close(saved)
        raise OSError(errno.ENOENT, "no null device")
    os.dup2(sink, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(sink)
