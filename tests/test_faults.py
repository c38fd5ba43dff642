"""Faults, process by process: signals, a dead reader, FIFOs, odd outputs, closed streams.

Each test reproduces one case of docs/faults.md in a real process and checks how
it ends: the exit status, the one line on stderr, and what is left on disk and in
the process table. Nothing here is timed: tests wait for conditions (a process
appears, a pipe fills up) with generous limits, so a loaded machine only makes
them slower.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

import chartscore
from chartscore.errors import ErrorCode, describe
from chartscore.ledger import LedgerEntry
from ledger_data import Demo, make_demo

from helpers import thorough_only, write_jsonl

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process-level faults are checked on Linux"
)

LIMIT = 120.0  # seconds: only a broken run waits this long
SRC = str(Path(chartscore.__file__).resolve().parents[1])
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])),
}
INTERNAL = (
    f"chartscore: error: internal_error (predictions): {describe(ErrorCode.INTERNAL_ERROR)}\n"
)
INTERRUPTED = f"chartscore: error: interrupted: {describe(ErrorCode.INTERRUPTED)}\n"
UNWRITABLE = (
    f"chartscore: error: output_unwritable (output): {describe(ErrorCode.OUTPUT_UNWRITABLE)}\n"
)
_F_GETPIPE_SZ = 1032  # from <linux/fcntl.h>
# A system where the kernel cannot be asked to kill a child with its parent (simulated):
# each forked child then watches its parent itself.
_NO_KERNEL = (
    "from chartscore.processes import lifeline\nlifeline._parent_death_signal = lambda: False\n"
)

T = TypeVar("T")


# --- helpers ----------------------------------------------------------------------------


def wait_for(
    condition: Callable[[], T | None],
    what: str,
    limit: float = LIMIT,
    alive: subprocess.Popen[bytes] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy (while ``alive`` runs)."""
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and alive.poll() is not None:
            _, err = alive.communicate()
            pytest.fail(f"the process ended while waiting for {what}: {err[-300:]!r}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def chartscore_process(
    args: Sequence[str],
    *,
    stdin: int | None = subprocess.PIPE,
    stdout: int | None = subprocess.PIPE,
    python: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *python, "-m", "chartscore", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=ENV if env is None else env,
        start_new_session=True,  # a process group of its own, as a terminal would make
        preexec_fn=_default_signals,  # noqa: PLW1509 - signal dispositions only, no locks taken
    )


def _default_signals() -> None:
    """Start the run with the signal dispositions a terminal gives, whatever this runner inherited.

    Under ``nohup`` (or a background job of a script) SIGHUP or SIGINT arrive ignored, and the
    run rightly keeps them ignored, so the signal tests would test the runner's set-up instead.
    """
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def finish(
    process: subprocess.Popen[bytes], stdin: bytes | None = None
) -> tuple[int, bytes, bytes]:
    try:
        out, err = process.communicate(stdin, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the run did not end")
    return process.returncode, out, err


def run_chartscore(args: Sequence[str], **options: object) -> tuple[int, bytes, bytes]:
    stdin = options.pop("input", None)
    process = chartscore_process(args, **options)  # type: ignore[arg-type]
    return finish(process, stdin)  # type: ignore[arg-type]


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry))
    return found


