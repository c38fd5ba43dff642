"""Gold given again as predictions (one file, or a copy) is warned about, naming options only.

A Double Data Entry export imported twice, or a slip of the shell, scores 100% by construction;
the warning says so on stderr and never names the file (issue 37, item 3).
"""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore.cli import main
from chartscore.io.inputs import STDIN, same_content

from helpers import examples, write_jsonl

GOLD = [
    {"case_id": "c1", "field_id": "hx.smoking", "field_type": "categorical", "value": "former"},
    {"case_id": "c2", "field_id": "hx.smoking", "field_type": "categorical", "value": "never"},
]
PREDICTIONS = [
    {"case_id": "c1", "field_id": "hx.smoking", "value": "former"},
    {"case_id": "c2", "field_id": "hx.smoking", "value": "current"},
]
SAME = "are the same file or hold the same bytes: they agree by construction"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_score_warns_when_the_predictions_are_the_gold_file(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "secret-name.jsonl", GOLD)
    _, _, err = run(["score", "--gold", str(gold), "--predictions", str(gold)])
    assert f"chartscore: warning: --predictions and --gold {SAME}\n" in err
    assert "secret-name" not in err and str(tmp_path) not in err


def test_a_copy_with_the_same_bytes_is_warned_about_too(tmp_path: Path) -> None:
    predictions = write_jsonl(tmp_path / "a.jsonl", PREDICTIONS)
    gold = tmp_path / "b.jsonl"
    shutil.copyfile(predictions, gold)
    _, _, err = run(
        ["compare", "--gold", str(gold), "--baseline", str(predictions), "--candidate", str(gold)]
    )
    assert err.count("warning:") == 2
    assert f"chartscore: warning: --baseline and --gold {SAME}\n" in err
    assert f"chartscore: warning: --candidate and --gold {SAME}\n" in err


def test_one_system_compared_with_itself_is_not_warned_about(tmp_path: Path) -> None:
    # A deliberate check (the comparison of a system with itself shows no difference).
    predictions = write_jsonl(tmp_path / "a.jsonl", PREDICTIONS)
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    argv = ["--gold", str(gold), "--baseline", str(predictions), "--candidate", str(predictions)]
    status, _, err = run(["compare", *argv])
    assert (status, err) == (0, "")


def test_distinct_inputs_are_not_warned_about(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    predictions = write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    status, _, err = run(["score", "--gold", str(gold), "--predictions", str(predictions)])
    assert (status, err) == (0, "")
    out = tmp_path / "worklist.csv"
    status, _, err = run(
        ["worklist", "--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]
    )
    assert status == 0 and "warning" not in err


def test_worklist_warns_too(tmp_path: Path) -> None:
    predictions = write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    out = tmp_path / "worklist.csv"
    _, _, err = run(
        [
            "worklist",
            "--gold",
            str(predictions),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
        ]
    )
    assert f"chartscore: warning: --predictions and --gold {SAME}\n" in err


@settings(max_examples=examples(100))
@given(st.binary(max_size=64), st.binary(max_size=64))
def test_same_content_is_byte_equality(first: bytes, second: bytes) -> None:
    # Fresh files per example (a function-scoped fixture would be shared across examples).
    with tempfile.TemporaryDirectory() as folder:
        one, other = Path(folder) / "one", Path(folder) / "other"
        one.write_bytes(first)
        other.write_bytes(second)
        assert same_content(one, other) == (first == second)
        assert same_content(one, one)
        assert not same_content(one, Path(folder) / "missing")
        assert not same_content(STDIN, one)


def test_worklist_counts_what_extra_predictions_ignore_left_out(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    extra = {"case_id": "c9-private", "field_id": "hx.smoking", "value": "never"}
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [*PREDICTIONS, extra, extra | {"case_id": "c8"}]
    )
    for jobs in ("1", "2"):
        out = tmp_path / f"worklist-{jobs}.csv"
        argv = [
            "worklist",
            "--gold",
            str(gold),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
        ]
        status, _, err = run([*argv, "--extra-predictions", "ignore", "--jobs", jobs])
        assert status == 0
        assert err.endswith(
            "chartscore: worklist: 2 predictions whose key is not in gold were ignored and are "
            "in no row (--extra-predictions ignore)\n"
        )
        assert "c9-private" not in err and "c9-private" not in out.read_text(encoding="utf-8")
    status, _, err = run([*argv[:-2], "--out", str(tmp_path / "plain.csv")])
    assert status != 0 and "ignored" not in err
