"""The summary format: a line per field that a person reads at a terminal.

Each test parses the summary's lines back and checks every figure against the
document's own JSON (rounded as the renderers round), so the summary shows only
what the document holds.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

import chartscore
from chartscore import Comparison, GoldField, Prediction, Report
from chartscore.cli import main
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.shared_report import SharedReport
from chartscore.documents.tally import ERROR_METRICS
from chartscore.render import render
from chartscore.render._numbers import kappa_number, percent
from chartscore.render.table import WIDTH
from chartscore.workflows.demo import run_demo
from shared_data import full_and_shared

from helpers import write_jsonl

# 16 fields of 40 cases: categorical fields (kappa) and text fields, with unanswerable
# gold rows, abstentions and wrong answers in different proportions per field.
CASES = 40
FIELDS = [(f"reg.field_{i:02d}", "categorical" if i % 2 else "text") for i in range(16)]


def _gold_and_predictions() -> tuple[list[GoldField], list[Prediction]]:
    gold, predictions = [], []
    for i, (field_id, kind) in enumerate(FIELDS):
        for case in range(CASES):
            unanswerable = case % (5 + i % 4) == 0
            value = None if unanswerable else ("yes", "no", "maybe")[case % 3]
            gold.append(GoldField(f"c{case}", field_id, kind, value))
            if unanswerable:
                answer: object = "yes" if case % (2 + i % 3) == 0 else None
            elif case % (7 + i) == 1:
                answer = None  # abstains although the chart answers
            elif case % (3 + i % 5) == 2:
                answer = "no" if value != "no" else "yes"
            else:
                answer = value
            predictions.append(Prediction(f"c{case}", field_id, answer))
    return gold, predictions


GOLD, PREDICTIONS = _gold_and_predictions()
REPORT = chartscore.score(GOLD, PREDICTIONS)


def _baseline() -> list[Prediction]:
    # Every fifth answer of the candidate replaced by a wrong one.
    return [
        Prediction(p.case_id, p.field_id, "maybe" if n % 5 == 0 else p.value)
        for n, p in enumerate(PREDICTIONS)
    ]


COMPARISON = chartscore.compare(GOLD, _baseline(), PREDICTIONS)

RATE = r"(?:\d+(?:\.\d+)?|<0\.01|>99\.99)"
INTERVAL = rf"\[({RATE})-({RATE})\]"


def table_rows(text: str) -> dict[str, str]:
    """Each table line's label (a field id, or ``all fields``) and the rest of the line."""
    rows = {}
    for line in text.splitlines():
        found = re.match(r"^([a-z][a-z0-9_]*\.[a-z0-9_.]+|all fields)\s+(\S.*)$", line)
        if found and ": summary" not in line:
            rows[found.group(1)] = found.group(2)
    return rows


def pct(value: float) -> str:
    return percent(value)


