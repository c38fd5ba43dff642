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
import threading
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


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its children, from /proc (Linux); 0 elsewhere."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            pids += [int(child) for child in children.read().split()]
    except OSError:
        return 0
    for each in pids:
        try:
            with open(f"/proc/{each}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            pass
    return total


def run_process(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident memory (bytes) of one command and its children.

    The peak is the larger of the kernel's peak for the largest single process
    (wait4's ru_maxrss) and the sum over the process tree sampled every 20 ms,
    so a helper process's memory is counted too.
    """
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampled = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sampled[0] = max(sampled[0], _tree_rss(child.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read() if child.stderr else b""
    if child.returncode != 0:
        raise SystemExit(f"benchmark command failed ({child.returncode}): {stderr.decode()[:200]}")
    # ru_maxrss is in kilobytes on Linux and bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return elapsed, max(usage.ru_maxrss * scale, sampled[0])


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
        # Alternate the runs so drift in machine speed hits all of them alike.
        floors, clis, one_process, peaks = [], [], [], []
        for _ in range(repeat):
            floors.append(run_process(floor_argv)[0])
            seconds, peak = run_process(cli_argv)
            clis.append(seconds)
            peaks.append(peak)
            one_process.append(run_process([*cli_argv, "--jobs", "1"])[0])
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
        "cli_one_process_s": statistics.median(one_process),
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
    columns = (
        ("gold rows", 10, lambda r: f"{r['gold_rows']:,}"),
        ("preds", 9, lambda r: f"{r['prediction_rows']:,}"),
        ("floor s", 8, lambda r: f"{r['floor_s']:.2f}"),
        ("cli s", 7, lambda r: f"{r['cli_s']:.2f}"),
        ("cli/floor", 9, lambda r: f"{r['cli_s'] / r['floor_s']:.2f}"),
        ("1-proc/floor", 12, lambda r: f"{r['cli_one_process_s'] / r['floor_s']:.2f}"),
        ("score()/floor", 13, lambda r: f"{r['in_memory_s'] / r['floor_s']:.2f}"),
        (
            "rows/s cli",
            11,
            lambda r: f"{(r['gold_rows'] + r['prediction_rows']) / r['cli_s']:,.0f}",
        ),
        ("peak MiB", 8, lambda r: f"{r['cli_peak_mib']:.0f}"),
        ("gold-only MiB", 13, lambda r: f"{r['gold_only_peak_mib']:.0f}"),
    )
    print(" ".join(f"{name:>{width}}" for name, width, _ in columns))
    results = []
    for rows in sizes:
        r = measure(rows, args.repeat)
        results.append(r)
        print(" ".join(f"{cell(r):>{width}}" for _, width, cell in columns), flush=True)
    print(
        "\ncli = chartscore score as users run it (2 processes when 2+ CPUs are free); "
        "1-proc = --jobs 1;\nscore() = chartscore.score() on records already in memory; "
        "peak = the CLI's process tree."
    )
    by_size = {int(r["gold_rows"]): r for r in results}
    big = by_size.get(1_000_000)
    if big is None:
        return
    print("\ntargets at 10^6 gold rows:")
    checks: list[tuple[str, float, float | None]] = [
        ("CLI end to end / parse floor (<= 2.5)", big["cli_s"] / big["floor_s"], 2.5),
        ("CLI --jobs 1 / parse floor (<= 2.5)", big["cli_one_process_s"] / big["floor_s"], 2.5),
        ("in-memory score() / parse floor (< 1)", big["in_memory_s"] / big["floor_s"], 1.0),
        ("CLI peak memory, MiB (<= 1024)", big["cli_peak_mib"], 1024),
        ("peak minus gold-only peak, MiB", big["cli_peak_mib"] - big["gold_only_peak_mib"], None),
    ]
    if 100_000 in by_size:
        small = by_size[100_000]
        checks += [
            ("CLI time 10^6 / 10^5 (<= 11)", big["cli_s"] / small["cli_s"], 11),
            (
                "gold-only peak 10^6 / 10^5 (gold grew 10x)",
                big["gold_only_peak_mib"] / small["gold_only_peak_mib"],
                None,
            ),
        ]
    for name, value, bound in checks:
        verdict = (
            "" if bound is None else ("  meets target" if value <= bound else "  MISSES target")
        )
        print(f"  {name}: {value:.2f}{verdict}")


if __name__ == "__main__":
    main()
