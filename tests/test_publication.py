"""One publication, one audit: several shared reports of one cohort held together.

docs/disclosure.md, "One publication". The joint model ties products of one system class by
class, and products of different systems by their gold; the ranges it proves must hold the
true values (checked against the full reports), and it must find what the products leak
together that neither leaks alone.
"""

from __future__ import annotations

import functools
import io
import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore import GoldField, Prediction, score, share
from chartscore.disclosure.attack import published_values
from chartscore.disclosure.publication import audit_publication
from chartscore.disclosure.suppress import _with_figures
from chartscore.documents.shared_report import SharedReport, shared_from_report
from publication_data import SCHEMA
from publication_data import VALUES as _VALUES

from helpers import examples, thorough_only

_THOROUGH_ONLY = thorough_only(
    "each share of a small cohort takes seconds (the exact choice); the command-line test "
    "covers a publication by default"
)

DIGEST = "sha256:" + "ef" * 32


def _cohort(cases: int, seed: int) -> tuple[list[GoldField], list[Prediction], list[Prediction]]:
    # One gold, two systems: each answer is right, wrong, missing or an abstention at random.
    rng = random.Random(seed)
    gold: list[GoldField] = []
    systems: list[list[Prediction]] = [[], []]
    for i in range(cases):
        case = f"c{i:03d}"
        for field_id, values in _VALUES.items():
            field_type = SCHEMA["fields"][field_id]["type"]
            value = None if rng.random() < 0.15 else rng.choice(values)
            gold.append(GoldField(case, field_id, field_type, value))
            for rows in systems:
                draw = rng.random()
                if draw < 0.08:
                    continue  # missing
                if draw < 0.12:
                    answer: Any = None  # abstained
                elif draw < 0.3 or value is None:
                    answer = rng.choice(values)
                else:
                    answer = value
                rows.append(Prediction(case, field_id, answer, DIGEST))
    return gold, systems[0], systems[1]


def _truth(gold: list[GoldField], predictions: list[Prediction]) -> dict[Any, int | None]:
    # Every protected quantity's true value: the full report, nothing hidden.
    report = score(gold, predictions, schema=SCHEMA)
    types = {field_id: spec["type"] for field_id, spec in SCHEMA["fields"].items()}
    document = _with_figures(report.core().to_dict(), report)
    full = shared_from_report(document, types, 11, set(), set(), figures={})
    return published_values(full)


@functools.cache
def _shared(cases: int, seed: int, system: int, min_cell: int = 11) -> SharedReport:
    # share() on a small cohort takes seconds (the exact choice): each is made once.
    gold, *systems = _cohort(cases, seed)
    return share(gold, systems[system], schema=SCHEMA, min_cell=min_cell)


@_THOROUGH_ONLY
@settings(max_examples=examples(8, least=1), deadline=None)
@given(st.integers(min_value=30, max_value=40), st.integers(min_value=0, max_value=10**6))
def test_every_joint_range_holds_the_true_value(cases: int, seed: int) -> None:
    gold, first, second = _cohort(cases, seed)
    products = [_shared(cases, seed, 0), _shared(cases, seed, 0, 13), _shared(cases, seed, 1)]
    truths = [_truth(gold, first), _truth(gold, first), _truth(gold, second)]
    result = audit_publication(products, ["A", "A", "B"])
    assert result.rows, "something is hidden"
    for row in result.rows:
        true = truths[row.product][row.key]
        assert true is not None and row.low is not None
        assert row.low <= true and (row.high is None or true <= row.high)
    # The same products apart: each passes alone.
    assert all(result.own)


@thorough_only("two shares and a joint audit (about 7 s)")
def test_a_min_cell_variant_gives_back_what_the_stricter_one_hides() -> None:
    # The report shared at 11 shows counts of 11 and 12 that the one at 13 hides; held
    # together, the publication fails the stricter rule, while each passes alone.
    eleven, thirteen = _shared(40, 3, 0), _shared(40, 3, 0, 13)
    alone = audit_publication([thirteen], ["A"])
    assert alone.passed
    together = audit_publication([eleven, thirteen], ["A", "A"])
    assert all(together.own)
    assert not together.passed
    failing = [row for row in together.rows if not row.passed]
    assert all(row.status == "disclosed" for row in failing)
    assert all(row.high is not None and row.high < 13 for row in failing)


