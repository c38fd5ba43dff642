"""The coverage grid: every interval chartscore reports, simulated where validation is hardest.

Each cell simulates a validation many times (seeded) and counts how often the 95% interval's
lower bound lies above the truth (``low``: a ``min_lower`` gate would pass falsely) and its
upper bound below it (``high``: a ``max_upper`` gate would pass falsely). Every interval is
computed with chartscore's own functions, as the report computes it; the rule before this
change (``before``: the normal quantile, and the worst-case design effect only at a rate of 0
or 1) is computed beside it in the same run. A cell is flagged when coverage is below 0.93 or
a one-sided error above 0.035 (4,000 runs: standard errors 0.0034 and 0.0025).

Families:

- ``rate``: a pooled slice's clustered interval. Charts C in {10, 20, 30, 50, 100, 300};
  fields per chart 5, 13 or 40, unbalanced (1 to 40, uniform), or missing at random (each of
  13 or 40 fields present with probability 1/2): six layouts; true rate p in {0.5, 0.9, 0.98};
  intraclass correlation rho in {0, 0.1, 0.3} (chart rates drawn from a beta distribution):
  324 cells.
- ``paired``: a 5-point non-inferiority gate (``min_difference_lower = -0.05``) on the
  clustered difference when the candidate is exactly 5 points worse: its false-pass rate.
- ``weighted``: the weighted overall estimate of a stratified sample.
- ``bias``: the mean signed error's interval, normal errors.
- ``auroc``: the declared-uncertainty AUROC's interval (binormal scores).
- ``coefficients``: kappa, AC1 and alpha on a binary field.

    python benchmarks/coverage_grid.py                   # every family, 4,000 runs a cell
    python benchmarks/coverage_grid.py --family rate --runs 1000

Needs numpy and scipy (the test extra). docs/metrics.md quotes a run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Final

import numpy as np
from scipy.stats import norm

from chartscore.documents.report import CoefficientResult, KappaResult, WeightedMetric
from chartscore.documents.tally import KappaTable
from chartscore.stats.binomial import Z95
from chartscore.stats.clustered import (
    ClusterSums,
    PairedClusterSums,
    clustered_newcombe,
    clustered_wilson,
    design_effect,
    difference_design_effect,
    published_design_effect,
)
from chartscore.stats.magnitude import ErrorSums, bias_interval
from chartscore.stats.uncertainty import (
    UncertaintySums,
    delong_interval,
    hanley_mcneil_interval,
    published_standard_error,
)
from chartscore.stats.weighting import weighted_design_effect, weighted_rate

CHARTS = (10, 20, 30, 50, 100, 300)
LAYOUTS = ("5", "13", "40", "unbalanced", "sparse 13", "sparse 40")
RATES = (0.5, 0.9, 0.98)
RHOS = (0.0, 0.1, 0.3)
COVERAGE_FLAG = 0.93
SIDE_FLAG = 0.035

Outcome = tuple[float, float]
"""(low, high): the share of runs whose lower bound lies above the truth, upper below it."""


def flagged(outcome: Outcome) -> bool:
    """Whether a cell is flagged: coverage below 0.93 or a one-sided error above 0.035."""
    low, high = outcome
    return 1 - low - high < COVERAGE_FLAG or max(low, high) > SIDE_FLAG


def chart_rates(rng: np.random.Generator, p: float, rho: float, shape: object) -> np.ndarray:
    """Per-chart rates with mean ``p`` and intraclass correlation ``rho`` (beta mixing)."""
    if rho == 0:
        return np.full(shape, p)  # type: ignore[call-overload,no-any-return]
    scale = (1 - rho) / rho
    return rng.beta(p * scale, (1 - p) * scale, size=shape)  # type: ignore[arg-type]


def layout_sizes(rng: np.random.Generator, layout: str, charts: int, runs: int) -> np.ndarray:
    """Rows per chart for every run: fixed, unbalanced (1 to 40) or missing at random."""
    if layout.isdigit():
        return np.full((runs, charts), int(layout))
    if layout == "unbalanced":
        return rng.integers(1, 41, size=(runs, charts))
    return rng.binomial(int(layout.split()[1]), 0.5, size=(runs, charts))


def sums_of(y: np.ndarray, m: np.ndarray, *, before: bool) -> tuple[int, int, ClusterSums]:
    """A pooled slice's counts and per-case sums; ``before`` hides the minority counts."""
    used = m > 0
    y, m = y[used], m[used]
    cases = int(used.sum())
    success = cases if before else int((y > 0).sum())
    failure = cases if before else int((y < m).sum())
    sums = ClusterSums(
        cases, int((y * y).sum()), int((y * m).sum()), int((m * m).sum()), success, failure
    )
    return int(y.sum()), int(m.sum()), sums


