"""Test-suite settings shared by every test file."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile

from hypothesis import settings

# No timing assertions anywhere in the suite (speed is judged by benchmarks/run.py,
# never by tests): hypothesis's per-example deadline would fail a correct test on a
# loaded machine, so it is off for every property test.
#
# Two profiles. The default runs 10 in every 100 of a property test's examples (see
# helpers.examples), so that a contributor runs the suite before every change;
# `python -m pytest --hypothesis-profile thorough` runs them all, as .ci/run does.
settings.register_profile("chartscore", deadline=None, max_examples=10)
settings.register_profile("thorough", deadline=None, max_examples=100)
settings.load_profile("chartscore")

# The signal tests send SIGINT and SIGHUP to the runs they start, as a terminal would. A runner
# started in the background of a script (SIGINT ignored) or under nohup (SIGHUP ignored) passes
# those dispositions on, and chartscore rightly keeps an ignored signal ignored; so the suite
# gives its runs the terminal's defaults.
# SIGINT gets Python's own handler (KeyboardInterrupt), as an interactive interpreter has it;
# a child process started with exec gets the default disposition either way.
for _number, _disposition in (
    (signal.SIGINT, signal.default_int_handler),
    (signal.SIGHUP, signal.SIG_DFL),
):
    if signal.getsignal(_number) == signal.SIG_IGN:
        signal.signal(_number, _disposition)

# Many tests start chartscore as a real process (``python -m chartscore``). Where Python is
# told not to write bytecode (PYTHONDONTWRITEBYTECODE, as some containers set it), every
# such start compiles chartscore from source again: 0.55 s a start instead of 0.23 s, about
# 45 s of the suite. The suite's child processes keep their bytecode in a folder of this
# run's own instead (PYTHONPYCACHEPREFIX), removed at the end: the source tree stays as the
# setting asks. This process is not changed (both are read when Python starts).
if os.environ.get("PYTHONDONTWRITEBYTECODE"):
    _BYTECODE = tempfile.mkdtemp(prefix="chartscore-tests-bytecode-")
    atexit.register(shutil.rmtree, _BYTECODE, ignore_errors=True)
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = _BYTECODE
