"""The shared documents' vocabulary: format names and versions, and the names of the numbers.

The rule is the CMS cell-size suppression policy: no number from 1 to
``min_cell - 1`` may be shown or be derivable (0 may be shown). The unit is
distinct cases (patients' charts), not rows. This module holds only the
closed vocabulary a shared report and a shared comparison are written and
read in; the engine's own constants, and these again, are in
:mod:`chartscore.disclosure.rule`.
"""

from __future__ import annotations

from typing import Final

from chartscore import metrics as catalog
from chartscore.documents import _shell

RULE: Final = "cell_size"
"""The name of the rule recorded in a shared report."""

UNIT: Final = "cases"
"""What is counted against ``min_cell``: distinct cases, never rows."""

SHARED_FORMAT: Final = "chartscore.shared_report"
SHARED_FORMAT_VERSION: Final = 5
# 2: the confidence level, and the pooled slices' clustered figures (where their counts are shown).
# 3: a suppressed number's proven range beside it (``<name>_range``), and a metric's rate bound.
# 4: per-label confusion metrics with their F1 figures, and AC1/AC2 and alpha.
# 5: clustered intervals on Student's t over the cases the published numbers prove.
READABLE_VERSIONS: Final = (3, 4, 5)
"""Earlier documents are read, and written back, as they are: format 3 has no labels and no
coefficients, formats 3 and 4 computed clustered intervals with ``z``."""
LABELS_VERSION: Final = 4
"""The first format with per-label metrics and coefficients."""
CASE_FLOOR_VERSION: Final = 5
"""The first format whose clustered intervals use Student's t over the case floor."""

KAPPA_PUBLISHED: Final = "kappa_published"
"""Audit status: a kappa (or AC1, AC2, alpha) value shown beside a hidden count it needs."""

RANGE_SUFFIX: Final = "_range"
"""``missing_count_range`` stands beside a suppressed ``missing_count``."""

WILSON_BOUND: Final = "wilson"
"""A field slice's rate bound: the widest Wilson interval over the feasible counts."""
RATE_RANGE: Final = "rate_range"
"""A pooled slice's rate bound: the range of the rate itself, not an interval estimate."""

IGNORED_COUNT: Final = "ignored_prediction_count"
"""An optional count a slice may carry; protected like the six counts."""

STRATUM: Final = "stratum"
"""A stratum slice's kind (``site=A``): every field over one stratum's cases."""
STRATUM_FIELD_TYPE: Final = "stratum_field_type"
"""A stratum-and-type slice's kind (``site=A/date``)."""


SUCCESS: Final = "success_count"
TOTAL: Final = "total_count"
PAIRS: Final = "kappa.pairs"

FIELD_TYPE_NAMES: Final = _shell.FIELD_TYPE_NAMES
"""The field types (:data:`chartscore.documents._shell.FIELD_TYPE_NAMES`)."""

KAPPA_TYPES: Final = frozenset({"categorical", "boolean", "ordinal"})
"""Field types whose field slices carry kappa and a majority baseline."""

# Which type-specific metrics each field type may report.
TYPE_METRICS_OF: Final = {
    field_type.value: frozenset(
        m.name for m in catalog.CATALOG if m.family == catalog.TYPE and field_type in m.types
    )
    for field_type in catalog.FieldType
}
# The type-specific metrics a field of the type must report (the rest are optional).
REQUIRED_TYPE_METRICS_OF: Final = {
    name: frozenset(m for m in metrics if catalog.METRICS[m].option == catalog.ALWAYS)
    for name, metrics in TYPE_METRICS_OF.items()
}


def metric_quantity(metric: str, part: str) -> str:
    """The quantity name of one part of a metric, e.g. ``exact_agreement.total_count``."""
    return f"{metric}.{part}"