def worst(part: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The error metric with the highest rate, its upper bound breaking ties (by hand)."""
    rates = [
        (m["success_count"] / m["total_count"], m["interval"][1], name, m)
        for name, m in part.items()
        if name in ERROR_METRICS and isinstance(m, dict) and m.get("total_count")
    ]
    _, _, name, metric = max(rates, key=lambda r: (r[0], r[1]))
    return name, metric


def agreement_text(metric: dict[str, Any]) -> str:
    interval = metric.get("clustered_interval", metric["interval"])
    rate = metric["success_count"] / metric["total_count"]
    return f"{pct(rate)}% [{pct(interval[0])}-{pct(interval[1])}]"


def worst_text(part: dict[str, Any]) -> str:
    name, metric = worst(part)
    interval = metric.get("clustered_interval", metric["interval"])
    rate = metric["success_count"] / metric["total_count"]
    return f"{name} {pct(rate)}% <={pct(interval[1])}%"


def test_a_16_field_report_fits_30_lines_and_every_figure_is_the_documents() -> None:
    text = render(REPORT, "summary")
    lines = text.splitlines()
    assert len(lines) <= 30, text
    assert all(len(line) <= WIDTH for line in lines)
    document = json.loads(REPORT.to_json())
    rows = table_rows(text)
    assert set(rows) == {*document["by_field"], "all fields"}
    slices = {**document["by_field"], "all fields": document["overall"]}
    for name, part in slices.items():
        row = rows[name]
        n = part["normalized_agreement"]["total_count"]
        assert n == part["answerable_count"]
        figures = re.match(rf"^(\d+)\s+({RATE}% {INTERVAL})\s+(\S+ {RATE}% <={RATE}%)(.*)$", row)
        assert figures is not None, row
        assert int(figures.group(1)) == n
        assert figures.group(2) == agreement_text(part["normalized_agreement"])
        assert figures.group(5) == worst_text(part)
        kappa = part.get("kappa")
        if kappa is None:
            assert figures.group(6).strip() == ""
        else:
            low, high = (kappa_number(bound) for bound in kappa["interval"])
            mark = "*" if kappa["pairs"] < 100 else ""
            assert figures.group(6).strip() == (
                f"{kappa_number(kappa['value'])} [{low}, {high}]{mark}"
            )


def test_the_docs_summary_sample_is_the_demos() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "reports.md").read_text("utf-8")
    sample = re.search(r"<!-- summary sample -->\n```text\n(.*?)```", docs, re.S)
    assert sample is not None
    assert sample.group(1) == render(run_demo(), "summary")


def test_the_summary_follows_the_requested_order() -> None:
    by_rate = list(table_rows(render(REPORT, "summary", sort="rate")))
    rates = {
        name: part.metrics["normalized_agreement"].success_count
        / part.metrics["normalized_agreement"].total_count
        for name, part in REPORT.by_field.items()
    }
    assert by_rate[:-1] == sorted(rates, key=lambda name: (rates[name], name))
    assert by_rate[-1] == "all fields"


def test_the_worst_safety_rate_is_the_highest_error_rate() -> None:
    # triage.acuity (ordinal) reports ordinal_later and ordinal_earlier as errors too.
    demo = json.loads(run_demo().to_json())
    rows = table_rows(render(run_demo(), "summary"))
    for field_id, part in demo["by_field"].items():
        assert worst_text(part) in rows[field_id]


def test_a_comparison_summary_shows_both_systems_and_the_difference() -> None:
    text = render(COMPARISON, "summary")
    lines = text.splitlines()
    assert len(lines) <= 30 and all(len(line) <= WIDTH for line in lines)
    assert "baseline" in lines[4] or any("baseline" in line for line in lines[:8])
    document = json.loads(COMPARISON.to_json())
    rows = table_rows(text)
    slices = {**document["by_field"], "all fields": document["overall"]}
    assert set(rows) == set(slices)
    for name, part in slices.items():
        paired = part["normalized_agreement"]
        row = rows[name]
        two = rf"({RATE}% {INTERVAL})\s+({RATE}% {INTERVAL})"
        figures = re.match(rf"^(\d+)\s+{two}\s+(\S+ pp \[\S+, \S+\])\s+(.*)$", row)
        assert figures is not None, row
        assert int(figures.group(1)) == paired["candidate"]["total_count"]
        assert figures.group(2) == agreement_text(paired["baseline"])
        assert figures.group(5) == agreement_text(paired["candidate"])
        difference = paired["difference"]
        low, high = difference.get("clustered_interval", difference["interval"])
        expected = f"{points(difference['estimate'])} pp [{points(low)}, {points(high)}]"
        assert figures.group(8) == expected
        candidate = {
            metric: sides["candidate"]
            for metric, sides in part.items()
            if isinstance(sides, dict) and "candidate" in sides
        }
        assert figures.group(9) == worst_text(candidate)


def points(value: float) -> str:
    text = pct(value)
    return text if value <= 0 or text.startswith("-") else "+" + text


def test_a_shared_report_summary_reads_suppressed_where_the_document_withholds() -> None:
    _, shared = full_and_shared()
    text = render(shared, "summary")
    assert all(len(line) <= WIDTH for line in text.splitlines())
    assert "disclosure: cell-size rule, min_cell 11" in text
    rows = table_rows(text)
    document = json.loads(shared.to_json())
    assert set(rows) == {*document["by_field"], "all fields"}
    withheld = 0
    for name, part in {**document["by_field"], "all fields": document["overall"]}.items():
        agreement = part["normalized_agreement"]
        n = agreement["total_count"]
        cells = re.split(r"\s{2,}", rows[name])
        assert cells[0] == ("suppressed" if n is None else str(n))
        if agreement["success_count"] is None or n is None:
            withheld += 1
            bound = agreement.get("rate_bound")
            if bound is None or (bound["lower"] == 0 and bound["upper"] == 1):
                assert cells[1] == "suppressed"
            else:
                assert re.fullmatch(r"(<=|>=)?[0-9.]+(-[0-9.]+)?%", cells[1]), cells[1]
        else:
            assert cells[1] == agreement_text(agreement)
    assert withheld and "None" not in text and "null" not in text


def test_gate_verdicts_follow_the_table() -> None:
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.5\n'
        '[[gate]]\nslice = "overall"\nmetric = "unanswerable_answer"\nmax_upper = 0.01\n'
        'level = "warning"\n'
    )
    text = render(REPORT, "summary", verdicts=evaluate(REPORT, gates))
    assert "gate 1 pass (required): overall normalized_agreement min_lower >= 0.5\n" in text
    assert "gate 2 warn (warning): overall unanswerable_answer max_upper <= 0.01\n" in text
    assert "gates passed: 1 of 2 passed; failed: 0 required, 1 warning\n" in text
    with pytest.raises(chartscore.ChartscoreError):
        render(REPORT, "summary", verdicts="passed")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the command line


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(argv: list[str], *, terminal: bool = False) -> tuple[int, str, str]:
    out = FakeTerminal() if terminal else io.StringIO()
    err = io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("summary")
    gold = write_jsonl(root / "gold.jsonl", [_plain(r) for r in GOLD])
    predictions = write_jsonl(root / "pred.jsonl", [_plain(r) for r in PREDICTIONS])
    baseline = write_jsonl(root / "base.jsonl", [_plain(r) for r in _baseline()])
    return {"gold": gold, "predictions": predictions, "baseline": baseline, "root": root}


def _plain(record: object) -> dict[str, object]:
    if isinstance(record, GoldField):
        return {
            "case_id": record.case_id,
            "field_id": record.field_id,
            "field_type": record.field_type,
            "value": record.value,
        }
    assert isinstance(record, Prediction)
    return {"case_id": record.case_id, "field_id": record.field_id, "value": record.value}


def test_score_prints_json_to_a_pipe_and_the_summary_to_a_terminal(files: dict[str, Path]) -> None:
    argv = ["score", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    status, piped, err = run(argv)
    assert (status, err) == (0, "")
    report = Report.from_json(piped.rstrip("\n"))
    assert piped == report.to_json() + "\n"  # the canonical JSON, byte for byte
    status, shown, err = run(argv, terminal=True)
    assert (status, err) == (0, "")
    assert shown == render(report, "summary")
    assert run([*argv, "--format", "json"], terminal=True)[1] == piped
    assert run([*argv, "--format", "table"], terminal=True)[1] == render(report, "table")
    out = files["root"] / "report.json"
    assert run([*argv, "--out", str(out)], terminal=True) == (0, "", "")
    assert out.read_text(encoding="utf-8") == piped  # --out keeps JSON on a terminal too


def test_score_with_gates_lists_their_verdicts_on_a_terminal(files: dict[str, Path]) -> None:
    gates = files["root"] / "gates.toml"
    gates.write_text(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.99\n',
        encoding="utf-8",
    )
    argv = ["score", "--gold", str(files["gold"]), "--predictions", str(files["predictions"])]
    status, shown, err = run([*argv, "--gates", str(gates)], terminal=True)
    assert status == 3
    assert "gate 1 FAIL (required): overall normalized_agreement min_lower >= 0.99\n" in shown
    assert "gates FAILED" in err  # the gates' full table still goes to stderr
    status, piped, _ = run([*argv, "--gates", str(gates)])
    assert status == 3 and "gate 1" not in piped and piped == run(argv)[1]


def test_compare_and_render_print_the_summary_to_a_terminal(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rendered comparison shows today's date: SOURCE_DATE_EPOCH pins it (1 day in).
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    argv = ["compare", "--gold", str(files["gold"]), "--baseline", str(files["baseline"])]
    argv += ["--candidate", str(files["predictions"])]
    status, piped, _ = run(argv)
    comparison = Comparison.from_json(piped.rstrip("\n"))
    status, shown, err = run(argv, terminal=True)
    assert (status, err) == (0, "") and shown == render(comparison, "summary", date="1970-01-02")
    saved = files["root"] / "comparison.json"
    saved.write_text(piped, encoding="utf-8")
    assert run(["render", str(saved)], terminal=True) == (0, shown, "")
    assert run(["render", str(saved), "--format", "summary"]) == (0, shown, "")
    # Without a terminal, render still needs --format (it has no JSON to print).
    status, out, err = run(["render", str(saved)])
    assert (status, out) == (2, "") and "--format is required" in err
    status, out, err = run(
        ["render", str(saved), "--out", str(files["root"] / "x.txt")], terminal=True
    )
    assert (status, out) == (2, "") and "--format is required" in err


def test_the_demo_prints_at_most_40_lines() -> None:
    status, out, err = run(["demo"])
    assert (status, err) == (0, "")
    assert len(out.splitlines()) <= 40
    assert out == run(["demo"], terminal=True)[1]
    assert render(run_demo(), "summary") in out
    assert "chartscore render report.json --format table" in out


def test_a_shared_report_renders_as_a_summary_from_the_command_line(tmp_path: Path) -> None:
    _, shared = full_and_shared()
    assert isinstance(shared, SharedReport)
    saved = tmp_path / "shared.json"
    saved.write_text(shared.to_json(), encoding="utf-8")
    status, out, err = run(["render", str(saved)], terminal=True)
    assert (status, err) == (0, "") and out == render(shared, "summary")
    assert "suppressed" in out
