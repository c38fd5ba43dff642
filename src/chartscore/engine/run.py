"""``score_dask``: score part files on a Dask cluster, byte-identical to one process.

The task graph (docs/scale.md draws it):

1. **read**: one task per part file (gold and predictions) reads it in blocks
   with chartscore's own reader and checks every line, then splits the rows
   into one bucket per partition by a stable hash of ``(case_id, field_id)``
   (``parts.py``). One task per file rather than a bag of lines, because the
   block reader gives every line its number and applies the same limits
   (line length, UTF-8, byte order mark) as ``chartscore score``, and the
   rows leave the task already checked and compactly pickled.
2. **shuffle and score**: partition ``j`` takes bucket ``j`` of every part and
   scores it with a :class:`~chartscore.scoring.scorer.Scorer` (``partition.py``).
3. **reduce**: the partition results are tree-merged with
   :meth:`dask.bag.Bag.reduction`, and one last task turns the merged partial
   tally into the value-free report (or picks the failure to report).

Only the report, or a failure made of a code and numbers, comes back to the
caller's process. Task names are random per run, never derived from paths.

Dask and distributed are imported only inside :func:`score_dask`: importing
chartscore never imports them.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import shutil
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Final

from chartscore.engine.partition import combine, finish, first_result, score_partition
from chartscore.engine.parts import Failure, PathSpec, part_paths, read_part
from chartscore.engine.quiet import NAMESPACES, SILENT
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath
from chartscore.io.schema_file import load_schema
from chartscore.records.schema import Schema
from chartscore.report import Report
from chartscore.scoring.scorer import ExtraPredictions

IN_PROCESS_SCHEDULERS: Final = ("synchronous", "threads")
"""Scheduler names that run in the caller's process (no cluster)."""

GOLD_BYTES_PER_PARTITION: Final = 128 << 20
"""Default partition size: about this much gold file per partition (~250 MiB of scorer state)."""

MAX_PARTITIONS: Final = 100_000
SPLIT_EVERY: Final = 8
"""Partition results merged per task in the reduction tree."""

_GZIP_EXPANSION: Final = 8  # assumed size ratio of a gzipped part file, for default partitions
_LOCAL_CONFIG: Final = {
    # Never write private rows to disk: no spilling. A worker that runs out of
    # memory pauses, then is restarted by its nanny, and the run fails with
    # engine_failed rather than leaving pickled rows in a spill directory.
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    # Quiet workers: their own log handlers filter everything (see _quiet).
    "distributed.worker.preload": ["chartscore.engine.quiet"],
}


