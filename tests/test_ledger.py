"""The ledger of scored runs (docs/ledger.md): lines, appending, reading, the table, the CLI."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import io
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from chartscore import (
    ChartscoreError,
    ErrorCode,
    GoldField,
    Prediction,
    compare_files,
    load_schema,
    score,
    score_files,
)
from chartscore.cli import main
from chartscore.documents.canonical_json import canonical_json
from chartscore.errors import describe
from chartscore.io.ledger_file import append_line, read_ledger
from chartscore.ledger import LINE_PREFIX, LedgerEntry, code_hash, ledger_table
from chartscore.ledger.entry import utc_time
from chartscore.ledger.scoring_code import EXCLUDED, code_hash_of
from chartscore.records.gold_identity import LedgerKey, gold_identity
from chartscore.records.schema import FieldSpec, Schema
from chartscore.records.schema_digest import schema_digest
from chartscore.workflows.ledger import (
    gold_state,
    ledger_entry,
    pinned_gold_identity,
    record_run,
)
from ledger_data import KEY, Demo, copy_demo, make_demo, write_key

E = ErrorCode
SRC = Path(__file__).resolve().parent.parent / "src" / "chartscore"
MOMENT = datetime.datetime(2026, 5, 9, 7, 35, 25, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return make_demo(tmp_path_factory.mktemp("ledger") / "demo")


@pytest.fixture
def demo(demo_files: Demo, tmp_path: Path) -> Demo:
    return copy_demo(demo_files, tmp_path / "demo")


def run(argv: list[str], env_key: Path | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.pop("CHARTSCORE_LEDGER_KEY_FILE", None)
    if env_key is not None:
        os.environ["CHARTSCORE_LEDGER_KEY_FILE"] = str(env_key)
    try:
        status = main(argv, stdout=out, stderr=err)
    finally:
        os.environ.pop("CHARTSCORE_LEDGER_KEY_FILE", None)
        if saved is not None:
            os.environ["CHARTSCORE_LEDGER_KEY_FILE"] = saved
    return status, out.getvalue(), err.getvalue()


def record(demo: Demo, name: str = "model-v1", **options: object) -> LedgerEntry:
    schema = load_schema(demo.schema)
    before = gold_state(demo.gold)
    report = score_files(demo.gold, demo.run(name), schema=schema)
    return record_run(
        demo.ledger,
        report,
        key=LedgerKey(KEY),
        gold=demo.gold,
        gold_before=before,
        system=name,
        schema=schema,
        time=MOMENT,
        **options,  # type: ignore[arg-type]
    )


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


# --- the line ------------------------------------------------------------------------------


def test_a_line_is_canonical_json_with_the_documented_keys(demo: Demo) -> None:
    entry = record(demo)
    (line,) = lines(demo.ledger)
    assert line.startswith(LINE_PREFIX)
    document = json.loads(line)
    assert canonical_json(document).encode() == line
    assert set(document) == {
        "format", "format_version", "run_id", "system", "kind", "status", "time", "setup",
        "gold_identity", "key_id", "result",
    }  # fmt: skip
    assert document["time"] == "2026-05-09T07:35:25Z"
    assert document["run_id"] == document["system"] == "model-v1"
    assert (document["kind"], document["status"]) == ("score", "scored")
    assert document["setup"] == {
        "scorer_version": document["result"]["scorer"]["version"],
        "code_hash": code_hash(),
        "schema_digest": schema_digest(load_schema(demo.schema), LedgerKey(KEY)),
        "confidence": 0.95,
    }
    assert document["key_id"] == LedgerKey(KEY).key_id
    report = score_files(demo.gold, demo.run("model-v1"), schema=demo.schema)
    assert canonical_json(document["result"]) == report.to_json()
    assert LedgerEntry.from_line(line + b"\n") == entry
    assert entry.to_line() == line + b"\n"


def test_every_byte_but_the_time_is_reproducible(demo: Demo) -> None:
    first = record(demo).to_line()
    again = record(demo).to_line()
    assert first == again  # same inputs, same time: same bytes
    later = record(demo, run_id="model-v1").to_line()
    assert later == first
    # Another process, another hash seed: the same bytes.
    program = (
        "import datetime, sys\n"
        "from chartscore import load_schema, score_files\n"
        "from chartscore.records.gold_identity import LedgerKey\n"
        "from chartscore.workflows.ledger import ledger_entry, pinned_gold_identity, gold_state\n"
        "gold, run, schema_path, key = sys.argv[1:5]\n"
        "schema = load_schema(schema_path)\n"
        "report = score_files(gold, run, schema=schema)\n"
        "k = LedgerKey(open(key, 'rb').read())\n"
        "identity = pinned_gold_identity(gold, k, gold_state(gold))\n"
        "moment = datetime.datetime(2026, 5, 9, 7, 35, 25, tzinfo=datetime.UTC)\n"
        "entry = ledger_entry(report, system='model-v1', gold_identity=identity, key=k,\n"
        "                     schema=schema, time=moment)\n"
        "sys.stdout.buffer.write(entry.to_line())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    argv = [str(demo.gold), str(demo.run("model-v1")), str(demo.schema), str(demo.key)]
    done = subprocess.run(
        [sys.executable, "-c", program, *argv], env=env, capture_output=True, check=True
    )
    assert done.stdout == first


def test_edited_or_damaged_lines_are_refused(demo: Demo) -> None:
    record(demo)
    (line,) = lines(demo.ledger)
    document = json.loads(line)
    edits = {
        "spacing": line.replace(b'","', b'", "', 1),
        "a count": line.replace(b'"success_count":116', b'"success_count":117', 1),
        "a key": canonical_json({**document, "extra": 1}).encode(),
        "the kind": canonical_json({**document, "kind": "compare"}).encode(),
        "the status": canonical_json({**document, "status": "failed"}).encode(),
        "the confidence": canonical_json(
            {**document, "setup": {**document["setup"], "confidence": 0.9}}
        ).encode(),
        "the time": canonical_json({**document, "time": "2026-05-09 07:35:25"}).encode(),
        "a label": canonical_json({**document, "system": "a b"}).encode(),
        "the identity": canonical_json(
            {**document, "gold_identity": "sha256:" + "0" * 64}
        ).encode(),
        "cut short": line[:-40],
        "the format version": canonical_json({**document, "format_version": 2}).encode(),
    }
    assert b'"success_count":116' in line
    for name, edited in edits.items():
        with pytest.raises(ChartscoreError) as raised:
            LedgerEntry.from_line(edited)
        assert str(raised.value) == "not_a_ledger (ledger)", name


def test_a_failed_run_records_its_code_and_line_only(demo: Demo) -> None:
    status, out, _ = run(
        ["batch", "--gold", str(demo.gold), "--predictions", str(demo.run("broken")),
         "--schema", str(demo.schema), "--ledger", str(demo.ledger), "--jobs", "1"],
        demo.key,
    )  # fmt: skip
    assert status == 1
    (line,) = lines(demo.ledger)
    document = json.loads(line)
    assert (document["status"], document["result"]) == ("failed", None)
    assert document["problem"] == {"code": "invalid_json", "input": "predictions", "line": 3}
    assert "invalid_json (predictions line 3)" in out


# --- appending -----------------------------------------------------------------------------


def test_a_new_ledger_has_mode_0600_and_grows_by_whole_lines(demo: Demo) -> None:
    previous = os.umask(0)
    try:
        record(demo)
    finally:
        os.umask(previous)
    assert demo.ledger.stat().st_mode & 0o777 == 0o600
    record(demo, "model-v2")
    assert [LedgerEntry.from_line(line).run_id for line in lines(demo.ledger)] == [
        "model-v1",
        "model-v2",
    ]


def test_appending_refuses_what_is_not_a_private_ledger(demo: Demo) -> None:
    cases = {}
    exposed = demo.root / "exposed.jsonl"
    exposed.write_bytes(b"")
    os.chmod(exposed, 0o644)
    cases["file_exposed (ledger)"] = exposed
    other = demo.root / "report.json"
    other.write_bytes(b'{"format":"chartscore.report"}\n')
    os.chmod(other, 0o600)
    cases["not_a_ledger (ledger)"] = other
    link = demo.root / "link.jsonl"
    link.symlink_to(other)
    cases["output_unwritable (ledger)"] = link
    cases["output_unwritable (ledger; the output folder does not exist)"] = (
        demo.root / "missing" / "l.jsonl"
    )
    cases["output_is_input (ledger)"] = demo.gold
    cases["output_unwritable (ledger) "] = demo.root
    fifo = demo.root / "fifo.jsonl"
    os.mkfifo(fifo)
    cases["output_unwritable (ledger)  "] = fifo  # refused at once, never waited on
    for expected, path in cases.items():
        before = path.read_bytes() if path.is_file() else None
        with pytest.raises(ChartscoreError) as raised:
            _record_to(demo, path)
        assert str(raised.value) == expected.strip(), expected
        assert raised.value.__context__ is None and raised.value.__cause__ is None
        if before is not None:
            assert path.read_bytes() == before  # untouched
    with pytest.raises(ChartscoreError) as usage:
        append_line(demo.ledger, b"not a line\n")
    assert usage.value.code is E.USAGE


def _record_to(demo: Demo, ledger: Path) -> None:
    schema = load_schema(demo.schema)
    report = score_files(demo.gold, demo.run("model-v1"), schema=schema)
    record_run(
        ledger,
        report,
        key=LedgerKey(KEY),
        gold=demo.gold,
        gold_before=gold_state(demo.gold),
        system="model-v1",
        schema=schema,
    )


def test_a_line_cut_short_is_closed_skipped_and_reported(demo: Demo) -> None:
    record(demo)
    whole = demo.ledger.read_bytes()
    with demo.ledger.open("ab") as handle:  # a crash in the middle of a write
        handle.write(whole[: len(whole) // 2])
    record(demo, "model-v2")
    ledger = read_ledger(demo.ledger)
    assert [run.line for run in ledger.runs] == [1, 3]
    assert ledger.damaged == (2,)
    assert "damaged lines skipped: 2" in ledger_table(ledger)
    status, _, err = run(["ledger", "show", "--ledger", str(demo.ledger)])
    assert status == 0 and "1 damaged ledger line skipped" in err


def _disk_full_after(limit: int, monkeypatch: pytest.MonkeyPatch, ledger: Path) -> None:
    """Writes to ``ledger`` fail with ENOSPC once ``limit`` more bytes are written."""
    import errno

    real_write, room = os.write, [limit]

    def write(descriptor: int, data: bytes) -> int:
        if os.path.samestat(os.fstat(descriptor), os.stat(ledger)):
            if room[0] <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            written = real_write(descriptor, bytes(data)[: room[0]])
            room[0] -= written
            return written
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("truncation", ["works", "fails"])
def test_a_full_disk_leaves_the_ledger_as_it_was_or_says_it_is_cut(
    demo: Demo, monkeypatch: pytest.MonkeyPatch, truncation: str
) -> None:
    # It left a cut line and said "output_unwritable (ledger): the report could not be
    # written; nothing partial was left": both false.
    record(demo)
    before = demo.ledger.read_bytes()
    line = record(demo, "model-v2").to_line()
    demo.ledger.write_bytes(before)
    with monkeypatch.context() as patched:
        _disk_full_after(len(line) // 2, patched, demo.ledger)
        if truncation == "fails":

            def no_truncate(descriptor: int, size: int) -> None:
                raise OSError(5, "Input/output error")

            patched.setattr(os, "ftruncate", no_truncate)
        with pytest.raises(ChartscoreError) as raised:
            append_line(demo.ledger, line)
    error = raised.value
    assert error.__context__ is None and error.__cause__ is None
    if truncation == "works":
        assert str(error) == "ledger_unwritable (ledger)"
        assert demo.ledger.read_bytes() == before  # as it was
        assert "left as it was" in describe(error.code)
    else:
        assert str(error) == "ledger_cut_short (ledger)"
        assert demo.ledger.read_bytes() == before + line[: len(line) // 2]
        assert "cut line" in describe(error.code)
        append_line(demo.ledger, line)  # the next append closes the cut line
        assert [run.line for run in read_ledger(demo.ledger).runs] == [1, 3]


def _append_many(path: str, line: bytes, count: int) -> None:
    for _ in range(count):
        append_line(path, line)


def _wide_line(run_id: str, fields: int) -> bytes:
    gold = [GoldField(f"c{i}", f"f.x{j}", "text", "a") for i in range(2) for j in range(fields)]
    answers = [Prediction("c0", f"f.x{j}", "a") for j in range(fields)]
    key = LedgerKey(KEY)
    entry = ledger_entry(
        score(gold, answers), system="wide", run_id=run_id,
        gold_identity=gold_identity(gold, key), key=key, time=MOMENT,
    )  # fmt: skip
    return entry.to_line()


def test_concurrent_appends_from_two_processes_never_interleave(demo: Demo) -> None:
    first, second = _wide_line("a", 400), _wide_line("b", 300)
    assert len(second) > 128 * 1024  # far beyond what one page or a pipe writes at once
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_append_many, args=(str(demo.ledger), line, 25))
        for line in (first, second)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    found = demo.ledger.read_bytes().splitlines(keepends=True)
    assert (found.count(first), found.count(second), len(found)) == (25, 25, 50)


def test_the_reader_would_see_an_interleaved_line() -> None:
    # The test above can fail: two lines mixed are not a line.
    text = b'{"format":"chartscore.ledger","format_version":1,"gold_identity":"hmac-sha256:'
    with pytest.raises(ChartscoreError):
        LedgerEntry.from_line(text + text)


def test_a_gold_file_that_changed_is_not_recorded(demo: Demo) -> None:
    before = gold_state(demo.gold)
    with demo.gold.open("a", encoding="utf-8") as handle:
        handle.write("\n")
    with pytest.raises(ChartscoreError) as raised:
        pinned_gold_identity(demo.gold, LedgerKey(KEY), before)
    assert str(raised.value) == "ledger_gold_changed (gold)"


# --- reading and the table ------------------------------------------------------------------


def test_the_latest_line_of_a_run_wins(demo: Demo) -> None:
    record(demo, "model-v1")
    record(demo, "model-v2", run_id="model-v1")  # re-recorded under the same run id
    ledger = read_ledger(demo.ledger)
    (latest,) = ledger.latest()
    assert (latest.line, latest.entry.system) == (2, "model-v2")
    table = ledger_table(ledger)
    assert "1 superseded" in table and "129/186" in table and "116/186" not in table
    every = ledger_table(ledger, every_line=True)
    assert "116/186" in every and "129/186" in every


def _scored_tables(text: str) -> list[str]:
    blocks = text.split("\n\n")
    return [block for block in blocks if block.startswith("Scored runs")]


def test_mixed_configurations_are_never_side_by_side_without_the_flag(demo: Demo) -> None:
    record(demo, "model-v1")
    wide = json.loads(demo.schema.read_text(encoding="utf-8"))
    wide["fields"]["echo.lvef"]["tolerance"] = "10"
    other = demo.root / "wide.json"
    other.write_text(json.dumps(wide), encoding="utf-8")
    schema = load_schema(other)
    report = score_files(demo.gold, demo.run("model-v2"), schema=schema)
    record_run(
        demo.ledger, report, key=LedgerKey(KEY), gold=demo.gold,
        gold_before=gold_state(demo.gold), system="model-v2", schema=schema, time=MOMENT,
    )  # fmt: skip
    ledger = read_ledger(demo.ledger)
    apart = ledger_table(ledger)
    tables = _scored_tables(apart)
    assert len(tables) == 2
    assert all(("model-v1" in table) != ("model-v2" in table) for table in tables)
    assert "configuration 2 differs from 1 in: schema_digest" in apart
    together = ledger_table(ledger, mixed=True)
    (table,) = _scored_tables(together)
    assert "model-v1" in table and "model-v2" in table and "config" in table
    status, _, err = run(["ledger", "show", "--ledger", str(demo.ledger)])
    assert status == 0 and "shown apart; --mixed puts them side by side" in err
    status, out, err = run(["ledger", "show", "--ledger", str(demo.ledger), "--mixed"])
    assert (status, err) == (0, "") and out == together


def test_runs_on_other_gold_or_under_another_key_are_other_gold_sets(demo: Demo) -> None:
    record(demo, "model-v1")
    schema = load_schema(demo.schema)
    report = score_files(demo.gold, demo.run("model-v1"), schema=schema)
    other_key = LedgerKey(KEY[::-1])
    record_run(
        demo.ledger, report, key=other_key, gold=demo.gold,
        gold_before=gold_state(demo.gold), system="model-v1", run_id="again", schema=schema,
    )  # fmt: skip
    table = ledger_table(read_ledger(demo.ledger))
    assert "2 runs on 2 gold sets" in table
    assert f"(key {other_key.key_id})" in table and f"(key {LedgerKey(KEY).key_id})" in table


def test_a_file_that_is_not_a_ledger_is_refused_by_show(demo: Demo) -> None:
    status, _, err = run(["ledger", "show", "--ledger", str(demo.gold)])
    assert status == 1 and err.startswith("chartscore: error: not_a_ledger (ledger line 1)")
    empty = demo.root / "empty.jsonl"
    empty.write_bytes(b"")
    status, out, _ = run(["ledger", "show", "--ledger", str(empty)])
    assert status == 0 and out.startswith("chartscore ledger: 0 runs on 0 gold sets")


# --- the digests --------------------------------------------------------------------------


def test_the_schema_digest_is_of_the_schema_not_its_spelling(tmp_path: Path) -> None:
    document = {
        "fields": {
            "echo.lvef": {"type": "number", "tolerance": "0.50"},
            "hx.smoking": {"type": "categorical", "choices": ["never", "Former"]},
            "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
        }
    }
    expected_text = (
        '{"fields":{"echo.lvef":{"field_type":"number","tolerance":"0.5"},'
        '"hx.smoking":{"choices":["former","never"],"field_type":"categorical"},'
        '"triage.acuity":{"field_type":"ordinal","levels":["1","2","3"]}}}'
    )
    mac = hmac.digest(KEY, b"chartscore schema 1\n" + expected_text.encode(), "sha256")
    expected = "hmac-sha256:" + mac.hex()
    key = LedgerKey(KEY)
    assert schema_digest(Schema.from_dict(document), key) == expected
    toml = tmp_path / "schema.toml"
    toml.write_text(
        '[fields."triage.acuity"]\ntype = "ordinal"\nlevels = ["1", "2", "3"]\n'
        '[fields."hx.smoking"]\ntype = "categorical"\nchoices = ["Former", "never"]\n'
        '[fields."echo.lvef"]\ntype = "number"\ntolerance = 0.5\n',
        encoding="utf-8",
    )
    assert tomllib.loads(toml.read_text(encoding="utf-8"))
    assert schema_digest(load_schema(toml), key) == expected
    assert schema_digest(None, key) is None
    assert schema_digest(Schema.from_dict(document), LedgerKey(KEY[::-1])) != expected


def test_every_schema_setting_changes_the_digest() -> None:
    specs = [
        FieldSpec("number", tolerance=1),
        FieldSpec("number", tolerance=2),
        FieldSpec("number"),
        FieldSpec("text"),
        FieldSpec("date", tolerance_days=1),
        FieldSpec("ordinal", levels=["1", "2"]),
        FieldSpec("ordinal", levels=["2", "1"]),
        FieldSpec("ordinal", levels=[1, 2]),
        FieldSpec("categorical", choices=["a"]),
        FieldSpec("categorical", choices=["a", "b"]),
        FieldSpec("multi", choices=["a"]),
    ]
    key = LedgerKey(KEY)
    digests = {schema_digest(Schema({"f.x": spec}), key) for spec in specs}
    assert len(digests) == len(specs)
    assert schema_digest(Schema({"f.y": FieldSpec("text")}), key) not in digests


def test_the_code_hash_is_the_documented_one(tmp_path: Path) -> None:
    digest = hashlib.sha256()
    files = sorted(
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if path.relative_to(SRC).parts[0] not in EXCLUDED and "__pycache__" not in path.parts
    )
    assert "scoring/scorer.py" in files and "stats/binomial.py" in files
    assert "documents/report.py" in files and "documents/__init__.py" in files
    assert not any(name.startswith(("cli/", "render/")) for name in files)
    for name in files:
        data = (SRC / name).read_bytes()
        digest.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    assert code_hash() == "sha256:" + digest.hexdigest()
    copy = tmp_path / "chartscore"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert code_hash_of(copy) == code_hash()
    (copy / "render" / "table.py").write_text("# a rendering change\n", encoding="utf-8")
    assert code_hash_of(copy) == code_hash()  # renderers cannot change a number
    with (copy / "scoring" / "agreement.py").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert code_hash_of(copy) != code_hash()


# --- the command line ---------------------------------------------------------------------


def test_score_compare_and_share_append_with_ledger(demo: Demo, tmp_path: Path) -> None:
    common = ["--gold", str(demo.gold), "--schema", str(demo.schema), "--ledger", str(demo.ledger)]
    status, out, err = run(
        ["score", "--predictions", str(demo.run("model-v1")), *common, "--out", "-"], demo.key
    )
    assert status == 0 and err == "chartscore: ledger: score run model-v1 recorded\n"
    assert json.loads(out)["format"] == "chartscore.report"
    status, out, err = run(
        ["compare", "--baseline", str(demo.run("model-v1")),
         "--candidate", str(demo.run("model-v2")), *common, "--ledger-key", str(demo.key)],
    )  # fmt: skip
    assert status == 0 and err == "chartscore: ledger: compare run model-v2.vs.model-v1 recorded\n"
    (first, second) = [LedgerEntry.from_line(line) for line in lines(demo.ledger)]
    assert first.result == score_files(demo.gold, demo.run("model-v1"), schema=demo.schema)
    compared = compare_files(
        demo.gold, demo.run("model-v1"), demo.run("model-v2"), schema=demo.schema
    )
    assert (second.kind, second.system, second.versus) == ("compare", "model-v2", "model-v1")
    assert second.result == compared
    # share, on a small gold set (the two charts of the README), with a label given.
    small = tmp_path / "small"
    small.mkdir()
    gold = small / "gold.jsonl"
    gold.write_text(
        '{"case_id": "c1", "field_id": "f.x", "field_type": "text", "value": "a"}\n'
        '{"case_id": "c2", "field_id": "f.x", "field_type": "text", "value": "b"}\n',
        encoding="utf-8",
    )
    answers = small / "answers.jsonl"
    answers.write_text('{"case_id": "c1", "field_id": "f.x", "value": "a"}\n', encoding="utf-8")
    status, _, err = run(
        ["share", "--gold", str(gold), "--predictions", str(answers), "--min-cell", "2",
         "--ledger", str(demo.ledger), "--system", "tiny", "--run-id", "tiny@2"],
        demo.key,
    )  # fmt: skip
    assert status == 0 and err.endswith("chartscore: ledger: share run tiny@2 recorded\n")
    third = LedgerEntry.from_line(lines(demo.ledger)[2])
    assert (third.kind, third.setup.min_cell, third.system) == ("share", 2, "tiny")
    assert third.gold_identity != first.gold_identity


def test_ledger_options_are_checked_before_any_work(demo: Demo) -> None:
    files = ["--gold", str(demo.gold), "--predictions", str(demo.run("model-v1"))]
    files += ["--schema", str(demo.schema)]
    ledger = ["--ledger", str(demo.ledger)]
    cases = [
        (["score", *files, "--ledger-key", str(demo.key)], 2, "--ledger-key needs --ledger"),
        (["score", *files, "--system", "x"], 2, "--system needs --ledger"),
        (["score", *files, *ledger, "--system", "a b"], 2, "--system must be a plain name"),
        (["score", *files, *ledger, "--run-id", "-x"], 2, "--run-id needs a value"),
        (["score", *files, "--ledger", "-"], 2, "--ledger must name a file"),
        (["score", *files, *ledger, "--engine", "dask"], 2, "--ledger applies to --engine local"),
        (["score", *files, *ledger], 1, "ledger_key_missing (ledger_key)"),
        (["score", *files, "--ledger", str(demo.gold), "--ledger-key", str(demo.key)], 1,
         "output_is_input (ledger)"),
    ]  # fmt: skip
    for argv, expected_status, expected in cases:
        status, out, err = run(argv)
        assert (status, out) == (expected_status, ""), argv
        assert expected in err, (argv, err)
        assert not demo.ledger.exists()
    gold_stdin = ["score", "--gold", "-", "--predictions", str(demo.run("model-v1")), *ledger]
    status, _, err = run(gold_stdin, demo.key)
    assert status == 2 and "--ledger needs --gold from a file" in err
    odd = demo.runs / "model v3.jsonl"
    shutil.copy(demo.run("model-v1"), odd)
    status, _, err = run(
        ["score", "--gold", str(demo.gold), "--predictions", str(odd), "--schema",
         str(demo.schema), *ledger], demo.key
    )  # fmt: skip
    assert status == 1 and "invalid_run_label (predictions)" in err and "v3" not in err
    assert not demo.ledger.exists()


def _command_inputs(demo: Demo, command: str) -> list[str]:
    """The demo's inputs of ``score``/``share`` (model-v1) or ``compare`` (model-v1, model-v2)."""
    inputs = ["--gold", str(demo.gold), "--schema", str(demo.schema)]
    if command == "compare":
        return [
            *inputs,
            "--baseline",
            str(demo.run("model-v1")),
            "--candidate",
            str(demo.run("model-v2")),
        ]
    return [*inputs, "--predictions", str(demo.run("model-v1"))]


