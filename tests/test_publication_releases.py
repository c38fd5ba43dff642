"""A release of the ledger may be a publication (issue 36, "one publication, one audit").

docs/disclosure.md#successive-releases: ``share --publication ... --releases DIR``
records every system's shared report of the cohort as one release; the next
quarter's publication is suppressed and audited jointly with it (each atom holds
every system's classes, tied by the gold), and ``audit --releases`` re-runs that
audit. A ledger that mixes a report's releases and publications, or publications
of another number of systems, is refused before anything is written.
"""

from __future__ import annotations

import functools
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("scipy")

from chartscore.cli import main
from chartscore.disclosure.publication import JointPublication
from chartscore.disclosure.publication_releases import audit_publication_releases
from chartscore.disclosure.releases import JointModel
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.io.release_ledger import read_releases
from publication_data import SCHEMA
from publication_data import VALUES as _VALUES

from helpers import THOROUGH, thorough_only

CANARY = "zq-canary-"
FIRST, SECOND = 40, 52


def _rows(cases: int, seed: int = 3) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    # One gold, two systems; the first ``cases`` charts of one fixed cohort (cohorts grow).
    rng = random.Random(seed)
    gold: list[dict[str, Any]] = []
    systems: list[list[dict[str, Any]]] = [[], []]
    for i in range(SECOND):
        case = f"{CANARY}{i:03d}"
        for field_id, values in _VALUES.items():
            field_type = SCHEMA["fields"][field_id]["type"]
            value = None if rng.random() < 0.15 else rng.choice(values)
            draws = [(rng.random(), rng.choice(values)) for _ in systems]
            if i >= cases:
                continue
            gold.append({"case_id": case, "field_id": field_id, "field_type": field_type})
            gold[-1]["value"] = value
            for rows, (draw, other) in zip(systems, draws, strict=True):
                if draw < 0.08:
                    continue  # missing
                answer = None if draw < 0.12 else other if draw < 0.3 or value is None else value
                rows.append({"case_id": case, "field_id": field_id, "value": answer})
    return gold, systems


def _write(folder: Path, cases: int, *, changed: bool = False) -> list[str]:
    # A quarter's files: gold, schema and pred_a / pred_b; ``changed``: one old answer of B.
    folder.mkdir(parents=True, exist_ok=True)
    gold, systems = _rows(cases)
    if changed:
        row = systems[1][0]
        row["value"] = next(v for v in _VALUES[row["field_id"]] if v != row["value"])
    for name, rows in (("gold", gold), ("pred_a", systems[0]), ("pred_b", systems[1])):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "schema.json").write_text(json.dumps(SCHEMA))
    return ["--gold", str(folder / "gold.jsonl"), "--schema", str(folder / "schema.json")]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _share(
    where: Path, cases: int, ledger: Path | None, *, compare: bool = False, changed: bool = False
) -> tuple[int, str, str]:
    files = _write(where / "in", cases, changed=changed)
    (where / "out").mkdir(parents=True, exist_ok=True)
    argv = ["share", *files, "--publication", str(where / "in" / "pred_*.jsonl")]
    argv += ["--out-dir", str(where / "out"), "--quiet", *(["--compare"] if compare else [])]
    return _run(argv + ([] if ledger is None else ["--releases", str(ledger)]))


def _products(where: Path) -> list[SharedReport]:
    return [
        SharedReport.from_json((where / "out" / f"pred_{s}.shared.json").read_text()) for s in "ab"
    ]


@functools.cache
def _quarters(root: str) -> dict[str, Any]:
    # Two quarters into one ledger (FIRST, then SECOND charts), and the second shared as
    # the first release of another ledger: audited alone, as sharing quarter by quarter is.
    base = Path(root)
    ledger = base / "ledger"
    first = _share(base / "q1", FIRST, ledger)
    second = _share(base / "q2", SECOND, ledger)
    plain = _share(base / "plain", SECOND, base / "alone")
    return {"ledger": ledger, "base": base, "runs": (first, second, plain)}


@pytest.fixture(scope="module")
def quarters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _quarters(str(tmp_path_factory.mktemp("quarters")))


def _memberships() -> list[tuple[int, ...]]:
    return [(0, 1)] * FIRST + [(1,)] * (SECOND - FIRST)


