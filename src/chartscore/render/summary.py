"""The summary renderer: one line per field, for a person at a terminal.

It reads a :class:`View` as every renderer does, and keeps only what decides a
release: per field, the rows it rests on (``n``: answerable gold rows, the trials
of normalized agreement), normalized agreement with its interval, kappa where the
field has one, and the *worst safety rate*: the highest rate among the error
metrics the slice reports (``answerable_abstention``, ``unanswerable_answer``,
``wrong_type_answer`` and, for ordinal fields, ``ordinal_later`` and
``ordinal_earlier``), named, with its upper bound. Then one line for all fields
pooled (its interval case-clustered), and the gates' verdicts when they were
checked. A comparison shows both systems' agreement, the difference with its
interval and the candidate's worst safety rate; an agreement document each
field's pairs of raters.

Nothing is computed here: every figure is one the view holds, formatted as the
table formats it, so a suppressed number of a shared document reads
``suppressed`` or its bound, never 0. A withheld error rate that could be higher
than every shown one is the worst safety rate (its bound, if it has one), since
no shown rate can be called the worst while it might exceed them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Final

from chartscore.documents.gates import GateResults
from chartscore.render._numbers import (
    NO_TRIALS,
    SUPPRESSED,
    TOO_FEW_PAIRS,
    bound_range,
    interval_text,
    percent,
    value_text,
    withheld_rate,
)
from chartscore.render.table import WIDTH, table_lines
from chartscore.render.verdicts import verdict_lines
from chartscore.render.view import Column, Estimate, Kind, Row, Table, View, level_text
from chartscore.stats.reliability import MIN_COEFFICIENT_PAIRS

AGREEMENT: Final = "normalized_agreement"
"""The agreement a summary shows."""
SUMMARY_FACTS: Final = (
    "date",
    "margin",
    "gold rows",
    "run cost",
    "baseline run cost",
    "candidate run cost",
    "answers",
    "baseline",
    "candidate",
    "disclosure",
    "raters",
    "ceiling (best)",
    "warning",
)
"""The header lines of a view that a summary keeps, by label; the others are in the table."""

FEW_PAIRS: Final = "*"
"""Marks a kappa from too few pairs for a reliable interval (the table says ``too few pairs``)."""

_BASELINE: Final = f"{AGREEMENT}.baseline"
_CANDIDATE: Final = f"{AGREEMENT}.candidate"
_DIFFERENCE: Final = f"{AGREEMENT}.difference"

Key = tuple[str, str]
"""(slice kind, name): a field, or ``("overall", "")``."""


def rate_text(estimate: Estimate | None) -> str:
    """``65% [43-82]``; ``suppressed`` or its bound; ``no trials``; ``""`` for no estimate."""
    if estimate is None:
        return ""
    if withheld_rate(estimate):
        return bound_range(estimate) or SUPPRESSED
    if estimate.suppressed and estimate.kind is Kind.DIFFERENCE:
        return bound_range(estimate) or SUPPRESSED
    value, interval = value_text(estimate), interval_text(estimate)
    if estimate.value is None:
        return value
    if interval.endswith(TOO_FEW_PAIRS):
        interval = interval.removesuffix(TOO_FEW_PAIRS).rstrip() + FEW_PAIRS
    return f"{value} {interval}" if interval else value


def worst_error(estimates: Iterable[Estimate]) -> Estimate | None:
    """The slice's worst safety rate: the highest error rate, its upper bound breaking ties.

    A withheld rate (suppressed) is the worst when it could exceed the highest shown
    one: it has no bound, or its bound's upper end is above that rate. None when the
    slice has no error metric; a rate with no trials is the worst only if every one has
    none.
    """
    errors = [e for e in estimates if e.error and e.kind is Kind.RATE and not e.label]
    if not errors:
        return None
    shown = [e for e in errors if e.value is not None]
    worst = max(shown, key=lambda e: (e.value, (e.interval or (0.0, 0.0))[1]), default=None)
    withheld = [e for e in errors if withheld_rate(e)]
    highest = -1.0 if worst is None or worst.value is None else worst.value
    could_be_worse = [e for e in withheld if e.bound is None or e.bound[1] > highest]
    if could_be_worse:  # the one that could be highest: no bound first, then the widest
        return max(could_be_worse, key=lambda e: (e.bound is None, (e.bound or (0.0, 0.0))[1]))
    return worst if worst is not None else errors[0]


def worst_text(estimate: Estimate | None) -> str:
    """``unanswerable_answer 20% <=51%``: the metric, its rate and its interval's upper end."""
    if estimate is None:
        return ""
    metric = estimate.metric.partition(".")[0]
    if withheld_rate(estimate):
        return f"{metric} {rate_text(estimate)}"
    if estimate.value is None:
        return f"{metric} {NO_TRIALS}"
    interval = estimate.interval
    upper = "" if interval is None else f" <={percent(interval[1])}%"
    return f"{metric} {percent(estimate.value)}%{upper}"


