"""Reading predictions in a second process changes nothing but the time taken."""

from __future__ import annotations

import contextlib
import itertools
import mmap
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, score_files
from chartscore.io import parallel

from helpers import chain_dict, digest, examples, write_jsonl

GOLD = [
    {"case_id": f"c{i}", "field_id": f, "field_type": t, "value": v}
    for i in range(30)
    for f, t, v in (("hx.smoking", "categorical", "former"), ("echo.lvef", "number", 35 + i))
]


def outcome(gold: Path, predictions: Path, parallel_run: bool) -> object:
    try:
        return score_files(gold, predictions, parallel=parallel_run).to_json()
    except ChartscoreError as error:
        assert error.__context__ is None and error.__cause__ is None
        return str(error)


def child_processes() -> list[int]:
    """This process's children, alive or not yet reaped (Linux: read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(entry))
    return found


def assert_no_reader_left() -> None:
    if sys.platform.startswith("linux"):
        assert child_processes() == []  # stopped and reaped, whatever happened


def assert_same(gold: Path, predictions: Path) -> object:
    sequential = outcome(gold, predictions, parallel_run=False)
    assert outcome(gold, predictions, parallel_run=True) == sequential
    assert_no_reader_left()
    return sequential


def _never(channel: parallel._Channel) -> bool:
    return False


def _always(channel: parallel._Channel) -> bool:
    return not channel._pending  # as if the main process were always waiting


def _every_other() -> Callable[[parallel._Channel], bool]:
    calls = itertools.count()
    return lambda channel: next(calls) % 2 == 1 and not channel._pending


HAND_OFFS: dict[str, Callable[[], object]] = {
    "as it comes": lambda: parallel._Channel.main_is_waiting,
    "never": lambda: _never,
    "every slice": lambda: _always,
    "every other slice": _every_other,
}


@contextlib.contextmanager
def handing_off(policy: str, lines_per_slice: int) -> Iterator[None]:
    """Make the forked reader hand batches to the main process by ``policy``."""
    with (
        mock.patch.object(parallel._Channel, "main_is_waiting", HAND_OFFS[policy]()),
        mock.patch.object(parallel, "_LINES_PER_SLICE", lines_per_slice),
    ):
        yield


answers = st.one_of(st.none(), st.sampled_from(["former", " FORMER", "never", "35", 35, 36]))


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.tuples(st.integers(0, 29), st.booleans(), answers, st.booleans()), max_size=60),
    st.sampled_from(["", "{not json", '{"case_id": "c1"}', "[]"]),
    st.integers(0, 70),
    st.sampled_from(sorted(HAND_OFFS)),
    st.sampled_from([1, 3, 64]),
)
def test_same_reports_and_errors(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, bool, object, bool]],
    bad_line: str,
    bad_at: int,
    hand_off: str,
    lines_per_slice: int,
) -> None:
    # Whichever process checks which lines (the reader, or the main process
    # when it has caught up), the report and the first error are the same.
    folder = tmp_path_factory.mktemp("parallel")
    gold = write_jsonl(folder / "gold.jsonl", GOLD)
    fact = digest("fact")
    lines = []
    for case, smoking, value, evidence in rows:
        field = "hx.smoking" if smoking else "echo.lvef"
        row: dict[str, object] = {"case_id": f"c{case}", "field_id": field, "value": value}
        if evidence:
            row["normalized_fact_digest"] = fact
            row["evidence_chain"] = chain_dict(field, fact)
        lines.append(row)
    predictions = write_jsonl(folder / "predictions.jsonl", lines)
    if bad_line:
        text = predictions.read_text().splitlines(keepends=True)
        text.insert(min(bad_at, len(text)), bad_line + "\n")
        predictions.write_text("".join(text))
    with handing_off(hand_off, lines_per_slice):
        assert_same(gold, predictions)


def test_large_file_spans_many_batches(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"case_id": f"c{i}", "field_id": "f.x", "field_type": "text", "value": "v"}
            for i in range(40_000)
        ],
    )
    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": f"c{i}", "field_id": "f.x", "value": "V"} for i in range(39_999)],
    )
    report = assert_same(gold, predictions)
    assert '"missing_count":1' in report  # type: ignore[operator]
    with predictions.open("a") as extra:
        extra.write('{"case_id": "c5", "field_id": "f.x", "value": "again"}\n')
    assert assert_same(gold, predictions) == "duplicate_prediction_key (predictions line 40000)"


def test_unreadable_predictions_and_gold_errors(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    assert assert_same(gold, tmp_path / "missing.jsonl") == "file_unreadable (predictions)"
    bad_gold = tmp_path / "bad.jsonl"
    bad_gold.write_text('{"case_id": 1}\n')
    assert assert_same(bad_gold, gold) == "missing_key (gold line 1, key field_id)"  # gold first


def test_a_crashed_reader_is_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("the patch reaches the reader only through fork")

    def explode(text: str) -> None:
        raise RuntimeError("secret value " + text)

    monkeypatch.setattr(parallel, "fast_prediction", explode)
    monkeypatch.setattr(parallel._Channel, "main_is_waiting", _never)  # the reader checks
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    predictions = write_jsonl(
        tmp_path / "p.jsonl", [{"case_id": "c1", "field_id": "hx.smoking", "value": "x"}]
    )
    with pytest.raises(ChartscoreError) as caught:
        score_files(gold, predictions, parallel=True)
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert "secret" not in str(caught.value)
    assert_no_reader_left()


def _no_fork() -> int:
    raise BlockingIOError(11, "Resource temporarily unavailable")


def _no_pipe() -> tuple[int, int]:
    raise OSError(24, "Too many open files")


def _no_shared_page(*args: object) -> mmap.mmap:
    raise OSError(12, "Cannot allocate memory")


@pytest.mark.parametrize(
    ("where", "name", "replacement"),
    [
        (parallel.os, "fork", _no_fork),
        (parallel.os, "pipe", _no_pipe),
        (parallel.os, "fork", None),
        (parallel.mmap, "mmap", _no_shared_page),
    ],
)
def test_a_reader_that_cannot_start_leaves_the_work_to_one_process(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: object,
    name: str,
    replacement: object,
) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": f"c{i}", "field_id": "hx.smoking", "value": "former"} for i in range(9)],
    )
    expected = outcome(gold, predictions, parallel_run=False)
    if replacement is None:
        monkeypatch.delattr(where, name)  # a platform without fork
    else:
        monkeypatch.setattr(where, name, replacement)
    assert outcome(gold, predictions, parallel_run=True) == expected
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"case_id": "c1"}])
    assert outcome(gold, bad, parallel_run=True) == "missing_key (predictions line 1, key field_id)"


def test_the_reader_holds_only_what_it_needs(tmp_path: Path) -> None:
    # Rows travel in messages larger than a pipe holds, over many batches, with
    # the main process busy elsewhere: the bounded backlog and the pump at work.
    gold = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"case_id": f"c{i}", "field_id": "f.x", "field_type": "text", "value": "v" * 40}
            for i in range(30_000)
        ],
    )
    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": f"c{i}", "field_id": "f.x", "value": "w" * 200} for i in range(30_000)],
    )
    assert '"missing_count":0' in str(assert_same(gold, predictions))


def test_the_main_process_checks_lines_when_it_has_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slow reader (each slice of 4 lines takes 0.1 s there) and a one-row
    # gold set: the main process soon has nothing to read, says so, and is
    # sent the rest of the batch as lines, which it checks itself.
    main = os.getpid()
    check_batch = parallel.check_batch

    def slow_in_the_reader(*args: object) -> object:
        if os.getpid() != main:
            time.sleep(0.1)
        return check_batch(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "check_batch", slow_in_the_reader)
    monkeypatch.setattr(parallel, "_LINES_PER_SLICE", 4)
    kinds: list[str] = []
    receive = parallel.PredictionReader._next

    def counting(reader: parallel.PredictionReader) -> parallel.Message | None:
        message = receive(reader)
        kinds.append("torn" if message is None else message[0])
        return message

    monkeypatch.setattr(parallel.PredictionReader, "_next", counting)
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD[:1])
    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": "c0", "field_id": "hx.smoking", "value": "former"}]
        + [{"case_id": f"x{i}", "field_id": "hx.smoking", "value": "never"} for i in range(40)]
        + [{"case_id": "c0"}],  # line 42: the main process finds the error
    )
    with pytest.raises(ChartscoreError) as caught:
        score_files(gold, predictions, parallel=True, extra_predictions="ignore")
    assert str(caught.value) == "missing_key (predictions line 42, key field_id)"
    assert "lines" in kinds
    assert_no_reader_left()


def test_the_channel_keeps_its_byte_count_and_hears_the_main_process() -> None:
    read_end, write_end = os.pipe()
    waiting = mmap.mmap(-1, 1)
    try:
        channel = parallel._Channel(write_end, waiting)
        assert not channel.main_is_waiting()
        waiting[0] = 1
        assert channel.main_is_waiting()  # asked, nothing queued
        assert waiting[0] == 0  # the request is taken
        messages = [("rows", [n], ["x" * 40_000]) for n in range(5)]  # more than the pipe holds
        for message in messages:
            channel.send(message)
            assert channel._pending_bytes == sum(len(view) for view in channel._pending)
        assert channel._pending  # the pipe is full: the rest waits here
        waiting[0] = 1
        assert not channel.main_is_waiting()  # rows are on their way: not idle for long
        assert waiting[0] == 0
        received = bytearray()
        while True:  # drain as the main process would, topping up as the reader would
            received += os.read(read_end, 1 << 16)
            channel.write_what_fits()
            assert channel._pending_bytes == sum(len(view) for view in channel._pending)
            if not channel._pending:
                break
        os.close(write_end)
        write_end = -1
        while chunk := os.read(read_end, 1 << 16):
            received += chunk
        decoded = []
        while received:
            size = int.from_bytes(received[:8], "little")
            decoded.append(pickle.loads(received[8 : 8 + size]))
            del received[: 8 + size]
        assert decoded == messages
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
        waiting.close()


@pytest.mark.parametrize("lines_per_slice", [1, 3, 64])
@pytest.mark.parametrize("hand_off", sorted(HAND_OFFS))
def test_every_hand_over_pattern_keeps_rows_and_errors(
    tmp_path: Path, hand_off: str, lines_per_slice: int
) -> None:
    # Each pattern and slice size, on a file with a join error (line 20) after
    # a parse error would be checked (line 25): the first in line order wins.
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    rows = [
        {"case_id": f"c{i}", "field_id": "hx.smoking", "value": ["former", None, "never"][i % 3]}
        for i in range(30)
    ]
    predictions = write_jsonl(tmp_path / "p.jsonl", rows)
    with handing_off(hand_off, lines_per_slice):
        report = assert_same(gold, predictions)
        assert '"missing_count":30' in str(report)  # the lvef rows
        text = predictions.read_text().splitlines(keepends=True)
        text[19] = '{"case_id": "c0", "field_id": "hx.smoking", "value": "again"}\n'
        text[24] = "{not json\n"
        predictions.write_text("".join(text))
        assert assert_same(gold, predictions) == "duplicate_prediction_key (predictions line 20)"