def rate_cell(
    seed: int, charts: int, layout: str, p: float, rho: float, *, runs: int
) -> tuple[Outcome, Outcome]:
    """(before, now) for one cell of the clustered-interval grid."""
    rng = np.random.default_rng(
        [seed, charts, LAYOUTS.index(layout), round(p * 100), round(rho * 100)]
    )
    m = layout_sizes(rng, layout, charts, runs)
    y = rng.binomial(m, chart_rates(rng, p, rho, m.shape))
    tallies = {True: [0, 0], False: [0, 0]}
    for per_y, per_m in zip(y, m, strict=True):
        for before in (True, False):
            k, n, sums = sums_of(per_y, per_m, before=before)
            if n == 0:
                continue
            shown = published_design_effect(design_effect(k, n, sums))
            assert shown is not None
            interval = clustered_wilson(k, n, shown, Z95, cases=None if before else sums.cases)
            assert interval is not None
            tallies[before][0] += interval[0] > p
            tallies[before][1] += interval[1] < p
    return _shares(tallies[True], runs), _shares(tallies[False], runs)


def _shares(counts: Sequence[int], runs: int) -> Outcome:
    return counts[0] / runs, counts[1] / runs


def rate_cells(seed: int, runs: int) -> Iterator[tuple[str, Outcome, Outcome]]:
    """Every cell of the 324-cell grid."""
    for charts in CHARTS:
        for layout in LAYOUTS:
            for p in RATES:
                for rho in RHOS:
                    before, now = rate_cell(seed, charts, layout, p, rho, runs=runs)
                    yield f"C={charts} fields={layout} p={p} rho={rho}", before, now


def paired_cell(seed: int, charts: int, fields: int, rho: float, runs: int) -> tuple[float, float]:
    """(before, now): how often a 5-point non-inferiority gate passes a candidate 5 points worse.

    The baseline is right on a row with its chart's rate (mean 0.90); the candidate flips its
    chart's share of the baseline's right rows (mean 7.8%) and of its wrong ones (mean 20%),
    each chart's rates drawn with intraclass correlation ``rho``, so its rate is 0.85 exactly
    on average: the true difference sits on the margin, and a 95% interval's lower bound
    should clear -0.05 in at most 2.5% of runs.
    """
    rng = np.random.default_rng([seed, charts, fields, round(rho * 100), 2])
    passes = [0, 0]
    for _ in range(runs):
        p = chart_rates(rng, 0.9, rho, charts)
        worse = chart_rates(rng, 0.07 / 0.9, rho, charts)  # candidate wrong where baseline right
        better = chart_rates(rng, 0.2, rho, charts)  # candidate right where baseline wrong
        first = rng.random((charts, fields)) < p[:, None]
        flip = rng.random((charts, fields)) < np.where(first, worse[:, None], better[:, None])
        second = first ^ flip
        b_i = (first & ~second).sum(axis=1)
        c_i = (~first & second).sum(axis=1)
        both = int((first & second).sum())
        b, c = int(b_i.sum()), int(c_i.sum())
        n = charts * fields
        neither = n - both - b - c
        d = c_i - b_i
        sums = PairedClusterSums.of((fields, 1, int(x), int(x) * int(x)) for x in d)
        shown = published_design_effect(difference_design_effect(b, c, n, sums))
        assert shown is not None
        for index, cases in enumerate((None, charts)):
            interval = clustered_newcombe(
                both, c, b, neither, design_effect_shown=shown, z=Z95, cases=cases
            )
            assert interval is not None
            passes[index] += interval[0] >= -0.05
    return passes[0] / runs, passes[1] / runs


