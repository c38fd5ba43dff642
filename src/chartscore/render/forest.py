"""Forest plots as hand-written SVG: one row per estimate, point and interval on one axis.

:func:`forest_svg` takes a :class:`~chartscore.render.view.Plot` of generic
rows and its axis range (0..1 for rates, -1..1 for kappa, a symmetric range
for paired differences), so every document chartscore renders can use it. Panels drawn
with one :class:`Geometry` put their axes at the same place, so intervals can
be compared from panel to panel. The SVG needs no script and no font file;
every string in it is escaped.

Each row is a ``<g class="mark">`` carrying ``data-slice``, ``data-name``,
``data-metric`` and ``data-value``, with a ``<title>`` that browsers show on
hover. Error metrics (lower is better) are squares in vermilion, other metrics
circles in blue: the shape tells them apart in grey print and for colour-blind
readers (Okabe-Ito colours).
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Final

import attrs

from chartscore.render._numbers import estimate_parts, estimate_text, fraction_text, no_trials
from chartscore.render.table import wrap_label
from chartscore.render.view import Estimate, Kind, Plot, PlotRow

CHAR: Final = 7.25
"""Approximate advance of one 12 px monospace character, in px."""
ROW: Final = 20
LINE: Final = 14
GROUP_GAP: Final = 8
PLOT_WIDTH: Final = 360
LABEL_CHARS: Final = 40
"""Labels longer than this wrap onto more lines (nothing is cut)."""
PAD: Final = 8
AXIS_HEIGHT: Final = 30
ZOOM_NOTE_HEIGHT: Final = 14
MARGIN_LABEL_HEIGHT: Final = 14
"""Room under the axis for a declared margin's name."""
"""Room under a zoomed axis for the line that says it is zoomed."""


def value_parts(estimate: Estimate) -> tuple[str, str, str]:
    """The number column of a row: ``(fraction, value, rest)``; kappa adds its pairs."""
    fraction, value, rest = estimate_parts(estimate)
    if estimate.kind is Kind.KAPPA:
        rest = f"{rest} ({fraction_text(estimate)})".strip()
    return (fraction, value, rest)


@attrs.frozen
class Geometry:
    """Column widths, in characters, shared by the panels of one page."""

    label: int
    fraction: int
    value: int
    rest: int

    @classmethod
    def fit(cls, plots: Iterable[Plot]) -> Geometry:
        """The narrowest geometry that holds every row of ``plots``."""
        rows = [row for plot in plots for row in plot.rows]
        parts = [value_parts(row.estimate) for row in rows]
        labels = [line for row in rows for line in wrap_label(row.label, LABEL_CHARS)]
        return cls(
            label=max(map(len, labels), default=0),
            fraction=max((len(p[0]) for p in parts), default=0),
            value=max((len(p[1]) for p in parts), default=0),
            rest=max((len(p[2]) for p in parts), default=0),
        )

    @property
    def left(self) -> float:
        """Where the axis starts."""
        return PAD + self.label * CHAR + 12

    @property
    def right(self) -> float:
        """Where the axis ends."""
        return self.left + PLOT_WIDTH

    @property
    def width(self) -> float:
        """The panel's width."""
        numbers = self.fraction + self.value + self.rest + 2
        return self.right + 12 + numbers * CHAR + PAD


