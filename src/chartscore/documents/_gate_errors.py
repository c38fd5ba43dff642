"""The error a gate raises when its slice lacks the metric it names: one wording for every document.

Reports, comparisons and agreement documents are gated by different modules; a gate naming a
metric that is not there fails the same way in all of them (``gate_metric_missing``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from chartscore.errors import ChartscoreError, ErrorCode, closest

__all__ = ["GateLike", "missing_metric"]


class GateLike(Protocol):
    """What is read of a gate: where it stands (for errors) and what it names."""

    @property
    def number(self) -> int: ...

    @property
    def line(self) -> int | None: ...

    @property
    def slice(self) -> str: ...

    @property
    def metric(self) -> str: ...

    @property
    def label(self) -> str: ...


def missing_metric(gate: GateLike, present: Iterable[str] = ()) -> ChartscoreError:
    """``gate_metric_missing`` located at ``gate``.

    ``present``: the slice's metric names, only for a "did you mean" (a closed vocabulary).
    """
    return ChartscoreError(
        ErrorCode.GATE_METRIC_MISSING,
        gate=gate.number,
        line=gate.line,
        suggestion=closest(gate.metric, present),
    )