def test_two_quarterly_publications_are_one_ledger(quarters: dict[str, Any]) -> None:
    first, second, plain = quarters["runs"]
    assert first[0] == second[0] == plain[0] == 0, (first, second, plain)
    assert "audited jointly with 0 earlier releases" in first[2]
    assert "audited jointly with 1 earlier release " in second[2]
    releases = read_releases(quarters["ledger"])
    assert [r.publication for r in releases] == [True, True]
    assert [len(r.case_ids) for r in releases] == [FIRST, SECOND]
    # The release holds exactly what was written, and each report says it was audited so.
    written = _products(quarters["base"] / "q2")
    assert [p.to_json() for p in releases[1].products] == [p.to_json() for p in written]
    assert [p.disclosure.earlier_releases for p in written] == [1, 1]
    status, out, err = _run(["audit", "--releases", str(quarters["ledger"])])
    assert status == 0, out
    assert "release 2: PASS" in out and ", 0 pinned" in out and err == ""
    for text in (first[2], second[2], out):
        assert CANARY not in text and str(quarters["base"]) not in text and "pred_" not in text


def test_the_joint_step_hides_what_sequential_sharing_shows(quarters: dict[str, Any]) -> None:
    # The same second quarter shared on its own passes its own joint audit, but held with
    # the first quarter an atom is pinned: differencing the two quarters across both
    # systems. The ledger's second release hides more and passes.
    releases = read_releases(quarters["ledger"])
    first = list(releases[0].products)
    plain = _products(quarters["base"] / "plain")
    joint = _products(quarters["base"] / "q2")
    sequential = audit_publication_releases([first, plain], _memberships())
    assert sequential[1].own and sequential[1].pinned > 0
    assert not sequential[1].passed
    audited = audit_publication_releases([first, joint], _memberships())
    assert all(result.passed for result in audited)
    hidden = [sum(p.disclosure.suppressed_count for p in ps) for ps in (plain, joint)]
    assert hidden[1] > hidden[0]


def test_each_systems_own_ledger_passes_and_the_two_together_leak(tmp_path: Path) -> None:
    # A registry that keeps one ledger per system: A's two quarters pass their joint audit,
    # and B's theirs; held together (both systems, both quarters: one model of the atoms,
    # tied by the gold), atom numbers are pinned that neither system's ledger shows. The
    # ledger of publications (the first test) shares the same quarters and passes.
    for quarter, cases in (("q1", FIRST), ("q2", SECOND)):
        files = _write(tmp_path / quarter, cases)
        for system in "ab":
            argv = [
                "share",
                *files,
                "--predictions",
                str(tmp_path / quarter / f"pred_{system}.jsonl"),
            ]
            argv += ["--releases", str(tmp_path / system), "--quiet"]
            assert _run(argv)[0] == 0
    for system in "ab":
        status, out, _ = _run(["audit", "--releases", str(tmp_path / system)])
        assert status == 0 and "release 2: PASS" in out, out
    a, b = read_releases(tmp_path / "a"), read_releases(tmp_path / "b")
    both = [[a[0].shared, b[0].shared], [a[1].shared, b[1].shared]]
    joint = audit_publication_releases(both, _memberships())
    assert joint[1].problem is None and joint[1].pinned > 0


def test_every_atom_holds_the_publications_ties(quarters: dict[str, Any]) -> None:
    # Each atom's copy of the publication keeps its products tied by the gold (both
    # directions), and each release's ties are sums over its atoms.
    releases = read_releases(quarters["ledger"])
    systems = ["0", "1"]
    models = [JointPublication(list(r.products), systems).model for r in releases]
    assert models[1].ties
    joint = JointModel(models, [(0, 1), (1,)])
    rows = set(joint.inequalities)
    for atom in range(2):
        for tie in models[1].ties:
            form = joint.atom_form(atom, tie)
            assert form in rows and tuple((v, -c) for v, c in form) in rows
    for position, model in enumerate(models):
        for tie in model.ties:
            assert joint.release_form(position, tie) in rows


def test_a_ledger_of_the_other_kind_is_refused(quarters: dict[str, Any], tmp_path: Path) -> None:
    # A report's share into a ledger of publications, and a publication into a report's
    # ledger: release_mismatch, before anything is written, naming no path or case.
    ledger = quarters["ledger"]
    before = {p.name: p.read_bytes() for p in ledger.iterdir()}
    files = _write(tmp_path / "one", SECOND)
    out = tmp_path / "one.json"
    argv = ["share", *files, "--predictions", str(tmp_path / "one" / "pred_a.jsonl")]
    status, _, err = _run([*argv, "--releases", str(ledger), "--out", str(out), "--quiet"])
    assert status != 0 and "release_mismatch" in err and not out.exists()
    assert {p.name: p.read_bytes() for p in ledger.iterdir()} == before
    reports = tmp_path / "reports"
    status, _, _ = _run([*argv, "--releases", str(reports), "--quiet"])
    assert status == 0
    status, _, err = _share(tmp_path / "pub", SECOND, reports)
    assert status != 0 and "release_mismatch" in err
    assert not list((tmp_path / "pub" / "out").iterdir())
    for text in (err,):
        assert CANARY not in text and str(tmp_path) not in text and "pred_" not in text