@thorough_only("four shares and a joint audit through the command line (about 7 s)")
def test_audit_system_ties_another_systems_reports_as_one_systems(tmp_path: Path) -> None:
    # B's report beside A's at min cells 11 and 13, each made apart. Given as one system
    # (--system), A's two reports are tied class by class, so the 11 gives back more of what
    # the 13 hides than when each file is its own system, tied to the rest by the gold alone
    # (--others): the README's `--others 'b*.json'` read a system's variants so.
    from test_shared_comparison import run

    for name, shared in (
        ("b", _shared(40, 3, 1)),
        ("a", _shared(40, 3, 0)),
        ("a.min-13", _shared(40, 3, 0, 13)),
    ):
        (tmp_path / f"{name}.shared.json").write_text(shared.to_json(), encoding="utf-8")
    argv = ["audit", str(tmp_path / "b.shared.json")]
    as_one = run([*argv, "--system", str(tmp_path / "a*.json")])
    apart = run([*argv, "--others", str(tmp_path / "a*.json")])
    failing = [int(text.rsplit(", ", 1)[1].split()[0]) for _, text, _ in (as_one, apart)]
    assert as_one[0] == apart[0] == 4
    assert "3 products together" in as_one[1] and "3 products together" in apart[1]
    assert failing[0] > failing[1] > 0
    # A pattern the shell expanded is refused, not read as two systems.
    expanded = [str(tmp_path / "a.shared.json"), str(tmp_path / "a.min-13.shared.json")]
    status, _, stderr = run([*argv, "--system", *expanded])
    assert status == 2 and str(tmp_path) not in stderr


@_THOROUGH_ONLY
def test_a_products_system_matters() -> None:
    # Two systems tied only by their gold prove no more than each alone when nothing of the
    # gold is hidden differently; labelled as one system, identical reports are one product.
    a, b = _shared(40, 3, 0), _shared(40, 3, 1)
    same = audit_publication([a, a], ["A", "A"])
    alone = audit_publication([a], ["A"])
    ranges = {(row.key, row.low, row.high) for row in alone.rows}
    assert {(row.key, row.low, row.high) for row in same.rows if row.product == 0} == ranges
    both = audit_publication([a, b], ["A", "B"])
    for row in both.rows:
        if row.product == 0:  # A's ranges can only narrow with B beside it
            own = next(r for r in alone.rows if r.key == row.key)
            assert row.low >= own.low  # type: ignore[operator]
            assert own.high is None or (row.high is not None and row.high <= own.high)


@thorough_only("a publication and its joint audit table (about 5 s)")
def test_the_table_shows_counts_and_statuses_only() -> None:
    shared = _shared(40, 3, 0)
    table = audit_publication([shared], ["A"]).table()
    assert table.endswith("failing\n")
    assert "c0" not in table and "sha256" not in table
    assert json.loads(SharedReport.from_json(shared.to_json()).to_json()) == json.loads(
        shared.to_json()
    )


# --- sharing one publication --------------------------------------------------------------


@functools.cache
def _publication(cases: int, seed: int) -> tuple[SharedReport, ...]:
    # One order only (each order is a whole publication's work; the CLI test tries both).
    from chartscore.workflows import publication

    gold, first, second = _cohort(cases, seed)
    with mock.patch.object(publication, "FIRSTS", 1):
        return tuple(publication.share_publication(gold, [first, second], schema=SCHEMA))


@_THOROUGH_ONLY
def test_a_shared_publication_passes_its_joint_audit_and_each_audit_alone() -> None:
    from chartscore.disclosure import audit
    from chartscore.disclosure.model import model_of
    from chartscore.disclosure.publication import gold_only_keys, label_gold_keys

    products = _publication(40, 3)
    assert audit_publication(list(products), ["A", "B"]).passed
    assert all(audit(product.to_json()).passed for product in products)
    # One decision for every gold-only number: shown in both with one value, or in neither;
    # the labels' gold totals too (the joint audit reads the reports without labels).
    first, second = (dict(product.numbers()) for product in products)
    gold_keys = gold_only_keys(model_of(products[0])) & set(first)
    assert gold_keys and all(first[key] == second[key] for key in gold_keys)
    label_keys = label_gold_keys(model_of(products[0]))
    assert label_keys and label_keys <= set(first)
    assert all(first[key] == second[key] for key in label_keys)


