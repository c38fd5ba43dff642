"""Test-suite settings shared by every test file."""

from __future__ import annotations

from hypothesis import settings

# No timing assertions anywhere in the suite (speed is judged by benchmarks/run.py,
# never by tests): hypothesis's per-example deadline would fail a correct test on a
# loaded machine, so it is off for every property test.
settings.register_profile("chartscore", deadline=None)
settings.load_profile("chartscore")
