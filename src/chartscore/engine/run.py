"""``score_dask``: score part files on a Dask cluster, byte-identical to one process.

The task graph (docs/scale.md draws it):

1. **read**: one task per part file (gold and predictions) reads it in blocks
   with chartscore's own reader and checks every line, then splits the rows
   into one bucket per partition by a stable hash of the case id
   (``parts.py``), so every row of a case meets in one partition. One task
   per file rather than a bag of lines, because the block reader gives every
   line its number and applies the same limits (line length, UTF-8, byte
   order mark) as ``chartscore score``, and the rows leave the task already
   checked and compactly pickled.
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
import signal
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import attrs

from chartscore.documents.report import Report
from chartscore.engine.partition import combine, finish, first_result, score_partition
from chartscore.engine.parts import Failure, PathSpec, part_paths, read_part
from chartscore.engine.quiet import NAMESPACES, SILENT
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.hints import explained
from chartscore.io.inputs import InputPath, is_gzip
from chartscore.io.schema_file import load_schema
from chartscore.io.strata_file import load_strata
from chartscore.records.match_engines import require_match_engines
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.plugin_guard import counting_ctrl_c
from chartscore.scoring.scorer import ExtraPredictions, check_options
from chartscore.stats.clustered import DEFAULT_CONFIDENCE, confidence_option

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
    confidence: float = DEFAULT_CONFIDENCE,
    strata: CaseStrata | InputPath | None = None,
) -> Report:
    """Score part files on Dask; the same report, byte for byte, as one process.

    The report equals :func:`chartscore.score_files` on the gold parts and the
    prediction parts each concatenated in sorted path order, whatever the
    partitioning, and a failure is the one that run would meet first, naming
    the input, the part number (1-based, in sorted path order) and the line:
    ``duplicate_gold_key (gold part 3 line 17)``.

    Args:
        gold: A glob pattern (``"lake/gold/part-*.jsonl"``) or a list of paths
            of gold JSON Lines part files; gzip files are decompressed
            (known by their first bytes, whatever their name).
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
        confidence: The level of every interval, as for :func:`chartscore.score`.
        strata: A strata file (or :class:`~chartscore.records.strata.CaseStrata`),
            as for :func:`chartscore.score_files`; every partition gets it.

    Returns:
        The value-free :class:`Report`.

    Raises:
        ChartscoreError: any code :func:`chartscore.score_files` raises,
            located by input, part and line; ``no_part_files``;
            ``engine_unavailable`` without the ``chartscore[dask]`` extra;
            ``engine_failed`` when the cluster cannot be reached or fails;
            ``usage`` for a scheduler, partition count or option that is not
            valid (options are read by exact type, as for
            :func:`chartscore.score`); ``invalid_path`` for a pattern or path
            that is not a ``str`` or ``os.PathLike``. Never with a
            ``__cause__`` or ``__context__``.
    """
    check_options(extra_predictions, strict_schema)
    confidence_option(confidence)
    if not _valid_scheduler(scheduler) or not _valid_partitions(partitions):
        raise ChartscoreError(ErrorCode.USAGE)
    gold_paths = part_paths(gold, InputKind.GOLD)
    prediction_paths = part_paths(predictions, InputKind.PREDICTIONS)
    if schema is not None and type(schema) is not Schema:
        schema = load_schema(schema)  # type: ignore[arg-type]
    require_match_engines(schema)  # here, not first on a worker
    if strata is not None and type(strata) is not CaseStrata:
        strata = load_strata(strata, schema)  # type: ignore[arg-type]
    plan = _Plan(
        gold=gold_paths,
        predictions=prediction_paths,
        schema=schema,
        strata=strata,
        partitions=partitions,
        extra_predictions=extra_predictions,
        strict_schema=strict_schema,
        confidence=confidence,
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
        raise _explained(outcome.error(), gold_paths, prediction_paths)
    return outcome


def _explained(
    error: ChartscoreError, gold: Sequence[str], predictions: Sequence[str]
) -> ChartscoreError:
    """``error`` with the hint one process gives (:func:`chartscore.io.hints.explained`).

    The failing part stands for its input; the other input's first part for that one
    (a swap or a misplaced file shows in every part alike).
    """
    inputs: list[tuple[str, InputKind]] = []
    for kind, paths in ((InputKind.GOLD, gold), (InputKind.PREDICTIONS, predictions)):
        part = error.part if error.input is kind and error.part is not None else 1
        inputs.append((paths[min(part, len(paths)) - 1], kind))
    return explained(error, inputs)


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


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _Plan:
    """What to run: the parts, the scoring options, and the graph builder."""

    gold: list[str]
    predictions: list[str]
    schema: Schema | None
    partitions: int | None
    extra_predictions: ExtraPredictions
    strict_schema: bool
    confidence: float = DEFAULT_CONFIDENCE
    strata: CaseStrata | None = None

    def partition_count(self, threads: int) -> int:
        """The given count, or one per worker thread and per 128 MiB of gold."""
        if self.partitions is not None:
            return self.partitions
        size = 0
        for path in self.gold:
            with contextlib.suppress(OSError):
                size += os.path.getsize(path) * (_GZIP_EXPANSION if is_gzip(path) else 1)
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
                self.strata,
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
            confidence=self.confidence,
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
            # Made and named with Ctrl-C held back, so that the cleanup below always knows it.
            with _ctrl_c_recorded() as ctrl_c:
                scratch = tempfile.mkdtemp(prefix="chartscore-dask-")
            if ctrl_c:
                raise KeyboardInterrupt
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

    The cluster starts in a thread of its own (:func:`_start_out_of_reach`), so
    Ctrl-C never reaches the worker processes and never cuts the start short:
    a signal that comes meanwhile is raised once the cluster is up and closed.

    Raises:
        ChartscoreError: ``engine_failed`` when the cluster does not start.
    """
    import dask
    from distributed import LocalCluster
    from distributed.security import Security

    security = Security.temporary()
    config = {**_LOCAL_CONFIG, "temporary-directory": scratch}
    started: list[Any] = []

    def start() -> None:
        with contextlib.suppress(Exception), dask.config.set(config):  # engine_failed, below
            started.append(
                LocalCluster(
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
            )

    sys.warnoptions.append("ignore")
    try:
        arrived = _start_out_of_reach(start)
    finally:
        sys.warnoptions.remove("ignore")
    cluster = started[0] if started else None
    if arrived is not None:  # Ctrl-C or a termination signal during the start
        _close(None, cluster, None)
        raise arrived
    if cluster is None:
        raise ChartscoreError(ErrorCode.ENGINE_FAILED)
    return cluster, security


def _start_out_of_reach(start: Callable[[], None]) -> BaseException | None:
    """Run ``start`` to its end in a new thread that SIGINT cannot reach; the signal that came.

    The thread blocks SIGINT, and the event loop thread it makes and every
    worker process started from there inherit the block, so Ctrl-C in a
    terminal (a SIGINT to the whole process group) stops only this process,
    which then closes the cluster: no worker is cut short mid-import to print
    a traceback, and no half-started cluster is left to distributed's exit
    hook. Meanwhile Ctrl-C is recorded, and returned as a KeyboardInterrupt
    (or what another signal handler raised) once the start has ended.
    """
    done = threading.Event()

    def shielded() -> None:
        try:
            _block_sigint()
            start()
        finally:
            done.set()

    thread = threading.Thread(target=shielded, name="chartscore-cluster-start", daemon=True)
    arrived: BaseException | None = None
    with _ctrl_c_recorded() as ctrl_c:
        try:
            thread.start()
        except BaseException as signalled:  # noqa: BLE001 - another signal's handler raised
            arrived = signalled
        # Wait on an event, never join(): an interrupted join() marks a live thread stopped.
        while thread.ident is not None and not done.is_set():
            try:
                done.wait()
            except BaseException as signalled:  # noqa: BLE001 - the same
                arrived = arrived or signalled
    if arrived is None and ctrl_c:
        arrived = KeyboardInterrupt()
    return arrived


@contextlib.contextmanager
def _ctrl_c_recorded() -> Iterator[list[int]]:
    """Inside, Ctrl-C is noted in the list instead of raising (main thread, default handler)."""
    came: list[int] = []
    # Python's own handler, or the command line's, which only counts Ctrl-C besides.
    default = signal.getsignal(signal.SIGINT) in (signal.default_int_handler, counting_ctrl_c)
    if threading.current_thread() is not threading.main_thread() or not default:
        yield came  # another thread, or the caller's own handler: left as it is
        return
    previous = signal.signal(signal.SIGINT, lambda number, frame: came.append(number))
    try:
        yield came
    finally:
        signal.signal(signal.SIGINT, previous)


def _block_sigint() -> None:
    """Block SIGINT in this thread for good, where the platform can."""
    if not hasattr(signal, "pthread_sigmask"):
        return
    from multiprocessing import resource_tracker

    # Starting multiprocessing's resource tracker unblocks SIGINT in the thread
    # that starts it: have it start here, before the block.
    with contextlib.suppress(Exception):
        resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _close(client: Any, cluster: Any, scratch: str | None) -> None:
    """Close the client and the local cluster and remove its directory; never raises."""
    for resource in (client, cluster):
        if resource is not None:
            with contextlib.suppress(Exception):
                resource.close()
    if scratch is None:
        return
    # A worker that outlived its close may still write there: try again, briefly.
    for _ in range(_REMOVAL_TRIES):
        shutil.rmtree(scratch, ignore_errors=True)
        if not os.path.lexists(scratch):
            return
        time.sleep(0.1)


_REMOVAL_TRIES: Final = 50


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
