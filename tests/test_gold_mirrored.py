"""Gold given again as predictions is warned about; the worklist counts what it ignored.

A Double Data Entry export imported once as gold and once as predictions (or a slip in a
pipeline) scores 100% by construction: ``score`` says so on stderr with a count, never a
value, case id or path (issue 37, item 3).
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore.cli import main
from chartscore.cli.score import mirrors_gold
from chartscore.workflows.score import score_files

from helpers import examples, write_jsonl

GOLD = [
    {
        "case_id": "c1-private",
        "field_id": "hx.smoking",
        "field_type": "categorical",
        "value": "former",
    },
    {"case_id": "c2", "field_id": "hx.smoking", "field_type": "categorical", "value": "never"},
    {"case_id": "c2", "field_id": "echo.lvef", "field_type": "number", "value": None},
]
WARNING = (
    "chartscore: warning: every prediction is gold's own answer (3 gold rows): were the "
    "predictions made from the gold file?\n"
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def as_predictions(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k != "field_type"} for row in rows]


def test_gold_given_again_as_predictions_is_warned_about(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold-secret.jsonl", GOLD)
    predictions = write_jsonl(tmp_path / "pred-secret.jsonl", as_predictions(GOLD))
    status, out, err = run(["score", "--gold", str(gold), "--predictions", str(predictions)])
    assert status == 0 and out
    assert err == WARNING
    assert "secret" not in err and "c1-private" not in err and "former" not in err


def test_one_wrong_answer_or_one_missing_row_is_not_a_mirror(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    wrong = as_predictions(GOLD)
    wrong[1] = {**wrong[1], "value": "current"}
    for rows in (wrong, as_predictions(GOLD)[:2]):
        predictions = write_jsonl(tmp_path / "pred.jsonl", rows)
        status, _, err = run(["score", "--gold", str(gold), "--predictions", str(predictions)])
        assert (status, err) == (0, "")


def test_a_failing_run_still_says_one_line(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    status, _, err = run(["score", "--gold", str(gold), "--predictions", str(gold)])
    assert status == 1 and err.count("\n") == 1 and "warning" not in err


@settings(max_examples=examples(100))
@given(st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=8), st.data())
def test_mirrors_gold_is_every_row_answered_as_gold(
    values: list[str | None], data: st.DataObject
) -> None:
    gold = [
        {"case_id": f"c{i}", "field_id": "f", "field_type": "categorical", "value": value}
        for i, value in enumerate(values)
    ]
    answers = data.draw(
        st.lists(
            st.sampled_from(["a", "b", None, "drop"]), min_size=len(values), max_size=len(values)
        )
    )
    predictions = [
        {"case_id": row["case_id"], "field_id": "f", "value": answer}
        for row, answer in zip(gold, answers, strict=True)
        if answer != "drop"
    ]
    with tempfile.TemporaryDirectory() as folder:
        report = score_files(
            write_jsonl(Path(folder) / "g.jsonl", gold),
            write_jsonl(Path(folder) / "p.jsonl", predictions),
        )
    assert mirrors_gold(report) == (answers == values)


def test_worklist_counts_what_extra_predictions_ignore_left_out(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    extra = {"case_id": "c9-private", "field_id": "hx.smoking", "value": "never"}
    wrong = {**as_predictions(GOLD)[0], "value": "current"}
    rows = [wrong, *as_predictions(GOLD)[1:], extra, extra | {"case_id": "c8"}]
    predictions = write_jsonl(tmp_path / "pred.jsonl", rows)
    for jobs in ("1", "2"):
        out = tmp_path / f"worklist-{jobs}.csv"
        argv = ["worklist", "--gold", str(gold), "--predictions", str(predictions)]
        status, _, err = run(
            [*argv, "--out", str(out), "--extra-predictions", "ignore", "--jobs", jobs]
        )
        assert status == 0
        assert err.endswith(
            "chartscore: worklist: 2 predictions whose key is not in gold were ignored and are "
            "in no row (--extra-predictions ignore)\n"
        )
        assert "c9-private" not in err and "c9-private" not in out.read_text(encoding="utf-8")
    status, _, err = run([*argv, "--out", str(tmp_path / "plain.csv")])
    assert status != 0 and "ignored" not in err


def test_list_ignored_lists_blank_versus_filled_rows(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    extra = {"case_id": "c9-private", "field_id": "hx.smoking", "value": "never"}
    predictions = write_jsonl(tmp_path / "pred.jsonl", [*as_predictions(GOLD), extra])
    out = tmp_path / "worklist.csv"
    argv = ["worklist", "--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]
    status, _, err = run([*argv, "--extra-predictions", "ignore", "--list-ignored"])
    assert status == 0 and "c9-private" not in err
    assert err == (
        "chartscore: worklist: 1 disagreements (1 not_in_gold); patient-level, inside only: "
        "never share it\n"
    )
    assert out.read_text(encoding="utf-8").splitlines()[1:] == [
        "case_id,field_id,outcome",
        "c9-private,hx.smoking,not_in_gold",
    ]
    status, _, err = run([*argv, "--list-ignored"])
    assert status == 2 and "--list-ignored needs --extra-predictions ignore" in err


def test_an_answer_on_a_not_applicable_row_is_listed(tmp_path: Path) -> None:
    rows = [*GOLD, {"case_id": "c3", "field_id": "echo.lvef", "field_type": "number",
                    "value": None, "not_applicable": True}]  # fmt: skip
    gold = write_jsonl(tmp_path / "gold.jsonl", rows)
    answered = {"case_id": "c3", "field_id": "echo.lvef", "value": 40}
    for extra, expected in (([answered], ["c3,echo.lvef,answered_not_applicable"]), ([], [])):
        predictions = write_jsonl(tmp_path / "pred.jsonl", [*as_predictions(GOLD), *extra])
        out = tmp_path / "worklist.csv"
        argv = ["worklist", "--gold", str(gold), "--predictions", str(predictions)]
        assert run([*argv, "--out", str(out)])[0] == 0
        assert out.read_text(encoding="utf-8").splitlines()[2:] == expected
        out.unlink()
