"""The ledger folder of successive releases loses nothing (issue 36, item 6).

docs/disclosure.md#successive-releases: concurrent shares take their turns
under the folder's lock; ``--out`` is never inside the folder; a stray
temporary file is ignored; a deleted or replaced release breaks the chain or
the head; an old case whose rows changed is refused; ``audit --releases``
re-runs the joint audit. Every refusal is checked for canaries and paths.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chartscore
from chartscore import GoldField, Prediction
from chartscore.cli import main
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError
from chartscore.io.output import write_new
from chartscore.io.release_ledger import open_releases, read_releases
from chartscore.workflows.releases import audit_ledger
from chartscore.workflows.share import share
from shared_data import SCHEMA, cohort

from helpers import thorough_only, write_jsonl

CANARY = "zq-canary-"
SRC = str(Path(chartscore.__file__).resolve().parents[1])


def _records(cases: int) -> tuple[list[GoldField], list[Prediction]]:
    # The shared_data cohort, its case ids replaced by canaries.
    gold, predictions = cohort(cases)
    gold = [GoldField(CANARY + g.case_id, g.field_id, g.field_type, g.value) for g in gold]
    predictions = [Prediction(CANARY + p.case_id, p.field_id, p.value) for p in predictions]
    return gold, predictions


def _files(folder: Path, cases: int) -> list[str]:
    gold, predictions = _records(cases)
    gold_path = write_jsonl(
        folder / f"gold{cases}.jsonl",
        [
            {"case_id": g.case_id, "field_id": g.field_id, "field_type": g.field_type.value}
            | {"value": g.value}
            for g in gold
        ],
    )
    prediction_path = write_jsonl(
        folder / f"pred{cases}.jsonl",
        [{"case_id": p.case_id, "field_id": p.field_id, "value": p.value} for p in predictions],
    )
    schema = folder / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return [
        "--gold",
        str(gold_path),
        "--predictions",
        str(prediction_path),
        "--schema",
        str(schema),
    ]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _listing(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def _refused(ledger: Path, cases: int = 16) -> ChartscoreError:
    gold, predictions = _records(cases)
    with pytest.raises(ChartscoreError) as caught:
        share(gold, predictions, schema=SCHEMA, min_cell=11, releases=ledger)
    error = caught.value
    assert CANARY not in str(error) and str(ledger) not in str(error)
    assert CANARY not in repr(error) and "sha256" not in str(error)
    assert error.__context__ is None and error.__cause__ is None
    return error


def _ledger(tmp_path: Path, *sizes: int) -> Path:
    ledger = tmp_path / "ledger"
    for cases in sizes:
        share(*_records(cases), schema=SCHEMA, min_cell=11, releases=ledger)
    return ledger


def _recheck(path: Path, document: dict[str, object]) -> None:
    # Rewrite a release file with its check redone: an edit that the check alone misses.
    rest = {key: value for key, value in document.items() if key != "check"}
    document["check"] = "sha256:" + hashlib.sha256(canonical_json(rest).encode()).hexdigest()
    path.write_text(canonical_json(document) + "\n")


# --- 1. concurrent shares ----------------------------------------------------------------


@thorough_only("twenty shares at once (about 12 s)")
def test_twenty_concurrent_shares_leave_twenty_consecutive_releases(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    argv = ["share", *_files(tmp_path, 15), "--min-cell", "11", "--releases", str(ledger)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "chartscore", *argv, "--jobs", "1", "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(20)
    ]
    results = [(run.wait(timeout=600), *run.communicate()) for run in runs]
    assert [status for status, _, _ in results] == [0] * 20, results[0][2]
    published = sorted(out.decode() for _, out, _ in results)
    earlier = sorted(json.loads(text)["disclosure"]["earlier_releases"] for text in published)
    assert earlier == list(range(20))
    for _, _, err in results:
        assert b"recorded" in err and CANARY.encode() not in err
    names = sorted(os.listdir(ledger))
    assert names == ["ledger.json"] + [f"release-{n:04d}.json" for n in range(1, 21)]
    releases = read_releases(ledger)
    # Every published report is in the ledger, each audited with every release before it.
    assert sorted(r.shared.to_json() + "\n" for r in releases) == published
    assert [r.shared.disclosure.earlier_releases for r in releases] == list(range(20))
    assert json.loads((ledger / "ledger.json").read_text())["releases"] == 20


def test_a_share_holds_the_folder_locked_from_reading_to_recording(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 15)
    with open_releases(ledger, exclusive=True) as opened:
        probe = os.open(ledger, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        assert len(opened.releases) == 1
    probe = os.open(ledger, os.O_RDONLY)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on close
    finally:
        os.close(probe)


def test_a_release_file_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "release-0001.json"
    assert write_new(target, b"first\n", mode=0o600)
    assert not write_new(target, b"second\n", mode=0o600)
    assert target.read_bytes() == b"first\n"
    assert sorted(os.listdir(tmp_path)) == ["release-0001.json"]  # no temporary file left
    # A writer that ignored the lock took the next name: recording is refused, not replacing.
    ledger = _ledger(tmp_path, 15)
    shared = read_releases(ledger)[0].shared
    with open_releases(ledger, exclusive=True) as opened:
        (ledger / "release-0002.json").write_bytes(b"another writer\n")
        before = _listing(ledger)
        with pytest.raises(ChartscoreError) as caught:
            opened.record(shared, {f"{CANARY}x": "sha256:" + "0" * 64})
    assert caught.value.code == "not_a_release_ledger"
    assert CANARY not in str(caught.value)
    assert _listing(ledger) == before


# --- 2. --out inside the folder ----------------------------------------------------------


@pytest.mark.parametrize("where", ["release", "head", "new", "dotdot", "link"])
def test_out_inside_the_releases_folder_is_refused(tmp_path: Path, where: str) -> None:
    ledger = _ledger(tmp_path, 15)
    before = _listing(ledger)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "to-ledger").symlink_to(ledger)
    out = {
        "release": ledger / "release-0001.json",
        "head": ledger / "ledger.json",
        "new": ledger / "shared.json",
        "dotdot": tmp_path / "elsewhere" / ".." / "ledger" / "shared.json",
        "link": tmp_path / "to-ledger" / "release-0001.json",
    }[where]
    argv = ["share", *_files(tmp_path, 16), "--min-cell", "11", "--releases", str(ledger)]
    status, stdout, err = _run([*argv, "--out", str(out)])
    assert status == 1
    assert "output_is_input (output; the output is inside the releases folder" in err
    assert stdout == "" and CANARY not in err and str(tmp_path) not in err
    assert _listing(ledger) == before
    status, _, _ = _run([*argv, "--out", str(tmp_path / "elsewhere" / "shared.json")])
    assert status == 0


def test_an_empty_releases_path_is_no_folder_not_the_working_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --releases "$UNSET": "" resolved to the working folder, so an --out below it was
    # "inside the releases folder" (output_is_input), blaming the output. It names no folder.
    files = _files(tmp_path, 16)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    publication = ["--publication", str(tmp_path / "pred16.jsonl"), "--out-dir", "out"]
    for argv in (
        ["share", *files, "--releases", "", "--out", "out/shared.json"],
        ["share", *files[:2], *files[4:], *publication, "--releases", ""],
    ):
        before = sorted(p.name for p in tmp_path.iterdir())
        status, stdout, err = _run(argv)
        assert (status, stdout) == (1, "")
        assert err.startswith("chartscore: error: output_unwritable (releases)"), err
        assert err.count("\n") == 1 and str(tmp_path) not in err and CANARY not in err
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        assert not list((tmp_path / "out").iterdir())


def test_a_releases_folder_in_a_missing_folder_says_so(tmp_path: Path) -> None:
    # Was "output_unwritable (releases)" alone, where --out says the folder does not exist.
    files = _files(tmp_path, 16)
    missing = tmp_path / CANARY / "releases"
    status, stdout, err = _run(["share", *files, "--releases", str(missing), "--out", "-"])
    assert (status, stdout) == (1, "")
    assert err == (
        "chartscore: error: output_unwritable (releases; the output folder does not exist): "
        "an output could not be written; nothing partial was left\n"
    )
    assert str(tmp_path) not in err and CANARY not in err
    assert not (tmp_path / CANARY).exists()


# --- 3. a stray temporary file -----------------------------------------------------------


def test_a_stray_temporary_file_is_ignored_and_removed_by_the_next_share(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 15)
    stray = ledger / ".chartscore-k1ll3d_x.tmp"
    stray.write_text(CANARY + "half a release")
    os.chmod(stray, 0o600)
    assert len(read_releases(ledger)) == 1 and stray.exists()  # a reader writes nothing
    shared = share(*_records(16), schema=SCHEMA, min_cell=11, releases=ledger)
    assert shared.disclosure.earlier_releases == 1
    assert sorted(os.listdir(ledger)) == ["ledger.json", "release-0001.json", "release-0002.json"]


# --- 4. the count and the chain ----------------------------------------------------------


@pytest.mark.parametrize(
    "damage", ["newest_deleted", "middle_deleted", "newest_rechecked", "first_rechecked", "head"]
)
def test_a_deleted_or_replaced_release_is_refused(tmp_path: Path, damage: str) -> None:
    ledger = _ledger(tmp_path, 15, 16, 17)
    first, third = ledger / "release-0001.json", ledger / "release-0003.json"
    if damage == "newest_deleted":
        third.unlink()
    elif damage == "middle_deleted":  # and the newest renumbered, its check redone
        (ledger / "release-0002.json").unlink()
        document = json.loads(third.read_text())
        document["release"] = 2
        third.unlink()
        _recheck(ledger / "release-0002.json", document)
        os.chmod(ledger / "release-0002.json", 0o600)
    elif damage in ("newest_rechecked", "first_rechecked"):
        path = third if damage == "newest_rechecked" else first
        document = json.loads(path.read_text())
        document["shared"] = document["shared"].replace('"min_cell":11', '"min_cell":12')
        _recheck(path, document)
    else:
        (ledger / "ledger.json").unlink()
    before = _listing(ledger)
    assert _refused(ledger, 18).code == "not_a_release_ledger"
    assert _listing(ledger) == before
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 1 and "not_a_release_ledger (releases)" in err
    assert out == "" and CANARY not in err and str(tmp_path) not in err


def test_a_release_recorded_before_the_head_moved_on_is_accepted(tmp_path: Path) -> None:
    # A crash between the release file and the head: the head is one behind.
    ledger = _ledger(tmp_path, 15)
    head = (ledger / "ledger.json").read_bytes()
    share(*_records(16), schema=SCHEMA, min_cell=11, releases=ledger)
    (ledger / "ledger.json").write_bytes(head)
    assert len(read_releases(ledger)) == 2
    assert (ledger / "ledger.json").read_bytes() == head  # a reader does not write
    shared = share(*_records(17), schema=SCHEMA, min_cell=11, releases=ledger)
    assert shared.disclosure.earlier_releases == 2
    assert json.loads((ledger / "ledger.json").read_text())["releases"] == 3


def _as_format_1(path: Path) -> None:
    document = json.loads(path.read_text())
    old = {
        "format": "chartscore.release",
        "format_version": 1,
        "release": document["release"],
        "case_ids": sorted(document["cases"]),
        "shared": document["shared"],
    }
    _recheck(path, old)


def test_a_folder_of_format_1_is_read_and_chained_onto(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 15)
    _as_format_1(ledger / "release-0001.json")
    (ledger / "ledger.json").unlink()  # format 1 had no head
    (release,) = read_releases(ledger)
    assert release.digests is None
    share(*_records(16), schema=SCHEMA, min_cell=11, releases=ledger)
    first, second = read_releases(ledger)
    assert second.previous == first.check and second.digests is not None
    assert json.loads((ledger / "ledger.json").read_text())["releases"] == 2
    # A file of format 1 after one of format 2 was not written by share.
    _as_format_1(ledger / "release-0002.json")
    assert _refused(ledger, 17).code == "not_a_release_ledger"


# --- 5. changed answers on old cases -----------------------------------------------------


def _swapped(cases: int) -> tuple[list[GoldField], list[Prediction]]:
    # Charts 5 and 8 both have gold "current" for smoking and different answers: swapping
    # their answers changes two patients' outcomes and no count of any report.
    gold, predictions = _records(cases)
    first, second = CANARY + "chart-005", CANARY + "chart-008"
    answers = {
        p.case_id: p.value
        for p in predictions
        if p.field_id == "hx.smoking" and p.case_id in (first, second)
    }
    assert answers[first] != answers[second]
    swap = {first: answers[second], second: answers[first]}
    swapped = [
        Prediction(p.case_id, p.field_id, swap[p.case_id])
        if p.field_id == "hx.smoking" and p.case_id in swap
        else p
        for p in predictions
    ]
    return gold, swapped


def test_a_changed_answer_on_an_old_case_is_refused_when_the_sums_agree(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 33)
    before = _listing(ledger)
    gold, swapped = _swapped(34)
    # Every count of a report of the old cases is unchanged by the swap.
    assert chartscore.score(*_swapped(33), schema=SCHEMA).to_json() == (
        chartscore.score(*_records(33), schema=SCHEMA).to_json()
    )
    with pytest.raises(ChartscoreError) as caught:
        share(gold, swapped, schema=SCHEMA, releases=ledger)
    assert caught.value.code == "release_mismatch"
    assert CANARY not in str(caught.value) and caught.value.__context__ is None
    assert _listing(ledger) == before
    # The same data unchanged is accepted.
    assert share(*_records(34), schema=SCHEMA, releases=ledger).disclosure.earlier_releases == 1


# --- 6. the joint re-audit ---------------------------------------------------------------


def test_audit_releases_passes_a_ledger_share_made(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 33, 45, 66)
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "release 1: PASS: own audit passed"
    assert lines[2].startswith("release 3: PASS: own audit passed; jointly with 2 earlier")
    assert lines[-1].startswith("audit PASS: 3 releases, 0 failing")
    assert CANARY not in out + err and str(tmp_path) not in out + err
    assert all(result.checked > 0 for result in audit_ledger(ledger)[1:])


def test_audit_releases_of_one_release_says_one_release(tmp_path: Path) -> None:
    status, out, _ = _run(["audit", "--releases", str(_ledger(tmp_path, 15))])
    assert status == 0 and out.splitlines()[-1].startswith("audit PASS: 1 release, 0 failing")


@pytest.mark.parametrize(("atoms", "word"), [(1, "1 atom,"), (2, "2 atoms,")])
def test_a_release_line_counts_its_atoms_in_words(atoms: int, word: str) -> None:
    # A second release of exactly the first's cases has one atom: "1 atom", not "1 atoms".
    from chartscore.disclosure.audits.ledger import ReleaseAudit

    line = ReleaseAudit(2, True, atoms, 40, 0).line()
    assert f"jointly with 1 earlier release: {word} 40 atom numbers checked, 0 pinned" in line


def test_audit_releases_finds_releases_shared_apart(tmp_path: Path) -> None:
    # Release 2 shared into a folder of its own (audited alone), then put in the ledger:
    # one case added, so the pair leaks, and the joint re-audit says so.
    ledger = _ledger(tmp_path, 15)
    (tmp_path / "apart").mkdir()
    apart = _ledger(tmp_path / "apart", 16)
    gold, _ = _records(16)
    with open_releases(ledger, exclusive=True) as opened:
        opened.record(
            read_releases(apart)[0].shared,
            {g.case_id: "sha256:" + "0" * 64 for g in gold},
        )
    status, out, err = _run(["audit", "--releases", str(ledger)])
    assert status == 4
    assert out.splitlines()[1].startswith("release 2: FAIL: own audit passed")
    assert "audit FAIL: 2 releases, 1 failing" in out
    assert CANARY not in out + err and str(tmp_path) not in out + err
    assert audit_ledger(ledger)[1].pinned > 0


def test_audit_releases_needs_a_folder(tmp_path: Path) -> None:
    status, _, err = _run(["audit", "--releases"])
    assert status == 2
    status, _, err = _run(["audit", "--releases", "-"])
    assert status == 2 and "--releases needs a folder" in err
    for absent in (tmp_path / "absent", tmp_path):  # no folder; a folder with no release
        status, out, err = _run(["audit", "--releases", str(absent)])
        # It said only "... holds a file share --releases did not write, or lost or changed
        # one", of a folder that holds nothing or does not exist.
        assert status == 1 and err.startswith(
            "chartscore: error: not_a_release_ledger (releases; the folder holds no release: "
            "share --releases DIR records them)"
        )
        assert out == "" and str(tmp_path) not in err


def test_audit_releases_of_a_folder_in_a_missing_folder_has_no_release(tmp_path: Path) -> None:
    # A folder whose parent does not exist was file_unreadable (releases), where a missing
    # folder in an existing one is "not_a_release_ledger (releases; the folder holds no
    # release ...)", as docs/errors.md says of a folder that does not exist.
    absent = tmp_path / CANARY / "releases"
    status, out, err = _run(["audit", "--releases", str(absent)])
    assert (status, out) == (1, "")
    assert err.startswith(
        "chartscore: error: not_a_release_ledger (releases; the folder holds no release: "
        "share --releases DIR records them)"
    )
    assert str(tmp_path) not in err and CANARY not in err
    assert read_releases(absent) == []
    assert not (tmp_path / CANARY).exists()


def test_audit_releases_of_a_path_that_is_no_folder_is_unreadable(tmp_path: Path) -> None:
    # A reader writes nothing: a file, or a symbolic link to a real ledger folder, given as
    # the folder is a file it cannot read as one, not an output it could not write.
    ledger = _ledger(tmp_path, 15)
    link = tmp_path / "link"
    link.symlink_to(ledger)
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    for where in (link, plain):
        status, out, err = _run(["audit", "--releases", str(where)])
        assert status == 1 and "file_unreadable (releases)" in err, err
        assert out == "" and str(tmp_path) not in err
        with pytest.raises(ChartscoreError) as caught:
            read_releases(where)
        assert caught.value.code.value == "file_unreadable"
        assert caught.value.__context__ is None and caught.value.__cause__ is None
    # share still says the folder is an output it cannot write there
    with pytest.raises(ChartscoreError) as caught:
        open_releases(link, exclusive=True)
    assert caught.value.code.value == "output_unwritable"


@pytest.mark.parametrize("name", ["release-0002.json", "ledger.json"])
def test_a_fifo_in_the_releases_folder_is_refused_not_waited_on(tmp_path: Path, name: str) -> None:
    # Opening a FIFO for reading waits for a writer: audit --releases hung, and a share
    # would hang holding the folder's exclusive lock.
    import threading

    ledger = _ledger(tmp_path, 15)
    if name == "ledger.json":
        (ledger / name).unlink()
    os.mkfifo(ledger / name, 0o600)
    caught: list[ChartscoreError] = []

    def read() -> None:
        try:
            read_releases(ledger)
        except ChartscoreError as error:
            caught.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=20)
    if reader.is_alive():  # let it go: a writer opens the FIFO, then closes it
        os.close(os.open(ledger / name, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=20)
        pytest.fail("read_releases waited on a FIFO")
    assert [error.code.value for error in caught] == ["not_a_release_ledger"]


def test_released_shared_reports_parse(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 15)
    (release,) = read_releases(ledger)
    assert isinstance(release.shared, SharedReport)
    assert release.digests is not None and set(release.digests) == release.case_ids
    assert repr(release) == "Release(1)"
    with open_releases(ledger, exclusive=False) as opened:
        assert repr(opened) == "ReleaseFolder(1 releases)"


def test_a_stratified_release_is_refused_before_the_folder_is_touched(tmp_path: Path) -> None:
    # The releases' joint model has no stratum cells: share --releases --strata scored the
    # files and then stopped with "invalid_sensitivity: ... a bug in the caller" (on the
    # 200-case study with 3 sites, the first release already), leaving the folder made.
    from chartscore.workflows.share import share_files

    ledger = tmp_path / "releases"
    with pytest.raises(ChartscoreError) as caught:
        share_files("g.jsonl", "p.jsonl", strata="s.jsonl", releases=str(ledger))
    assert caught.value.code == "usage"
    assert not ledger.exists()


def test_audit_of_a_release_record_says_to_audit_the_folder(tmp_path: Path) -> None:
    # A release record (or the head) given to audit was refused as "audit needs a shared
    # report, made by chartscore share": share made it, so the line sent the analyst round.
    ledger = _ledger(tmp_path, 15)
    for name in ("release-0001.json", "ledger.json"):
        status, out, err = _run(["audit", str(ledger / name)])
        assert (status, out) == (1, "")
        assert err.startswith(
            "chartscore: error: unknown_report_format (this is a record of the inside-only "
            "releases folder: audit --releases DIR reads it)"
        )
        assert CANARY not in err and str(tmp_path) not in err
