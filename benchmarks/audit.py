"""Disclosure control benchmark: how much share() suppresses, and how long the audit takes.

Generates seeded cohorts (every field type; 10% of the gold unanswerable, 3% of answers
missing, 4% abstained, 15% wrong, 15% unsupported: see ``RATES``), scores them with
``chartscore.score``, computes the distinct-case counts with the test suite's independent
reference (``tests/disclosure_reference.py``: the scorer does not compute them itself yet),
then times ``share`` and ``audit`` and reports the share of protected numbers suppressed.

    python benchmarks/audit.py                       # small, medium, large; then 200 fields
    python benchmarks/audit.py --fields 10 --cases 50 500 --wide 0

Times are wall-clock and CPU seconds of this process (the machine may be shared; CPU time is
the steadier figure). Nothing here is a test: no assertion on time.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from chartscore import score
from chartscore.disclosure import audit, share

TESTS = Path(__file__).resolve().parent.parent / "tests"

TYPES = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")
RATES = {
    "p_unanswerable": 0.1,
    "p_missing": 0.03,
    "p_abstain": 0.04,
    "p_wrong": 0.15,
    "p_supported": 0.85,
}
"""Outcome rates of the generated cohorts: a decent system, with rare events that make
small cells in medium cohorts (a wrong answer is of the wrong type about a sixth of the time)."""


def measure(
    fields: int, cases: int, min_cell: int, seed: int, save: Path | None = None
) -> dict[str, Any]:
    """Generate, score, share and audit one cohort; return the figures."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from disclosure_reference import build_cohort

    rng = random.Random(seed)
    cohort = build_cohort(
        rng.choice,
        [TYPES[i % len(TYPES)] for i in range(fields)],
        cases,
        **RATES,
    )
    gold, predictions = cohort.records()
    report = score(gold, predictions, schema=cohort.schema_document())
    sensitivity, _ = cohort.sensitivity()
    sensitive = sum(1 for n in sensitivity.case_counts.values() if 1 <= n < min_cell)
    wall, cpu = time.perf_counter(), time.process_time()
    shared = share(report, sensitivity, min_cell)
    share_wall, share_cpu = time.perf_counter() - wall, time.process_time() - cpu
    text = shared.to_json()
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        (save / f"shared-{fields}x{cases}.json").write_text(text + "\n", encoding="utf-8")
    wall, cpu = time.perf_counter(), time.process_time()
    result = audit(text)
    audit_wall, audit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    numbers = sum(1 for _ in shared.numbers())
    return {
        "fields": fields,
        "cases": cases,
        "rows": len(gold),
        "numbers": numbers,
        "sensitive": sensitive,
        "suppressed": shared.disclosure.suppressed_count,
        "share": shared.disclosure.suppressed_count / numbers,
        "share_wall": share_wall,
        "share_cpu": share_cpu,
        "audit_wall": audit_wall,
        "audit_cpu": audit_cpu,
        "solves": result.solves,
        "passed": result.passed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, default=14, help="fields of the size series")
    parser.add_argument("--cases", type=int, nargs="*", default=[50, 500, 5000])
    parser.add_argument("--wide", type=int, default=200, help="fields of the wide cohort (0: skip)")
    parser.add_argument("--wide-cases", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--min-cell", type=int, default=11)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--save", type=Path, help="write each shared report into this folder")
    args = parser.parse_args()
    runs = [(args.fields, cases) for cases in args.cases]
    if args.wide:
        runs += [(args.wide, cases) for cases in args.wide_cases]
    header = (
        f"{'fields':>6} {'cases':>6} {'rows':>8} {'numbers':>8} {'sensitive':>9} "
        f"{'hidden':>7} {'hidden %':>8} {'share s':>8} {'(cpu)':>7} {'audit s':>8} {'(cpu)':>7} "
        f"{'solves':>7} audit"
    )
    print(f"min_cell {args.min_cell}, seed {args.seed}")
    print(header)
    for fields, cases in runs:
        row = measure(fields, cases, args.min_cell, args.seed, args.save)
        print(
            f"{row['fields']:>6} {row['cases']:>6} {row['rows']:>8,} {row['numbers']:>8,} "
            f"{row['sensitive']:>9,} {row['suppressed']:>7,} {100 * row['share']:>7.1f}% "
            f"{row['share_wall']:>8.1f} {row['share_cpu']:>7.1f} {row['audit_wall']:>8.1f} "
            f"{row['audit_cpu']:>7.1f} {row['solves']:>7,} {'pass' if row['passed'] else 'FAIL'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
