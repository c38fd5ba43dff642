"""The outsider's rule (docs/disclosure.md, "Auditing"): ``audit --min-cell N`` and
``gate --min-cell N`` fail a document shared at a min cell below N, for shared reports and
shared comparisons, and check N as ``share --min-cell`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_shared_comparison import run, write_cohort

from helpers import examples

pytest.importorskip("scipy")  # share and audit need the solver

# A gate that passes at both min cells: a rate both shared reports show (the overall exact
# agreement's total, the answerable rows, is hidden at min cell 11 since the cohort's
# composition is public).
GATES = '[[gate]]\nslice = "overall"\nmetric = "evidence_support"\nmin_lower = 0.0\n'
# A comparison's gate that passes at both min cells (a field's difference, or its bound).
COMPARISON_GATES = (
    '[[gate]]\nslice = "field:dx.flag"\nmetric = "exact_agreement"\nmin_difference_lower = -1.0\n'
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A shared report and a shared comparison at min cells 3 and 11, a full report, gates."""
    where = tmp_path_factory.mktemp("shared")
    gold, baseline, candidate = write_cohort(where, 40, 5)
    files: dict[str, Path] = {}
    for min_cell in ("3", "11"):
        report, comparison = where / f"report-{min_cell}.json", where / f"cmp-{min_cell}.json"
        common = ["share", "--gold", str(gold), "--min-cell", min_cell]
        status, _, err = run([*common, "--predictions", str(baseline), "--out", str(report)])
        assert status == 0, err
        argv = [*common, "--baseline", str(baseline), "--candidate", str(candidate)]
        status, _, err = run([*argv, "--out", str(comparison)])
        assert status == 0, err
        files[f"report {min_cell}"], files[f"comparison {min_cell}"] = report, comparison
    files["full"] = where / "full.json"
    status, _, err = run(
        ["score", "--gold", str(gold), "--predictions", str(baseline), "--out", str(files["full"])]
    )
    assert status == 0, err
    files["report gates"] = where / "gates.toml"
    files["report gates"].write_text(GATES, encoding="utf-8")
    files["comparison gates"] = where / "comparison-gates.toml"
    files["comparison gates"].write_text(COMPARISON_GATES, encoding="utf-8")
    return files


KINDS = ["report", "comparison"]


@pytest.mark.parametrize("kind", KINDS)
def test_audit_fails_a_document_shared_below_the_readers_min_cell(
    shared: dict[str, Path], kind: str
) -> None:
    document = str(shared[f"{kind} 3"])
    status, out, err = run(["audit", document, "--min-cell", "11"])
    assert (status, out, err) == (
        4,
        "audit FAIL: min_cell 3, below the required 11 (--min-cell)\n",
        "",
    )
    status, out, err = run(["audit", document, "--min-cell", "3"])
    assert status == 0 and err == ""
    *table, verdict, rule = out.splitlines()
    assert verdict.startswith("audit PASS: min_cell 3,")
    assert rule == "min_cell 3: at least the required 3 (--min-cell)"
    # Without --min-cell, the audit prints what it printed before: the table and the verdict.
    assert run(["audit", document]) == (0, "\n".join([*table, verdict]) + "\n", "")