@pytest.mark.parametrize("command", ["score", "compare", "share"])
def test_an_exposed_or_foreign_ledger_is_refused_before_the_report_is_written(
    demo: Demo, command: str
) -> None:
    # docs/cli.md: an existing ledger must be mode 0600 and a ledger, checked before any
    # work. It was checked only when the line was appended, after --out was replaced.
    inputs = _command_inputs(demo, command)
    exposed = demo.root / "exposed.jsonl"
    exposed.write_bytes(b"")
    os.chmod(exposed, 0o644)
    foreign = demo.root / "foreign.jsonl"
    foreign.write_bytes(b'{"not": "a ledger"}\n')
    os.chmod(foreign, 0o600)
    out = demo.root / "kept.json"
    for ledger, code in ((exposed, "file_exposed"), (foreign, "not_a_ledger")):
        out.write_bytes(b"an earlier report\n")
        before = ledger.read_bytes()
        status, stdout, err = run(
            [command, *inputs, "--ledger", str(ledger), "--out", str(out)], demo.key
        )
        assert (status, stdout) == (1, ""), code
        assert err == f"chartscore: error: {code} (ledger): {describe(ErrorCode(code))}\n"
        assert out.read_bytes() == b"an earlier report\n"  # no work was done
        assert ledger.read_bytes() == before