def _copy_ledger(source: Path, target: Path) -> Path:
    # A copy of a fixture's ledger folder (0700, its files 0600) that a test may spoil.
    target.mkdir(mode=0o700)
    for release in source.iterdir():
        (target / release.name).write_bytes(release.read_bytes())
        (target / release.name).chmod(0o600)
    return target


def test_other_systems_or_changed_rows_are_refused(
    quarters: dict[str, Any], tmp_path: Path
) -> None:
    # An old case that B now scores otherwise, or one system fewer: release_mismatch.
    ledger = _copy_ledger(quarters["ledger"], tmp_path / "ledger")
    status, _, err = _share(tmp_path / "changed", SECOND, ledger, changed=True)
    assert status != 0 and "release_mismatch" in err
    files = _write(tmp_path / "one", SECOND)
    (tmp_path / "one" / "out").mkdir()
    argv = ["share", *files, "--publication", str(tmp_path / "one" / "pred_a.jsonl")]
    status, _, err = _run(
        [*argv, "--out-dir", str(tmp_path / "one" / "out"), "--releases", str(ledger)]
    )
    assert status != 0 and "release_mismatch" in err
    assert len(read_releases(ledger)) == 2
    assert CANARY not in err and str(tmp_path) not in err


def test_a_ledger_of_another_kind_says_so_not_that_cases_changed(
    quarters: dict[str, Any], tmp_path: Path
) -> None:
    # release_mismatch's own text speaks of cases dropped or changed; a ledger of another
    # kind (a report's share, one system fewer, other comparisons) has none: a hint says so.
    ledger, hint = quarters["ledger"], "; the folder holds releases of another kind: "
    files = _write(tmp_path / "one", SECOND)
    (tmp_path / "out").mkdir()
    one = str(tmp_path / "one" / "pred_a.jsonl")
    given = ["--releases", str(ledger), "--quiet"]
    for argv in (
        ["share", *files, "--predictions", one, "--out", str(tmp_path / "one.json"), *given],
        ["share", *files, "--publication", one, "--out-dir", str(tmp_path / "out"), *given],
    ):
        status, _, err = _run(argv)
        assert status == 1 and err.startswith("chartscore: error: release_mismatch (")
        assert hint in err and err.count("\n") == 1 and CANARY not in err, err
        assert str(tmp_path) not in err and "pred_" not in err
    assert len(read_releases(ledger)) == 2 and not list((tmp_path / "out").iterdir())


def test_publication_releases_take_no_variants(tmp_path: Path) -> None:
    # Strata and a second min cell are not in the releases' model yet.
    files = _write(tmp_path / "in", FIRST)
    (tmp_path / "out").mkdir()
    argv = ["share", *files, "--publication", str(tmp_path / "in" / "pred_*.jsonl")]
    argv += ["--out-dir", str(tmp_path / "out"), "--releases", str(tmp_path / "ledger")]
    for extra in (["--also-min-cell", "5"], ["--strata", str(tmp_path / "in" / "gold.jsonl")]):
        status, _, err = _run(argv + extra)
        assert status == 2 and extra[0] in err
    status, _, err = _run(
        [*argv[:-4], "--out-dir", str(tmp_path / "ledger"), "--releases", str(tmp_path / "ledger")]
    )
    assert status != 0 and "output_is_input" in err
    assert not (tmp_path / "ledger").exists() or not list((tmp_path / "ledger").iterdir())


# --- stage 2: comparisons in the releases -------------------------------------------------


@functools.cache
def _compared_quarters(root: str) -> dict[str, Any]:
    # Two quarters of A, B and "A vs B" into one ledger; the second also into another alone.
    base = Path(root)
    ledger = base / "ledger"
    runs = (
        _share(base / "q1", FIRST, ledger, compare=True),
        _share(base / "q2", SECOND, ledger, compare=True),
        _share(base / "plain", SECOND, base / "alone", compare=True) if THOROUGH else (0, "", ""),
    )
    return {"ledger": ledger, "base": base, "runs": runs}


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _compared_quarters(str(tmp_path_factory.mktemp("compared")))


def _publication(where: Path) -> list[SharedReport | SharedComparison]:
    text = (where / "out" / "pred_a_vs_pred_b.shared-comparison.json").read_text()
    return [*_products(where), SharedComparison.from_json(text)]


