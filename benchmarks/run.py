"""chartscore benchmark: end to end and in memory, as ratios to the JSON parse floor.

Usage (from the repository root, with chartscore installed)::

    python benchmarks/run.py                       # 10^4, 10^5 and 10^6 gold rows
    python benchmarks/run.py --sizes 10000 --repeat 1
    python benchmarks/run.py --sizes 1000000,2000000 --no-cli   # score()'s growth
    python benchmarks/run.py --match-only          # the match modes (issue 34) alone

For each size it generates seeded synthetic files (cached under
``benchmarks/.data``; see generate.py), then measures in one run:

- the parse floor: a separate Python process that reads both files line by line
  and decodes each line with the standard library's JSON decoder (numbers with
  a fraction as Decimal) and does nothing else;
- ``chartscore score`` end to end, as a separate process, the way users run it;
- building GoldField, Prediction, EvidenceChain and SourceLocation records from
  rows already decoded (the decoding is not timed), three ways: one constructor
  call per record with the decoded rows frozen out of the garbage collector's
  sight; the same with the rows alive under the collector, as a notebook holds
  them; and the bulk path (``GoldField.from_rows``, ``Prediction.from_rows``)
  with the rows alive;
- ``chartscore.score()`` on those records, once on the records built with the rows frozen
  and once on those built with the rows alive (the decoded rows still held, as in a notebook);
- the peak resident memory of the CLI process, and of a run with an empty
  predictions file (the gold set alone), to show the prediction stream is not kept;
- the match modes (``match_modes.py``): 10^5 rows of regex and fuzzy scoring as ratios to
  plain scoring of the same rows in the same run, and the worst rows' time and memory.

Times are medians of ``--repeat`` rounds. Ratios to the floor are taken round
by round (each figure over the floor measured in the same round), then the
median, so drift in the machine's speed during the run cancels out. The
targets (docs/performance.md) are ratios, so they hold across machines;
absolute times do not.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from decimal import Decimal
from pathlib import Path

from generate import generate
from match_modes import report as match_mode_report

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


def decode_rows(folder: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The files' rows decoded the way the reader would (exact numbers), not yet records."""
    decode = json.JSONDecoder(parse_float=Decimal).decode
    with (folder / "gold.jsonl").open(encoding="utf-8") as lines:
        gold = [decode(line) for line in lines]
    with (folder / "predictions.jsonl").open(encoding="utf-8") as lines:
        predictions = [decode(line) for line in lines]
    return gold, predictions


def build_records(
    gold_rows: list[dict[str, object]], prediction_rows: list[dict[str, object]]
) -> tuple[list[GoldField], list[Prediction]]:
    """GoldField, Prediction, EvidenceChain and SourceLocation records from decoded rows."""
    return [GoldField(**row) for row in gold_rows], [_prediction(row) for row in prediction_rows]  # type: ignore[arg-type]


def _prediction(row: dict[str, object]) -> Prediction:
    chain = row.get("evidence_chain")
    return Prediction(
        row["case_id"],  # type: ignore[arg-type]
        row["field_id"],  # type: ignore[arg-type]
        row["value"],
        row.get("normalized_fact_digest"),  # type: ignore[arg-type]
        _chain(chain) if chain else None,  # type: ignore[arg-type]
    )


def record_bytes_per_gold_row(folder: Path, rows: int) -> float:
    """Bytes the records of ``rows`` gold rows (and their share of predictions) hold.

    Measured with tracemalloc on records built one decoded line at a time, so
    only the records (and the strings and numbers they keep) remain.
    """
    decode = json.JSONDecoder(parse_float=Decimal).decode
    total = sum(1 for _ in (folder / "gold.jsonl").open("rb"))
    share = round(rows * sum(1 for _ in (folder / "predictions.jsonl").open("rb")) / total)
    gc.collect()
    tracemalloc.start()
    with (folder / "gold.jsonl").open(encoding="utf-8") as lines:
        gold = [GoldField(**decode(line)) for line in itertools.islice(lines, rows)]
    with (folder / "predictions.jsonl").open(encoding="utf-8") as lines:
        predictions = [_prediction(decode(line)) for line in itertools.islice(lines, share)]
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del gold, predictions
    return held / rows


def cli_commands(folder: Path, scratch: Path) -> tuple[list[str], list[str]]:
    """The CLI run on ``folder``'s files, and the same with an empty predictions file."""
    empty = scratch / "empty.jsonl"
    empty.write_bytes(b"")
    command = [
        *(sys.executable, "-m", "chartscore", "score", "--quiet"),
        *("--schema", str(folder / "schema.json"), "--gold", str(folder / "gold.jsonl")),
        *("--out", str(scratch / "report.json")),
    ]
    return [*command, "--predictions", str(folder / "predictions.jsonl")], [
        *command,
        "--predictions",
        str(empty),
    ]


def measure_peaks(rows: int) -> tuple[int, int]:
    """Peak memory (bytes) of the CLI and of its gold set alone (empty predictions).

    Call it for every size before anything large is built here: a child
    started from a large process inherits its high-water mark (``ru_maxrss``)
    until exec, which would inflate the kernel's figure.
    """
    with tempfile.TemporaryDirectory() as scratch:
        cli_argv, gold_only_argv = cli_commands(dataset(rows), Path(scratch))
        return run_process(cli_argv)[1], run_process(gold_only_argv)[1]