@thorough_only("a publication of 80 charts (about 4 s)")
def test_a_labels_gold_totals_are_decided_once_for_the_publication() -> None:
    # Before, each report chose its labels' gold positives and negatives alone: here system
    # B's report showed all 4 that A's hid (on the invented study, 27; copied into A's, its
    # own audit then pinned 33 numbers). The joint audit reads the reports without labels.
    from chartscore.disclosure.model import model_of
    from chartscore.disclosure.publication import label_gold_keys

    products = _publication(80, 7)
    first, second = (dict(product.numbers()) for product in products)
    label_keys = label_gold_keys(model_of(products[0]))
    assert len(label_keys) == 4 and all(first[key] == second[key] for key in label_keys)
    assert audit_publication(list(products), ["A", "B"]).passed


@_THOROUGH_ONLY
def test_the_publication_keeps_each_products_published_numbers_true() -> None:
    gold, first, second = _cohort(40, 3)
    truths = [_truth(gold, first), _truth(gold, second)]
    for product, truth in zip(_publication(40, 3), truths, strict=True):
        for key, value in product.numbers():
            assert value is None or value == truth[key]


def _publication_argv(
    tmp_path: Path, gold: Path, *systems: Path, prefix: str = ""
) -> tuple[list[str], Path]:
    # The systems moved into a folder of their own (named with ``prefix``), and share's
    # arguments for their publication into an empty ``out``.
    folder = tmp_path / "systems"
    folder.mkdir()
    for path in systems:
        path.rename(folder / f"{prefix}{path.name}")
    out = tmp_path / "out"
    out.mkdir()
    pattern = str(folder / "*.jsonl")
    return ["share", "--gold", str(gold), "--publication", pattern, "--out-dir", str(out)], out


def test_share_publication_writes_every_report_and_says_no_name_or_value(tmp_path: Path) -> None:
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    argv, out = _publication_argv(tmp_path, gold, baseline, candidate, prefix=CANARY_CASE)
    status, stdout, stderr = run(argv)
    assert (status, stdout) == (0, "")
    written = sorted(out.iterdir())
    assert [p.name for p in written] == [
        f"{CANARY_CASE}baseline.shared.json",
        f"{CANARY_CASE}candidate.shared.json",
    ]
    products = [SharedReport.from_json(p.read_bytes()) for p in written]
    assert audit_publication(products, ["A", "B"]).passed
    assert f"{len(products)} shared reports written" in stderr
    for text in (stderr, *(p.read_text(encoding="utf-8") for p in written)):
        assert CANARY_CASE not in text and str(tmp_path) not in text
    # Any scoring option but the schema is refused, before any work.
    status, _, stderr = run([*argv, "--strict-schema"])
    assert status == 2 and "--publication cannot be combined with --strict-schema" in stderr


