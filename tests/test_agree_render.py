"""``chartscore render`` of an agreement document: every format, the figures as the document's.

The CSV's rows are the machine-readable view: each must carry the document's own counts and
coefficients, exactly. The rendering holds no case id, value or path (they are not in the
document to begin with; the canary proves nothing leaks through the labels either).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from chartscore.documents.agreement import Agreement
from chartscore.documents.canonical_json import format_number
from chartscore.render import FORMATS, render
from test_agree import CANARY, run, write_study


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> str:
    files, gold, schema = write_study(tmp_path_factory.mktemp(CANARY) / f"{CANARY}-study")
    argv = ["agree", "--raters", *map(str, files), "--schema", str(schema), "--gold", str(gold)]
    status, out, err = run(argv)
    assert (status, err) == (0, "")
    return out


def _rows(text: str) -> dict[tuple[str, str, str, str], dict[str, str]]:
    rows = csv.DictReader(io.StringIO(text))
    return {(r["slice"], r["name"], r["metric"], r["label"]): r for r in rows}


def test_the_csv_holds_the_documents_figures_exactly(document: str) -> None:
    saved = json.loads(document)
    rows = _rows(render(Agreement.from_json(document), "csv", rater_labels=True))
    for field_id, part in saved["by_field"].items():
        for pair in part["pairs"]:
            label = "~".join(pair["raters"])
            row = rows[("field", field_id, "pair_agreement", label)]
            found = pair["agreement"]
            assert (int(row["success_count"]), int(row["total_count"])) == (
                found["success_count"],
                found["total_count"],
            )
            assert [row["lower"], row["upper"]] == [format_number(x) for x in found["interval"]]
        for metric in ("fleiss_kappa", "ac1", "ac2", "alpha"):
            coefficient, row = part.get(metric), rows.get(("field", field_id, metric, ""))
            if coefficient is None or coefficient["value"] is None:
                assert row is None or row["rate"] == ""
                continue
            assert row is not None
            assert row["rate"] == format_number(coefficient["value"])
            assert int(row["total_count"]) == coefficient["pairs"]
    for rater, results in saved["gold"]["raters"].items():
        row = rows[("overall", "", "gold_normalized_agreement", rater)]
        found = results["normalized_agreement"]
        assert (int(row["success_count"]), int(row["total_count"])) == (
            found["success_count"],
            found["total_count"],
        )


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_from_the_command_line(
    document: str, fmt: str, tmp_path: Path
) -> None:
    saved = tmp_path / "agreement.json"
    saved.write_text(document, encoding="utf-8")
    status, out, err = run(["render", str(saved), "--format", fmt])
    assert (status, err) == (0, "")
    assert out == render(Agreement.from_json(document), fmt)
    # By default the raters are named by position; --rater-labels names them.
    assert CANARY not in out and "abstractor" not in out and "rater-3" in out
    status, named, err = run(["render", str(saved), "--format", fmt, "--rater-labels"])
    assert (status, err) == (0, "")
    assert named == render(Agreement.from_json(document), fmt, rater_labels=True)
    assert CANARY not in named and "abstractor-1" in named
    if fmt == "csv":  # the same rows under either name: rater-i is the i-th label, sorted
        for i, label in enumerate(json.loads(document)["raters"], start=1):
            named = named.replace(label, f"rater-{i}")
        assert named == out
    if fmt != "csv":
        best = json.loads(document)["gold"]["ceiling"]["best"]
        assert f"{best['success_count']} of {best['total_count']}" in out


def test_gate_takes_the_agreement_document_agree_wrote(document: str, tmp_path: Path) -> None:
    saved = tmp_path / "agreement.json"
    saved.write_text(document, encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text('[[gate]]\nslice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5\n')
    status, out, err = run(["gate", str(saved), "--gates", str(gates)])
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "gate_metric_missing" in err and "Traceback" not in err
    assert "did you mean gold_exact_agreement" in err
    gates.write_text(
        '[[gate]]\nslice = "field:smoking"\nmetric = "pair_agreement"\n'
        'label = "abstractor-1~abstractor-2"\nmin_lower = 0.2\n'
        '[[gate]]\nslice = "overall"\nmetric = "gold_normalized_agreement"\n'
        'label = "abstractor-3"\nmin_lower = 0.5\n'
    )
    status, out, err = run(["gate", str(saved), "--gates", str(gates)])
    assert (status, err) == (0, "") and "gates passed: 2 of 2 passed" in out
    assert CANARY not in out


@pytest.mark.parametrize(("charts", "marked"), [(60, True), (120, False)])
def test_a_coefficient_is_marked_as_its_gate_reads_it(
    charts: int, marked: bool, tmp_path: Path
) -> None:
    # Two raters disagreeing on every fifth chart. At 60 charts the pair's kappa has 60
    # pairs and Fleiss' kappa 60 units (but 120 rating pairs): both below 100, so every
    # rendering marks them "too few pairs", as `gate` fails them; at 120, neither.
    schema = tmp_path / "schema.json"
    schema.write_text('{"fields": {"f.b": {"type": "boolean"}}}', encoding="utf-8")
    files = []
    for name, flip in (("a", False), ("b", True)):
        lines = []
        for i in range(charts):
            value = i % 2 == 0
            if flip and i % 5 == 0:
                value = not value
            lines.append(json.dumps({"case_id": f"c{i}", "field_id": "f.b", "value": value}))
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(str(path))
    status, out, err = run(["agree", "--raters", *files, "--schema", str(schema)])
    assert (status, err) == (0, "")
    saved = json.loads(out)["by_field"]["f.b"]
    assert saved["fleiss_kappa"]["units"] == charts and saved["fleiss_kappa"]["pairs"] == 2 * charts
    document = Agreement.from_json(out)
    for name in ("table", "markdown", "html"):
        text = render(document, name)
        # The pair's kappa, Fleiss' kappa, AC1 and alpha.
        assert text.count("too few pairs") >= (4 if marked else 0), name
        if not marked:
            assert "too few pairs" not in text, name
    summary = render(document, "summary")
    assert ("]*" in summary) is marked


def test_render_refuses_a_comparisons_options_on_an_agreement(
    document: str, tmp_path: Path
) -> None:
    saved = tmp_path / "agreement.json"
    saved.write_text(document, encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text('[[gate]]\nslice = "overall"\nmetric = "ceiling_best"\nmin_lower = 0\n')
    for option in (["--gates", str(gates)], ["--date", "2026-01-01"]):
        status, out, err = run(["render", str(saved), "--format", "table", *option])
        assert (status, out) == (2, "")
        assert (
            err.startswith(f"chartscore: error: usage: {option[0]} ") and "this is not one" in err
        )
        assert "report" not in err  # an agreement is not a report
