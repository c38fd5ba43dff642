"""The weighted estimate: the overall slice's metrics under a declared sampling design.

With a strata file that declares each stratum's sampling fraction, a report's overall slice
carries each binomial metric weighted by ``1 / fraction`` over the sampled strata
(docs/metrics.md, "Weighted estimate"). The records and their arithmetic live here; the
report (:mod:`chartscore.documents.report`, which re-exports them) and the shared report
read them back from documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore.documents.metric_results import Interval
from chartscore.documents.tally import Binomial, Tally
from chartscore.stats.clustered import ClusterSums, published_design_effect
from chartscore.stats.weighting import (
    weighted_design_effect,
    weighted_quantile,
    weighted_rate,
    weighted_wilson,
)

_FRACTION: Final = re.compile(r"1|0\.[0-9]{0,29}[1-9]")
"""A sampling fraction as a document writes it: ``0.25``, ``1``."""


def is_fraction_text(text: str) -> bool:
    """Whether ``text`` is a sampling fraction as a document writes it (``0.25``, ``1``)."""
    return _FRACTION.fullmatch(text) is not None


def fraction_text(fraction: Decimal) -> str:
    """A declared sampling fraction as plain decimal text, without trailing zeros."""
    return format(fraction.normalize(), "f")


@attrs.frozen
class WeightedMetric:
    """One metric's weighted overall estimate (docs/metrics.md, "Weighted estimate").

    Attributes:
        estimate: ``sum w_h Y_h / sum w_h M_h``; None with no trials.
        design_effect: The published design effect of its linearized variance.
        interval: Wilson's interval on ``M / design_effect`` rows.
    """

    estimate: float | None
    design_effect: float | None
    interval: Interval | None

    @classmethod
    def of(
        cls,
        parts: list[tuple[Decimal, int, int]],
        z: float,
        sums: list[ClusterSums] | None = None,
        shown: float | None = None,
        cases: list[int] | None = None,
    ) -> WeightedMetric:
        """The figures from each stratum's (fraction, successes, trials), and either its
        per-case sums (scoring) or the published design effect and each stratum's cases
        with trials (reading a document; ``cases`` None for a format 2 document)."""
        rate = weighted_rate(parts)
        if rate is None:
            return cls(None, None, None)
        if sums is not None:
            shown = published_design_effect(weighted_design_effect(parts, sums, rate))
            cases = [part.cases for part in sums]
        assert shown is not None
        trials = sum(m for _, _, m in parts)
        census = all(fraction == 1 for fraction, _, _ in parts)  # no variance is estimated
        quantile = z if cases is None or census else weighted_quantile(z, cases)
        if quantile is None:
            return cls(float(rate), shown, (0.0, 1.0))
        return cls(float(rate), shown, weighted_wilson(rate, trials, shown, quantile))

    def to_dict(self) -> dict[str, object]:
        """``{"estimate", "design_effect", "interval"}``."""
        return {
            "estimate": self.estimate,
            "design_effect": self.design_effect,
            "interval": None if self.interval is None else list(self.interval),
        }


@attrs.frozen
class WeightedEstimate:
    """The overall slice's weighted estimates, from a declared sampling design.

    Attributes:
        fractions: Each sampled stratum's declared fraction, by name (``"site=A"``).
        metrics: Each overall binomial metric's :class:`WeightedMetric`.
    """

    fractions: Mapping[str, Decimal]
    metrics: Mapping[str, WeightedMetric]

    def to_dict(self) -> dict[str, object]:
        """``{"fractions": {"site=A": "0.25"}, "metrics": {name: {...}}}``."""
        return {
            "fractions": {name: fraction_text(f) for name, f in self.fractions.items()},
            "metrics": {name: metric.to_dict() for name, metric in self.metrics.items()},
        }


def weighted_of_tally(tally: Tally, z: float) -> WeightedEstimate | None:
    """The overall slice's metrics weighted by 1 / fraction over the sampled key's strata."""
    if not tally.sampling:
        return None
    names = list(tally.sampling)
    metrics: dict[str, WeightedMetric] = {}
    for metric in tally.by_stratum[names[0]].metrics:
        parts = [
            (tally.sampling[name], *_counts(tally.by_stratum[name].metrics[metric]))
            for name in names
        ]
        sums = [tally.by_stratum[name].clusters[metric] for name in names]  # type: ignore[index]
        metrics[metric] = WeightedMetric.of(parts, z, sums=sums)
    return WeightedEstimate(dict(tally.sampling), metrics)


def _counts(binomial: Binomial) -> tuple[int, int]:
    return binomial.success_count, binomial.total_count
