"""The one output route: inputs are never overwritten, odd targets refused, every byte checked.

docs/cli.md ("Outputs") states the rules; test_faults.py checks the same in real
processes (closed stdout, /dev/full, a full disk, signals during the write).
"""

from __future__ import annotations

import io
import os
import stat
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError
from chartscore.io import STDIN, check_output, write_atomic, write_output
from chartscore.io import output as output_module
from chartscore.io.output import write_all

from helpers import examples

REPORT = b'{"format":"chartscore.report"}\n'


def error_of(function: object, *args: object, **kwargs: object) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as caught:
        function(*args, **kwargs)  # type: ignore[operator]
    error = caught.value
    assert error.__cause__ is None and error.__context__ is None
    return error


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    paths = []
    for name in ("gold.jsonl", "predictions.jsonl", "schema.json"):
        path = tmp_path / name
        path.write_bytes(f"the {name} content\n".encode())
        paths.append(path)
    return paths[0], paths[1], paths[2]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".chartscore-"))


# --- never overwrite an input (7.1) ---------------------------------------------------------


def test_an_input_by_any_name_is_refused(
    inputs: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, predictions, schema = inputs
    symlink = tmp_path / "link-to-gold"
    symlink.symlink_to(gold)
    hard_link = tmp_path / "hard-link-to-predictions"
    os.link(predictions, hard_link)
    monkeypatch.chdir(tmp_path)
    relative = Path("subdir", "..", "schema.json")
    (tmp_path / "subdir").mkdir()
    for target in (gold, str(gold), predictions, schema, symlink, hard_link, relative):
        error = error_of(write_output, REPORT, target, inputs=(gold, predictions, schema))
        assert str(error) == "output_is_input (output)"
    for path, name in zip(inputs, ("gold.jsonl", "predictions.jsonl", "schema.json"), strict=True):
        assert path.read_bytes() == f"the {name} content\n".encode()
    assert leftovers(tmp_path) == []


def test_absent_inputs_and_other_files_are_fine(
    inputs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    gold, predictions, _ = inputs
    target = tmp_path / "report.json"
    write_output(REPORT, target, inputs=(gold, predictions, None, STDIN))
    assert target.read_bytes() == REPORT
    write_output(REPORT + REPORT, target, inputs=(gold, tmp_path / "missing.jsonl"))
    assert target.read_bytes() == REPORT + REPORT  # an existing report is replaced
    assert leftovers(tmp_path) == []


# --- odd targets (8.4) ----------------------------------------------------------------------


def test_odd_targets_are_unwritable(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_bytes(b"old\n")
    link = tmp_path / "link.json"
    link.symlink_to(report)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (
        os.devnull,
        "/dev/stdout",
        link,
        dangling,
        fifo,
        tmp_path,
        f"{tmp_path}{os.sep}",
        f"{tmp_path / 'missing'}{os.sep}",
        f"{tmp_path / 'missing'}{os.sep}.",  # as a string: pathlib would drop the "."
        f"{tmp_path / 'missing'}{os.sep}..",
        "",
        f"{report}\0x",
    ):
        error = error_of(write_output, REPORT, target, inputs=())
        assert str(error) == "output_unwritable (output)", target
    # A missing folder is said to be missing (the path is never shown), however it is written.
    for target in (tmp_path / "no-such-directory" / "report.json", report / "report.json"):
        for write in (
            lambda target: write_output(REPORT, target, inputs=()),
            lambda target: write_atomic(target, REPORT),
        ):
            error = error_of(write, target)
            assert str(error) == "output_unwritable (output; the output folder does not exist)"
            assert error.hint == "the output folder does not exist"
    assert report.read_bytes() == b"old\n" and link.is_symlink() and dangling.is_symlink()
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert not (tmp_path / "missing").exists() and not (tmp_path / "nowhere.json").exists()
    assert leftovers(tmp_path) == []


class ExplodingPath:
    def __fspath__(self) -> str:
        raise RuntimeError("MRN123")


def test_a_target_that_is_not_a_path_is_invalid() -> None:
    for target in (ExplodingPath(), b"report.json", 1, STDIN):
        error = error_of(check_output, target, inputs=())
        assert str(error) == "invalid_path (output)"


# --- atomic writes -------------------------------------------------------------------------


def test_the_file_is_complete_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    umask = os.umask(0o027)
    try:
        write_output(REPORT, target, inputs=())
    finally:
        os.umask(umask)
    assert target.read_bytes() == REPORT
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, SystemExit, OSError])
def test_a_failure_during_the_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interruption: type[BaseException]
) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b"old\n")

    def fail(descriptor: int) -> None:
        raise interruption

    monkeypatch.setattr(output_module.os, "fsync", fail)
    if interruption is OSError:
        assert str(error_of(write_atomic, target, REPORT)) == "output_unwritable (output)"
    else:
        with pytest.raises(interruption):
            write_atomic(target, REPORT)
    assert target.read_bytes() == b"old\n"
    assert leftovers(tmp_path) == []


# --- checked writes to a stream (8.3) ---------------------------------------------------------