@pytest.mark.parametrize("command", ["score", "score --partial-out", "compare", "share"])
def test_a_ledger_that_is_also_an_output_is_refused_before_any_work(
    demo: Demo, command: str
) -> None:
    # It was written as the report (or partial), and then refused as a ledger: file_exposed.
    name, *flag = command.split()
    flag = flag or ["--out"]
    inputs = _command_inputs(demo, name)
    other = demo.root / "other" / ".." / demo.ledger.name  # another spelling of the same file
    (demo.root / "other").mkdir()
    expected = (
        f"chartscore: error: usage: --ledger and {flag[0]} must name different files; "
        f"see chartscore {name} --help\n"
    )
    for out in (demo.ledger, other):
        status, stdout, err = run(
            [name, *inputs, "--ledger", str(demo.ledger), *flag, str(out)], demo.key
        )
        assert (status, stdout, err) == (2, "", expected), out
        assert not demo.ledger.exists()
    record(demo)  # an existing ledger, and a hard link to it
    before = demo.ledger.read_bytes()
    link = demo.root / "link.jsonl"
    os.link(demo.ledger, link)
    status, stdout, err = run(
        [name, *inputs, "--ledger", str(demo.ledger), *flag, str(link)], demo.key
    )
    assert (status, stdout, err) == (2, "", expected)
    assert demo.ledger.read_bytes() == before


