"""Dask engine benchmark: part files on a local cluster against the one-process CLI.

Usage (from the repository root, with ``pip install -e '.[dask]'``)::

    python benchmarks/dask.py                          # 10^6 and 10^7 gold rows
    python benchmarks/dask.py --sizes 1000000 --partitions 2,8

For each size it reuses the seeded files of ``generate.py`` (cached under
``benchmarks/.data``), splits gold and predictions into part files (contiguous
slices, so the parts concatenated in sorted order are the original files), and
measures, each as a separate process:

- ``chartscore score --jobs 1`` on the whole files: wall time and peak memory;
- ``score_dask`` with its default local cluster (one single-threaded worker
  process per CPU) for each partition count: wall time, the peak memory of
  each worker process (the kernel's high-water mark, read from /proc) and of
  the driver process (client, scheduler and nannies);
- the fixed cost of starting and closing the local cluster (a ten-row run).

Each Dask report is checked byte for byte against the CLI's. This is a
measurement, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import dataset  # noqa: E402 - the benchmark's shared helpers

# This file is named dask.py: keep its folder off the import path from here on, so that
# nothing imports it in place of Dask.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

DRIVER = """
import sys
from chartscore import score_dask

if __name__ == "__main__":
    gold, predictions, schema, partitions, out = sys.argv[1:]
    report = score_dask(gold, predictions, schema=schema, partitions=int(partitions))
    with open(out, "w", encoding="utf-8") as stream:
        stream.write(report.to_json() + "\\n")
"""


def split_parts(source: Path, folder: Path, name: str, parts: int) -> str:
    """Split ``source`` into ``parts`` contiguous part files; returns their glob pattern."""
    folder.mkdir(parents=True, exist_ok=True)
    pattern = str(folder / f"{name}-*.jsonl")
    stamp = folder / f"{name}.stamp"
    if stamp.exists():
        return pattern
    size = source.stat().st_size
    with source.open("rb") as lines:
        for index in range(parts):
            limit = size * (index + 1) // parts
            with (folder / f"{name}-{index:04d}.jsonl").open("wb") as out:
                while lines.tell() < limit or index == parts - 1:
                    line = lines.readline()
                    if not line:
                        break
                    out.write(line)
    stamp.write_text("1")
    return pattern


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def _high_water(pid: int) -> tuple[int, bool]:
    """(peak resident bytes, is a spawned worker) of one process, from /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return 0, False
    peak = 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    return peak, b"spawn_main" in command and b"resource_tracker" not in command


