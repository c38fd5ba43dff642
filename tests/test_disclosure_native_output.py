"""HiGHS's native prints cannot reach standard output during an integer solve."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore.disclosure import lp
from chartscore.disclosure.native_output import stdout_closed


@given(marker=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=8, max_size=16))
def test_a_native_write_inside_is_dropped_and_one_after_arrives(marker: str) -> None:
    # The file descriptor is what native code writes to, so write to it directly.
    read, write = os.pipe()
    saved = os.dup(1)
    os.dup2(write, 1)
    try:
        with stdout_closed(), stdout_closed():  # nested, as the exact loop nests solves
            os.write(1, f"inside {marker}\n".encode())
        os.write(1, b"after\n")
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(write)
    with os.fdopen(read, encoding="utf-8") as pipe:
        assert pipe.read() == "after\n"


@pytest.mark.parametrize("integer", [True, False])
def test_an_integer_solve_runs_with_standard_output_closed(
    integer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []

    @contextlib.contextmanager
    def recording() -> Iterator[None]:
        closed.append(True)
        yield

    monkeypatch.setattr(lp, "stdout_closed", recording)
    # min x0 + x1 subject to x0 + x1 >= 1.5: 2 as integers, 1.5 as an LP.
    matrix = (np.array([0, 2]), np.array([0, 1]), np.array([1.0, 1.0]))
    solved = lp.solve_afresh(
        2, matrix, np.array([1.5]), np.array([np.inf]), np.array([1.0, 1.0]), integer=integer
    )
    if solved is None:
        pytest.skip("this scipy's HiGHS binding cannot be loaded (milp is used)")
    status, _, value, _ = solved
    assert status == lp.OPTIMAL and value == (2.0 if integer else 1.5)
    assert closed == ([True] if integer else [])
