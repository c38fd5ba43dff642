"""Successive releases (share --releases DIR): the joint audit, the ledger folder, privacy.

docs/disclosure.md#successive-releases. A cohort is shared into a ledger folder,
grows, and is shared again: the second release must publish nothing about the
cases added in between, by the joint integer audit and by an independent brute
force over the two published reports.
"""

from __future__ import annotations

import io
import json
import os
import random
import stat
from pathlib import Path
from typing import Any

import pytest

import chartscore.disclosure.releases as releases_module
from chartscore import GoldField, Prediction, score
from chartscore.cli import main
from chartscore.disclosure.model import field_classes, model_of
from chartscore.disclosure.ranges import RangeSolver
from chartscore.disclosure.releases import JointModel, atom_key, release_key
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError
from chartscore.io.release_ledger import read_releases
from chartscore.workflows.share import share
from shared_data import SCHEMA, cohort

from helpers import write_jsonl

CANARY = "zq-canary-"


def _records(cases: int, first: int = 0) -> tuple[list[GoldField], list[Prediction]]:
    # The shared_data cohort, its case ids replaced by canaries.
    gold, predictions = cohort(cases)
    rename = {f"chart-{i:03d}": f"{CANARY}{i:03d}" for i in range(cases)}
    gold_rows = [
        GoldField(rename[g.case_id], g.field_id, g.field_type, g.value)
        for g in gold
        if int(g.case_id[-3:]) >= first
    ]
    prediction_rows = [
        Prediction(rename[p.case_id], p.field_id, p.value)
        for p in predictions
        if int(p.case_id[-3:]) >= first
    ]
    return gold_rows, prediction_rows


