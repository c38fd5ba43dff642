"""``--junit FILE``: the gates' results as JUnit XML for CI (issue 38 item 3, docs/compare.md).

Each file is read back with :mod:`xml.etree.ElementTree`, as a CI system's JUnit reader
would: one test case per gate, a failed required gate a ``<failure>`` whose message names the
figure and the threshold, a failed warning gate ``<skipped>``, the counts in the suite's
attributes, and the exit status the same as without ``--junit``.
"""

from __future__ import annotations

import io
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, score
from chartscore.cli import main
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.report import Report
from chartscore.render.junit import JUnitSuite, failure_message, junit_xml
from chartscore.stats.binomial import wilson_interval
from ledger_data import Demo, copy_demo, make_demo
from test_comparison import categorical_rows, compare
from test_gates import gate_text, kappa_report
from test_shared_comparison import CANARY_CASE, CANARY_VALUE, write_cohort

E = ErrorCode


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def cases(suite: ET.Element) -> list[tuple[str, str, str, str]]:
    """Each test case as (name, outcome, type, message): outcome '' (passed), failure, ..."""
    found = []
    for case in suite.iter("testcase"):
        children = [child for child in case if child.tag in ("failure", "skipped", "error")]
        assert len(children) <= 1 or all(child.tag == "error" for child in children)
        if not children:
            found.append((case.attrib["name"], "", "", ""))
        for child in children:
            found.append(
                (case.attrib["name"], child.tag, child.attrib["type"], child.attrib["message"])
            )
        assert case.attrib["classname"] == suite.attrib["name"]
    return found


def counts(element: ET.Element) -> dict[str, int]:
    return {key: int(element.attrib[key]) for key in ("tests", "failures", "errors", "skipped")}


def check_counts(root: ET.Element) -> None:
    """Every suite's attributes count its cases; the root's add them up."""
    assert root.tag == "testsuites" and root.attrib["name"] == "chartscore"
    total = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.findall("testsuite"):
        found = cases(suite)
        names = {name for name, *_ in found}
        expected = {
            "tests": len(names),
            "failures": sum(1 for _, outcome, *_ in found if outcome == "failure"),
            "errors": 1 if any(name == "run" for name, *_ in found) else 0,
            "skipped": sum(1 for _, outcome, *_ in found if outcome == "skipped"),
        }
        assert counts(suite) == expected
        for key in total:
            total[key] += expected[key]
    assert counts(root) == total


# --------------------------------------------------------------------------- a report


def small_report() -> Report:
    """Ten answerable text rows: 6 agree with gold, 2 abstain, 2 wrong."""
    gold = [GoldField(f"c{i}", "note.text", "text", "left arm") for i in range(10)]
    answers = [
        Prediction(f"c{i}", "note.text", "left arm" if i < 6 else None if i < 8 else "right arm")
        for i in range(10)
    ]
    return score(gold, answers)


GATES = "".join(
    [
        gate_text(slice="field:note.text", metric="normalized_agreement", min_lower=0.3),
        gate_text(slice="field:note.text", metric="normalized_agreement", min_lower=0.5),
        gate_text(slice="field:note.text", metric="normalized_agreement", min_upper=0.75),
        gate_text(slice="field:note.text", metric="normalized_agreement", min_upper=0.85),
        gate_text(slice="field:note.text", metric="answerable_abstention", max_upper=0.5),
        gate_text(
            slice="field:note.text", metric="answerable_abstention", max_lower=0.05, level="warning"
        ),
        gate_text(slice="field:note.text", metric="answerable_abstention", max_lower=0.06),
        gate_text(slice="type:text", metric="unanswerable_answer", max_upper=0.1, level="warning"),
    ]
)