def measure(rows: int, repeat: int, peaks: tuple[int, int] | None = None) -> dict[str, float]:
    """Times for one size, alternating; the CLI's unless ``peaks`` is None (``--no-cli``)."""
    cli = peaks is not None
    peak, gold_only_peak = peaks or (0, 0)
    folder = dataset(rows)
    gold_file, prediction_file = folder / "gold.jsonl", folder / "predictions.jsonl"
    schema = load_schema(folder / "schema.json")
    prediction_rows = sum(1 for _ in prediction_file.open("rb"))
    with tempfile.TemporaryDirectory() as scratch:
        floor_argv = [sys.executable, "-c", FLOOR_PROGRAM, str(gold_file), str(prediction_file)]
        cli_argv, _ = cli_commands(folder, Path(scratch))
        gold_rows, prediction_dicts = decode_rows(folder)
        # Alternate the runs so drift in machine speed hits all of them alike.
        floors: list[float] = []
        clis: list[float] = []
        one_process: list[float] = []
        builds: list[float] = []
        alive_builds: list[float] = []
        bulk_builds: list[float] = []
        in_memory: list[float] = []
        alive_scores: list[float] = []
        for _ in range(repeat):
            floors.append(run_process(floor_argv)[0])
            if cli:
                clis.append(run_process(cli_argv)[0])
                one_process.append(run_process([*cli_argv, "--jobs", "1"])[0])
            # First with the decoded rows frozen out of the collector's sight, as
            # scaffolding a streaming caller would not hold; the records built
            # from them stay under the collector.
            gc.collect()
            gc.freeze()
            start = time.perf_counter()
            gold, predictions = build_records(gold_rows, prediction_dicts)
            builds.append(time.perf_counter() - start)
            gc.collect()
            start = time.perf_counter()
            score(gold, predictions, schema=schema)
            in_memory.append(time.perf_counter() - start)
            del gold, predictions
            gc.unfreeze()
            # Then as a notebook runs: the decoded rows alive under the collector,
            # one constructor call per record, then the bulk path.
            gc.collect()
            start = time.perf_counter()
            gold, predictions = build_records(gold_rows, prediction_dicts)
            alive_builds.append(time.perf_counter() - start)
            # score() on them, the decoded rows still alive beside the records (issue 35).
            start = time.perf_counter()
            score(gold, predictions, schema=schema)
            alive_scores.append(time.perf_counter() - start)
            del gold, predictions
            gc.collect()
            start = time.perf_counter()
            gold = GoldField.from_rows(gold_rows)
            predictions = Prediction.from_rows(prediction_dicts)
            bulk_builds.append(time.perf_counter() - start)
            del gold, predictions
        del gold_rows, prediction_dicts
        gc.collect()
    nan = float("nan")
    return {
        "gold_rows": rows,
        "prediction_rows": prediction_rows,
        # Ratios to the floor are taken run by run (each figure against the
        # floor measured just before it), then the median: pairing keeps a
        # ratio meaningful when the machine's speed drifts during the run.
        "cli_ratio": _paired(clis, floors),
        "cli_one_process_ratio": _paired(one_process, floors),
        "build_ratio": _paired(builds, floors),
        "alive_build_ratio": _paired(alive_builds, floors),
        "bulk_build_ratio": _paired(bulk_builds, floors),
        "in_memory_ratio": _paired(in_memory, floors),
        "alive_score_ratio": _paired(alive_scores, floors),
        "build_and_score_ratio": _paired(
            [b + s for b, s in zip(builds, in_memory, strict=True)], floors
        ),
        "floor_s": statistics.median(floors),
        "cli_s": statistics.median(clis) if clis else nan,
        "cli_one_process_s": statistics.median(one_process) if one_process else nan,
        "build_s": statistics.median(builds),
        "alive_build_s": statistics.median(alive_builds),
        "bulk_build_s": statistics.median(bulk_builds),
        "in_memory_s": statistics.median(in_memory),
        "alive_score_s": statistics.median(alive_scores),
        "cli_peak_mib": peak / 2**20 if cli else nan,
        "gold_only_peak_mib": gold_only_peak / 2**20 if cli else nan,
    }


