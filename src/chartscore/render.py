"""A short human-readable summary of a report, for terminals.

Value-free by construction: it reads only a :class:`~chartscore.report.Report`
and must not import the modules that hold values.
"""

from __future__ import annotations

from chartscore.report import MetricResult, Report, SliceReport
from chartscore.tally import CORE_METRICS

_COLUMNS = (
    ("normalized_agreement", "agreement"),
    ("abstention_correctness", "abstention ok"),
    ("evidence_support", "evidence"),
)


def _cell(metric: MetricResult) -> str:
    if metric.interval is None:
        return f"{metric.success_count}/{metric.total_count} -"
    low, high = metric.interval
    rate = metric.success_count / metric.total_count
    return f"{metric.success_count}/{metric.total_count} {rate:.0%} [{low:.0%}-{high:.0%}]"


def _row(name: str, part: SliceReport) -> list[str]:
    return [name, str(part.count("field_count")), str(part.count("missing_count"))] + [
        _cell(part.metric(metric)) for metric, _ in _COLUMNS
    ]


def summary_text(report: Report) -> str:
    """A fixed-width table: one row per field, then per field type, then overall.

    Each cell is ``successes/trials rate [95% Wilson interval]``.
    """
    header = ["slice", "fields", "missing"] + [title for _, title in _COLUMNS]
    rows = [header]
    for field_id, part in report.by_field.items():
        rows.append(_row(field_id, part))
    if len(report.by_field_type) < len(report.by_field):  # else each type is one field
        for type_name, part in report.by_field_type.items():
            rows.append(_row(f"type {type_name}", part))
    rows.append(_row("overall", report.overall))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    extras = [_extras(field_id, part) for field_id, part in report.by_field.items()]
    if any(extras):
        lines += ["", "type-specific metrics:"]
        lines += [line for line in extras if line]
    return "\n".join(lines)


def _extras(field_id: str, part: SliceReport) -> str:
    # One line per field: its type-specific metrics and kappa, if any.
    cells = [
        f"{name.replace('_', ' ')} {m.success_count}/{m.total_count}"
        for name, m in part.metrics.items()
        if name not in CORE_METRICS
    ]
    if part.kappa is not None:
        kappa = part.kappa
        if kappa.value is None or kappa.interval is None:
            cells.append(f"kappa undefined ({kappa.pairs} pairs)")
        else:
            low, high = kappa.interval
            cells.append(f"kappa {kappa.value:.2f} [{low:.2f}, {high:.2f}] ({kappa.pairs} pairs)")
    return f"  {field_id}: " + "; ".join(cells) if cells else ""
