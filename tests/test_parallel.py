"""Reading predictions in a second process changes nothing but the time taken."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, score_files
from chartscore.io import parallel

from helpers import chain_dict, digest, write_jsonl

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


answers = st.one_of(st.none(), st.sampled_from(["former", " FORMER", "never", "35", 35, 36]))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(0, 29), st.booleans(), answers, st.booleans()), max_size=60),
    st.sampled_from(["", "{not json", '{"case_id": "c1"}', "[]"]),
    st.integers(0, 70),
)
def test_same_reports_and_errors(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, bool, object, bool]],
    bad_line: str,
    bad_at: int,
) -> None:
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


@pytest.mark.parametrize(
    ("name", "replacement"), [("fork", _no_fork), ("pipe", _no_pipe), ("fork", None)]
)
def test_a_reader_that_cannot_start_leaves_the_work_to_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, replacement: object
) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"case_id": f"c{i}", "field_id": "hx.smoking", "value": "former"} for i in range(9)],
    )
    expected = outcome(gold, predictions, parallel_run=False)
    if replacement is None:
        monkeypatch.delattr(parallel.os, name)  # a platform without fork
    else:
        monkeypatch.setattr(parallel.os, name, replacement)
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