def run_cli(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak resident bytes of the one-process CLI."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        stderr = child.stderr.read() if child.stderr else b""
        raise SystemExit(f"the CLI failed: {stderr.decode()[-300:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def run_dask(argv: list[str]) -> tuple[float, float, int, int, int]:
    """Wall seconds, CPU seconds of all processes, peak per worker, peak of the driver, workers.

    CPU time comes from wait4, which counts the driver and every descendant it
    waited for (the worker processes).
    """
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: dict[int, int] = {}
    driver = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            driver[0] = max(driver[0], _high_water(child.pid)[0])
            todo = _children(child.pid)
            while todo:
                pid = todo.pop()
                peak, is_worker = _high_water(pid)
                if is_worker:
                    workers[pid] = max(workers.get(pid, 0), peak)
                todo += _children(pid)
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    stderr = child.stderr.read() if child.stderr else b""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"score_dask failed: {stderr.decode()[-300:]}")
    if stderr:
        print(f"  note: the Dask run wrote {len(stderr)} bytes to stderr")
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, max(workers.values(), default=0), driver[0], len(workers)


def measure(rows: int, gold_parts: int, prediction_parts: int, partition_counts: list[int]) -> None:
    folder = dataset(rows)
    gold, predictions, schema = (
        folder / "gold.jsonl",
        folder / "predictions.jsonl",
        folder / "schema.json",
    )
    parts = folder / f"parts-{gold_parts}x{prediction_parts}"
    gold_pattern = split_parts(gold, parts, "gold", gold_parts)
    prediction_pattern = split_parts(predictions, parts, "predictions", prediction_parts)
    prediction_rows = sum(1 for _ in predictions.open("rb"))
    with tempfile.TemporaryDirectory() as scratch:
        expected = Path(scratch) / "cli.json"
        cli = [
            sys.executable,
            "-m",
            "chartscore",
            "score",
            "--quiet",
            "--jobs",
            "1",
            "--schema",
            str(schema),
            "--gold",
            str(gold),
            "--predictions",
            str(predictions),
            "--out",
            str(expected),
        ]
        cli_seconds, cli_cpu, cli_peak = run_cli(cli)
        print(
            f"{rows:>11,} {prediction_rows:>11,} {'CLI --jobs 1':>14} {'-':>5} "
            f"{cli_seconds:>8.1f} {1.0:>7.2f} {cli_cpu:>7.1f} {1.0:>7.2f} "
            f"{cli_peak / 2**20:>9.0f} {'-':>10} {'-':>5}",
            flush=True,
        )
        for partitions in partition_counts:
            out = Path(scratch) / f"dask-{partitions}.json"
            argv = [
                sys.executable,
                "-c",
                DRIVER,
                gold_pattern,
                prediction_pattern,
                str(schema),
                str(partitions),
                str(out),
            ]
            seconds, cpu, worker_peak, driver_peak, workers = run_dask(argv)
            same = out.read_bytes() == expected.read_bytes()
            print(
                f"{rows:>11,} {prediction_rows:>11,} {f'dask x{workers}':>14} {partitions:>5} "
                f"{seconds:>8.1f} {seconds / cli_seconds:>7.2f} {cpu:>7.1f} {cpu / cli_cpu:>7.2f} "
                f"{worker_peak / 2**20:>9.0f} {driver_peak / 2**20:>10.0f} "
                f"{'yes' if same else 'NO':>5}",
                flush=True,
            )


def startup_cost() -> tuple[float, float]:
    """Wall and CPU seconds of a ten-row run: starting and closing the local cluster."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        lines = [
            f'{{"case_id": "c{i}", "field_id": "t.note", "field_type": "text", "value": "a"}}\n'
            for i in range(10)
        ]
        (folder / "gold.jsonl").write_text("".join(lines))
        (folder / "predictions.jsonl").write_text(
            "".join(lines[:5]).replace('"field_type": "text", ', "")
        )
        (folder / "schema.json").write_text('{"fields": {}}')
        argv = [
            sys.executable,
            "-c",
            DRIVER,
            str(folder / "gold.jsonl"),
            str(folder / "predictions.jsonl"),
            str(folder / "schema.json"),
            "2",
            str(folder / "out.json"),
        ]
        seconds, cpu, *_ = run_dask(argv)
        return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="Dask engine benchmark against the CLI")
    parser.add_argument("--sizes", default="1000000,10000000", help="gold row counts")
    parser.add_argument("--gold-parts", type=int, default=16)
    parser.add_argument("--prediction-parts", type=int, default=16)
    parser.add_argument("--partitions", default="2,8,32", help="partition counts to compare")
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    counts = [int(count) for count in args.partitions.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; parts: {args.gold_parts} gold, "
        f"{args.prediction_parts} predictions"
    )
    seconds, cpu = startup_cost()
    print(f"local cluster start and close (a ten-row run): {seconds:.1f} s, {cpu:.1f} CPU s\n")
    print(
        f"{'gold rows':>11} {'preds':>11} {'engine':>14} {'P':>5} {'wall s':>8} "
        f"{'vs CLI':>7} {'CPU s':>7} {'vs CLI':>7} {'peak MiB':>9} {'driver MiB':>10} {'same':>5}"
    )
    for rows in sizes:
        measure(rows, args.gold_parts, args.prediction_parts, counts)
    print(
        "\nP = partitions of the shuffle; CPU s = user + system time of every process of the "
        "run;\npeak MiB = the CLI's process, or the largest worker process; driver = the "
        "process that runs\nthe client, scheduler and nannies; same = report bytes equal the CLI's."
    )


if __name__ == "__main__":
    main()
