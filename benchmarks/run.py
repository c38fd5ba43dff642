"""chartscore benchmark: end to end and in memory, as ratios to the JSON parse floor.

Usage (from the repository root, with chartscore installed)::

    python benchmarks/run.py                       # 10^4, 10^5 and 10^6 gold rows
    python benchmarks/run.py --sizes 10000 --repeat 1

For each size it generates seeded synthetic files (cached under
``benchmarks/.data``; see generate.py), then measures in one run:

- the parse floor: a separate Python process that reads both files line by line
  and decodes each line with the standard library's JSON decoder (numbers with
  a fraction as Decimal) and does nothing else;
- ``chartscore score`` end to end, as a separate process, the way users run it;
- ``chartscore.score()`` on records already in memory (building them is not timed);
- the peak resident memory of the CLI process, and of a run with an empty
  predictions file (the gold set alone), to show the prediction stream is not kept.

Times are medians of ``--repeat`` runs. The targets (docs/performance.md) are
ratios, so they hold across machines; absolute times do not.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from generate import generate

from chartscore import EvidenceChain, GoldField, Prediction, SourceLocation, load_schema, score

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
GENERATOR_VERSION = "1"

FLOOR_PROGRAM = """
import json, sys
from decimal import Decimal
decode = json.JSONDecoder(parse_float=Decimal).decode
for name in sys.argv[1:]:
    with open(name, encoding="utf-8") as lines:
        for line in lines:
            decode(line)
"""


def dataset(rows: int) -> Path:
    """The cached files for ``rows`` gold rows, generated on first use."""
    folder = DATA / f"{rows}"
    stamp = folder / "stamp"
    if not stamp.exists() or stamp.read_text() != GENERATOR_VERSION:
        generate(rows, folder)
        stamp.write_text(GENERATOR_VERSION)
    return folder


def run_process(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident set size (bytes) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read() if child.stderr else b""
    if child.returncode != 0:
        raise SystemExit(f"benchmark command failed ({child.returncode}): {stderr.decode()[:200]}")
    # ru_maxrss is in kilobytes on Linux and bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return elapsed, usage.ru_maxrss * scale


def median_process(argv: list[str], repeat: int) -> tuple[float, int]:
    runs = [run_process(argv) for _ in range(repeat)]
    return statistics.median(t for t, _ in runs), max(m for _, m in runs)


def _chain(raw: dict[str, object]) -> EvidenceChain:
    sources = [SourceLocation(**s) for s in raw["source_locations"]]  # type: ignore[arg-type,attr-defined]
    return EvidenceChain(**{**raw, "source_locations": sources})  # type: ignore[arg-type]


def load_records(folder: Path) -> tuple[list[GoldField], list[Prediction]]:
    """Records built from the files (exact numbers, as the reader would give)."""
    decode = json.JSONDecoder(parse_float=Decimal).decode
    with (folder / "gold.jsonl").open(encoding="utf-8") as lines:
        gold = [GoldField(**decode(line)) for line in lines]
    predictions = []
    with (folder / "predictions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = decode(line)
            chain = row.get("evidence_chain")
            predictions.append(
                Prediction(
                    row["case_id"],
                    row["field_id"],
                    row["value"],
                    row.get("normalized_fact_digest"),
                    _chain(chain) if chain else None,
                )
            )
    return gold, predictions


def measure(rows: int, repeat: int) -> dict[str, float]:
    folder = dataset(rows)
    gold_file, prediction_file = folder / "gold.jsonl", folder / "predictions.jsonl"
    schema_file = folder / "schema.json"
    prediction_rows = sum(1 for _ in prediction_file.open("rb"))
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        empty = Path(scratch) / "empty.jsonl"
        empty.write_bytes(b"")
        cli = [sys.executable, "-m", "chartscore", "score", "--quiet", "--schema", str(schema_file)]
        floor_argv = [sys.executable, "-c", FLOOR_PROGRAM, str(gold_file), str(prediction_file)]
        cli_argv = [
            *cli,
            "--gold",
            str(gold_file),
            "--predictions",
            str(prediction_file),
            "--out",
            str(report),
        ]
        # Alternate floor and CLI runs so drift in machine speed hits both alike.
        floors, clis, peaks = [], [], []
        for _ in range(repeat):
            floors.append(run_process(floor_argv)[0])
            seconds, peak = run_process(cli_argv)
            clis.append(seconds)
            peaks.append(peak)
        _, gold_only_peak = run_process(
            [*cli, "--gold", str(gold_file), "--predictions", str(empty), "--out", str(report)]
        )
    gold, predictions = load_records(folder)
    schema = load_schema(schema_file)
    in_memory = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        score(gold, predictions, schema=schema)
        in_memory.append(time.perf_counter() - start)
    del gold, predictions
    gc.collect()
    return {
        "gold_rows": rows,
        "prediction_rows": prediction_rows,
        "floor_s": statistics.median(floors),
        "cli_s": statistics.median(clis),
        "in_memory_s": statistics.median(in_memory),
        "cli_peak_mib": max(peaks) / 2**20,
        "gold_only_peak_mib": gold_only_peak / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="chartscore benchmark (ratios to the parse floor)")
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="comma-separated gold row counts"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"repeat: {args.repeat} (medians)\n")
    header = (
        f"{'gold rows':>10} {'preds':>9} {'floor s':>8} {'cli s':>8} {'cli/floor':>9} "
        f"{'score() s':>9} {'score/floor':>11} {'rows/s (cli)':>13} {'peak MiB':>9} {'gold-only MiB':>13}"
    )
    print(header)
    results = []
    for rows in sizes:
        r = measure(rows, args.repeat)
        results.append(r)
        total = r["gold_rows"] + r["prediction_rows"]
        print(
            f"{r['gold_rows']:>10,} {r['prediction_rows']:>9,} {r['floor_s']:>8.2f} {r['cli_s']:>8.2f} "
            f"{r['cli_s'] / r['floor_s']:>9.2f} {r['in_memory_s']:>9.2f} "
            f"{r['in_memory_s'] / r['floor_s']:>11.2f} {total / r['cli_s']:>13,.0f} "
            f"{r['cli_peak_mib']:>9.0f} {r['gold_only_peak_mib']:>13.0f}",
            flush=True,
        )
    print()
    by_size = {int(r["gold_rows"]): r for r in results}
    big = by_size.get(1_000_000)
    if big is not None:
        print("targets at 10^6 gold rows:")
        checks = [
            ("CLI end to end <= 2.5 x parse floor", big["cli_s"] / big["floor_s"], 2.5),
            ("in-memory score() < parse floor", big["in_memory_s"] / big["floor_s"], 1.0),
            ("CLI peak memory <= 1024 MiB", big["cli_peak_mib"], 1024),
            (
                "memory held for predictions (peak - gold-only), MiB",
                big["cli_peak_mib"] - big["gold_only_peak_mib"],
                None,
            ),
        ]
        if 100_000 in by_size:
            checks.append(
                (
                    "10^6 CLI time / 10^5 CLI time <= 11",
                    big["cli_s"] / by_size[100_000]["cli_s"],
                    11,
                )
            )
            checks.append(
                (
                    "10^6 / 10^5 gold-only peak memory (gold grows 10x)",
                    big["gold_only_peak_mib"] / by_size[100_000]["gold_only_peak_mib"],
                    None,
                )
            )
        for name, value, bound in checks:
            verdict = (
                "" if bound is None else ("  meets target" if value <= bound else "  MISSES target")
            )
            print(f"  {name}: {value:.2f}{verdict}")


if __name__ == "__main__":
    main()