def test_key_and_ledger_paths_are_never_shown(demo: Demo, tmp_path: Path) -> None:
    secret_dir = tmp_path / "MRN-ZQ12345"
    secret_dir.mkdir()
    exposed = write_key(secret_dir / "key", mode=0o644)
    files = ["--gold", str(demo.gold), "--predictions", str(demo.run("model-v1"))]
    status, _, err = run(
        ["score", *files, "--schema", str(demo.schema), "--ledger", str(secret_dir / "l.jsonl"),
         "--ledger-key", str(exposed)]
    )  # fmt: skip
    assert status == 1 and err.startswith("chartscore: error: file_exposed (ledger_key)")
    assert "ZQ12345" not in err
    status, _, err = run(["ledger", "show", "--ledger", str(secret_dir / "none.jsonl")])
    assert status == 1 and "ZQ12345" not in err and "file_unreadable (ledger)" in err


def test_the_inside_only_warning_heads_the_table(demo: Demo) -> None:
    entry = ledger_entry(
        score_files(demo.gold, demo.run("model-v1"), schema=demo.schema),
        system="model-v1",
        gold_identity="hmac-sha256:" + "a" * 64,
        key=LedgerKey(KEY),
        time=MOMENT,
    )
    append_line(demo.ledger, entry.to_line())
    text = ledger_table(read_ledger(demo.ledger))
    assert text.splitlines()[1].startswith("INSIDE ONLY")
    assert max(len(line) for line in text.splitlines()) <= 100


