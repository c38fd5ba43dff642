"""A short human-readable summary of a report, for terminals.

Value-free by construction: it reads only a :class:`~chartscore.report.Report`
and must not import the modules that hold values.
"""

from __future__ import annotations

from chartscore.report import MetricResult, Report, SliceReport

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
    for type_name, part in report.by_field_type.items():
        rows.append(_row(f"type {type_name}", part))
    rows.append(_row("overall", report.overall))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