def _f(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _ticks(axis: tuple[float, float]) -> list[float]:
    low, high = axis
    return [low + (high - low) * step / 4 for step in range(5)]


def _tick_label(value: float, kind: Kind) -> str:
    if kind is Kind.RATE:
        return f"{round(value * 100)}%"
    if kind is Kind.DIFFERENCE:
        points = round(value * 100, 1)
        return f"{points:+g}" if points else "0"
    return f"{value:g}"


class _Axis:
    def __init__(self, axis: tuple[float, float], geometry: Geometry) -> None:
        self.low, self.high = axis
        self.left = geometry.left

    def x(self, value: float) -> float:
        clamped = min(max(value, self.low), self.high)
        return self.left + (clamped - self.low) / (self.high - self.low) * PLOT_WIDTH


def _mark(row: PlotRow, axis: _Axis, y: float, plot_title: str) -> list[str]:
    estimate = row.estimate
    classes = ["mark"]
    if estimate.error:
        classes.append("error")
    if estimate.slice == "overall":
        classes.append("overall")
    value, interval = estimate.value, estimate.interval
    if value is None or interval is None:
        classes.append("empty")
    if estimate.suppressed and not no_trials(estimate):
        classes.append("suppressed")
    attributes = (
        f'class="{" ".join(classes)}" data-slice="{escape(estimate.slice)}" '
        f'data-name="{escape(estimate.name)}" data-metric="{escape(estimate.metric)}"'
    )
    if estimate.label:
        attributes += f' data-label="{escape(estimate.label)}"'
    if value is not None and interval is not None:
        attributes += (
            f' data-value="{value!r}" data-lower="{interval[0]!r}" data-upper="{interval[1]!r}"'
        )
    tooltip = f"{row.label}, {plot_title}: {estimate_text(estimate)}"
    out = [f"<g {attributes}>", f"<title>{escape(tooltip)}</title>"]
    if value is None or interval is None:
        return [*out, "</g>"]
    low, high, center = axis.x(interval[0]), axis.x(interval[1]), axis.x(value)
    out += [
        f'<line class="ci" x1="{_f(low)}" x2="{_f(high)}" y1="{_f(y)}" y2="{_f(y)}"/>',
        _end(low, y, -1 if interval[0] < axis.low else 0),
        _end(high, y, 1 if interval[1] > axis.high else 0),
    ]
    if not axis.low <= value <= axis.high:
        return [*out, "</g>"]  # the point is off the axis: the arrow and the numbers say where
    size = 5.5 if estimate.slice == "overall" else 4.5
    if estimate.error:
        out.append(
            f'<rect class="point" x="{_f(center - size)}" y="{_f(y - size)}" '
            f'width="{_f(2 * size)}" height="{_f(2 * size)}"/>'
        )
    else:
        out.append(f'<circle class="point" cx="{_f(center)}" cy="{_f(y)}" r="{_f(size)}"/>')
    return [*out, "</g>"]


def _end(x: float, y: float, direction: int) -> str:
    """An interval's end: a cap, or an arrow head where the axis cuts the interval."""
    if direction == 0:
        return f'<line class="cap" x1="{_f(x)}" x2="{_f(x)}" y1="{_f(y - 4)}" y2="{_f(y + 4)}"/>'
    back = x - 6 * direction
    return (
        f'<polygon class="arrow" points="{_f(x)},{_f(y)} {_f(back)},{_f(y - 4)} '
        f'{_f(back)},{_f(y + 4)}"/>'
    )


def _margin_lines(row: PlotRow, axis: _Axis, top: float, height: float) -> list[str]:
    """A row's declared margins: a dashed line across the row, with its label on hover."""
    out = []
    for margin in row.margins:
        x = _f(axis.x(margin.value))
        out += [
            f'<g class="margin" data-value="{margin.value!r}">',
            f"<title>{escape(row.label)}: {escape(margin.label)}</title>",
            f'<line x1="{x}" x2="{x}" y1="{_f(top)}" y2="{_f(top + height)}"/>',
            "</g>",
        ]
    return out


def _margin_text(value: float, kind: Kind) -> str:
    """``margin -2``: a margin as its axis reads it (points for a difference)."""
    return f"margin {_tick_label(value, kind)}"


def _numbers(row: PlotRow, geometry: Geometry, y: float) -> list[str]:
    fraction, value, rest = value_parts(row.estimate)
    start = geometry.right + 12
    fraction_end = start + geometry.fraction * CHAR
    value_end = fraction_end + (geometry.value + 1) * CHAR
    baseline = _f(y + 4)
    out = []
    if fraction:
        out.append(
            f'<text class="value" x="{_f(fraction_end)}" y="{baseline}" text-anchor="end">'
            f"{escape(fraction)}</text>"
        )
    if value:
        out.append(
            f'<text class="value" x="{_f(value_end)}" y="{baseline}" text-anchor="end">'
            f"{escape(value)}</text>"
        )
    if rest:
        absent = " absent" if not value else ""
        out.append(
            f'<text class="value{absent}" x="{_f(value_end + CHAR)}" y="{baseline}">'
            f"{escape(rest)}</text>"
        )
    return out


def forest_svg(plot: Plot, *, element_id: str, geometry: Geometry | None = None) -> str:
    """One forest-plot panel as an inline ``<svg>`` element.

    Args:
        plot: The panel: title, axis range, optional reference line and rows.
        element_id: A unique id for the SVG's ``<title>`` (for ``aria-labelledby``).
        geometry: Column widths shared with other panels; by default, this
            panel's own.

    Returns:
        SVG markup for inline use in HTML. Rows are drawn in the order given,
        with a gap wherever the row group changes; a row with no value (no
        trials, undefined, suppressed) keeps its label and says why.
    """
    geometry = geometry or Geometry.fit([plot])
    axis = _Axis(plot.axis, geometry)
    kind = plot.rows[0].estimate.kind if plot.rows else Kind.RATE
    bands: list[str] = []
    body: list[str] = []
    y = PAD + ROW / 2
    previous = None
    for index, row in enumerate(plot.rows):
        if previous is not None and row.group != previous:
            y += GROUP_GAP
        previous = row.group
        lines = wrap_label(row.label, LABEL_CHARS)
        height = ROW + LINE * (len(lines) - 1)
        if index % 2 == 0:
            bands.append(
                f'<rect class="band" x="0" y="{_f(y - ROW / 2)}" width="{_f(geometry.width)}" '
                f'height="{_f(height)}"/>'
            )
        label_class = "label overall" if row.estimate.slice == "overall" else "label"
        body += [
            f'<text class="{label_class}" x="{PAD}" y="{_f(y + 4 + number * LINE)}">'
            f"{escape(line)}</text>"
            for number, line in enumerate(lines)
        ]
        body += _mark(row, axis, y, plot.title)
        body += _margin_lines(row, axis, y - ROW / 2, height)  # over the mark: never hidden
        body += _numbers(row, geometry, y)
        y += height
    bottom = y - ROW / 2 + 4
    grid: list[str] = []
    for tick in _ticks(plot.axis):
        x = _f(axis.x(tick))
        grid.append(f'<line class="grid" x1="{x}" x2="{x}" y1="{PAD}" y2="{_f(bottom)}"/>')
        grid.append(
            f'<text class="tick" x="{x}" y="{_f(bottom + 18)}" text-anchor="middle">'
            f"{escape(_tick_label(tick, kind))}</text>"
        )
    if plot.reference is not None:
        x = _f(axis.x(plot.reference))
        grid.append(f'<line class="reference" x1="{x}" x2="{x}" y1="{PAD}" y2="{_f(bottom)}"/>')
    grid.append(
        f'<line class="axis" x1="{_f(geometry.left)}" x2="{_f(geometry.right)}" '
        f'y1="{_f(bottom)}" y2="{_f(bottom)}"/>'
    )
    total_height = bottom + AXIS_HEIGHT
    marked = [margin for row in plot.rows for margin in row.margins]
    for margin in marked:
        # Named under the axis, in the margin's colour, where its line is: a committee reads
        # the threshold without hovering.
        x = _f(axis.x(margin.value))
        grid.append(
            f'<text class="margin-label" x="{x}" y="{_f(bottom + 32)}" text-anchor="middle">'
            f"{escape(_margin_text(margin.value, kind))}</text>"
        )
    if marked:
        total_height += MARGIN_LABEL_HEIGHT
    if plot.zoomed:
        low, high = (_tick_label(end, kind) for end in plot.axis)
        grid.append(
            f'<text class="zoom" x="{_f(geometry.left)}" y="{_f(total_height + 4)}">'
            f"{escape(f'axis zoomed to fit, {low} to {high}, not the full range')}</text>"
        )
        total_height += ZOOM_NOTE_HEIGHT
    svg_width, svg_height = _f(geometry.width), _f(total_height)
    return "\n".join(
        [
            f'<svg class="forest" role="img" aria-labelledby="{escape(element_id)}" '
            f'width="{svg_width}" height="{svg_height}" viewBox="0 0 {svg_width} {svg_height}" '
            f'data-axis-low="{plot.axis[0]!r}" data-axis-high="{plot.axis[1]!r}" '
            f'data-left="{_f(geometry.left)}" data-right="{_f(geometry.right)}">',
            f'<title id="{escape(element_id)}">{escape(plot.title)}</title>',
            *bands,
            *grid,
            *body,
            "</svg>",
        ]
    )
