"""The disclosure rule's constants and the names of the numbers it protects.

The rule is the CMS cell-size suppression policy: no number from 1 to
``min_cell - 1`` may be shown or be derivable (0 may be shown). The unit is
distinct cases (patients' charts), not rows. This module holds only closed
vocabulary; it is imported by every other module of the package. The names a
shared document is written in are defined in :mod:`chartscore.documents.shared_rule`
and re-exported here.
"""

from __future__ import annotations

from typing import Final

from chartscore import metrics as catalog
from chartscore.documents.shared_rule import (
    CASE_FLOOR_VERSION,
    FIELD_TYPE_NAMES,
    IGNORED_COUNT,
    KAPPA_PUBLISHED,
    KAPPA_TYPES,
    LABELS_VERSION,
    PAIRS,
    RANGE_SUFFIX,
    RATE_RANGE,
    READABLE_VERSIONS,
    REQUIRED_TYPE_METRICS_OF,
    RULE,
    SHARED_FORMAT,
    SHARED_FORMAT_VERSION,
    STRATUM,
    STRATUM_FIELD_TYPE,
    SUCCESS,
    TOTAL,
    TYPE_METRICS_OF,
    UNIT,
    WILSON_BOUND,
    metric_quantity,
)

DEFAULT_MIN_CELL: Final = 11
"""Publish 0 or at least 11: the CMS policy suppresses cells from 1 to 10."""

SLICE_KINDS: Final = ("overall", "field", "field_type", STRATUM, STRATUM_FIELD_TYPE)
"""The kinds of slice, as named in sensitivity keys and audit rows."""

FAILURES: Final = "failures"

AGREEMENT_METRICS: Final = frozenset(catalog.names(lambda m: m.hidden_last))
"""The numbers people need most in a field slice: hidden last within a field."""

__all__ = [
    "AGREEMENT_METRICS",
    "CASE_FLOOR_VERSION",
    "DEFAULT_MIN_CELL",
    "FAILURES",
    "FIELD_TYPE_NAMES",
    "IGNORED_COUNT",
    "KAPPA_PUBLISHED",
    "KAPPA_TYPES",
    "LABELS_VERSION",
    "PAIRS",
    "RANGE_SUFFIX",
    "RATE_RANGE",
    "READABLE_VERSIONS",
    "REQUIRED_TYPE_METRICS_OF",
    "RULE",
    "SHARED_FORMAT",
    "SHARED_FORMAT_VERSION",
    "SLICE_KINDS",
    "STRATUM",
    "STRATUM_FIELD_TYPE",
    "SUCCESS",
    "TOTAL",
    "TYPE_METRICS_OF",
    "UNIT",
    "WILSON_BOUND",
    "metric_quantity",
]