def score_dask(
    gold: PathSpec,
    predictions: PathSpec,
    *,
    schema: Schema | InputPath | None = None,
    scheduler: str | None = None,
    partitions: int | None = None,
    extra_predictions: ExtraPredictions = "error",
    strict_schema: bool = False,
) -> Report:
    """Score part files on Dask; the same report, byte for byte, as one process.

    The report equals :func:`chartscore.score_files` on the gold parts and the
    prediction parts each concatenated in sorted path order, whatever the
    partitioning, and a failure is the one that run would meet first, naming
    the input, the part number (1-based, in sorted path order) and the line:
    ``duplicate_gold_key (gold part 3 line 17)``.

    Args:
        gold: A glob pattern (``"lake/gold/part-*.jsonl"``) or a list of paths
            of gold JSON Lines part files; ``.gz`` files are decompressed.
        predictions: The same for predictions (a part file may be empty).
        schema: A :class:`Schema`, or the path of a JSON or TOML schema file.
        scheduler: ``None`` starts a private local cluster sized to this
            machine (one single-threaded worker process per CPU, a memory
            limit each, no dashboard, no spilling, TLS with a key made for the
            run) and closes it afterwards, even on errors and Ctrl-C. An
            address (``"tcp://host:8786"``, ``"tls://..."``) connects to an
            existing cluster whose workers can read the files and import
            chartscore. ``"synchronous"`` runs every task in this process, one
            at a time (tests, debugging, small jobs); ``"threads"`` uses a
            thread pool in this process.
        partitions: How many partitions to shuffle into; default: at least one
            per worker thread and one per 128 MiB of gold files.
        extra_predictions: ``"error"`` or ``"ignore"``, as for :func:`chartscore.score`.
        strict_schema: Refuse schema field ids no gold row uses, as for
            :func:`chartscore.score`.

    Returns:
        The value-free :class:`Report`.

    Raises:
        ChartscoreError: any code :func:`chartscore.score_files` raises,
            located by input, part and line; ``no_part_files``;
            ``engine_unavailable`` without the ``chartscore[dask]`` extra;
            ``engine_failed`` when the cluster cannot be reached or fails;
            ``usage`` for a scheduler or partition count that is not valid.
            Never with a ``__cause__`` or ``__context__``.
        ValueError: ``extra_predictions`` is not ``"error"`` or ``"ignore"``.
    """
    if extra_predictions not in ("error", "ignore"):
        raise ValueError("extra_predictions must be 'error' or 'ignore'")
    if not _valid_scheduler(scheduler) or not _valid_partitions(partitions):
        raise ChartscoreError(ErrorCode.USAGE)
    gold_paths = part_paths(gold, InputKind.GOLD)
    prediction_paths = part_paths(predictions, InputKind.PREDICTIONS)
    if schema is not None and not isinstance(schema, Schema):
        schema = load_schema(schema)
    plan = _Plan(
        gold=gold_paths,
        predictions=prediction_paths,
        schema=schema,
        partitions=partitions,
        extra_predictions=extra_predictions,
        strict_schema=strict_schema,
    )
    _require_engine(
        local_cluster=scheduler is None, distributed=scheduler not in IN_PROCESS_SCHEDULERS
    )
    outcome: object = None
    failed = False
    with _quiet():
        try:
            if scheduler in IN_PROCESS_SCHEDULERS:
                outcome = _run_in_process(plan, scheduler)
            else:
                outcome = _run_on_cluster(plan, scheduler)
        except Exception:  # noqa: BLE001 - the cluster's messages can name tasks and files
            failed = True
    if failed or not isinstance(outcome, Report | Failure):
        raise ChartscoreError(ErrorCode.ENGINE_FAILED)
    if isinstance(outcome, Failure):
        raise outcome.error()
    return outcome


def _valid_scheduler(scheduler: object) -> bool:
    if scheduler is None:
        return True
    return type(scheduler) is str and (scheduler in IN_PROCESS_SCHEDULERS or "://" in scheduler)


def _valid_partitions(partitions: object) -> bool:
    return partitions is None or (type(partitions) is int and 0 < partitions <= MAX_PARTITIONS)


def _require_engine(*, local_cluster: bool, distributed: bool) -> None:
    """Import what the run needs, or raise ``engine_unavailable`` (with no context)."""
    needed = ["dask", "dask.bag"]
    if distributed or local_cluster:
        needed.append("distributed")
    if local_cluster:
        needed.append("cryptography")  # TLS keys for the local cluster
    missing = False
    for name in needed:
        try:
            importlib.import_module(name)
        except ImportError:
            missing = True
    if missing:
        raise ChartscoreError(ErrorCode.ENGINE_UNAVAILABLE)