def _paired(times: list[float], floors: list[float]) -> float:
    """The median over runs of each run's time over the floor measured in the same round."""
    if not times:
        return float("nan")
    return statistics.median(t / f for t, f in zip(times, floors, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description="chartscore benchmark (ratios to the parse floor)")
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="comma-separated gold row counts; add 2000000 for the growth check",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument(
        "--cli",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the command-line figures too (--no-cli: floor, build and score() only)",
    )
    parser.add_argument(
        "--match",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="measure the match modes too (10^5 rows of regex and fuzzy, the worst rows)",
    )
    parser.add_argument(
        "--match-only",
        action="store_true",
        help="measure only the match modes",
    )
    parser.add_argument(
        "--memory-rows",
        type=int,
        default=100_000,
        help="gold rows for the records' bytes per row (tracemalloc; 0 to skip)",
    )
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"repeat: {args.repeat} (medians)\n")
    if args.match_only:
        match_mode_report(args.repeat)
        return
    columns = (
        ("gold rows", 10, lambda r: f"{r['gold_rows']:,}"),
        ("preds", 9, lambda r: f"{r['prediction_rows']:,}"),
        ("floor s", 8, lambda r: f"{r['floor_s']:.2f}"),
        ("cli s", 7, lambda r: f"{r['cli_s']:.2f}"),
        ("cli/floor", 9, lambda r: f"{r['cli_ratio']:.2f}"),
        ("1-proc/floor", 12, lambda r: f"{r['cli_one_process_ratio']:.2f}"),
        ("build/floor", 11, lambda r: f"{r['build_ratio']:.2f}"),
        ("alive/floor", 11, lambda r: f"{r['alive_build_ratio']:.2f}"),
        ("bulk/floor", 10, lambda r: f"{r['bulk_build_ratio']:.2f}"),
        ("score()/floor", 13, lambda r: f"{r['in_memory_ratio']:.2f}"),
        ("score() us/row", 14, lambda r: f"{r['in_memory_s'] / r['gold_rows'] * 1e6:.2f}"),
        ("alive score()/floor", 19, lambda r: f"{r['alive_score_ratio']:.2f}"),
        ("peak MiB", 8, lambda r: f"{r['cli_peak_mib']:.0f}"),
        ("gold-only MiB", 13, lambda r: f"{r['gold_only_peak_mib']:.0f}"),
    )
    print(" ".join(f"{name:>{width}}" for name, width, _ in columns))
    # Every size's peaks first, while this process is still small (see measure_peaks).
    peaks = {rows: measure_peaks(rows) for rows in sizes} if args.cli else {}
    results = []
    for rows in sizes:
        r = measure(rows, args.repeat, peaks.get(rows))
        results.append(r)
        print(" ".join(f"{cell(r):>{width}}" for _, width, cell in columns), flush=True)
    print(
        "\ncli = chartscore score as users run it (2 processes when 2+ CPUs are free); "
        "1-proc = --jobs 1;\nbuild = GoldField, Prediction, EvidenceChain and SourceLocation "
        "records from decoded rows (frozen out of the collector's sight);\n"
        "alive = the same with the rows alive under the collector, as in a notebook; "
        "bulk = GoldField.from_rows and Prediction.from_rows, rows alive;\n"
        "score() = chartscore.score() on those records; "
        "alive score() = the same on the records built with the rows alive;\n"
        "peak = the CLI's process tree."
    )
    if args.memory_rows:
        per_row = record_bytes_per_gold_row(dataset(sizes[0]), min(args.memory_rows, sizes[0]))
        print(f"records: {per_row:,.0f} bytes per gold row with its share of predictions")
    if args.match:
        match_mode_report(args.repeat)
    by_size = {int(r["gold_rows"]): r for r in results}
    big = by_size.get(1_000_000)
    if big is None:
        return
    print("\ntargets at 10^6 gold rows:")
    checks: list[tuple[str, float, float | None]] = [
        ("CLI end to end / parse floor (<= 1.6)", big["cli_ratio"], 1.6),
        ("CLI --jobs 1 / parse floor (<= 2.2)", big["cli_one_process_ratio"], 2.2),
        ("record build / parse floor (<= 2.0)", big["build_ratio"], 2.0),
        ("record build, rows alive / parse floor", big["alive_build_ratio"], None),
        ("bulk build (from_rows), rows alive / parse floor (<= 2.0)", big["bulk_build_ratio"], 2.0),
        ("in-memory score() / parse floor (<= 0.6)", big["in_memory_ratio"], 0.6),
        ("score(), decoded rows alive / parse floor (<= 0.9)", big["alive_score_ratio"], 0.9),
        (
            "build + score() / parse floor (<= 2.6)",
            big["build_and_score_ratio"],
            2.6,
        ),
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
    if 2_000_000 in by_size:
        double = by_size[2_000_000]
        checks += [
            (
                "score() per gold row, 2x10^6 / 10^6 (<= 1.2)",
                (double["in_memory_s"] / 2_000_000) / (big["in_memory_s"] / 1_000_000),
                1.2,
            ),
            (
                "record build per gold row, 2x10^6 / 10^6",
                (double["build_s"] / 2_000_000) / (big["build_s"] / 1_000_000),
                None,
            ),
            (
                "CLI gold set, bytes per gold row (gold-only peak 2x10^6 - 10^6)",
                (double["gold_only_peak_mib"] - big["gold_only_peak_mib"]) * 2**20 / 1_000_000,
                None,
            ),
        ]
    for name, value, bound in checks:
        if math.isnan(value):  # a figure this run did not measure (--no-cli)
            continue
        verdict = (
            "" if bound is None else ("  meets target" if value <= bound else "  MISSES target")
        )
        print(f"  {name}: {value:.2f}{verdict}")


if __name__ == "__main__":
    main()
