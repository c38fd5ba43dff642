"""Coverage benchmark: how often a pooled slice's intervals cover the truth when a chart's rows
are correlated, and how often the paired tests reject two equally good systems.

A simulated validation: ``cases`` charts with ``fields`` rows each. Chart ``i`` has its own
success rate ``p_i``, drawn from a beta distribution with mean ``p`` (0.9) and intraclass
correlation ``rho`` (``p_i = p`` when ``rho = 0``); its successes are ``Binomial(fields, p_i)``.
For each run the overall slice's 95% Wilson interval and its case-clustered interval are
computed with chartscore's own functions (``chartscore.stats.clustered``, as ``Report.from_tally``
does), and the benchmark counts how often each contains ``p``.

Paired: two systems that are equally good on average. Each row is discordant with probability
``discordant`` (0.2); chart ``i`` prefers the candidate on its discordant rows with probability
``s_i``, drawn from ``Beta(alpha, alpha)`` with intraclass correlation ``rho`` (``alpha = (1 -
rho) / (2 rho)``; ``s_i = 1/2`` when ``rho = 0``); concordant rows are right for both with
probability ``p``. The benchmark counts how often McNemar's mid-p (rows independent) and the
clustered McNemar test (Durkalski et al. 2003, as a comparison's pooled slice reports it) reject
at 5%, and how often Newcombe's interval and the clustered one cover the true difference, 0.

    python benchmarks/coverage.py                    # 2,000 runs a setting, seed 2026
    python benchmarks/coverage.py --runs 500 --seed 7
    python benchmarks/coverage.py --rho 0 0.3 --fields 40
    python benchmarks/coverage.py --grid             # every family of coverage_grid.py

``--grid`` runs ``benchmarks/coverage_grid.py``: the 324-cell grid of the clustered interval
(charts, fields, rates, correlations) and the paired, weighted, bias, AUROC and coefficient
cells, each beside the rule before issue 33 (docs/metrics.md quotes it).

Needs numpy (installed with scipy, the test extra). Nothing here is a test: docs/metrics.md
quotes a run of it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from chartscore.stats.binomial import Z95, wilson_interval
from chartscore.stats.clustered import (
    ClusterSums,
    PairedClusterSums,
    clustered_mcnemar_p,
    clustered_newcombe,
    clustered_wilson,
    design_effect,
    difference_design_effect,
    mcnemar_design_effect,
    published_design_effect,
)
from chartscore.stats.paired import mcnemar, newcombe_difference


def case_rates(rng: np.random.Generator, mean: float, rho: float, cases: int) -> np.ndarray:
    """Per-case probabilities with the given mean and intraclass correlation (beta mixing)."""
    if rho == 0:
        return np.full(cases, mean)
    scale = (1 - rho) / rho
    return rng.beta(mean * scale, (1 - mean) * scale, size=cases)


def one_rate(
    rng: np.random.Generator, rho: float, cases: int, fields: int, p: float
) -> tuple[bool, bool]:
    """(Wilson covers p, clustered covers p) for one simulated overall slice."""
    y = rng.binomial(fields, case_rates(rng, p, rho, cases))
    k, n = int(y.sum()), cases * fields
    sums = ClusterSums(
        cases,
        int((y * y).sum()),
        int((y * fields).sum()),
        cases * fields * fields,
        int((y > 0).sum()),
        int((y < fields).sum()),
    )
    plain = wilson_interval(k, n)
    shown = published_design_effect(design_effect(k, n, sums))
    assert plain is not None and shown is not None
    clustered = clustered_wilson(k, n, shown, Z95, cases=cases)
    assert clustered is not None
    return plain[0] <= p <= plain[1], clustered[0] <= p <= clustered[1]


def one_pair(
    rng: np.random.Generator, rho: float, *, cases: int, fields: int, p: float, discordant: float
) -> tuple[bool, bool, bool, bool]:
    """(mid-p rejects, clustered rejects, Newcombe covers 0, clustered covers 0)."""
    prefer = case_rates(rng, 0.5, rho, cases)
    d = rng.binomial(fields, discordant, size=cases)  # discordant rows per case
    c = rng.binomial(d, prefer)  # of them, only the candidate right
    b = d - c
    both = rng.binomial(fields - d, p)
    a_total, b_total, c_total = int(both.sum()), int(b.sum()), int(c.sum())
    n = cases * fields
    neither = n - a_total - b_total - c_total
    diff = c - b
    sums = PairedClusterSums.of((fields, 1, int(x), int(x) * int(x)) for x in diff)
    mid_p = mcnemar(b_total, c_total)[1]
    test = published_design_effect(mcnemar_design_effect(b_total, c_total, sums))
    clustered_p = clustered_mcnemar_p(b_total, c_total, test)
    plain = newcombe_difference(a_total, c_total, b_total, neither)
    shown = published_design_effect(difference_design_effect(b_total, c_total, n, sums))
    assert plain is not None and shown is not None
    wide = clustered_newcombe(
        a_total, c_total, b_total, neither, design_effect_shown=shown, z=Z95, cases=cases
    )
    assert wide is not None
    return (
        mid_p < 0.05,
        clustered_p < 0.05,
        plain[1][0] <= 0 <= plain[1][1],
        wide[0] <= 0 <= wide[1],
    )


def main() -> None:
    if "--grid" in sys.argv[1:]:
        from coverage_grid import main as grid

        grid([arg for arg in sys.argv[1:] if arg != "--grid"])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per setting")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--fields", type=int, nargs="+", default=[10, 40])
    parser.add_argument("--rho", type=float, nargs="+", default=[0.0, 0.05, 0.1, 0.3])
    parser.add_argument("--rate", type=float, default=0.9, help="true success rate")
    parser.add_argument("--discordant", type=float, default=0.2)
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{args.runs} runs a setting, seed {args.seed}, {args.cases} cases, true rate "
        f"{args.rate}; paired: discordant rows {args.discordant}\n"
    )
    print("one rate: how often the 95% interval covers the true rate")
    print(f"{'cases x fields':>15}  {'rho':>5}  {'Wilson':>7}  {'clustered':>9}")
    for fields in args.fields:
        for rho in args.rho:
            rng = np.random.default_rng([args.seed, fields, round(rho * 1000)])
            hits = [one_rate(rng, rho, args.cases, fields, args.rate) for _ in range(args.runs)]
            plain = sum(h[0] for h in hits) / args.runs
            clustered = sum(h[1] for h in hits) / args.runs
            print(f"{args.cases:>7} x {fields:<5}  {rho:>5}  {plain:>7.3f}  {clustered:>9.3f}")
    print("\npaired, equal systems: rejection at 5% and coverage of the true difference 0")
    print(
        f"{'cases x fields':>15}  {'rho_d':>5}  {'mid-p':>6}  {'clustered':>9}"
        f"  {'Newcombe':>8}  {'clustered':>9}"
    )
    for fields in args.fields:
        for rho in args.rho:
            rng = np.random.default_rng([args.seed, fields, round(rho * 1000), 1])
            outcomes = [
                one_pair(
                    rng,
                    rho,
                    cases=args.cases,
                    fields=fields,
                    p=args.rate,
                    discordant=args.discordant,
                )
                for _ in range(args.runs)
            ]
            rates = [sum(o[i] for o in outcomes) / args.runs for i in range(4)]
            print(
                f"{args.cases:>7} x {fields:<5}  {rho:>5}  {rates[0]:>6.3f}  {rates[1]:>9.3f}"
                f"  {rates[2]:>8.3f}  {rates[3]:>9.3f}"
            )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
