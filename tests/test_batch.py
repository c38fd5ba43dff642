"""Batch scoring (docs/batch.md): many runs, one malformed, a baseline, gates, the ledger."""

from __future__ import annotations

import datetime
import gzip
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from chartscore import ChartscoreError, ErrorCode, compare_files, load_schema, score_files
from chartscore.cli import main
from chartscore.documents.gates import parse_gates
from chartscore.io.ledger_file import read_ledger
from chartscore.ledger import LedgerEntry
from chartscore.records.gold_identity import LedgerKey
from chartscore.workflows.batch import batch_files
from chartscore.workflows.forked import run_tasks
from ledger_data import KEY, Demo, copy_demo, make_demo

E = ErrorCode
MOMENT = datetime.datetime(2026, 5, 9, 7, 35, 25, tzinfo=datetime.UTC)
NON_INFERIOR = '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
NON_INFERIOR += "min_difference_lower = -0.02\n"
SUPERIOR = NON_INFERIOR.replace("-0.02", "0.2")


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return make_demo(tmp_path_factory.mktemp("batch") / "demo")


@pytest.fixture
def demo(demo_files: Demo, tmp_path: Path) -> Demo:
    return copy_demo(demo_files, tmp_path / "demo")


def batch(demo: Demo, pattern: str = "*.jsonl", **options: object):  # type: ignore[no-untyped-def]
    arguments: dict[str, object] = {
        "ledger": demo.ledger,
        "key": LedgerKey(KEY),
        "schema": demo.schema,
        "time": MOMENT,
        **options,
    }
    return batch_files(demo.gold, str(demo.runs / pattern), **arguments)  # type: ignore[arg-type]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_a_batch_with_a_malformed_run_finishes_and_records_it_failed(demo: Demo) -> None:
    found = batch(demo, baseline="model-v1", gates=parse_gates(NON_INFERIOR), jobs=2)
    assert [run.label for run in found.runs] == ["broken", "model-v1", "model-v2"]
    broken, v1, v2 = found.runs
    assert broken.report is None and str(broken.failure) == "invalid_json (predictions line 3)"
    assert v1.baseline and v1.comparison is None
    assert v2.gates is not None and v2.gates.exit_status == 0
    assert found.exit_status == 1  # a run failed
    entries = [LedgerEntry.from_line(line) for line in demo.ledger.read_bytes().splitlines()]
    assert [(e.kind, e.run_id, e.status) for e in entries] == [
        ("score", "broken", "failed"),
        ("score", "model-v1", "scored"),
        ("score", "model-v2", "scored"),
        ("compare", "model-v2.vs.model-v1", "scored"),
    ]
    assert entries[0].problem is not None and entries[0].problem.line == 3
    schema = load_schema(demo.schema)
    assert entries[1].result == score_files(demo.gold, demo.run("model-v1"), schema=schema)
    paired = compare_files(demo.gold, demo.run("model-v1"), demo.run("model-v2"), schema=schema)
    assert entries[3].result == paired  # paired exactly as compare does
    assert len({e.gold_identity for e in entries}) == 1
    summary = found.summary()
    assert "broken  scoring  invalid_json (predictions line 3)" in summary
    assert "batch FAILED: a run failed (exit 1); 4 ledger lines appended" in summary


def test_one_process_and_two_give_the_same_lines_and_summary(demo: Demo, tmp_path: Path) -> None:
    one = batch(demo, baseline="model-v1", jobs=1)
    other = copy_demo(demo, tmp_path / "other")
    other.ledger.unlink()
    two = batch(other, baseline="model-v1", jobs=2)
    assert demo.ledger.read_bytes() == other.ledger.read_bytes()
    assert one.summary() == two.summary()


def test_the_exit_status_follows_the_gates(demo: Demo) -> None:
    (demo.run("broken")).unlink()
    assert batch(demo, baseline="model-v1", gates=parse_gates(NON_INFERIOR)).exit_status == 0
    failing = batch(demo, baseline="model-v1", gates=parse_gates(SUPERIOR))
    assert failing.exit_status == 3
    assert "FAIL (1 required)" in failing.summary()
    no_baseline = NON_INFERIOR.replace("min_difference_lower = -0.02", "min_lower = 0.5")
    assert batch(demo, gates=parse_gates(no_baseline)).exit_status == 0  # on each report
    strict = no_baseline.replace("0.5", "0.6")  # model-v1's clustered lower bound is 0.55
    assert batch(demo, gates=parse_gates(strict)).exit_status == 3