@pytest.mark.parametrize("kind", KINDS)
def test_audit_passes_a_document_shared_at_the_readers_min_cell_or_more(
    shared: dict[str, Path], kind: str
) -> None:
    for required in ("2", "11"):
        status, out, _ = run(["audit", str(shared[f"{kind} 11"]), "--min-cell", required])
        assert status == 0
        assert out.splitlines()[-1] == f"min_cell 11: at least the required {required} (--min-cell)"
    status, out, _ = run(["audit", str(shared[f"{kind} 11"]), "--min-cell", "12"])
    assert (status, out) == (4, "audit FAIL: min_cell 11, below the required 12 (--min-cell)\n")


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(2, 60), st.sampled_from(KINDS), st.sampled_from(["3", "11"]))
def test_gate_fails_exactly_below_the_readers_min_cell(
    shared: dict[str, Path], required: int, kind: str, declared: str
) -> None:
    document, gates = str(shared[f"{kind} {declared}"]), str(shared[f"{kind} gates"])
    plain = run(["gate", document, "--gates", gates])
    assert plain[0] == 0  # the gate itself passes: only the min cell can fail it
    status, out, err = run(["gate", document, "--gates", gates, "--min-cell", str(required)])
    met = required <= int(declared)
    assert status == (0 if met else 3) and err == ""
    assert out.startswith(plain[1])  # the gates' table first, as without --min-cell
    relation = "passed" if met else "FAILED"
    wording = "at least" if met else "below"
    assert out.removeprefix(plain[1]) == (
        f"min cell {relation}: min_cell {declared}, {wording} the required {required}\n"
    )


def test_gate_fails_a_full_report_under_a_readers_min_cell(shared: dict[str, Path]) -> None:
    # A full report is not suppressed at all: below any min cell a reader can require.
    argv = ["gate", str(shared["full"]), "--gates", str(shared["report gates"])]
    assert run(argv)[0] == 0
    status, out, _ = run([*argv, "--min-cell", "2"])
    assert status == 3
    assert out.splitlines()[-1] == "min cell FAILED: not a shared document, so below the required 2"


@pytest.mark.parametrize("value", ["10000000000", "9" * 5000, "000000000000000000001"])
@pytest.mark.parametrize("command", ["audit", "gate", "share", "share --also-min-cell"])
def test_a_whole_number_of_ten_digits_or_more_is_out_of_range_not_a_usage_error(
    shared: dict[str, Path], command: str, value: str, tmp_path: Path
) -> None:
    # docs/cli.md: a whole number out of range is invalid_min_cell; past nine digits it was
    # "usage: --min-cell must be a whole number" (exit 2), though it is one.
    if command == "share":
        argv = ["share", "--gold", "g", "--predictions", "p", "--min-cell", value]
    elif command == "share --also-min-cell":
        argv = ["share", "--gold", "g", "--publication", "p*", "--out-dir", str(tmp_path)]
        argv += ["--also-min-cell", value]
    else:
        argv = [command, str(shared["report 3"]), "--min-cell", value]
    if command == "gate":
        argv += ["--gates", str(shared["report gates"])]
    status, out, err = run(argv)
    assert (status, out) == (1, "")
    assert err.startswith("chartscore: error: invalid_min_cell: ") and err.count("\n") == 1


@pytest.mark.parametrize("command", ["audit", "gate"])
@pytest.mark.parametrize(
    ("value", "status", "message"),
    [
        ("ten", 2, "usage: --min-cell must be a whole number; see chartscore {command} --help"),
        ("-4", 2, "usage: "),
        ("2.5", 2, "usage: --min-cell must be a whole number"),
        ("", 2, "usage: --min-cell must be a whole number"),
        ("0", 1, "invalid_min_cell: "),
        ("1", 1, "invalid_min_cell: "),
        ("1000001", 1, "invalid_min_cell: "),
    ],
)
def test_a_bad_min_cell_is_refused_as_share_refuses_it(
    shared: dict[str, Path], command: str, value: str, status: int, message: str
) -> None:
    argv = [command, str(shared["report 3"]), "--min-cell", value]
    if command == "gate":
        argv += ["--gates", str(shared["report gates"])]
    result = run(argv)
    assert result[0] == status and result[1] == ""
    assert result[2].startswith("chartscore: error: " + message.format(command=command))
    assert result[2].count("\n") == 1 and str(shared["report 3"].parent) not in result[2]
    if value == "1":  # share gives the same answer for the same N
        share = run(["share", "--gold", "g", "--predictions", "p", "--min-cell", value])
        assert share[0] == status and share[2].startswith("chartscore: error: " + message)
