"""A publication's orders on both cores: the one-process result, byte for byte.

``chartscore.workflows.orders.each_order`` runs each order of
``chartscore.workflows.publication`` in a forked child; the products must be the ones a
single process makes, whichever process ran which order. A child's ChartscoreError is
raised here as one process raises it (the earliest order's first), with nothing chained;
any other failure of a child is ``internal_error``; no child is left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.workflows import orders
from test_disclosure_split import no_children_left

from helpers import thorough_only

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")

CANARY = "orders-canary-5521"


def _forked(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(os, "cpu_count", lambda: 2)  # two processes even on one core


def test_each_order_runs_in_a_child_and_the_results_come_back_in_order() -> None:
    here = os.getpid()
    with pytest.MonkeyPatch.context() as patch:
        _forked(patch)
        found = orders.each_order([lambda n=n: (n * n, os.getpid()) for n in range(3)])
    assert [value for value, _ in found] == [0, 1, 4]
    assert all(pid != here for _, pid in found)
    assert no_children_left()


def test_without_fork_or_when_disabled_the_orders_run_here() -> None:
    here = os.getpid()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(orders, "ENABLED", False)
        assert orders.each_order([os.getpid, os.getpid]) == [here, here]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "cpu_count", lambda: 1)
        assert orders.each_order([os.getpid, os.getpid]) == [here, here]
    assert orders.each_order([os.getpid]) == [here]


def _canary() -> None:
    raise ValueError(CANARY)


def _fails(code: ErrorCode) -> object:
    # As the project raises: a ChartscoreError outside the except block of what failed.
    failed = False
    try:
        _canary()
    except ValueError:
        failed = True
    if failed:
        raise ChartscoreError(code)
    return None


@pytest.mark.parametrize("enabled", [True, False])
def test_the_earliest_failing_orders_error_is_raised_with_nothing_chained(
    enabled: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    tasks = [
        lambda: 1,
        lambda: _fails(ErrorCode.DISCLOSURE_AUDIT_FAILED),
        lambda: _fails(ErrorCode.USAGE),
    ]
    with pytest.MonkeyPatch.context() as patch:
        _forked(patch)
        patch.setattr(orders, "ENABLED", enabled)
        with pytest.raises(ChartscoreError) as caught:
            orders.each_order(tasks)
    assert caught.value.code == ErrorCode.DISCLOSURE_AUDIT_FAILED
    if enabled:  # a copy from the child: no traceback or chain of the child's frames
        assert caught.value.__cause__ is None and caught.value.__context__ is None
    out, err = capfd.readouterr()
    assert CANARY not in out + err and CANARY not in str(caught.value)
    assert no_children_left()


def test_a_child_that_fails_otherwise_is_an_internal_error(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def broken() -> int:
        raise KeyError(CANARY)

    def dies() -> int:
        os._exit(3)

    for task in (broken, dies):
        with pytest.MonkeyPatch.context() as patch:
            _forked(patch)
            with pytest.raises(ChartscoreError) as caught:
                orders.each_order([lambda: 1, task])
        assert caught.value.code == ErrorCode.INTERNAL_ERROR
        assert caught.value.__cause__ is None and caught.value.__context__ is None
    out, err = capfd.readouterr()
    assert CANARY not in out + err
    assert no_children_left()


@thorough_only("a publication with a comparison, on one process and on two (8 to 12 s)")
def test_a_publication_on_two_processes_is_the_one_process_publication(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    from chartscore.workflows.publication import share_publication_files
    from test_shared_comparison import write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)

    def shared(enabled: bool) -> list[str]:
        with pytest.MonkeyPatch.context() as patch:
            _forked(patch)
            patch.setattr(orders, "ENABLED", enabled)
            products = share_publication_files(gold, [baseline, candidate], comparisons=[(0, 1)])
        return [product.to_json() for product in products]

    assert shared(True) == shared(False)
    assert no_children_left()
