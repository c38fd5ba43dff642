"""Statistics on counts: integers in, numbers out, no record and no value.

One module per concept: ``binomial`` (Wilson intervals, kappa), ``student_t`` and
``clopper_pearson`` (decimal quantiles), ``paired``, ``clustered``, ``weighting``,
``confusion``, ``reliability``, ``magnitude`` and ``uncertainty``. The whole folder sits
below the privacy boundary (docs/architecture.md).

``chartscore.stats`` was one module before this folder; its names are re-exported here so
that ``from chartscore.stats import wilson_interval`` keeps working.
"""

from chartscore.stats.binomial import (
    Z95,
    Cell,
    CountRange,
    cohen_kappa,
    rate_range,
    widest_wilson,
    wilson_interval,
    wilson_rate_interval,
)

__all__ = [
    "Z95",
    "Cell",
    "CountRange",
    "cohen_kappa",
    "rate_range",
    "widest_wilson",
    "wilson_interval",
    "wilson_rate_interval",
]