@thorough_only("a publication of a gold sample (about 3 s)")
def test_share_publication_of_a_gold_sample_ignores_the_other_charts_predictions(
    tmp_path: Path,
) -> None:
    """Gold for a sample of the charts, every system's answers for all of them: with
    --extra-predictions ignore (once refused with a publication) each report shows its own
    ignored count, as share alone does, the comparison withholds its own, and the joint
    audit passes."""
    from chartscore.documents.shared_comparison import SharedComparison
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 32, 5)  # 12 charts outside: shown
    rows = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    sample = {row["case_id"] for row in rows if int(row["case_id"][-4:]) < 20}
    gold.write_text(
        "".join(json.dumps(row) + "\n" for row in rows if row["case_id"] in sample),
        encoding="utf-8",
    )
    outside = {
        path.stem: sum(
            json.loads(line)["case_id"] not in sample
            for line in path.read_text(encoding="utf-8").splitlines()
        )
        for path in (baseline, candidate)
    }
    assert all(outside.values())
    argv, out = _publication_argv(tmp_path, gold, baseline, candidate)
    status, _, stderr = run([*argv, "--compare"])
    assert status == 1 and "unknown_prediction_key" in stderr  # the default refuses them
    assert list(out.iterdir()) == []
    from chartscore.workflows import publication

    with mock.patch.object(publication, "FIRSTS", 1):  # one order: each is a whole publication
        status, stdout, stderr = run([*argv, "--compare", "--extra-predictions", "ignore"])
    assert (status, stdout) == (0, ""), stderr
    reports = [SharedReport.from_json((out / f"{n}.shared.json").read_bytes()) for n in outside]
    for name, report in zip(outside, reports, strict=True):
        document = json.loads(report.to_json())
        assert document["ignored_prediction_count"] == outside[name]
    compared = out / "baseline_vs_candidate.shared-comparison.json"
    comparison = SharedComparison.from_json(compared.read_bytes())
    assert "ignored" not in compared.read_text(encoding="utf-8")
    products = [*reports, comparison]
    assert audit_publication(products, ["A", "B", ("A", "B")]).passed
    for text in (stderr, *(p.read_text(encoding="utf-8") for p in out.iterdir())):
        assert CANARY_CASE not in text and str(tmp_path) not in text


def test_share_publication_also_min_cell_writes_both_rules_and_says_each(tmp_path: Path) -> None:
    # --also-min-cell N: each report again at N (NAME.min-N.shared.json); stderr said
    # "(min cell 11)" for all of them.
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, _ = write_cohort(tmp_path, 30, 5)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["share", "--gold", str(gold), "--publication", str(baseline), "--out-dir", str(out)]
    status, stdout, stderr = run([*argv, "--also-min-cell", "13"])
    assert (status, stdout) == (0, ""), stderr
    written = sorted(out.iterdir())
    assert [p.name for p in written] == ["baseline.min-13.shared.json", "baseline.shared.json"]
    rules = [SharedReport.from_json(p.read_bytes()).disclosure.min_cell for p in written]
    assert rules == [13, 11]
    assert (
        "2 shared reports written" in stderr
        and "(min cell 11; 13 in the .min-13 reports)" in stderr
    )
    for text in (stderr, *(p.read_text(encoding="utf-8") for p in written)):
        assert CANARY_CASE not in text and str(tmp_path) not in text


@thorough_only("a publication into a folder that holds other documents (about 3 s)")
def test_share_publication_warns_of_other_shared_documents_in_the_folder(tmp_path: Path) -> None:
    # A publication of A alone into the folder of an earlier one of A and B left B's report
    # beside the new A's: together they failed the joint audit (on the study, B's
    # rx.anticoag missing_count pinned in 5..8), and share said the joint audit passed.
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, _ = write_cohort(tmp_path, 30, 5)
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{CANARY_CASE}old.shared.json").write_text("{}")
    (out / "old_vs_older.shared-comparison.json").write_text("{}")
    argv = ["share", "--gold", str(gold), "--publication", str(baseline), "--out-dir", str(out)]
    status, _, stderr = run(argv)
    assert status == 0
    assert "warning: the output folder holds 2 other shared documents" in stderr
    assert CANARY_CASE not in stderr and str(tmp_path) not in stderr
    for name in ("old.shared.json", "old_vs_older.shared-comparison.json"):
        (out / name).unlink(missing_ok=True)
    (out / f"{CANARY_CASE}old.shared.json").unlink()
    status, _, stderr = run(argv)  # the same publication again: its own files only
    assert status == 0 and "warning" not in stderr


