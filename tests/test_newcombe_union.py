"""A difference bound's union of Newcombe intervals, every table at once: the loop's bits.

``shared_comparison._union`` computes the union over all paired tables with numpy; the
loop over :func:`~chartscore.stats.paired.newcombe_difference` is the reference. Both
bounds must be the same floats, bit for bit (a shared comparison prints them).
"""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chartscore.documents.shared_comparison as module
from chartscore.stats.paired import newcombe_difference

from helpers import examples

pytest.importorskip("numpy")

Z = (1.959963984540054, 1.6448536269514722, 2.5758293035489004, 1.0, 3.2905267314919255)


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


def _loop(n: int, tables: list[tuple[int, int, int]], z: float) -> tuple[float, float]:
    lower, upper = 1.0, -1.0
    for both, b, c in tables:
        found = newcombe_difference(both, c, b, n - both - b - c, z)
        assert found is not None
        low, high = found[1]
        lower, upper = min(lower, low), max(upper, high)
    return lower, upper


@st.composite
def paired_tables(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, int]]]:
    n = draw(st.one_of(st.integers(1, 40), st.integers(41, 3000), st.just(50_000)))
    count = draw(st.integers(1, 40))
    tables = []
    for _ in range(count):
        both = draw(st.integers(0, n))
        b = draw(st.integers(0, n - both))
        c = draw(st.integers(0, n - both - b))
        tables.append((both, b, c))
    return n, tables


@settings(max_examples=examples(600), deadline=None)
@given(paired_tables(), st.sampled_from(Z))
def test_the_union_at_once_is_the_loops_bit_for_bit(
    drawn: tuple[int, list[tuple[int, int, int]]], z: float
) -> None:
    n, tables = drawn
    found = module._union(n, tables, z)
    assert found is not None
    expected = _loop(n, tables, z)
    assert [_bits(v) for v in found] == [_bits(v) for v in expected]


def test_every_table_of_small_cohorts_gives_the_loops_bits() -> None:
    # Every table of n trials, one at a time (the extremes: zeros, n, ties at +-1, phi 0).
    for n in (1, 2, 3, 5, 8, 13):
        for z in Z:
            for both in range(n + 1):
                for b in range(n + 1 - both):
                    for c in range(n + 1 - both - b):
                        found = module._union(n, [(both, b, c)], z)
                        assert found is not None
                        expected = _loop(n, [(both, b, c)], z)
                        assert [_bits(v) for v in found] == [_bits(v) for v in expected]
                        assert not any(math.copysign(1.0, v) < 0 and v == 0 for v in found)


@settings(max_examples=examples(200), deadline=None)
@given(
    n=st.integers(1, 400),
    spans=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 60)), min_size=4, max_size=4),
    pooled=st.booleans(),
)
def test_a_difference_bound_is_the_same_with_and_without_the_union_at_once(
    n: int, spans: list[tuple[int, int]], pooled: bool
) -> None:
    ranges = [(min(lo, n), min(lo, n) + width) for lo, width in spans]
    args = ((n, n), *ranges)
    try:
        fast = module.difference_bound(*args, pooled=pooled)
    except ValueError:
        fast = None
    module._proven_difference.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_union", lambda n, tables, z: None)
        try:
            slow = module.difference_bound(*args, pooled=pooled)
        except ValueError:
            slow = None
    module._proven_difference.cache_clear()
    assert fast == slow
    if fast is not None and slow is not None:
        assert [_bits(fast.lower), _bits(fast.upper)] == [_bits(slow.lower), _bits(slow.upper)]
