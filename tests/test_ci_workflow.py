"""docs/compare.md's CI workflow runs as written: its chartscore commands, on a shared report.

The commands are taken from the workflow's YAML (as tests/test_import_docs.py takes its
examples' commands), run in a folder laid out as the repository the workflow checks out, and
their outputs read back: the JUnit file with ElementTree, the Markdown table against
``chartscore render``'s own.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chartscore.cli import main
from chartscore.documents import load_document
from chartscore.render import render
from test_gates import doc_example
from test_junit import cases, check_counts, counts

WORKFLOW = doc_example("compare.md", "ci workflow", "yaml")


def commands(workflow: str) -> list[str]:
    """Every chartscore command of the workflow's ``run`` steps, in order."""
    found = []
    for line in workflow.splitlines():
        text = line.strip().removeprefix("run: ").removeprefix("- run: ")
        if text.startswith("chartscore "):
            found.append(text)
    return found


def run_in(folder: Path, command: str) -> tuple[int, str, str]:
    argv = shlex.split(command)
    assert argv[0] == "chartscore"
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(folder)
    try:
        status = main(argv[1:], stdout=out, stderr=err)
    finally:
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()


def test_the_workflow_names_the_commands() -> None:
    assert commands(WORKFLOW) == [
        "chartscore gate reports/shared.json --gates gates.toml --junit junit.xml",
        "chartscore render reports/shared.json --format markdown --out report.md",
    ]
    assert re.search(r"run: python -m pip install chartscore\n", WORKFLOW)
    assert "junit.xml" in WORKFLOW.split("upload-artifact", 1)[1]
    assert 'cat report.md >> "$GITHUB_STEP_SUMMARY"' in WORKFLOW


def test_the_workflow_is_yaml_whose_steps_run_those_commands() -> None:
    yaml = pytest.importorskip("yaml")  # not a dependency: checked when present
    workflow = yaml.safe_load(WORKFLOW)
    steps = workflow["jobs"]["gates"]["steps"]
    runs = [line for step in steps for line in str(step.get("run", "")).splitlines()]
    assert [line for line in runs if line.startswith("chartscore ")] == commands(WORKFLOW)


def test_the_workflow_runs_on_a_shared_report(tmp_path: Path) -> None:
    from shared_data import full_and_shared

    _, shared = full_and_shared()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "shared.json").write_text(shared.to_json(), encoding="utf-8")
    (tmp_path / "gates.toml").write_text(
        doc_example("compare.md", "ci gates.toml", "toml"), encoding="utf-8"
    )
    gate, markdown = commands(WORKFLOW)
    status, table, err = run_in(tmp_path, gate)
    assert (status, err) == (0, "")  # the warning fails, the required gate passes
    root = ET.parse(tmp_path / "junit.xml").getroot()
    check_counts(root)
    (suite,) = root.findall("testsuite")
    assert cases(suite) == [
        ("gate 1: field:hx.smoking normalized_agreement min_upper >= 0.75", "", "", ""),
        (
            "gate 2: field:triage.acuity ordinal_later max_upper <= 0.3",
            "skipped",
            "warning",
            "upper 95% bound 0.3544 (wilson bound) is above 0.3",
        ),
    ]
    assert counts(suite) == {"tests": 2, "failures": 0, "errors": 0, "skipped": 1}
    assert "0.3544  wilson bound  warning   warn" in table
    assert run_in(tmp_path, markdown) == (0, "", "")
    written = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert written == render(load_document(shared.to_json()), "markdown")  # type: ignore[arg-type]


def test_the_documented_junit_file_is_well_formed() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "compare.md").read_text("utf-8")
    found = re.search(r"### Gates in CI: `--junit`.*?```xml\n(.*?)```", text, re.S)
    assert found is not None
    root = ET.fromstring(found.group(1).encode("utf-8"))
    check_counts(root)
    (suite,) = root.findall("testsuite")
    assert [outcome for _, outcome, *_ in cases(suite)] == ["", "failure", "skipped"]
