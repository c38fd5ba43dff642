"""Test-suite settings shared by every test file."""

from __future__ import annotations

from hypothesis import settings

# No timing assertions anywhere in the suite (speed is judged by benchmarks/run.py,
# never by tests): hypothesis's per-example deadline would fail a correct test on a
# loaded machine, so it is off for every property test.
#
# Two profiles. The default runs a quarter of every property test's examples (see
# helpers.examples), so that a contributor runs the suite before every change;
# `python -m pytest --hypothesis-profile thorough` runs them all, as .ci/run does.
settings.register_profile("chartscore", deadline=None, max_examples=25)
settings.register_profile("thorough", deadline=None, max_examples=100)
settings.load_profile("chartscore")