def test_a_shared_run_is_not_a_mixed_configuration_of_scored_runs(tmp_path: Path) -> None:
    from chartscore import share
    from chartscore.ledger.table import mixed_gold_sets

    gold = [GoldField(f"c{i}", "f.x", "text", "a") for i in range(12)]
    answers = [Prediction(f"c{i}", "f.x", "a") for i in range(12)]
    key = LedgerKey(KEY)
    identity = gold_identity(gold, key)
    ledger = tmp_path / "l.jsonl"
    for document in (score(gold, answers), share(gold, answers)):
        entry = ledger_entry(document, system="s", gold_identity=identity, key=key, time=MOMENT)
        append_line(ledger, entry.to_line())
    read = read_ledger(ledger)
    text = ledger_table(read)
    assert mixed_gold_sets(read) == 0 and "mixed configurations" not in text
    # Each kind is its own table anyway: its configuration is named, and nothing is mixed.
    assert "Scored runs (configuration 1)" in text and "Shared runs (configuration 2)" in text
    assert "differs from" not in text


def _table_of_runs(tmp_path: Path, runs: list[tuple[str, str | None]]) -> list[str]:
    # The ledger table's lines for one scored run per (system, run id) on one gold set.
    gold = [GoldField(f"c{i}", "f.x", "text", "a") for i in range(12)]
    answers = [Prediction(f"c{i}", "f.x", "a") for i in range(12)]
    key = LedgerKey(KEY)
    identity = gold_identity(gold, key)
    ledger = tmp_path / "l.jsonl"
    for system, run_id in runs:
        entry = ledger_entry(
            score(gold, answers),
            system=system,
            gold_identity=identity,
            key=key,
            time=MOMENT,
            run_id=run_id,
        )
        append_line(ledger, entry.to_line())
    return ledger_table(read_ledger(ledger)).splitlines()


