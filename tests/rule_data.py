"""Two cohorts in which an outsider who knows the published rule pinned a suppressed cell.

Found with the test suite's cohort generator (``build_cohort``: ``["multi"]``, 28 cases, seed
3; ``["multi", "boolean"]``, 23 cases, seed 44) under the audit of chartscore 0.x before the
rule was part of the attacker's model (issue 22, item 1), and written out here row by row so
that they stay fixed whatever the generator becomes. Each row: (gold value, answer, supported);
``None`` gold is an unanswerable chart, ``None`` answer an abstention and ``MISSING`` no
prediction at all.
"""

from __future__ import annotations

from typing import Any

from disclosure_reference import Cohort

MISSING = object()

# One multi-select field, 28 cases. The old share published field_count 28, answered_count
# 17, abstention_correctness.success_count 13 and item_recall.total_count 24; the rule-aware
# attacker pins unanswerable_answer.success_count (6) to [4, 10].
ONE_MULTI: dict[str, tuple[str, list[tuple[Any, Any, bool]]]] = {
    "hx.symptoms": (
        "multi",
        [
            (["x", "y"], "x", False),
            (None, None, False),
            (None, ["w"], False),
            (["x", "y"], MISSING, False),
            (["z", "y"], ["X", "y"], True),
            (["z", "y"], MISSING, False),
            (None, MISSING, False),
            (None, ["y", "x"], True),
            (None, ["w"], False),
            (["z", "y"], ["X", "y"], False),
            (["x"], ["x"], False),
            ([], MISSING, False),
            ([], ["w"], False),
            (["z", "y"], None, False),
            ([], MISSING, False),
            (None, "x", True),
            (["x"], MISSING, False),
            ([], [], True),
            (["z", "y"], ["z", "y"], True),
            (["x", "y"], ["x", "y"], False),
            (["x"], [], True),
            ([], None, False),
            (["x"], ["x"], True),
            (None, None, False),
            (None, ["y", "x"], False),
            (["x", "y"], MISSING, False),
            (None, ["y", "x"], False),
            (["z", "y"], ["z", "y"], False),
        ],
    )
}

# A multi-select and a boolean field, 23 cases. The old share published the overall
# unanswerable_count 14, the multi field's item_recall.total_count 17 and the boolean
# field's kappa pairs 13; the rule-aware attacker pins the boolean field's
# unanswerable_count (7) to [2, 10].
MULTI_AND_BOOLEAN: dict[str, tuple[str, list[tuple[Any, Any, bool]]]] = {
    "hx.symptoms": (
        "multi",
        [
            (["x"], ["x"], True),
            (["x"], ["x"], True),
            (None, "x", False),
            (["z", "y"], MISSING, False),
            ([], [], False),
            (["x"], None, False),
            (None, None, False),
            (None, ["x"], False),
            (["x"], ["x"], True),
            (["z", "y"], ["z", "y"], True),
            (["x", "y"], ["x", "y"], False),
            (None, MISSING, False),
            ([], ["w"], False),
            (["x", "y"], ["x", "y"], False),
            (None, ["x"], True),
            (["x"], None, False),
            ([], None, False),
            (["z", "y"], ["z", "y"], False),
            (None, [], True),
            (None, MISSING, False),
            (["x"], ["x"], True),
            (["x"], ["x"], True),
            ([], ["x"], True),
        ],
    ),
    "dx.diabetes": (
        "boolean",
        [
            (False, False, False),
            (True, True, False),
            (False, True, False),
            (False, False, True),
            (None, "yes", False),
            (True, "yes", True),
            (True, 1, True),
            (None, None, False),
            (False, MISSING, False),
            (False, False, True),
            (True, True, False),
            (True, True, False),
            (False, False, True),
            (True, True, True),
            (True, True, True),
            (None, 1, True),
            (None, MISSING, False),
            (False, False, True),
            (None, "yes", False),
            (None, True, True),
            (True, True, True),
            (None, "yes", False),
            (False, False, False),
        ],
    ),
}


def cohort_of(fields: dict[str, tuple[str, list[tuple[Any, Any, bool]]]]) -> Cohort:
    """The cohort: case ``i`` of every field is one chart."""
    cohort = Cohort()
    for field_id, (field_type, rows) in sorted(fields.items()):
        cohort.schema[field_id] = {"type": field_type}
        for index, (gold, answer, supported) in enumerate(rows):
            case = f"case-{index:05d}"
            cohort.gold.append((case, field_id, field_type, gold))
            if answer is not MISSING:
                cohort.predictions[case, field_id] = (answer, supported)
    return cohort