def weighted_cell(seed: int, runs: int, p: float, rho: float) -> tuple[Outcome, Outcome]:
    """(before, now): strata of 10, 20 and 20 charts of 13 fields, fractions 0.2, 0.1, 0.1."""
    rng = np.random.default_rng([seed, round(p * 100), round(rho * 100), 3])
    sizes, fractions = (10, 20, 20), (Decimal("0.2"), Decimal("0.1"), Decimal("0.1"))
    tallies = {True: [0, 0], False: [0, 0]}
    for _ in range(runs):
        parts, sums = [], {True: [], False: []}
        for charts in sizes:
            m = np.full(charts, 13)
            y = rng.binomial(m, chart_rates(rng, p, rho, charts))
            for before in (True, False):
                k, n, part = sums_of(y, m, before=before)
                sums[before].append(part)
            parts.append((fractions[len(parts)], k, n))
        rate = weighted_rate(parts)
        assert rate is not None
        for before in (True, False):
            if before and rate in (0, 1):
                shown = 1.0  # the rule before: no spread, design effect 1
            else:
                shown = published_design_effect(weighted_design_effect(parts, sums[before], rate))
            cases = None if before else [s.cases for s in sums[before]]
            found = WeightedMetric.of(parts, Z95, shown=shown, cases=cases)
            assert found.interval is not None
            tallies[before][0] += found.interval[0] > p
            tallies[before][1] += found.interval[1] < p
    return _shares(tallies[True], runs), _shares(tallies[False], runs)


def bias_cell(seed: int, pairs: int, runs: int) -> tuple[float, float]:
    """(before, now): coverage of the bias interval with normal errors (mean 1, sd 3)."""
    rng = np.random.default_rng([seed, pairs, 4])
    covered = [0, 0]
    for _ in range(runs):
        d = [Fraction(round(x * 1000), 1000) for x in rng.normal(1, 3, size=pairs)]
        sums = ErrorSums(
            "field",
            pairs,
            sum((abs(x) for x in d), Fraction(0)),
            sum(d, Fraction(0)),
            sum((x * x for x in d), Fraction(0)),
            0,
            Fraction(0),
        )
        for index, student in enumerate((False, True)):
            interval = bias_interval(sums, Z95, student=student)
            assert interval is not None
            covered[index] += interval[0] <= 1 <= interval[1]
    return covered[0] / runs, covered[1] / runs


def auroc_cell(
    seed: int, agreed: int, disagreed: int, target: float, runs: int
) -> tuple[Outcome, Outcome]:
    """(Hanley-McNeil, DeLong logit) for binormal uncertainties with AUROC ``target``."""
    rng = np.random.default_rng([seed, agreed, disagreed, round(target * 1000), 5])
    delta = np.sqrt(2) * norm.ppf(target)
    tallies = {True: [0, 0], False: [0, 0]}
    for _ in range(runs):
        scores = np.concatenate([rng.normal(delta, 1, agreed), rng.normal(0, 1, disagreed)])
        # Uncertainty falls as the score rises; three decimals, as a model might declare it.
        uncertainty = np.round(1 / (1 + np.exp(scores)), 3)
        rows = [
            (Fraction(round(u * 1000), 1000), index < agreed, 1)
            for index, u in enumerate(uncertainty)
        ]
        sums = UncertaintySums.of(rows, 0)
        truth = _tied_auroc(delta)
        hm = hanley_mcneil_interval(sums, Z95)
        se = published_standard_error(sums.delong_variance)
        dl = delong_interval(sums.agreed, sums.disagreed, sums.ranked_twice, se, Z95)
        for before, interval in ((True, hm), (False, dl)):
            assert interval is not None
            tallies[before][0] += interval[0] > truth
            tallies[before][1] += interval[1] < truth
    return _shares(tallies[True], runs), _shares(tallies[False], runs)


