"""Disclosure control benchmark: how much share() suppresses, and how long the audit takes.

Generates seeded cohorts with the test suite's cohort generator
(``tests/disclosure_reference.py``: every field type; 10% of the gold unanswerable, 3% of
answers missing, 4% abstained, 15% wrong, 15% unsupported: see ``RATES``), then shares each
with the product path, ``chartscore.workflows.share.share``: it scores the records, counts the
distinct cases behind every protected number while scoring, suppresses (primary and
complementary) and audits its own output before returning. It then times
``chartscore.disclosure.audit`` on the shared JSON, as a privacy officer outside would run
it, and reports the share of protected numbers suppressed, overall and per tier (the overall
slice; a field's agreement numbers, ``field_count``, ``answerable_count`` and kappa pairs; a
field's other numbers; the field-type slices), what survives per family (rates shown, bounded
and hidden: a field's agreement rates, its safety and error rates, the counts, the pooled and
the stratum rates) and how the complementary cells were chosen (exact, or greedy with a lower
bound on the cost).

    python benchmarks/audit.py                       # small, medium, large; then 200 fields
    python benchmarks/audit.py --fields 10 --cases 50 500 --wide 0
    python benchmarks/audit.py --repeat 3            # medians of three runs
    python benchmarks/audit.py --reference           # cross-check against the test reference
    python benchmarks/audit.py --save out --wide 200 --wide-cases 2000 --cases
    python benchmarks/audit.py --audit-file out/shared-200x2000.json --repeat 3
    python benchmarks/audit.py --study DIR --repeat 5   # score and share, whole processes
    python benchmarks/audit.py --registry 1000:13:10 3000:13:30   # charts:fields:sites

The share time includes scoring (``score s`` is ``chartscore.score`` alone on the same
records, for comparison) and share()'s own audit; ``share/score`` is the ratio of the two,
each run of share paired with a run of score just before it (the median of the pairs' ratios,
so that drift in the machine's speed cancels). ``--study DIR`` instead times the command
line, ``chartscore score`` and ``chartscore share`` as whole processes (start-up included), on
DIR's ``gold.jsonl``, ``schema.json`` and every ``pred_*.jsonl``, alternately, and prints
their medians and paired ratios. ``--registry`` shares registry-shaped cohorts (thousands of
charts over uneven sites) with and without strata, as whole processes, and prints time, peak
memory and survival per family (``benchmarks/registry.py``).

``--reference`` also computes the case counts with the test suite's independent reference,
shares the scored report with them (``chartscore.disclosure.share``) and checks the bytes equal
the product's; it reports how many protected quantities the reference finds backed by 1 to
``min_cell - 1`` cases (the primary cells; this count includes metrics' failures, which are not
published numbers).

Times are wall-clock and CPU seconds of this process, the median of ``--repeat`` runs (the
machine may be shared; CPU time is the steadier figure). Nothing here is a test: no
assertion on time.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from chartscore import score
from chartscore.disclosure import SharedReport, audit
from chartscore.disclosure.cost import AGREEMENT, COUNTS, ERRORS, family
from chartscore.disclosure.rule import AGREEMENT_METRICS, PAIRS, SUCCESS, TOTAL
from chartscore.workflows.share import share

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

TIERS = ("overall", "agreement", "field other", "type")
"""Tiers of numbers by slice and name, most needed first (share()'s old cost order)."""
_PEOPLE_NEED = frozenset({"field_count", "answerable_count", PAIRS})

T = TypeVar("T")


def tier(key: tuple[str, str, str]) -> str:
    """The tier of a protected number by slice and name (the cost order's tiers before
    rates were priced: kept so that tables compare; ``survival`` gives the families)."""
    kind, _, quantity = key
    if kind == "overall":
        return "overall"
    if kind == "field_type":
        return "type"
    metric = quantity.split(".", 1)[0]
    return "agreement" if metric in AGREEMENT_METRICS or quantity in _PEOPLE_NEED else "field other"


SURVIVAL = (AGREEMENT, ERRORS, COUNTS, "pooled", "strata", "labels")
"""The survival table's families: a field slice's agreement rates, its safety and error
rates, every count (no metric's part: the six counts, kappa pairs, the figures' counts), the
pooled slices' rates, the stratum slices' rates, each declared label's rates."""


def survival(shared: SharedReport) -> dict[str, tuple[int, int, int]]:
    """Per family: (shown, bounded, hidden). A rate is shown with both counts, bounded
    when it carries a rate bound, hidden otherwise; a count is shown or hidden."""
    out = {name: [0, 0, 0] for name in SURVIVAL}
    for kind, _, part in shared.slices():
        rates = [(metric, value, False) for metric, value in part.metrics.items()]
        for table in (part.labels or {}).values():
            rates += [(metric, value, True) for metric, value in table.metrics.items()]
        for metric, value, labelled in rates:
            if labelled:
                name = "labels"
            elif kind == "field":
                name = family(metric)
            else:
                name = "pooled" if kind in ("overall", "field_type") else "strata"
            tally = out[name]
            if value.success_count is not None and value.total_count is not None:
                tally[0] += 1
            elif value.rate_bound is not None:
                tally[1] += 1
            else:
                tally[2] += 1
    for key, value in shared.numbers():
        if key[2].rpartition(".")[2] not in (SUCCESS, TOTAL):  # no metric's part
            out[COUNTS][0 if value is not None else 2] += 1
    return {name: (a, b, c) for name, (a, b, c) in out.items() if a + b + c}


def survival_line(shared: SharedReport) -> str:
    """``agreement 60/3/2, ...``: shown/bounded/hidden per family."""
    return ", ".join(f"{name} {a}/{b}/{c}" for name, (a, b, c) in survival(shared).items())


def cpu_seconds() -> float:
    """This process's CPU seconds and its reaped children's (share forks a helper on wide
    reports: chartscore.disclosure.split)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def paired(
    baseline: Callable[[], object], run: Callable[[], T], repeat: int, label: str = ""
) -> tuple[T, tuple[float, float], tuple[float, float], tuple[float, float]]:
    """Run ``baseline`` then ``run``, ``repeat`` times; ``run``'s last result, the median
    wall and CPU seconds of each, and the median of the pairs' ratios (run / baseline)."""
    rounds = []
    for _ in range(repeat):
        _, base_wall, base_cpu = timed(baseline, 1)
        result, wall, cpu = timed(run, 1)
        rounds.append((base_wall, base_cpu, wall, cpu))
    if repeat > 1:
        runs = ", ".join(f"{w:.2f} ({c:.2f})" for _, _, w, c in rounds)
        print(f"  {label} runs, wall (cpu) s: {runs}", file=sys.stderr, flush=True)
    median = [statistics.median(r[i] for r in rounds) for i in range(4)]
    ratio_wall = statistics.median(w / max(b, 1e-9) for b, _, w, _ in rounds)
    ratio_cpu = statistics.median(c / max(b, 1e-9) for _, b, _, c in rounds)
    return result, (median[0], median[1]), (median[2], median[3]), (ratio_wall, ratio_cpu)


def timed(run: Callable[[], T], repeat: int, label: str = "") -> tuple[T, float, float]:
    """Run ``repeat`` times; the last result and the median wall and CPU seconds.

    With more than one run, each run's seconds go to standard error, tagged ``label``.
    """
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = run()
        walls.append(time.perf_counter() - wall)
        cpus.append(cpu_seconds() - cpu)
    if repeat > 1:
        runs = ", ".join(f"{w:.2f} ({c:.2f})" for w, c in zip(walls, cpus, strict=True))
        print(f"  {label} runs, wall (cpu) s: {runs}", file=sys.stderr, flush=True)
    return result, statistics.median(walls), statistics.median(cpus)


def measure(
    fields: int,
    cases: int,
    min_cell: int,
    seed: int,
    *,
    repeat: int = 1,
    reference: bool = False,
    save: Path | None = None,
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
    schema = cohort.schema_document()
    shared, (score_wall, score_cpu), (share_wall, share_cpu), ratios = paired(
        lambda: score(gold, predictions, schema=schema),
        lambda: share(gold, predictions, schema=schema, min_cell=min_cell),
        repeat,
        f"share {fields}x{cases}",
    )
    text = shared.to_json()
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        (save / f"shared-{fields}x{cases}.json").write_text(text + "\n", encoding="utf-8")
    result, audit_wall, audit_cpu = timed(lambda: audit(text), repeat, f"audit {fields}x{cases}")
    numbers = dict.fromkeys(TIERS, 0)
    hidden = dict.fromkeys(TIERS, 0)
    for key, value in shared.numbers():
        numbers[tier(key)] += 1
        hidden[tier(key)] += value is None
    row: dict[str, Any] = {
        "fields": fields,
        "cases": cases,
        "rows": len(gold),
        "numbers": sum(numbers.values()),
        "suppressed": shared.disclosure.suppressed_count,
        "tiers": {name: (hidden[name], numbers[name]) for name in TIERS},
        "score_wall": score_wall,
        "score_cpu": score_cpu,
        "share_wall": share_wall,
        "share_cpu": share_cpu,
        "ratio_wall": ratios[0],
        "ratio_cpu": ratios[1],
        "audit_wall": audit_wall,
        "audit_cpu": audit_cpu,
        "solves": result.solves,
        "passed": result.passed,
        "survival": survival_line(shared),
        "complement": shared.complement,
        "sensitive": None,
        "reference": None,
    }
    if reference:
        from chartscore.disclosure.suppress import share as share_report

        sensitivity, _ = cohort.sensitivity()
        row["sensitive"] = sum(1 for n in sensitivity.case_counts.values() if 1 <= n < min_cell)
        report = score(gold, predictions, schema=schema)
        row["reference"] = share_report(report, sensitivity, min_cell).to_json() == text
    return row


def time_audits(paths: list[Path], repeat: int) -> None:
    """Print the median audit time of each saved shared report."""
    print(f"median of {repeat} run(s)")
    print(f"{'fields':>6} {'hidden':>7} {'audit s':>8} {'(cpu)':>7} {'solves':>7} audit  file")
    for path in paths:
        text = path.read_text(encoding="utf-8")
        result, wall, cpu = timed(lambda text=text: audit(text), repeat, f"audit {path.name}")
        shared = SharedReport.from_json(text)
        print(
            f"{len(shared.by_field):>6} {shared.disclosure.suppressed_count:>7,} {wall:>8.2f} "
            f"{cpu:>7.2f} {result.solves:>7,} {'pass' if result.passed else 'FAIL'}   {path}",
            flush=True,
        )


def _process(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole ``python -m chartscore`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "chartscore", *argv],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def time_commands(study: Path, repeat: int, min_cell: int) -> None:
    """Median whole-process seconds of score and share on each system, and their ratios.

    Then ``share --publication`` of every system at once against one ``score``, and the same
    with ``--compare`` (every pair's comparison too: A, B and A vs B).
    """
    print(f"median of {repeat} run(s), whole processes, min_cell {min_cell}")
    print(
        f"{'system':<24} {'score s':>8} {'(cpu)':>7} {'share s':>8} {'(cpu)':>7} "
        f"{'share/score':>11} {'(cpu)':>7}"
    )
    gold, schema = study / "gold.jsonl", study / "schema.json"
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out.json"
        for predictions in sorted(study.glob("pred_*.jsonl")):
            files = ["--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]
            if schema.exists():
                files += ["--schema", str(schema)]
            rounds = []
            for _ in range(repeat):
                score_wall, score_cpu = _process(["score", *files])
                out.unlink()
                share_wall, share_cpu = _process(["share", *files, "--min-cell", str(min_cell)])
                out.unlink()
                rounds.append((score_wall, score_cpu, share_wall, share_cpu))
            m = [statistics.median(r[i] for r in rounds) for i in range(4)]
            ratio_wall = statistics.median(r[2] / r[0] for r in rounds)
            ratio_cpu = statistics.median(r[3] / r[1] for r in rounds)
            print(
                f"{predictions.stem:<24} {m[0]:>8.2f} {m[1]:>7.2f} {m[2]:>8.2f} {m[3]:>7.2f} "
                f"{ratio_wall:>11.1f} {ratio_cpu:>7.1f}",
                flush=True,
            )
        # One publication of every system (share --publication), then with every pair's
        # comparison too (--compare: the A, B and A vs B), each against one score of
        # the first system just before it: the "joint publication / one score" ratio.
        systems = sorted(study.glob("pred_*.jsonl"))
        if len(systems) > 1:
            for extra in ([], ["--compare"]):
                _time_publication(study, systems, repeat, min_cell, Path(scratch), extra=extra)


def _time_publication(
    study: Path, systems: list[Path], repeat: int, min_cell: int, scratch: Path, *, extra: list[str]
) -> None:
    gold, schema, out = study / "gold.jsonl", study / "schema.json", scratch / "out.json"
    folder = scratch / "publication"
    folder.mkdir(exist_ok=True)
    first = ["--gold", str(gold), "--predictions", str(systems[0]), "--out", str(out)]
    together = ["--gold", str(gold), "--publication", str(study / "pred_*.jsonl"), *extra]
    if schema.exists():
        first += ["--schema", str(schema)]
        together += ["--schema", str(schema)]
    rounds = []
    for _ in range(repeat):
        score_wall, score_cpu = _process(["score", *first])
        out.unlink()
        wall, cpu = _process(
            ["share", *together, "--out-dir", str(folder), "--min-cell", str(min_cell)]
        )
        for written in folder.iterdir():
            written.unlink()
        rounds.append((score_wall, score_cpu, wall, cpu))
    m = [statistics.median(r[i] for r in rounds) for i in range(4)]
    ratio_wall = statistics.median(r[2] / r[0] for r in rounds)
    ratio_cpu = statistics.median(r[3] / r[1] for r in rounds)
    label = f"publication of {len(systems)}" + (" + cmp" if extra else "")
    print(
        f"{label:<24} {m[0]:>8.2f} {m[1]:>7.2f} {m[2]:>8.2f} {m[3]:>7.2f} "
        f"{ratio_wall:>11.1f} {ratio_cpu:>7.1f}",
        flush=True,
    )


def _choice(complement: Any) -> str:
    """``exact, cost 561 (greedy 670)`` or ``greedy, cost 603, lower bound 394 (gap 35%)``;
    then, with labels, ``; labels +120`` (what their step added)."""
    labels = "" if complement.labels is None else f"; labels +{complement.labels:,}"
    if complement.method == "exact":
        return f"exact, cost {complement.cost:,} (greedy {complement.greedy_cost:,}){labels}"
    if complement.lower_bound is None:
        return f"greedy, cost {complement.cost:,}{labels}"
    gap = 100 * (complement.gap or 0.0)
    return (
        f"greedy, cost {complement.cost:,}, lower bound {complement.lower_bound:,} "
        f"(gap at most {gap:.0f}%){labels}"
    )


def time_survival(paths: list[Path]) -> None:
    """Print the survival by family of each saved shared report."""
    for path in paths:
        shared = SharedReport.from_json(path.read_text(encoding="utf-8"))
        print(f"{path}: {survival_line(shared)}", flush=True)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, default=14, help="fields of the size series")
    parser.add_argument(
        "--cases", type=int, nargs="*", default=[50, 500, 5000], help="cases of the size series"
    )
    parser.add_argument("--wide", type=int, default=200, help="fields of the wide cohort (0: skip)")
    parser.add_argument(
        "--wide-cases", type=int, nargs="+", default=[200, 2000], help="cases of the wide cohort"
    )
    parser.add_argument("--min-cell", type=int, default=11)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--repeat", type=int, default=1, help="time share and audit N times")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="cross-check the case counts against the test suite's reference",
    )
    parser.add_argument("--save", type=Path, help="write each shared report into this folder")
    parser.add_argument(
        "--study",
        type=Path,
        help="time the score and share commands as whole processes on this folder's files",
    )
    parser.add_argument(
        "--audit-file",
        type=Path,
        nargs="+",
        help="only time audit() on these saved shared reports (--repeat times each)",
    )
    parser.add_argument(
        "--survival",
        type=Path,
        nargs="+",
        help="only print the survival by family (shown/bounded/hidden) of saved shared reports",
    )
    parser.add_argument(
        "--registry",
        nargs="+",
        metavar="CHARTS:FIELDS:SITES",
        help="only share registry-shaped cohorts (uneven sites), with and without strata",
    )
    parser.add_argument(
        "--sampling", action="store_true", help="with --registry: declare sampling fractions"
    )
    parser.add_argument(
        "--timeout", type=float, default=1800, help="with --registry: stop a process after N s"
    )
    args = parser.parse_args()
    if args.registry:
        from registry import parse_spec, report

        specs = [parse_spec(text) for text in args.registry]
        report(
            specs, args.seed, args.min_cell, args.timeout, sampling=args.sampling, save=args.save
        )
        return
    if args.survival:
        time_survival(args.survival)
        return
    if args.study:
        time_commands(args.study, args.repeat, args.min_cell)
        return
    if args.audit_file:
        time_audits(args.audit_file, args.repeat)
        return
    runs = [(args.fields, cases) for cases in args.cases]
    if args.wide:
        runs += [(args.wide, cases) for cases in args.wide_cases]
    header = (
        f"{'fields':>6} {'cases':>6} {'rows':>8} {'numbers':>8} {'hidden':>7} {'hidden %':>8} "
        + " ".join(f"{name:>11}" for name in TIERS)
        + f" {'score s':>8} {'share s':>8} {'(cpu)':>7} {'share/score':>11} {'(cpu)':>7}"
        + f" {'audit s':>8} {'(cpu)':>7}"
        + f" {'solves':>7} audit"
        + (f" {'sensitive':>9} reference" if args.reference else "")
    )
    print(f"min_cell {args.min_cell}, seed {args.seed}, median of {args.repeat} run(s)")
    print(f"tiers: hidden %, of the tier's numbers ({', '.join(TIERS)})")
    print(header)
    for fields, cases in runs:
        row = measure(
            fields,
            cases,
            args.min_cell,
            args.seed,
            repeat=args.repeat,
            reference=args.reference,
            save=args.save,
        )
        tiers = " ".join(f"{_percent(*row['tiers'][name]):>11}" for name in TIERS)
        line = (
            f"{row['fields']:>6} {row['cases']:>6} {row['rows']:>8,} {row['numbers']:>8,} "
            f"{row['suppressed']:>7,} {_percent(row['suppressed'], row['numbers']):>8} {tiers} "
            f"{row['score_wall']:>8.2f} {row['share_wall']:>8.2f} {row['share_cpu']:>7.2f} "
            f"{row['ratio_wall']:>11.1f} {row['ratio_cpu']:>7.1f} "
            f"{row['audit_wall']:>8.2f} {row['audit_cpu']:>7.2f} {row['solves']:>7,} "
            f"{'pass' if row['passed'] else 'FAIL'}"
        )
        if args.reference:
            line += f" {row['sensitive']:>9,} {'same' if row['reference'] else 'DIFFERS'}"
        print(line, flush=True)
        counts = ", ".join(f"{name} {h}/{n}" for name, (h, n) in row["tiers"].items())
        print(f"{'':>6} hidden/numbers by tier: {counts}", flush=True)
        print(f"{'':>6} shown/bounded/hidden by family: {row['survival']}", flush=True)
        if row["complement"] is not None:
            print(f"{'':>6} complementary choice: {_choice(row['complement'])}", flush=True)


if __name__ == "__main__":
    main()