class ShortWrites:
    """A stream that takes at most ``most`` bytes a call, like an unbuffered pipe."""

    def __init__(self, most: int, fail_after: int | None = None) -> None:
        self.most = most
        self.fail_after = fail_after
        self.data = bytearray()
        self.flushed = False

    def write(self, data: memoryview) -> int:
        if self.fail_after is not None and len(self.data) >= self.fail_after:
            raise BrokenPipeError(32, "Broken pipe")
        taken = bytes(data[: self.most])
        self.data += taken
        return len(taken)

    def flush(self) -> None:
        self.flushed = True


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=2000), st.integers(1, 300))
def test_short_writes_are_retried_until_every_byte_is_written(data: bytes, most: int) -> None:
    stream = ShortWrites(most)
    write_all(stream, data)
    assert bytes(stream.data) == data and stream.flushed


def test_a_failure_part_way_is_unwritable_never_silent() -> None:
    stream = ShortWrites(10, fail_after=30)
    assert str(error_of(write_all, stream, REPORT * 3)) == "output_unwritable (output)"
    assert len(stream.data) == 30


class Refusing:
    def __init__(self, result: object = None, flush_error: BaseException | None = None) -> None:
        self.result = result
        self.flush_error = flush_error

    def write(self, data: memoryview) -> object:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    def flush(self) -> None:
        if self.flush_error is not None:
            raise self.flush_error


@pytest.mark.parametrize(
    "stream",
    [
        Refusing(0),  # takes nothing and does not say why
        Refusing(-1),
        Refusing(OSError(28, "No space left on device")),
        Refusing(ValueError("I/O operation on closed file.")),
        Refusing(len(REPORT), OSError(28, "No space left on device")),  # buffered disk full
        Refusing(len(REPORT), BrokenPipeError(32, "Broken pipe")),
    ],
)
def test_every_write_and_flush_is_checked(stream: Refusing) -> None:
    assert str(error_of(write_all, stream, REPORT)) == "output_unwritable (output)"


def test_a_full_non_blocking_stream_is_waited_for() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    data = os.urandom(300_000)  # more than a pipe holds
    received = bytearray()
    import threading

    def drain() -> None:
        while chunk := os.read(read_end, 65536):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    with os.fdopen(write_end, "wb", buffering=0) as stream:
        write_all(stream, data)
    reader.join(timeout=60)
    os.close(read_end)
    assert bytes(received) == data


def test_stdout_gets_bytes_whatever_its_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buffer = io.BytesIO()
    text = io.TextIOWrapper(buffer, encoding="utf-16")
    monkeypatch.setattr("sys.stdout", text)
    payload = '{"k":"é"}\n'.encode()
    write_output(payload, None, inputs=())
    assert buffer.getvalue() == payload
    monkeypatch.setattr("sys.stdout", None)  # Python's value when fd 1 was closed at start
    assert str(error_of(write_output, payload, None, inputs=())) == "output_unwritable (output)"


def test_two_writers_of_one_set_leave_one_writers_set_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writer 1 renames its first file, then stalls before its second; writer 2 starts while
    # it stalls. Unlocked, writer 2's renames fall between writer 1's: the folder ends with
    # a from writer 2 and b from writer 1 (the failure two concurrent publications had).
    # Under the folder's lock, writer 2 waits, and the folder holds writer 2's set whole.
    from chartscore.io.output import write_atomic_all

    renamed = os.replace
    stall = {"seconds": 0.0}

    def slow_replace(source: str, target: str) -> None:
        renamed(source, target)
        if target.endswith("a.json"):
            time.sleep(stall["seconds"])

    monkeypatch.setattr(os, "replace", slow_replace)
    targets = [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    children = []
    for writer, (delay, seconds) in enumerate(((0.0, 0.6), (0.2, 0.0)), start=1):
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            status = 1
            try:
                time.sleep(delay)
                stall["seconds"] = seconds
                write_atomic_all([(t, str(writer).encode(), None) for t in targets])
                status = 0
            finally:
                os._exit(status)
        children.append(child)
    statuses = [os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) for child in children]
    assert statuses == [0, 0]
    assert [Path(t).read_bytes() for t in targets] == [b"2", b"2"]
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.json"]  # no temporary file left


def test_one_file_written_into_a_folder_this_process_holds_locked_is_not_waited_on(
    tmp_path: Path,
) -> None:
    # share --releases holds an exclusive flock on the releases folder and writes the head
    # there with write_atomic. Once the renames took the target folder's lock too, the
    # process waited on its own lock for ever: the first share --releases never ended (on
    # the 200-case study killed after 13 minutes, the folder left without its head).
    import fcntl

    from chartscore.io.output import write_atomic

    target = tmp_path / "ledger.json"
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        status = 1
        try:
            held = os.open(tmp_path, os.O_RDONLY)
            fcntl.flock(held, fcntl.LOCK_EX)
            write_atomic(target, b"head\n", mode=0o600)
            status = 0
        finally:
            os._exit(status)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(child, 9)
        os.waitpid(child, 0)
        pytest.fail("write_atomic waited on its own process's lock of the folder")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    assert target.read_bytes() == b"head\n"