def state(pid: int) -> str | None:
    """The process's state letter, or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def is_dead(pid: int) -> bool:
    return state(pid) in (None, "Z", "X")


def pipes(pid: int) -> dict[int, tuple[str, int]]:
    """Descriptor -> (pipe inode, access mode) for each pipe the process holds."""
    found = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{name}")
            if link.startswith("pipe:"):
                info = Path(f"/proc/{pid}/fdinfo/{name}").read_text()
                flags = int(info.split("flags:")[1].split()[0], 8)
                found[int(name)] = (link, flags & os.O_ACCMODE)
    return found


def reader_pipe(main: int, reader: int) -> tuple[int, str] | None:
    """The main process's descriptor of the pipe it shares with the reader.

    Not one of the run's standard streams (this process holds their other ends): the
    main process writes through copies of stdout and stderr, which a reader just
    forked holds until it closes every descriptor it inherited.
    """
    ours = {link for link, _ in pipes(os.getpid()).values()}
    theirs = {link for fd, (link, _) in pipes(reader).items() if fd > 2} - ours
    for fd, (link, _) in pipes(main).items():
        if fd > 2 and link in theirs:
            return fd, link
    return None


def bytes_in_pipe(main: int, fd: int) -> tuple[int, int]:
    """(bytes waiting, capacity) of a pipe the main process holds."""
    probe = os.open(f"/proc/{main}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    try:
        waiting = bytearray(4)
        fcntl.ioctl(probe, termios.FIONREAD, waiting)
        capacity = fcntl.fcntl(probe, _F_GETPIPE_SZ)
        return int.from_bytes(waiting, sys.byteorder), capacity
    finally:
        os.close(probe)


def pipe_is_full(main: int, fd: int) -> bool:
    waiting, capacity = bytes_in_pipe(main, fd)
    return waiting == capacity


def gold_rows(cases: int, fields: int = 1) -> list[dict[str, object]]:
    return [
        {"case_id": f"c{i}", "field_id": f"f.x{j}", "field_type": "text", "value": "v"}
        for i in range(cases)
        for j in range(fields)
    ]


@pytest.fixture
def big_predictions(tmp_path: Path) -> Path:
    """About 1.3 MiB of predictions: several batches, each pickled to more than 64 KiB."""
    return write_jsonl(
        tmp_path / "predictions.jsonl",
        [{"case_id": f"c{i}", "field_id": "f.x0", "value": "V"} for i in range(25_000)],
    )


@contextlib.contextmanager
def reader_blocked_mid_message(predictions: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A run whose gold (stdin) is still loading and whose reader is stuck mid-message.

    The reader has filled the pipe to capacity with a message longer than the
    pipe, so it is blocked halfway through writing it: the case that used to
    hang forever when the reader died.
    """
    process = chartscore_process(
        ["score", "--gold", "-", "--predictions", str(predictions), "--jobs", "2", "--quiet"]
    )
    try:
        reader = wait_for(lambda: children(process.pid), "the reader process", alive=process)[0]
        fd, _ = wait_for(lambda: reader_pipe(process.pid, reader), "its pipe", alive=process)
        wait_for(lambda: pipe_is_full(process.pid, fd), "a full pipe", alive=process)
        yield process, reader
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            process.communicate(timeout=LIMIT)


GOLD_TEXT = "".join(json.dumps(row) + "\n" for row in gold_rows(25_000)).encode()


# --- the reader process (8.1) -----------------------------------------------------------


def test_each_process_keeps_only_its_own_end_of_the_pipe(big_predictions: Path) -> None:
    with reader_blocked_mid_message(big_predictions) as (process, reader):
        _, link = reader_pipe(process.pid, reader) or (0, "")
        main_ends = [mode for link_, mode in pipes(process.pid).values() if link_ == link]
        reader_ends = [mode for link_, mode in pipes(reader).values() if link_ == link]
        assert main_ends == [os.O_RDONLY]  # the main process holds no write end
        assert reader_ends == [os.O_WRONLY]  # the reader holds no read end
        # The reader's stdout and stderr go nowhere.
        for descriptor in (1, 2):
            assert os.readlink(f"/proc/{reader}/fd/{descriptor}") == os.devnull


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_reader_killed_while_gold_loads_is_an_internal_error(
    big_predictions: Path, how: signal.Signals
) -> None:
    with reader_blocked_mid_message(big_predictions) as (process, reader):
        os.kill(reader, how)
        status, out, err = finish(process, GOLD_TEXT)
    assert (status, out, err) == (70, b"", INTERNAL.encode())
    assert is_dead(reader)


def test_the_reader_leaves_ctrl_c_to_the_main_process(big_predictions: Path) -> None:
    # A SIGINT that reaches the reader alone changes nothing: the main process owns Ctrl-C.
    with reader_blocked_mid_message(big_predictions) as (process, reader):
        os.kill(reader, signal.SIGINT)
        status, out, err = finish(process, GOLD_TEXT)
    assert (status, err) == (0, b"")
    assert json.loads(out)["overall"]["field_count"] == 25_000