def test_share_publication_names_the_system_file_that_fails_by_its_place(tmp_path: Path) -> None:
    # Two system files read in sorted order: an error in the second one is
    # "predictions part 2", as batch names its parts (it said "predictions line 1", which
    # names no file of several); no file name, path or value in the message.
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    lines = candidate.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row[f"zz{CANARY_CASE}"] = 1  # an unknown key on the file's third line
    lines[2] = json.dumps(row)
    candidate.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # baseline.jsonl is part 1, candidate.jsonl part 2
    argv, out = _publication_argv(tmp_path, gold, baseline, candidate)
    status, stdout, stderr = run(argv)
    assert (status, stdout) == (1, "")
    assert "unknown_key (predictions part 2 line 3)" in stderr
    assert CANARY_CASE not in stderr and str(tmp_path) not in stderr
    assert list(out.iterdir()) == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_share_publication_says_on_a_terminal_that_it_is_working(
    tmp_path: Path, quiet: bool
) -> None:
    # A publication said nothing until it ended: on the 200-case study, 30 s with --compare
    # and over 15 minutes with --strata, --compare and --also-min-cell on a loaded machine,
    # where share says "suppressing small cells and auditing..." on a terminal.
    from chartscore.cli import main
    from test_shared_comparison import CANARY_CASE, write_cohort

    gold, baseline, _ = write_cohort(tmp_path, 30, 5)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["share", "--gold", str(gold), "--publication", str(baseline), "--out-dir", str(out)]
    err = _Terminal()
    status = main(argv + (["--quiet"] if quiet else []), stdout=io.StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert status == 0 and lines[-1].startswith("chartscore: 1 shared report written")
    expected = (
        []
        if quiet
        else [
            "chartscore: sharing 1 document as one publication: scoring, suppressing small "
            "cells and auditing them together (this can take minutes)..."
        ]
    )
    assert lines[:-1] == expected
    assert CANARY_CASE not in err.getvalue() and str(tmp_path) not in err.getvalue()


def test_share_publication_refuses_gold_from_standard_input(tmp_path: Path) -> None:
    # The gold file is read once per system (and per pair with --compare): from standard
    # input the second read found nothing and the run stopped with "empty_gold (gold): the
    # gold set has no records", which sent the analyst to a gold file that was fine.
    from test_shared_comparison import run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    argv, out = _publication_argv(tmp_path, gold, baseline, candidate)
    argv[argv.index("--gold") + 1] = "-"
    status, stdout, stderr = run(argv)
    assert (status, stdout) == (2, "")
    assert stderr == (
        "chartscore: error: usage: --publication needs --gold from a file: it is read again; "
        "see chartscore share --help\n"
    )
    assert list(out.iterdir()) == []


@thorough_only("a publication shared, then audited with a file named twice (about 5 s)")
def test_audit_refuses_a_file_named_twice(tmp_path: Path) -> None:
    # `audit a.shared.json --system '*.shared.json'` named A again, with B, as one other
    # system: tied class by class to B, the publication failed as "inconsistent" (exit 4,
    # a leak to the reader); `--others a.shared.json` audited A beside itself as a second
    # system ("2 products together ... PASS"). A file named twice is a usage error now.
    from chartscore.workflows.share import share_files
    from test_shared_comparison import CANARY_CASE, run, write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    folder = tmp_path / f"{CANARY_CASE}shared"
    folder.mkdir()
    for name, predictions in (("a", baseline), ("b", candidate)):
        shared = share_files(str(gold), str(predictions))
        (folder / f"{name}.shared.json").write_text(shared.to_json(), encoding="utf-8")
    a, b = str(folder / "a.shared.json"), str(folder / "b.shared.json")
    twice = "chartscore: error: usage: a file is named twice (by SHARED or the patterns); "
    for argv in (
        ["audit", a, "--system", str(folder / "*.shared.json")],
        ["audit", a, "--others", a],
        ["audit", a, "--system", b, "--system", b],
        ["audit", a, "--others", b, "--system", b],
    ):
        assert run(argv) == (2, "", twice + "see chartscore audit --help\n"), argv
    status, stdout, stderr = run(["audit", a, "--system", b])
    assert status in (0, 4) and stderr == "" and "2 products together" in stdout
    # SHARED inside its own --variants pattern ('a.*.json' names a.shared.json) is read once.
    status, stdout, stderr = run(["audit", a, "--variants", str(folder / "a.*.json")])
    assert status in (0, 4) and stderr == "" and "product 2" not in stdout
    assert CANARY_CASE not in stdout
