"""docs/import.md's and docs/worklist.md's examples are true: each command gives its output."""

from __future__ import annotations

import io
import os
import re
import shlex
from pathlib import Path

from chartscore.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = "".join(
    (ROOT / "docs" / page).read_text(encoding="utf-8") for page in ("import.md", "worklist.md")
)


def example(name: str) -> str:
    match = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", PAGES, re.S)
    assert match is not None, name
    return match.group(1)


def run_documented(name: str, files: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """Write the example's inputs, run its command, check its stderr; return the outputs."""
    for file_name, example_name in files.items():
        (tmp_path / file_name).write_text(example(example_name), encoding="utf-8")
    script = example(f"{name} command")
    command = script.split("\n#", 1)[0].replace("\\\n", " ")
    said = [line.removeprefix("# ") + "\n" for line in script.splitlines() if line.startswith("#")]
    argv = shlex.split(command)
    assert argv[0] == "chartscore"
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = main(argv[1:], stdout=out, stderr=err)
    finally:
        os.chdir(here)
    assert (status, out.getvalue(), err.getvalue()) == (0, "", "".join(said))
    return {path.name: path.read_text(encoding="utf-8") for path in tmp_path.iterdir()}


def test_the_redcap_example(tmp_path: Path) -> None:
    inputs = {"dictionary.csv": "redcap dictionary.csv", "records.csv": "redcap records.csv"}
    written = run_documented("redcap", inputs, tmp_path)
    assert written["schema.json"] == example("redcap schema.json")
    assert written["gold.jsonl"] == example("redcap gold.jsonl")


def test_the_redcap_double_data_entry_example(tmp_path: Path) -> None:
    inputs = {"dictionary.csv": "redcap dictionary.csv", "dde.csv": "redcap dde records.csv"}
    written = run_documented("redcap dde", inputs, tmp_path)
    for name in ("rater1.jsonl", "rater2.jsonl", "gold.jsonl"):
        assert written[name] == example(f"redcap dde {name}"), name


def test_the_label_studio_example(tmp_path: Path) -> None:
    written = run_documented("labelstudio", {"export.json": "labelstudio export.json"}, tmp_path)
    assert written["gold.jsonl"] == example("labelstudio gold.jsonl")
    assert written["predictions.jsonl"] == example("labelstudio predictions.jsonl")
    argv = ["import", "labelstudio", "--export", str(tmp_path / "export.json")]
    argv += ["--gold-annotator", "1", "--labels", "Cough,Fever", "--per-label"]
    argv += ["--field", "symptom", "--gold-out", str(tmp_path / "per-label.jsonl")]
    assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    per_label = (tmp_path / "per-label.jsonl").read_text(encoding="utf-8")
    assert per_label == example("labelstudio per-label gold.jsonl")


def test_the_csv_example(tmp_path: Path) -> None:
    inputs = {
        "table.csv": "csv table.csv",
        "columns.toml": "csv columns.toml",
        "schema.json": "csv schema.json",
    }
    written = run_documented("csv", inputs, tmp_path)
    assert written["gold.jsonl"] == example("csv gold.jsonl")


def test_the_worklist_example(tmp_path: Path) -> None:
    inputs = {
        name: f"worklist {name}" for name in ("gold.jsonl", "predictions.jsonl", "schema.json")
    }
    written = run_documented("worklist", inputs, tmp_path)
    assert written["worklist.csv"] == example("worklist worklist.csv")


def test_the_fhir_example(tmp_path: Path) -> None:
    inputs = {"q.json": "fhir q.json", "responses.ndjson": "fhir responses.ndjson"}
    written = run_documented("fhir", inputs, tmp_path)
    assert written["schema.json"] == example("fhir schema.json")
    assert written["gold.jsonl"] == example("fhir gold.jsonl")