def test_the_command_prints_the_summary_and_the_failing_gates(demo: Demo) -> None:
    gates = demo.root / "gates.toml"
    gates.write_text(SUPERIOR, encoding="utf-8")
    os.environ["CHARTSCORE_LEDGER_KEY_FILE"] = str(demo.key)
    try:
        status, out, err = run(
            ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*.jsonl"),
             "--schema", str(demo.schema), "--ledger", str(demo.ledger), "--baseline",
             "model-v1", "--gates", str(gates), "--jobs", "2"]
        )  # fmt: skip
    finally:
        del os.environ["CHARTSCORE_LEDGER_KEY_FILE"]
    assert status == 1  # broken failed: that outranks the failed gate
    assert out.startswith("chartscore batch: 3 runs, 2 scored, 1 failed; baseline model-v1\n")
    assert err.startswith("chartscore: gates of model-v2 against model-v1:\n")
    assert "gates FAILED" in err
    assert str(demo.root) not in out + err


def test_batch_refusals_name_positions_never_names(demo: Demo) -> None:
    odd = demo.runs / "ZQsecret name.jsonl"
    shutil.copy(demo.run("model-v1"), odd)
    cases = {
        "invalid_run_label (predictions part 1)": {},
    }
    for expected, options in cases.items():
        with pytest.raises(ChartscoreError) as raised:
            batch(demo, **options)
        assert str(raised.value) == expected
    odd.unlink()
    packed = demo.runs / "model-v1.jsonl.gz"
    packed.write_bytes(gzip.compress(demo.run("model-v1").read_bytes()))
    with pytest.raises(ChartscoreError) as duplicate:
        batch(demo, "*.jsonl*")
    assert str(duplicate.value) == "duplicate_run_label (predictions part 3)"  # sorted: 3rd
    packed.unlink()
    with pytest.raises(ChartscoreError) as unknown:
        batch(demo, baseline="model-v9")
    assert unknown.value.code is E.UNKNOWN_BASELINE
    with pytest.raises(ChartscoreError) as needs:
        batch(demo, gates=parse_gates(NON_INFERIOR))
    assert needs.value.code is E.GATE_NEEDS_COMPARISON
    with pytest.raises(ChartscoreError) as none:
        batch_files(demo.gold, str(demo.runs / "*.none"), ledger=demo.ledger, key=LedgerKey(KEY))
    assert str(none.value) == "no_part_files (predictions)"
    assert not demo.ledger.exists()


def test_a_gold_problem_stops_the_batch_before_any_run(demo: Demo) -> None:
    with demo.gold.open("a", encoding="utf-8") as handle:
        handle.write('{"case_id": "x", "field_id": "dx.onset", "field_type": "text", "value": 1}\n')
    with pytest.raises(ChartscoreError) as raised:
        batch(demo)
    assert str(raised.value) == "inconsistent_field_type (gold line 217)"
    assert not demo.ledger.exists()


def test_the_batch_s_own_inputs_are_not_runs(demo: Demo) -> None:
    gold = demo.runs / "gold.jsonl"
    shutil.move(demo.gold, gold)
    ledger = demo.runs / "results.jsonl"
    for skipped in (1, 2):  # the gold file; then the gold file and the ledger, now there
        found = batch_files(
            gold, str(demo.runs / "*.jsonl"), ledger=ledger, key=LedgerKey(KEY),
            schema=demo.schema, time=MOMENT,
        )  # fmt: skip
        assert found.skipped == skipped
        assert [run.label for run in found.runs] == ["broken", "model-v1", "model-v2"]
    assert len(read_ledger(ledger).runs) == 6


def test_the_summary_fits_100_columns(demo: Demo) -> None:
    text = batch(demo, baseline="model-v1", gates=parse_gates(NON_INFERIOR)).summary()
    assert max(map(len, text.splitlines())) <= 100
    assert "model-v2  scored    129/186 69% [62-76]  +7 pp [+3, +11]  pass" in text


# --- the forked runner ---------------------------------------------------------------------


def _fails() -> str:
    raise ChartscoreError(E.INVALID_JSON, line=7)


def _crashes() -> str:
    raise RuntimeError("a bug, with data: ZQsecret")


def _dies() -> str:
    os._exit(9)


