"""Registry-shaped sharing: thousands of charts over dozens of sites, shared as an analyst would.

``python benchmarks/audit.py --registry CHARTS:FIELDS:SITES ...`` lands here. Each cohort is
seeded and written as files (gold, predictions, schema with the sites declared, the strata file),
then timed as whole ``chartscore`` processes, as a registry analyst runs them:

- ``score --strata`` (the baseline of the ratios);
- ``share`` without strata, then ``share --strata`` (the same cohort, with site slices);
- ``audit`` of the stratified shared report, as the privacy officer outside runs it.

Sites are uneven, as real registries are: site ``i`` draws charts with weight
``1 / (i + 1) ** 0.8`` (the largest site about 15 times the smallest of 30), so some sites have
few charts. ``--sampling`` also declares a sampling fraction per site (1, 1/2 or 1/4 in turn).

Per cohort it prints wall and CPU seconds and the peak resident memory of each process, the
``share``/``score`` CPU ratio, whether the audit passed, and the survival by family
(shown/bounded/hidden; :func:`audit.survival`) without and with strata: how many field-level,
pooled and site rates an analyst gets. A process that runs past ``--timeout`` seconds is stopped
and its row says so. Nothing here is a test: no assertion on time.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"

SITE_SKEW = 0.8
"""Site ``i``'s weight is ``1 / (i + 1) ** SITE_SKEW``."""
FRACTIONS = ("1", "0.5", "0.25")
"""The declared sampling fractions with ``--sampling``, site by site in turn."""


def parse_spec(text: str) -> tuple[int, int, int]:
    """``CHARTS:FIELDS:SITES`` as three positive integers."""
    parts = text.split(":")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"expected CHARTS:FIELDS:SITES, got {text!r}")
    charts, fields, sites = (int(p) for p in parts)
    return charts, fields, sites


def _prediction_line(case: str, field_id: str, answer: object, supported: bool) -> str:
    # The line of the records the size series scores (disclosure_reference.Cohort.records).
    from helpers import chain_dict, digest

    line: dict[str, object] = {"case_id": case, "field_id": field_id, "value": answer}
    if supported:
        fact = digest(f"{case}/{field_id}")
        line["normalized_fact_digest"] = fact
        line["evidence_chain"] = chain_dict(field_id, fact)
    return json.dumps(line, default=float)  # Decimal numbers as JSON numbers