# Wilson at 6/10: (0.3127, 0.8318); 2/10: (0.0567, 0.5098); no unanswerable rows: null.
EXPECTED = [
    ("gate 1: field:note.text normalized_agreement min_lower >= 0.3", "", "", ""),
    (
        "gate 2: field:note.text normalized_agreement min_lower >= 0.5",
        "failure",
        "required",
        "lower 95% bound 0.3127 (wilson) is below 0.5",
    ),
    ("gate 3: field:note.text normalized_agreement min_upper >= 0.75", "", "", ""),
    (
        "gate 4: field:note.text normalized_agreement min_upper >= 0.85",
        "failure",
        "required",
        "upper 95% bound 0.8318 (wilson) is below 0.85",
    ),
    (
        "gate 5: field:note.text answerable_abstention max_upper <= 0.5",
        "failure",
        "required",
        "upper 95% bound 0.5098 (wilson) is above 0.5",
    ),
    (
        "gate 6: field:note.text answerable_abstention max_lower <= 0.05",
        "skipped",
        "warning",
        "lower 95% bound 0.0567 (wilson) is above 0.05",
    ),
    ("gate 7: field:note.text answerable_abstention max_lower <= 0.06", "", "", ""),
    (
        "gate 8: type:text unanswerable_answer max_upper <= 0.1",
        "skipped",
        "warning",
        "no figure (clustered): cannot be shown to be at most 0.1",
    ),
]


def test_the_expected_figures_are_wilsons() -> None:
    agreement, abstention = wilson_interval(6, 10), wilson_interval(2, 10)
    assert agreement is not None and abstention is not None
    assert [f"{x:.4f}" for x in (*agreement, *abstention)] == [
        "0.3127",
        "0.8318",
        "0.0567",
        "0.5098",
    ]


