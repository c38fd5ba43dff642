"""The value-free comparison of two systems on the same gold (placeholder types).

These are the tally types the paired scorer fills; the full comparison report
(intervals, paired differences, McNemar) is built on them.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chartscore.tally import SliceTally


@attrs.frozen
class PairedBinomial:
    """One paired metric over the same gold rows for both systems."""

    both: int
    baseline_only: int
    candidate_only: int
    neither: int


@attrs.frozen
class PairedSliceTally:
    """Each system's slice tally and the paired metrics of one slice."""

    baseline: SliceTally
    candidate: SliceTally
    paired: Mapping[str, PairedBinomial]


@attrs.frozen
class PairedTally:
    """All slices of a comparison run."""

    overall: PairedSliceTally
    by_field: Mapping[str, PairedSliceTally]
    by_field_type: Mapping[str, PairedSliceTally]
