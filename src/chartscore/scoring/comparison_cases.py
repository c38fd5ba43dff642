"""The distinct cases behind every number of a shared comparison, counted inside the boundary.

The disclosure rule counts patients, not rows. A shared comparison's
protected quantities (:func:`~chartscore.disclosure.comparison_model.quantity_cells`)
count gold rows by the pair of the two systems' outcome classes; here each is
evaluated on every row's pair of outcome masks with the row tests of
:mod:`chartscore.scoring.outcomes`. In a field slice each row is one case; in
a pooled slice a case counts once however many of its rows qualify. Holds
case ids: private, in memory, and only the counts leave.
"""

from __future__ import annotations

from collections.abc import Mapping

from chartscore.disclosure.comparison_model import quantity_cells
from chartscore.scoring.outcomes import COUNT_ROWS, METRIC_ROWS

Key = tuple[str, str, str]


def _trial(test: str, row: object) -> bool:
    assert isinstance(row, int)
    return test in COUNT_ROWS or METRIC_ROWS[test][0](row)


def _hit(test: str, row: object) -> bool:
    assert isinstance(row, int)
    found = COUNT_ROWS.get(test)
    return found(row) if found is not None else METRIC_ROWS[test][1](row)


def comparison_case_counts(
    rows: Mapping[str, tuple[str, Mapping[str, tuple[int, int]]]],
) -> dict[Key, int]:
    """Distinct cases per protected quantity of every slice (overall, fields, field types).

    Args:
        rows: Each field's type and its rows' (baseline, candidate) masks by
            case id (:meth:`~chartscore.scoring.paired_scorer.PairedScorer.paired_rows`).
    """
    cells = quantity_cells()
    out: dict[Key, int] = {}
    pooled: dict[Key, set[str]] = {}
    types = sorted({field_type for field_type, _ in rows.values()})
    for name in cells:
        pooled["overall", "", name] = set()
        for type_name in types:
            pooled["field_type", type_name, name] = set()
    for field_id, (field_type, pairs) in sorted(rows.items()):
        # A row's tests depend on its pair of masks alone, and a field has few distinct
        # pairs: test each pair once, not each row (140,400 cell tests on the study's
        # comparison became 33,750).
        by_pair: dict[tuple[int, int], list[str]] = {}
        for case, pair in pairs.items():
            by_pair.setdefault(pair, []).append(case)
        for name, (cell, _) in cells.items():
            rows_in = [
                case
                for (baseline, candidate), cases in by_pair.items()
                if cell.counts(_trial, _hit, baseline, candidate)
                for case in cases
            ]
            out["field", field_id, name] = len(rows_in)
            pooled["overall", "", name].update(rows_in)
            pooled["field_type", field_type, name].update(rows_in)
    for key, cases in pooled.items():
        out[key] = len(cases)
    return out