_TIED: dict[float, float] = {}


def _tied_auroc(delta: float) -> float:
    # The population AUROC of the rounded uncertainties (ties count one half), by a large draw.
    found = _TIED.get(delta)
    if found is None:
        rng = np.random.default_rng(12345)
        a = np.round(1 / (1 + np.exp(rng.normal(delta, 1, 2_000_000))), 3)
        d = np.round(1 / (1 + np.exp(rng.normal(0, 1, 2_000_000))), 3)
        found = float(np.mean(a < d) + 0.5 * np.mean(a == d))
        _TIED[delta] = found
    return found


def coefficient_truth(prevalence: float, sensitivity: float, specificity: float) -> dict:
    """The population kappa, AC1 and nominal alpha of a binary field (two raters: gold, system)."""
    p11, p10 = prevalence * sensitivity, prevalence * (1 - sensitivity)
    p01, p00 = (1 - prevalence) * (1 - specificity), (1 - prevalence) * specificity
    agreement = p11 + p00
    answered = p11 + p01
    chance = prevalence * answered + (1 - prevalence) * (1 - answered)
    pooled = (prevalence + answered) / 2
    return {
        "cells": (p00, p01, p10, p11),
        "kappa": (agreement - chance) / (1 - chance),
        "ac1": (agreement - 2 * pooled * (1 - pooled)) / (1 - 2 * pooled * (1 - pooled)),
        "alpha": 1 - (1 - agreement) / (2 * pooled * (1 - pooled)),
    }


def coefficient_cell(
    seed: int, pairs: int, prevalence: float, accuracy: tuple[float, float], runs: int
) -> dict[str, float]:
    """Coverage of kappa, AC1 and alpha over runs with a defined interval.

    ``accuracy`` is the system's (sensitivity, specificity) on a binary field.
    """
    truth = coefficient_truth(prevalence, *accuracy)
    key = [seed, pairs, round(prevalence * 1000), round(accuracy[0] * 100), 6]
    rng = np.random.default_rng(key)
    covered = dict.fromkeys(("kappa", "ac1", "alpha"), 0)
    defined = dict.fromkeys(covered, 0)
    for counts in rng.multinomial(pairs, truth["cells"], size=runs):
        cells = tuple(
            (i, j, int(v))
            for (i, j), v in zip(((0, 0), (0, 1), (1, 0), (1, 1)), counts, strict=True)
            if v
        )
        table = KappaTable(cells, 2, "none")
        results = {
            "kappa": KappaResult.from_table(table, Z95).interval,
            "ac1": CoefficientResult.gwet(table, Z95).interval,
            "alpha": CoefficientResult.alpha(table, "nominal", Z95).interval,
        }
        for name, interval in results.items():
            if interval is None:
                continue
            defined[name] += 1
            covered[name] += interval[0] <= truth[name] <= interval[1]
    return {name: covered[name] / max(defined[name], 1) for name in covered}


def _report_rate(seed: int, runs: int) -> None:
    print("rate: the clustered interval of a pooled slice (324 cells)")
    counts = {"before": [0, 0, 0], "now": [0, 0, 0]}
    worst = {"before": (0.0, ""), "now": (0.0, "")}
    lowest = {"before": (1.0, ""), "now": (1.0, "")}
    for name, before, now in rate_cells(seed, runs):
        for label, outcome in (("before", before), ("now", now)):
            low, high = outcome
            counts[label][0] += 1 - low - high < COVERAGE_FLAG
            counts[label][1] += low > SIDE_FLAG
            counts[label][2] += high > SIDE_FLAG
            if max(low, high) > worst[label][0]:
                worst[label] = (max(low, high), name)
            if 1 - low - high < lowest[label][0]:
                lowest[label] = (1 - low - high, name)
        if flagged(now):
            low, high = now
            shares = f"coverage {1 - low - high:.3f}, low {low:.3f}, high {high:.3f}"
            print(f"  flagged now: {name}: {shares}")
    for label in ("before", "now"):
        cov, low, high = counts[label]
        print(
            f"  {label:>6}: coverage < {COVERAGE_FLAG}: {cov} cells; low > {SIDE_FLAG}: {low}; "
            f"high > {SIDE_FLAG}: {high}; worst side {worst[label][0]:.3f} ({worst[label][1]}); "
            f"lowest coverage {lowest[label][0]:.3f} ({lowest[label][1]})"
        )