def _index(view: View) -> dict[Key, dict[str, Estimate]]:
    # Each field's and the overall slice's unlabelled estimates by metric, in the view's
    # order (the order it sorts its rows in).
    found: dict[Key, dict[str, Estimate]] = {}
    for estimate in view.estimates:
        if estimate.slice in ("field", "overall") and not estimate.label:
            found.setdefault((estimate.slice, estimate.name), {})[estimate.metric] = estimate
    return found


def _aligned(texts: Sequence[str]) -> list[str]:
    """Rates right-aligned on their ``%`` and intervals after them, as a table column."""
    pieces = [text.split(" ", 1) if text[:1].isdigit() else [text] for text in texts]
    width = max((len(p[0]) for p in pieces if len(p) == 2), default=0)
    return [f"{p[0]:>{width}} {p[1]}" if len(p) == 2 else p[0] for p in pieces]


def _n(estimate: Estimate | None) -> int | str | None:
    # The rows a figure rests on; None (suppressed) when withheld.
    return "" if estimate is None else estimate.total_count


def _kappa_text(estimate: Estimate | None) -> str:
    # An ordinal field's kappa is marked: it is the weighted kappa (quadratic), not Cohen's.
    text = rate_text(estimate)
    return f"{text} {_WEIGHTED}" if estimate is not None and estimate.weighted else text


_WEIGHTED: Final = "(weighted)"


def _report_table(view: View, slices: dict[Key, dict[str, Estimate]]) -> Table:
    keys = [key for key, found in slices.items() if AGREEMENT in found]
    agreement = _aligned([rate_text(slices[key][AGREEMENT]) for key in keys])
    kappa = [_kappa_text(slices[key].get("kappa")) for key in keys]
    worst = [worst_text(worst_error(slices[key].values())) for key in keys]
    rows = tuple(
        Row(kind, name, (_n(slices[(kind, name)][AGREEMENT]), agreement[i], worst[i], kappa[i]))
        for i, (kind, name) in enumerate(keys)
    )
    columns: tuple[Column, ...] = (
        Column("n"),
        Column("agreement", AGREEMENT),
        Column("worst safety rate", error=True),
        Column("kappa", "kappa"),
    )
    if not any(kappa):
        columns, rows = columns[:-1], tuple(Row(r.slice, r.name, r.cells[:-1]) for r in rows)
    return Table("summary", "", "", "field", columns, rows)


def _comparison_table(slices: dict[Key, dict[str, Estimate]]) -> Table:
    keys = [key for key, found in slices.items() if _CANDIDATE in found]
    baseline = _aligned([rate_text(slices[key].get(_BASELINE)) for key in keys])
    candidate = _aligned([rate_text(slices[key][_CANDIDATE]) for key in keys])
    difference = [rate_text(slices[key].get(_DIFFERENCE)) for key in keys]
    worst = [
        worst_text(worst_error(e for m, e in slices[key].items() if m.endswith(".candidate")))
        for key in keys
    ]
    rows = tuple(
        Row(
            kind,
            name,
            (
                _n(slices[(kind, name)][_CANDIDATE]),
                baseline[i],
                candidate[i],
                difference[i],
                worst[i],
            ),
        )
        for i, (kind, name) in enumerate(keys)
    )
    columns = (
        Column("n"),
        Column("baseline", _BASELINE),
        Column("candidate", _CANDIDATE),
        Column("difference", _DIFFERENCE),
        Column("candidate's worst safety rate", error=True),
    )
    return Table("summary", "", "", "field", columns, rows)


