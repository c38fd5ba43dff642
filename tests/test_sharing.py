"""The product path of disclosure control: case counts while scoring, share, the commands.

``chartscore.workflows.share`` counts the distinct cases behind every number with a
:class:`~chartscore.scoring.cases.CaseTrackingScorer`. Here those counts are checked
against the independent reference in ``disclosure_reference.py`` (which judges every
raw row itself), and the shared reports it writes against the issue's "done when":
no published nonzero number backed by fewer than ``min_cell`` cases, an audit that
passes, published numbers equal to the full report's, and an audit that fails when a
complementary cell is filled back in.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, score
from chartscore.cli import main
from chartscore.disclosure import SharedReport, audit
from chartscore.records.schema import to_schema
from chartscore.scoring.cases import CaseTrackingScorer, case_counts, kappa_smallest_margins
from chartscore.scoring.scorer import feed_records
from chartscore.workflows.share import share, share_files
from disclosure_reference import Cohort, build_cohort, normalize
from test_disclosure import (
    TYPES,
    assert_shared_properties,
    cohorts,
    duplicated,
    refill,
    worked_example,
)

from helpers import (
    as_shared,
    assert_never_narrower,
    chain_dict,
    digest,
    examples,
    pop_clustered,
    thorough_only,
    write_jsonl,
)

SLOW = settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def product_counts(cohort: Cohort) -> tuple[dict[Any, int], dict[str, int]]:
    gold, predictions = cohort.records()
    scorer = CaseTrackingScorer(_schema(cohort))
    feed_records(scorer, gold, predictions)
    partial = scorer.partial()
    return case_counts(partial, partial.tally()), kappa_smallest_margins(partial)


def _schema(cohort: Cohort) -> Any:
    return to_schema(cohort.schema_document())


def _pooled_majority(key: tuple[str, str, str]) -> bool:
    return key[0] != "field" and key[2].startswith("majority_baseline.")


@SLOW
@given(cohorts())
def test_case_counts_while_scoring_match_the_reference(cohort: Cohort) -> None:
    counts, margins = product_counts(cohort)
    reference, _ = cohort.sensitivity()
    assert set(counts) == set(reference.case_counts)
    for key, expected in reference.case_counts.items():
        if _pooled_majority(key):
            # A pooled majority baseline uses a lower bound: it may only suppress more.
            assert counts[key] <= expected and (counts[key] == 0) == (expected == 0), key
        else:
            assert counts[key] == expected, key
    assert margins == dict(reference.kappa_smallest_margin)


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cohorts(), st.sampled_from([2, 3, 11]))
def test_shared_reports_from_records_hold_the_rule(cohort: Cohort, min_cell: int) -> None:
    gold, predictions = cohort.records()
    shared = share(gold, predictions, schema=cohort.schema_document(), min_cell=min_cell)
    report = score(gold, predictions, schema=cohort.schema_document())
    reference, tally = cohort.sensitivity()
    # Judged by the reference's case counts: nothing small is published, the audit passes.
    checked = assert_shared_properties(report, reference, tally, min_cell)
    hidden = {key for key, value in shared.numbers() if value is None}
    numbers = {key for key, _ in shared.numbers()}  # evidence_provided may be left out
    assert {k for k, n in reference.case_counts.items() if 1 <= n < min_cell} - {
        k for k in reference.case_counts if k[2].endswith(".failures")
    } <= hidden | (set(reference.case_counts) - numbers)
    assert checked.disclosure.field_types == shared.disclosure.field_types
    assert_figures_hold_the_rules(cohort, shared, min_cell)


def _reference_errors(cohort: Cohort, field_id: str) -> list[Fraction]:
    # Each answered answerable row's |answer - gold|, judged from the raw rows.
    field_type = cohort.schema[field_id]["type"]
    out = []
    for case, field, _, value in cohort.gold:
        answer = cohort.predictions.get((case, field))
        if field != field_id or value is None or answer is None:
            continue
        gold_key = normalize(field_type, cohort.schema[field_id], value)
        answer_key = normalize(field_type, cohort.schema[field_id], answer[0])
        if gold_key is None or answer_key is None:
            continue
        if field_type == "date":
            if gold_key[0] != 3 or answer_key[0] != 3:  # type: ignore[index]
                continue  # only full-precision dates have a distance
            distance = (answer_key[1] - gold_key[1]).days  # type: ignore[index]
            out.append(Fraction(abs(distance)))
        else:
            out.append(abs(Fraction(answer_key) - Fraction(gold_key)))  # type: ignore[arg-type]
    return out


def assert_figures_hold_the_rules(cohort: Cohort, shared: SharedReport, min_cell: int) -> None:
    """Shown figures beside published counts of min_cell, magnitudes under the (2, 85%) rule."""
    for field_id, part in shared.by_field.items():
        uncertainty = part.uncertainty
        assert uncertainty is not None
        for count in (uncertainty.agreed, uncertainty.rows, uncertainty.without):
            assert count is None or count == 0 or count >= min_cell
        magnitude = part.magnitude
        if magnitude is None:
            continue
        errors = _reference_errors(cohort, field_id)
        if magnitude.pairs is not None:
            assert magnitude.pairs == len(errors)
        if magnitude.mean_absolute_error is None:
            continue
        assert magnitude.pairs is not None and magnitude.pairs >= min_cell
        top = sorted(errors, reverse=True)[:2]
        assert sum(errors) > 0 and sum(top) <= Fraction(85, 100) * sum(errors)
        assert magnitude.mean_absolute_error == float(sum(errors) / len(errors))


def test_a_cohort_with_no_small_cell_loses_nothing_from_records() -> None:
    cohort = duplicated(build_cohort(random.Random(5).choice, list(TYPES), 3), 11)
    gold, predictions = cohort.records()
    shared = share(gold, predictions, schema=cohort.schema_document())
    report = as_shared(score(gold, predictions, schema=cohort.schema_document()))
    full = json.loads(report.core().to_json())
    document = json.loads(shared.to_json())
    assert shared.disclosure.suppressed_count == 0
    figures = {
        field_id: (part.pop("error_magnitude", None), part.pop("declared_uncertainty"))
        for field_id, part in document["by_field"].items()
    }
    # Interval alpha comes with the error magnitude (core() leaves both out): the report's,
    # or withheld with the limits (all errors 0: a zero total is withheld).
    whole = score(gold, predictions, schema=cohort.schema_document()).to_dict()["by_field"]
    for field_id, (magnitude, _) in figures.items():
        if magnitude is None:
            continue
        alpha, expected = document["by_field"][field_id].pop("alpha"), whole[field_id]["alpha"]
        withheld = magnitude["limits_of_agreement"] is None
        assert alpha == ({**expected, "value": None, "interval": None} if withheld else expected)
    assert_never_narrower(pop_clustered(document), pop_clustered(full))
    for key in ("overall", "by_field", "by_field_type"):
        assert document[key] == full[key]
    # The validation figures' counts are all published, equal to the report's.
    report = score(gold, predictions, schema=cohort.schema_document())
    for field_id, (magnitude, uncertainty) in figures.items():
        part = report.by_field[field_id]
        assert (magnitude is None) == (part.magnitude is None)
        if magnitude is not None and part.magnitude is not None:
            assert magnitude["pairs"] == part.magnitude.pairs
            assert magnitude["chance"]["gold_rows"] == part.magnitude.gold_rows
        assert part.uncertainty is not None
        sums = part.uncertainty.sums
        found = (uncertainty["agreed"], uncertainty["rows"], uncertainty["without_uncertainty"])
        assert found == (sums.agreed, sums.rows, sums.without)


def test_ignored_predictions_are_counted_by_case_and_shared_at_the_top() -> None:
    cohort = duplicated(build_cohort(random.Random(7).choice, ["text"], 2), 11)
    gold, predictions = cohort.records()
    extra = [type(predictions[0])(f"other-{i}", "f000.text", "a") for i in range(3)]
    shared = share(
        gold, predictions + extra, schema=cohort.schema_document(), extra_predictions="ignore"
    )
    document = json.loads(shared.to_json())
    # 3 ignored predictions from 3 cases: small, so suppressed; it stays a top-level key.
    assert document["ignored_prediction_count"] is None
    assert "ignored_prediction_count" not in document["overall"]
    assert audit(shared.to_json()).passed
    many = [type(predictions[0])(f"other-{i}", "f000.text", "a") for i in range(11)]
    shown = share(
        gold, predictions + many, schema=cohort.schema_document(), extra_predictions="ignore"
    )
    assert json.loads(shown.to_json())["ignored_prediction_count"] == 11
    assert SharedReport.from_json(shown.to_json()).to_json() == shown.to_json()


@pytest.mark.parametrize("min_cell", [1, 0, -3, 10**7, True, 2.0, "11"])
def test_share_refuses_a_bad_min_cell(min_cell: Any) -> None:
    cohort = build_cohort(random.Random(1).choice, ["text"], 3)
    gold, predictions = cohort.records()
    with pytest.raises(ChartscoreError) as caught:
        share(gold, predictions, min_cell=min_cell)
    assert caught.value.code is ErrorCode.INVALID_MIN_CELL


# --- the commands -------------------------------------------------------------------


def cohort_files(cohort: Cohort, where: Path) -> tuple[Path, Path, Path]:
    gold_rows = [
        {"case_id": c, "field_id": f, "field_type": t, "value": v} for c, f, t, v in cohort.gold
    ]
    prediction_rows: list[dict[str, object]] = []
    for (case, field_id), (answer, supported) in sorted(cohort.predictions.items()):
        row: dict[str, object] = {"case_id": case, "field_id": field_id, "value": answer}
        if supported:  # True, or GENERATED: a generated-text chain that supports nothing
            fact = digest(f"{case}/{field_id}")
            row["normalized_fact_digest"] = fact
            kinds = ("clinical_record",) if supported is True else ("generated_text",)
            row["evidence_chain"] = chain_dict(field_id, fact, kinds)
        prediction_rows.append(row)
    schema = where / "schema.json"
    schema.write_text(json.dumps(cohort.schema_document()), encoding="utf-8")
    return (
        write_jsonl(where / "gold.jsonl", gold_rows),
        write_jsonl(where / "predictions.jsonl", prediction_rows),
        schema,
    )


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_share_writes_what_audit_passes_and_a_refilled_cell_fails(tmp_path: Path) -> None:
    cohort = worked_example()
    gold, predictions, schema = cohort_files(cohort, tmp_path)
    target = tmp_path / "shared.json"
    files = ["--gold", str(gold), "--predictions", str(predictions), "--schema", str(schema)]
    status, out, err = run(["share", *files, "--out", str(target), "--jobs", "1"])
    assert (status, out) == (0, "")
    # Then what survives: the cohort's size (field_count, 40) is public, so the exact
    # minimum-cost choice hides answerable_count and what it is the total of: of the field's
    # 8 rates 2 are shown (wrong_type_answer 0/36, evidence_support 18/36) and 6 bounded; of
    # the 15 pooled rates (7 overall, 8 boolean) 4 shown and 11 ranged (evidence_provided is
    # not shared: some answers carry evidence, src/chartscore/disclosure/evidence_rule.py).
    # Primary: 9 numbers in the field and type slices (unanswerable, missing, abstained counts,
    # unanswerable_answer's two counts, and the successes of exact, normalized, majority and
    # abstention_correctness, whose failures are small), 8 overall (no majority baseline); and
    # the field's two declared-uncertainty counts (17 rows, 15 agreeing: 2 disagree). Then
    # the two labels' 16 numbers, 12 hidden.
    assert err == (
        "chartscore: 55 numbers suppressed (min cell 11): 38 primary, 17 complementary "
        "(inside only); 81 hidden numbers checked, these and 26 derived from them (failures, "
        "disagreed rows); the audit passed\n"
        "chartscore: rates shown 2/8 field-level, bounded 6; pooled 4/15, range 11; "
        "labels 0/8, bounded 8\n"
        "chartscore: complementary cells: exact, the minimum declared cost 279; then the "
        "labels, greedy, 60 more (inside only)\n"
        "chartscore: differencing against earlier or later releases of overlapping cohorts is "
        "not covered (--releases DIR), nor combining this report with other systems' products "
        "of the cohort unless shared with them (--publication; docs/disclosure.md)\n"
    )
    text = target.read_text(encoding="utf-8")
    # The file is what the library shares, byte for byte.
    assert text == share_files(gold, predictions, schema=schema).to_json() + "\n"
    status, table, err = run(["audit", str(target)])
    assert (status, err) == (0, "")
    # audit checks what share said: the 55 suppressed numbers and the 26 derived from them.
    assert table.splitlines()[-1] == (
        "audit PASS: min_cell 11, 81 hidden numbers checked (55 suppressed in the document, "
        "26 derived from them), 0 failing"
    )
    # Fill one complementary cell of the field slice back in: the audit must fail (exit 4).
    shared = SharedReport.from_json(text)
    report = score(*cohort.records(), schema=cohort.schema_document())
    reference, _ = cohort.sensitivity()
    sensitive = {k for k, n in reference.case_counts.items() if 1 <= n < 11}
    field_cells = sorted(
        key
        for key, value in shared.numbers()
        if value is None and key[0] == "field" and key not in sensitive
    )
    statuses = []
    for key in field_cells:
        copy = tmp_path / "refilled.json"
        copy.write_text(refill(shared, report, {key}), encoding="utf-8")
        status, table, err = run(["audit", str(copy)])
        assert err == "" and table.splitlines()[-1].startswith("audit ")
        statuses.append(status)
    assert 4 in statuses and set(statuses) <= {0, 4}


@thorough_only("shares of the same inputs in several orders (about 4 s)")
def test_share_output_is_the_same_for_any_input_order(tmp_path: Path) -> None:
    cohort = build_cohort(random.Random(11).choice, ["boolean", "number", "ordinal"], 30)
    gold, predictions, schema = cohort_files(cohort, tmp_path)
    lines = predictions.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(2).shuffle(lines)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("".join(lines), encoding="utf-8")
    first = run(
        [
            "share",
            "--gold",
            str(gold),
            "--predictions",
            str(predictions),
            "--schema",
            str(schema),
            "--min-cell",
            "5",
        ]
    )
    second = run(
        [
            "share",
            "--gold",
            str(gold),
            "--predictions",
            str(shuffled),
            "--schema",
            str(schema),
            "--min-cell",
            "5",
            "--jobs",
            "2",
        ]
    )
    assert first[0] == 0 and first[1] == second[1]
    assert json.loads(first[1])["disclosure"]["min_cell"] == 5


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (
            ["--min-cell", "ten"],
            2,
            "usage: --min-cell must be a whole number; see chartscore share",
        ),
        (["--min-cell", "1"], 1, "invalid_min_cell: "),
        (["--min-cell", "-4"], 2, "usage: "),
    ],
)
def test_share_min_cell_errors_are_named(
    tmp_path: Path, extra: list[str], status: int, message: str
) -> None:
    cohort = build_cohort(random.Random(1).choice, ["text"], 3)
    gold, predictions, _ = cohort_files(cohort, tmp_path)
    result = run(["share", "--gold", str(gold), "--predictions", str(predictions), *extra])
    assert result[0] == status and result[1] == ""
    assert result[2].startswith("chartscore: error: " + message)
    assert result[2].count("\n") == 1


def test_share_refuses_to_overwrite_an_input(tmp_path: Path) -> None:
    cohort = build_cohort(random.Random(1).choice, ["text"], 3)
    gold, predictions, _ = cohort_files(cohort, tmp_path)
    before = gold.read_bytes()
    status, out, err = run(
        ["share", "--gold", str(gold), "--predictions", str(predictions), "--out", str(gold)]
    )
    assert status == 1 and out == "" and err.startswith("chartscore: error: output_is_input")
    assert gold.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "chartscore: error: invalid_report"),
        (b'{"format": "chartscore.report", "format_version": 1}', "chartscore: error: unknown_"),
    ],
)
def test_audit_refuses_what_is_not_a_shared_report(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    status, out, err = run(["audit", str(path)])
    assert (status, out) == (1, "") and err.startswith(message) and err.count("\n") == 1


def test_the_solver_loads_only_when_a_report_is_shared_or_audited() -> None:
    # scipy takes about a second to import: score, compare, render and gate never pay it.
    import subprocess
    import sys

    code = (
        "import sys, chartscore, chartscore.cli, chartscore.disclosure\n"
        "import chartscore.workflows.share\n"
        "assert 'scipy' not in sys.modules\n"
        "from chartscore.disclosure import audit\n"
        "import chartscore.disclosure.attack\n"
        "from chartscore.disclosure import audit as again\n"
        "assert callable(audit) and again is audit and 'scipy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# scipy is the optional extra chartscore[share]: a process where it cannot be imported.
_WITHOUT_SCIPY = (
    "import sys\n"
    "for name in ('scipy', 'scipy.optimize', 'scipy.sparse'):\n"
    "    sys.modules[name] = None  # import scipy now raises ImportError\n"
)
_INSTALL_LINE = (
    "chartscore: error: missing_dependency: "
    "pip install 'chartscore[share]' (share, audit) or 'chartscore[match]' (regex, fuzzy)\n"
)


def _without_scipy(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_SCIPY + code],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_scipy_is_the_share_extra_not_a_dependency() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    project = pyproject["project"]
    assert not any(d.startswith("scipy") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("scipy") for d in extras["share"])
    assert any(d.startswith("scipy") for d in extras["test"])  # the tests run the audit


def test_without_scipy_share_and_audit_say_how_to_install_it(tmp_path: Path) -> None:
    cohort = build_cohort(random.Random(4).choice, ["text"], 3)
    gold, predictions, _ = cohort_files(cohort, tmp_path)
    shared = tmp_path / "shared.json"
    assert run(["share", "--gold", str(gold), "--predictions", str(predictions), "--out",
                str(shared), "--jobs", "1"])[0] == 0  # fmt: skip
    target = tmp_path / "again.json"
    for argv in (
        ["share", "--gold", str(gold), "--predictions", str(predictions), "--out", str(target)],
        ["audit", str(shared)],
    ):
        code = f"from chartscore.cli import main\nsys.exit(main({argv!r}))\n"
        result = _without_scipy(code, tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", _INSTALL_LINE), argv
    assert not target.exists()


def test_without_scipy_the_library_says_how_to_install_it(tmp_path: Path) -> None:
    cohort = build_cohort(random.Random(4).choice, ["text"], 3)
    gold, predictions, _ = cohort_files(cohort, tmp_path)
    code = (
        "import chartscore, chartscore.disclosure\n"
        "from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction\n"
        "calls = [\n"
        "    lambda: chartscore.share([GoldField('c1', 'a.b', 'text', 'x')],\n"
        "                             [Prediction('c1', 'a.b', 'x')]),\n"
        f"    lambda: chartscore.share_files({str(gold)!r}, {str(predictions)!r}),\n"
        "    lambda: chartscore.disclosure.audit,\n"
        "]\n"
        "for call in calls:\n"
        "    try:\n"
        "        call()\n"
        "    except ChartscoreError as error:\n"
        "        assert error.code is ErrorCode.MISSING_DEPENDENCY, error\n"
        "        assert error.__context__ is None and error.__cause__ is None\n"
        "        print(error)\n"
        "    else:\n"
        "        raise AssertionError('no error')\n"
    )
    result = _without_scipy(code, tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "missing_dependency\n" * 3


def test_without_scipy_the_demo_score_and_render_work(tmp_path: Path) -> None:
    # README's first command, pip install . && chartscore demo, installs no scipy.
    code = (
        "from chartscore.cli import main\n"
        "assert main(['demo']) == 0\n"
        "assert 'scipy' not in sys.modules or sys.modules['scipy'] is None\n"
    )
    result = _without_scipy(code, tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert "all fields" in result.stdout


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_share_says_when_suppression_starts_on_a_terminal(tmp_path: Path, quiet: bool) -> None:
    cohort = build_cohort(random.Random(3).choice, ["boolean"], 12)
    gold, predictions, _ = cohort_files(cohort, tmp_path)
    err = Terminal()
    argv = ["share", "--gold", str(gold), "--predictions", str(predictions), "--jobs", "1"]
    status = main(argv + (["--quiet"] if quiet else []), stdout=io.StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert status == 0 and lines[-4].endswith("the audit passed")
    assert lines[-3].startswith("chartscore: rates shown ")
    assert lines[-2].startswith("chartscore: complementary cells: ")
    assert "differencing" in lines[-1]
    expected = [] if quiet else ["chartscore: suppressing small cells and auditing..."]
    assert lines[:-4] == expected