def test_each_task_s_outcome_comes_back_in_order_whatever_happens_to_it() -> None:
    tasks = [lambda: "a", _fails, _crashes, _dies, lambda: json.dumps(list(range(10**5)))]
    for jobs in (1, 2, 3):
        chosen = tasks if jobs > 1 else tasks[:3] + tasks[4:]
        outcomes = run_tasks(chosen, jobs)
        codes = [None if error is None else str(error) for _, error in outcomes]
        expected = ["invalid_json (line 7)", "internal_error"]
        assert codes[0] is None and codes[1:3] == expected
        assert outcomes[0][0] == "a" and outcomes[-1][0] == json.dumps(list(range(10**5)))
        if jobs > 1:
            assert codes[3] == "internal_error"  # the child died: that task alone failed
        for _, error in outcomes:
            assert error is None or (error.__context__ is None and error.__traceback__ is None)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every child was reaped


def _sleeps() -> str:
    import time

    time.sleep(60)
    return "late"


def test_an_interrupted_batch_leaves_no_process_behind() -> None:
    import signal

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tasks([_sleeps, _sleeps, _sleeps], 2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # both children were killed and reaped


def test_a_failed_run_with_a_hint_keeps_its_label_on_one_line(demo: Demo) -> None:
    # A CSV file among the runs fails with a hint, a long error: the table wraps the error, never
    # the label (it was printed one character per line).
    (demo.runs / "table.csv").write_text("case_id,field_id,value\nc1,dx.onset,1\n", "utf-8")
    summary = batch(demo, "*").summary()
    lines = summary.splitlines()
    assert max(map(len, lines)) <= 100
    failed = lines[lines.index("Failed runs") :]
    rows = [line for line in failed if line.startswith(("broken ", "table "))]
    assert [row.split()[:2] for row in rows] == [["broken", "scoring"], ["table", "scoring"]]
    error = " ".join(failed[failed.index(rows[1]) :][:3]).split()
    assert " ".join(error[:20]) == (
        "table scoring invalid_json (predictions line 1; JSON Lines expected: one JSON object per "
        "line, not CSV or a JSON array)"
    )
    assert not any(len(line.strip()) == 1 for line in failed)  # no label cut into characters


@pytest.mark.parametrize("given_by", ["--ledger-key", "CHARTSCORE_LEDGER_KEY_FILE"])
def test_a_ledger_key_among_the_run_files_is_skipped_never_read_as_a_run(
    demo: Demo, given_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = demo.runs / "secret.key"
    shutil.move(demo.key, key)
    option = ["--ledger-key", str(key)]
    if given_by != "--ledger-key":
        monkeypatch.setenv(given_by, str(key))
        option = []
    status, out, err = run(
        ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*"),
         "--schema", str(demo.schema), "--ledger", str(demo.ledger), *option]
    )  # fmt: skip
    assert (status, err) == (1, "")  # broken failed
    assert out.startswith("chartscore batch: 3 runs, 2 scored, 1 failed\n")
    assert "secret" not in out
    assert (
        "1 matched file skipped: an input of the batch (gold, schema, gates, ledger or its key)"
        in out
    )
    assert [run.entry.run_id for run in read_ledger(demo.ledger).runs] == [
        "broken", "model-v1", "model-v2",
    ]  # fmt: skip


def test_a_gold_problem_on_line_1_gets_the_hint_score_gives(demo: Demo, tmp_path: Path) -> None:
    # Batch read gold without score's hints: a CSV, a report or a predictions file given as
    # gold said only "invalid_json (gold line 1)" or "missing_key (gold line 1, key ...)".
    csv = tmp_path / "gold.csv"
    csv.write_text("case_id,field_id,value\nc1,dx.onset,1\n", encoding="utf-8")
    report = tmp_path / "report.json"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    report.write_text(score_files(demo.gold, empty, schema=demo.schema).to_json())
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text(
        '{"case_id": "c1", "field_id": "dx.onset", "value": "2020-01-01"}\n', encoding="utf-8"
    )
    (demo.runs / "gold-copy.jsonl").write_bytes(demo.gold.read_bytes())  # a run with field_type
    expected = {
        csv: "invalid_json (gold line 1; JSON Lines expected: one JSON object per line, not CSV "
        "or a JSON array)",
        report: "missing_key (gold line 1, key case_id; this looks like a chartscore document (a "
        "report): gold and predictions are JSON Lines of rows)",
        swapped: "missing_key (gold line 1, key field_type; gold and predictions may be swapped)",
    }
    for gold, message in expected.items():
        with pytest.raises(ChartscoreError) as raised:
            batch_files(
                gold, str(demo.runs / "*.jsonl"), ledger=demo.ledger, key=LedgerKey(KEY),
                schema=demo.schema, time=MOMENT,
            )  # fmt: skip
        assert str(raised.value) == message
        assert raised.value.__context__ is None and raised.value.__cause__ is None
        assert not demo.ledger.exists()