def test_a_long_run_id_is_cut_in_its_middle_never_wrapped_into_a_second_row(
    tmp_path: Path,
) -> None:
    long_id = "nightly-" + "x" * 60 + "-prompt-v3"
    # The long id is model-a's.
    lines = _table_of_runs(tmp_path, [("model-a", long_id), ("model-b", None)])
    rows = [line for line in lines if line.startswith("nightly-")]
    others = [line for line in lines if line.startswith("model-b")]
    assert len(rows) == len(others) > 0  # one line a row in every panel, as the short id's
    assert all("..." in line and line.split()[0].endswith("prompt-v3") for line in rows)
    assert "\n".join(lines).isascii()
    assert all(len(line) <= 100 for line in lines) and long_id not in "\n".join(lines)
    assert not any(line.startswith("xxxx") for line in lines)  # no wrapped remainder


def test_a_run_id_up_to_32_characters_is_shown_whole_the_columns_in_panels(
    tmp_path: Path,
) -> None:
    # An analyst's `ledger show --all` read "pred_syste...em_a" for a comparison's
    # pred_system_b.vs.pred_system_a: the cut hid which system was which. The run column
    # now widens to the renderer's label cap (32), the other columns going to panels.
    run_id = "pred_system_b.vs.pred_system_a"
    # Each run id its system's: no system column, room 24.
    lines = _table_of_runs(tmp_path, [(run_id, None), ("model-b", None)])
    rows = [line for line in lines if line.startswith("pred_")]
    others = [line for line in lines if line.startswith("model-b")]
    assert len(rows) == len(others) > 1  # one line a row in every panel
    assert all(line.split()[0] == run_id for line in rows)
    assert all(len(line) <= 100 for line in lines) and "..." not in "\n".join(rows)


def test_a_time_whose_zone_raises_or_overflows_is_usage() -> None:
    # A caller's tzinfo ran unguarded (its RuntimeError left record_run), and a time late in
    # the year 9999 overflowed when turned to UTC.
    class Hostile(datetime.tzinfo):
        def utcoffset(self, moment: datetime.datetime | None) -> datetime.timedelta:
            raise RuntimeError("ZQ canary")

    late = datetime.timezone(datetime.timedelta(hours=-5))
    for moment in (
        datetime.datetime(2020, 1, 1, tzinfo=Hostile()),
        datetime.datetime(9999, 12, 31, 23, tzinfo=late),
        datetime.datetime(2020, 1, 1),  # naive
    ):
        with pytest.raises(ChartscoreError) as raised:
            utc_time(moment)
        assert raised.value.code is E.USAGE
        assert raised.value.__context__ is None and raised.value.__cause__ is None
    assert utc_time(datetime.datetime(2020, 1, 1, tzinfo=late)) == "2020-01-01T05:00:00Z"
