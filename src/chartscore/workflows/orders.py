"""A publication's orders on every core: each order's whole work in its own process.

:mod:`chartscore.workflows.publication` tries each system first in turn and keeps the
publication that hides the fewest numbers. The orders share nothing but their inputs
(each is a whole publication's work, a function of the inputs and its order alone), so
they can run at once: each in a child forked for it (:func:`~chartscore.workflows.forked.
run_tasks`, at most one per core), which sends back its products, pickled. The parent
then picks among them exactly as one process would, so the result is the one-process
result, byte for byte, whichever process ran which order.

A child's :class:`~chartscore.ChartscoreError` is raised here as the one process would
raise it (the earliest order's first), a copy with no traceback or chained exception;
any other failure of a child, its death included, is ``internal_error``. The children
die with this process (:mod:`chartscore.processes.lifeline`). Where ``fork`` is not
available, on one core, or with one order, the orders run here one after another.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

from chartscore.workflows.forked import run_tasks

T = TypeVar("T")

ENABLED = True
"""Whether the orders may run in forked processes (tests compare both ways)."""


def each_order(orders: Sequence[Callable[[], T]]) -> list[T]:
    """``[order() for order in orders]``, on every core when there is more than one.

    Raises:
        ChartscoreError: the error of the earliest order that failed.
    """
    jobs = min(len(orders), os.cpu_count() or 1)
    if not (ENABLED and jobs > 1 and hasattr(os, "fork")):
        return [order() for order in orders]
    results: list[T] = []
    for result, error in run_tasks(orders, jobs):
        if error is not None:
            raise error
        assert result is not None
        results.append(result)
    return results


__all__ = ["ENABLED", "each_order"]
