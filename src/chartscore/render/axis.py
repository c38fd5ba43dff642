"""Forest-plot axes that zoom to the data, so a committee sees the differences that matter.

On a 0-100% axis, rates of 85% to 95% crowd into a tenth of the plot. A zoomed axis runs over
the narrowest of a few round ranges (20, 40 or 80 points wide, starting at a multiple of a
quarter of that width) that holds every point, interval and margin of the panel, and the plot
says so under its axis. ``--axis full`` keeps the whole range (0-100%, or -1 to 1 for kappa).
A paired difference's axis is already chosen to fit (``comparison_view.difference_scale``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

import attrs

from chartscore.render.view import Plot

__all__ = ["AXES", "ZOOM_WIDTHS", "zoomed_axis", "zoomed_plots"]

AXES: Final = ("zoom", "full")
"""``--axis``: zoom to the data (default) or the whole range."""

ZOOM_WIDTHS: Final = (20, 40, 80)
"""A zoomed axis's widths, in hundredths (points of a rate); ticks fall every quarter."""

_FULL_AXES: Final = ((0.0, 1.0), (-1.0, 1.0))
"""The axes that zoom: rates' and kappa's. A difference's axis is fitted already."""


def _reach(plot: Plot) -> tuple[float, float] | None:
    numbers: list[float] = []
    for row in plot.rows:
        numbers += [margin.value for margin in row.margins]
        estimate = row.estimate
        if estimate.value is not None and estimate.interval is not None:
            numbers += [estimate.value, *estimate.interval]
        elif estimate.bound is not None:
            numbers += list(estimate.bound)
    return (min(numbers), max(numbers)) if numbers else None


def zoomed_axis(axis: tuple[float, float], numbers: tuple[float, float]) -> tuple[float, float]:
    """The narrowest round axis inside ``axis`` that holds ``numbers`` (low, high); else ``axis``.

    In hundredths: for each width of :data:`ZOOM_WIDTHS`, the axis starts at ``low`` rounded
    down to a multiple of a quarter of the width (moved left if it would pass the end).
    """
    first, last = round(axis[0] * 100), round(axis[1] * 100)
    low, high = math.floor(numbers[0] * 100), math.ceil(numbers[1] * 100)
    low, high = max(low, first), min(high, last)
    for width in ZOOM_WIDTHS:
        step = width // 4
        start = min((low // step) * step, last - width)
        if start >= first and start + width >= high:
            return (start / 100, (start + width) / 100)
    return axis


def zoomed_plots(plots: Iterable[Plot]) -> tuple[Plot, ...]:
    """Each rate or kappa panel on its :func:`zoomed_axis`, marked ``zoomed`` where it narrowed."""
    out = []
    for plot in plots:
        reach = _reach(plot) if plot.axis in _FULL_AXES else None
        axis = plot.axis if reach is None else zoomed_axis(plot.axis, reach)
        out.append(plot if axis == plot.axis else attrs.evolve(plot, axis=axis, zoomed=True))
    return tuple(out)