def _write(
    folder: Path, name: str, cases: int, chain: dict[str, object] | None = None
) -> tuple[Path, Path]:
    # ``chain``: every answer carries this evidence chain (its field id set per row).
    gold, predictions = _records(cases)
    gold_path = write_jsonl(
        folder / f"{name}_gold.jsonl",
        [
            {"case_id": g.case_id, "field_id": g.field_id, "field_type": g.field_type.value}
            | {"value": g.value}
            for g in gold
        ],
    )
    prediction_path = write_jsonl(
        folder / f"{name}_pred.jsonl",
        [
            {"case_id": p.case_id, "field_id": p.field_id, "value": p.value}
            | ({} if chain is None else {"evidence_chain": chain | {"field_id": p.field_id}})
            for p in predictions
        ],
    )
    return gold_path, prediction_path


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def one_added(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Release 1 of 15 cases, release 2 with one case more, through the command line."""
    folder = tmp_path_factory.mktemp("releases")
    schema = folder / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    ledger = folder / "ledger"
    runs = []
    for name, cases in (("first", 15), ("second", 16)):
        gold, predictions = _write(folder, name, cases)
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
        argv += ["--schema", str(schema), "--min-cell", "11", "--releases", str(ledger)]
        runs.append(_run(argv))
    return {"folder": folder, "ledger": ledger, "runs": runs, "schema": schema}


def _shared(run: tuple[int, str, str]) -> SharedReport:
    status, out, _ = run
    assert status == 0
    return SharedReport.from_json(out)


def joint_of(first: SharedReport, second: SharedReport) -> tuple[JointModel, RangeSolver]:
    """The joint audit, rebuilt from two published releases of 15 cases and one added, with
    the composition (one row per field of each atom) known."""
    joint = JointModel([model_of(first), model_of(second)], [(0, 1), (1,)])
    published = {
        release_key(position, key): value
        for position, report in enumerate((first, second))
        for key, value in report.numbers()
        if value is not None
    }
    for field_id in second.by_field:
        published[atom_key(1, ("field", field_id, "field_count"))] = 1
        published[atom_key(0, ("field", field_id, "field_count"))] = 15
    return joint, RangeSolver(joint, published)


def test_second_release_passes_the_joint_audit(one_added: dict[str, object]) -> None:
    runs = one_added["runs"]
    assert isinstance(runs, list)
    first, second = _shared(runs[0]), _shared(runs[1])
    assert (first.disclosure.earlier_releases, second.disclosure.earlier_releases) == (0, 1)
    # The joint audit, rebuilt from the two published reports: the one new case is an atom
    # of its own; with both releases and the composition (one row per field) published,
    # every quantity about it can still be 0.
    joint, solver = joint_of(first, second)
    composition = {
        (kind, name): joint.quantities[atom_key(1, (kind, name, "field_count"))].form
        for (kind, name, _), _ in second.numbers()
    }
    checked = 0
    for key, quantity in joint.quantities.items():
        if not key[0].startswith("atom1:") or quantity.form == composition.get(
            (key[0].removeprefix("atom1:"), key[1])
        ):
            continue
        low, _ = solver.range_of(quantity.form)
        assert low == 0, key
        checked += 1
    assert checked > 100


def test_nothing_about_the_new_case_by_brute_force(one_added: dict[str, object]) -> None:
    # Independent of the joint model: for every field, every outcome class the new case's
    # row could be in, judged by the differences of the numbers both releases show.
    runs = one_added["runs"]
    assert isinstance(runs, list)
    first, second = _shared(runs[0]), _shared(runs[1])
    before = dict(first.numbers())
    after = dict(second.numbers())
    full_before = score(*_records(15), schema=SCHEMA)
    full_after = score(*_records(16), schema=SCHEMA)
    model = model_of(second)
    truth_before = dict(model_of(first).quantities)  # keys only
    assert truth_before
    for field_id, layout in model.layouts.items():
        forms = layout.forms()
        classes = field_classes(layout.shape)
        shown = {
            name: after["field", field_id, name] - before["field", field_id, name]  # type: ignore[operator]
            for name in forms
            if after.get(("field", field_id, name)) is not None
            and before.get(("field", field_id, name)) is not None
        }

        def contribution(
            index: int, form: tuple[tuple[int, int], ...], offset: int = layout.offset
        ) -> int:
            return sum(c for v, c in form if v == offset + index)

        consistent = [
            index
            for index in range(len(classes))
            if all(contribution(index, forms[name]) == diff for name, diff in shown.items())
        ]
        assert consistent
        truth = _contributions(full_before.to_dict(), full_after.to_dict(), field_id)
        for name, value in truth.items():
            if name not in forms or forms[name] == forms["field_count"] or value != 1:
                continue
            assert any(contribution(index, forms[name]) == 0 for index in consistent), name
    # Pooled numbers shown in both: the new case contributes nothing that both show but
    # the composition (field_count, and numbers of its definition).
    for key, value in after.items():
        if key[0] != "field" and value is not None and before.get(key) is not None:
            count = model.quantities[key[0], key[1], "field_count"].form
            assert model.quantities[key].form == count or value == before[key], key


def _contributions(before: dict, after: dict, field_id: str) -> dict[str, int]:  # type: ignore[type-arg]
    # The new case's true contribution to each field-slice count and metric part.
    out: dict[str, int] = {}
    old, new = before["by_field"][field_id], after["by_field"][field_id]
    for name, value in new.items():
        if type(value) is int:
            out[name] = value - old[name]
            continue
        if type(value) is not dict or "success_count" not in value:
            continue
        metric, result, was = name, value, old[name]
        out[f"{metric}.success_count"] = result["success_count"] - was["success_count"]
        out[f"{metric}.total_count"] = result["total_count"] - was["total_count"]
    return out


def test_ledger_files_are_inside_only(one_added: dict[str, object]) -> None:
    ledger = one_added["ledger"]
    assert isinstance(ledger, Path)
    assert stat.S_IMODE(os.stat(ledger).st_mode) == 0o700
    names = sorted(os.listdir(ledger))
    assert names == ["ledger.json", "release-0001.json", "release-0002.json"]
    for name in names:
        assert stat.S_IMODE(os.stat(ledger / name).st_mode) == 0o600
    releases = read_releases(ledger)
    assert [len(r.case_ids) for r in releases] == [15, 16]
    assert "canary" not in repr(releases)


def test_case_ids_never_reach_shared_output_or_streams(one_added: dict[str, object]) -> None:
    runs = one_added["runs"]
    ledger = one_added["ledger"]
    assert isinstance(runs, list) and isinstance(ledger, Path)
    assert CANARY in (ledger / "release-0002.json").read_text()  # the canaries are there
    for _, out, err in runs:
        assert CANARY not in out and CANARY not in err
    assert "differencing" not in runs[1][2]
    assert "audited jointly with 1 earlier release" in runs[1][2]
    for release in read_releases(ledger):
        assert CANARY not in release.shared.to_json()


def test_without_releases_says_differencing_is_not_covered(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {"case_id": f"{CANARY}{i}", "field_id": "dx.flag", "field_type": "boolean"}
            | {"value": i % 2 == 0}
            for i in range(4)
        ],
    )
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"case_id": f"{CANARY}{i}", "field_id": "dx.flag", "value": True} for i in range(4)],
    )
    argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
    status, out, err = _run([*argv, "--min-cell", "2"])
    assert status == 0
    assert "differencing against earlier or later releases" in err
    assert "is not covered" in err
    assert "earlier_releases" not in json.loads(out)["disclosure"]
    status, out, err = _run([*argv, "--min-cell", "2", "--releases", str(tmp_path / "r")])
    assert status == 0
    assert "first release in the releases folder" in err and "not covered" not in err
    assert json.loads(out)["disclosure"]["earlier_releases"] == 0
    assert CANARY not in out + err


def _copy(source: Path, target: Path) -> Path:
    target.mkdir(mode=0o700)
    for name in sorted(os.listdir(source)):
        (target / name).write_bytes((source / name).read_bytes())
        os.chmod(target / name, 0o600)
    return target


def _share_into(ledger: Path, cases: int = 16) -> ChartscoreError:
    gold, predictions = _records(cases)
    with pytest.raises(ChartscoreError) as caught:
        share(gold, predictions, schema=SCHEMA, min_cell=11, releases=ledger)
    return caught.value


def _listing(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


@pytest.mark.parametrize("damage", ["edited", "foreign", "gap", "renamed", "case_ids"])
def test_a_tampered_or_foreign_file_is_refused(
    one_added: dict[str, object], tmp_path: Path, damage: str
) -> None:
    ledger = _copy(one_added["ledger"], tmp_path / "ledger")  # type: ignore[arg-type]
    second = ledger / "release-0002.json"
    original = second.read_bytes()
    if damage == "edited":
        edited = second.read_bytes().replace(b'\\"min_cell\\":11', b'\\"min_cell\\":12')
        second.write_bytes(edited)
    elif damage == "case_ids":
        text = second.read_text().replace(f"{CANARY}015", f"{CANARY}099")
        second.write_text(text)
    elif damage == "foreign":
        (ledger / "notes.txt").write_text("x")
        os.chmod(ledger / "notes.txt", 0o600)
    elif damage == "gap":
        (ledger / "release-0001.json").unlink()
    else:
        second.rename(ledger / "release-0003.json")
    if damage in ("edited", "case_ids"):
        assert second.read_bytes() != original
    before = _listing(ledger)
    error = _share_into(ledger)
    assert error.code == "not_a_release_ledger"
    assert CANARY not in str(error) and str(tmp_path) not in str(error)
    assert error.__context__ is None and error.__cause__ is None
    assert _listing(ledger) == before  # nothing half-written, nothing added


def test_an_exposed_file_or_folder_is_refused(one_added: dict[str, object], tmp_path: Path) -> None:
    ledger = _copy(one_added["ledger"], tmp_path / "ledger")  # type: ignore[arg-type]
    os.chmod(ledger / "release-0001.json", 0o644)
    error = _share_into(ledger)
    assert error.code == "file_exposed" and error.hint is None  # a file: chmod 600 it
    os.chmod(ledger / "release-0001.json", 0o600)
    os.chmod(ledger, 0o755)
    error = _share_into(ledger)
    # The folder: "chmod 600 it", the code's advice, would take its search bit away.
    assert error.code == "file_exposed" and "chmod 700" in str(error)
    status, _, err = _run(["audit", "--releases", str(ledger)])
    assert status == 1 and "file_exposed (releases; the releases folder itself" in err


def test_a_shrunk_cohort_does_not_fit(one_added: dict[str, object], tmp_path: Path) -> None:
    # A case of an earlier release is not in the new gold set: release_mismatch, no file.
    ledger = _copy(one_added["ledger"], tmp_path / "ledger")  # type: ignore[arg-type]
    before = _listing(ledger)
    error = _share_into(ledger, cases=15)
    assert error.code == "release_mismatch"
    assert _listing(ledger) == before


def test_many_new_cases_keep_most_numbers(tmp_path: Path) -> None:
    # 33 cases, then 33 more (three times min_cell new): the ledger costs few numbers.
    ledger = tmp_path / "ledger"
    first = share(*_records(33), schema=SCHEMA, releases=ledger)
    second = share(*_records(66), schema=SCHEMA, releases=ledger)
    assert first.ledger_cost == 0
    assert second.ledger_cost is not None
    shown = sum(v is not None for _, v in second.numbers())
    shown_alone = shown + second.ledger_cost  # without the ledger (checked below)
    # 58 numbers, as many as the second release shows alone (the ledger costs none here);
    # 72 before the cohort's composition was public (docs/disclosure.md): it costs 14.
    assert shown >= 0.65 * shown_alone > 0
    assert shown >= 55
    assert second.disclosure.earlier_releases == 1


def test_joint_model_sums_each_release_over_its_atoms() -> None:
    # One boolean field; release 0 holds atom 0, release 1 atoms 0 and 1 (one case added).
    from chartscore.disclosure.model import FieldShape, ReportModel, SliceShape

    shape = FieldShape("boolean", majority=True, kappa=True)
    pooled = {("overall", ""): (["dx.flag"], SliceShape(("exact_agreement",)))}
    single = ReportModel({"dx.flag": shape}, pooled)
    joint = JointModel([single, single], [(0, 1), (1,)])
    size = single.layouts["dx.flag"].size
    assert joint.size == 2 * size
    count = single.quantities["field", "dx.flag", "field_count"].form
    assert joint.quantities[release_key(0, ("field", "dx.flag", "field_count"))].form == count
    both = tuple(sorted([*count, *((v + size, c) for v, c in count)]))
    assert joint.quantities[release_key(1, ("field", "dx.flag", "field_count"))].form == both
    new = joint.quantities[atom_key(1, ("field", "dx.flag", "field_count"))].form
    assert new == tuple((v + size, c) for v, c in count)
    # A boolean majority holds at least half of a release's answerable rows, not an atom's.
    majority = [row for row in joint.inequalities if len(row) > 2]
    assert len(majority) == 2


def test_an_old_case_that_scores_otherwise_does_not_fit(tmp_path: Path) -> None:
    # The system's smoking answers changed for the cases of release 1: its published numbers
    # are no longer the sums of the atoms, which the joint model needs (release_mismatch).
    ledger = tmp_path / "ledger"
    share(*_records(33), schema=SCHEMA, releases=ledger)
    before = _listing(ledger)
    gold, predictions = _records(34)
    changed = [
        Prediction(p.case_id, p.field_id, "never" if p.value != "never" else "former")
        if p.field_id == "hx.smoking"
        else p
        for p in predictions
    ]
    with pytest.raises(ChartscoreError) as caught:
        share(gold, changed, schema=SCHEMA, releases=ledger)
    assert caught.value.code == "release_mismatch"
    assert CANARY not in str(caught.value)
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert _listing(ledger) == before


def test_a_release_shared_before_evidence_provided_joins_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Release 1 as chartscore shared it before evidence_provided (every tally's evidence
    # unknown, as an old site's partial's: the metric is left out everywhere), then release 2
    # by this version. The earlier release split answers supported or not; its unsupported
    # class is the sum of the new "none" and "provided, unsupported" classes, and its case
    # digests are matched as they were written then.
    from chartscore.scoring.partial import PartialTally

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    ledger = tmp_path / "ledger"
    before = PartialTally.__init__

    def unknown(self: PartialTally, *args: Any, **options: Any) -> None:
        before(self, *args, **{**options, "evidence": False})

    runs = []
    for name, cases in (("first", 15), ("second", 16)):
        gold, predictions = _write(tmp_path, name, cases)
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
        argv += ["--schema", str(schema), "--min-cell", "11", "--releases", str(ledger)]
        with monkeypatch.context() as patch:
            if name == "first":
                patch.setattr(PartialTally, "__init__", unknown)
            runs.append(_run(argv))
    first, second = _shared(runs[0]), _shared(runs[1])
    assert "evidence_provided" not in first.overall.metrics
    # A release never carries it (src/chartscore/disclosure/evidence_rule.py), but the ledger
    # still matches the old release's case digests as written then.
    assert "evidence_provided" not in second.overall.metrics
    assert second.disclosure.earlier_releases == 1
    status, out, _ = _run(["audit", str(ledger), "--releases"])
    assert status == 0 and "audit PASS: 2 releases" in out
    # The one new case is an atom of its own: nothing about its evidence is pinned.
    joint, solver = joint_of(first, second)
    for field_id in second.by_field:
        key = atom_key(1, ("field", field_id, "evidence_support.success_count"))
        assert solver.range_of(joint.quantities[key].form)[0] == 0, key


def test_an_old_releases_case_digests_are_matched_as_written_then() -> None:
    from chartscore.records.prediction_row import PredictionRow
    from chartscore.scoring.release_atoms import AtomScorer

    def digests(evidence: int) -> tuple[dict[str, str], dict[str, str]]:
        scorer = AtomScorer(None, {"c1": (0,)})
        scorer.add_gold("c1", "t.note", GoldField("c1", "t.note", "text", "a").field_type, "a")
        scorer.close_gold()
        scorer.add_row(PredictionRow("c1", "t.note", "a", evidence, 0))
        return scorer.case_digests(), scorer.case_digests(legacy=True)

    none, supported, unsupported = digests(0), digests(1), digests(2)
    for new, legacy in (none, supported):
        assert new == legacy  # nothing to translate: as before the third state
    # Evidence that supports nothing digests apart from none; before, it digested as none.
    assert unsupported[0] != none[0] and unsupported[1] == none[0]


def test_releases_whose_answers_carry_unsupporting_evidence_grow(tmp_path: Path) -> None:
    # An answer whose chain points only at generated text provides evidence that supports
    # nothing (the third evidence state). Releases never carry evidence_provided, and such
    # a release's case digests are this version's: release 2 of the unchanged cases plus
    # one must join release 1, not be refused as if an old case had changed.
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    ledger = tmp_path / "ledger"
    chain = {
        "source_locations": [
            {
                "source_digest": "sha256:" + "ab" * 32,
                "start_offset": 0,
                "end_offset": 5,
                "kind": "generated_text",
            }
        ],
        "normalized_fact_digest": "sha256:" + "cd" * 32,
        "transformation_kind": "model",
        "transformation_digest": "sha256:" + "ef" * 32,
        "uncertainty": 0.5,
        "reviewer_state": "pending",
    }
    runs = []
    for name, cases in (("first", 15), ("second", 16)):
        gold_path, prediction_path = _write(tmp_path, name, cases, chain)
        argv = ["share", "--gold", str(gold_path), "--predictions", str(prediction_path)]
        argv += ["--schema", str(schema), "--min-cell", "11", "--releases", str(ledger)]
        runs.append(_run(argv))
    first, second = _shared(runs[0]), _shared(runs[1])
    assert (first.disclosure.earlier_releases, second.disclosure.earlier_releases) == (0, 1)
    assert "evidence_provided" not in second.overall.metrics


def test_the_release_step_hides_in_a_fixed_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The identities' closure chooses by the order it is given the keys: a set's order is
    # PYTHONHASHSEED's, and release 2 of the 200-case study hid 368 or 375 numbers from one
    # run to the next. The step hands state.hide sequences, never sets.
    from chartscore.disclosure.suppress import SuppressionState

    ledger = tmp_path / "ledger"
    share(*_records(15), schema=SCHEMA, min_cell=11, releases=ledger)
    given: list[type] = []
    hide = SuppressionState.hide

    def recording(self: SuppressionState, keys: Any) -> None:
        given.append(type(keys))
        hide(self, keys)

    monkeypatch.setattr(SuppressionState, "hide", recording)
    share(*_records(16), schema=SCHEMA, min_cell=11, releases=ledger)
    assert given and not [kind for kind in given if kind in (set, frozenset)]


def test_one_predictions_file_for_a_growing_cohort_is_shared_release_by_release(
    tmp_path: Path,
) -> None:
    """A registry scores one predictions file of every chart while its gold grows: each
    release ignores the predictions of the cases not yet in its gold. Every release
    shares (the ledger once refused the second as failing its own audit), withholds its
    ignored-prediction count, and the joint audit of the folder passes."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    ledger = tmp_path / "ledger"
    _, every_prediction = _write(tmp_path, "all", 24)
    for name, cases in (("first", 16), ("second", 20), ("third", 24)):
        gold, _ = _write(tmp_path, name, cases)
        argv = ["share", "--gold", str(gold), "--predictions", str(every_prediction)]
        argv += ["--schema", str(schema), "--min-cell", "11", "--releases", str(ledger)]
        status, out, err = _run([*argv, "--extra-predictions", "ignore"])
        assert status == 0, err
        assert json.loads(out)["ignored_prediction_count"] is None
        assert CANARY not in out + err
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 0, out + err
    assert "3 releases, 0 failing" in out


def test_two_releases_ignored_counts_would_give_the_added_cases_predictions() -> None:
    """Why a ledger withholds the count: with one predictions file, two releases' counts
    differ by exactly the predictions of the cases added between them, a number of the
    new atom that the joint model does not hold."""
    _, predictions = _records(24)
    counts = []
    for cases in (16, 20):
        gold, _ = _records(cases)
        report = score(gold, predictions, schema=SCHEMA, extra_predictions="ignore")
        counts.append(report.to_dict()["ignored_prediction_count"])
    added = sum(1 for p in predictions if 16 <= int(p.case_id[-3:]) < 20)
    assert added > 0
    assert counts[0] - counts[1] == added


def test_the_release_step_chooses_through_the_one_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release's complementary choice is the one loop's (complement.complement over the
    release's view), not a loop of its own: a second release hands it its atom targets."""
    calls: list[int] = []
    loop = releases_module.complement

    def counted(view: Any, sensitive: Any) -> None:
        calls.append(len(sensitive))
        loop(view, sensitive)

    monkeypatch.setattr(releases_module, "complement", counted)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    for name, cases in (("first", 15), ("second", 16)):
        gold, predictions = _write(tmp_path, name, cases)
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
        argv += ["--schema", str(schema), "--min-cell", "11", "--releases", str(tmp_path / "l")]
        status, _, err = _run(argv)
        assert status == 0, err
    assert len(calls) == 1
    assert calls[0] > 0


def _moving_majority(folder: Path) -> tuple[Path, list[tuple[Path, Path]]]:
    """Four categorical fields over 21 charts, then 31: the added charts draw their gold
    from other weights, so a field's most common category can move between the releases.
    Release 1 hides some fields' majority numbers (small) and shows the pooled one."""
    rng = random.Random(2)
    fields = [f"f{i}" for i in range(4)]
    first = rng.randrange(20, 45)
    second = first + rng.randrange(8, 30)
    schema = {"fields": {f: {"type": "categorical", "choices": ["a", "b", "c"]} for f in fields}}
    weights = [{f: [rng.random() for _ in range(3)] for f in fields} for _ in range(2)]
    gold: list[dict[str, object]] = []
    predictions: list[dict[str, object]] = []
    for index in range(second):
        case = f"{CANARY}{index:03d}"
        for field_id in fields:
            value = rng.choices("abc", weights[index >= first][field_id])[0]
            gold.append({"case_id": case, "field_id": field_id, "field_type": "categorical"})
            gold[-1]["value"] = value
            answer = value if rng.random() < 0.8 else rng.choice("abc")
            predictions.append({"case_id": case, "field_id": field_id, "value": answer})
    schema_path = folder / "schema.json"
    schema_path.write_text(json.dumps(schema))
    files = []
    for name, cases in (("first", first), ("second", second)):
        keep = {f"{CANARY}{index:03d}" for index in range(cases)}
        files.append(
            (
                write_jsonl(
                    folder / f"{name}_gold.jsonl", [r for r in gold if r["case_id"] in keep]
                ),
                write_jsonl(
                    folder / f"{name}_pred.jsonl", [r for r in predictions if r["case_id"] in keep]
                ),
            )
        )
    return schema_path, files


def test_a_majority_that_moves_where_the_first_release_hid_it_still_fits(tmp_path: Path) -> None:
    """An earlier release that hid a field's majority number and showed the pooled one:
    when that field's majority category moves, only the pooled number shows it. The second
    release was refused as not fitting (``release_mismatch``, "cases dropped or changed")
    though no case was; the fields whose majority the release hid now count as moved, and
    the joint audit of the folder passes."""
    schema, files = _moving_majority(tmp_path)
    ledger = tmp_path / "ledger"
    for gold, predictions in files:
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
        argv += ["--schema", str(schema), "--releases", str(ledger)]
        status, out, err = _run(argv)
        assert status == 0, err
        assert CANARY not in out + err
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 0, out + err
    assert "2 releases, 0 failing" in out


def test_the_outsiders_attack_protects_what_the_first_attack_lets_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``share --releases`` attacks with the public composition, ``audit --releases`` as an
    outsider (without it, but with every release's majority facts where they fit), which can
    pin what the first let through. With the first attack's choice switched off here, the
    outsider's check alone must protect the release: the joint audit of the folder passes
    (without that check the second release shares unprotected and the audit fails)."""
    real = releases_module.complement

    def outsider_only(view: Any, sensitive: Any) -> None:
        if getattr(view, "memberships", None) is not None:
            real(view, sensitive)

    schema, files = _moving_majority(tmp_path)
    ledger = tmp_path / "ledger"
    for number, (gold, predictions) in enumerate(files):
        if number:
            monkeypatch.setattr(releases_module, "complement", outsider_only)
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions)]
        status, _, err = _run([*argv, "--schema", str(schema), "--releases", str(ledger)])
        assert status == 0, err
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 0, out + err
    assert "2 releases, 0 failing" in out
