"""Documentation matches behaviour: README example, error list, metric definitions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chartscore import ErrorCode, load_schema, score_files
from chartscore.documents.shared_quantities import hidden_counts
from chartscore.documents.tally import CORE_METRICS, COUNT_NAMES, TYPE_METRICS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def example(name: str) -> str:
    match = re.search(rf"<!-- example: {re.escape(name)} -->\n```json\n(.*?)```", README, re.S)
    assert match is not None, name
    return match.group(1)


def test_readme_worked_example_is_true(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(example("gold.jsonl"), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(example("predictions.jsonl"), encoding="utf-8")
    report = json.loads(score_files(gold, predictions).to_json())
    assert report["overall"] == json.loads(example("report.json overall"))


def test_readme_schema_example_loads(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(example("schema.json"), encoding="utf-8")
    loaded = load_schema(schema)
    assert loaded.fields["triage.acuity"].levels == ("1", "2", "3", "4", "5")


def test_readme_has_the_two_setup_commands() -> None:
    assert "pip install . && chartscore demo" in README
    assert "pip install -e '.[test]' && python -m pytest -q" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q . && chartscore demo" in ci
    assert "pip install -q -e '.[test]' && python -m pytest -q" in ci


def test_error_codes_are_documented_exactly() -> None:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", text, re.M))
    assert documented == {code.value for code in ErrorCode}


def test_error_hints_are_documented_exactly() -> None:
    from chartscore.errors import ErrorHint

    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    section = text.split("\n## Hints\n", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| ([^|`]+?) \| ", section, re.M)) - {"hint"}
    assert documented == {hint.value for hint in ErrorHint}


def test_readme_says_how_to_install_sharing_and_run_the_browser_tests() -> None:
    assert "pip install '.[share]'" in README
    assert "pip install 'chartscore[share]'" in README
    assert "chromium-headless-shell" in README
    # How long each run of the suite takes, and that CI runs the thorough profile too.
    assert len(re.findall(r"about [0-9½]+ minutes", README)) == 2
    assert "--hypothesis-profile thorough" in README
    assert "--hypothesis-profile thorough" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("name", [*COUNT_NAMES, *CORE_METRICS, *TYPE_METRICS, "kappa"])
def test_every_reported_number_is_defined_in_metrics_md(name: str) -> None:
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert (
        re.search(rf"^\| `{name}` \|", text, re.M)
        or f'"{name}"' in text
        or f"### {name}" in text
        or (name == "kappa" and "### Kappa" in text)
    ), name


def test_docstring_examples_run() -> None:
    import doctest

    import chartscore.scoring.paired_scorer
    import chartscore.scoring.scorer

    for module in (chartscore.scoring.scorer, chartscore.scoring.paired_scorer):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_readme_table_example_is_true(tmp_path: Path) -> None:
    from chartscore.render import render

    gold = tmp_path / "gold.jsonl"
    gold.write_text(example("gold.jsonl"), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(example("predictions.jsonl"), encoding="utf-8")
    table = render(score_files(gold, predictions), "table")
    match = re.search(r"<!-- example: table -->\n```text\n(.*?)```", README, re.S)
    assert match is not None
    assert match.group(1) in table


def test_readme_gates_example_parses() -> None:
    from chartscore.documents.gates import parse_gates

    match = re.search(r"<!-- example: gates.toml -->\n```toml\n(.*?)```", README, re.S)
    assert match is not None
    gates = parse_gates(match.group(1))
    assert [(g.slice, g.metric, g.rule, g.level) for g in gates] == [
        ("overall", "normalized_agreement", "min_difference_lower", "required"),
        ("field:triage.acuity", "ordinal_later", "max_upper", "warning"),
    ]


def test_readme_share_example_is_true(tmp_path: Path) -> None:
    from chartscore import share_files

    gold = tmp_path / "gold.jsonl"
    gold.write_text(example("gold.jsonl"), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(example("predictions.jsonl"), encoding="utf-8")
    shared = share_files(gold, predictions)
    match = re.search(r"<!-- example: share -->\n```sh\n(.*?)```", README, re.S)
    assert match is not None
    count = shared.disclosure.suppressed_count
    suppressed, derived = hidden_counts(shared)
    assert f"# chartscore: {count} numbers suppressed (min cell 11): " in match.group(1)
    assert (
        f"; {suppressed + derived} hidden numbers checked, these and {derived} derived from "
        "them (failures, disagreed rows); the audit passed"
    ) in match.group(1)
    assert (
        f"# audit PASS: min_cell 11, {suppressed + derived} hidden numbers checked ({count} "
        f"suppressed in the document, {derived} derived from them), 0 failing"
    ) in match.group(1)


DOTTED_NAME = re.compile(r"(?<![\w/.])chartscore(?:\.[A-Za-z_]\w*)+")
SOURCE_LINK = re.compile(r"\]\((\.\./src/[^)#]+)\)")


def resolves(dotted: str) -> bool:
    """Whether a dotted name is an importable module or an attribute path inside one."""
    import importlib

    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def documentation() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", documentation(), ids=lambda path: path.name)
def test_every_python_path_in_the_docs_exists(page: Path) -> None:
    from chartscore.disclosure.rule import SHARED_FORMAT
    from chartscore.documents.agreement import AGREEMENT_FORMAT
    from chartscore.documents.comparison import COMPARISON_FORMAT
    from chartscore.documents.report import REPORT_FORMAT
    from chartscore.documents.shared_comparison import SHARED_COMPARISON_FORMAT
    from chartscore.records.plugins import ENTRY_POINT_GROUP
    from chartscore.scoring.partial_document import PARTIAL_FORMAT

    # Document names and the plugins' entry point group: dotted, but not modules.
    formats = {REPORT_FORMAT, COMPARISON_FORMAT, SHARED_FORMAT, PARTIAL_FORMAT, ENTRY_POINT_GROUP}
    formats.add(SHARED_COMPARISON_FORMAT)
    formats.add(AGREEMENT_FORMAT)
    text = page.read_text(encoding="utf-8")
    named = {name.rstrip(".") for name in DOTTED_NAME.findall(text)} - formats
    assert {name for name in named if not resolves(name)} == set()
    linked = {link for link in SOURCE_LINK.findall(text) if not (page.parent / link).exists()}
    assert linked == set()


def test_the_path_check_can_fail() -> None:
    assert resolves("chartscore.io.load_gates")
    assert not resolves("chartscore.documents.gates.load_gates")
    assert not resolves("chartscore.model_that_never_was")
