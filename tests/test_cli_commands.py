"""The commands that build on a report: formats, gates, compare, gate and render, end to end."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import Comparison, GoldField, Prediction, Report
from chartscore.cli import main

from helpers import examples, write_jsonl

GOLD = [
    {"case_id": f"c{i}", "field_id": "hx.smoking", "field_type": "categorical", "value": value}
    for i, value in enumerate(["former", "never", "current", None, "former", "never"] * 4)
]
BASELINE = [
    {"case_id": row["case_id"], "field_id": "hx.smoking", "value": row["value"]}
    for row in GOLD[:20]
]
CANDIDATE = [
    {"case_id": row["case_id"], "field_id": "hx.smoking", "value": "former"} for row in GOLD
]
SCHEMA = {"fields": {"hx.smoking": {"type": "categorical"}, "echo.lvf": {"type": "number"}}}
PASSING = """
[[gate]]
slice = "overall"
metric = "abstention_correctness"
min_lower = 0.1
"""
FAILING_REQUIRED = (
    PASSING
    + """
[[gate]]
slice = "field:hx.smoking"
metric = "exact_agreement"
min_lower = 0.99
level = "required"
"""
)
FAILING_WARNING = (
    PASSING
    + """
[[gate]]
slice = "field:hx.smoking"
metric = "exact_agreement"
min_lower = 0.99
level = "warning"
"""
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([str(arg) for arg in argv], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "gold": write_jsonl(tmp_path / "gold.jsonl", GOLD),
        "baseline": write_jsonl(tmp_path / "baseline.jsonl", BASELINE),
        "candidate": write_jsonl(tmp_path / "candidate.jsonl", CANDIDATE),
        "extra": write_jsonl(
            tmp_path / "extra.jsonl",
            [*BASELINE, {"case_id": "x9", "field_id": "hx.smoking", "value": "never"}],
        ),
    }
    paths["schema"] = tmp_path / "schema.json"
    paths["schema"].write_text(json.dumps(SCHEMA))
    for name, text in (
        ("pass", PASSING),
        ("fail", FAILING_REQUIRED),
        ("warn", FAILING_WARNING),
    ):
        paths[name] = tmp_path / f"{name}.toml"
        paths[name].write_text(text)
    return paths


def score_argv(data: dict[str, Path], *more: object) -> list[object]:
    return ["score", "--gold", data["gold"], "--predictions", data["baseline"], *more]


def compare_argv(data: dict[str, Path], *more: object) -> list[object]:
    return [
        "compare",
        "--gold",
        data["gold"],
        "--baseline",
        data["baseline"],
        "--candidate",
        data["candidate"],
        *more,
    ]


def records(rows: list[dict[str, object]], kind: type) -> list[object]:
    return [kind.from_dict(row) for row in rows]


def test_score_formats_render_the_same_report(data: dict[str, Path]) -> None:
    status, out, _ = run(score_argv(data))
    report = Report.from_json(out)
    for fmt in ("table", "markdown", "csv", "html"):
        status, text, err = run(score_argv(data, "--format", fmt))
        assert status == 0 and err == ""
        assert text == chartscore.render.render(report, fmt)
    rows = list(csv.DictReader(io.StringIO(run(score_argv(data, "--format", "csv"))[1])))
    exact = next(r for r in rows if r["slice"] == "overall" and r["metric"] == "exact_agreement")
    # 20 answerable rows; the baseline answers the first 17 of them with gold itself
    assert (int(exact["success_count"]), int(exact["total_count"])) == (17, 20)


def test_score_ignores_extra_predictions_and_says_so(data: dict[str, Path]) -> None:
    argv = ["score", "--gold", data["gold"], "--predictions", data["extra"]]
    status, _, err = run(argv)
    assert status == 1 and "unknown_prediction_key (predictions line 21)" in err
    status, out, err = run([*argv, "--extra-predictions", "ignore"])
    assert status == 0
    assert json.loads(out)["ignored_prediction_count"] == 1
    assert err == (
        "chartscore: 1 predictions whose key is not in gold were ignored "
        "(--extra-predictions ignore)\n"
    )
    assert "x9" not in err
    status, _, err = run([*argv, "--extra-predictions", "skip"])
    assert status == 2 and "--extra-predictions must be error or ignore" in err


def test_unused_schema_fields_warn_or_fail(data: dict[str, Path]) -> None:
    status, _, err = run(score_argv(data, "--schema", data["schema"]))
    assert status == 0
    assert err == (
        "chartscore: warning: schema field echo.lvf is not in the gold file "
        "(a typo? --strict-schema makes this an error)\n"
    )
    status, out, err = run(score_argv(data, "--schema", data["schema"], "--strict-schema"))
    assert status == 1 and out == ""
    assert err.startswith("chartscore: error: schema_field_unused (schema field echo.lvf): ")


@pytest.mark.parametrize(("gates", "status"), [("pass", 0), ("fail", 3), ("warn", 0)])
def test_score_gates_exit_status(data: dict[str, Path], gates: str, status: int) -> None:
    code, out, err = run(score_argv(data, "--gates", data[gates]))
    assert code == status
    assert json.loads(out)["format"] == "chartscore.report"  # stdout keeps the report
    assert err.startswith("gate  slice")
    assert ("gates FAILED" in err) == (gates == "fail")


MISSING_WARNING = (
    "chartscore: warning: missing rows differ by more than 2 points: baseline 4 of 24 (16.7%), "
    "candidate 0 (0.0%); a missing row counts against agreement, so the comparison mixes "
    "coverage with agreement (see docs/compare.md)\n"
)


def test_compare_equals_the_library(data: dict[str, Path]) -> None:
    status, out, err = run(compare_argv(data))
    # the baseline leaves 4 of 24 rows missing, the candidate none: 16.7 points apart
    assert status == 0 and err == MISSING_WARNING
    expected = chartscore.compare(
        records(GOLD, GoldField), records(BASELINE, Prediction), records(CANDIDATE, Prediction)
    )
    assert out == expected.to_json() + "\n"
    assert Comparison.from_json(out).to_json() == expected.to_json()
    paired = json.loads(out)["overall"]["normalized_agreement"]
    # baseline answers 20 rows with gold itself; the candidate always "former"
    assert (paired["baseline"]["success_count"], paired["candidate"]["success_count"]) == (17, 8)


def test_compare_warns_when_missing_rates_differ_and_records_it(
    data: dict[str, Path], tmp_path: Path
) -> None:
    # The candidate skips a quarter of the cases (6 of 24 rows); the baseline answers 23.
    skipping = write_jsonl(tmp_path / "skipping.jsonl", CANDIDATE[6:])
    nearly = write_jsonl(tmp_path / "nearly.jsonl", BASELINE + CANDIDATE[20:23])
    argv = ["compare", "--gold", data["gold"], "--baseline", nearly, "--candidate", skipping]
    status, out, err = run(argv)
    assert status == 0
    assert err == (
        "chartscore: warning: missing rows differ by more than 2 points: baseline 1 of 24 "
        "(4.2%), candidate 6 (25.0%); a missing row counts against agreement, so the "
        "comparison mixes coverage with agreement (see docs/compare.md)\n"
    )
    assert json.loads(out)["warnings"] == ["missing_counts_differ"]
    # the same missing counts: no warning, nothing recorded
    status, out, err = run([*argv[:-1], nearly])
    assert status == 0 and err == ""
    assert "warnings" not in json.loads(out)


def test_compare_ignores_extra_predictions_as_score_does(data: dict[str, Path]) -> None:
    argv = ["compare", "--gold", data["gold"], "--baseline", data["extra"], "--candidate"]
    status, _, err = run([*argv, data["candidate"]])
    assert status == 1 and "unknown_prediction_key (baseline line 21)" in err
    status, out, err = run([*argv, data["extra"], "--extra-predictions", "ignore"])
    assert status == 0
    assert json.loads(out)["ignored_prediction_count"] == {"baseline": 1, "candidate": 1}
    _, scored, _ = run(
        ["score", "--gold", data["gold"], "--predictions", data["extra"],
         "--extra-predictions", "ignore"]
    )  # fmt: skip
    assert json.loads(scored)["ignored_prediction_count"] == 1
    assert err.startswith(
        "chartscore: 1 baseline and 1 candidate predictions whose key is not in gold were "
        "ignored (--extra-predictions ignore)\n"
    )
    assert "x9" not in err
    status, out, err = run([*argv, data["candidate"], "--extra-predictions", "ignore"])
    assert json.loads(out)["ignored_prediction_count"] == {"baseline": 1, "candidate": 0}
    status, _, err = run([*argv, data["extra"], "--extra-predictions", "skip"])
    assert status == 2 and "--extra-predictions must be error or ignore" in err


def test_compare_files_equals_compare(data: dict[str, Path]) -> None:
    from_files = chartscore.compare_files(data["gold"], data["baseline"], data["candidate"])
    from_records = chartscore.compare(
        records(GOLD, GoldField), records(BASELINE, Prediction), records(CANDIDATE, Prediction)
    )
    assert from_files.to_json() == from_records.to_json()


@pytest.mark.parametrize(("gates", "status"), [("pass", 0), ("fail", 3), ("warn", 0)])
def test_gate_command(data: dict[str, Path], tmp_path: Path, gates: str, status: int) -> None:
    report = tmp_path / "report.json"
    assert run([*score_argv(data), "--out", report])[0] == 0
    code, out, err = run(["gate", report, "--gates", data[gates]])
    assert code == status and err == ""
    assert out.startswith("gate  slice")
    comparison = tmp_path / "comparison.json"
    assert run([*compare_argv(data), "--out", comparison])[0] == 0
    assert run(["gate", comparison, "--gates", data[gates]])[0] == status


def test_compare_gates_on_the_difference(data: dict[str, Path], tmp_path: Path) -> None:
    gates = tmp_path / "noninferior.toml"
    gates.write_text(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    code, out, err = run(compare_argv(data, "--gates", gates))
    assert code == 3 and "min_difference_lower" in err
    assert json.loads(out)["format"] == "chartscore.comparison"


def test_render_reports_and_comparisons(data: dict[str, Path], tmp_path: Path) -> None:
    report, comparison = tmp_path / "report.json", tmp_path / "comparison.json"
    run([*score_argv(data), "--out", report])
    run([*compare_argv(data), "--out", comparison])
    for document in (report, comparison):
        for fmt in ("table", "markdown", "csv", "html"):
            status, out, err = run(["render", document, "--format", fmt])
            assert status == 0 and err == "" and out
            if fmt == "html":
                assert "http://" not in out and "https://" not in out
    status, out, _ = run(["render", comparison, "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out)))
    difference = next(
        r
        for r in rows
        if r["slice"] == "overall" and r["metric"] == "normalized_agreement.difference"
    )
    assert float(difference["rate"]) == pytest.approx((8 - 17) / 20)
    page = tmp_path / "page.html"
    assert run(["render", report, "--format", "html", "--out", page]) == (0, "", "")
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_new_commands_refuse_to_overwrite_their_inputs(
    data: dict[str, Path], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    run([*score_argv(data), "--out", report])
    before = report.read_bytes()
    status, _, err = run(["render", report, "--format", "html", "--out", report])
    assert status == 1 and "output_is_input" in err
    assert report.read_bytes() == before
    status, _, err = run([*score_argv(data), "--gates", data["pass"], "--out", data["pass"]])
    assert status == 1 and "output_is_input" in err
    status, _, err = run([*compare_argv(data), "--out", data["candidate"]])
    assert status == 1 and "output_is_input" in err


def test_usage_of_the_new_commands(data: dict[str, Path]) -> None:
    assert run(["gate", "--gates", data["pass"]])[2].startswith(
        "chartscore: error: usage: REPORT is required; see chartscore gate --help"
    )
    assert "--format is required" in run(["render", data["gold"]])[2]
    assert "--baseline is required" in run(["compare", "--gold", data["gold"]])[2]
    status, _, err = run(["render", data["gold"], "--format", "pdf"])
    assert status == 2 and "--format must be one of table, markdown, csv, html" in err


def test_render_refuses_what_is_not_a_document(data: dict[str, Path]) -> None:
    status, _, err = run(["render", data["gold"], "--format", "table"])
    # A gold file is JSON Lines: named as such, with what to do (issue 38).
    assert status == 1 and err.startswith("chartscore: error: json_lines_document (report; ")
    assert str(data["gold"]) not in err


@settings(max_examples=examples(8), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=12, max_size=12))
def test_canaries_never_leave_through_the_new_commands(tmp_path: Path, marker: str) -> None:
    folder = tmp_path / f"MRN-{marker}"
    folder.mkdir(exist_ok=True)
    gold = [
        {"case_id": f"{marker}-{i}", "field_id": "dx.flag", "field_type": "categorical", "value": v}
        for i, v in enumerate([f"{marker} yes", f"{marker} no", None] * 5)
    ]
    rng = random.Random(marker)
    answers = [
        {
            "case_id": row["case_id"],
            "field_id": "dx.flag",
            "value": rng.choice([row["value"], marker]),
        }
        for row in gold
    ]
    paths = {
        "gold": write_jsonl(folder / f"{marker}-gold.jsonl", gold),
        "baseline": write_jsonl(folder / f"{marker}-b.jsonl", answers),
        "candidate": write_jsonl(folder / f"{marker}-c.jsonl", answers[::-1][:10]),
    }
    gates = folder / f"{marker}.toml"
    gates.write_text(
        f'# {marker}\n[[gate]]\nslice = "field:dx.flag"\nmetric = "exact_agreement"\n'
        "min_lower = 0.5\n"
    )
    outputs = []
    comparison = folder / f"{marker}-cmp.json"
    outputs.append(run([*compare_argv(paths), "--out", comparison, "--gates", gates]))
    outputs.append(run(["render", comparison, "--format", "html"]))
    outputs.append(run(["gate", comparison, "--gates", gates]))
    outputs.append(run([*compare_argv(paths), "--format", "markdown"]))
    bad = folder / f"{marker}-bad.json"
    bad.write_text(json.dumps({"format": marker, marker: marker}))
    outputs.append(run(["render", bad, "--format", "table"]))
    outputs.append(run(["gate", bad, "--gates", gates]))
    # skipped extra predictions, the missing-rows warning and drawn margins say nothing either
    extra = [{"case_id": f"{marker}-x{i}", "field_id": "dx.flag", "value": marker} for i in "12"]
    paths["candidate"] = write_jsonl(folder / f"{marker}-x.jsonl", [*answers[:9], *extra])
    outputs.append(run([*compare_argv(paths), "--extra-predictions", "ignore", "--format", "html"]))
    assert "ignored" in outputs[-1][2] and "missing" in outputs[-1][2]
    margin = folder / f"{marker}-margin.toml"
    margin.write_text(
        f'# {marker}\n[[gate]]\nslice = "overall"\nmetric = "exact_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    outputs.append(run(["render", comparison, "--format", "html", "--gates", margin]))
    assert outputs[-1][0] == 0 and '<g class="margin"' in outputs[-1][1]
    # names and dates that are not plain are refused without being shown
    for option in ("--baseline-name", "--candidate-name", "--date"):
        for value in (f"{marker} x", f"{marker}/b", f"-{marker}", marker * 6):
            outputs.append(run([*compare_argv(paths), option, value]))
            assert outputs[-1][0] == 2 and option in outputs[-1][2], outputs[-1][2]
    outputs.append(run(["render", comparison, "--format", "markdown", "--date", marker]))
    assert outputs[-1][0] == 2
    for status, out, err in outputs:
        assert marker not in out and marker not in err, (status, out[:200], err)
    assert marker not in comparison.read_text()


def test_score_on_the_dask_engine_equals_one_process(data: dict[str, Path], tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    for index in range(3):
        write_jsonl(parts / f"gold-{index}.jsonl", GOLD[index::3])
        write_jsonl(parts / f"predictions-{index}.jsonl", BASELINE[index::3])
    one = run(score_argv(data))[1]
    argv = [
        "score",
        "--engine",
        "dask",
        "--gold",
        parts / "gold-*.jsonl",
        "--predictions",
        parts / "predictions-*.jsonl",
        "--scheduler",
        "synchronous",
    ]
    assert run([*argv, "--partitions", "4"]) == (0, one, "")
    status, _, err = run([*argv, "--out", parts / "gold-1.jsonl"])
    assert status == 1 and "output_is_input" in err
    assert "--partitions must be a whole number from 1" in run([*argv, "--partitions", "0"])[2]
    assert "--jobs applies to --engine local only" in run([*argv, "--jobs", "1"])[2]
    assert "need --engine dask" in run([*score_argv(data), "--scheduler", "synchronous"])[2]


def test_the_missing_warning_in_the_docs_is_what_compare_prints(tmp_path: Path) -> None:
    # docs/compare.md: 2,600 gold rows, the baseline leaves 144 missing, the candidate 664.
    gold = [
        {"case_id": f"c{i}", "field_id": "hx.smoking", "field_type": "categorical", "value": "x"}
        for i in range(2600)
    ]
    answers = [{"case_id": r["case_id"], "field_id": "hx.smoking", "value": "x"} for r in gold]
    paths = [
        write_jsonl(tmp_path / "gold.jsonl", gold),
        write_jsonl(tmp_path / "baseline.jsonl", answers[144:]),
        write_jsonl(tmp_path / "candidate.jsonl", answers[664:]),
    ]
    argv = ["compare", "--gold", paths[0], "--baseline", paths[1], "--candidate", paths[2]]
    status, _, err = run(argv)
    docs = (Path(__file__).resolve().parent.parent / "docs" / "compare.md").read_text()
    assert status == 0 and err.strip() in docs and err.count("\n") == 1


def test_render_and_compare_draw_difference_gates_as_margins(
    data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1765000000")  # 2025-12-06, the date shown
    gates = tmp_path / "noninferior.toml"
    gates.write_text(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    comparison, report = tmp_path / "comparison.json", tmp_path / "report.json"
    run([*compare_argv(data), "--out", comparison])
    run([*score_argv(data), "--out", report])
    status, page, err = run(["render", comparison, "--format", "html", "--gates", gates])
    assert status == 0 and err == "" and page.count('<g class="margin"') == 1
    document = Comparison.from_json(comparison.read_text())
    parsed = chartscore.documents.gates.parse_gates(gates.read_text())
    expected = chartscore.render.render(
        document,
        "html",
        gates=parsed,
        verdicts=chartscore.documents.gates.evaluate(document, parsed),
        date="2025-12-06",
    )
    assert page == expected
    assert "<dt>verdict</dt><dd>gates FAILED: 0 of 1 passed" in page
    status, compared, _ = run(compare_argv(data, "--format", "html", "--gates", gates))
    assert status == 3 and compared == page  # the gate fails, and the page shows its margin
    status, _, err = run(["render", report, "--format", "html", "--gates", gates])
    assert status == 2 and "--gates draws a comparison's margins" in err
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(
        '[[gate]]\nslice = "field:no.such"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    status, out, err = run(["render", comparison, "--format", "html", "--gates", elsewhere])
    assert status == 1 and out == "" and "gate_slice_missing" in err


def test_a_difference_rule_on_a_report_is_refused_before_any_report_is_written(
    data: dict[str, Path], tmp_path: Path
) -> None:
    gates = tmp_path / "difference.toml"
    gates.write_text(
        PASSING + '[[gate]]\nslice = "overall"\nmetric = "exact_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    schema = tmp_path / "declared.json"
    schema.write_text(
        '{"fields": {"hx.smoking": {"type": "categorical", '
        '"choices": ["current", "former", "never"]}}}'
    )
    partial = tmp_path / "site.partial"
    status, _, err = run(score_argv(data, "--schema", schema, "--partial-out", partial))
    assert status == 0 and partial.exists(), err
    for argv in (score_argv(data), ["merge", "--partials", partial]):
        report = tmp_path / "report.json"
        status, out, err = run([*argv, "--gates", gates, "--out", report])
        assert (status, out) == (1, "")
        assert err.startswith("chartscore: error: gate_needs_comparison (gate 2 on line 6)"), err
        assert not report.exists()  # refused before any work, as batch does


@pytest.mark.parametrize("argv", [compare_argv, score_argv])
@pytest.mark.parametrize("where", ["field:no.such", "stratum:site=A"])
def test_a_gate_on_a_slice_never_there_is_refused_before_any_output(
    data: dict[str, Path], tmp_path: Path, argv: Callable[..., list[object]], where: str
) -> None:
    gates = tmp_path / "elsewhere.toml"
    gates.write_text(f'[[gate]]\nslice = "{where}"\nmetric = "exact_agreement"\nmin_lower = 0.5\n')
    out, junit = tmp_path / "document.json", tmp_path / "gates.xml"
    status, stdout, err = run(argv(data, "--gates", gates, "--out", out, "--junit", junit))
    assert status == 1 and stdout == "" and "gate_slice_missing (gate 1 on line 1" in err
    assert not out.exists() and not junit.exists()


@pytest.mark.parametrize("argv", [compare_argv, score_argv])
def test_a_gate_on_a_field_outside_the_schema_is_refused_before_reading_data(
    data: dict[str, Path], tmp_path: Path, argv: Callable[..., list[object]]
) -> None:
    gates = tmp_path / "elsewhere.toml"
    gates.write_text(
        '[[gate]]\nslice = "field:hx.smokin"\nmetric = "exact_agreement"\nmin_lower = 0.5\n'
    )
    data = {**data, "gold": tmp_path / "no-gold-here.jsonl"}  # never opened
    status, _, err = run(argv(data, "--schema", data["schema"], "--gates", gates))
    assert status == 1
    assert "gate_slice_missing (gate 1 on line 1 field hx.smokin; did you mean" in err
