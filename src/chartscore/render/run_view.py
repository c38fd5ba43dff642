"""Run cost beside accuracy: the header line and the table a report's ``run`` section gives.

Every renderer draws them as it draws the rest of a view: the line is a fact (the
summary shows it too), the table one more table. The model name and version are the
operator's text in a restricted character set (docs/formats.md), shown as a fact line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from chartscore.documents.run import QuantityFigures, RunSection
from chartscore.render.view import Cell, Column, Row, Table

RUN_FACT: Final = "run cost"
"""The label of the header line (the summary shows it)."""

_NAMES: Final = {
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "latency_ms": "latency (ms)",
    "cost": "cost",
}
_COLUMNS: Final = ("rows", "charts", "total", "mean per chart", "p50", "p95")


def magnitude_text(number: float | None) -> str:
    """A total, mean or percentile as people read it: up to 4 decimals, no exponent."""
    if number is None:
        return "-"
    if float(number).is_integer():
        return f"{int(number):,}"
    text = f"{number:,.4f}".rstrip("0").rstrip(".")
    return text if text not in ("0", "-0") else f"{number:.2g}"


def run_fact(section: RunSection, system: str = "") -> tuple[str, str]:
    """The one-line summary: cost, mean cost per chart, latency percentiles, rows counted.

    ``system`` (``baseline`` or ``candidate``) prefixes the label in a comparison.
    """
    quantities = section.quantities
    currency = section.header.get("currency")
    unit = f" {currency}" if isinstance(currency, str) else ""
    parts = []
    cost = quantities["cost"]
    if cost.rows:
        parts.append(
            f"{magnitude_text(cost.total)}{unit} in total, "
            f"{magnitude_text(cost.per_chart_mean)}{unit} per chart"
        )
    tokens = [quantities["input_tokens"], quantities["output_tokens"]]
    if any(figures.rows for figures in tokens):
        parts.append(
            "tokens in/out " + "/".join(magnitude_text(f.total) if f.rows else "-" for f in tokens)
        )
    latency = quantities["latency_ms"]
    if latency.rows:
        p50, p95 = latency.percentiles
        parts.append(f"latency p50 {magnitude_text(p50)} ms, p95 {magnitude_text(p95)} ms")
    parts.append(
        f"usage on {section.rows} prediction row{'s' * (section.rows != 1)} of "
        f"{section.charts} chart{'s' * (section.charts != 1)}"
    )
    return (_label(RUN_FACT, system), "; ".join(parts))


def _label(label: str, system: str) -> str:
    return f"{system} {label}" if system else label


def model_fact(header: Mapping[str, object], system: str = "") -> tuple[tuple[str, str], ...]:
    """The model line, when the run header named a model or version."""
    named = [header[key] for key in ("model", "model_version") if key in header]
    if not named:
        return ()
    return ((_label("model", system), " ".join(str(name) for name in named)),)


def run_facts(section: RunSection, system: str = "") -> tuple[tuple[str, str], ...]:
    """The model line (if any) and the run-cost line."""
    return (*model_fact(section.header, system), run_fact(section, system))


def run_table(section: RunSection, system: str = "") -> Table:
    """One row per quantity: rows and charts that gave it, total, mean per chart, p50, p95."""
    rows = tuple(
        Row("quantity", _NAMES[name], _cells(name, figures))
        for name, figures in section.quantities.items()
    )
    return Table(
        f"run-{system}" if system else "run",
        f"Run cost and latency: {system}" if system else "Run cost and latency",
        "Each prediction row's usage counts once; mean per chart = total / charts that gave "
        "it. p50 and p95: nearest-rank latency percentiles truncated to 3 significant digits "
        "(docs/metrics.md, Run cost).",
        "quantity",
        tuple(Column(heading) for heading in _COLUMNS),
        rows,
    )


def _cells(name: str, figures: QuantityFigures) -> tuple[Cell, ...]:
    latency = name == "latency_ms"
    return (
        figures.rows,
        figures.charts,
        magnitude_text(figures.total),
        magnitude_text(figures.per_chart_mean),
        *(magnitude_text(p) if latency else "" for p in figures.percentiles or (None, None)),
    )
