"""The Dask engine: part files, key-hashed partitions and merged partials give one process's bytes.

Every test but one uses the synchronous scheduler (fast, in this process); one
test starts a real local cluster of two worker processes in a subprocess and
watches everything it prints. The reference is always ``score_files`` on the
part files concatenated in sorted order: the same report byte for byte, and
the same failure, named by part and line instead of the concatenated line.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import (
    ChartscoreError,
    ErrorCode,
    GoldField,
    InputKind,
    Prediction,
    Report,
    score_files,
)
from chartscore.engine import parts, score_dask
from chartscore.engine.parts import partition_of, stable_hash
from chartscore.errors import describe
from chartscore.io.hints import explained

from helpers import SCHEMA, chain_dict, datasets, digest, dumps, examples, thorough_only

ROOT = Path(__file__).resolve().parent.parent
SYNC = "synchronous"


# --- building part files ---------------------------------------------------------------------


def gold_line(row: GoldField) -> str:
    return dumps(
        {
            "case_id": row.case_id,
            "field_id": row.field_id,
            "field_type": row.field_type.value,
            "value": row.value,
        }
    )


def prediction_line(row: Prediction, index: int) -> str:
    data: dict[str, object] = {
        "case_id": row.case_id,
        "field_id": row.field_id,
        "value": row.value,
    }
    if row.value is not None and index % 3 == 0:  # some answers carry supporting evidence
        fact = digest(f"fact-{index}")
        data["normalized_fact_digest"] = fact
        data["evidence_chain"] = chain_dict(row.field_id, fact)
    return dumps(data)


class Parts:
    """Lines split into numbered part files, and the map back to the concatenation."""

    def __init__(self, folder: Path, name: str, lines: Sequence[str], cuts: Sequence[int]) -> None:
        self.paths: list[Path] = []
        self.starts: list[int] = []
        bounds = [0, *sorted(cuts), len(lines)]
        for index, (start, end) in enumerate(itertools.pairwise(bounds)):
            path = folder / f"{name}-{index:03d}.jsonl"
            path.write_text("".join(line + "\n" for line in lines[start:end]), encoding="utf-8")
            self.paths.append(path)
            self.starts.append(start)
        self.whole = folder / f"{name}.whole"
        self.whole.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        self.pattern = str(folder / f"{name}-*.jsonl")

    def place(self, line: int) -> tuple[int, int]:
        """(part, line in part) of a 1-based line of the concatenation."""
        part = max(index for index, start in enumerate(self.starts) if start < line)
        return part + 1, line - self.starts[part]


def split(
    folder: Path, name: str, lines: Sequence[str], parts_wanted: int, rng: random.Random
) -> Parts:
    cuts = [rng.randint(0, len(lines)) for _ in range(parts_wanted - 1)]
    return Parts(folder, name, lines, cuts)


def expected_error(
    gold: Parts, predictions: Parts, call: Callable[[], object]
) -> ChartscoreError | None:
    """The one-process error, re-addressed to (part, line); None if scoring succeeds."""
    error = None
    try:
        call()
    except ChartscoreError as caught:
        error = caught
    if error is None:
        return None
    if error.line is None or error.input not in (InputKind.GOLD, InputKind.PREDICTIONS):
        return error
    own, other = (gold, predictions) if error.input is InputKind.GOLD else (predictions, gold)
    place = own.place(error.line)
    moved = ChartscoreError(
        error.code,
        input=error.input,
        part=place[0],
        line=place[1],
        field_id=error.field_id,
        key=error.key,
    )
    # The hint of a first line: the failing part file stands for its input (another part
    # than the first, too), the other input's first part for that one.
    kinds = [InputKind.GOLD, InputKind.PREDICTIONS]
    other_kind = kinds[1 - kinds.index(error.input)]
    files = [(str(own.paths[place[0] - 1]), error.input), (str(other.paths[0]), other_kind)]
    return explained(moved, files)


def dask_outcome(call: Callable[[], Report]) -> str:
    try:
        return "report " + call().to_json()
    except ChartscoreError as error:
        assert error.__cause__ is None and error.__context__ is None
        return "error " + str(error)


# --- byte-identical reports --------------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    datasets(),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(1, 9),
    st.sampled_from(["error", "ignore"]),
    st.integers(0, 2**32),
)
def test_reports_are_byte_identical_to_one_process_on_the_concatenation(
    dataset: tuple[list[GoldField], list[Prediction]],
    gold_parts: int,
    prediction_parts: int,
    partitions: int,
    extra: str,
    seed: int,
) -> None:
    gold, predictions = dataset
    rng = random.Random(seed)
    prediction_lines = [prediction_line(row, i) for i, row in enumerate(predictions)]
    if extra == "ignore":
        prediction_lines.append(dumps({"case_id": "extra-1", "field_id": "t.note", "value": "x"}))
    rng.shuffle(prediction_lines)  # predictions in another order than gold, across parts
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        gold_files = split(folder, "gold", [gold_line(row) for row in gold], gold_parts, rng)
        prediction_files = split(folder, "pred", prediction_lines, prediction_parts, rng)
        whole = score_files(
            gold_files.whole,
            prediction_files.whole,
            schema=SCHEMA,
            extra_predictions=extra,  # type: ignore[arg-type]
        ).to_json()
        report = score_dask(
            gold_files.pattern,
            prediction_files.paths[::-1],  # a list, in any order: parts are sorted
            schema=SCHEMA,
            scheduler=SYNC,
            partitions=partitions,
            extra_predictions=extra,  # type: ignore[arg-type]
        )
    assert report.to_json() == whole


def test_gzipped_parts_and_the_threads_scheduler(tmp_path: Path) -> None:
    rng = random.Random(7)
    gold, predictions = _fixed_dataset()
    gold_files = split(tmp_path, "gold", [gold_line(row) for row in gold], 3, rng)
    prediction_files = split(
        tmp_path, "pred", [prediction_line(row, i) for i, row in enumerate(predictions)], 2, rng
    )
    for path in gold_files.paths:
        Path(f"{path}.gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    whole = score_files(gold_files.whole, prediction_files.whole, schema=SCHEMA).to_json()
    for scheduler in (SYNC, "threads"):
        report = score_dask(
            str(tmp_path / "gold-*.jsonl.gz"),
            prediction_files.pattern,
            schema=SCHEMA,
            scheduler=scheduler,
            partitions=4,
        )
        assert report.to_json() == whole


def test_run_cost_merges_across_partitions_and_each_part_may_carry_the_header(
    tmp_path: Path,
) -> None:
    # A part's run header goes to every partition (engine/parts.py), so the merged run
    # section is one process's, byte for byte; parts whose headers differ are refused.
    gold, predictions = _fixed_dataset()
    (tmp_path / "gold.jsonl").write_text("".join(gold_line(row) + "\n" for row in gold))
    header = dumps({"chartscore_run": {"model": "acme-llm", "price": {"currency": "EUR"}}})
    lines = []
    for index, row in enumerate(predictions):
        data = json.loads(prediction_line(row, index))
        data["usage"] = {"input_tokens": index, "latency_ms": index * 7 + 1, "cost": 1}
        lines.append(json.dumps(data))
    halves = (lines[: len(lines) // 2], lines[len(lines) // 2 :])
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join([header, *lines]) + "\n")
    for number, half in enumerate(halves, 1):
        (tmp_path / f"pred-{number}.jsonl").write_text("\n".join([header, *half]) + "\n")
    expected = score_files(tmp_path / "gold.jsonl", whole, schema=SCHEMA).to_json()
    assert '"run"' in expected
    pattern = str(tmp_path / "pred-*.jsonl")
    for partitions in (1, 3):
        report = score_dask(
            str(tmp_path / "gold.jsonl"), pattern, schema=SCHEMA, scheduler=SYNC,
            partitions=partitions,
        )  # fmt: skip
        assert report.to_json() == expected
    other = dumps({"chartscore_run": {"model": "other-llm"}})
    (tmp_path / "pred-2.jsonl").write_text("\n".join([other, *halves[1]]) + "\n")
    with pytest.raises(ChartscoreError) as caught:
        score_dask(str(tmp_path / "gold.jsonl"), pattern, schema=SCHEMA, scheduler=SYNC)
    assert caught.value.code is ErrorCode.RUN_HEADERS_DIFFER


def _fixed_dataset() -> tuple[list[GoldField], list[Prediction]]:
    gold = []
    predictions = []
    for case in range(30):
        for field_id, (field_type, values, extras) in {
            "t.note": ("text", ["alpha", "beta"], [" ALPHA ", 3]),
            "c.smoking": ("categorical", ["never", "former"], ["Former ", "ex"]),
            "n.lvef": ("number", [35, 60], ["35", 40]),
        }.items():
            value = values[case % len(values)]
            gold.append(GoldField(f"case-{case}", field_id, field_type, value))
            if case % 5:
                answer = [*values, *extras][case % (len(values) + len(extras))]
                predictions.append(Prediction(f"case-{case}", field_id, answer))
    return gold, predictions


def test_a_corrupt_gzip_part_is_unreadable_at_its_part(tmp_path: Path) -> None:
    (tmp_path / "gold-1.jsonl").write_text(
        '{"case_id": "a", "field_id": "t.note", "field_type": "text", "value": "x"}\n'
    )
    data = gzip.compress(b'{"case_id": "b", "field_id": "t.note", "field_type": "text"}\n' * 50)
    (tmp_path / "gold-2.jsonl.gz").write_bytes(data[: len(data) // 2])  # truncated
    (tmp_path / "pred.jsonl").write_text("")
    with pytest.raises(ChartscoreError) as caught:
        score_dask(str(tmp_path / "gold-*"), str(tmp_path / "pred.jsonl"), scheduler=SYNC)
    assert caught.value.code is ErrorCode.FILE_UNREADABLE
    assert (caught.value.input, caught.value.part) == (InputKind.GOLD, 2)


def test_gzip_is_known_by_its_first_bytes_not_its_name(tmp_path: Path) -> None:
    # As chartscore score reads a file: gzip data named .jsonl is decompressed,
    # plain text named .gz is read as it is.
    rows = [g(f"c{i}") for i in range(6)]
    write(tmp_path / "whole.txt", rows)
    (tmp_path / "gold-1.jsonl").write_bytes(
        gzip.compress(write(tmp_path / "a", rows[:3]).read_bytes())
    )
    write(tmp_path / "gold-2.jsonl.gz", rows[3:])
    predictions = write(tmp_path / "pred.jsonl", [p("c1"), p("c4", value="b")])
    whole = score_files(tmp_path / "whole.txt", predictions).to_json()
    for name in ("gold-1.jsonl", "gold-2.jsonl.gz"):  # the local engine reads each alike
        assert score_files(tmp_path / name, predictions, extra_predictions="ignore")
    for scheduler in (SYNC, "threads"):
        report = score_dask(str(tmp_path / "gold-*"), str(predictions), scheduler=scheduler)
        assert report.to_json() == whole


FIFO_PROGRAM = textwrap.dedent(
    """
    import sys
    from chartscore import ChartscoreError, score_files
    from chartscore.engine import score_dask

    gold, predictions, fifo = sys.argv[1:]
    for call in (
        lambda: score_files(fifo, predictions),
        lambda: score_files(gold, fifo),
        lambda: score_dask(gold + "*", predictions, scheduler="synchronous"),
        lambda: score_dask(gold, predictions + "*", scheduler="synchronous"),
    ):
        try:
            call()
            print("no error")
        except ChartscoreError as error:
            print(error)
    """
)


def test_a_fifo_part_is_refused_at_once(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.jsonl", [g("c1")])
    predictions = write(tmp_path / "pred.jsonl", [p("c1")])
    for fifo in (tmp_path / "gold.jsonl.fifo", tmp_path / "pred.jsonl.fifo"):
        os.mkfifo(fifo)  # nobody ever writes to them: opening one for reading would block
    try:
        result = subprocess.run(
            [sys.executable, "-c", FIFO_PROGRAM, str(gold), str(predictions), str(fifo)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO part blocked the run")
    assert result.stdout.splitlines() == [
        "file_unreadable (gold)",  # the local engine, at once
        "file_unreadable (predictions)",
        "file_unreadable (gold part 2)",  # the Dask engine: the same code, naming the part
        "file_unreadable (predictions part 2)",
    ], result.stderr[-2000:]


# --- the same failure as one process, by part and line -----------------------------------------

GOLD_FAULTS = ("duplicate", "retype", "mixed", "bad_json", "bad_value")
PREDICTION_FAULTS = ("unknown", "duplicate", "bad_json")


def inject(lines: list[str], fault: str, rng: random.Random, gold: bool) -> None:
    at = rng.randint(0, len(lines))
    if fault == "duplicate" and lines:
        lines.insert(at, lines[rng.randrange(min(at, len(lines) - 1) + 1)])
    elif fault == "bad_json":
        lines.insert(at, '{"case_id": "zz", "field_id": ')
    elif fault == "retype":  # a known field id with another type
        rows = [line for line in lines if not line.startswith('{"case_id": "zz", ')]
        field_id = json.loads(rng.choice(rows))["field_id"] if rows else "t.note"
        new_type, value = rng.choice([("text", "x"), ("number", 1), ("boolean", True)])
        row = {"case_id": f"zz-{at}", "field_id": field_id, "field_type": new_type, "value": value}
        lines.insert(at, dumps(row))
    elif fault == "mixed":  # a new field id, two rows of two types: rarely in one partition
        for case_id, field_type, value in (("zz-m1", "text", "x"), ("zz-m2", "number", 2)):
            row = {
                "case_id": case_id,
                "field_id": "z.mixed",
                "field_type": field_type,
                "value": value,
            }
            lines.insert(rng.randint(0, len(lines)), dumps(row))
    elif fault == "bad_value":
        row = {
            "case_id": f"zz-{at}",
            "field_id": "n.lvef",
            "field_type": "number",
            "value": "12 mg",
        }
        lines.insert(at, dumps(row))
    elif fault == "unknown":
        lines.insert(at, dumps({"case_id": "zz-unknown", "field_id": "t.note", "value": "a"}))
    assert gold or fault in PREDICTION_FAULTS


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    datasets(),
    st.lists(st.sampled_from(GOLD_FAULTS), max_size=2),
    st.lists(st.sampled_from(PREDICTION_FAULTS), max_size=2),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 8),
    st.booleans(),
    st.integers(0, 2**32),
)
def test_the_error_is_the_one_one_process_meets_first(
    dataset: tuple[list[GoldField], list[Prediction]],
    gold_faults: list[str],
    prediction_faults: list[str],
    gold_parts: int,
    prediction_parts: int,
    partitions: int,
    strict: bool,
    seed: int,
) -> None:
    gold, predictions = dataset
    rng = random.Random(seed)
    gold_lines = [gold_line(row) for row in gold]
    prediction_lines = [prediction_line(row, i) for i, row in enumerate(predictions)]
    rng.shuffle(prediction_lines)
    for fault in gold_faults:
        inject(gold_lines, fault, rng, gold=True)
    for fault in prediction_faults:
        inject(prediction_lines, fault, rng, gold=False)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        gold_files = split(folder, "gold", gold_lines, gold_parts, rng)
        prediction_files = split(folder, "pred", prediction_lines, prediction_parts, rng)
        expected = expected_error(
            gold_files,
            prediction_files,
            lambda: score_files(
                gold_files.whole, prediction_files.whole, schema=SCHEMA, strict_schema=strict
            ),
        )
        outcome = dask_outcome(
            lambda: score_dask(
                gold_files.pattern,
                prediction_files.pattern,
                schema=SCHEMA,
                scheduler=SYNC,
                partitions=partitions,
                strict_schema=strict,
            )
        )
        if expected is None:
            whole = score_files(gold_files.whole, prediction_files.whole, schema=SCHEMA)
            assert outcome == "report " + whole.to_json()
        else:
            assert outcome == f"error {expected}"


def write(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    path.write_text("".join(dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def g(
    case_id: str, field_id: str = "t.note", field_type: str = "text", value: object = "a"
) -> dict[str, object]:
    return {"case_id": case_id, "field_id": field_id, "field_type": field_type, "value": value}


def p(case_id: str, field_id: str = "t.note", value: object = "a") -> dict[str, object]:
    return {"case_id": case_id, "field_id": field_id, "value": value}


def run_error(gold: str | list[Path], predictions: str | list[Path], **options: object) -> str:
    outcomes = set()
    for partitions in (1, 2, 5):
        with pytest.raises(ChartscoreError) as caught:
            score_dask(gold, predictions, scheduler=SYNC, partitions=partitions, **options)  # type: ignore[arg-type]
        error = caught.value
        assert error.__cause__ is None and error.__context__ is None
        outcomes.add(str(error))
    assert len(outcomes) == 1, outcomes  # whatever the partitioning
    return outcomes.pop()


def test_a_duplicate_gold_key_in_a_later_part_names_that_part_and_line(tmp_path: Path) -> None:
    write(tmp_path / "gold-1.jsonl", [g("c1"), g("c2"), g("c3")])
    write(tmp_path / "gold-2.jsonl", [g("c4")])
    write(tmp_path / "gold-3.jsonl", [g("c5"), g("c6"), g("c7"), g("c2")])
    write(tmp_path / "pred.jsonl", [p("c1")])
    message = run_error(str(tmp_path / "gold-*.jsonl"), str(tmp_path / "pred.jsonl"))
    assert message == "duplicate_gold_key (gold part 3 line 4)"


def test_unknown_and_duplicate_prediction_keys(tmp_path: Path) -> None:
    write(tmp_path / "gold.jsonl", [g("c1"), g("c2"), g("c3")])
    write(tmp_path / "pred-1.jsonl", [p("c1")])
    write(tmp_path / "pred-2.jsonl", [p("c2"), p("c3"), p("nope")])
    gold = str(tmp_path / "gold.jsonl")
    assert (
        run_error(gold, str(tmp_path / "pred-*"))
        == "unknown_prediction_key (predictions part 2 line 3)"
    )
    write(tmp_path / "pred-2.jsonl", [p("c2"), p("c1")])
    assert (
        run_error(gold, str(tmp_path / "pred-*"))
        == "duplicate_prediction_key (predictions part 2 line 2)"
    )
    # An unknown key is skipped with extra_predictions="ignore", and counted.
    write(tmp_path / "pred-2.jsonl", [p("c2"), p("nope")])
    report = score_dask(gold, str(tmp_path / "pred-*"), scheduler=SYNC, extra_predictions="ignore")
    assert report.ignored_prediction_count == 1


def test_a_parse_error_in_a_middle_part_wins_over_later_errors_only(tmp_path: Path) -> None:
    write(tmp_path / "gold-1.jsonl", [g("c1"), g("c2")])
    (tmp_path / "gold-2.jsonl").write_text(dumps(g("c3")) + "\n{not json\n" + dumps(g("c4")) + "\n")
    write(tmp_path / "gold-3.jsonl", [g("c1")])  # a duplicate, but after the parse error
    write(tmp_path / "pred.jsonl", [p("nope")])  # predictions come after all gold
    pattern, predictions = str(tmp_path / "gold-*.jsonl"), str(tmp_path / "pred.jsonl")
    assert run_error(pattern, predictions) == "invalid_json (gold part 2 line 2)"
    write(tmp_path / "gold-1.jsonl", [g("c1"), g("c2"), g("c2")])  # now a duplicate comes first
    assert run_error(pattern, predictions) == "duplicate_gold_key (gold part 1 line 3)"


def test_empty_gold_even_with_unknown_predictions(tmp_path: Path) -> None:
    (tmp_path / "gold-1.jsonl").write_text("")
    (tmp_path / "gold-2.jsonl").write_text("\n  \n")  # blank lines only
    write(tmp_path / "pred.jsonl", [p("c1")])
    assert run_error(str(tmp_path / "gold-*"), str(tmp_path / "pred.jsonl")) == "empty_gold (gold)"


def test_one_field_with_two_types_in_different_parts(tmp_path: Path) -> None:
    # Most partitions see only the number rows: only a check over all parts finds the line.
    write(tmp_path / "gold-1.jsonl", [g("c1")])
    write(tmp_path / "gold-2.jsonl", [g(f"d{i}", field_type="number", value=i) for i in range(30)])
    write(tmp_path / "pred.jsonl", [])
    message = run_error(str(tmp_path / "gold-*"), str(tmp_path / "pred.jsonl"))
    assert message == "inconsistent_field_type (gold part 2 line 1)"
    # With a schema, a row of another type in a partition that has not seen the field would be
    # a schema mismatch there; one process (and the engine) calls it inconsistent.
    other = next(
        f"d{i}"
        for i in range(1000)
        if all(
            partition_of(f"d{i}", "n.lvef", n) != partition_of("c1", "n.lvef", n) for n in (2, 5)
        )
    )
    write(tmp_path / "gold-1.jsonl", [g("c1", "n.lvef", "number", 3)])
    write(tmp_path / "gold-2.jsonl", [g(other, "n.lvef", "text", "x")])
    message = run_error(str(tmp_path / "gold-*"), str(tmp_path / "pred.jsonl"), schema=SCHEMA)
    assert message == "inconsistent_field_type (gold part 2 line 1)"
    # When the first row has the wrong type, it is the schema that is named.
    write(tmp_path / "gold-1.jsonl", [g("c1", "n.lvef", "text", "x")])
    message = run_error(str(tmp_path / "gold-*"), str(tmp_path / "pred.jsonl"), schema=SCHEMA)
    assert message == "schema_type_mismatch (schema field n.lvef)"


def test_strict_schema_comes_after_gold_and_before_predictions(tmp_path: Path) -> None:
    write(tmp_path / "gold.jsonl", [g("c1")])
    write(tmp_path / "pred.jsonl", [p("nope")])
    message = run_error(
        str(tmp_path / "gold.jsonl"),
        str(tmp_path / "pred.jsonl"),
        schema=SCHEMA,
        strict_schema=True,
    )
    assert message == "schema_field_unused (schema field c.smoking)"


def test_arguments_are_checked_with_codes(tmp_path: Path) -> None:
    write(tmp_path / "gold.jsonl", [g("c1")])
    gold = str(tmp_path / "gold.jsonl")
    with pytest.raises(ChartscoreError) as caught:
        score_dask(str(tmp_path / "missing-*.jsonl"), gold, scheduler=SYNC)
    assert str(caught.value) == "no_part_files (gold)"
    with pytest.raises(ChartscoreError) as caught:
        score_dask(gold, [], scheduler=SYNC)
    assert str(caught.value) == "no_part_files (predictions)"
    for bad in ({"scheduler": "bogus"}, {"partitions": 0}, {"partitions": True}):
        with pytest.raises(ChartscoreError) as caught:
            score_dask(gold, gold, **bad)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE
    for bad in ({"extra_predictions": "skip"}, {"strict_schema": 1}):
        with pytest.raises(ChartscoreError) as caught:
            score_dask(gold, gold, scheduler=SYNC, **bad)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE
    with pytest.raises(ChartscoreError) as caught:
        score_dask([tmp_path / "absent.jsonl"], gold, scheduler=SYNC)
    assert str(caught.value) == "file_unreadable (gold part 1)"


@pytest.mark.parametrize(
    ("gold_line", "swapped"),
    [
        ({"case": "c1", "field_id": "f", "field_type": "text", "value": "v"}, False),
        ({"format": 3, "report": {}}, False),
        ({"case_id": "c1", "strata": {"site": "A"}}, False),
        (None, True),
    ],
    ids=["missing key", "report as gold", "strata as gold", "swapped"],
)
def test_a_part_error_names_what_one_process_names(
    tmp_path: Path, gold_line: dict[str, object] | None, swapped: bool
) -> None:
    """The engine's error is one process's, key and hint included, with the part added."""
    gold, predictions = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    write(gold, [g("c1")] if gold_line is None else [gold_line])
    write(predictions, [p("c1", "v")])
    if swapped:
        gold, predictions = predictions, gold
    with pytest.raises(ChartscoreError) as local:
        score_files(gold, predictions)
    with pytest.raises(ChartscoreError) as engine:
        score_dask(str(gold), str(predictions), scheduler=SYNC)
    assert local.value.hint is not None or local.value.key is not None
    where = f"{local.value.input} line"
    expected = str(local.value).replace(where, f"{local.value.input} part 1 line")
    assert str(engine.value) == expected
    assert engine.value.__context__ is None and engine.value.__cause__ is None


def test_an_unreachable_scheduler_is_engine_failed(tmp_path: Path) -> None:
    import dask

    write(tmp_path / "gold.jsonl", [g("c1")])
    gold = str(tmp_path / "gold.jsonl")
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(ChartscoreError) as caught,
    ):
        score_dask(gold, gold, scheduler="tcp://127.0.0.1:9")
    assert str(caught.value) == "engine_failed"
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_without_the_extra_it_is_engine_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "gold.jsonl", [g("c1")])
    gold = str(tmp_path / "gold.jsonl")
    # In-process schedulers need only dask; clusters need distributed (and, local, cryptography).
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ChartscoreError) as caught:
        score_dask(gold, gold, scheduler="tcp://127.0.0.1:9")
    assert str(caught.value) == "engine_unavailable"
    monkeypatch.setitem(sys.modules, "cryptography", None)
    with pytest.raises(ChartscoreError) as caught:
        score_dask(gold, gold)
    assert str(caught.value) == "engine_unavailable"
    with pytest.raises(ChartscoreError) as caught:
        score_dask(gold, gold, scheduler=SYNC)
    # Ran without them (and, as one process, names the key and the likely cause).
    assert str(caught.value) == (
        "unknown_key (predictions part 1 line 1, key field_type; "
        "this looks like a gold file: predictions have no field_type)"
    )
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask now fails
    with pytest.raises(ChartscoreError) as caught:
        score_dask(gold, gold, scheduler=SYNC)
    assert str(caught.value) == "engine_unavailable"
    assert caught.value.__context__ is None


def test_importing_chartscore_never_imports_dask() -> None:
    program = (
        "import sys, chartscore, chartscore.engine\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "[]"
    assert chartscore.score_dask is score_dask


def test_the_part_attribute_is_validated_shown_and_pickled() -> None:
    import pickle

    error = ChartscoreError(ErrorCode.INVALID_JSON, input=InputKind.GOLD, part=3, line=17)
    assert str(error) == "invalid_json (gold part 3 line 17)"
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.part, clone.line, str(clone)) == (3, 17, str(error))
    for bad in (0, -1, True, "3", 2.0):
        assert ChartscoreError(ErrorCode.INVALID_JSON, part=bad).part is None  # type: ignore[arg-type]


# --- the stable hash ---------------------------------------------------------------------------

KEYS = [
    ("case-1", "t.note"),
    ("MRN 0042", "dx.onset"),
    ("é\u00e9ü", "c.smoking"),
    ("\ud800lone", "n.lvef"),  # JSON can encode a lone surrogate
    ("x" * 128, "a.b.c"),
]


def reference_partition(case_id: str, field_id: str, partitions: int) -> int:
    """The documented definition (docs/scale.md), written out independently: by case alone."""

    def h(text: str) -> int:
        raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return int.from_bytes(raw, "little")

    return h(case_id) % partitions


def test_the_partition_hash_is_the_documented_one() -> None:
    for partitions in (1, 2, 7, 64, 1000):
        for case_id, field_id in KEYS:
            expected = reference_partition(case_id, field_id, partitions)
            assert partition_of(case_id, field_id, partitions) == expected
            remembering = parts._Partitioner(partitions)
            assert remembering(case_id, field_id) == expected
    assert stable_hash("") == int.from_bytes(hashlib.blake2b(b"", digest_size=8).digest(), "little")


def test_the_partition_hash_is_the_same_under_any_hash_seed() -> None:
    program = textwrap.dedent(
        f"""
        import json
        from chartscore.engine.parts import partition_of
        keys = {KEYS!r}
        print(json.dumps([partition_of(c, f, 97) for c, f in keys]))
        """
    )
    answers = []
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            timeout=120,
        )
        answers.append(json.loads(result.stdout))
    assert answers[0] == answers[1] == [reference_partition(c, f, 97) for c, f in KEYS]


# --- privacy -------------------------------------------------------------------------------------

markers = st.text(alphabet="ABCDEFGHJKMNPQRSTUVWXYZ", min_size=10, max_size=14).map(
    lambda s: "ZQ" + s
)


def canary_files(folder: Path, marker: str, fault: str) -> tuple[str, str]:
    """Part files whose case ids, values, evidence and folder name carry ``marker``."""
    secret = folder / f"MRN-{marker}-dir"
    secret.mkdir()
    gold_rows = [g(f"{marker}-{i}", "t.note", "text", f"note {marker} {i}") for i in range(6)] + [
        g(f"{marker}-c{i}", "c.smoking", "categorical", "former") for i in range(4)
    ]
    prediction_rows = [p(f"{marker}-{i}", "t.note", f"{marker} answer") for i in range(6)]
    if fault == "duplicate_gold":
        gold_rows.append(g(f"{marker}-3", "t.note", "text", marker))
    elif fault == "unknown":
        prediction_rows.append(p(f"{marker}-unknown", "t.note", marker))
    elif fault == "bad_value":
        gold_rows.append(g(f"{marker}-n", "n.lvef", "number", f"{marker} mg"))
    elif fault == "unknown_key":
        prediction_rows.append({**p(f"{marker}-1"), marker.lower(): 1})
    write(secret / f"gold-{marker}-1.jsonl", gold_rows[:5])
    write(secret / f"gold-{marker}-2.jsonl", gold_rows[5:])
    write(secret / f"pred-{marker}-1.jsonl", prediction_rows)
    return str(secret / "gold-*.jsonl"), str(secret / "pred-*.jsonl")


def assert_clean(text: str, marker: str, where: str) -> None:
    for needle in (marker, marker.lower(), marker.casefold()):
        assert needle not in text, f"{where} leaks the canary: {text[:300]!r}"


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markers, st.sampled_from(["none", "duplicate_gold", "unknown", "bad_value", "unknown_key"]))
def test_canaries_never_reach_errors_or_reports(marker: str, fault: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        gold, predictions = canary_files(Path(scratch), marker, fault)
        outcome = None
        error = None
        try:
            outcome = score_dask(gold, predictions, scheduler=SYNC, partitions=3)
        except ChartscoreError as caught:
            error = caught
    if fault == "none":
        assert outcome is not None
        assert_clean(outcome.to_json(), marker, "report")
        assert_clean(repr(outcome), marker, "report repr")
        return
    assert error is not None
    assert error.__cause__ is None and error.__context__ is None
    for where, text in {
        "str": str(error),
        "repr": repr(error),
        "traceback": "".join(traceback.format_exception(error)),
        "vars": repr(vars(error)),
    }.items():
        assert_clean(text, marker, where)


def test_partition_results_and_failures_hide_their_contents() -> None:
    from chartscore.engine.partition import PartitionResult, score_partition

    (result,) = score_partition(None, "error", [], [])
    assert "hidden" in repr(result)
    assert isinstance(result, PartitionResult)


# --- one real local cluster ------------------------------------------------------------------

CLUSTER_PROGRAM = textwrap.dedent(
    """
    import json, sys
    from chartscore import ChartscoreError, score_files
    from chartscore.engine import score_dask

    if __name__ == "__main__":
        gold, predictions, gold_whole, predictions_whole, bad_gold = sys.argv[1:]
        report = score_dask(gold, predictions, partitions=3)
        same = report.to_json() == score_files(gold_whole, predictions_whole).to_json()
        try:
            score_dask(bad_gold, predictions)
            message = "no error"
        except ChartscoreError as error:
            message = str(error)
        print(json.dumps({"same": same, "error": message}))
    """
)


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if mark.encode() in environ:
            found.append(int(entry.name))
    return found


@thorough_only("starts a real local cluster (about 6 s)")
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_a_real_local_cluster_is_identical_quiet_and_cleaned_up(tmp_path: Path) -> None:
    marker = "ZQCLUSTERCANARYKX"
    secret = tmp_path / f"MRN-{marker}"
    secret.mkdir()
    gold_rows = [g(f"{marker}-{i}", "t.note", "text", f"{marker} {i}") for i in range(40)]
    prediction_rows = [p(f"{marker}-{i}", "t.note", f"{marker} {i % 3}") for i in range(40)]
    write(secret / "gold-1.jsonl", gold_rows[:25])
    write(secret / "gold-2.jsonl", gold_rows[25:])
    write(secret / "pred-1.jsonl", prediction_rows[::2])
    write(secret / "pred-2.jsonl", prediction_rows[1::2])
    write(secret / "gold-whole.txt", gold_rows)
    write(secret / "pred-whole.txt", prediction_rows[::2] + prediction_rows[1::2])
    write(secret / "bad-1.jsonl", gold_rows[:3])
    write(secret / "bad-2.jsonl", [*gold_rows[3:6], gold_rows[1]])  # a duplicate key
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    mark = f"CHARTSCORE_TEST_{os.getpid()}_{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temporary), mark: "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            CLUSTER_PROGRAM,
            str(secret / "gold-*.jsonl"),
            str(secret / "pred-*.jsonl"),
            str(secret / "gold-whole.txt"),
            str(secret / "pred-whole.txt"),
            str(secret / "bad-*.jsonl"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.returncode
    assert result.stderr == ""  # nothing of distributed's, nothing at all
    assert json.loads(result.stdout) == {
        "same": True,
        "error": "duplicate_gold_key (gold part 2 line 4)",
    }
    assert_clean(result.stdout, marker, "stdout")
    assert list(temporary.iterdir()) == []  # the cluster's private directory is gone
    deadline = time.monotonic() + 60
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _marked_processes(mark) == []  # no worker process outlives the run


INTERRUPT_PROGRAM = textwrap.dedent(
    """
    import os, pathlib, sys, time
    from chartscore.engine import run, score_dask

    def read_forever(*args):
        # Defined in __main__, so it travels to the workers by value: every read waits.
        pathlib.Path(os.environ["CHARTSCORE_TEST_READING"], str(os.getpid())).touch()
        while True:
            time.sleep(1)

    if __name__ == "__main__":
        run.read_part = read_forever
        try:
            score_dask(sys.argv[1], sys.argv[1])
        except KeyboardInterrupt:
            print("interrupted")
            sys.exit(130)
    """
)


@thorough_only("starts a real local cluster and interrupts it (about 8 s)")
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_ctrl_c_closes_the_local_cluster(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold-ZQPART.jsonl", [g("c1")])
    temporary, reading = tmp_path / "tmp", tmp_path / "reading"
    temporary.mkdir()
    reading.mkdir()
    mark = f"CHARTSCORE_TEST_{os.getpid()}_{time.monotonic_ns()}"
    env = {
        **os.environ,
        "TMPDIR": str(temporary),
        mark: "1",
        "CHARTSCORE_TEST_READING": str(reading),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPT_PROGRAM, str(gold)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not any(reading.iterdir()):  # a worker runs a read task (which never ends)
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        os.killpg(child.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole group
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 130, (child.returncode, stderr[-2000:])
    assert stdout.decode() == "interrupted\n"
    assert stderr == b"", stderr[-2000:]  # nothing of distributed's, from any process
    assert list(temporary.iterdir()) == []
    deadline = time.monotonic() + 60
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _marked_processes(mark) == []


# Run by every Python process of the test's run; a worker process pauses in its
# start-up, after saying so, so that Ctrl-C surely comes while the cluster starts.
WORKER_PAUSE = textwrap.dedent(
    """
    import os, pathlib, sys, time

    if "--multiprocessing-fork" in sys.orig_argv and "CHARTSCORE_TEST_PAUSED" in os.environ:
        pathlib.Path(os.environ["CHARTSCORE_TEST_PAUSED"], str(os.getpid())).touch()
        time.sleep(3)
    """
)


@thorough_only("starts a real local cluster and interrupts it (about 8 s)")
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("moment", ["cluster directory made", "a worker is starting"])
def test_ctrl_c_while_the_local_cluster_starts_prints_one_line(tmp_path: Path, moment: str) -> None:
    write(tmp_path / "gold-1.jsonl", [g("c1")])
    write(tmp_path / "pred-1.jsonl", [p("c1")])
    temporary, paused, site = tmp_path / "tmp", tmp_path / "paused", tmp_path / "site"
    for folder in (temporary, paused, site):
        folder.mkdir()
    (site / "sitecustomize.py").write_text(WORKER_PAUSE)
    mark = f"CHARTSCORE_TEST_{os.getpid()}_{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temporary), mark: "1"}
    if moment == "a worker is starting":
        path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
        env.update(PYTHONPATH=path, CHARTSCORE_TEST_PAUSED=str(paused))
    command = [sys.executable, "-m", "chartscore", "score", "--engine", "dask"]
    command += ["--gold", str(tmp_path / "gold-*"), "--predictions", str(tmp_path / "pred-*")]
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # a process group of its own, as a terminal would make
    )
    started = {
        "cluster directory made": lambda: any(temporary.glob("chartscore-dask-*")),
        "a worker is starting": lambda: any(paused.iterdir()),
    }[moment]
    try:
        deadline = time.monotonic() + 300
        while not started():
            assert child.poll() is None and time.monotonic() < deadline, moment
            time.sleep(0.01)
        os.killpg(child.pid, signal.SIGINT)  # Ctrl-C: the whole group, workers included
        stdout, stderr = child.communicate(timeout=180)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    interrupted = f"chartscore: error: interrupted: {describe(ErrorCode.INTERRUPTED)}\n"
    assert (child.returncode, stdout, stderr.decode()) == (130, b"", interrupted)
    assert list(temporary.iterdir()) == []
    deadline = time.monotonic() + 60
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _marked_processes(mark) == []