def write_cohort(
    folder: Path, charts: int, fields: int, sites: int, seed: int, *, sampling: bool
) -> None:
    """Write gold.jsonl, predictions.jsonl, schema.json and strata.jsonl into ``folder``."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from audit import RATES, TYPES

    from disclosure_reference import build_cohort

    rng = random.Random(seed)
    types = [TYPES[i % len(TYPES)] for i in range(fields)]
    cohort = build_cohort(rng.choice, types, charts, **RATES)
    with (folder / "gold.jsonl").open("w", encoding="utf-8") as out:
        for case, field_id, field_type, value in cohort.gold:
            row = {"case_id": case, "field_id": field_id, "field_type": field_type}
            out.write(json.dumps({**row, "value": value}, default=float) + "\n")
    with (folder / "predictions.jsonl").open("w", encoding="utf-8") as out:
        for (case, field_id), (answer, supported) in sorted(cohort.predictions.items()):
            out.write(_prediction_line(case, field_id, answer, supported) + "\n")
    labels = [f"site-{i:03d}" for i in range(sites)]
    weights = [1 / (i + 1) ** SITE_SKEW for i in range(sites)]
    cases = sorted({case for case, _, _, _ in cohort.gold})
    with (folder / "strata.jsonl").open("w", encoding="utf-8") as out:
        for index, case in enumerate(cases):
            # Every site keeps at least one chart; the rest are drawn by weight.
            site = labels[index] if index < sites else rng.choices(labels, weights)[0]
            out.write(json.dumps({"case_id": case, "strata": {"site": site}}) + "\n")
    schema: dict[str, Any] = cohort.schema_document()
    schema["strata"] = {"site": labels}
    if sampling:
        schema["sampling"] = {"site": {s: FRACTIONS[i % 3] for i, s in enumerate(labels)}}
    (folder / "schema.json").write_text(json.dumps(schema), encoding="utf-8")


def run_process(argv: list[str], timeout: float) -> dict[str, Any]:
    """One whole ``python -m chartscore`` process: wall, CPU, peak memory, exit status.

    The peak is the child's own maximum resident set (``wait4``), so runs do not mix. Its
    stderr goes to a file, not a pipe (a full pipe would stall it); on an error, its last
    line (chartscore's one-line, value-free error) is printed.
    """
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "chartscore", *argv],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
        )
        usage = _wait(child.pid, started + timeout)
        wall = time.perf_counter() - started
        errors.seek(0)
        lines = errors.read().decode("utf-8", "replace").splitlines()
    if usage is None:
        return {"timed_out": True, "wall": timeout, "cpu": None, "peak_mib": None, "rc": None}
    status, resources = usage
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 4) and lines:
        print(f"  {argv[0]} exited {code}: {lines[-1]}", flush=True)
    return {
        "timed_out": False,
        "wall": wall,
        "cpu": resources.ru_utime + resources.ru_stime,
        "peak_mib": resources.ru_maxrss / 1024,  # kilobytes on Linux
        "rc": code,
    }


def _wait(pid: int, deadline: float) -> tuple[int, Any] | None:
    # The child's exit status and resource use; None (and the child killed) past the deadline.
    while True:
        done, status, resources = os.wait4(pid, os.WNOHANG)
        if done:
            return status, resources
        if time.perf_counter() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            return None
        time.sleep(0.05)


def measure(
    spec: tuple[int, int, int],
    seed: int,
    min_cell: int,
    timeout: float,
    *,
    sampling: bool,
    save: Path | None = None,
) -> dict[str, Any]:
    """Write one cohort, then time score, share, share --strata and audit on it.

    ``save``: a folder to copy both shared reports into (``registry-C-F-S-plain.json``,
    ``...-strata.json``), to compare bytes across versions.
    """
    from audit import survival_line

    charts, fields, sites = spec

    from chartscore.disclosure import SharedReport

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_cohort(folder, charts, fields, sites, seed, sampling=sampling)
        files = ["--gold", str(folder / "gold.jsonl")]
        files += ["--predictions", str(folder / "predictions.jsonl")]
        files += ["--schema", str(folder / "schema.json")]
        strata = ["--strata", str(folder / "strata.jsonl")]
        plain_out, strata_out = folder / "plain.json", folder / "strata.json"
        row: dict[str, Any] = {"charts": charts, "fields": fields, "sites": sites}
        row["score"] = run_process(
            ["score", *files, *strata, "--out", str(folder / "report.json")], timeout
        )
        cell = ["--min-cell", str(min_cell), "--quiet"]
        row["share"] = run_process(["share", *files, *cell, "--out", str(plain_out)], timeout)
        row["share_strata"] = run_process(
            ["share", *files, *strata, *cell, "--out", str(strata_out)], timeout
        )
        row["audit"] = (
            run_process(["audit", str(strata_out)], timeout)
            if strata_out.exists()
            else {"timed_out": False, "wall": None, "cpu": None, "peak_mib": None, "rc": None}
        )
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            for kind, path in (("plain", plain_out), ("strata", strata_out)):
                if path.exists():
                    name = f"registry-{charts}-{fields}-{sites}-{kind}.json"
                    (save / name).write_bytes(path.read_bytes())
        for name, path in (("survival", plain_out), ("survival_strata", strata_out)):
            row[name] = (
                survival_line(SharedReport.from_json(path.read_text(encoding="utf-8")))
                if path.exists()
                else "-"
            )
    return row


def _seconds(run: dict[str, Any]) -> str:
    if run["timed_out"]:
        return f"{'>' + format(run['wall'], '.0f'):>8}"
    return f"{run['wall']:>8.1f}" if run["wall"] is not None else f"{'-':>8}"


def _cpu(run: dict[str, Any]) -> str:
    return f"{run['cpu']:>7.1f}" if run["cpu"] is not None else f"{'-':>7}"


def _peak(run: dict[str, Any]) -> str:
    return f"{run['peak_mib']:>7.0f}" if run["peak_mib"] is not None else f"{'-':>7}"


def report(
    specs: list[tuple[int, int, int]],
    seed: int,
    min_cell: int,
    timeout: float,
    *,
    sampling: bool,
    save: Path | None = None,
) -> None:
    """Print the registry table, one cohort a row, as each finishes (``save``: as
    :func:`measure`)."""
    print(
        f"registry cohorts: min_cell {min_cell}, seed {seed}, sites uneven (weight "
        f"1/(i+1)^{SITE_SKEW}){', sampling fractions declared' if sampling else ''}; "
        f"whole processes; wall s, cpu s, peak MiB"
    )
    print(
        f"{'charts':>6} {'fields':>6} {'sites':>5} "
        f"{'score s':>8} {'peak':>7} {'share s':>8} {'(cpu)':>7} {'peak':>7} "
        f"{'strata s':>8} {'(cpu)':>7} {'peak':>7} {'cpu/score':>9} "
        f"{'audit s':>8} {'peak':>7} audit"
    )
    for charts, fields, sites in specs:
        row = measure(
            (charts, fields, sites), seed, min_cell, timeout, sampling=sampling, save=save
        )
        score, plain, stratified, audited = (
            row["score"],
            row["share"],
            row["share_strata"],
            row["audit"],
        )
        ratio = (
            f"{stratified['cpu'] / score['cpu']:>9.0f}"
            if stratified["cpu"] and score["cpu"]
            else f"{'-':>9}"
        )
        verdict = {0: "pass", 4: "FAIL", None: "-"}.get(audited["rc"], f"rc {audited['rc']}")
        print(
            f"{charts:>6} {fields:>6} {sites:>5} "
            f"{_seconds(score)} {_peak(score)} {_seconds(plain)} {_cpu(plain)} {_peak(plain)} "
            f"{_seconds(stratified)} {_cpu(stratified)} {_peak(stratified)} {ratio} "
            f"{_seconds(audited)} {_peak(audited)} {verdict}",
            flush=True,
        )
        print(f"{'':>6} without strata: {row['survival']}", flush=True)
        print(f"{'':>6} with strata:    {row['survival_strata']}", flush=True)