def test_gate_junit_on_a_report(tmp_path: Path) -> None:
    document = tmp_path / "report.json"
    document.write_text(small_report().to_json(), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    plain = run(["gate", str(document), "--gates", str(gates)])
    with_junit = run(["gate", str(document), "--gates", str(gates), "--junit", str(junit)])
    assert plain == with_junit  # the same status, table and stderr
    assert plain[0] == 3 and plain[2] == ""
    root = ET.parse(junit).getroot()
    (suite,) = root.findall("testsuite")
    assert suite.attrib["name"] == "chartscore gate"
    assert cases(suite) == EXPECTED
    assert counts(suite) == {"tests": 8, "failures": 3, "errors": 0, "skipped": 2}
    check_counts(root)
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert properties == {"confidence": "0.95", "gate_interval": "wilson"}
    # The same bytes again (no time stamp, host or duration), and nothing left beside it.
    first = junit.read_bytes()
    assert first.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n") and first.endswith(b"\n")
    assert run(["gate", str(document), "--gates", str(gates), "--junit", str(junit)])[0] == 3
    assert junit.read_bytes() == first
    assert sorted(os.listdir(tmp_path)) == ["gates.toml", "junit.xml", "report.json"]


def test_a_passing_gate_file_gives_a_passing_suite(tmp_path: Path) -> None:
    document = tmp_path / "report.json"
    document.write_text(small_report().to_json(), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(
        gate_text(slice="field:note.text", metric="normalized_agreement", min_lower=0.2),
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    status, _, _ = run(
        [
            "gate",
            str(document),
            "--gates",
            str(gates),
            "--junit",
            str(junit),
            "--confidence",
            "0.99",
        ]
    )
    assert status == 0
    root = ET.parse(junit).getroot()
    assert counts(root) == {"tests": 1, "failures": 0, "errors": 0, "skipped": 0}
    properties = {p.attrib["name"]: p.attrib["value"] for p in root.iter("property")}
    assert properties["confidence"] == "0.99"


def text_cohort(tmp_path: Path) -> tuple[Path, Path]:
    """:func:`small_report`'s rows as files, with canary case ids and a canary value."""
    gold = tmp_path / "gold.jsonl"
    predictions = tmp_path / "predictions.jsonl"
    rows = [
        (f"{CANARY_CASE}{i}", "left arm" if i < 6 else None if i < 8 else f"{CANARY_VALUE}{i}")
        for i in range(10)
    ]
    gold.write_text(
        "".join(
            f'{{"case_id": "{case}", "field_id": "note.text", "field_type": "text", '
            f'"value": "left arm"}}\n'
            for case, _ in rows
        ),
        encoding="utf-8",
    )
    predictions.write_text(
        "".join(
            f'{{"case_id": "{case}", "field_id": "note.text", "value": '
            f"{'null' if value is None else chr(34) + value + chr(34)}}}\n"
            for case, value in rows
        ),
        encoding="utf-8",
    )
    return gold, predictions


def test_score_writes_the_same_junit_as_gate(tmp_path: Path) -> None:
    gold, predictions = text_cohort(tmp_path)
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--gates", str(gates)]
    argv += ["--out", str(tmp_path / "report.json")]
    plain = run(argv)
    assert plain == run([*argv, "--junit", str(junit)])
    assert plain[0] == 3
    data = junit.read_bytes()
    assert CANARY_CASE.encode() not in data and CANARY_VALUE.encode() not in data
    (suite,) = ET.parse(junit).getroot().findall("testsuite")
    assert suite.attrib["name"] == "chartscore score"
    assert cases(suite) == EXPECTED


def test_compare_junit_reads_the_table(tmp_path: Path) -> None:
    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    gates = tmp_path / "gates.toml"
    gates.write_text(
        "".join(
            [
                gate_text(slice="overall", metric="normalized_agreement", min_lower=0.5),
                gate_text(
                    slice="overall", metric="normalized_agreement", min_difference_lower=0.05
                ),
                gate_text(slice="overall", metric="normalized_agreement", min_upper=0.99),
                gate_text(
                    slice="field:dx.flag",
                    metric="answerable_abstention",
                    max_lower=0,
                    level="warning",
                ),
                gate_text(
                    slice="overall",
                    metric="answerable_abstention",
                    max_difference_upper=-0.5,
                    level="warning",
                ),
            ]
        ),
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    argv = ["compare", "--gold", str(gold), "--baseline", str(baseline)]
    argv += [
        "--candidate",
        str(candidate),
        "--gates",
        str(gates),
        "--out",
        str(tmp_path / "c.json"),
    ]
    plain = run(argv)
    assert plain == run([*argv, "--junit", str(junit)])
    status, _, table = plain
    data = junit.read_bytes()
    assert CANARY_CASE.encode() not in data and CANARY_VALUE.encode() not in data
    (suite,) = ET.parse(junit).getroot().findall("testsuite")
    assert suite.attrib["name"] == "chartscore compare"
    found = cases(suite)
    rows = [line.split() for line in table.splitlines()[1:6]]
    assert len(found) == len(rows) == 5
    assert {outcome for _, outcome, *_ in found} == {"", "failure", "skipped"}
    required_failed = False
    for (name, outcome, level, message), row in zip(found, rows, strict=True):
        number, where, metric, rule, sign, threshold, observed = row[:7]
        *interval, row_level, verdict = row[7:]
        assert name == f"gate {number}: {where} {metric} {rule} {sign} {threshold}"
        assert {"pass": "", "FAIL": "failure", "warn": "skipped"}[verdict] == outcome
        if outcome:
            bound = (
                "lower" if rule in ("min_lower", "max_lower", "min_difference_lower") else "upper"
            )
            whose = "difference's " if "difference" in rule else ""
            relation = "below" if rule.startswith("min_") else "above"
            assert message == (
                f"{whose}{bound} 95% bound {observed} ({' '.join(interval)}) is {relation} "
                f"{threshold}"
            )
            assert level == row_level
        required_failed |= outcome == "failure"
    assert status == (3 if required_failed else 0)
    check_counts(ET.parse(junit).getroot())


def test_the_library_writes_comparisons_and_reasons() -> None:
    document = compare(categorical_rows(set(range(7)), set(range(9)), size=20))
    results = evaluate(
        document,
        parse_gates(
            gate_text(slice="field:hx.smoking", metric="exact_agreement", min_upper=0.99)
            + gate_text(
                slice="field:hx.smoking", metric="exact_agreement", min_difference_lower=0.2
            )
        ),
    )
    upper = document.by_field["hx.smoking"].paired["exact_agreement"].candidate.interval
    difference = document.by_field["hx.smoking"].paired["exact_agreement"].interval
    assert upper is not None and difference is not None
    first, second = (failure_message(r, 0.95) for r in results.results)
    assert first == f"upper 95% bound {upper[1]:.4f} (wilson) is below 0.99"
    assert second == f"difference's lower 95% bound {difference[0]:.4f} (newcombe) is below 0.2"
    few = evaluate(
        kappa_report(20),
        parse_gates(gate_text(slice="field:dx.flag", metric="kappa", min_lower=-1)),
    )
    assert failure_message(few.results[0], 0.95) == (
        "too few pairs (kappa): no reliable interval, cannot be shown to be at least -1"
    )
    data = junit_xml([JUnitSuite("one", results), JUnitSuite("two", few)])
    root = ET.fromstring(data)
    assert [s.attrib["name"] for s in root.findall("testsuite")] == ["one", "two"]
    assert counts(root) == {"tests": 3, "failures": 3, "errors": 0, "skipped": 0}
    check_counts(root)


@pytest.mark.parametrize("suites", [None, "x", [object()], (JUnitSuite("a"), 1)])
def test_junit_xml_refuses_what_is_not_suites(suites: object) -> None:
    with pytest.raises(ChartscoreError) as caught:
        junit_xml(suites)  # type: ignore[arg-type]
    assert caught.value.code is E.USAGE


def test_names_are_escaped_by_elementtree() -> None:
    # A suite name with XML's special characters (a caller's, not the command line's) is
    # escaped, never written raw: the document still parses and reads the name back.
    name = "a<b>&\"c'"
    root = ET.fromstring(junit_xml([JUnitSuite(name, errors=(("gates", "x<y"),))]))
    (suite,) = root.findall("testsuite")
    assert suite.attrib["name"] == name
    assert cases(suite) == [("run", "error", "gates", "gates: x<y")]


def test_a_junit_parser_reads_it_if_installed(tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser")  # not a dependency: checked when present
    document = tmp_path / "report.json"
    document.write_text(small_report().to_json(), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    run(["gate", str(document), "--gates", str(gates), "--junit", str(junit)])
    xml = junitparser.JUnitXml.fromfile(str(junit))
    (suite,) = list(xml)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (8, 3, 0, 2)
    assert [case.name for case in suite] == [name for name, *_ in EXPECTED]


# --------------------------------------------------------------------------- batch


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return make_demo(tmp_path_factory.mktemp("junit") / "demo")


def test_batch_junit_one_suite_per_run(demo_files: Demo, tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text(
        gate_text(slice="overall", metric="normalized_agreement", min_difference_lower=-0.02)
        + gate_text(
            slice="overall", metric="normalized_agreement", min_upper=0.95, level="warning"
        ),
        encoding="utf-8",
    )
    outcomes = []
    for name in ("plain", "junit"):
        demo = copy_demo(demo_files, tmp_path / name)
        argv = ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*.jsonl")]
        argv += ["--schema", str(demo.schema), "--ledger", str(demo.ledger)]
        argv += ["--ledger-key", str(demo.key), "--baseline", "model-v1", "--gates", str(gates)]
        argv += ["--jobs", "1"]
        if name == "junit":
            argv += ["--junit", str(tmp_path / "junit.xml")]
        outcomes.append(run(argv))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == 1  # the broken run
    root = ET.parse(tmp_path / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.attrib["name"] for s in suites] == ["broken", "model-v1", "model-v2"]
    broken, baseline, v2 = suites
    assert cases(broken) == [
        ("run", "error", "scoring", "scoring: invalid_json (predictions line 3)")
    ]
    assert counts(broken) == {"tests": 1, "failures": 0, "errors": 1, "skipped": 0}
    assert cases(baseline) == [] and counts(baseline)["tests"] == 0
    assert {p.attrib["name"]: p.attrib["value"] for p in baseline.iter("property")} == {
        "role": "baseline"
    }
    found = cases(v2)
    assert [name for name, *_ in found] == [
        "gate 1: overall normalized_agreement min_difference_lower >= -0.02",
        "gate 2: overall normalized_agreement min_upper >= 0.95",
    ]
    assert [outcome for _, outcome, *_ in found] == ["", "skipped"]
    assert found[1][3].startswith("upper 95% bound 0.") and found[1][3].endswith(
        " (clustered) is below 0.95"
    )
    properties = {p.attrib["name"]: p.attrib["value"] for p in v2.iter("property")}
    assert properties["compared_with"] == "model-v1"
    check_counts(root)


def test_batch_junit_is_never_a_run(demo_files: Demo, tmp_path: Path) -> None:
    demo = copy_demo(demo_files, tmp_path / "demo")
    gates = tmp_path / "gates.toml"
    gates.write_text(gate_text(slice="overall", metric="normalized_agreement", min_lower=0))
    target = demo.run("model-v2")
    before = target.read_bytes()
    argv = ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*.jsonl")]
    argv += ["--ledger", str(demo.ledger), "--ledger-key", str(demo.key), "--gates", str(gates)]
    status, out, err = run([*argv, "--junit", str(target)])
    assert (status, out) == (1, "") and err.startswith("chartscore: error: output_is_input")
    assert target.read_bytes() == before and not demo.ledger.exists()
    status, out, err = run([*argv, "--junit", str(demo.ledger)])
    assert status == 1 and err.startswith("chartscore: error: duplicate_output")


def test_batch_junit_is_written_when_the_pattern_also_names_the_ledger(
    demo_files: Demo, tmp_path: Path
) -> None:
    # The ledger inside the runs' folder is skipped as a run, but --junit's check counted it
    # as an input of the batch, and then as an output too: output_is_input, nothing written.
    demo = copy_demo(demo_files, tmp_path / "demo")
    gates = tmp_path / "gates.toml"
    gates.write_text(gate_text(slice="overall", metric="normalized_agreement", min_lower=0))
    (demo.runs / "broken.jsonl").unlink()  # a failed run exits 1 whatever the gates say
    ledger = demo.runs / "ledger.jsonl"
    argv = ["batch", "--gold", str(demo.gold), "--predictions", str(demo.runs / "*.jsonl")]
    argv += ["--schema", str(demo.schema), "--ledger", str(ledger), "--ledger-key", str(demo.key)]
    argv += ["--gates", str(gates)]
    assert run(argv)[0] in (0, 3)  # the ledger now exists, among the files the pattern names
    junit = tmp_path / "junit.xml"
    status, out, err = run([*argv, "--junit", str(junit)])
    assert status in (0, 3), err
    assert "1 matched file skipped" in out
    assert junit.read_bytes().startswith(b"<?xml")


# --------------------------------------------------------------------------- refusals


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    document = tmp_path / "report.json"
    document.write_text(small_report().to_json(), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES, encoding="utf-8")
    return document, gates


def test_junit_must_name_a_file(files: tuple[Path, Path]) -> None:
    document, gates = files
    status, out, err = run(["gate", str(document), "--gates", str(gates), "--junit", "-"])
    assert (status, out) == (2, "")
    assert err == (
        "chartscore: error: usage: --junit must name a file; see chartscore gate --help\n"
    )


def test_junit_needs_gates(tmp_path: Path) -> None:
    gold, baseline, candidate = write_cohort(tmp_path, 5, 1)
    argv = ["compare", "--gold", str(gold), "--baseline", str(baseline), "--candidate"]
    status, out, err = run([*argv, str(candidate), "--junit", str(tmp_path / "junit.xml")])
    assert (status, out) == (2, "")
    assert err == (
        "chartscore: error: usage: --junit needs --gates; see chartscore compare --help\n"
    )
    assert not (tmp_path / "junit.xml").exists()


@pytest.mark.parametrize("which", ["document", "gates"])
def test_junit_is_never_written_over_an_input(files: tuple[Path, Path], which: str) -> None:
    document, gates = files
    target = document if which == "document" else gates
    before = target.read_bytes()
    status, out, err = run(["gate", str(document), "--gates", str(gates), "--junit", str(target)])
    assert (status, out) == (1, "")
    assert err.startswith("chartscore: error: output_is_input (output)")
    assert str(target) not in err and target.read_bytes() == before


def test_junit_and_out_must_differ(tmp_path: Path) -> None:
    gold, baseline, candidate = write_cohort(tmp_path, 5, 1)
    gates = tmp_path / "gates.toml"
    gates.write_text(gate_text(slice="overall", metric="exact_agreement", min_lower=0))
    same = tmp_path / "out.json"
    argv = ["compare", "--gold", str(gold), "--baseline", str(baseline), "--candidate"]
    argv += [str(candidate), "--gates", str(gates), "--out", str(same), "--junit", str(same)]
    status, out, err = run(argv)
    assert (status, out) == (1, "") and err.startswith("chartscore: error: duplicate_output")
    assert not same.exists()


def test_a_junit_target_in_a_missing_folder_is_refused_before_any_work(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    document, gates = files
    target = tmp_path / "no" / "junit.xml"
    status, out, err = run(["gate", str(document), "--gates", str(gates), "--junit", str(target)])
    assert (status, out) == (1, "")  # no table: refused before the gates were checked
    assert err.startswith("chartscore: error: output_unwritable (output")
    assert str(tmp_path) not in err


def test_the_min_cell_check_is_one_more_case(files: tuple[Path, Path], tmp_path: Path) -> None:
    # gate --min-cell N: a full report is not shared, so it fails the check (exit 3) even
    # where every gate passes; the JUnit file says so in a test case of its own.
    document, _ = files
    gates = tmp_path / "passing.toml"
    gates.write_text(gate_text(slice="field:note.text", metric="normalized_agreement", min_lower=0))
    junit = tmp_path / "junit.xml"
    argv = ["gate", str(document), "--gates", str(gates), "--min-cell", "11"]
    plain = run(argv)
    assert plain == run([*argv, "--junit", str(junit)])
    assert plain[0] == 3 and plain[1].endswith(
        "min cell FAILED: not a shared document, so below the required 11\n"
    )
    root = ET.parse(junit).getroot()
    (suite,) = root.findall("testsuite")
    assert cases(suite) == [
        ("gate 1: field:note.text normalized_agreement min_lower >= 0", "", "", ""),
        (
            "min cell >= 11",
            "failure",
            "required",
            "not a shared document, so below the required 11",
        ),
    ]
    check_counts(root)


def test_merge_writes_junit_too(tmp_path: Path) -> None:
    gold, predictions = text_cohort(tmp_path)
    partial = tmp_path / "site.partial"
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    argv += ["--out", str(tmp_path / "r.json"), "--partial-out", str(partial)]
    assert run(argv)[0] == 0
    gates = tmp_path / "gates.toml"
    gates.write_text(gate_text(slice="overall", metric="exact_agreement", min_upper=0.75))
    argv = ["merge", "--partials", str(tmp_path / "*.partial"), "--gates", str(gates)]
    argv += ["--out", str(tmp_path / "merged.json")]
    plain = run(argv)
    junit = tmp_path / "junit.xml"
    assert plain == run([*argv, "--junit", str(junit)]) and plain[0] == 0
    (suite,) = ET.parse(junit).getroot().findall("testsuite")
    assert suite.attrib["name"] == "chartscore merge"
    assert cases(suite) == [("gate 1: overall exact_agreement min_upper >= 0.75", "", "", "")]


def test_a_folder_given_as_the_junit_file_is_named_as_junit_never_by_its_path(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    document, gates = files
    folder = tmp_path / "ci-results"
    folder.mkdir()
    status, out, err = run(["gate", str(document), "--gates", str(gates), "--junit", str(folder)])
    assert (status, out) == (1, "")  # no table: refused before the gates were checked
    assert err.startswith(
        "chartscore: error: output_unwritable (output; --junit names a folder: it takes the "
        "JUnit file's name)"
    )
    assert str(tmp_path) not in err and "ci-results" not in err and os.listdir(folder) == []