def _report_paired(seed: int, runs: int) -> None:
    print("paired: a 5-point non-inferiority gate's false passes (nominal 0.025)")
    for charts in (15, 30, 100):
        for rho in (0.1, 0.3):
            before, now = paired_cell(seed, charts, 40, rho, runs)
            print(f"  {charts} charts x 40 fields, rho {rho}: z {before:.3f}, t {now:.3f}")


def _report_weighted(seed: int, runs: int) -> None:
    print("weighted: strata of 10, 20, 20 charts x 13 fields, fractions 0.2, 0.1, 0.1")
    for p in (0.9, 0.98):
        for rho in (0.0, 0.3):
            before, now = weighted_cell(seed, runs, p, rho)
            print(
                f"  p={p} rho={rho}: before coverage {1 - sum(before):.3f} "
                f"(low {before[0]:.3f}); now {1 - sum(now):.3f} (low {now[0]:.3f})"
            )


def _report_bias(seed: int, runs: int) -> None:
    print("bias: coverage of the mean signed error's interval (nominal 0.95)")
    for pairs in (2, 3, 5, 10, 30):
        before, now = bias_cell(seed, pairs, runs)
        print(f"  {pairs} pairs: z {before:.3f}, t {now:.3f}")


def _report_auroc(seed: int, runs: int) -> None:
    print("auroc: coverage of the declared-uncertainty AUROC's interval")
    for agreed, disagreed in ((30, 10), (100, 30), (300, 30), (300, 60)):
        for target in (0.6, 0.75, 0.9, 0.97):
            before, now = auroc_cell(seed, agreed, disagreed, target, runs)
            print(
                f"  {agreed} agreeing, {disagreed} disagreeing, AUROC {target}: Hanley-McNeil "
                f"{1 - sum(before):.3f} (low {before[0]:.3f}); DeLong logit {1 - sum(now):.3f} "
                f"(low {now[0]:.3f}, high {now[1]:.3f})"
            )


ACCURACIES: Final = ((0.9, 0.9), (0.8, 0.95), (0.95, 0.8))
"""The (sensitivity, specificity) settings of the coefficient cells."""


def _report_coefficients(seed: int, runs: int) -> None:
    print("coefficients: coverage on a binary field, the lowest and highest over prevalence")
    print("0.5, 0.8, 0.95 and (sensitivity, specificity) 0.9/0.9, 0.8/0.95, 0.95/0.8")
    for pairs in (20, 30, 50, 75, 100, 150, 200):
        found = [
            coefficient_cell(seed, pairs, prevalence, accuracy, runs)
            for prevalence in (0.5, 0.8, 0.95)
            for accuracy in ACCURACIES
        ]
        shown = ", ".join(
            f"{name} {min(f[name] for f in found):.3f}-{max(f[name] for f in found):.3f}"
            for name in ("kappa", "ac1", "alpha")
        )
        print(f"  {pairs} pairs: {shown}")


FAMILIES: dict[str, Callable[[int, int], None]] = {
    "rate": _report_rate,
    "paired": _report_paired,
    "weighted": _report_weighted,
    "bias": _report_bias,
    "auroc": _report_auroc,
    "coefficients": _report_coefficients,
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000, help="runs per cell")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append")
    args = parser.parse_args(argv)
    for name in args.family or FAMILIES:
        started = time.perf_counter()
        FAMILIES[name](args.seed, args.runs)
        print(f"  ({time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