def test_a_publication_with_its_comparison_is_one_release(compared: dict[str, Any]) -> None:
    first, second, plain = compared["runs"]
    assert first[0] == second[0] == plain[0] == 0, (first, second, plain)
    releases = read_releases(compared["ledger"])
    assert [r.pairs for r in releases] == [((0, 1),), ((0, 1),)]
    written = _publication(compared["base"] / "q2")
    assert releases[1].comparisons[0].to_json() == written[2].to_json()
    status, out, _ = _run(["audit", "--releases", str(compared["ledger"])])
    assert status == 0 and "release 2: PASS" in out and ", 0 pinned" in out, out
    for text in (first[2], second[2], out):
        assert CANARY not in text and str(compared["base"]) not in text


@thorough_only("the joint attack of two quarters with a comparison (about 5 s)")
def test_a_comparison_shared_alone_fails_held_with_the_first_quarter(
    compared: dict[str, Any],
) -> None:
    # Shared alone, the second quarter's publication (with its comparison) passes its own
    # joint audit, and fails held with the first.
    releases = read_releases(compared["ledger"])
    systems: list[Any] = ["0", "1", ("0", "1")]
    first_products = [*releases[0].products, *releases[0].comparisons]
    alone = _publication(compared["base"] / "plain")
    sequential = audit_publication_releases([first_products, alone], _memberships(), systems)
    assert sequential[1].own and not sequential[1].passed


def test_a_ledger_with_comparisons_takes_the_same_comparisons(
    compared: dict[str, Any], tmp_path: Path
) -> None:
    # The next publication without its comparison is refused before anything is written.
    ledger = _copy_ledger(compared["ledger"], tmp_path / "ledger")
    status, _, err = _share(tmp_path / "q3", SECOND, ledger)
    assert status != 0 and "release_mismatch" in err
    assert not list((tmp_path / "q3" / "out").iterdir())
    assert len(read_releases(ledger)) == 2


@thorough_only("two quarters with a comparison shared twice more, on one process (about 10 s)")
def test_a_publication_release_is_the_same_on_one_process(
    compared: dict[str, Any], tmp_path: Path
) -> None:
    # The orders run in forked children by default; run here one after another (the release
    # check's state carried from one order to the next), the ledger's files are the same.
    from unittest import mock

    from chartscore.workflows import orders

    ledger = tmp_path / "ledger"
    with mock.patch.object(orders, "ENABLED", False):
        for quarter, cases in (("q1", FIRST), ("q2", SECOND)):
            assert _share(tmp_path / quarter, cases, ledger, compare=True)[0] == 0
    for name in ("release-0001.json", "release-0002.json"):
        assert (ledger / name).read_bytes() == (compared["ledger"] / name).read_bytes()


@thorough_only("the release check of a comparison shared alone (about 5 s)")
def test_the_release_check_attacks_the_comparisons_atoms(
    compared: dict[str, Any], tmp_path: Path
) -> None:
    # The second quarter shared alone, checked against the ledger's first release: the check
    # names numbers of the comparison itself to hide (its atoms are attacked, not only the
    # reports').
    from chartscore.workflows.compare import feed_paired
    from chartscore.workflows.releases import Ledger
    from chartscore.workflows.score import feed_files, resolve_schema
    from chartscore.workflows.share import field_types_of

    ledger = tmp_path / "ledger"
    ledger.mkdir(mode=0o700)
    first = compared["ledger"] / "release-0001.json"
    (ledger / first.name).write_bytes(first.read_bytes())
    (ledger / first.name).chmod(0o600)
    where = compared["base"] / "plain" / "in"
    files = [str(where / "pred_a.jsonl"), str(where / "pred_b.jsonl")]
    schema = resolve_schema(str(where / "schema.json"))
    opened = Ledger(ledger)
    try:
        scorers = []
        for predictions in files:
            scorer = opened.scorer(schema, extra_predictions="error")
            feed_files(scorer, str(where / "gold.jsonl"), predictions)
            scorers.append(scorer)
        paired = opened.paired_scorer(schema, extra_predictions="error")
        feed_paired(paired, str(where / "gold.jsonl"), *files)
        step, _, _ = opened.publication(scorers, 11, 0.95, field_types_of, [((0, 1), paired)])
    finally:
        opened.close()
    alone = _publication(compared["base"] / "plain")
    extra = step.extra(alone)
    assert step.pinned > 0 and extra[2]
    assert any(product == 2 for product, _ in step.pinned_keys)