def test_a_killed_main_process_takes_the_reader_with_it(big_predictions: Path) -> None:
    # The reader is blocked writing: the main process's death closes the pipe (EPIPE).
    with reader_blocked_mid_message(big_predictions) as (process, reader):
        os.kill(process.pid, signal.SIGKILL)
        wait_for(lambda: is_dead(reader), "the reader to die with its parent")


@pytest.mark.parametrize("watch", ["kernel", "watchdog"])
def test_a_reader_waiting_for_input_dies_with_the_main_process(tmp_path: Path, watch: str) -> None:
    # The reader is blocked reading standard input, which never ends: only the
    # kernel's parent-death signal (Linux) or the watchdog thread (elsewhere) can end it.
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(2))
    setup = "" if watch == "kernel" else _NO_KERNEL
    script = f"from chartscore.io import parallel\n{setup}from chartscore.cli import run\nrun()\n"
    args = ["score", "--gold", str(gold), "--predictions", "-", "--jobs", "2", "--quiet"]
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    try:
        reader = wait_for(lambda: children(process.pid), "the reader process", alive=process)[0]
        wait_for(lambda: state(reader) == "S", "the reader to wait for input", alive=process)
        os.kill(process.pid, signal.SIGKILL)
        wait_for(lambda: is_dead(reader), "the reader to die with its parent")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=LIMIT)


# Every place chartscore forks, each made to spin for ever in the child (and the parent):
# the smallest code path to each fork, with a question or task that never ends.
_SPIN = "def spin(*_):\n    while True:\n        pass\n"
_FORK_SITES = {
    "split": (  # the disclosure engine's second core: a solver child mid-solve
        "from chartscore.disclosure import split\n"
        "split.answers(spin, list(range(split.MIN_QUESTIONS)), worth=True)\n"
    ),
    "batch": "from chartscore.workflows import forked\nforked.run_tasks([spin, spin], 2)\n",
    "orders": (  # a publication's orders, one per core
        "import os\nos.cpu_count = lambda: 2\n"
        "from chartscore.workflows import orders\norders.each_order([spin, spin])\n"
    ),
}