def _pairs_table(view: View) -> Table:
    # An agreement document: each field's pairs of raters, then all fields pooled.
    kappas = {(e.slice, e.name, e.label): e for e in view.estimates if e.metric == "pair_kappa"}
    pairs = [e for e in view.estimates if e.metric == "pair_agreement"]
    agreement = _aligned([rate_text(e) for e in pairs])
    rows = [
        Row(
            e.slice,
            e.name,
            (
                e.label,
                e.total_count,
                agreement[i],
                rate_text(kappas.get((e.slice, e.name, e.label))),
            ),
        )
        for i, e in enumerate(pairs)
    ]
    columns = (Column("raters"), Column("n"), Column("agreement"), Column("kappa"))
    return Table("summary", "", "", "field", columns, tuple(rows), repeat=1)


def _notes(view: View, table: Table) -> list[str]:
    level = level_text(view.confidence)
    headings = {column.heading for column in table.columns}
    if "raters" in headings:
        return [
            f"n: rows both raters answered; observed agreement and Cohen's kappa, {level} "
            "intervals.",
            f"kappa {FEW_PAIRS}: fewer than {MIN_COEFFICIENT_PAIRS} pairs, no reliable interval.",
            "Full tables: --format table; definitions: docs/metrics.md.",
        ]
    notes = [
        "n: answerable gold rows. agreement: normalized"
        + ("; difference: candidate - baseline" if "difference" in headings else "")
        + f"; {level} intervals (case-clustered for all fields).",
        "Worst safety rate: the highest error rate, and <= its upper bound. Full tables: "
        "--format table.",
    ]
    if "kappa" in headings:
        notes.append(
            f"kappa: Cohen's kappa; {_WEIGHTED}: an ordinal field's weighted kappa (quadratic)."
        )
        notes.append(
            f"kappa {FEW_PAIRS}: fewer than {MIN_COEFFICIENT_PAIRS} pairs, no reliable interval."
        )
    if view.shared:
        notes.append(
            "suppressed: withheld by the disclosure rule; a withheld rate shows instead the "
            "bound its published ranges prove, where they prove one (<=, >= or a range; fields: "
            f"the widest {level} Wilson interval; all fields: the rate's own range)."
        )
    return notes


def summary_lines(view: View, verdicts: GateResults | None = None) -> list[str]:
    """The summary's lines (without line ends): header, one line per field, all fields, gates."""
    slices = _index(view)
    comparison = any(_CANDIDATE in found for found in slices.values())
    pairs = not comparison and not any(AGREEMENT in found for found in slices.values())
    if comparison:
        table = _comparison_table(slices)
    elif pairs:
        table = _pairs_table(view)
    else:
        table = _report_table(view, slices)
    lines = [f"{view.title}: summary"]
    for label, text in view.facts:
        if label in SUMMARY_FACTS:
            lines += textwrap.wrap(
                f"{label}: {text}", WIDTH, subsequent_indent="  ", break_on_hyphens=False
            )
    lines.append("")
    lines += table_lines(table) if table.rows else ["no fields"]
    if verdicts is not None:
        lines += ["", *verdict_lines(verdicts)]
    lines.append("")
    for note in _notes(view, table):
        lines += textwrap.wrap(note, WIDTH, break_on_hyphens=False)
    return lines


def render_summary(view: View, verdicts: GateResults | None = None) -> str:
    """The view as a short terminal summary; ends with a line end.

    Args:
        view: Any view (a report's, a shared report's, a comparison's, an
            agreement document's).
        verdicts: Gates checked on the same document
            (:func:`~chartscore.documents.gates.evaluate`): their verdicts follow
            the table.
    """
    return "\n".join(summary_lines(view, verdicts)) + "\n"