class _Plan:
    """What to run: the parts, the scoring options, and the graph builder."""

    def __init__(
        self,
        *,
        gold: list[str],
        predictions: list[str],
        schema: Schema | None,
        partitions: int | None,
        extra_predictions: ExtraPredictions,
        strict_schema: bool,
    ) -> None:
        self.gold = gold
        self.predictions = predictions
        self.schema = schema
        self.partitions = partitions
        self.extra_predictions = extra_predictions
        self.strict_schema = strict_schema

    def partition_count(self, threads: int) -> int:
        """The given count, or one per worker thread and per 128 MiB of gold."""
        if self.partitions is not None:
            return self.partitions
        size = 0
        for path in self.gold:
            with contextlib.suppress(OSError):
                size += os.path.getsize(path) * (_GZIP_EXPANSION if path.endswith(".gz") else 1)
        return max(1, threads, min(MAX_PARTITIONS, math.ceil(size / GOLD_BYTES_PER_PARTITION)))

    def graph(self, partitions: int) -> Any:
        """The delayed final task: its value is a :class:`Report` or a :class:`Failure`."""
        import dask.bag
        from dask import delayed

        run = uuid.uuid4().hex[:16]  # task names say nothing about the inputs

        def reads(paths: Sequence[str], source: InputKind) -> list[Any]:
            return [
                delayed(read_part, pure=True, nout=2)(
                    source,
                    part,
                    path,
                    partitions,
                    dask_key_name=f"chartscore-read-{source}-{part}-{run}",
                )
                for part, path in enumerate(paths, 1)
            ]

        gold_reads = reads(self.gold, InputKind.GOLD)
        prediction_reads = reads(self.predictions, InputKind.PREDICTIONS)
        gold_buckets = [read[1] for read in gold_reads]
        prediction_buckets = [read[1] for read in prediction_reads]
        scored = [
            delayed(score_partition, pure=True)(
                self.schema,
                self.extra_predictions,
                [buckets[index] for buckets in gold_buckets],
                [buckets[index] for buckets in prediction_buckets],
                dask_key_name=f"chartscore-score-{index}-{run}",
            )
            for index in range(partitions)
        ]
        combined = dask.bag.from_delayed(scored).reduction(
            first_result, combine, split_every=SPLIT_EVERY, name=f"chartscore-merge-{run}"
        )
        # Unoptimized: the bag's own optimizer would fuse and rename the read
        # tasks, which the final task also needs, and so run them twice.
        combined = combined.to_delayed(optimize_graph=False)
        return delayed(finish, pure=True)(
            combined,
            [read[0] for read in gold_reads],
            [read[0] for read in prediction_reads],
            self.schema,
            self.strict_schema,
            dask_key_name=f"chartscore-finish-{run}",
        )


def _run_in_process(plan: _Plan, scheduler: str) -> object:
    import dask

    threads = 1 if scheduler == "synchronous" else (os.cpu_count() or 1)
    final = plan.graph(plan.partition_count(threads))
    (outcome,) = dask.compute(final, scheduler=scheduler)
    return outcome


def _run_on_cluster(plan: _Plan, address: str | None) -> object:
    from distributed import Client

    cluster: Any = None
    client: Any = None
    scratch: str | None = None
    try:
        if address is None:
            scratch = tempfile.mkdtemp(prefix="chartscore-dask-")
            cluster, security = _local_cluster(scratch)
            client = Client(cluster, security=security, set_as_default=False)
        else:
            client = Client(address, set_as_default=False)
        threads = sum(client.nthreads().values())
        future = client.compute(plan.graph(plan.partition_count(threads)))
        return future.result()
    finally:
        _close(client, cluster, scratch)


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _local_cluster(scratch: str) -> tuple[Any, Any]:
    """A private cluster on this machine: TLS with a fresh key, loopback only, quiet.

    Every directory the scheduler and the workers make is inside ``scratch``
    (mode 0700, removed afterwards). Worker processes start with ``-W ignore``
    (passed on from ``sys.warnoptions``), so not even a warning printed before
    the quiet preload runs reaches the caller's stderr.
    """
    import dask
    from distributed import LocalCluster
    from distributed.security import Security

    security = Security.temporary()
    config = {**_LOCAL_CONFIG, "temporary-directory": scratch}
    sys.warnoptions.append("ignore")
    try:
        with dask.config.set(config):
            cluster = LocalCluster(
                n_workers=_available_cpus(),
                threads_per_worker=1,
                processes=True,
                memory_limit="auto",
                host="127.0.0.1",
                protocol="tls://",
                security=security,
                dashboard_address=None,
                silence_logs=SILENT,
                local_directory=scratch,
            )
    finally:
        sys.warnoptions.remove("ignore")
    return cluster, security


def _close(client: Any, cluster: Any, scratch: str | None) -> None:
    """Close the client and the local cluster and remove its directory; never raises."""
    for resource in (client, cluster):
        if resource is not None:
            with contextlib.suppress(Exception):
                resource.close()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence Dask's, distributed's and their event loop's loggers and warnings.

    Their messages can name tasks, files and exceptions; chartscore prints
    nothing of theirs. Levels are restored afterwards.
    """
    manager = logging.root.manager
    names = [name for name in list(manager.loggerDict) if name.split(".")[0] in NAMESPACES]
    names += [name for name in NAMESPACES if name not in names]
    saved = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(SILENT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
