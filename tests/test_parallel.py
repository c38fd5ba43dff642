"""Reading predictions in a second process changes nothing but the time taken."""

from __future__ import annotations

import multiprocessing
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


def assert_same(gold: Path, predictions: Path) -> object:
    sequential = outcome(gold, predictions, parallel_run=False)
    assert outcome(gold, predictions, parallel_run=True) == sequential
    assert multiprocessing.active_children() == []  # the reader is always stopped
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
    if "fork" not in multiprocessing.get_all_start_methods():
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
    assert multiprocessing.active_children() == []