@pytest.mark.parametrize(
    ("site", "watch"),
    [("split", "kernel"), ("split", "watchdog"), ("batch", "kernel"), ("orders", "kernel")],
)
def test_a_forked_child_dies_with_its_killed_parent(site: str, watch: str) -> None:
    # A stratified share killed by a scheduler's time limit (SIGKILL) left its solver child
    # spinning at 99% CPU for ever. "watchdog" simulates a system where the kernel cannot be
    # asked, so the child's own check of its parent must end it.
    setup = "" if watch == "kernel" else _NO_KERNEL
    process = subprocess.Popen(
        [sys.executable, "-c", _SPIN + setup + _FORK_SITES[site]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    try:
        child = wait_for(lambda: children(process.pid), "the forked child", alive=process)[0]
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=LIMIT) == -signal.SIGKILL
        wait_for(lambda: is_dead(child), "the child to die with its parent", limit=20.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what a failing run left spinning
        process.communicate(timeout=LIMIT)


def test_a_child_whose_parent_died_before_it_asked_the_kernel_exits() -> None:
    # The kernel's parent-death signal covers only a death after the request: a parent
    # killed between fork and the request leaves the child to init. The child here makes
    # its request only once its parent is gone (its pipe's write end closed), so only the
    # re-check of its parent's id can end it.
    script = (
        "import os\n"
        "from chartscore.processes.lifeline import before_fork, die_with_parent\n"
        "read, write = os.pipe()\n"
        "parent = before_fork()\n"
        "if os.fork() == 0:\n"
        "    os.close(write)\n"
        "    os.read(read, 1)  # end of file: the parent is gone\n"
        "    die_with_parent(parent)\n"
        "    while True:\n"
        "        pass\n"
        "os.close(read)\n"
        "while True:\n"
        "    pass\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    try:
        child = wait_for(lambda: children(process.pid), "the forked child", alive=process)[0]
        os.kill(process.pid, signal.SIGKILL)
        wait_for(lambda: is_dead(child), "the orphaned child to exit", limit=20.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=LIMIT)


@pytest.mark.parametrize(
    ("how", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
def test_a_signal_to_the_run_stops_both_processes(
    big_predictions: Path, how: signal.Signals, status: int
) -> None:
    with reader_blocked_mid_message(big_predictions) as (process, reader):
        # Ctrl-C reaches the whole foreground process group; SIGTERM the main process only.
        if how == signal.SIGINT:
            os.killpg(process.pid, how)
        else:
            os.kill(process.pid, how)
        result = finish(process)
        assert result == (status, b"", INTERRUPTED.encode())
        assert state(reader) is None  # stopped and reaped by the main process


def test_a_reader_that_cannot_start_leaves_one_process(tmp_path: Path) -> None:
    # /dev/shm is not needed any more; a fork that fails falls back to one process.
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(3))
    predictions = write_jsonl(
        tmp_path / "p.jsonl", [{"case_id": "c1", "field_id": "f.x0", "value": "v"}]
    )
    script = (
        "import os, sys\n"
        "def no_fork():\n"
        "    raise BlockingIOError(11, 'Resource temporarily unavailable')\n"
        "os.fork = no_fork\n"
        "from chartscore.cli import run\n"
        "run()\n"
    )
    args = ["score", "--gold", str(gold), "--predictions", str(predictions), "--jobs", "2"]
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        env=ENV,
        timeout=LIMIT,
        check=False,
    )
    expected = run_chartscore([*args[:-1], "1"])
    assert (result.returncode, result.stdout, result.stderr) == expected
    assert expected[0] == 0


def test_no_shared_memory_is_needed(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare")
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(3))
    predictions = write_jsonl(
        tmp_path / "p.jsonl", [{"case_id": "c1", "field_id": "f.x0", "value": "v"}]
    )
    args = ["score", "--gold", str(gold), "--predictions", str(predictions), "--jobs", "2"]
    command = 'mount -t tmpfs -o ro,size=4k tmpfs /dev/shm || exit 99; exec "$@"'
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            command,
            "sh",
            sys.executable,
            "-m",
            "chartscore",
            *args,
        ],
        capture_output=True,
        env=ENV,
        timeout=LIMIT,
        check=False,
    )
    if result.returncode == 99 or b"unshare" in result.stderr:
        pytest.skip("cannot make a private mount namespace here")
    assert (result.returncode, result.stdout, result.stderr) == run_chartscore(args)


# --- Ctrl-C while Python imports chartscore -----------------------------------------------


def test_ctrl_c_during_start_up_imports_prints_one_line(tmp_path: Path) -> None:
    # A stand-in "attrs" that blocks the import until the test interrupts it.
    shadow = tmp_path / "shadow"
    (shadow / "attrs").mkdir(parents=True)
    ready = tmp_path / "importing"
    (shadow / "attrs" / "__init__.py").write_text(
        f"import pathlib, time\npathlib.Path({str(ready)!r}).touch()\ntime.sleep({LIMIT})\n"
    )
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(shadow), ENV["PYTHONPATH"]])}
    process = subprocess.Popen(
        [sys.executable, "-c", "import _chartscore_launcher as l; l.run()", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    wait_for(ready.exists, "the import to start", alive=process)
    os.killpg(process.pid, signal.SIGINT)
    assert finish(process) == (130, b"", INTERRUPTED.encode())


# --- inputs that would block (8.2) ------------------------------------------------------


@pytest.mark.parametrize(
    ("which", "jobs"), [("gold", "1"), ("predictions", "1"), ("predictions", "2"), ("schema", "2")]
)
def test_a_fifo_or_device_is_refused_without_waiting(tmp_path: Path, which: str, jobs: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody ever writes to it
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(2))
    predictions = write_jsonl(tmp_path / "p.jsonl", [])
    for odd in (fifo, Path("/dev/zero"), tmp_path):
        paths = {"gold": str(gold), "predictions": str(predictions), "schema": None}
        paths[which] = str(odd)
        args = [
            "score",
            "--gold",
            paths["gold"],
            "--predictions",
            paths["predictions"],
            "--jobs",
            jobs,
        ]
        if paths["schema"] is not None:
            args += ["--schema", paths["schema"]]
        status, out, err = run_chartscore(args, stdin=subprocess.DEVNULL)
        message = f"file_unreadable ({which}): {describe(ErrorCode.FILE_UNREADABLE)}"
        assert (status, out, err) == (1, b"", f"chartscore: error: {message}\n".encode()), odd
    assert stat.S_ISFIFO(fifo.stat().st_mode)


# --- the output channel (8.3) ------------------------------------------------------------


@pytest.fixture
def large_run(tmp_path: Path) -> list[str]:
    """Arguments of a run whose report (about 280 KB) is larger than any pipe buffer."""
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(2, fields=400))
    predictions = write_jsonl(tmp_path / "p.jsonl", [])
    return ["score", "--gold", str(gold), "--predictions", str(predictions), "--quiet"]


def shell(command: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    result = subprocess.run(
        ["sh", "-c", command, "sh", *args],
        capture_output=True,
        env=ENV if env is None else env,
        timeout=LIMIT,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("python", [[], ["-u"]])
def test_a_reader_that_goes_away_is_unwritable_output(
    large_run: list[str], python: list[str]
) -> None:
    # "chartscore ... | head -c1": the pipe closes after one byte.
    process = chartscore_process(large_run, stdin=subprocess.DEVNULL, python=python)
    assert process.stdout is not None
    assert process.stdout.read(1) == b"{"
    process.stdout.close()
    assert process.wait(timeout=LIMIT) == 1
    assert process.stderr is not None and process.stderr.read() == UNWRITABLE.encode()


@pytest.mark.parametrize("python", ["", "-u"])
@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"])
def test_full_or_closed_stdout_is_unwritable_output(
    large_run: list[str], tmp_path: Path, python: str, redirect: str
) -> None:
    small = write_jsonl(tmp_path / "small.jsonl", gold_rows(1))
    empty = write_jsonl(tmp_path / "empty.jsonl", [])
    for args in (
        large_run,
        ["score", "--gold", str(small), "--predictions", str(empty), "--quiet"],
    ):
        status, out, err = shell(
            f'exec "$@" {redirect}',
            sys.executable,
            *filter(None, [python]),
            "-m",
            "chartscore",
            *args,
        )
        assert (status, out, err) == (1, b"", UNWRITABLE.encode()), (redirect, python)


def test_a_full_disk_is_unwritable_output_and_leaves_nothing(
    large_run: list[str], tmp_path: Path
) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare")
    disk = tmp_path / "disk"
    disk.mkdir()
    # On a 32 KiB file system, in a private mount namespace: --out, then stdout
    # redirected to a file (buffered, then unbuffered with -u); then list what is left.
    script = (
        'd="$1"; py="$2"; shift 2; mount -t tmpfs -o size=32k tmpfs "$d" || exit 99; '
        '"$py" -m chartscore "$@" --out "$d/report.json"; a=$?; '
        '"$py" -m chartscore "$@" > "$d/stdout.json"; b=$?; rm -f "$d/stdout.json"; '
        '"$py" -u -m chartscore "$@" > "$d/stdout.json"; c=$?; rm -f "$d/stdout.json"; '
        'echo "$a $b $c"; ls -A "$d"'
    )
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    result = subprocess.run(
        [*command, str(disk), sys.executable, *large_run],
        capture_output=True,
        env=ENV,
        timeout=LIMIT,
        check=False,
    )
    if result.returncode == 99 or b"unshare" in result.stderr:
        pytest.skip("cannot mount a small file system here")
    assert result.stdout == b"1 1 1\n"  # three failures, and an empty listing
    assert result.stderr == UNWRITABLE.encode() * 3
    assert list(disk.iterdir()) == []


def test_a_full_disk_leaves_the_ledger_as_it_was(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare")
    demo = make_demo(tmp_path / "demo")
    disk = tmp_path / "disk"
    disk.mkdir()
    copy = tmp_path / "ledger-copy.jsonl"
    # A 64 KiB file system holds one ledger line of the demo (42 kB), not two: the second
    # append, and a first one to a new ledger, meet a full disk part way.
    script = (
        'd="$1"; py="$2"; copy="$3"; shift 3; mount -t tmpfs -o size=64k tmpfs "$d" || exit 99; '
        '"$py" -m chartscore "$@" --ledger "$d/l.jsonl" > /dev/null; a=$?; '
        '"$py" -m chartscore "$@" --ledger "$d/l.jsonl" > /dev/null; b=$?; '
        '"$py" -m chartscore "$@" --ledger "$d/new.jsonl" > /dev/null; c=$?; '
        'cat "$d/l.jsonl" > "$copy"; echo "$a $b $c"; wc -c < "$d/new.jsonl"'
    )
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    args = ["score", "--gold", str(demo.gold), "--predictions", str(demo.run("model-v1")),
            "--schema", str(demo.schema), "--ledger-key", str(demo.key)]  # fmt: skip
    result = subprocess.run(
        [*command, str(disk), sys.executable, str(copy), *args],
        capture_output=True,
        env=ENV,
        timeout=LIMIT,
        check=False,
    )
    if result.returncode == 99 or b"unshare" in result.stderr:
        pytest.skip("cannot mount a small file system here")
    assert result.stdout == b"0 1 1\n0\n"  # the new ledger is left empty
    unwritable = (
        f"chartscore: error: ledger_unwritable (ledger): {describe(ErrorCode.LEDGER_UNWRITABLE)}\n"
    )
    assert (
        result.stderr
        == ("chartscore: ledger: score run model-v1 recorded\n" + unwritable * 2).encode()
    )
    (line,) = copy.read_bytes().splitlines(keepends=True)  # one whole line, nothing cut
    assert line.endswith(b"\n")


def test_a_closed_stderr_never_stops_the_work(large_run: list[str], tmp_path: Path) -> None:
    expected = run_chartscore(large_run)
    assert expected[0] == 0
    without_quiet = [arg for arg in large_run if arg != "--quiet"]
    status, out, _ = shell('exec "$@" 2>&-', sys.executable, "-m", "chartscore", *without_quiet)
    assert (status, out) == (0, expected[1])
    missing = str(tmp_path / "missing.jsonl")
    status, out, _ = shell(
        'exec "$@" 2>&-',
        sys.executable,
        "-m",
        "chartscore",
        "score",
        "--gold",
        missing,
        "--predictions",
        missing,
    )
    assert (status, out) == (1, b"")


@pytest.mark.parametrize("closed", ["2>&-", ">&-", "<&-", "<&- >&- 2>&-"])
def test_closed_standard_descriptors_lose_no_prediction_on_two_processes(
    tmp_path: Path, closed: str
) -> None:
    # With 1 or 2 closed, the null device once took its number and was closed again: the
    # predictions file or the reader's pipe then took it, and the forked reader pointed
    # it at /dev/null. The report was that of an empty predictions file, with exit 0.
    demo = make_demo(tmp_path / "demo")
    args = ["--gold", str(demo.gold), "--predictions", str(demo.run("model-v1"))]
    args += ["--schema", str(demo.schema), "--jobs", "2", "--quiet"]
    for command in ("score", "share") if ">&-" in closed else ("score",):  # share: HiGHS
        expected = tmp_path / f"{command}-open.json"
        assert run_chartscore([command, *args, "--out", str(expected)])[0] == 0
        got = tmp_path / f"{command}-closed.json"
        status, _, _ = shell(
            f'exec "$@" {closed}',
            sys.executable,
            "-m",
            "chartscore",
            command,
            *args,
            "--out",
            str(got),
        )
        assert status == 0, command
        assert got.read_bytes() == expected.read_bytes(), command
    report = json.loads((tmp_path / "score-open.json").read_bytes())
    assert report["overall"]["answered_count"] > 0  # the run compared had predictions


def test_the_report_bytes_do_not_depend_on_the_stream_encoding(large_run: list[str]) -> None:
    expected = run_chartscore(large_run)
    for encoding in ("utf-16", "ascii"):
        env = {**ENV, "PYTHONIOENCODING": encoding}
        assert run_chartscore(large_run, env=env) == expected, encoding


# --- odd --out targets (8.4) and inputs as outputs (7.1) ---------------------------------------


@thorough_only("many command runs (about 5 s)")
def test_odd_output_targets_are_refused(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(1))
    empty = write_jsonl(tmp_path / "p.jsonl", [])
    link_to_null = tmp_path / "null-link"
    link_to_null.symlink_to(os.devnull)
    report = tmp_path / "report.json"
    report.write_bytes(b"a report\n")
    link_to_report = tmp_path / "report-link"
    link_to_report.symlink_to(report)
    args = ["score", "--gold", str(gold), "--predictions", str(empty), "--out"]
    # Each kind once in a real process (test_output.py tries many more in process).
    for target in (
        os.devnull,
        str(link_to_null),
        "/dev/stdout",
        str(link_to_report),
        str(tmp_path / "missing") + "/",
    ):
        status, out, err = run_chartscore([*args, target], stdin=subprocess.DEVNULL)
        assert (status, out, err) == (1, b"", UNWRITABLE.encode()), target
    # /dev/stdout is refused even when stdout is a regular file.
    with (tmp_path / "stdout.txt").open("wb") as stdout:
        status, _, err = run_chartscore([*args, "/dev/stdout"], stdout=stdout.fileno())
    assert (status, err) == (1, UNWRITABLE.encode())
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert link_to_null.is_symlink() and os.readlink(link_to_null) == os.devnull
    assert link_to_report.is_symlink() and report.read_bytes() == b"a report\n"
    assert not (tmp_path / "missing").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".chartscore-")] == []


def test_an_input_on_standard_input_is_not_overwritten(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(2))
    empty = write_jsonl(tmp_path / "p.jsonl", [])
    before = gold.read_bytes()
    with gold.open("rb") as stdin:
        status, out, err = run_chartscore(
            ["score", "--gold", "-", "--predictions", str(empty), "--out", str(gold)],
            stdin=stdin.fileno(),
        )
    message = f"output_is_input (output): {describe(ErrorCode.OUTPUT_IS_INPUT)}"
    assert (status, out, err) == (1, b"", f"chartscore: error: {message}\n".encode())
    assert gold.read_bytes() == before


@pytest.mark.parametrize(("how", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_atomic_write_removes_the_temporary_file(
    tmp_path: Path, how: signal.Signals, status: int
) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows(2))
    empty = write_jsonl(tmp_path / "p.jsonl", [])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "report.json"
    target.write_bytes(b"previous report\n")
    ready = tmp_path / "writing"
    script = (
        "import os, pathlib, sys, time\n"
        "def stalled_fsync(descriptor):\n"
        f"    pathlib.Path({str(ready)!r}).touch()\n"
        f"    time.sleep({LIMIT})\n"
        "os.fsync = stalled_fsync\n"
        "from chartscore.cli import run\n"
        "run()\n"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            "score",
            "--gold",
            str(gold),
            "--predictions",
            str(empty),
            "--out",
            str(target),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    wait_for(ready.exists, "the report's temporary file to be written", alive=process)
    assert [p.name for p in out_dir.iterdir() if p.name.startswith(".chartscore-")] != []
    os.killpg(process.pid, how)
    assert finish(process) == (status, b"", INTERRUPTED.encode())
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.json"]
    assert target.read_bytes() == b"previous report\n"


# --- the ledger and batch ------------------------------------------------------------------


def _batch_process(demo: Demo, script: str = "") -> subprocess.Popen[bytes]:
    """``chartscore batch`` on the demo's three runs, one process, after ``script`` runs."""
    args = ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*.jsonl"),
            "--schema", str(demo.schema), "--ledger", str(demo.ledger), "--ledger-key",
            str(demo.key), "--baseline", "model-v1", "--jobs", "1"]  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-c", f"{script}\nfrom chartscore.cli import run\nrun()\n", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
        preexec_fn=_default_signals,  # noqa: PLW1509 - signal dispositions only
    )


def _waiting_for_lock(pid: int) -> bool:
    """Whether ``pid`` waits for a lock (a blocked waiter is listed with ``->``)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and fields[fields.index("->") + 4] == str(pid):
            return True
    return False


@pytest.mark.parametrize(("how", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_batch_stopped_while_it_appends_records_every_run_and_says_so(
    tmp_path: Path, how: signal.Signals, status: int
) -> None:
    # It appended line by line: a signal between two lines left 41-44 of 399 recorded, and
    # said nothing of it. The lines now go in one locked write, the signal held back until
    # they are synced.
    demo = make_demo(tmp_path / "demo")
    ready, go = tmp_path / "syncing", tmp_path / "go"
    script = (
        "import os, pathlib, time\n"
        "real_fsync, calls = os.fsync, []\n"
        "def held_fsync(descriptor):\n"
        "    calls.append(descriptor)\n"
        "    if len(calls) == 1:\n"
        f"        pathlib.Path({str(ready)!r}).touch()\n"
        f"        while not pathlib.Path({str(go)!r}).exists():\n"
        "            time.sleep(0.01)\n"
        "    real_fsync(descriptor)\n"
        "os.fsync = held_fsync\n"
    )
    process = _batch_process(demo, script)
    wait_for(ready.exists, "the batch to sync its first ledger line", alive=process)
    os.killpg(process.pid, how)
    go.touch()
    code, out, err = finish(process)
    assert (code, out) == (status, b"")
    assert err.decode() == (
        "chartscore: batch stopped after appending its 4 ledger lines: every run was recorded\n"
        + INTERRUPTED
    )
    recorded = [
        LedgerEntry.from_line(line).run_id for line in demo.ledger.read_bytes().splitlines()
    ]
    assert recorded == ["broken", "model-v1", "model-v2", "model-v2.vs.model-v1"]


def test_a_batch_stopped_before_it_appends_records_nothing_and_says_so(tmp_path: Path) -> None:
    demo = make_demo(tmp_path / "demo")
    demo.ledger.touch(mode=0o600)
    with demo.ledger.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another process appending, for ever
        process = _batch_process(demo)
        wait_for(
            lambda: _waiting_for_lock(process.pid), "the batch to wait for the lock", alive=process
        )
        os.killpg(process.pid, signal.SIGINT)
        code, out, err = finish(process)
    assert (code, out) == (130, b"")
    assert err.decode() == (
        "chartscore: batch stopped before appending its ledger lines: no run was recorded\n"
        + INTERRUPTED
    )
    assert demo.ledger.read_bytes() == b""


def test_the_fault_page_names_tests_that_exist() -> None:
    # docs/faults.md is the list of what was tried: every test it names must exist.
    root = Path(__file__).resolve().parent
    page = (root.parent / "docs" / "faults.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(?:(test_\w+)\.py::)?(test_\w+)(?:\[[^\]]*\])?`", page))
    assert len(named) > 20
    for module, test in named:
        source = (root / f"{module or 'test_faults'}.py").read_text(encoding="utf-8")
        assert f"def {test}(" in source, (module, test)


def test_exceptions_python_can_only_report_are_not_printed() -> None:
    # A half-made Dask client's finalizer raised at exit (an unreachable tls:// scheduler):
    # Python printed "Exception ignored in ..." with a traceback after chartscore's one line.
    code = (
        "import threading\n"
        "import chartscore.cli as cli\n"
        "class Finalizer:\n"
        "    def __del__(self):\n"
        "        raise ValueError('ZZCANARY in a finalizer')\n"
        "def command(argv=None, stdout=None, stderr=None):\n"
        "    Finalizer()\n"
        "    thread = threading.Thread(target=lambda: {}['ZZCANARY in a thread'])\n"
        "    thread.start()\n"
        "    thread.join()\n"
        "    return 0\n"
        "cli.main = command\n"
        "cli.run()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=ENV, timeout=LIMIT, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
